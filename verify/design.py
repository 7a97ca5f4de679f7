"""``[design]`` of a workload spec: the common scale of the measurements' rho that meets a target, certified and tight.

A ``published`` spec with ``measurements`` and a ``[design]`` section (contract: ``specs/README.md``,
"[design]") is audited as written and, besides, designed: the measurements become a
:class:`~accountant.releases.model.Release` (:func:`accountant.releases.workload.workload_release`, each shift
stated per coordinate) and :func:`accountant.releases.design.design_release_scale` finds the largest factor ``c``
(to 0.1 %) such that the release with every rho multiplied by ``c`` meets ``design.target`` by the certified
upper end of its PLD bracket (the release interpreters' parts), in the framework ``design.framework``
(``semi-dp``: the query-level worst pair of :mod:`accountant.workloads.accounting` at a(t) <= 2; ``dp``: the
advertised replace-one pair).
The report gets a ``design`` object and a ``design`` check (verified: a certified design within the tolerance;
unknown: the budget ran out first, with the best certified scale so far); ``--out`` writes
``<name>.design.csv`` (``geolevel,query,rho``, exact rationals, the format the spec reads) and
``<name>.design.png`` (epsilon(delta) of the designed release against the target).
"""

from __future__ import annotations

import csv
import dataclasses
import io
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any

from semidp.accountant.core.budget import Budget
from semidp.accountant.core.errors import InvalidArgument, VerificationError
from semidp.accountant.core.outcome import Outcome, Unknown, Verified
from semidp.accountant.releases.accounting import pld_counted_parts, zcdp_exact
from semidp.accountant.releases.design import design_release_scale
from semidp.accountant.releases.workload import workload_relation, workload_release
from semidp.accountant.workloads.accounting import (
    GAUSSIAN_NOISES,
    WorkloadMeasurement,
    workload_bracket,
)
from semidp.accountant.workloads.allocation import (
    AllocationResult,
    allocated_measurements,
    design_workload_allocation,
)
from semidp.accountant.workloads.design import DESIGN_REL_TOL, ScaleDesign
from semidp.verify.context import Context, KindResult, Plot
from semidp.verify.display import fmt_delta, fmt_down, fmt_up
from semidp.verify.json_walk import INTERNAL, OMIT_NONE, Walked
from semidp.verify.registry import REGISTRY, Problem
from semidp.verify.report import Check, Report
from semidp.verify.spec import Spec
from semidp.verify.spec_checks import guarantee_problems
from semidp.verify.spec_values import guarantee_of, guarantee_spec_json
from semidp.verify.workload_spec import Measurement


def design_problems(spec: Spec) -> list[Problem]:
    """Problems of ``[design]`` (each naming its key): a workload spec with Gaussian noise, a supported target."""
    d = spec.design
    if d is None:
        return []
    m = spec.mechanism
    if m is not None and getattr(REGISTRY.get(m.kind), "accepts_design", False):
        return []  # a calibrated kind: its validate checks [design] (verify.design_calibrated)
    if m is None or m.kind != "published" or getattr(m, "measurements", None) is None:
        return [
            Problem(
                "design",
                "[design] is for workload specs (kind = 'published' with measurements) and the calibrated kinds "
                "(gaussian, projected-gaussian, laplace, projected-laplace, discrete-laplace, k-norm)",
            )
        ]
    probs = guarantee_problems(d.target, "design.target")
    if probs:
        return probs
    noise = getattr(m, "noise", None)
    if noise is not None and noise not in GAUSSIAN_NOISES:
        probs.append(
            Problem("mechanism.noise", f"[design] scales rho (Gaussian noise); noise = {noise!r} has no rho to scale")
        )
    g = d.target
    if g.zcdp is not None:
        if g.zcdp <= 0:
            probs.append(Problem("design.target.zcdp", "must be > 0 (a release with no privacy loss has no noise)"))
    elif g.epsilon is not None:
        if g.epsilon <= 0:
            probs.append(Problem("design.target.epsilon", "must be > 0"))
        if g.delta is None or not 0 < g.delta < 1:
            probs.append(Problem("design.target.delta", "needs 0 < delta < 1 (Gaussian noise meets no pure-DP target)"))
    else:
        probs.append(
            Problem("design.target", f"form {g.form()!r} is not supported yet: give {{epsilon, delta}} or {{zcdp}}")
        )
    return probs


