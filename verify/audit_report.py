"""The ``audit_lower_bound`` report section of a black-box audit, and its plot (``<name>.audit.png``).

The section puts the empirical lower bound (tradeoff points and the epsilon they force, at confidence ``c``)
beside the certified upper bound (the claim's epsilon at each reported delta) and the gap
(:mod:`verify.kinds.implementation`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from semidp.accountant.tradeoff import TradeoffCurve
from semidp.verify.context import Plot
from semidp.verify.plots import save_figure
from semidp.verify.report import Report
from semidp.verify.threshold_audit import Measured


def _fmt(x: object) -> str:
    return "n/a" if x is None else f"{x:.4g}" if isinstance(x, float) else str(x)


@dataclass(frozen=True)
class AuditSection:
    """The ``audit_lower_bound`` object (fields in the module docstring of :mod:`verify.kinds.implementation`)."""

    data: dict[str, Any]
    key: str = "audit_lower_bound"

    def to_json(self) -> dict[str, Any]:
        """The JSON object (contract extension)."""
        return self.data

    def _rows(self) -> list[tuple[str, str, str, str]]:
        return [
            (_fmt(r["delta"]), _fmt(r["epsilon_lower"]), _fmt(r["epsilon_upper"]), _fmt(r["gap"]))
            for r in self.data["epsilon_delta"]
        ]

    def text_lines(self, report: Report) -> list[str]:
        """The terminal block: draws, pairs, the measured points, and lower vs upper epsilon."""
        d = self.data
        dr = d["draws"]
        rate = f", {dr['per_second']:.3g} draws/s" if dr.get("per_second") else ""
        lines = [
            "",
            f"statistical audit of {d['callable'] or 'pre-recorded releases'}: {len(d['pairs'])} pairs, "
            f"{dr['per_side']} draws per side ({dr['total']} in all, {dr['seconds']:.2f} s{rate}), "
            f"{d['tests']} tests at joint confidence {d['confidence']:g}",
        ]
        for i, p in enumerate(d["pairs"]):
            lines.append(f"    pair {i}: {p['origin']}, distance {p['distance']}, |x - x'|_2^2 = {p['l2_squared']}")
        for t in d["tradeoff_points"]:
            mark = "BELOW the claim" if t["below_claim"] else "above the claim"
            lines.append(
                f"    test (pair {t['pair']}, {t['statistic']}): alpha <= {t['alpha']:.4g}, beta <= {t['beta']:.4g}; "
                f"claim needs beta >= {t['claimed_beta']:.4g}: {mark}"
            )
        lines.append("    delta        epsilon lower (empirical)   epsilon upper (claim)   gap")
        for delta, lo, up, gap in self._rows():
            lines.append(f"    {delta:<12} {lo:<27} {up:<23} {gap}")
        return lines

    def markdown_lines(self, report: Report) -> list[str]:
        """The Markdown ``## Statistical audit`` section."""
        d = self.data
        lines = [
            "## Statistical audit",
            "",
            f"- callable: `{d['callable']}`; confidence {d['confidence']:g}; {d['tests']} tests; "
            f"{d['draws']['per_side']} draws per side; refuted: {d['refuted']}",
            "",
            "| delta | epsilon lower (empirical) | epsilon upper (claim) | gap |",
            "|---|---|---|---|",
        ]
        lines += [f"| {a} | {b} | {c} | {g} |" for a, b, c, g in self._rows()]
        return lines + [""]


def audit_plot(curve: TradeoffCurve, points: Sequence[Measured], confidence: float) -> Plot:
    """The claimed tradeoff curve with the measured points (each an upper bound on the true curve there)."""

    def draw(path: Path, title: str) -> Path:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(6, 5))
        alpha = np.linspace(0.0, 1.0, 501)
        ax.plot(alpha, 1 - alpha, color="0.7", ls=":", label="perfect privacy")
        ax.plot(alpha, curve.std(alpha), color="black", lw=1.6, label="claimed tradeoff (certified upper bound)")
        for p in points:
            ax.plot(
                [p.alpha_upper],
                [p.beta_upper],
                marker="v" if p.refutes else "o",
                color="tab:red" if p.refutes else "tab:blue",
                ls="none",
                label=f"pair {p.candidate.pair}, {p.candidate.statistic} ({'below' if p.refutes else 'above'})",
            )
        ax.set_xlabel("type I error alpha")
        ax.set_ylabel("type II error beta")
        ax.set_title(f"empirical points at confidence {confidence:g} vs the claim", fontsize=9)
        ax.legend(fontsize=7)
        return save_figure(fig, path, title, fontsize=9)

    return Plot("audit", "empirical lower bound vs claimed curve", draw)


__all__ = ["AuditSection", "audit_plot"]
