r"""Design before deployment: the largest common scale of a release's zCDP budgets that provably meets a target.

A release of independent noisy measurements with zCDP budgets :math:`\rho_1,\dots,\rho_n` is scaled by one
factor :math:`c`: every :math:`\rho_m` becomes :math:`c\rho_m` (the allocation kept; Gaussian kinds:
:math:`\sigma_m^2/c`). :func:`design_scale` finds, by a secant search in :math:`\log c` with a bisection
fallback, the largest :math:`c` (to a relative tolerance, default :data:`DESIGN_REL_TOL` = 0.1 %) whose
certified PLD bracket (:func:`accountant.pld.refine.refine_bracket`) has its **upper** end of
:math:`\varepsilon(\delta)` at or below the target: the returned scale meets the target by a proven upper
bound, never by an estimate. Tightness is proven when the certified **lower** end at a scale at most
:math:`c(1+\text{tol})` exceeds the target: that release (and, the privacy profile being non-decreasing in
:math:`c` -- less noise [DRS22, Thm. 2.7 for Gaussians] -- every larger scale) fails the target; otherwise the
result says ``tight = False``. A zCDP target needs no search: :math:`\rho` is linear in :math:`c`
(:func:`design_scale_zcdp`, exact).

Units: epsilon in nats, delta a probability, rho in nats (zCDP), seconds of wall clock. The scale ``c`` is an
exact dyadic rational (:class:`fractions.Fraction`), so the designed budgets :math:`c\rho_m` are exact.

The parts of a scale are given by the caller (``parts_at``), so this module knows nothing of specs or
workloads: :mod:`semidp.verify.design` builds them from a workload's measurements
(:func:`semidp.accountant.workloads.accounting.workload_parts`).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction

from semidp.accountant.core.arguments import check_in_interval, check_positive
from semidp.accountant.core.budget import Budget
from semidp.accountant.core.errors import InvalidArgument
from semidp.accountant.pld.closed_forms import PLDInterval
from semidp.accountant.pld.parts import PLDPart
from semidp.accountant.pld.refine import refine_bracket

__all__ = [
    "DESIGN_REL_TOL",
    "DESIGN_REL_WIDTH",
    "SEARCH_REL_WIDTH",
    "DesignProbe",
    "ScaleDesign",
    "design_scale",
    "design_scale_zcdp",
]

#: Relative tolerance of the designed scale: the returned ``c`` meets the target and ``c * (1 + tol)`` does not.
DESIGN_REL_TOL = 1e-3
#: Relative width the PLD brackets of the search's probes are refined to (upper ends are tight already on the
#: default grid; only the upper end decides whether a probe meets the target).
SEARCH_REL_WIDTH = 2e-3
#: Relative width the tightness witness (the failing probe just above the design) is refined to when its lower end
#: does not yet exceed the target: below the tolerance times the slope d ln eps / d ln c (about 0.5 for Gaussian
#: workloads), so that tightness can be proven.
DESIGN_REL_WIDTH = 1e-4
#: Most PLD evaluations of one search.
MAX_PROBES = 40
#: Significant bits of a proposed scale (``c = m / 2**k``, ``m < 2**SCALE_BITS``): exact and short.
SCALE_BITS = 24
#: The tightness probe sits this factor below ``c * (1 + tol)`` so that its float noise parameters, rounded down
#: by the parts, are still at least those of ``c * (1 + tol)`` (its lower end then bounds that release's).
PROBE_SHRINK = Fraction(2**40 - 1, 2**40)

PartsAt = Callable[[Fraction], Sequence[tuple[PLDPart, int]]]


@dataclass(frozen=True)
class DesignProbe:
    """One evaluated scale: the certified bracket of epsilon at the target delta."""

    scale: Fraction
    bracket: PLDInterval
    """Certified ``(lower, upper)`` of epsilon at the target delta (nats)."""
    reached: bool
    """Whether the bracket met the requested relative width."""


@dataclass(frozen=True)
class ScaleDesign:
    """The result of :func:`design_scale` (or :func:`design_scale_zcdp`)."""

    scale: Fraction | None
    """The largest scale found whose certified upper bound meets the target (``None``: none was certified)."""
    achieved: PLDInterval | None
    """Certified bracket at ``scale`` (epsilon at the target delta; zCDP: ``(rho, rho)`` exact, as floats)."""
    tight: bool
    """Proven: a scale at most ``scale * (1 + rel_tol)`` fails the target by its certified lower end."""
    failing: DesignProbe | None
    """The smallest evaluated scale whose certified upper bound exceeds the target (the tightness witness when
    its lower end does too)."""
    rel_tol: float
    iterations: int
    """PLD evaluations made."""
    seconds: float
    stopped: str | None = None
    """Why the search stopped before reaching ``rel_tol`` (the time budget, the evaluation cap), else ``None``."""
    probes: tuple[DesignProbe, ...] = ()
    """Every evaluation, in order."""

    @property
    def met(self) -> bool:
        """A certified design was found."""
        return self.scale is not None

    @property
    def gap(self) -> float | None:
        """``failing.scale / scale - 1``: how close to the largest certified scale (``None`` without both)."""
        if self.scale is None or self.failing is None:
            return None
        return float(self.failing.scale / self.scale) - 1.0


def _dyadic(x: float) -> Fraction:
    """``x > 0`` rounded to :data:`SCALE_BITS` significant bits (an exact dyadic rational)."""
    m, e = math.frexp(x)
    return Fraction(round(m * 2**SCALE_BITS)) * Fraction(2) ** (e - SCALE_BITS)


def design_scale(
    parts_at: PartsAt,
    *,
    epsilon: float,
    delta: float,
    initial: Fraction = Fraction(1),
    rel_tol: float = DESIGN_REL_TOL,
    rel_width: float = DESIGN_REL_WIDTH,
    search_width: float = SEARCH_REL_WIDTH,
    budget: Budget | None = None,
    max_probes: int = MAX_PROBES,
) -> ScaleDesign:
    r"""The largest scale ``c`` (to ``rel_tol``) whose composition ``parts_at(c)`` has certified
    :math:`\varepsilon(\delta)\le` ``epsilon`` (upper end of the PLD bracket), and whether that is proven tight.

    ``parts_at(c)``: the PLD parts of the worst pair of the release with every :math:`\rho_m` multiplied by ``c``
    (its noise parameters must be rounded toward less noise, as :func:`accountant.workloads.accounting.workload_parts` does).
    Probes are refined to ``search_width``; the failing probe that witnesses tightness, when its lower end does
    not yet exceed the target, to ``rel_width``. ``initial``: the first scale tried (e.g. 1, the release as
    published). ``budget``: the search stops when it is spent and returns the best certified scale
    so far (``stopped`` says why; ``scale`` is ``None`` if none was certified). Units: epsilon in nats, delta a
    probability.

    Raises
    ------
    InvalidArgument
        If ``epsilon <= 0``, ``delta`` is not in ``(0, 1)``, ``rel_tol`` or ``rel_width`` not in ``(0, 1]`` or
        ``initial <= 0``; an evaluation's own (e.g. a noise scale too extreme for one loss grid).
    """
    check_positive("epsilon", epsilon)
    check_in_interval("delta", delta, 0.0, 1.0, lo_open=True, hi_open=True)
    check_in_interval("rel_tol", rel_tol, 0.0, 1.0, lo_open=True)
    check_in_interval("rel_width", rel_width, 0.0, 1.0, lo_open=True)
    check_in_interval("search_width", search_width, 0.0, 1.0, lo_open=True)
    if initial <= 0:
        raise InvalidArgument(f"initial={initial}: the first scale must be > 0.")
    start = time.monotonic()
    budget = Budget.unlimited() if budget is None else budget
    probes: list[DesignProbe] = []
    lo: DesignProbe | None = None  # largest scale certified to meet the target
    hi: DesignProbe | None = None  # smallest scale whose upper end exceeds it
    tol = Fraction(rel_tol)
    stopped: str | None = None

    def evaluate(c: Fraction, width: float) -> DesignProbe:
        r = refine_bracket(parts_at(c), delta=delta, rel_width=width, budget=budget)
        p = DesignProbe(c, r.interval, r.reached)
        probes.append(p)
        return p

    def predicted_root() -> float:
        """Secant in (ln c, ln upper) on the last two probes; one probe: slope 1/2 (Gaussian zCDP regime)."""
        pts = [(math.log(p.scale), math.log(max(p.bracket.upper, 1e-300))) for p in probes[-2:]]
        (x1, y1) = pts[-1]
        slope = 0.5
        if len(pts) == 2 and pts[0][0] != x1:
            slope = (y1 - pts[0][1]) / (x1 - pts[0][0])
            slope = min(max(slope, 0.2), 2.0)
        return math.exp(x1 + (math.log(epsilon) - y1) / slope)

    c = initial
    while True:
        if len(probes) >= max_probes:
            stopped = f"the search stopped after {max_probes} evaluations"
            break
        if budget.expired:
            stopped = "the time budget ran out"
            break
        p = evaluate(c, search_width)
        if p.bracket.upper <= epsilon:
            if lo is None or p.scale > lo.scale:
                lo = p
        elif hi is None or p.scale < hi.scale:
            hi = p
        if lo is not None and hi is not None and hi.scale <= lo.scale * (1 + tol):
            break
        c = _next_scale(predicted_root(), lo, hi, tol, stalled=_stalled(probes, epsilon))
    tight = hi is not None and lo is not None and hi.scale <= lo.scale * (1 + tol) and hi.bracket.lower > epsilon
    if lo is not None and hi is not None and hi.scale <= lo.scale * (1 + tol) and not tight and stopped is None:
        # the straddling bracket of the failing probe: once more, narrower, if time allows
        if not budget.expired:
            q = evaluate(hi.scale, rel_width)
            both = PLDInterval(max(q.bracket.lower, hi.bracket.lower), min(q.bracket.upper, hi.bracket.upper))
            hi = DesignProbe(hi.scale, both, q.reached)  # both brackets contain the truth: so does their intersection
            tight = both.lower > epsilon
    return ScaleDesign(
        scale=None if lo is None else lo.scale,
        achieved=None if lo is None else lo.bracket,
        tight=tight,
        failing=hi,
        rel_tol=rel_tol,
        iterations=len(probes),
        seconds=time.monotonic() - start,
        stopped=stopped,
        probes=tuple(probes),
    )


def _stalled(probes: Sequence[DesignProbe], epsilon: float) -> bool:
    """The last two probes both failed the target (the secant creeps toward the root from above)."""
    return len(probes) >= 2 and all(q.bracket.upper > epsilon for q in probes[-2:])


def _next_scale(
    root: float, lo: DesignProbe | None, hi: DesignProbe | None, tol: Fraction, *, stalled: bool
) -> Fraction:
    """The next scale to evaluate, strictly between the certified ``lo`` and the failing ``hi``.

    Close to the predicted ``root`` of the upper end: the tightness probe just below ``lo * (1 + tol)``.
    Otherwise just below the root (the probe then likely meets the target), clamped into ``(lo, hi)``; the
    geometric midpoint when the secant leaves that interval or two failing probes came in a row (``stalled``).
    """
    if lo is not None and root <= float(lo.scale * (1 + tol) ** 2):
        return lo.scale * (1 + tol) * PROBE_SHRINK
    aim = root * (1 - 0.4 * float(tol))
    if not (math.isfinite(aim) and aim > 0):  # an infinite or zero upper end: no secant, halve or double
        aim = float(hi.scale) / 2 if hi is not None else 2 * float(lo.scale) if lo is not None else 1.0
    if lo is not None and hi is not None:
        if stalled or not float(lo.scale) < aim < float(hi.scale):
            aim = math.sqrt(float(lo.scale) * float(hi.scale))
    elif hi is not None and aim >= float(hi.scale):
        aim = float(hi.scale) * 0.9
    elif lo is not None and aim <= float(lo.scale):
        aim = float(lo.scale) * (1 + 2 * float(tol))
    c = _dyadic(aim)
    if (lo is not None and c <= lo.scale) or (hi is not None and c >= hi.scale):
        return lo.scale * (1 + tol) * PROBE_SHRINK if lo is not None else _dyadic(float(c) * 0.9)
    return c


def design_scale_zcdp(rho_at_one: Fraction, target_rho: Fraction) -> ScaleDesign:
    r"""The scale ``c = target_rho / rho_at_one`` for a zCDP target: exact and tight (zCDP composes additively and
    each measurement's :math:`\rho` is linear in ``c`` [BS16, Lemma 2.3]). Units: rho in nats.

    Raises
    ------
    InvalidArgument
        If ``rho_at_one <= 0`` (nothing to scale) or ``target_rho <= 0``.
    """
    if rho_at_one <= 0:
        raise InvalidArgument("design: the release's worst pair has rho = 0; there is nothing to scale.")
    if target_rho <= 0:
        raise InvalidArgument(f"design: target zcdp = {target_rho} must be > 0.")
    c = Fraction(target_rho) / Fraction(rho_at_one)
    r = float(target_rho)
    return ScaleDesign(c, PLDInterval(r, r), True, None, 0.0, 0, 0.0)
