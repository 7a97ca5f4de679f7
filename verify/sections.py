"""Report sections shared by several kinds, each with its text and Markdown rendering.

:class:`MechanismSection` is the ``mechanism`` object of every kind that builds
and draws from a mechanism (which one, optimal or a labelled fallback, its
calibration, the expected error and the samples file); :class:`TestSection` the
``test`` object of a private hypothesis test.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from semidp.verify.display import fmt_up
from semidp.verify.report import Report


def _json_of(report: Report, key: str) -> dict[str, Any]:
    s = report.section(key)
    data = s.to_json() if s is not None else {}
    return data if isinstance(data, dict) else {}


@dataclass(frozen=True)
class MechanismSection:
    """The ``mechanism`` object: kind, label, calibration, noise dimension, optimality and the kind's details."""

    data: dict[str, Any]
    key: str = "mechanism"

    def to_json(self) -> dict[str, Any]:
        """The JSON object (contract extension; fields added, never renamed)."""
        return self.data

    def _error_text(self, report: Report) -> str:
        err = _json_of(report, "expected_l2_error")
        est, mc = err.get("exact"), err.get("monte_carlo", {})
        return (
            f"{err.get('quantity', 'E||noise||_2')}: "
            + (f"{est:.6g} (exact); " if est is not None else "")
            + (f"draws: mean {mc['mean']:.6g} over {mc['draws']}" if mc else "")
        )

    def text_lines(self, report: Report) -> list[str]:
        """The terminal block: the mechanism, its error, the samples file."""
        mech = self.data
        target = mech.get("calibration") or (f"epsilon = {mech['epsilon']:g}" if "epsilon" in mech else "")
        delta2 = f", Delta_2 = {fmt_up(mech['l2_sensitivity'])}" if "l2_sensitivity" in mech else ""
        lines = [
            "",
            f"mechanism: {mech['label']}, {target}, noise in a {mech['noise_dimension']}-dimensional subspace{delta2}",
            f"    {self._error_text(report)}",
        ]
        if report.samples_file:
            smp = _json_of(report, "samples")
            lines.append(f"    samples: {report.samples_file} ({smp['count']} x {smp['shape'][1]}, seed {smp['seed']})")
        return lines

    def markdown_lines(self, report: Report) -> list[str]:
        """The Markdown ``## Mechanism`` section."""
        mech = self.data
        optimal = mech.get("optimal")
        status = "optimal" if optimal else "NON-OPTIMAL fallback" if optimal is False else "not an optimality claim"
        lines = [
            "## Mechanism",
            "",
            f"- kind: `{mech['kind']}` ({status})",
            f"- {mech['label']}",
            f"- noise dimension: {mech['noise_dimension']}",
        ]
        if mech.get("calibration"):
            lines.append(f"- calibration: {mech['calibration']}")
        lines.append(f"- {self._error_text(report)}")
        if report.samples_file:
            lines.append(f"- samples: `{report.samples_file}`")
        return [*lines, ""]


@dataclass(frozen=True)
class TestSection:
    """The contract's ``test`` object of a private hypothesis test (statistic, p-value, reject, m, size)."""

    data: dict[str, Any]
    key: str = "test"

    def to_json(self) -> dict[str, Any]:
        """The JSON object."""
        return self.data

    def text_lines(self, report: Report) -> list[str]:
        """The terminal block: hypotheses, margins, Z, p-value, threshold and exact size."""
        t = self.data
        return [
            "",
            f"Semi-DP UMPU odds-ratio test (H0: theta <= {t['theta0']:g}, {t['alternative']}), "
            f"margins rows {t['margins']['rows']} cols {t['margins']['cols']}",
            f"    Z = {t['statistic']:.6g}{' (given)' if t['released'] else ''}, p-value = {t['pvalue']:.6g}, "
            f"threshold m = {t['m']:.6g}, reject at alpha = {t['alpha']:g}: {t['reject']}, "
            f"exact size = {t['size']:.12g}",
        ]

    def markdown_lines(self, report: Report) -> list[str]:
        """The Markdown ``## Private test`` section."""
        t = self.data
        return [
            "## Private test",
            "",
            f"- Z = {t['statistic']:.6g}, p-value = {t['pvalue']:.6g}, threshold m = {t['m']:.6g}, "
            f"reject at alpha = {t['alpha']:g}: **{t['reject']}**, exact size = {t['size']:.12g}",
            "",
        ]


__all__ = ["MechanismSection", "TestSection"]
