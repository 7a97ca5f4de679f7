r"""The report's ``postprocess`` object, its checks and its text/Markdown rendering ([ZVF21]; study in
:mod:`verify.postprocess_audit`).

Fields (contract extension, added in step 10): ``kind``, ``program``, ``method``, ``noise``,
``draws`` (requested), ``draws_done``, ``stopped_early``, ``seconds``, ``seed``, ``rng``,
``level``, per cell ``bias``, ``bias_ci`` (pairs), ``variance``, ``variance_theory`` (of (P),
where the closed form applies -- always for i.i.d. noise; [ZVF21, Thm. 5] for one total),
``bias_bound`` (the Thm. 4 bound on :math:`\|\mathrm{bias}\|_\infty`, ``null`` without a Lemma 2
form) with ``bias_bound_detail``, ``ball_probability`` (Lemma 2 at :math:`r=r_m`, and its Monte
Carlo estimate), ``converged`` / ``not_converged`` / ``max_kkt_residual`` (ADMM only,
``null`` on the exact paths), and ``comparison``: one row per program (``none`` = the noisy
release, ``P`` = the unbiased projection, GGY's projected mechanism [GGY22, Cor. 3.2/11],
``P+``) with the largest bias, the mean per-cell variance and :math:`\mathbb E\|\text{error}\|_2`.

Checks (family-wise level :data:`~verify.postprocess_audit.CHECK_LEVEL`, Bonferroni over cells):
``postprocess-unbiased-projection`` (every cell's (P) interval contains 0, Thm. 3),
``postprocess-variance`` ((P) variance intervals contain the closed form), ``postprocess-bias-bound``
(no (P+) interval lies beyond the Thm. 4 bound), ``postprocess-ball-probability`` (Lemma 2
inside the exact binomial interval of the draws), ``postprocess-converged`` (ADMM) and
``postprocess-draws`` (unknown when the budget stopped the draws early).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from statistics import NormalDist
from typing import Any, Literal

import numpy as np
from scipy.stats import binomtest

from semidp.accountant.core.outcome import NotApplicable, Outcome, Refuted, Unknown, Verified
from semidp.mechanisms.postprocess_noise import NoiseLaw
from semidp.verify.json_walk import INTERNAL, Walked
from semidp.verify.postprocess_audit import (
    CHECK_LEVEL,
    MAX_DRAW_CELLS,
    REPORT_LEVEL,
    NoiseDescription,
    Study,
    ball_probability,
    noise_description,
    thm4_bound,
)
from semidp.verify.registry import REGISTRY, Problem, SectionDefaults, kinds_accepting
from semidp.verify.report import Check, Report
from semidp.verify.spec import Spec, cell_count, documented

PROGRAMS = {
    "none": "noisy release x + eta (no post-processing)",
    "P": "(P) project onto A v = A x (unbiased; GGY's projected mechanism)",
    "P+": "(P+) project onto A v = A x, v >= 0",
}
#: Rows of the per-cell text table before it is abridged to the smallest and largest true counts.
MAX_TEXT_CELLS = 12


def _z_check(n: int) -> float:
    """Two-sided normal quantile of the per-cell intervals of the checks (Bonferroni over ``n`` cells)."""
    return NormalDist().inv_cdf(1 - (1 - CHECK_LEVEL) / (2 * n))


def _unbiased_check(p: dict[str, Any], n: int) -> Outcome:
    z = _z_check(n)
    lo, hi = p["bias"] - z * p["bias_se"], p["bias"] + z * p["bias_se"]
    bad = np.flatnonzero((lo > 0) | (hi < 0))
    head = f"(P) bias: max |mean| = {float(np.max(np.abs(p['bias']))):.4g} over {n} cells"
    if bad.size:
        return Refuted(f"{head}; cells {bad[:5].tolist()} have 0 outside their {CHECK_LEVEL:.2%} family-wise interval")
    return Verified(f"{head}; every cell's {CHECK_LEVEL:.2%} family-wise interval contains 0 [ZVF21, Thm. 3]")


def _variance_check(p: dict[str, Any], theory: np.ndarray, n: int) -> Outcome:
    z = _z_check(n)
    lo, hi = p["variance"] - z * p["variance_se"], p["variance"] + z * p["variance_se"]
    bad = np.flatnonzero((theory < lo) | (theory > hi))
    head = f"(P) per-cell variance vs Var(eta_i) diag(Pi_ker A): max |MC - exact| = {float(np.max(np.abs(p['variance'] - theory))):.4g}"
    if bad.size:
        return Refuted(f"{head}; cells {bad[:5].tolist()} outside their {CHECK_LEVEL:.2%} family-wise interval")
    return Verified(f"{head}; every cell's {CHECK_LEVEL:.2%} family-wise interval contains it")


def _bound_check(p: dict[str, Any], bound: float | None, why: str, n: int) -> Outcome:
    if bound is None:
        return NotApplicable(f"no Thm. 4 bound: {why}")
    z = _z_check(n)
    lo, hi = p["bias"] - z * p["bias_se"], p["bias"] + z * p["bias_se"]
    beyond = np.flatnonzero((lo > bound) | (hi < -bound))
    worst = float(np.max(np.maximum(np.abs(lo), np.abs(hi))))
    if beyond.size:
        return Refuted(f"(P+) bias of cells {beyond[:5].tolist()} lies beyond the Thm. 4 bound {bound:.6g}")
    return Verified(
        f"(P+) ||bias||_inf: Monte Carlo upper end {worst:.4g} vs the bound {bound:.6g} [ZVF21, Thm. 4]; "
        f"no cell's {CHECK_LEVEL:.2%} family-wise interval lies beyond it"
    )


def _ball_check(exact: float | None, hits: int, draws: int, why: str) -> tuple[Outcome, tuple[float, float]]:
    ci = binomtest(hits, draws).proportion_ci(confidence_level=CHECK_LEVEL, method="exact")
    interval = (float(ci.low), float(ci.high))
    if exact is None:
        return NotApplicable(why), interval
    head = f"Pr(||eta||_1 <= r_m) = {exact:.6g} [ZVF21, Lemma 2]; draws: {hits}/{draws}"
    if interval[0] <= exact <= interval[1]:
        return Verified(
            f"{head}, exact {CHECK_LEVEL:.2%} interval [{interval[0]:.4g}, {interval[1]:.4g}] contains it"
        ), interval
    return Refuted(
        f"{head}, outside the exact {CHECK_LEVEL:.2%} interval [{interval[0]:.4g}, {interval[1]:.4g}]"
    ), interval


@dataclass(frozen=True)
class ComparisonRow(Walked):
    """One row of ``postprocess.comparison``: a program's largest bias, mean variance and expected error."""

    program: str
    label: str
    max_abs_bias: float
    max_abs_bias_ci_upper: float
    mean_variance: float
    expected_l2_error: float
    expected_l2_error_ci: tuple[float, float]
    expected_squared_l2_error: float
    expected_squared_l2_error_exact: float | None
    """The closed form where it applies (``none`` and ``P``), else ``null``."""


