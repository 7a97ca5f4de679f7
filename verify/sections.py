"""Report sections shared by several kinds, each with its text and Markdown rendering.

:class:`MechanismSection` is the base of the ``mechanism`` object of every kind that
builds and draws from a mechanism (which one, optimal or a labelled fallback, its
calibration, the expected error and the samples file; one dataclass per shape in
:mod:`verify.mechanism_section`); :class:`TestSection` the
``test`` object of a private hypothesis test. The typed sections below are frozen
dataclasses whose fields are the contract's JSON keys (``specs/README.md``), written
by the one walk of :mod:`verify.json_walk`: ``samples`` (:class:`SamplesSection`),
``expected_l2_error`` (:class:`ExactErrorSection`, :class:`KNormErrorSection`,
:class:`LatticeErrorSection`), ``plain_dp`` (:class:`PlainDpSection`), ``guarantees``
(:class:`LatticeGuaranteesSection`) and ``mcmc`` (:class:`McmcSection`). Those have no
block of their own in the text and Markdown reports (the mechanism's block shows the
samples and the error).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from semidp.verify.display import fmt_up
from semidp.verify.json_walk import INTERNAL, OMIT_NONE, Walked
from semidp.verify.report import GuaranteeSummary, Report


class Unrendered:
    """A section shown only in the JSON report (no text or Markdown block of its own)."""

    __slots__ = ()

    def text_lines(self, report: Report) -> list[str]:
        """Not shown in the terminal report."""
        return []

    def markdown_lines(self, report: Report) -> list[str]:
        """Not shown in the Markdown report."""
        return []


@dataclass(frozen=True)
class SamplesSection(Unrendered, Walked):
    """The ``samples`` object: the draws written to ``<name>.samples.npy`` by ``--out`` (count, seed, layout)."""

    count: int
    seed: int
    shape: tuple[int, int]
    """``(count, cells)``."""
    dtype: str
    order: str
    key: str = field(default="samples", metadata=INTERNAL)


@dataclass(frozen=True)
class MonteCarloMean(Walked):
    """The draws' mean of ``quantity`` (e.g. ``E||noise||_2``) with its standard error and ``level`` interval."""

    quantity: str
    mean: float
    std_error: float
    level: float
    interval: tuple[float, float]
    draws: int

    def text(self) -> str:
        """``draws: mean 1.23 over 1000``."""
        return f"draws: mean {self.mean:.6g} over {self.draws}"


@dataclass(frozen=True)
class ExactErrorSection(Unrendered, Walked):
    """``expected_l2_error`` of a mechanism with a closed-form expected error, checked against the draws."""

    monte_carlo: MonteCarloMean
    exact: float
    quantity: str
    formula: str
    k: int | None = field(default=None, metadata=OMIT_NONE)
    """The noise dimension, for a Gaussian's chi_k formula."""
    e_chi_k: float | None = field(default=None, metadata=OMIT_NONE)
    """``E chi_k`` (the Gaussian's expected l2 norm divided by sigma)."""
    key: str = field(default="expected_l2_error", metadata=INTERNAL)

    def summary(self) -> str:
        """``quantity: exact (exact); draws: mean ... over n``."""
        return f"{self.quantity}: {self.exact:.6g} (exact); {self.monte_carlo.text()}"


@dataclass(frozen=True)
class ReferenceEstimate(Walked):
    """An independent Monte Carlo estimate of the expected error (its own stream), with its interval."""

    estimate: float
    interval: tuple[float, float]
    draws: int
    formula: str


@dataclass(frozen=True)
class KNormErrorSection(Unrendered, Walked):
    """``expected_l2_error`` of the K-norm mechanism: the draws' mean against an independent reference estimate."""

    monte_carlo: MonteCarloMean
    reference: ReferenceEstimate
    epsilon_times_mean: float
    note: str | None = field(default=None, metadata=OMIT_NONE)
    key: str = field(default="expected_l2_error", metadata=INTERNAL)

    def summary(self) -> str:
        """``E||noise||_2: draws: mean ... over n``."""
        return f"E||noise||_2: {self.monte_carlo.text()}"


