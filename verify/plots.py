"""Report plots: advertised vs effective privacy against the claim, as privacy profiles and test power (PNG).

What is shown (ranges, violation, marks, verdict) is chosen by :mod:`verify.privacy_view`.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np

from semidp.accountant.core.progress import stage
from semidp.accountant.guarantees.conversion_routes import AnyGuarantee, delta_at, epsilon_delta
from semidp.accountant.guarantees.conversions import gdp_to_delta
from semidp.accountant.guarantees.definitions import GDP
from semidp.accountant.guarantees.semidp import NoFiniteGuarantee
from semidp.verify.display import fmt_delta, fmt_down
from semidp.verify.plain_summary import proven_lower
from semidp.verify.privacy_view import ClaimPoint, PrivacyView, Profile, ProvenPoint, choose_view
from semidp.verify.report import Report

#: Line styles cycled over the curves, so a curve drawn over an identical one stays visible.
STYLES = (("-", 2.6), ("--", 1.8), (":", 2.2), ("-.", 1.4))


def label_privacy_axes(ax_profile: Any, ax_power: Any) -> None:
    """Axis labels, titles and legends of the two panels: privacy profiles, then the power of any test."""
    ax_profile.set_xlabel("epsilon")
    ax_profile.set_ylabel("delta(epsilon), upper bound")
    ax_profile.set_title("privacy profiles (lower = more private)")
    ax_profile.legend(fontsize=8)
    ax_power.set_xlabel("type I error alpha (log scale)")
    ax_power.set_ylabel("power 1 - f(alpha) of any test, upper bound")
    ax_power.set_title("tradeoff: best test power (lower = more private)")
    ax_power.legend(fontsize=8)


def draw_view(
    ax_profile: Any, ax_power: Any, view: PrivacyView, labels: list[str], styles: list[dict[str, Any]]
) -> None:
    """Draw ``view``'s curves (``labels``/``styles`` per curve, claim last) and its marks on the two panels."""
    floor = 1e-300
    for d, label, style in zip(view.profiles, labels, styles):
        ax_profile.semilogy(view.eps, np.maximum(d, floor), label=label, **style)
    for p, label, style in zip(view.powers, labels, styles):
        ax_power.loglog(view.alpha, np.maximum(p, floor), label=label, **style)
    ax_power.loglog(view.alpha, view.alpha, color="0.7", ls=":", label="perfect privacy (power = alpha)")
    marks = [d for d in (view.proven.delta if view.proven else None, view.claim_delta) if d]
    ax_profile.set_ylim(max(min([1e-14, *marks]) / 1e4, floor), 2)
    plows = [float(np.min(p[p > 0])) for p in view.powers if np.any(p > 0)]
    ax_power.set_ylim(max(min([float(view.alpha[0]), *plows]) / 10, floor), 2)
    if view.violation is not None:
        lo, hi = max(view.violation[0], float(view.alpha[0])), view.violation[1]
        ax_power.axvspan(lo, hi, color="red", alpha=0.08, label="the effective bound exceeds the claim")
    if view.gap_alpha is not None:
        i = int(np.argmin(np.abs(view.alpha - view.gap_alpha)))
        top = float(view.powers[view.subject][i])
        span = math.log10(view.alpha[-1] / view.alpha[0]) or 1.0
        left = math.log10(view.gap_alpha / view.alpha[0]) / span > 0.35  # annotate on the side with room
        ax_power.plot([view.gap_alpha], [max(top, floor)], "rx", ms=10, mew=2)
        ax_power.annotate(
            f"largest gap to the claim\nalpha = {view.gap_alpha:.1e}",
            (view.gap_alpha, max(top, floor)),
            textcoords="offset points",
            xytext=(-10, 10) if left else (10, 10),
            fontsize=8,
            color="red",
            ha="right" if left else "left",
        )
    if view.proven is not None:
        pr = view.proven
        ax_profile.plot(
            [pr.lower], [pr.delta], "rX", ms=11, mew=1, label="proven: epsilon >= this at the claim's delta"
        )
        ax_profile.annotate(
            f"proven epsilon >= {fmt_down(pr.lower)}\nat delta = {fmt_delta(pr.delta)}",
            (pr.lower, pr.delta),
            textcoords="offset points",
            xytext=(-14, 14),
            fontsize=8,
            color="red",
            ha="right",
        )
    elif view.gap_eps is not None:
        ax_profile.axvline(view.gap_eps, color="red", lw=0.8, ls=":")