def _row(key: str, p: dict[str, Any], exact_sq: float | None) -> ComparisonRow:
    lo, hi = p["expected_l2_error_ci"]
    return ComparisonRow(
        key,
        PROGRAMS[key],
        float(np.max(np.abs(p["bias"]))),
        float(np.max(np.abs(p["bias_ci"]))),
        float(np.mean(p["variance"])),
        p["expected_l2_error"],
        (lo, hi),
        p["expected_squared_l2_error"],
        exact_sq,
    )


def _values(a: np.ndarray) -> tuple[float, ...]:
    """A per-cell array as floats."""
    return tuple(a.tolist())


def _pairs(a: np.ndarray) -> tuple[tuple[float, float], ...]:
    """A per-cell array of intervals, shape ``(cells, 2)``, as float pairs."""
    return tuple((lo, hi) for lo, hi in a.tolist())


def build(study: Study, noise: NoiseLaw, kind: str, seed: int, rng: str) -> tuple[PostprocessSection, list[Check]]:
    """The ``postprocess`` section and its checks from a finished study."""
    x, n, k = study.counts, study.counts.size, study.draws_done
    main = study.programs["P+" if kind == "project-nonneg" else "P"]
    var_eta = noise.variance
    theory = var_eta * study.projector_diagonal
    r_m = float(x.min())
    ball, ball_why = ball_probability(noise, n, r_m)
    c_prime, c_how = study.max_deviation
    bound, bound_why = (None, c_how) if kind == "project" else thm4_bound(noise, x, c_prime)
    ball_outcome, ball_ci = _ball_check(ball, study.ball_hits, k, ball_why)
    checks = [
        Check("postprocess-unbiased-projection", _unbiased_check(study.programs["P"], n)),
        Check("postprocess-variance", _variance_check(study.programs["P"], theory, n)),
    ]
    if kind == "project-nonneg":
        checks.append(Check("postprocess-bias-bound", _bound_check(main, bound, bound_why, n)))
    checks.append(Check("postprocess-ball-probability", ball_outcome))
    if study.not_converged is not None:
        checks.append(
            Check(
                "postprocess-converged",
                Verified(f"ADMM met the KKT tolerance for all {k} draws (max residual {study.max_kkt_residual:.3g})")
                if study.not_converged == 0
                else Unknown(f"ADMM missed the KKT tolerance on {study.not_converged} of {k} draws"),
            )
        )
    if study.stopped_early:
        checks.append(
            Check(
                "postprocess-draws",
                Unknown(
                    f"the time budget stopped the study after {k} of {study.draws_requested} draws "
                    "(the estimates use those draws; raise --time-limit for all)"
                ),
            )
        )
    exact_sq = {"none": var_eta * n, "P": float(var_eta * study.projector_diagonal.sum()), "P+": None}
    section = PostprocessSection(
        kind,
        PROGRAMS["P+" if kind == "project-nonneg" else "P"],
        study.method,
        noise_description(noise),
        study.draws_requested,
        k,
        study.stopped_early,
        study.seconds,
        seed,
        rng,
        REPORT_LEVEL,
        _values(main["bias"]),
        _pairs(main["bias_ci"]),
        _values(main["variance"]),
        # (P+) has no closed form; (P_S)'s (sort-and-threshold) is variance_theory_projection
        _values(theory) if kind == "project" else None,
        _values(theory),
        "(1 - 1/n) Var(eta_i) [ZVF21, Thm. 5]"
        if study.method == "sort-and-threshold"
        else "Var(eta_i) (Pi_ker A)_ii (Cov(Pi eta) = Var(eta_i) Pi for i.i.d. eta)",
        bound,
        BiasBoundDetail(c_prime, c_how, r_m, bound_why),
        BallProbability(r_m, n, ball, ball_why, BallMonteCarlo(study.ball_hits, k, study.ball_hits / k, ball_ci)),
        None if study.not_converged is None else study.not_converged == 0,
        study.not_converged,
        study.max_kkt_residual,
        tuple(_row(key, p, exact_sq[key]) for key, p in study.programs.items()),
        _values(study.programs["P"]["bias"]),
        _pairs(study.programs["P"]["bias_ci"]),
        _values(study.programs["P"]["variance"]),
        tuple(float(c) for c in x),
    )
    return section, checks