@dataclass(frozen=True)
class Heuristic(Walked):
    """A sanity figure of the expected error (not a check): its ``value`` and the ``formula`` it comes from."""

    value: float
    formula: str


@dataclass(frozen=True)
class LatticeErrorSection(Unrendered, Walked):
    """``expected_l2_error`` of a lattice mechanism: the draws' mean (two draws or more) and a heuristic figure."""

    quantity: str
    monte_carlo: MonteCarloMean | None = field(default=None, metadata=OMIT_NONE)
    heuristic: Heuristic | None = field(default=None, metadata=OMIT_NONE)
    key: str = field(default="expected_l2_error", metadata=INTERNAL)

    def summary(self) -> str:
        """``quantity: draws: mean ... over n`` (the quantity alone below two draws)."""
        return f"{self.quantity}: " + (self.monte_carlo.text() if self.monte_carlo is not None else "")


ErrorSection = ExactErrorSection | KNormErrorSection | LatticeErrorSection


@dataclass(frozen=True)
class PlainDpSection(Unrendered):
    """``plain_dp``: the joint release's plain DP guarantee beside a published release's Semi-DP one."""

    guarantee: GuaranteeSummary
    key: str = "plain_dp"

    def to_json(self) -> Any:
        """The guarantee object itself (the contract's ``plain_dp`` value)."""
        return self.guarantee.to_json()


@dataclass(frozen=True)
class LatticeGuaranteesSection(Unrendered, Walked):
    """``guarantees`` of a lattice mechanism: integer-subspace DP of the noise and the Semi-DP of the release."""

    integer_subspace_dp: GuaranteeSummary
    semi_dp: GuaranteeSummary
    key: str = field(default="guarantees", metadata=INTERNAL)


@dataclass(frozen=True)
class McmcSection(Unrendered, Walked):
    """``mcmc``: the L-lag coupling's total-variation curve, estimate and upper bound, by step ``t``."""

    tv_curve: tuple[tuple[float, float], ...]
    tv_upper_curve: tuple[tuple[float, float], ...]
    key: str = field(default="mcmc", metadata=INTERNAL)


class MechanismSection(Walked):
    """Base of the ``mechanism`` object: one frozen dataclass per JSON shape (:mod:`verify.mechanism_section`).

    The shapes' fields are the contract's keys in the order each kind writes them, so they share no dataclass
    fields here; the text and Markdown blocks read the attributes every shape has (``kind``, ``label``,
    ``noise_dimension``) and the hooks below, which a shape overrides where it has the key.
    """

    __slots__ = ()

    key: str
    """``mechanism`` (an internal field of each shape)."""
    kind: str
    label: str
    noise_dimension: int
    """Dimension of the subspace the noise lives in (cells minus the rank the invariant pins)."""

    def calibration_text(self) -> str:
        """The ``calibration`` key ('' for a shape without one)."""
        return ""

    def target_text(self) -> str:
        """The calibration target as the terminal block states it (the calibration, by default)."""
        return self.calibration_text()

    def l2_sensitivity_shown(self) -> float | None:
        """``l2_sensitivity`` (Delta_2, histogram units) of a Gaussian shape, else ``None``."""
        return None

    def optimality(self) -> bool | None:
        """The ``optimal`` key: ``True`` optimal, ``False`` a labelled fallback, ``None`` no optimality claim."""
        return None

    def _error_text(self, report: Report) -> str:
        err = report.section("expected_l2_error")
        return err.summary() if isinstance(err, ErrorSection) else "E||noise||_2: "

    def text_lines(self, report: Report) -> list[str]:
        """The terminal block: the mechanism, its error, the samples file."""
        l2 = self.l2_sensitivity_shown()
        delta2 = f", Delta_2 = {fmt_up(l2)}" if l2 is not None else ""
        lines = [
            "",
            f"mechanism: {self.label}, {self.target_text()}, noise in a {self.noise_dimension}-dimensional "
            f"subspace{delta2}",
            f"    {self._error_text(report)}",
        ]
        smp = report.section("samples")
        if report.samples_file and isinstance(smp, SamplesSection):
            lines.append(f"    samples: {report.samples_file} ({smp.count} x {smp.shape[1]}, seed {smp.seed})")
        return lines

    def markdown_lines(self, report: Report) -> list[str]:
        """The Markdown ``## Mechanism`` section."""
        optimal = self.optimality()
        status = "optimal" if optimal else "NON-OPTIMAL fallback" if optimal is False else "not an optimality claim"
        lines = [
            "## Mechanism",
            "",
            f"- kind: `{self.kind}` ({status})",
            f"- {self.label}",
            f"- noise dimension: {self.noise_dimension}",
        ]
        if self.calibration_text():
            lines.append(f"- calibration: {self.calibration_text()}")
        lines.append(f"- {self._error_text(report)}")
        if report.samples_file:
            lines.append(f"- samples: `{report.samples_file}`")
        return [*lines, ""]


