"""The ``postprocess`` plot: per-cell bias against the true count, with intervals and the Thm. 4 bound [ZVF21]."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from semidp.verify.plots import save_figure

if TYPE_CHECKING:  # the section module imports the study; the plot needs only its type
    from semidp.verify.postprocess_section import PostprocessSection


def plot_postprocess_bias(section: PostprocessSection, path: Path, title: str) -> Path:
    """Write a PNG: bias of the chosen program and of (P) per cell (95% intervals) against the true count.

    ``section`` is the report's ``postprocess`` object with the true counts. The x axis is logarithmic when the counts span more
    than two decades (county sizes); dashed lines mark +-``bias_bound`` when it is below 10x the largest
    interval end (a bound far above the data would flatten the plot; its value is in the legend).
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    x = np.asarray(section.counts, dtype=np.float64)
    main = section.main
    fig, ax = plt.subplots(figsize=(8, 4.8))
    series = [("P", section.projection_bias, section.projection_bias_ci, "C0", "s")]
    if main == "P+":  # drawn last, as open circles: where (P+) = (P) both stay visible
        series.append(("P+", section.bias, section.bias_ci, "C3", "o"))
    top = 0.0
    for label, bias, ci, color, marker in series:
        b = np.asarray(bias, dtype=np.float64)
        c = np.asarray(ci, dtype=np.float64)
        top = max(top, float(np.max(np.abs(c))))
        ax.errorbar(
            x,
            b,
            yerr=np.abs(c - b[:, None]).T,
            fmt=marker,
            ms=3.5 if label == "P" else 6.0,
            mfc=color if label == "P" else "none",
            color=color,
            ecolor=color,
            elinewidth=1,
            capsize=2,
            alpha=0.85,
            label=f"({label}) bias, 95% interval",
        )
    ax.axhline(0.0, color="0.5", lw=0.8)
    bound = section.bias_bound
    if bound is not None:
        if bound <= 10 * max(top, 1e-12):
            ax.axhline(bound, color="k", ls="--", lw=1, label=f"Thm. 4 bound +-{bound:.4g}")
            ax.axhline(-bound, color="k", ls="--", lw=1)
        else:
            ax.plot([], [], " ", label=f"Thm. 4 bound +-{bound:.4g} (off scale)")
    if x.min() > 0 and x.max() / x.min() > 100:
        ax.set_xscale("log")
    ax.set_xlabel("true count x_i")
    ax.set_ylabel("bias E[x_hat_i - x_i]")
    noise = section.noise
    ax.set_title(
        f"{title}\n{noise.law} noise, {noise.scale_text()}, {section.draws_done} draws, by {section.method}", fontsize=9
    )
    ax.legend(fontsize=8)
    return save_figure(fig, path)


__all__ = ["plot_postprocess_bias"]
