r"""Privacy accounting of a measurement workload: histogram queries with independent noise per cell.

A *measurement* answers one histogram query in every unit of one geographic level, adding
independent noise to every cell (the 2020 Census TopDown design). Under replace-one, one record
moves from one cell to another in each measurement, so the measurement's shift vector is
:math:`-e_c+e_{c'}` (:math:`\ell_2^2=2`) or 0. The advertised guarantee is the composition over
the measurements of that worst case.

Semi-DP at a(t) = 2 (query level)
---------------------------------
Let :math:`D,D'` be semi-adjacent at distance :math:`\le2` (replace-one, same invariant). For a
measurement :math:`m` the change of its histogram is :math:`v_m=-e_{k_1}+e_{k_1'}-e_{k_2}+e_{k_2'}`,
where :math:`k_i` (:math:`k_i'`) is the cell of record :math:`i` before (after). Its absolute entries
form one of the multisets :math:`\{\}`, :math:`\{1,1\}`, :math:`\{1,1,1,1\}`, :math:`\{2,1,1\}`,
:math:`\{2,2\}`; so :math:`\|v_m\|_2^2\le8`. A measurement whose cells are unions of invariant cells
(e.g. a State- or US-level ``total`` under the state-totals invariant) has :math:`v_m=0` for every
semi-adjacent pair.

**Worst pair.** Two records with identical attributes and geography both move to the same new
record that keeps the invariant cell (same state) and changes every other attribute and every
finer unit: then :math:`v_m=(-2,+2)` in every measurement that is not fixed, simultaneously.

**Proof that it is the worst for every measure (zCDP and the whole privacy profile).** The noise is
independent across cells and symmetric, so the privacy-loss distribution (PLD) of a pair is the
composition of one per-cell part of shift :math:`|v_{m,c}|` per nonzero cell. Composition preserves
Blackwell dominance, and adding parts only makes a profile worse, so it suffices that per cell
:math:`\mathrm{N}(2)\succeq\mathrm{N}(1)\otimes\mathrm{N}(1)` (the multiset :math:`\{2,2\}` then
dominates :math:`\{2,1,1\}`, which dominates :math:`\{1,1,1,1\}`, which contains :math:`\{1,1\}`).

* Gaussian: the PLD depends on :math:`\|v\|_2` only, and :math:`2>\sqrt2` [DRS22, Thm. 2.7].
* Discrete Gaussian (the lemma): for shifts :math:`(t,t)` of two independent
  :math:`N_{\mathbb Z}(0,\sigma^2)`, the likelihood ratio depends on :math:`S=Y_1+Y_2` only, with
  :math:`\Pr[S=s]\propto e^{-(s-2t)^2/(4\sigma^2)}\,w(s\bmod 2)`, using
  :math:`(y-t)^2+(s-y-t)^2=2(y-s/2)^2+(s-2t)^2/2` and
  :math:`w(r)=\sum_y e^{-(y-r/2)^2/\sigma^2}`. A single :math:`Y\sim N_{\mathbb Z}(2t,\sigma^2)` plus
  independent :math:`N\sim N_{\mathbb Z}(0,\sigma^2)` has
  :math:`\Pr[Y+N=s]\propto e^{-(s-2t)^2/(4\sigma^2)}\sum_y e^{-(y-(s+2t)/2)^2/\sigma^2}`, the same law
  (:math:`2t` is even). So the sufficient statistic of the two-cell pair is a post-processing of the
  one-cell pair with shift 2: :math:`N_{\mathbb Z}(2)\succeq N_{\mathbb Z}(1)^{\otimes2}`.
  ``tests/test_workload.py`` checks this lemma by exact sums and the whole claim by brute force over
  every semi-adjacent pair of a tiny geography.
* zCDP: :math:`\rho=\sum_m\|v_m\|_2^2/(2\sigma_m^2)` [CKS20, Prop. 5] is largest at the worst pair:
  :math:`4\rho_m` per non-fixed measurement (:math:`\rho_m=1/\sigma_m^2`).
* Laplace kinds: every multiset has :math:`\ell_1=4`, so each measurement is :math:`4/b`-pure DP on
  semi-adjacent pairs and the composition is bounded by the dominating pair of
  :math:`(4/b,0)`-DP [KOV15, Thm. 2.4] (an upper bound, labelled so; not claimed tight).

At a(t) = 1 the pairs are replace-one pairs that keep the invariant: :math:`\{1,1\}` or 0, and
fixed measurements are 0. Larger a(t) is not handled here (callers fall back to group privacy).

References
----------
[CKS20] Canonne, Kamath & Steinke, "The Discrete Gaussian for Differential Privacy", NeurIPS 2020, Prop. 5.
[DRS22] Dong, Roth & Su, "Gaussian Differential Privacy", JRSS-B 2022, Thm. 2.7.
[KOV15] Kairouz, Oh & Viswanath, "The Composition Theorem for Differential Privacy", ICML 2015, Thm. 2.4.
[BS16]  Bun & Steinke, "Concentrated Differential Privacy", TCC 2016, Prop. 1.4 (pure DP to zCDP).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Literal, Union

from semidp.accountant.core.directed import up_exact
from semidp.accountant.core.errors import InvalidArgument
from semidp.accountant.pld.engine import PLDBracket, PLDInterval, compose_plds
from semidp.accountant.pld.parts import (
    ApproxDPPart,
    DiscreteGaussianPart,
    DiscreteLaplacePart,
    GaussianPart,
    LaplacePart,
    PLDPart,
)

Noise = Literal["discrete-gaussian", "gaussian", "discrete-laplace", "laplace"]
NOISES: tuple[str, ...] = ("discrete-gaussian", "gaussian", "discrete-laplace", "laplace")
GAUSSIAN_NOISES: tuple[str, ...] = ("discrete-gaussian", "gaussian")

#: Grid points of the PLD compositions (bracket width about 0.03 in epsilon at census budgets).
WORKLOAD_POINTS = 2**17


@dataclass(frozen=True, slots=True)
class WorkloadMeasurement:
    """One measurement: a histogram query answered in every unit of a level, noise independent per cell."""

    label: str
    """E.g. ``"Block: votingage * cenrace"``."""
    scale: Fraction
    """Noise parameter per cell: the variance :math:`\\sigma^2` (Gaussian kinds) or the scale ``b``/``t``
    (Laplace kinds), exact."""
    fixed: bool = False
    """Its cells are unions of invariant cells: shift 0 for every semi-adjacent pair."""


def _down(x: Fraction) -> float:
    """``float(x)`` rounded down (a smaller noise parameter is less private: conservative)."""
    f = float(x)
    return math.nextafter(f, 0.0) if Fraction(f) > x else f


def measurement_rho(m: WorkloadMeasurement, noise: str, shift_l2sq: int) -> Fraction:
    """zCDP of one measurement whose shift vector has ``||v||_2^2 = shift_l2sq`` (exact, units: nats).

    Gaussian kinds: :math:`\\|v\\|_2^2/(2\\sigma^2)` [CKS20, Prop. 5]. Laplace kinds: the measurement is
    :math:`\\|v\\|_1/b`-pure DP, hence :math:`(\\|v\\|_1/b)^2/2`-zCDP [BS16, Prop. 1.4]; here
    :math:`\\|v\\|_1=2` for :math:`\\ell_2^2=2` and 4 for :math:`\\ell_2^2=8` (the two shapes used).
    """
    if shift_l2sq == 0:
        return Fraction(0)
    if noise in GAUSSIAN_NOISES:
        return Fraction(shift_l2sq, 2) / m.scale
    l1 = {2: 2, 8: 4}[shift_l2sq]
    return Fraction(l1 * l1, 2) / (m.scale * m.scale)


def _cell_part(noise: str, scale: Fraction, shift: int) -> PLDPart:
    if noise == "discrete-gaussian":
        return DiscreteGaussianPart(_down(scale), shift)
    if noise == "gaussian":
        return GaussianPart(math.nextafter(math.sqrt(_down(scale)), 0.0), float(shift))
    if noise == "laplace":
        return LaplacePart(_down(scale), float(shift))
    return DiscreteLaplacePart(_down(scale), shift)


def workload_parts(
    measurements: Sequence[WorkloadMeasurement], noise: str, *, semi_radius: int | None = None
) -> list[tuple[PLDPart, int]]:
    """The PLD parts of the worst pair: advertised (``semi_radius=None``) or Semi-DP at a(t) in {1, 2}.

    Advertised: two cells of shift 1 per measurement. Semi-DP, a(t) = 1: the same, fixed measurements
    dropped. a(t) = 2: two cells of shift 2 per non-fixed measurement (the worst pair, module docstring);
    Laplace kinds: one :math:`(4/b, 0)`-DP dominating pair per non-fixed measurement [KOV15, Thm. 2.4].
    """
    if noise not in NOISES:
        raise InvalidArgument(f"noise={noise!r} is not one of {list(NOISES)}.")
    parts: list[tuple[PLDPart, int]] = []
    for m in measurements:
        if semi_radius is None or (semi_radius == 1 and not m.fixed):
            parts.append((_cell_part(noise, m.scale, 1), 2))
        elif semi_radius == 2 and not m.fixed:
            if noise in GAUSSIAN_NOISES:
                parts.append((_cell_part(noise, m.scale, 2), 2))
            else:
                eps = 4.0 / _down(m.scale)
                parts.append((ApproxDPPart(math.nextafter(eps, math.inf), 0.0), 1))
        elif semi_radius is not None and semi_radius not in (0, 1, 2):
            raise InvalidArgument(f"semi_radius={semi_radius!r}: the query-level analysis covers a(t) <= 2.")
    return parts


def workload_rho(
    measurements: Sequence[WorkloadMeasurement], noise: str, *, semi_radius: int | None = None
) -> Fraction:
    """Exact zCDP of the worst pair (see :func:`workload_parts`), summed [BS16, Lemma 2.3]."""
    total = Fraction(0)
    for m in measurements:
        if semi_radius is None or (semi_radius == 1 and not m.fixed):
            total += measurement_rho(m, noise, 2)
        elif semi_radius == 2 and not m.fixed:
            total += measurement_rho(m, noise, 8)
    return total


def workload_pld(
    measurements: Sequence[WorkloadMeasurement],
    noise: str,
    *,
    semi_radius: int | None = None,
    points: int = WORKLOAD_POINTS,
) -> PLDBracket | None:
    """The certified PLD bracket of the worst pair (``None`` when no measurement can change)."""
    parts = workload_parts(measurements, noise, semi_radius=semi_radius)
    if not parts:
        return None
    bracket = compose_plds(parts, points=points)  # points given: always the grid, never the closed form
    if not isinstance(bracket, PLDBracket):  # pragma: no cover - compose_plds's contract
        raise TypeError("compose_plds with points returned a closed form")
    return bracket


#: Delta spent on each measurement set aside by :func:`workload_bracket` (its zCDP turned into (eps0, delta0)-DP).
SET_ASIDE_DELTA = 1e-20
#: Most measurements :func:`workload_bracket` sets aside before it gives up.
MAX_SET_ASIDE = 8


@dataclass(frozen=True)
class SetAsideBracket:
    r"""A workload's bracket when some measurements' noise lies too far from the others' for one loss grid.

    The lower end composes the kept measurements only: adding mechanisms never lowers a privacy
    profile, so the kept ones' optimistic bound is a lower bound of the whole. The upper end composes the
    kept measurements with, for each set-aside one, the dominating pair of an :math:`(\varepsilon_0,\delta_0)`
    guarantee it satisfies [KOV15, Thm. 2.4]: Gaussian kinds from their zCDP,
    :math:`\varepsilon_0=\rho+2\sqrt{\rho\log(1/\delta_0)}` [BS16, Prop. 1.3], Laplace kinds their pure
    :math:`\|v\|_1/b` (:math:`\delta_0=0`). Same queries as :class:`~accountant.pld.engine.PLDBracket`.
    """

    kept: PLDBracket | None
    """The kept measurements' bracket (``None``: nothing kept changes; the lower end is 0)."""
    upper_bracket: PLDBracket
    """The kept measurements and the set-aside ones' dominating pairs."""
    set_aside: tuple[int, ...]
    """Indices (into the measurements given) of those bounded through their guarantee."""

    @property
    def count(self) -> int:
        """Number of composed mechanisms (as for the upper composition)."""
        return self.upper_bracket.count

    def delta(self, epsilon: float) -> PLDInterval:
        """Certified ``(lower, upper)`` of the composed profile at ``epsilon``."""
        up = self.upper_bracket.delta(epsilon).upper
        lo = self.kept.delta(epsilon).lower if self.kept is not None else 0.0
        return PLDInterval(min(lo, up), up)

    def epsilon(self, delta: float) -> PLDInterval:
        """Certified ``(lower, upper)`` of the smallest ``epsilon >= 0`` with ``delta(epsilon) <= delta``."""
        up = self.upper_bracket.epsilon(delta).upper
        lo = self.kept.epsilon(delta).lower if self.kept is not None else 0.0
        return PLDInterval(min(lo, up), up)


