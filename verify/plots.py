"""Report plots: advertised vs effective privacy, as tradeoff curves and privacy profiles (PNG)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from semidp.accountant.conversion_routes import AnyGuarantee, delta_at, epsilon_delta, to_tradeoff
from semidp.accountant.semidp import NoFiniteGuarantee

#: Line styles cycled over the curves, so a curve drawn over an identical one stays visible.
STYLES = (("-", 2.6), ("--", 1.8), (":", 2.2), ("-.", 1.4))


def label_privacy_axes(ax1: Any, ax2: Any) -> None:
    """Axis labels, titles and legends of the two panels: tradeoff lower bounds, privacy profiles."""
    ax1.set_xlabel("type I error alpha (log scale)")
    ax1.set_ylabel("type II error, lower bound f(alpha)")
    ax1.set_title("tradeoff functions (higher = more private)")
    ax1.legend(fontsize=8)
    ax2.set_ylim(1e-14, 2)
    ax2.set_xlabel("epsilon")
    ax2.set_ylabel("delta(epsilon), upper bound")
    ax2.set_title("privacy profiles (lower = more private)")
    ax2.legend(fontsize=8)


def save_figure(fig: Any, path: Path, suptitle: str | None = None, *, fontsize: int = 10) -> Path:
    """Give ``fig`` its overall title (if any), lay it out, write it as a 110-dpi PNG at ``path`` and close it."""
    import matplotlib.pyplot as plt

    if suptitle is not None:
        fig.suptitle(suptitle, fontsize=fontsize)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def plot_privacy(
    curves: list[tuple[str, AnyGuarantee]],
    path: Path,
    title: str,
    *,
    claim: tuple[str, AnyGuarantee] | None = None,
    deltas: tuple[float, ...] = (1e-10,),
) -> Path:
    """Write a two-panel PNG: tradeoff lower bounds (Dong–Roth–Su convention) and delta(epsilon).

    The tradeoff panel shows what each guarantee provably protects: the lowest
    type-II error of any test at each type-I error (higher is more private).
    Curves cycle through :data:`STYLES` (wide solid first, then narrower dashed
    and dotted lines), so two identical curves both show. ``claim`` is drawn in
    black; the epsilon axis covers every epsilon reported at ``deltas``.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4.5))
    # Log-scaled type-I error: at census-level budgets every curve hugs the axes on a linear scale.
    alpha = np.concatenate([np.logspace(-14, -1, 400), np.linspace(0.1, 1.0, 200)[1:]])
    ax1.semilogx(alpha, 1 - alpha, color="0.7", ls=":", label="perfect privacy")
    eps_max = 1.0
    drawn = [
        (label, g, {"ls": STYLES[i % len(STYLES)][0], "lw": STYLES[i % len(STYLES)][1]})
        for i, (label, g) in enumerate(curves)
    ]
    if claim is not None:
        drawn.append((f"claim: {claim[0]}", claim[1], {"ls": (0, (5, 2, 1, 2)), "lw": 1.2, "color": "black"}))
    for label, g, style in drawn:
        t = to_tradeoff(g)
        if t is not None:
            ax1.semilogx(alpha, t.curve.std(alpha), label=label, **style)
        elif isinstance(g, NoFiniteGuarantee):
            ax1.semilogx(alpha, np.zeros_like(alpha), label=f"{label}: none", **style)
    for _, g, _ in drawn:  # the axis covers every route's epsilon at every reported delta
        for e in (e for d in deltas for e in epsilon_delta(g, d)):
            if e.epsilon is not None and e.epsilon < 1e6:
                eps_max = max(eps_max, e.epsilon)
    eps = np.linspace(0, eps_max * 1.1, 300)
    for label, g, style in drawn:
        values = [delta_at(g, float(e)) for e in eps]
        if all(v is not None for v in values):
            d = np.array(values, dtype=np.float64)
            ax2.semilogy(eps, np.maximum(d, 1e-300), label=label, **style)
    label_privacy_axes(ax1, ax2)
    return save_figure(fig, path, title)
