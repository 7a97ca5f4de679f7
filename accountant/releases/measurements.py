r"""A measurement workload as a :class:`~accountant.releases.model.Release`: histogram queries with noise per cell.

Each measurement of a workload (:mod:`accountant.workloads.accounting`, the 2020 Census TopDown design) is one
:class:`~accountant.releases.model.Part` of :func:`accountant.releases.workload.workload_release`: its noise law
per cell and the worst pair of each relation it is accounted under, per coordinate
(:attr:`~accountant.releases.model.Shift.coordinates`) -- replace-one on the base relation ``(1, 1)``, and
:class:`~accountant.guarantees.relations.SemiAdjacent` at radius 1 (``(1, 1)``, or ``()`` for a measurement the
invariant fixes) and 2 (``(2, 2)`` for Gaussian kinds, ``()`` when fixed; Laplace kinds the l1 bound 4 only). One
pair attains every part's shift at once (the worst pair, proof in :mod:`accountant.workloads.accounting`), so
composing the parts is tight for Gaussian kinds (Laplace at radius 2: an upper bound, labelled so there).

A :class:`MeasurementRelease` keeps beside its parts the measurements' exact noise parameters (a Laplace law holds
a float; the exact rho and the set-aside order of the PLD need the rationals), the file line of each, and its
:class:`PartGroup` s: the certificate's breakdowns (per attribute, per geolevel), each a sub-release
(:meth:`MeasurementRelease.group`). Its interpreter is :func:`accountant.releases.accounting.pld_bracket`, which
checks that the parts and the measurements give the same PLD parts.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass

from semidp.accountant.core.errors import InvalidArgument
from semidp.accountant.data.invariants import Invariant
from semidp.accountant.guarantees.relations import BaseRelation, SemiAdjacent
from semidp.accountant.releases.model import Part, Release, Shift
from semidp.accountant.releases.workload import workload_release
from semidp.accountant.workloads.accounting import NOISES, WorkloadMeasurement

#: The kinds of :class:`PartGroup` (the report's breakdown keys).
GROUP_KINDS = ("per_attribute", "per_geolevel")


@dataclass(frozen=True, slots=True)
class PartGroup:
    """A sub-release: the parts of one breakdown of the release, accounted on their own (reported by name)."""

    kind: str
    """``per_attribute`` (the measurements whose query splits the feature) or ``per_geolevel`` (those at levels
    strictly finer than ``name``)."""
    name: str
    indices: tuple[int, ...]
    """Indices of the release's parts in the group, in release order."""

    def __post_init__(self) -> None:
        if self.kind not in GROUP_KINDS:
            raise InvalidArgument(f"PartGroup.kind must be one of {list(GROUP_KINDS)}, got {self.kind!r}.")


@dataclass(frozen=True, slots=True)
class MeasurementRelease(Release):
    """A workload of measurements as a release: its parts (one per measurement) and their exact noise parameters.

    ``measurements[i]`` is part ``i``'s measurement (its exact per-cell noise parameter: the variance
    :math:`\\sigma^2` for Gaussian kinds, the scale for Laplace kinds), ``lines[i]`` its line in the publisher's
    file (reported when the PLD sets it aside or cannot hold it). A release of no measurement (a breakdown group
    that no query falls in) is allowed: it publishes nothing but the invariant.
    """

    noise: str = "discrete-gaussian"
    measurements: tuple[WorkloadMeasurement, ...] = ()
    lines: tuple[int, ...] = ()
    groups: tuple[PartGroup, ...] = ()

    def __post_init__(self) -> None:
        if self.parts or self.black_box is not None:  # no part: a group that publishes nothing (no privacy loss)
            Release.__post_init__(self)
        if self.noise not in NOISES:
            raise InvalidArgument(f"MeasurementRelease.noise={self.noise!r} is not one of {list(NOISES)}.")
        n = len(self.parts)
        if len(self.measurements) != n or len(self.lines) != n:
            raise InvalidArgument(
                f"MeasurementRelease: {n} parts, {len(self.measurements)} measurements and {len(self.lines)} lines."
            )
        for g in self.groups:
            if any(not 0 <= i < n for i in g.indices):
                raise InvalidArgument(f"PartGroup {g.name!r}: an index is not one of the release's {n} parts.")

    def group(self, g: PartGroup) -> MeasurementRelease:
        """The sub-release of ``g``'s parts (no groups of its own)."""
        return dataclasses.replace(
            self,
            parts=tuple(self.parts[i] for i in g.indices),
            measurements=tuple(self.measurements[i] for i in g.indices),
            lines=tuple(self.lines[i] for i in g.indices),
            groups=(),
        )

    def groups_of(self, kind: str) -> tuple[PartGroup, ...]:
        """The groups of one kind, in release order."""
        return tuple(g for g in self.groups if g.kind == kind)


def measurement_release(
    base: BaseRelation,
    invariant: Invariant,
    measurements: Sequence[WorkloadMeasurement],
    noise: str,
    *,
    lines: Sequence[int] | None = None,
    groups: Sequence[PartGroup] = (),
) -> MeasurementRelease:
    """The release of ``measurements`` (each with ``noise`` per cell) next to ``invariant``: the parts of
    :func:`accountant.releases.workload.workload_release` with their shifts on ``base`` and on the semi-adjacent
    relations at radius 1 and 2; ``lines`` default to the file lines of a CSV read in order (2, 3, ...)."""
    one = workload_release(measurements, noise, 1, invariant=invariant, base=base)
    two = workload_release(measurements, noise, 2, invariant=invariant, base=base)
    semi2 = SemiAdjacent(base, invariant, 2)
    parts = tuple(Part(p.law, (*p.shifts, *_stated(q, semi2)), p.label) for p, q in zip(one.parts, two.parts))
    return MeasurementRelease(
        base,
        invariant,
        parts,
        noise=noise,
        measurements=tuple(measurements),
        lines=tuple(lines) if lines is not None else tuple(range(2, len(measurements) + 2)),
        groups=tuple(groups),
    )


def _stated(part: Part, relation: SemiAdjacent) -> tuple[Shift, ...]:
    """The part's shift on ``relation`` (``workload_release`` states one on its radius)."""
    s = part.shift(relation)
    return () if s is None else (s,)


__all__ = ["GROUP_KINDS", "MeasurementRelease", "PartGroup", "measurement_release"]
