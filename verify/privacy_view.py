"""What a privacy plot shows: its ranges, the claim's violation and the marked points, chosen from the data.

A privacy plot has two panels, both computed from privacy profiles (upper bounds on
:math:`\\delta(\\varepsilon)`):

* the **profile** panel, :math:`\\delta(\\varepsilon)` on a log scale against epsilon;
* the **power** panel, the highest power :math:`1 - f(\\alpha)` any test can reach at type-I error
  :math:`\\alpha` (both axes log): :math:`1 - f(\\alpha) \\le \\inf_\\varepsilon \\min(\\delta(\\varepsilon) +
  e^\\varepsilon\\alpha,\\ 1 - e^{-\\varepsilon}(1 - \\delta(\\varepsilon) - \\alpha))` [DRS22, Prop. 2.12]
  (any subset of epsilons gives a valid bound). Drawn as ``f`` on a linear axis the tradeoff curve hides a
  violation of size ``delta`` (``1e-10``) at small alpha; as power on a log axis it shows.

:func:`choose_view` picks the alpha range so that a violation of the claim, if the curves show one, lies
inside it (down to where the curves cross the claim), marks the largest gap in both panels, the point the
claim check *proved* (``epsilon >= lower`` at the claim's delta) and the verdict for the title.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

Profile = Callable[[float], float]
"""``epsilon -> delta`` upper bound (a probability in [0, 1])."""

#: Lowest type-I error ever plotted, and the one plotted when no violation needs a lower one.
ALPHA_FLOOR, ALPHA_DEFAULT = 1e-100, 1e-14

#: A curve exceeds the claim where its power bound is this factor above the claim's (grid noise is below).
GAP_FACTOR = 1.001


@dataclass(frozen=True)
class ClaimPoint:
    """The claim as plotted: its profile and, for an ``(epsilon, delta)`` claim, its corner."""

    label: str
    profile: Profile
    epsilon: float | None = None
    delta: float | None = None


@dataclass(frozen=True)
class ProvenPoint:
    """What the claim check proved: ``epsilon >= lower`` at ``delta`` (a refutation when ``lower > claimed``)."""

    lower: float
    delta: float


@dataclass(frozen=True)
class PrivacyView:
    """The chosen ranges, sampled curves and marks of one privacy plot (see the module docstring)."""

    eps: NDArray[np.float64]
    """Epsilon grid of the profile panel."""
    alpha: NDArray[np.float64]
    """Type-I error grid of the power panel (log-spaced, ending at 1)."""
    profiles: tuple[NDArray[np.float64], ...]
    """delta(eps) of each curve on ``eps`` (claim last, when there is one)."""
    powers: tuple[NDArray[np.float64], ...]
    """Power bound of each curve on ``alpha`` (claim last)."""
    violation: tuple[float, float] | None
    """The alpha interval where the subject's power bound exceeds the claim's (``None``: nowhere)."""
    gap_alpha: float | None
    """The alpha where the subject exceeds the claim by the largest factor (marked in the power panel)."""
    gap_eps: float | None
    """The epsilon where the subject's delta exceeds the claim's by the largest factor (marked when nothing is proven)."""
    proven: ProvenPoint | None
    """The claim check's proven lower bound, marked when it refutes the claim."""
    headline: str
    """The verdict as the plot's title states it."""
    claim_delta: float | None = None
    """The claim's delta (its corner), when it is an ``(epsilon, delta)`` claim."""
    subject: int = -1
    """Index (in ``profiles``/``powers``) of the curve the claim is about."""


def _safe(profile: Profile, e: float) -> float:
    """``profile(e)`` clipped to [0, 1]; a failure or NaN gives 1 (always a valid upper bound)."""
    try:
        d = float(profile(e))
    except (ArithmeticError, ValueError, RuntimeError):
        return 1.0
    return 1.0 if math.isnan(d) else min(max(d, 0.0), 1.0)


def power_bound(
    eps: NDArray[np.float64], delta: NDArray[np.float64], alpha: NDArray[np.float64]
) -> NDArray[np.float64]:
    """Upper bound on the power ``1 - f(alpha)`` from profile upper bounds ``delta`` at ``eps`` [DRS22, Prop. 2.12].

    ``min(1, min_i delta_i + e^{eps_i} alpha, min_i 1 - e^{-eps_i} (1 - delta_i - alpha))``, unitless.
    """
    with np.errstate(over="ignore", invalid="ignore"):
        a = alpha[:, None]
        first = delta[None, :] + np.exp(eps)[None, :] * a
        second = 1.0 - np.exp(-eps)[None, :] * (1.0 - delta[None, :] - a)
        both = np.minimum(np.nan_to_num(first, nan=1.0, posinf=1.0), np.nan_to_num(second, nan=1.0, posinf=1.0))
    return np.asarray(np.clip(both.min(axis=1), 0.0, 1.0), dtype=np.float64)


def _largest_gap(
    x: NDArray[np.float64], curves: Sequence[NDArray[np.float64]], claim: NDArray[np.float64]
) -> float | None:
    """The ``x`` where some curve exceeds ``claim`` by the largest factor beyond :data:`GAP_FACTOR`."""
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.max([c / np.maximum(claim, 1e-300) for c in curves], axis=0)
    if not np.any(ratio > GAP_FACTOR):
        return None
    return float(x[int(np.nanargmax(ratio))])