def save_figure(fig: Any, path: Path, suptitle: str | None = None, *, fontsize: int = 10) -> Path:
    """Give ``fig`` its overall title (if any), lay it out, write it as a 110-dpi PNG at ``path`` and close it."""
    import matplotlib.pyplot as plt

    if suptitle is not None:
        fig.suptitle(suptitle, fontsize=fontsize)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def _proven(report: Report | None) -> ProvenPoint | None:
    """The claim check's proven lower bound of epsilon at the claim's delta (contract: ``checks[].bounds``)."""
    if report is None or report.claim is None:
        return None
    delta = report.claim.number("delta")
    check = next((c for c in report.checks if c.name == "claim" and c.bounds is not None), None)
    if check is None or check.bounds is None:
        return None
    if not delta or report.claim.number("epsilon") is None or not proven_lower(report):
        return None
    return ProvenPoint(float(check.bounds.lower), float(delta))


def guarantee_profile(g: AnyGuarantee) -> Profile | None:
    """``epsilon -> delta`` upper bound of ``g`` (1 for no finite guarantee); ``None`` when no route gives one."""
    if isinstance(g, NoFiniteGuarantee):
        return lambda e: 1.0
    if isinstance(g, GDP):  # closed form [BW18, Thm. 8]; the generic route goes through the tradeoff curve (slow)
        return lambda e: gdp_to_delta(g, e)
    try:
        if delta_at(g, 1.0) is None:
            return None
    except (ArithmeticError, ValueError, RuntimeError):
        pass  # an extreme value: the view falls back to delta <= 1 where a point fails
    return lambda e: 1.0 if (d := delta_at(g, e)) is None else d


def privacy_view(
    curves: list[tuple[str, AnyGuarantee]],
    *,
    claim: tuple[str, AnyGuarantee] | None = None,
    deltas: tuple[float, ...] = (1e-10,),
    report: Report | None = None,
) -> tuple[PrivacyView, list[str], list[dict[str, Any]]]:
    """What :func:`plot_privacy` draws: the view (:func:`verify.privacy_view.choose_view`), labels and styles.

    The claim is compared with the last of ``curves`` (the effective guarantee); when that one has no
    profile, the claim is left out (nothing to compare it with).
    """
    profiles: list[Profile] = []
    labels: list[str] = []
    styles: list[dict[str, Any]] = []
    for i, (label, g) in enumerate(curves):
        prof = guarantee_profile(g)
        if prof is None:
            continue
        none = isinstance(g, NoFiniteGuarantee)
        profiles.append(prof)
        labels.append(f"{label}: no finite guarantee" if none else label)
        styles.append({"ls": STYLES[i % len(STYLES)][0], "lw": STYLES[i % len(STYLES)][1]})
    claim_point = None
    if (
        claim is not None
        and profiles
        and guarantee_profile(curves[-1][1]) is not None
        and (cp := guarantee_profile(claim[1])) is not None
    ):
        g = claim[1]
        eps_c = getattr(g, "epsilon", None)
        delta_c = getattr(g, "delta", 0.0 if eps_c is not None else None)
        claim_point = ClaimPoint(claim[0], cp, eps_c, delta_c)
        labels.append(f"claim: {claim[0]}")
        styles.append({"ls": (0, (5, 2, 1, 2)), "lw": 1.2, "color": "black"})
    epsilons = [
        e.epsilon
        for _, g in [*curves, *([claim] if claim else [])]
        for d in deltas
        for e in epsilon_delta(g, d)
        if e.epsilon is not None
    ]
    view = choose_view(
        profiles,
        points=150,
        claim=claim_point,
        epsilons=epsilons,
        verdict=None if report is None else report.verdict,
        proven=_proven(report),
    )
    return view, labels, styles


def plot_privacy(
    curves: list[tuple[str, AnyGuarantee]],
    path: Path,
    title: str,
    *,
    claim: tuple[str, AnyGuarantee] | None = None,
    deltas: tuple[float, ...] = (1e-10,),
    report: Report | None = None,
) -> Path:
    """Write a two-panel PNG: privacy profiles delta(epsilon), then the power of any test against alpha.

    The ranges, the violation band and the marks come from :func:`verify.privacy_view.choose_view`: a
    violation of the claim, if the curves show one, is inside both panels, the point the claim check proved
    (``epsilon >= lower`` at the claim's delta) is marked, and the title states the verdict (from ``report``).
    Curves cycle through :data:`STYLES` (wide solid first, then narrower dashed and dotted lines), so two
    identical curves both show; the claim is drawn in black.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    stage(f"drawing {Path(path).name}")
    view, labels, styles = privacy_view(curves, claim=claim, deltas=deltas, report=report)
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(12, 4.8))
    draw_view(ax1, ax2, view, labels, styles)
    for d in deltas:
        ax1.axhline(d, color="0.6", lw=0.8, ls=":")
    label_privacy_axes(ax1, ax2)
    return save_figure(fig, path, title + (f"\n{view.headline}" if view.headline else ""))
