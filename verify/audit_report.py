"""The ``audit_lower_bound`` report section of a black-box audit, and its plot (``<name>.audit.png``).

The section puts the empirical lower bound (tradeoff points and the epsilon they force, at confidence ``c``)
beside the certified upper bound (the claim's epsilon at each reported delta) and the gap
(:mod:`verify.kinds.implementation`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from semidp.accountant.profiles.tradeoff import TradeoffCurve
from semidp.verify.audit_evidence import Evidence
from semidp.verify.audit_pairs import AuditPair
from semidp.verify.context import Plot
from semidp.verify.json_walk import INTERNAL, Walked
from semidp.verify.plots import save_figure
from semidp.verify.report import Report
from semidp.verify.threshold_audit import Candidate, Measured


def _fmt(x: object) -> str:
    return "n/a" if x is None else f"{x:.4g}" if isinstance(x, float) else str(x)


@dataclass(frozen=True)
class AuditRound(Walked):
    """A ``rounds[]`` entry: one look of the sequential audit (draws per side, its share of the error, seconds)."""

    round: int
    """1-based."""
    planned_per_side: int
    draws_per_side: int
    """Fewest draws on any side of the pairs still drawn (the budget may stop short of the plan)."""
    alpha: float
    """Error this round spends (linear alpha-spending, ``spending.rule``)."""
    per_bound_level: float | None
    """Confidence of each one-sided bound of the look; ``None``: the look was not made in time."""
    refuted: bool
    measured: bool
    seconds: float
    """Wall time since the audit started (s)."""


@dataclass(frozen=True)
class AuditSpending(Walked):
    """The ``spending`` object: how the error ``1 - confidence`` is spent over the looks [LD83]."""

    rule: str
    first_round: int
    growth: int
    planned_per_side: tuple[int, ...]
    alphas: tuple[float, ...]


@dataclass(frozen=True)
class TradeoffPoint(Walked):
    """A ``tradeoff_points[]`` entry: a measured threshold test (:class:`~verify.threshold_audit.Measured`)."""

    pair: int
    statistic: str
    threshold: float
    alpha: float
    """Upper confidence bound on the type I error."""
    beta: float
    """Upper confidence bound on the type II error."""
    alpha_hat: float
    beta_hat: float
    claimed_beta: float
    """``f_lo(alpha)``: the least type II error the claim allows there."""
    below_claim: bool
    draws_per_side: int
    """Measurement draws per side."""

    @classmethod
    def of(cls, p: Measured) -> TradeoffPoint:
        """The entry of a measured test."""
        c = p.candidate
        return cls(
            c.pair, c.statistic, c.threshold, p.alpha_upper, p.beta_upper, p.alpha_hat, p.beta_hat,
            p.claimed_beta, p.refutes, p.draws,
        )  # fmt: skip


@dataclass(frozen=True)
class EpsilonDeltaRow(Walked):
    """An ``epsilon_delta[]`` row: empirical lower vs certified upper epsilon at one delta."""

    delta: float
    epsilon_lower: float
    epsilon_upper: float | None
    """``None``: the claim gives no finite epsilon at this delta."""
    gap: float | None
    upper_source: str


@dataclass(frozen=True)
class AuditDraws(Walked):
    """The ``draws`` object: planned and made draws, wall times (s) and the draw rate (draws/s)."""

    per_side: int
    drawn_per_side: int
    selection_share: float
    total: int
    seconds: float
    draw_seconds: float
    per_second: float | None


@dataclass(frozen=True)
class AuditPairRow(Walked):
    """A ``pairs[]`` entry: the audited pair (:class:`~verify.audit_pairs.AuditPair`), its draws and why they stopped."""

    x: tuple[int, ...]
    x_prime: tuple[int, ...]
    difference: tuple[int, ...]
    l2_squared: int
    origin: str
    distance: int
    draws: tuple[int, int]
    """Releases drawn (or recorded) at ``x`` and at ``x'``."""
    stop: str

    @classmethod
    def of(cls, ap: AuditPair, draws: tuple[int, int], stop: str) -> AuditPairRow:
        """The entry of a pair."""
        diff = tuple(a - b for a, b in zip(ap.x, ap.x_prime))
        return cls(tuple(ap.x), tuple(ap.x_prime), diff, sum(d * d for d in diff), ap.origin, ap.distance, draws, stop)


