"""The workload plot: privacy profiles and test power of zCDP guarantees and PLD compositions (PNG).

Ranges, the claim's violation and the marks are chosen by :func:`verify.privacy_view.choose_view`, as for
the privacy plot.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Union

from semidp.accountant.core.progress import stage
from semidp.accountant.guarantees.conversion_routes import AnyGuarantee
from semidp.accountant.pld.engine import PLDBracket
from semidp.accountant.workloads.accounting import SetAsideBracket, WorkloadBracket
from semidp.verify.plots import STYLES, draw_view, guarantee_profile, label_privacy_axes, save_figure
from semidp.verify.privacy_view import ClaimPoint, Profile, ProvenPoint, choose_view

Curve = Union[AnyGuarantee, WorkloadBracket, None]

#: Epsilons sampled per curve (each costs a PLD bracket query, about 0.03 s on a census workload).
POINTS = 40


def _pld_profile(b: WorkloadBracket) -> Profile:
    """Upper bounds of delta(eps) from the certified bracket."""
    return lambda e: b.delta(e).upper


def draw_workload_plot(
    path: Path,
    title: str,
    curves: list[tuple[str, Curve]],
    *,
    claim: tuple[str, AnyGuarantee] | None = None,
    verdict: str | None = None,
    proven: ProvenPoint | None = None,
) -> Path:
    """Write a two-panel PNG: delta(epsilon) upper bounds and the power bound of each curve, against ``claim``.

    ``verdict`` (the claim check's: ``holds``, ``fails`` or ``inconclusive``) and ``proven`` (the claim check's
    lower bound of epsilon at the claim's delta) go to the title and the marks.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    stage(f"drawing {Path(path).name}")
    profiles: list[Profile] = []
    labels: list[str] = []
    styles: list[dict[str, Any]] = []
    epsilons: list[float] = []
    for i, (label, g) in enumerate(curves):
        if g is None:
            continue
        if isinstance(g, (PLDBracket, SetAsideBracket)):
            prof: Profile | None = _pld_profile(g)
            epsilons.append(g.epsilon(1e-12).upper)
        else:
            prof = guarantee_profile(g)
        if prof is None:
            continue
        profiles.append(prof)
        labels.append(label)
        ls, lw = STYLES[i % len(STYLES)]
        styles.append({"ls": ls, "lw": lw})
    claim_point = None
    if claim is not None and (cp := guarantee_profile(claim[1])) is not None:
        eps_c = getattr(claim[1], "epsilon", None)
        claim_point = ClaimPoint(claim[0], cp, eps_c, getattr(claim[1], "delta", None))
        labels.append(f"claim: {claim[0]}")
        styles.append({"ls": (0, (5, 2, 1, 2)), "lw": 1.2, "color": "black"})
    view = choose_view(
        profiles,
        claim=claim_point,
        epsilons=[min(e, 200.0) for e in epsilons],
        verdict=verdict,
        proven=proven,
        points=POINTS,
        reach=1.5,
    )
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(12, 4.8))
    draw_view(ax1, ax2, view, labels, styles)
    ax1.axhline(1e-10, color="0.6", lw=0.8, ls=":")
    label_privacy_axes(ax1, ax2)
    return save_figure(fig, path, title + (f"\n{view.headline}" if view.headline else ""))


__all__ = ["draw_workload_plot"]
