"""The workload plot: tradeoff curves and privacy profiles of zCDP guarantees and PLD compositions (PNG)."""

from __future__ import annotations

from pathlib import Path
from typing import Union

import numpy as np
from numpy.typing import NDArray

from semidp.accountant.conversion_routes import AnyGuarantee, delta_at, to_tradeoff
from semidp.accountant.pld_engine import PLDBracket
from semidp.accountant.workload import SetAsideBracket, WorkloadBracket
from semidp.verify.plots import STYLES, label_privacy_axes, save_figure

Curve = Union[AnyGuarantee, WorkloadBracket, None]


def _pld_profile(b: WorkloadBracket, eps: NDArray[np.float64]) -> NDArray[np.float64]:
    """Upper bounds of delta(eps) from the certified bracket."""
    return np.array([b.delta(float(e)).upper for e in eps], dtype=np.float64)


def _pld_tradeoff(
    eps: NDArray[np.float64], delta: NDArray[np.float64], alpha: NDArray[np.float64]
) -> NDArray[np.float64]:
    """A tradeoff lower bound from upper bounds of the profile: ``max_eps (1 - delta(eps) - e^eps alpha)_+``
    [DRS22, Prop. 2.12] (any subset of epsilons gives a valid lower bound)."""
    vals = 1.0 - delta[None, :] - np.exp(eps)[None, :] * alpha[:, None]
    return np.asarray(np.maximum(vals.max(axis=1), 0.0), dtype=np.float64)


def draw_workload_plot(path: Path, title: str, curves: list[tuple[str, Curve]]) -> Path:
    """Write a two-panel PNG: tradeoff lower bounds and delta(epsilon) upper bounds of each curve."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4.5))
    alpha = np.concatenate([np.logspace(-14, -1, 300), np.linspace(0.1, 1.0, 100)[1:]])
    ax1.semilogx(alpha, 1 - alpha, color="0.7", ls=":", label="perfect privacy")
    eps_max = 1.0
    for _, g in curves:
        if isinstance(g, (PLDBracket, SetAsideBracket)):
            eps_max = max(eps_max, g.epsilon(1e-12).upper)
    eps = np.linspace(0.0, min(eps_max * 1.4, 200.0), 80)
    for i, (label, g) in enumerate(curves):
        ls, lw = STYLES[i % len(STYLES)]
        if g is None:
            continue
        if isinstance(g, (PLDBracket, SetAsideBracket)):
            d = _pld_profile(g, eps)
            ax1.semilogx(alpha, _pld_tradeoff(eps, d, alpha), label=label, ls=ls, lw=lw)
        else:
            t = to_tradeoff(g)
            if t is None:
                continue
            ax1.semilogx(alpha, t.curve.std(alpha), label=label, ls=ls, lw=lw)
            d = np.array([delta_at(g, float(e)) or 1.0 for e in eps], dtype=np.float64)
        ax2.semilogy(eps, np.maximum(d, 1e-300), label=label, ls=ls, lw=lw)
    ax2.axhline(1e-10, color="0.6", lw=0.8, ls=":")
    label_privacy_axes(ax1, ax2)
    return save_figure(fig, path, title)


__all__ = ["draw_workload_plot"]
