"""Power-curve plot: Semi-DP UMPU vs Fisher vs naive group-privacy DP test (PNG).

The curves come from :func:`mechanisms.umpu_power.power_curves` (exact, no
simulation): the Semi-DP UMPU test [[CA24, Thm. 37]], the randomised
one-sided Fisher exact test (non-private UMPU conditional test, Lehmann & Romano)
and the naive DP test calibrated by group privacy [Dong, Roth & Su 2022, Thm. 2.14].
"""

from __future__ import annotations

from pathlib import Path

from semidp.mechanisms.cnd import CanonicalNoise, GaussianCND, Tulap
from semidp.mechanisms.umpu_power import PowerCurves


def _label(noise: CanonicalNoise) -> str:
    if isinstance(noise, Tulap):
        d = f", delta={noise.delta:.3g}" if noise.delta > 0 else ""
        return f"Tulap(eps={noise.epsilon:.3g}{d})"
    if isinstance(noise, GaussianCND):
        return f"Gaussian(mu={noise.mu:.3g})"
    return type(noise).__name__


def plot_power(curves: PowerCurves, path: Path | str, title: str) -> Path:
    """Write a PNG of the three exact power curves against the odds ratio (log-scale axis).

    Parameters
    ----------
    curves:
        Output of :func:`~mechanisms.umpu_power.power_curves`.
    path:
        Destination ``.png`` (parent directories are created).
    title:
        Figure title.

    Returns
    -------
    Path
        ``path``.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig, ax = plt.subplots(figsize=(6.4, 5.0))
    try:
        ax.plot(curves.thetas, curves.fisher, "k-", label="Fisher (non-private UMPU)")
        ax.plot(curves.thetas, curves.semi_dp, "C0-", label=f"Semi-DP UMPU, {_label(curves.noise)}")
        naive = f"naive DP (group privacy), {_label(curves.naive_noise)}"
        ax.plot(curves.thetas, curves.naive, "C3--", label=naive)
        ax.axhline(curves.alpha, color="0.5", lw=0.8, ls=":", label=f"alpha = {curves.alpha:g}")
        ax.axvline(curves.theta0, color="0.8", lw=0.8)
        ax.set_xscale("log")
        ax.set_ylim(0.0, 1.0)
        ax.set_xlabel("odds ratio theta")
        ax.set_ylabel("power (conditional on margins)")
        r, c = curves.margins.rows, curves.margins.cols
        ax.set_title(f"{title}\nrows {r}, cols {c}, theta0 = {curves.theta0:g}", fontsize=9)
        ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=2)
        ax.grid(True, which="both", alpha=0.3)
        fig.tight_layout()
        fig.savefig(out, dpi=120)
    finally:
        plt.close(fig)
    return out