@dataclass(frozen=True)
class AuditCandidate(Walked):
    """A ``candidates[]`` entry: a test chosen on the selection half (:class:`~verify.threshold_audit.Candidate`)."""

    pair: int
    statistic: str
    threshold: float
    predicted_gap: float

    @classmethod
    def of(cls, c: Candidate) -> AuditCandidate:
        """The entry of a candidate."""
        return cls(c.pair, c.statistic, c.threshold, c.predicted_gap)


@dataclass(frozen=True)
class AuditSection(Walked):
    """The ``audit_lower_bound`` object (fields in the module docstring of :mod:`verify.kinds.implementation`)."""

    method: str
    callable: str | None
    """The audited function (``None``: pre-recorded releases only)."""
    refuted: bool
    stop: str
    """Why the draws stopped (:data:`verify.kinds.implementation.STOPS`)."""
    confidence: float
    tests: int
    per_bound_level: float
    rounds: tuple[AuditRound, ...]
    spending: AuditSpending
    tradeoff_points: tuple[TradeoffPoint, ...]
    epsilon_delta: tuple[EpsilonDeltaRow, ...]
    draws: AuditDraws
    pairs: tuple[AuditPairRow, ...]
    candidates: tuple[AuditCandidate, ...]
    evidence: Evidence | None
    reproducible: bool | None
    reproducibility: str
    claimed_curve: str
    note: str
    key: str = field(default="audit_lower_bound", kw_only=True, metadata=INTERNAL)

    def _rows(self) -> list[tuple[str, str, str, str]]:
        return [(_fmt(r.delta), _fmt(r.epsilon_lower), _fmt(r.epsilon_upper), _fmt(r.gap)) for r in self.epsilon_delta]

    def text_lines(self, report: Report) -> list[str]:
        """The terminal block: draws, pairs, the measured points, and lower vs upper epsilon."""
        dr = self.draws
        rate = f", {dr.per_second:.3g} draws/s" if dr.per_second else ""
        lines = [
            "",
            f"statistical audit of {self.callable or 'pre-recorded releases'}: {len(self.pairs)} pairs, "
            f"{dr.per_side} draws per side planned ({dr.total} drawn in all, {dr.seconds:.2f} s{rate}), "
            f"{self.tests} tests at joint confidence {self.confidence:g}",
        ]
        if self.rounds:
            last = self.rounds[-1]
            lines.append(
                f"    {len(self.rounds)} round(s), stopped: {self.stop} at {last.draws_per_side} draws per side "
                f"of {dr.per_side} planned (error spent per round: {self.spending.rule.split(':')[0]})"
            )
        for i, p in enumerate(self.pairs):
            lines.append(f"    pair {i}: {p.origin}, distance {p.distance}, |x - x'|_2^2 = {p.l2_squared}")
        for t in self.tradeoff_points:
            mark = "BELOW the claim" if t.below_claim else "above the claim"
            lines.append(
                f"    test (pair {t.pair}, {t.statistic}): alpha <= {t.alpha:.4g}, beta <= {t.beta:.4g}; "
                f"claim needs beta >= {t.claimed_beta:.4g}: {mark}"
            )
        lines.append("    delta        epsilon lower (empirical)   epsilon upper (claim)   gap")
        for delta, lo, up, gap in self._rows():
            lines.append(f"    {delta:<12} {lo:<27} {up:<23} {gap}")
        return lines

    def markdown_lines(self, report: Report) -> list[str]:
        """The Markdown ``## Statistical audit`` section."""
        lines = [
            "## Statistical audit",
            "",
            f"- callable: `{self.callable}`; confidence {self.confidence:g}; {self.tests} tests; "
            f"{self.draws.per_side} draws per side planned, {self.draws.drawn_per_side} drawn; "
            f"stopped: {self.stop}; refuted: {self.refuted}",
            "",
            "| delta | epsilon lower (empirical) | epsilon upper (claim) | gap |",
            "|---|---|---|---|",
        ]
        lines += [f"| {a} | {b} | {c} | {g} |" for a, b, c, g in self._rows()]
        return lines + [""]


#: Floor of the log axes of the audit plot (a proportion 0 is drawn there).
PLOT_FLOOR = 1e-9


