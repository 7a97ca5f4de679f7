"""TV-bound plot of the lattice MCMC diagnostics (PNG).

The curve is the Monte Carlo estimate of the L-lag coupling bound
:math:`d_{TV}(\\pi_t,\\pi)\\le\\mathbb E[\\max(0,\\lceil(\\tau-L-t)/L\\rceil)]`
(Biswas, Jacob & Vanetti 2019, Thm 2.5), from :func:`mechanisms.coupling.tv_bound_curve`.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path


def plot_tv(
    curve: Sequence[tuple[int, float]],
    path: Path | str,
    title: str,
    *,
    burn_in: int | None = None,
    target: float | None = None,
    upper: Sequence[tuple[int, float]] | None = None,
) -> Path:
    """Write a PNG of the TV bound against the iteration t, with the chosen burn-in and target marked.

    ``upper``: the confidence-adjusted bound, which chose the burn-in (drawn as the bold curve)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    try:
        ts, vs = [t for t, _ in curve], [v for _, v in curve]
        ax.plot(ts, vs, "C0--", lw=1.0, label="TV bound, Monte Carlo estimate (BJV Thm 2.5)")
        if upper is not None:
            ax.plot(
                [t for t, _ in upper],
                [u for _, u in upper],
                "C1-",
                lw=1.8,
                label="confidence-adjusted bound (chose the burn-in)",
            )
        if target is not None:
            ax.axhline(target, color="C3", lw=0.8, ls="--", label=f"target delta'_TV = {target:g}")
        if burn_in is not None:
            ax.axvline(burn_in, color="0.4", lw=0.8, ls=":", label=f"burn-in t = {burn_in}")
        ax.set_xlabel("iteration t")
        ax.set_ylabel("upper bound on TV(pi_t, pi)")
        ax.set_title(title, fontsize=9)
        ax.legend(fontsize=7)
        ax.grid(True, alpha=0.3)
        fig.tight_layout()
        fig.savefig(out, dpi=120)
    finally:
        plt.close(fig)
    return out