def _down(x: Fraction) -> float:
    """``float(x)`` rounded down (the target epsilon and delta: a certified meet at them meets the exact target)."""
    f = float(x)
    return math.nextafter(f, -math.inf) if Fraction(f) > x else f


def scaled(
    values: Sequence[WorkloadMeasurement], c: Fraction, kept: frozenset[int] = frozenset()
) -> list[WorkloadMeasurement]:
    """Every rho multiplied by ``c``: sigma^2 divided by ``c`` (Gaussian kinds); the measurements at the indices
    ``kept`` (an allocation's fixed ones, which change on no worst pair) keep theirs."""
    return [v if i in kept else dataclasses.replace(v, scale=v.scale / c) for i, v in enumerate(values)]


def rho_of(m: Measurement) -> Fraction:
    """The measurement's rho (given, or ``1/sigma^2``), exact."""
    return m.rho if m.rho is not None else 1 / m.scale


def designed_rhos(
    ms: Sequence[Measurement], c: Fraction, base: Sequence[Fraction] | None = None, kept: frozenset[int] = frozenset()
) -> list[Fraction]:
    """Each measurement's designed rho: ``c`` times its ``base`` rho (default: the file's), except at ``kept``."""
    rhos = [rho_of(m) for m in ms] if base is None else list(base)
    return [r if i in kept else c * r for i, r in enumerate(rhos)]


def design_csv(ms: Sequence[Measurement], rhos: Sequence[Fraction]) -> str:
    """``geolevel,query,rho`` with the designed ``rhos`` (exact rationals ``p/q``), the file's order."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["geolevel", "query", "rho"])
    for m, r in zip(ms, rhos):
        w.writerow([m.geolevel, m.query, str(r)])
    return buf.getvalue()


@dataclass(frozen=True)
class AllocationSummary(Walked):
    """``design.allocation``: the re-balanced rhos' summary (:class:`AllocationResult`); objectives are sums of
    weight x per-cell variance (1/rho, counts squared), the budgets zCDP rho as exact rationals ``p/q``."""

    budget_zcdp: str
    constraint_zcdp: str
    kept: tuple[int, ...]
    objective_before: float
    objective_uniform: float
    objective_after: float
    method: str
    solver: str
    status: str
    seconds: float
    note: str
    objective_designed: float | None = field(default=None, metadata=OMIT_NONE)
    """The designed CSV's objective (set once a scale is certified)."""
    objective_published: float | None = field(default=None, metadata=OMIT_NONE)
    """The file's rhos' objective (set once a scale is certified)."""


@dataclass(frozen=True)
class Achieved(Walked):
    """``design.achieved``: the designed release's certified bracket (epsilon, or zCDP rho) at ``delta``."""

    lower: float | None = field(default=None, metadata=OMIT_NONE)
    upper: float | None = field(default=None, metadata=OMIT_NONE)
    delta: float | None = field(default=None, metadata=OMIT_NONE)


@dataclass(frozen=True)
class FailingScale(Walked):
    """``design.failing``: the smallest evaluated scale that fails, its ratio to ``c`` and its epsilon bracket."""

    scale: float
    ratio: float
    lower: float
    upper: float


@dataclass(frozen=True)
class Probe(Walked):
    """One evaluated scale of the search and its certified epsilon bracket (``design.probes``)."""

    scale: float
    lower: float
    upper: float


@dataclass(frozen=True)
class MeasurementVariance(Walked):
    """One measurement's rho and per-cell variance ``sigma^2 = 1/rho`` before and after the design."""

    geolevel: str
    query: str
    rho_before: str
    rho: str
    sigma2_before: float
    sigma2: float


@dataclass(frozen=True)
class DesignError(Walked):
    """``design.expected_error``: every per-cell variance is multiplied by ``1/c`` (float and exact)."""

    variance_factor: float
    variance_factor_exact: str
    note: str
    per_measurement: tuple[MeasurementVariance, ...]


