"""The ``postprocess`` plot: per-cell bias against the true count, with intervals and the Thm. 4 bound [ZVF21]."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from semidp.verify.plots import save_figure


def plot_postprocess_bias(data: dict[str, Any], counts: list[float], path: Path, title: str) -> Path:
    """Write a PNG: bias of the chosen program and of (P) per cell (95% intervals) against the true count.

    ``data`` is the report's ``postprocess`` object. The x axis is logarithmic when the counts span more
    than two decades (county sizes); dashed lines mark +-``bias_bound`` when it is below 10x the largest
    interval end (a bound far above the data would flatten the plot; its value is in the legend).
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    x = np.asarray(counts, dtype=np.float64)
    main = "P+" if data["kind"] == "project-nonneg" else "P"
    fig, ax = plt.subplots(figsize=(8, 4.8))
    series = [("P", data["projection_bias"], data["projection_bias_ci"], "C0", "s")]
    if main == "P+":  # drawn last, as open circles: where (P+) = (P) both stay visible
        series.append(("P+", data["bias"], data["bias_ci"], "C3", "o"))
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
    bound = data.get("bias_bound")
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
    noise = data["noise"]
    scale = f"sigma = {noise['sigma']:g}" if "sigma" in noise else f"scale = {noise['scale']}"
    ax.set_title(f"{title}\n{noise['law']} noise, {scale}, {data['draws_done']} draws, by {data['method']}", fontsize=9)
    ax.legend(fontsize=8)
    return save_figure(fig, path)


__all__ = ["plot_postprocess_bias"]
