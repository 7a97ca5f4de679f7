r"""A measurement workload as a :class:`~accountant.releases.model.Release`: histogram queries with noise per cell.

Each measurement of a workload (:mod:`accountant.workloads.accounting`, the 2020 Census TopDown design) is one
:class:`~accountant.releases.model.Part`: its noise law per cell and the query's shift on the worst pair of each
relation it is accounted under -- replace-one on the base relation (two cells of shift 1: :math:`\ell_1=2`,
:math:`\ell_2^2=2`), and :class:`~accountant.guarantees.relations.SemiAdjacent` at radius 1 (the same, or 0 for a
measurement the invariant fixes) and 2 (two cells of shift 2: :math:`\ell_1=4`, :math:`\ell_2^2=8`, or 0 when
fixed). One pair attains every part's shift at once (the worst pair, proof in
:mod:`accountant.workloads.accounting`), so composing the parts is tight, not only an upper bound.

A :class:`MeasurementRelease` keeps beside its parts the measurements' exact noise parameters (the continuous
laws hold floats; the exact rho and the PLD grid need the rationals), the CSV line of each, and its
:class:`PartGroup` s: the certificate's breakdowns (per attribute, per geolevel), each a sub-release
(:meth:`MeasurementRelease.group`). Its interpreter is :func:`accountant.releases.accounting.pld_bracket`.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

from semidp.accountant.core.errors import InvalidArgument
from semidp.accountant.data.invariants import Invariant
from semidp.accountant.guarantees.relations import BaseRelation, SemiAdjacent
from semidp.accountant.releases.model import (
    DiscreteGaussianNoise,
    DiscreteLaplaceNoise,
    GaussianNoise,
    LaplaceNoise,
    NoiseLaw,
    Part,
    Release,
    Shift,
)
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


def _down(x: Fraction) -> float:
    """``float(x)`` rounded down (less noise is less private: conservative)."""
    f = float(x)
    return math.nextafter(f, 0.0) if Fraction(f) > x else f


def cell_law(noise: str, scale: Fraction) -> NoiseLaw:
    """The noise law per cell of a measurement with exact parameter ``scale`` (``sigma^2`` for Gaussian kinds),
    continuous laws rounded towards less noise (as the PLD parts of :mod:`accountant.workloads.accounting`)."""
    if noise == "discrete-gaussian":
        return DiscreteGaussianNoise(scale)
    if noise == "discrete-laplace":
        return DiscreteLaplaceNoise(scale)
    if noise == "gaussian":
        return GaussianNoise(math.nextafter(math.sqrt(_down(scale)), 0.0))
    if noise == "laplace":
        return LaplaceNoise(_down(scale))
    raise InvalidArgument(f"noise={noise!r} is not one of {list(NOISES)}.")


def measurement_shifts(base: BaseRelation, invariant: Invariant, fixed: bool) -> tuple[Shift, ...]:
    """A measurement's shifts on the worst pair: replace-one on ``base``; semi-adjacent at radius 1 and 2
    (0 for a measurement the invariant fixes) [module docstring; proof in :mod:`accountant.workloads.accounting`]."""
    one, two = (0.0, 0.0) if fixed else (2.0, 4.0)
    return (
        Shift(base, 2.0, 2.0),
        Shift(SemiAdjacent(base, invariant, 1), one, one),
        Shift(SemiAdjacent(base, invariant, 2), two, 2.0 * two),
    )


def measurement_release(
    base: BaseRelation,
    invariant: Invariant,
    measurements: Sequence[WorkloadMeasurement],
    noise: str,
    *,
    lines: Sequence[int] | None = None,
    groups: Sequence[PartGroup] = (),
) -> MeasurementRelease:
    """The release of ``measurements`` (each with ``noise`` per cell) next to ``invariant``; ``lines`` default to
    the file lines of a CSV read in order (2, 3, ...)."""
    parts = tuple(
        Part(cell_law(noise, m.scale), measurement_shifts(base, invariant, m.fixed), m.label) for m in measurements
    )
    return MeasurementRelease(
        base,
        invariant,
        parts,
        noise=noise,
        measurements=tuple(measurements),
        lines=tuple(lines) if lines is not None else tuple(range(2, len(measurements) + 2)),
        groups=tuple(groups),
    )


__all__ = ["GROUP_KINDS", "MeasurementRelease", "PartGroup", "cell_law", "measurement_release", "measurement_shifts"]