@dataclass(frozen=True, kw_only=True)
class DesignHead(Walked):
    """The keys every ``design`` section starts with (contract: ``specs/README.md``, "[design]")."""

    target: Mapping[str, object]
    """The spec's ``design.target``, its form's keys (floats)."""
    framework: str
    vary: str
    rel_tol: float
    scale: float | None
    """``c`` as a float; ``None`` when no design was certified."""
    scale_exact: str | None
    csv_file: str
    allocation: AllocationSummary | None = field(default=None, metadata=OMIT_NONE)
    key: str = field(default="design", metadata=INTERNAL)

    def out_files(self, name: str) -> list[tuple[str, str]]:
        """``[(file name, text)]`` written next to the report by ``--out`` (none without a design)."""
        return []

    def _head(self) -> str:
        def show(k: str, v: object) -> object:
            return fmt_delta(v) if k == "delta" and isinstance(v, float) else v

        target = ", ".join(f"{k} = {show(k, v)}" for k, v in self.target.items())
        return f"design: {self.framework} target {target}, vary = {self.vary}"

    def _body(self) -> list[str]:
        return []

    def text_lines(self, report: Report) -> list[str]:
        """The design's summary."""
        iterations, seconds = getattr(self, "iterations", 0), getattr(self, "seconds", 0.0)
        return [
            self._head(),
            *self._body(),
            f"  {iterations} PLD evaluation(s) in {seconds:.2f} s; with --out: {self.csv_file}",
        ]

    def markdown_lines(self, report: Report) -> list[str]:
        """The same, as a fenced block."""
        return ["## Design", "", "```", *self.text_lines(report), "```", ""]


@dataclass(frozen=True, kw_only=True)
class DesignNotFound(DesignHead):
    """The ``design`` section when no scale was certified: why (a precondition) or where the search stopped."""

    why: str | None
    stopped: str | None
    iterations: int
    seconds: float

    def _body(self) -> list[str]:
        return [f"  no certified design: {self.stopped or self.why or 'the search ended without one'}"]


@dataclass(frozen=True, kw_only=True)
class DesignFound(DesignHead):
    """The ``design`` section with a certified scale ``c``: the bracket it achieves, its tightness, the search's
    probes and the designed variances; ``csv_text`` is the designed CSV ``--out`` writes."""

    achieved: Achieved
    tight: bool
    tightness: str
    failing: FailingScale | None
    stopped: str | None
    iterations: int
    seconds: float
    probes: tuple[Probe, ...]
    expected_error: DesignError
    csv_text: str = field(metadata=INTERNAL)

    def out_files(self, name: str) -> list[tuple[str, str]]:
        """``[(file name, text)]`` written next to the report by ``--out``: ``<name>.design.csv``."""
        return [(f"{name}.design.csv", self.csv_text)]

    def _body(self) -> list[str]:
        a = self.allocation
        if a is not None:
            return [
                f"  allocation ({a.method}, {a.solver}) then scale c = {self.scale_exact} ({self.scale:.6g}); "
                f"{len(a.kept)} measurement(s) kept (fixed by the invariant)",
                f"  sum of weight x variance: published {a.objective_published:.6g} -> designed "
                f"{a.objective_designed:.6g}",
            ]
        got = self.achieved
        if "zcdp" in self.target:
            what = f"zcdp = {got.upper:.6g} (exact)"
        else:
            what = f"epsilon in [{_fmt(fmt_down, got.lower)}, {_fmt(fmt_up, got.upper)}] at delta = "
            what += _fmt(fmt_delta, got.delta)
        return [
            f"  scale c = {self.scale_exact} ({self.scale:.6g}): every rho x c, every variance x 1/c = "
            f"{fmt_up(self.expected_error.variance_factor)}",
            f"  achieved: {what} (certified; upper end <= target)",
            f"  tightness: {self.tightness}",
        ]


def _fmt(f: Callable[[float], str], x: float | None) -> str:
    return "?" if x is None else f(x)


DesignSection = DesignNotFound | DesignFound
"""The ``design`` report section: one dataclass per shape (no certified scale, a certified one)."""


def _allocation_summary(a: AllocationResult) -> AllocationSummary:
    """The allocation's summary (``design.allocation``); objectives: sum of weight x per-cell variance (1/rho)."""
    return AllocationSummary(
        budget_zcdp=str(a.budget),
        constraint_zcdp=str(a.constraint),
        kept=tuple(a.kept),
        objective_before=a.objective_before,
        objective_uniform=a.objective_uniform,
        objective_after=a.objective_after,
        method=a.method,
        solver=a.solver,
        status=a.status,
        seconds=a.seconds,
        note="objectives: sum over measurements of weight x sigma^2 (per-cell variance bound 1/rho); before/"
        "uniform/after at the zCDP budget of the published release; published/designed: the file's rhos and the "
        "designed CSV's",
    )