@dataclass(frozen=True)
class MarginTotals(Walked):
    """The 2x2 table's row and column totals (the invariant of the UMPU test)."""

    rows: tuple[int, ...]
    cols: tuple[int, ...]


@dataclass(frozen=True)
class PowerAt(Walked):
    """The exact power of three tests at one odds ratio ``theta``."""

    theta: float
    fisher: float
    semi_dp: float
    naive: float


@dataclass(frozen=True)
class PowerComparison(Walked):
    """``test.power``: the Semi-DP UMPU test against Fisher's and a naive DP test, at a few odds ratios."""

    note: str
    naive_noise: str
    at: tuple[PowerAt, ...]


@dataclass(frozen=True)
class TestSection(Walked):
    """The contract's ``test`` object of a private hypothesis test (statistic, p-value, reject, m, size)."""

    __test__ = False  # not a pytest test class

    statistic: float
    pvalue: float
    reject: bool
    m: float
    m_lower: float | None
    size: float
    alpha: float
    theta0: float
    alternative: str
    margins: MarginTotals
    released: bool
    """Whether the statistic was given (released) rather than drawn."""
    guarantee: GuaranteeSummary
    power: PowerComparison | None = field(default=None, metadata=OMIT_NONE)
    key: str = field(default="test", metadata=INTERNAL)

    def text_lines(self, report: Report) -> list[str]:
        """The terminal block: hypotheses, margins, Z, p-value, threshold and exact size."""
        return [
            "",
            f"Semi-DP UMPU odds-ratio test (H0: theta <= {self.theta0:g}, {self.alternative}), "
            f"margins rows {list(self.margins.rows)} cols {list(self.margins.cols)}",
            f"    Z = {self.statistic:.6g}{' (given)' if self.released else ''}, p-value = {self.pvalue:.6g}, "
            f"threshold m = {self.m:.6g}, reject at alpha = {self.alpha:g}: {self.reject}, "
            f"exact size = {self.size:.12g}",
        ]

    def markdown_lines(self, report: Report) -> list[str]:
        """The Markdown ``## Private test`` section."""
        return [
            "## Private test",
            "",
            f"- Z = {self.statistic:.6g}, p-value = {self.pvalue:.6g}, threshold m = {self.m:.6g}, "
            f"reject at alpha = {self.alpha:g}: **{self.reject}**, exact size = {self.size:.12g}",
            "",
        ]


__all__ = [
    "ErrorSection",
    "ExactErrorSection",
    "Heuristic",
    "KNormErrorSection",
    "LatticeErrorSection",
    "LatticeGuaranteesSection",
    "McmcSection",
    "MechanismSection",
    "MonteCarloMean",
    "PowerAt",
    "PowerComparison",
    "PlainDpSection",
    "ReferenceEstimate",
    "SamplesSection",
    "MarginTotals",
    "TestSection",
    "Unrendered",
]