def _cells(counts: tuple[float, ...]) -> list[int | None]:
    """Cell indices for the text table: all, or the smallest and largest true counts with a gap (``None``)."""
    order = sorted(range(len(counts)), key=lambda i: (counts[i], i))
    if len(order) <= MAX_TEXT_CELLS:
        return list(order)
    return [*order[:6], None, *order[-3:]]


@dataclass(frozen=True)
class BiasBoundDetail(Walked):
    """``postprocess.bias_bound_detail``: C' = max deviation [ZVF21, Thm. 4], how it was found, r_m and the bound's
    formula (or why there is none)."""

    max_deviation: float | None
    max_deviation_method: str
    r_min: float
    how: str


@dataclass(frozen=True)
class BallMonteCarlo(Walked):
    """The draws' share of ``||eta||_1 <= r_m`` with its exact binomial interval."""

    hits: int
    draws: int
    fraction: float
    interval: tuple[float, float]


@dataclass(frozen=True)
class BallProbability(Walked):
    """``postprocess.ball_probability``: [ZVF21, Lemma 2] at r = r_m over ``cells`` cells, and its Monte Carlo."""

    r: float
    cells: int
    value: float | None
    """``null`` for Gaussian noise (no closed form)."""
    formula: str
    monte_carlo: BallMonteCarlo