def _tightness(r: ScaleDesign, c: Fraction, eps: float | None) -> str:
    if eps is None:
        return "exact (zCDP is linear in c)"
    f = r.failing
    if r.tight and f is not None:
        return (
            f"proven: c x {float(f.scale / c):.6f} fails, epsilon >= {fmt_down(f.bracket.lower)} > {eps:g} "
            "(certified lower end)"
        )
    if f is None:
        return "tightness not proven: no failing scale was evaluated"
    return (
        f"tightness not proven: c x {float(f.scale / c):.6f} has epsilon in [{fmt_down(f.bracket.lower)}, "
        f"{fmt_up(f.bracket.upper)}], straddling {eps:g}"
    )


def with_design(ctx: Context, result: KindResult, ms: Sequence[Measurement], noise: str) -> KindResult:
    """``result`` with the ``design`` section, check and plot of ``[design]`` (see the module docstring)."""
    spec = ctx.spec
    d = spec.design
    if d is None:
        return result
    values = [m.accountant_value() for m in ms]
    g = d.target
    target = guarantee_spec_json(g)
    csv_file = f"{spec.name}.design.csv"
    summary: AllocationSummary | None = None
    radius: int | None = None
    why: str | None = None
    if d.framework == "semi-dp":
        if ctx.a.exact and ctx.a.value <= 2:
            radius = ctx.a.value
        else:
            why = f"the query-level worst pair is analysed for a(t) <= 2 known exactly; here {ctx.a.bounds_text()}"

    base: list[Fraction] | None = None  # the allocation's rhos (vary = "allocation"), else the file's
    kept: frozenset[int] = frozenset()
    alloc: AllocationResult | None = None
    if why is None and d.vary == "allocation":
        try:
            alloc = design_workload_allocation(
                values,
                noise,
                _published_rho(values, noise, radius, ctx),
                framework=d.framework,
                semi_radius=radius or 2,
                weights=[m.weight for m in ms],
            )
        except (InvalidArgument, VerificationError) as e:
            why = f"the allocation could not be computed: {e}"
        else:
            base, kept = list(alloc.rhos), frozenset(alloc.kept)
            values = list(allocated_measurements(values, alloc.rhos, noise))
            summary = _allocation_summary(alloc)

    # the workload as a Release, designed over its parameters by the release interpreters (Step 14.1)
    release = workload_release(values, noise, radius, invariant=ctx.invariant, base=ctx.relation)
    on = workload_relation(release, radius)
    r: ScaleDesign | None = None
    eps = delta = None
    if why is None and not pld_counted_parts(release, on):
        why = "no measurement changes on a neighbouring pair: every scale meets the target"
    if why is None:
        try:
            if g.zcdp is not None:
                r = design_release_scale(release, rho=g.zcdp, relation=on, kept=kept)
            elif g.epsilon is not None and g.delta is not None:
                eps, delta = _down(g.epsilon), _down(g.delta)
                r = design_release_scale(
                    release, epsilon=eps, delta=delta, relation=on, kept=kept, budget=Budget.until(ctx.deadline)
                )
        except InvalidArgument as e:
            why = f"the design could not be evaluated: {e}"
    outcome: Outcome
    section: DesignSection
    plots: tuple[Plot, ...] = ()
    if r is None or r.scale is None:
        stopped = r.stopped if r is not None else None
        section = DesignNotFound(
            target=target,
            framework=d.framework,
            vary=d.vary,
            rel_tol=DESIGN_REL_TOL,
            scale=None,
            scale_exact=None,
            csv_file=csv_file,
            allocation=summary,
            why=why,
            stopped=stopped,
            iterations=r.iterations if r else 0,
            seconds=r.seconds if r else 0.0,
        )
        outcome = Unknown(f"no certified design: {why or stopped or 'the search ended without one'}")
    else:
        c = r.scale
        rhos = designed_rhos(ms, c, base, kept)
        if summary is not None:
            summary = dataclasses.replace(
                summary,
                objective_designed=float(sum((m.weight / rho for m, rho in zip(ms, rhos)), Fraction(0))),
                objective_published=float(sum((m.weight / rho_of(m) for m in ms), Fraction(0))),
            )
        achieved = Achieved(r.achieved.lower, r.achieved.upper, delta) if r.achieved else Achieved(delta=delta)
        f = r.failing
        section = DesignFound(
            target=target,
            framework=d.framework,
            vary=d.vary,
            rel_tol=DESIGN_REL_TOL,
            scale=float(c),
            scale_exact=str(c),
            csv_file=csv_file,
            allocation=summary,
            achieved=achieved,
            tight=r.tight,
            tightness=_tightness(r, c, eps),
            failing=None
            if f is None
            else FailingScale(float(f.scale), float(f.scale / c), f.bracket.lower, f.bracket.upper),
            stopped=r.stopped,
            iterations=r.iterations,
            seconds=r.seconds,
            probes=tuple(Probe(float(p.scale), p.bracket.lower, p.bracket.upper) for p in r.probes),
            expected_error=DesignError(
                variance_factor=float(1 / c),
                variance_factor_exact=str(1 / c),
                note="every measurement's per-cell variance sigma^2 = 1/rho is multiplied by 1/c"
                + (" (of the allocation's rho; fixed measurements keep theirs)" if alloc is not None else ""),
                per_measurement=tuple(
                    MeasurementVariance(
                        m.geolevel, m.query, str(rho_of(m)), str(rho), float(1 / rho_of(m)), float(1 / rho)
                    )
                    for m, rho in zip(ms, rhos)
                ),
            ),
            csv_text=design_csv(ms, rhos),
        )
        within = r.gap is not None and r.gap <= r.rel_tol * (1 + 1e-9)
        met = (
            f"the designed release (c = {c}) meets the target by its certified upper bound "
            + (f"(epsilon <= {fmt_up(r.achieved.upper)} <= {eps:g} at delta = {fmt_delta(delta)})" if eps else "(zCDP)")
            if r.achieved is not None
            else ""
        )
        if r.stopped is not None:
            outcome = Unknown(f"{met}, but {r.stopped} before the scale was known to {r.rel_tol:g} relative")
        elif eps is not None and not within:
            outcome = Unknown(f"{met}, but no failing scale within {r.rel_tol:g} relative was found")
        else:
            outcome = Verified(f"{met}; tightness {section.tightness}")
        plots = (_plot(values, noise, radius, c, d.framework, g, ctx),) if eps is not None else ()
    return dataclasses.replace(
        result,
        sections=(*result.sections, section),
        final_checks=(*result.final_checks, Check("design", outcome)),
        plots=(*result.plots, *plots),
    )