def headline(verdict: str | None, claim: ClaimPoint | None, proven: ProvenPoint | None) -> str:
    """The verdict for the title: ``claim FAILS: epsilon >= 29.9871 > 17.14 at delta = 1e-10`` and the like."""
    from semidp.verify.display import fmt_delta, fmt_down

    if verdict is None:
        return ""
    if claim is None:
        return f"verdict: {verdict.upper()}"
    what = f"claim ({claim.label}) {verdict.upper()}"
    if verdict == "fails" and proven is not None and claim.epsilon is not None and proven.lower > claim.epsilon:
        return f"{what}: proven epsilon >= {fmt_down(proven.lower)} > {claim.epsilon:g} at delta = {fmt_delta(proven.delta)}"
    return what


def choose_view(
    curves: Sequence[Profile],
    *,
    claim: ClaimPoint | None = None,
    epsilons: Sequence[float] = (),
    verdict: str | None = None,
    proven: ProvenPoint | None = None,
    points: int = 300,
    subject: int = -1,
    reach: float = 4.0,
) -> PrivacyView:
    """Ranges and marks of a privacy plot of ``curves`` (profiles) against ``claim`` (see the module docstring).

    ``epsilons``: values the epsilon axis must cover (the reported ones). The profile panel spans
    ``[0, 1.15 max(1, epsilons, claim, proven)]``; the power panel spans type-I errors from
    :data:`ALPHA_DEFAULT` down to a decade below the lowest alpha where the subject exceeds the claim
    (searched down to :data:`ALPHA_FLOOR`; a violation reaching it is shown from the default), up to 1.
    ``proven`` is kept only when the verdict is ``fails`` and it exceeds the claimed epsilon. ``subject``:
    the index in ``curves`` of the guarantee the claim is about (the effective one, last by default); only it
    is compared with the claim. ``points``: epsilons sampled on the axis (each profile is evaluated at about
    ``1.5 points`` epsilons; a PLD bracket costs a composition per epsilon); ``reach``: the power bound also
    uses epsilons up to ``reach`` times the axis, where delta is as small as the smallest alphas.
    """
    finite = [
        e for e in (*epsilons, claim.epsilon if claim else None, proven.lower if proven else None) if e is not None
    ]
    eps_top = min(max([1.0, *[e for e in finite if math.isfinite(e) and e < 1e6]]) * 1.15, 1e6)
    eps = np.linspace(0.0, eps_top, points)
    # the power bound needs epsilons far beyond the display, where delta is as small as the tiny alphas
    extra = [e for e in finite if math.isfinite(e) and 0 <= e < 1e6]
    eps_calc = np.unique(
        np.concatenate([eps, np.linspace(eps_top, reach * eps_top, max(points // 2, 2)), np.array(extra)])
    )
    all_curves = [*curves, *([claim.profile] if claim is not None else [])]
    calc = [np.array([_safe(p, float(e)) for e in eps_calc]) for p in all_curves]
    shown = [np.interp(eps, eps_calc, d) for d in calc]  # eps is a subset of eps_calc: exact values
    search = np.logspace(math.log10(ALPHA_FLOOR), 0.0, 1001)
    search_power = [power_bound(eps_calc, d, search) for d in calc]
    violation = None
    if claim is not None and curves:
        over = search_power[subject % len(curves)] > search_power[-1] * GAP_FACTOR
        if over.any() and verdict != "holds":  # a proven claim: a float-rounding excess is not drawn
            violation = (float(search[over].min()), float(search[over].max()))
    # a violation that reaches the search floor (e.g. no finite guarantee) shows at every alpha: keep the default
    bounded = violation is not None and violation[0] > search[0]
    lo = min(ALPHA_DEFAULT, violation[0] / 10) if violation is not None and bounded else ALPHA_DEFAULT
    alpha = np.logspace(math.log10(lo), 0.0, points)
    powers = [power_bound(eps_calc, d, alpha) for d in calc]
    gap_alpha = gap_eps = None
    if claim is not None and curves and verdict != "holds":
        k = subject % len(curves)
        gap_alpha = _largest_gap(alpha, [powers[k]], powers[-1])
        gap_eps = _largest_gap(eps, [shown[k]], shown[-1])
    keep = (
        proven
        if proven is not None
        and verdict == "fails"
        and claim is not None
        and claim.epsilon is not None
        and proven.lower > claim.epsilon
        else None
    )
    return PrivacyView(
        eps=eps,
        alpha=alpha,
        profiles=tuple(shown),
        powers=tuple(powers),
        violation=violation,
        gap_alpha=gap_alpha,
        gap_eps=gap_eps,
        proven=keep,
        headline=headline(verdict, claim, keep),
        claim_delta=None if claim is None else claim.delta,
        subject=subject % len(curves) if curves else -1,
    )


__all__ = [
    "ALPHA_DEFAULT",
    "ALPHA_FLOOR",
    "GAP_FACTOR",
    "ClaimPoint",
    "PrivacyView",
    "Profile",
    "ProvenPoint",
    "choose_view",
    "headline",
    "power_bound",
]
