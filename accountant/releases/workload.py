r"""A measurement workload described as a :class:`~accountant.releases.model.Release` (Step 14, item 1).

Each :class:`~accountant.workloads.accounting.WorkloadMeasurement` (a histogram query in every unit of a
level, independent noise per cell) becomes one :class:`~accountant.releases.model.Part` whose
:class:`~accountant.releases.model.Shift`\ s state the worst pair per coordinate, as
:mod:`accountant.workloads.accounting` proves it:

* on the base relation (replace-one): ``(1, 1)`` -- one record leaves a cell and enters another;
* on ``SemiAdjacent(base, invariant, 1)``: ``(1, 1)``, or ``()`` for a measurement fixed by the invariant;
* on ``SemiAdjacent(base, invariant, 2)``: ``(2, 2)`` for Gaussian kinds (the worst pair for every measure),
  ``()`` when fixed; Laplace kinds state the l1 bound 4 only (``exact`` false, no single worst pair is
  proven), which :func:`accountant.releases.accounting.pld_counted_parts` accounts by the dominating pair of
  :math:`(4/b, 0)`-DP [KOV15, Thm. 2.4] -- an upper bound, never a refutation's lower end.

So :func:`accountant.releases.accounting.pld_counted_parts` of the release on :func:`workload_relation` is
:func:`accountant.workloads.accounting.workload_parts`, part for part, and
:func:`accountant.releases.accounting.zcdp_exact` is :func:`accountant.workloads.accounting.workload_rho`
(Laplace: at least it, ``b`` rounded down). Noise laws: discrete Gaussian :math:`\sigma^2` and discrete
Laplace :math:`t` exact; Gaussian with its exact variance (``sigma`` rounded down); Laplace ``b`` rounded down
(less noise: conservative). Units: counts; scales as in the measurement file.
"""

from __future__ import annotations

from collections.abc import Sequence

from semidp.accountant.core.directed import down_exact
from semidp.accountant.core.errors import InvalidArgument
from semidp.accountant.data.invariants import Invariant
from semidp.accountant.guarantees.relations import BaseRelation, Relation, Replace, SemiAdjacent
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
from semidp.accountant.workloads.accounting import GAUSSIAN_NOISES, NOISES, WorkloadMeasurement

#: Radii of a(t) the query-level analysis of :mod:`accountant.workloads.accounting` covers.
WORKLOAD_RADII: tuple[int, ...] = (0, 1, 2)


def workload_law(m: WorkloadMeasurement, noise: str) -> NoiseLaw:
    """The noise law of one measurement: ``m.scale`` is :math:`\\sigma^2` (Gaussian kinds) or ``b``/``t``."""
    if noise == "discrete-gaussian":
        return DiscreteGaussianNoise(m.scale)
    if noise == "gaussian":
        return GaussianNoise.of_variance(m.scale)
    if noise == "discrete-laplace":
        return DiscreteLaplaceNoise(m.scale)
    if noise == "laplace":
        return LaplaceNoise(down_exact(m.scale))
    raise InvalidArgument(f"noise={noise!r} is not one of {list(NOISES)}.")


def workload_relation(release: Release, semi_radius: int | None) -> Relation:
    """The relation a workload release is accounted on: its base (``None``, advertised) or semi-adjacent at a(t)."""
    return release.base if semi_radius is None else SemiAdjacent(release.base, release.invariant, semi_radius)


def _semi_shift(m: WorkloadMeasurement, noise: str, relation: SemiAdjacent) -> Shift:
    """The worst pair of one measurement on semi-adjacent pairs at ``relation.radius`` (module docstring)."""
    r = relation.radius
    if r == 0 or m.fixed:
        return Shift.of_coordinates(relation, ())
    if r == 1:
        return Shift.of_coordinates(relation, (1, 1))
    if noise in GAUSSIAN_NOISES:
        return Shift.of_coordinates(relation, (2, 2))
    return Shift(relation, 4.0, 8.0, exact=False)  # every multiset has l1 = 4; no single worst pair proven


def workload_release(
    measurements: Sequence[WorkloadMeasurement],
    noise: str,
    semi_radius: int | None = None,
    *,
    invariant: Invariant,
    base: BaseRelation | None = None,
) -> Release:
    """The workload as a release: one part per measurement (labelled by it), its shift on ``base`` and, when
    ``semi_radius`` (a(t) in {0, 1, 2}) is given, on ``SemiAdjacent(base, invariant, semi_radius)``; ``base``
    defaults to replace-one (:class:`~accountant.guarantees.relations.Replace`), the relation the analysis is for.

    ``invariant`` is the one the measurements' ``fixed`` flags were read under (a fixed measurement does not
    move on any semi-adjacent pair). Raises :class:`~accountant.core.errors.InvalidArgument` for an unknown
    noise, a radius the analysis does not cover, or no measurement.
    """
    if noise not in NOISES:
        raise InvalidArgument(f"noise={noise!r} is not one of {list(NOISES)}.")
    if semi_radius is not None and semi_radius not in WORKLOAD_RADII:
        raise InvalidArgument(f"semi_radius={semi_radius!r}: the query-level analysis covers a(t) <= 2.")
    if not measurements:
        raise InvalidArgument("workload_release: no measurement given.")
    base = Replace() if base is None else base
    semi = None if semi_radius is None else SemiAdjacent(base, invariant, semi_radius)
    parts = []
    for m in measurements:
        shifts = [Shift.of_coordinates(base, (1, 1))]
        if semi is not None:
            shifts.append(_semi_shift(m, noise, semi))
        parts.append(Part(workload_law(m, noise), tuple(shifts), label=m.label))
    return Release(base, invariant, tuple(parts))


__all__ = ["WORKLOAD_RADII", "workload_law", "workload_relation", "workload_release"]