@dataclass(frozen=True)
class PostprocessSection(Walked):
    """The ``postprocess`` object (see the module docstring) and the true counts it is read against."""

    kind: str
    program: str
    method: str
    noise: NoiseDescription
    draws: int
    """Requested."""
    draws_done: int
    stopped_early: bool
    seconds: float
    seed: int
    rng: str
    level: float
    bias: tuple[float, ...]
    """Per cell, of the chosen program (histogram units)."""
    bias_ci: tuple[tuple[float, float], ...]
    variance: tuple[float, ...]
    variance_theory: tuple[float, ...] | None
    variance_theory_projection: tuple[float, ...]
    variance_theory_formula: str
    bias_bound: float | None
    bias_bound_detail: BiasBoundDetail
    ball_probability: BallProbability
    converged: bool | None
    not_converged: int | None
    max_kkt_residual: float | None
    comparison: tuple[ComparisonRow, ...]
    projection_bias: tuple[float, ...]
    projection_bias_ci: tuple[tuple[float, float], ...]
    projection_variance: tuple[float, ...]
    counts: tuple[float, ...] = field(default=(), metadata=INTERNAL)
    """The true counts (for the text table and the plot; not a JSON key)."""
    key: str = field(default="postprocess", metadata=INTERNAL)

    @property
    def main(self) -> str:
        """``P+`` or ``P``: the program the section reports."""
        return "P+" if self.kind == "project-nonneg" else "P"

    def _head(self) -> str:
        early = f" of {self.draws} (stopped at the time budget)" if self.stopped_early else ""
        conv = "" if self.converged is None else f", ADMM converged on every draw: {self.converged}"
        return (
            f"postprocess: {self.program}, by {self.method}; {self.noise.law} noise {self.noise.scale_text()}; "
            f"{self.draws_done} draws{early}, seed {self.seed}, {self.seconds:.2f} s{conv}"
        )

    def _bound(self) -> str:
        b, ball = self.bias_bound, self.ball_probability
        pb = "n/a" if ball.value is None else f"{ball.value:.6g}"
        c_prime = self.bias_bound_detail.max_deviation
        bound = "n/a" if b is None else f"{b:.6g} (C' = {c_prime:.6g})"
        return (
            f"Thm. 4 bound ||bias||_inf <= {bound}; Lemma 2 Pr(||eta||_1 <= r_m = {ball.r:g}) = {pb} "
            f"(draws: {ball.monte_carlo.fraction:.4g})"
        )

    def _cell_rows(self) -> list[list[str]]:
        rows = []
        for i in _cells(self.counts):
            if i is None:
                rows.append(["...", "", "", "", ""])
                continue
            lo, hi = self.bias_ci[i]
            plo, phi = self.projection_bias_ci[i]
            rows.append(
                [
                    str(i),
                    f"{self.counts[i]:.12g}",
                    f"{self.bias[i]:+.3f} [{lo:+.3f}, {hi:+.3f}]",
                    f"{self.variance[i]:.4g}",
                    f"{self.projection_bias[i]:+.3f} [{plo:+.3f}, {phi:+.3f}]",
                ]
            )
        return rows

    def _cmp_rows(self) -> list[list[str]]:
        out = []
        for r in self.comparison:
            exact = r.expected_squared_l2_error_exact
            out.append(
                [
                    r.program,
                    f"{r.max_abs_bias:.4g}",
                    f"{r.mean_variance:.4g}",
                    f"{r.expected_l2_error:.4g}",
                    f"{r.expected_squared_l2_error:.5g}" + ("" if exact is None else f" (exact {exact:.5g})"),
                ]
            )
        return out

    def text_lines(self, report: Report) -> list[str]:
        """The terminal block: the study, the bound, a per-cell table and the side-by-side table."""
        main = self.main
        head = ["cell", "true", f"bias {main} [95% CI]", f"var {main}", "bias P [95% CI]"]
        cmp_head = ["program", "max|bias|", "mean var", "E||err||_2", "E||err||_2^2"]
        return [
            "",
            self._head(),
            f"    {self._bound()}",
            *_table(head, self._cell_rows()),
            *_table(cmp_head, self._cmp_rows()),
        ]

    def markdown_lines(self, report: Report) -> list[str]:
        """The Markdown ``## Post-processing`` section with the two tables."""
        main = self.main
        head = ["cell", "true count", f"bias {main} [95% CI]", f"variance {main}", "bias P [95% CI]"]
        cmp_head = ["program", "max abs bias", "mean variance", "E‖error‖₂", "E‖error‖₂²"]
        md = ["## Post-processing", "", f"- {self._head()}", f"- {self._bound()}", ""]
        md += _md_table(head, self._cell_rows()) + [""] + _md_table(cmp_head, self._cmp_rows())
        return [*md, ""]