def _published_rho(values: Sequence[WorkloadMeasurement], noise: str, radius: int | None, ctx: Context) -> Fraction:
    """The published workload's exact zCDP on the design's relation (the allocation's budget)."""
    release = workload_release(values, noise, radius, invariant=ctx.invariant, base=ctx.relation)
    rho = zcdp_exact(release, workload_relation(release, radius))
    if rho is None:  # pragma: no cover - every workload law has an exact zCDP
        raise InvalidArgument(f"noise = {noise!r}: the workload has no exact zCDP to allocate.")
    return rho


def _plot(
    values: Sequence[WorkloadMeasurement],
    noise: str,
    radius: int | None,
    c: Fraction,
    framework: str,
    g: Any,
    ctx: Context,
) -> Plot:
    from semidp.verify.workload_plot import draw_workload_plot

    target = guarantee_of(g, ctx.relation)
    text = f"target, epsilon = {float(g.epsilon):g}, delta = {float(g.delta):g}"

    def draw(path: Path, title: str) -> Path:
        designed = workload_bracket(scaled(values, c), noise, semi_radius=radius)
        as_published = workload_bracket(values, noise, semi_radius=radius)
        return draw_workload_plot(
            path,
            title,
            [
                (f"as published, {framework} (pld)", as_published),
                (f"designed c = {float(c):.6g}, {framework} (pld)", designed),
            ],
            claim=(text, target),
            verdict="holds",
        )

    return Plot("design", "epsilon(delta) of the designed release against the target", draw)


__all__ = [
    "Achieved",
    "AllocationSummary",
    "DesignError",
    "DesignFound",
    "DesignHead",
    "DesignNotFound",
    "DesignSection",
    "FailingScale",
    "MeasurementVariance",
    "Probe",
    "design_csv",
    "design_problems",
    "scaled",
    "with_design",
]