WorkloadBracket = Union[PLDBracket, SetAsideBracket]
"""What :func:`workload_bracket` returns."""


def _set_aside_part(m: WorkloadMeasurement, noise: str, shift_l2sq: int, delta0: float) -> tuple[PLDPart, int]:
    """The dominating pair of the (eps0, delta0) guarantee of one measurement at the worst pair's shape."""
    if noise in GAUSSIAN_NOISES:
        rho = measurement_rho(m, noise, shift_l2sq)
        eps0 = up_exact(rho) + 2 * math.sqrt(up_exact(rho) * -math.log(delta0))
        return ApproxDPPart(math.nextafter(eps0 * (1 + 1e-12), math.inf), delta0), 1
    l1 = {2: 2, 8: 4}[shift_l2sq]
    return ApproxDPPart(up_exact(Fraction(l1) / m.scale), 0.0), 1


def workload_bracket(
    measurements: Sequence[WorkloadMeasurement],
    noise: str,
    *,
    semi_radius: int | None = None,
    points: int = WORKLOAD_POINTS,
    delta0: float = SET_ASIDE_DELTA,
) -> WorkloadBracket | None:
    """:func:`workload_pld`, or, when one loss grid cannot hold every measurement (an
    :class:`~accountant.core.errors.InvalidArgument` on size), a :class:`SetAsideBracket` that sets aside first the
    measurements whose own grid is too large, then those whose noise parameter lies farthest (in log scale)
    from the others' median, one at a time, up to :data:`MAX_SET_ASIDE` in all (or all that fail alone);
    the first error is raised again if that does not help.
    """
    try:
        return workload_pld(measurements, noise, semi_radius=semi_radius, points=points)
    except InvalidArgument as first:
        failure = first
    changing = [i for i, m in enumerate(measurements) if semi_radius is None or not m.fixed]
    alone: list[int] = []  # measurements whose own grid is too large: set aside first
    for i in changing:
        try:
            workload_pld([measurements[i]], noise, semi_radius=semi_radius, points=points)
        except InvalidArgument:
            alone.append(i)
    rest = [i for i in changing if i not in alone] or changing
    logs = sorted(math.log(float(measurements[i].scale)) for i in rest)
    median = logs[len(logs) // 2]
    order = alone + sorted(
        (i for i in changing if i not in alone), key=lambda i: -abs(math.log(float(measurements[i].scale)) - median)
    )
    shape = 8 if semi_radius == 2 else 2
    for n in range(max(1, len(alone)), min(max(MAX_SET_ASIDE, len(alone)), len(order)) + 1):
        aside = set(order[:n])
        kept = [m for i, m in enumerate(measurements) if i not in aside]
        dominating = [_set_aside_part(measurements[i], noise, shape, delta0) for i in sorted(aside)]
        try:
            lower = workload_pld(kept, noise, semi_radius=semi_radius, points=points)
            upper = compose_plds([*workload_parts(kept, noise, semi_radius=semi_radius), *dominating], points=points)
        except InvalidArgument:
            continue
        if not isinstance(upper, PLDBracket):  # pragma: no cover - compose_plds's contract with points
            raise TypeError("compose_plds with points returned a closed form")
        return SetAsideBracket(lower, upper, tuple(sorted(aside)))
    raise failure


__all__ = [
    "GAUSSIAN_NOISES",
    "MAX_SET_ASIDE",
    "SET_ASIDE_DELTA",
    "SetAsideBracket",
    "WorkloadBracket",
    "workload_bracket",
    "NOISES",
    "Noise",
    "WORKLOAD_POINTS",
    "WorkloadMeasurement",
    "measurement_rho",
    "workload_parts",
    "workload_pld",
    "workload_rho",
]