def audit_plot(
    curve: TradeoffCurve, points: Sequence[Measured], confidence: float, history: Sequence[Sequence[Measured]] = ()
) -> Plot:
    """The claimed tradeoff curve with the measured tests, on log axes, with their confidence boxes and rounds.

    Two panels, so that both tails show: ``alpha`` against ``1 - beta`` (tests that rarely reject ``x``) and
    ``1 - alpha`` against ``beta`` (tests that rarely accept ``x'``, such as a tail test at alpha = 0.997,
    beta = 3e-4), both log-log. Each test of the last look is a box from its estimate ``(alpha_hat,
    beta_hat)`` to its upper bounds ``(alpha_U, beta_U)``, marked at the bound corner (the point on or above
    the mechanism's curve at the stated confidence; a triangle when it lies below the claim); the tests of
    earlier looks (``history``, one list per round) are small grey dots.
    """

    def draw(path: Path, title: str) -> Path:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        from matplotlib.patches import Rectangle

        fig, axes = plt.subplots(1, 2, figsize=(11, 5))
        grid = np.unique(np.concatenate([np.logspace(-12, 0, 300), 1 - np.logspace(-12, -0.3, 300)]))
        grid = grid[(grid >= 0) & (grid <= 1)]
        f = curve.std(grid)
        lo = PLOT_FLOOR

        def tx(a: float | np.ndarray, b: float | np.ndarray, panel: int) -> tuple[object, object]:
            if panel == 0:
                return np.maximum(a, lo), np.maximum(1 - np.asarray(b), lo)
            return np.maximum(1 - np.asarray(a), lo), np.maximum(b, lo)

        for panel, ax in enumerate(axes):
            ax.loglog(*tx(grid, 1 - grid, panel), color="0.7", ls=":", label="perfect privacy")
            ax.loglog(*tx(grid, f, panel), color="black", lw=1.6, label="claimed tradeoff (lower bound f)")
            for k, look in enumerate(history[:-1] if history else ()):
                for p in look:
                    ax.plot(*tx(p.alpha_upper, p.beta_upper, panel), marker=".", color="0.55", ls="none", ms=5,
                            label=f"earlier rounds ({len(history) - 1})" if k == 0 and p is look[0] else None)  # fmt: skip
            for p in points:
                color = "tab:red" if p.refutes else "tab:blue"
                (x0, y0), (x1, y1) = tx(p.alpha_hat, p.beta_hat, panel), tx(p.alpha_upper, p.beta_upper, panel)
                x_lo, x_hi = sorted((float(x0), float(x1)))  # type: ignore[arg-type]
                y_lo, y_hi = sorted((float(y0), float(y1)))  # type: ignore[arg-type]
                ax.add_patch(Rectangle((x_lo, y_lo), x_hi - x_lo, y_hi - y_lo, fill=False, ec=color, lw=0.8))
                ax.plot([x1], [y1], marker="v" if p.refutes else "o", color=color, ls="none",
                        label=f"pair {p.candidate.pair}, {p.candidate.statistic} "
                        f"({'below' if p.refutes else 'above'} the claim)")  # fmt: skip
            ax.set_xlim(lo, 1.5)
            ax.set_ylim(lo, 1.5)
        axes[0].set_xlabel("type I error alpha (log)")
        axes[0].set_ylabel("1 - type II error, 1 - beta (log)")
        axes[0].set_title("tests that rarely reject x (refuting: above the curve)", fontsize=9)
        axes[1].set_xlabel("1 - type I error, 1 - alpha (log)")
        axes[1].set_ylabel("type II error beta (log)")
        axes[1].set_title("tests that rarely accept x' (refuting: below the curve)", fontsize=9)
        axes[1].legend(fontsize=7, loc="lower right")
        rounds = f"; {len(history)} rounds" if history else ""
        fig.text(
            0.5, 0.01, f"boxes: estimate to upper bound, jointly at confidence {confidence:g}{rounds}",
            ha="center", fontsize=8,
        )  # fmt: skip
        return save_figure(fig, path, title, fontsize=9)

    return Plot("audit", "empirical lower bound vs claimed curve (log axes)", draw)


__all__ = [
    "PLOT_FLOOR",
    "AuditCandidate",
    "AuditDraws",
    "AuditPairRow",
    "AuditRound",
    "AuditSection",
    "AuditSpending",
    "EpsilonDeltaRow",
    "TradeoffPoint",
    "audit_plot",
]