def _table(head: list[str], rows: list[list[str]]) -> list[str]:
    widths = [max(len(r[j]) for r in [head, *rows]) for j in range(len(head))]
    return ["    " + "  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in [head, *rows]]


def _md_table(head: list[str], rows: list[list[str]]) -> list[str]:
    return ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)] + ["| " + " | ".join(r) + " |" for r in rows]


@dataclass(frozen=True)
class PostprocessSpec:
    """``[postprocess]``: projection post-processing of the noisy histogram onto the invariant [ZVF21, Sec. 3]."""

    kind: Literal["project-nonneg", "project"] = documented(
        "project-nonneg: program (P+), the closest point with A v = A x and v >= 0; project: program (P), "
        "the closest point with A v = A x (unbiased; Gao, Gong & Yu's projected mechanism)."
    )
    draws: int = documented(
        "Monte Carlo draws of the noise for the bias and variance study (>= 2; draws x cells <= 2e7).",
        default=20000,
    )


def postprocess_of(spec: Spec) -> PostprocessSpec | None:
    """The spec's ``[postprocess]`` table (held by :data:`POSTPROCESS` in ``Spec.plugin_tables``), or ``None``."""
    pp = spec.plugin_table(POSTPROCESS.name)
    return pp if isinstance(pp, PostprocessSpec) else None


class PostprocessPlugin(SectionDefaults):
    """``[postprocess]`` as a registered section plugin (:func:`verify.registry.register_section`): its problems.

    The study itself runs inside a kind that names ``postprocess`` in its :attr:`~verify.registry.KindInfo.sections`
    (:func:`verify.kinds.calibrated.postprocess_part`); the loader calls :meth:`validate` with every plugin's.
    """

    name = "postprocess"
    table: type | None = PostprocessSpec

    def validate(self, spec: Spec) -> list[Problem]:
        """Problems of ``[postprocess]``: a kind that adds i.i.d. noise in every cell, an invariant to project
        onto, and ``2 <= draws`` with ``draws x cells <= MAX_DRAW_CELLS`` (2e7)."""
        pp = postprocess_of(spec)
        if pp is None:
            return []
        probs: list[Problem] = []
        kind = REGISTRY.get(spec.mechanism.kind) if spec.mechanism is not None else None
        if kind is None or self.name not in kind.info.sections:
            probs.append(
                Problem(
                    "postprocess",
                    f"mechanism.kind = {spec.mechanism.kind!r} does not support [postprocess]; it needs i.i.d. "
                    f"noise in every cell: one of {kinds_accepting(self.name)}",
                )
            )
        if spec.invariant is not None and spec.invariant.kind == "none":
            probs.append(
                Problem("invariant.kind", "[postprocess] projects onto the invariant; 'none' has nothing to keep")
            )
        cells = cell_count(spec)
        if pp.draws < 2:
            probs.append(Problem("postprocess.draws", f"must be >= 2 (a variance needs two draws), got {pp.draws}"))
        elif pp.draws * cells > MAX_DRAW_CELLS:
            probs.append(
                Problem(
                    "postprocess.draws",
                    f"{pp.draws} draws x {cells} cells = {pp.draws * cells:.3g} numbers exceeds the limit "
                    f"{MAX_DRAW_CELLS:.0e} (draws x cells); use at most {MAX_DRAW_CELLS // cells} draws",
                )
            )
        return probs


POSTPROCESS = PostprocessPlugin()
"""The ``[postprocess]`` section plugin (registered in :mod:`verify.kinds`)."""

__all__ = [
    "POSTPROCESS",
    "PROGRAMS",
    "PostprocessPlugin",
    "PostprocessSection",
    "PostprocessSpec",
    "build",
    "postprocess_of",
]
