"""The audit of a published measurement workload: advertised, exact and query-level Semi-DP accounting.

A ``published`` spec with ``measurements`` (:mod:`verify.workload_spec`) is accounted here:

* ``advertised``: the total rho (Bun-Steinke and Canonne-Kamath-Steinke, as for any zCDP
  guarantee) plus ``method = "pld"``: the exact composition of the measurements' noise at the
  worst replace-one pair (certified bracket; the upper end is reported, the bracket beside it);
* ``effective`` (``semi-dp``): the joint worst case over semi-adjacent pairs at a(t) of the
  per-measurement shifts (:mod:`accountant.workloads.accounting`, proof there), as zCDP and as ``pld``, with
  the coarse group-privacy value a(t)^2 rho [CA24, Prop. 15] beside it (``coarse``);
* inside both, the certificate's breakdowns: ``per_attribute`` (the measurements whose query
  splits the feature) and ``per_geolevel`` (keyed by X: the measurements at levels strictly finer
  than X, the certificate's "Block-within-X").
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from semidp.accountant.core.budget import Budget
from semidp.accountant.core.errors import InvalidArgument
from semidp.accountant.core.outcome import Bounds, Outcome, Refuted, Skipped, Unknown, Verified
from semidp.accountant.core.progress import Progress, stage
from semidp.accountant.guarantees.conversion_routes import EpsilonDelta, epsilon_delta
from semidp.accountant.guarantees.definitions import ZCDP
from semidp.accountant.guarantees.relations import SemiAdjacent
from semidp.accountant.guarantees.semidp import semi_dp
from semidp.accountant.pld.engine import MAX_POINTS
from semidp.accountant.pld.refine import RefinedInterval, refine_many
from semidp.accountant.workloads.accounting import (
    GAUSSIAN_NOISES,
    SET_ASIDE_DELTA,
    WORKLOAD_POINTS,
    SetAsideBracket,
    WorkloadBracket,
    WorkloadMeasurement,
    workload_bracket,
    workload_rho,
)
from semidp.verify.context import Context, KindResult, Plot
from semidp.verify.display import fmt_delta, fmt_down, fmt_up
from semidp.verify.json_walk import INTERNAL, OMIT_NONE, Walked
from semidp.verify.report import Breakdown, Check, GuaranteeSummary, PldEntry, Report
from semidp.verify.sections import Unrendered
from semidp.verify.spec import Spec
from semidp.verify.workload_spec import (
    Measurement,
    MeasurementsKey,
    attribute_features,
    geography_names,
    measurements_file,
)


def rho_up(x: Fraction) -> float:
    """``float(x)`` rounded up (a rho bounds privacy loss)."""
    f = float(x)
    return math.nextafter(f, math.inf) if Fraction(f) < x else f


@dataclass(frozen=True)
class Accounted:
    """One group of measurements accounted one way: exact rho and the PLD bracket of the worst pair.

    The bracket is composed on :data:`~semidp.accountant.workloads.accounting.WORKLOAD_POINTS` grid points and refined
    (:func:`semidp.accountant.pld.refine.refine_many`, finer grids of the same measurements) to the relative
    width :data:`~semidp.accountant.pld.refine.DEFAULT_REL_WIDTH` where the budget allows (:meth:`evaluated`),
    and further for a claim until it is decided (:meth:`decide_at`).
    """

    rho: Fraction
    pld: WorkloadBracket | None
    pld_unavailable: str | None = None
    """Why the PLD could not be composed (an extreme noise scale), or ``None``; the zCDP entries stand."""
    set_aside_lines: tuple[int, ...] = ()
    """CSV lines of the measurements bounded through their (eps0, delta0) guarantee (:class:`SetAsideBracket`)."""
    values: tuple[WorkloadMeasurement, ...] = ()
    """The measurements, to compose finer grids (empty: no refinement)."""
    noise: str = ""
    semi_radius: int | None = None
    refined: dict[float, RefinedInterval] = field(default_factory=dict, compare=False, repr=False)
    """Epsilon at each delta after :meth:`evaluated`'s refinement."""
    finer: dict[int, tuple[WorkloadBracket, float]] = field(default_factory=dict, compare=False, repr=False)
    """The finest grid composed so far, by grid-points target, with the seconds it took (one entry at most, to
    bound memory; :meth:`decide_at` goes on from where :meth:`evaluated` stopped)."""

    def entries(self, deltas: list[float], relation: Any) -> tuple[EpsilonDelta | PldEntry, ...]:
        """BS and CKS on the summed rho, then the PLD (upper end reported, the bracket beside it)."""
        g = ZCDP(rho_up(self.rho), relation)
        return (*(e for d in deltas for e in epsilon_delta(g, d)), *self.pld_entries(deltas))

    def pld_entries(self, deltas: list[float]) -> tuple[PldEntry, ...]:
        """The PLD bracket at each of ``deltas`` (none when the PLD could not be composed), refined when
        :meth:`evaluated` refined it, with a ``bracket_note`` when it is wider than the requested width."""
        if self.pld_unavailable is not None:
            return ()
        if self.pld is None:  # nothing is released: no privacy loss
            return tuple(PldEntry(d, 0.0, 0.0) for d in deltas)
        out = []
        for d in deltas:
            r = self.refined.get(d)
            b = r.interval if r is not None else self.pld.epsilon(d)
            out.append(PldEntry(d, b.lower, b.upper, self.set_aside_lines, r.shortfall() if r is not None else None))
        return tuple(out)

    def breakdown(self, deltas: list[float], relation: Any, count: int) -> Breakdown:
        """The group's ``{"rho", "rho_exact", "measurements", "epsilon_delta"[, "pld_unavailable"]}`` entry."""
        return Breakdown(rho_up(self.rho), str(self.rho), count, self.entries(deltas, relation), self.pld_unavailable)

    def _compose(self, points: int | None) -> WorkloadBracket:
        if self.pld is None:  # pragma: no cover - callers check
            raise TypeError("no PLD to refine")
        if points is None:
            return next(iter(self.finer.values()))[0] if self.finer else self.pld
        t0 = time.monotonic()
        b = workload_bracket(list(self.values), self.noise, semi_radius=self.semi_radius, points=points)
        if b is None:  # pragma: no cover - the same measurements changed at the first grid
            raise TypeError("workload_bracket returned None on a finer grid")
        self.finer.clear()
        self.finer[points] = (b, time.monotonic() - t0)
        return b

    def _refine(
        self, deltas: Sequence[float], targets: Sequence[float | None], budget: Budget
    ) -> list[RefinedInterval]:
        queries = [(lambda b, d=d: b.epsilon(d)) for d in deltas]
        cap = MAX_POINTS if self.values else WORKLOAD_POINTS  # without the measurements: the first grid only
        start, seconds = next(((p, s) for p, (_, s) in self.finer.items()), (WORKLOAD_POINTS, None))
        out = refine_many(
            self._compose,
            queries,
            targets,
            first_points=start,
            first_seconds=seconds,
            max_points=cap,
            budget=budget,
        )
        return [r if r.points is not None or start == WORKLOAD_POINTS else r._replace(points=start) for r in out]

    def evaluated(self, deltas: list[float], budget: Budget | None = None) -> Accounted:
        """``self``, with the PLD's epsilon at every delta computed now and refined to
        :data:`~semidp.accountant.pld.refine.DEFAULT_REL_WIDTH` within ``budget`` (default unlimited: the
        engine's grid cap bounds it)."""
        if self.pld is not None and deltas:
            for d, r in zip(deltas, self._refine(deltas, [None] * len(deltas), budget or Budget.unlimited())):
                self.refined[d] = r
        return self

    def decide_at(self, delta: float, claimed: float, budget: Budget) -> RefinedInterval:
        """Epsilon at ``delta``, refined until ``claimed`` lies outside the bracket (decided), the width is met,
        or the grid cap or ``budget`` stops it."""
        if self.pld is None:  # pragma: no cover - callers check
            raise TypeError("no PLD to refine")
        return self._refine([delta], [claimed], budget)[0]


def account(ms: Sequence[Measurement], noise: str, semi_radius: int | None, *, skip: str | None = None) -> Accounted:
    """Exact rho and PLD of ``ms`` at the worst pair (advertised when ``semi_radius`` is ``None``).

    A noise scale so extreme that one part's privacy-loss grid would exceed the engine's size limit
    (e.g. sigma^2 = 1e12, or 1e-12, beside census-sized ones) leaves the PLD out, saying why and naming the
    extreme rows; the exact rho and its conversions are still reported. ``skip``: leave the PLD out
    for this reason (a time budget).
    """
    values = [m.accountant_value() for m in ms]
    rho = workload_rho(values, noise, semi_radius=semi_radius)
    if skip is not None:
        return Accounted(rho, None, skip)
    try:
        bracket = workload_bracket(values, noise, semi_radius=semi_radius)
        lines = tuple(ms[i].line for i in bracket.set_aside) if isinstance(bracket, SetAsideBracket) else ()
        return Accounted(
            rho, bracket, set_aside_lines=lines, values=tuple(values), noise=noise, semi_radius=semi_radius
        )
    except InvalidArgument as e:
        lo = min(ms, key=lambda m: m.scale)
        hi = max(ms, key=lambda m: m.scale)
        what = "sigma^2" if noise in GAUSSIAN_NOISES else "scale"
        cause = str(e).split(";")[0].rstrip(".")  # the engine's advice about the grid is not the user's to take
        reason = (
            f"{cause}: noise {what} from {float(lo.scale):.4g} (line {lo.line}) to {float(hi.scale):.4g} (line "
            f"{hi.line}) is too wide a range for one loss grid; the zCDP values are upper bounds"
        )
        return Accounted(rho, None, reason)


def groups(spec: Spec, ms: Sequence[Measurement]) -> tuple[dict[str, list[Measurement]], dict[str, list[Measurement]]]:
    """The certificate's breakdowns: per attribute (queries splitting it) and per geolevel X (levels finer than X)."""
    per_attr = {f.name: [m for m in ms if f.name in m.splits] for f in attribute_features(spec)}
    geo = geography_names(spec)
    # finest X first, as the certificate lists them (Block-within-Block_Group, ..., Block-within-US)
    per_level = {geo[i]: [m for m in ms if geo.index(m.geolevel) > i] for i in reversed(range(len(geo) - 1))}
    return per_attr, per_level


#: Fixed measurements whose reason the text report prints (the JSON's ``workload.fixed_why`` has all).
FIXED_SHOWN = 6


@dataclass(frozen=True)
class WorkloadSection(Walked):
    """The ``workload`` report section: the file, the fixed measurements, the worst pair, timings; text tables."""

    file: str
    noise: str
    count: int
    delta: float
    """The first reported delta (the breakdown table's)."""
    fixed: tuple[str, ...]
    """Labels of the measurements the invariant fixes (no privacy loss)."""
    fixed_why: Mapping[str, str]
    finest: str
    """The finest geolevel (``Block``)."""
    worst_pair: str | None = field(default=None, metadata=OMIT_NONE)
    """The Semi-DP worst pair analysed, or why none was (absent for plain DP)."""
    seconds: float = 0.0
    key: str = field(default="workload", metadata=INTERNAL)

    def _table(self, report: Report) -> list[str]:
        adv, eff = report.advertised, report.effective
        delta = self.delta

        def eps(b: Breakdown, method: str) -> str:
            e = next((x for x in b.epsilon_delta if x.method == method and x.delta == delta), None)
            return fmt_up(e.epsilon) if e else "-"

        def rho(b: Breakdown) -> str:
            return fmt_up(Fraction(b.rho_exact))

        eff_ok = eff.per_attribute is not None
        head = ["", "rho", "CKS", "exact"] + (["semi rho", "semi CKS", "semi PLD"] if eff_ok else [])
        rows = []
        for kind, label in (("per_attribute", "attribute {}"), ("per_geolevel", self.finest + "-within-{}")):
            for name, a in (getattr(adv, kind) or {}).items():
                row = [label.format(name), rho(a), eps(a, "canonne-kamath-steinke"), eps(a, "pld")]
                if eff_ok:
                    e = getattr(eff, kind)[name]
                    row += [rho(e), eps(e, "canonne-kamath-steinke"), eps(e, "pld")]
                rows.append(row)
        # every column as wide as its widest cell (any geolevel name, any number), at least the usual widths
        widths = [
            max([w, *(len(r[i]) for r in [head, *rows])]) for i, w in enumerate((28, 8, 9, 9, 8, 9, 9)[: len(head)])
        ]

        def line(cells: list[str]) -> str:
            out = [cells[0].ljust(widths[0])] + [c.rjust(w) for c, w in zip(cells[1:], widths[1:])]
            return "  " + " ".join(out[:4]) + (" | " + " ".join(out[4:]) if len(out) > 4 else "")

        lines = [f"  breakdown, epsilon at delta = {fmt_delta(delta)} (certificate: CKS on summed rho):", line(head)]
        lines += [line(r) for r in rows]
        return lines

    def text_lines(self, report: Report) -> list[str]:
        """The workload summary and the breakdown table."""
        fixed = ", ".join(self.fixed) or "none"
        lines = [
            f"workload: {self.count} measurements, {self.noise} noise ({self.file}); fixed by the invariant: {fixed}",
        ]
        why = list(self.fixed_why.items())
        lines += [f"  why fixed: {m}: its cells are unions of invariant cells ({w})" for m, w in why[:FIXED_SHOWN]]
        if len(why) > FIXED_SHOWN:
            lines.append(f"  why fixed: {len(why) - FIXED_SHOWN} more, see fixed_why in the JSON")
        c = report.effective.coarse
        if c is not None:
            lines.append(
                f"  coarse semi-dp a(t)^2 rho = {fmt_up(c.forms['zcdp'])}: "
                + ", ".join(f"epsilon {fmt_up(e.epsilon)} [{e.method}]" for e in c.entries)
            )
        if self.worst_pair:
            lines.append(f"  query-level worst pair: {self.worst_pair}")
        sides = (("advertised", report.advertised), ("effective", report.effective))
        for side, summary in sides:
            if summary.pld_unavailable is not None:
                lines.append(f"  {side}: PLD not composed: {summary.pld_unavailable}")
            for p in summary.pld:
                if p.bracket_note is not None:
                    lines.append(f"  {side}: PLD at delta = {fmt_delta(p.delta)}: {p.bracket_note}")
            aside = next((p.set_aside for p in summary.pld if p.set_aside), None)
            if aside:
                lines.append(
                    f"  {side}: the PLD sets aside the measurement(s) at line(s) {', '.join(map(str, aside))}: noise too "
                    "far from the others' for one loss grid; lower end without them, upper end with their "
                    f"(eps0, delta0 = {SET_ASIDE_DELTA:g})-DP dominating pairs"
                )
        groups = [
            (side, name, group)
            for side, summary in (("advertised", report.advertised), ("semi-dp", report.effective))
            for kind in (summary.per_attribute, summary.per_geolevel)
            for name, group in (kind or {}).items()
        ]
        skipped = [f"{side} {name}" for side, name, group in groups if group.pld_unavailable is not None]
        if skipped:
            lines.append(f"  breakdown groups without a PLD ('-'): {len(skipped)}, see pld_unavailable in the JSON")
        lines += self._table(report)
        gaps = [e.upper - e.lower for _, _, group in groups for e in group.epsilon_delta if isinstance(e, PldEntry)]
        width = f", each within {fmt_up(max(gaps))} of its proven lower end" if gaps else ""
        lines.append(
            f"  (exact and semi PLD: upper ends of certified brackets{width}; brackets in the JSON; computed in "
            f"{self.seconds:.2f} s)"
        )
        return lines

    def markdown_lines(self, report: Report) -> list[str]:
        """The same, as a fenced block."""
        return ["## Workload", "", "```", *self.text_lines(report), "```", ""]


WORST_PAIR = (
    "two records with identical attributes and geography both move to one new record in the same "
    "invariant cell that differs in every other attribute and every finer geographic unit (if any): shift (-2, +2) in every "
    "non-fixed measurement (accountant.workloads.accounting, proof in the module docstring)"
)


def _claim(ctx: Context, eff: Accounted) -> tuple[Outcome | None, Bounds | None]:
    """An epsilon claim decided by the query-level PLD bracket (refuted only below its lower end), with the
    bounds of epsilon at the claim's delta it was decided from."""
    claim = ctx.spec.claim
    if claim is None or claim.guarantee.epsilon is None or ctx.framework != "semi-dp":
        return None, None
    e, d = float(claim.guarantee.epsilon), float(claim.guarantee.delta or 0)
    if d <= 0:
        return None, None
    bracket = eff.pld
    if eff.pld_unavailable is not None:
        upper = min(x.epsilon for x in epsilon_delta(ZCDP(rho_up(eff.rho), ctx.relation), d) if x.epsilon is not None)
        bounds = Bounds(0.0, upper, upper)
        if e >= upper:
            return Verified(
                f"query-level Semi-DP epsilon <= {fmt_up(upper)} <= claimed {e} at delta = {d:g} (zCDP)"
            ), bounds
        return Unknown(
            f"the PLD was not composed ({eff.pld_unavailable}); zCDP gives only epsilon <= {fmt_up(upper)}"
        ), bounds
    if bracket is None:
        return Verified("no measurement changes on a semi-adjacent pair: 0-DP"), Bounds(0.0, 0.0, 0.0)
    r = eff.decide_at(d, e, Budget.until(ctx.deadline).split(CLAIM_SHARE))
    b = r.interval
    bounds = Bounds(b.lower, b.upper, b.upper)
    grid = f"pld, {r.points} grid points" if r.points is not None else "pld"
    if e >= b.upper:
        return Verified(
            f"query-level Semi-DP epsilon <= {fmt_up(b.upper)} <= claimed {e} at delta = {d:g} ({grid})"
        ), bounds
    if e < b.lower:
        return Refuted(
            f"query-level Semi-DP epsilon >= {fmt_down(b.lower)} > claimed {e} at delta = {d:g} ({grid} lower bound, "
            f"attained by the worst pair: {WORST_PAIR})"
        ), bounds
    why = f"; {r.shortfall()}" if r.shortfall() else f"; refinement stopped: {r.stopped_by}" if r.stopped_by else ""
    return Unknown(
        f"claimed {e} lies in the pld bracket [{fmt_down(b.lower)}, {fmt_up(b.upper)}] at delta = {d:g}{why}"
    ), bounds


#: Share of the remaining ``--time-limit`` budget a claim's refinement may use (finer grids until decided).
CLAIM_SHARE = 0.5
#: Share of the remaining ``--time-limit`` budget each main composition's refinement to the default width may use.
MAIN_SHARE = 0.25


#: Share of the remaining ``--time-limit`` budget the breakdowns' PLDs may use; later groups report
#: ``pld_unavailable`` (their exact rho and zCDP conversions stand).
BREAKDOWN_SHARE = 0.6


def _breakdowns(
    ctx: Context,
    noise: str,
    per_attr: dict[str, list[Measurement]],
    per_level: dict[str, list[Measurement]],
    semi_radius: int | None,
) -> dict[tuple[str, str], Accounted]:
    """The certificate's breakdowns, advertised (``"adv"``) and query-level (``"eff"``), within a time share.

    Keys are ``(side, group name)``; attribute and geolevel names differ (the loader checks it).
    """
    jobs: list[tuple[str, str, list[Measurement], int | None]] = [
        ("adv", k, v, None) for k, v in (*per_attr.items(), *per_level.items())
    ]
    if semi_radius is not None:
        jobs += [("eff", k, v, semi_radius) for k, v in (*per_attr.items(), *per_level.items())]
    stage(f"{ctx.spec.name}: the certificate's breakdowns ({len(jobs)} groups)")
    budget = Budget.until(ctx.deadline).split(BREAKDOWN_SHARE)
    out: dict[tuple[str, str], Accounted] = {}
    with Progress("workload breakdowns", total=len(jobs)) as bar:
        for i, (side, name, group, radius) in enumerate(jobs):
            skip = TIME_SKIP if budget.expired else None
            out[side, name] = account(group, noise, radius, skip=skip).evaluated(ctx.deltas, budget)
            bar.update(i + 1, f"{side} {name}")
    return out


TIME_SKIP = "not composed: the --time-limit budget ran out first; the zCDP values are upper bounds"


def workload_result(ctx: Context, file: MeasurementsKey, noise: str, ms: Sequence[Measurement]) -> KindResult:
    """The kind result of a published workload (see the module docstring): ``ms`` are the measurements read from
    ``file`` (validated by the loader)."""
    start = time.monotonic()
    spec, rel, inv, deltas = ctx.spec, ctx.relation, ctx.invariant, ctx.deltas
    per_attr, per_level = groups(spec, ms)
    a = ctx.a
    query_level = ctx.framework == "semi-dp" and a.exact and a.value <= 2
    stage(f"{spec.name}: composing the PLD of {len(ms)} measurements ({noise}), advertised")
    budget = Budget.until(ctx.deadline)
    adv = account(ms, noise, None).evaluated(deltas, budget.split(MAIN_SHARE))
    eff_all: Accounted | None = None
    if query_level:
        stage(f"{spec.name}: composing the PLD of the query-level Semi-DP worst pair (a(t) = {a.value})")
        eff_all = account(ms, noise, a.value).evaluated(deltas, budget.split(MAIN_SHARE))
    breakdown = _breakdowns(ctx, noise, per_attr, per_level, a.value if query_level else None)
    advertised = ZCDP(rho_up(adv.rho), rel)
    adv_summary = (
        GuaranteeSummary.of(advertised, deltas)
        .with_pld(adv.pld_entries(deltas))
        .with_extra(
            rho_exact=str(adv.rho),
            pld_unavailable=adv.pld_unavailable,
            per_attribute={k: breakdown["adv", k].breakdown(deltas, rel, len(v)) for k, v in per_attr.items()},
            per_geolevel={k: breakdown["adv", k].breakdown(deltas, rel, len(v)) for k, v in per_level.items()},
        )
    )
    coarse = semi_dp(advertised, inv, a.value)
    extra: dict[str, object] = {}
    claim: Outcome | None = None
    claim_bounds: Bounds | None = None
    worst_pair: str
    if query_level and eff_all is not None:
        eff = eff_all
        semi_rel = SemiAdjacent(rel, inv, a.value)
        effective: Any = ZCDP(rho_up(eff.rho), semi_rel)
        extra = {
            "method": "query-level",
            "rho_exact": str(eff.rho),
            "pld_unavailable": eff.pld_unavailable,
            "coarse": GuaranteeSummary.of(coarse, deltas),
            "per_attribute": {k: breakdown["eff", k].breakdown(deltas, semi_rel, len(v)) for k, v in per_attr.items()},
            "per_geolevel": {k: breakdown["eff", k].breakdown(deltas, semi_rel, len(v)) for k, v in per_level.items()},
        }
        worst_pair = WORST_PAIR if a.value == 2 else "one record changes within its invariant cell"
        claim, claim_bounds = _claim(ctx, eff)
        curves = _curves(adv, eff, advertised, coarse, ctx, claim, claim_bounds)
    elif ctx.framework == "semi-dp":
        effective = coarse
        worst_pair = (
            f"not analysed (a(t) {'= ' + str(a.value) if a.exact else 'known by bounds'}): the coarse "
            "group-privacy guarantee a(t)^2 rho is reported [CA24, Prop. 15]"
        )
        curves = None
    else:
        from semidp.accountant.guarantees.semidp import joint_release_dp

        effective = joint_release_dp(advertised, inv, ctx.space)
        curves = None
        worst_pair = ""
    section = WorkloadSection(
        measurements_file(file),
        noise,
        len(ms),
        deltas[0],
        tuple(m.label for m in ms if m.fixed),
        {m.label: m.fixed_by for m in ms if m.fixed},
        geography_names(spec)[-1],
        worst_pair or None,
        time.monotonic() - start,
    )
    plots = (
        ()
        if curves is None
        else (
            Plot("workload", "tradeoff curves: advertised, exact composition, coarse and query-level Semi-DP", curves),
        )
    )
    return KindResult(
        advertised=advertised,
        effective=effective,
        seed=None,  # nothing is drawn: no randomness to report
        advertised_summary=adv_summary,
        effective_extra=extra,
        effective_pld=eff_all.pld_entries(deltas) if query_level and eff_all is not None else (),
        claim_override=claim,
        claim_bounds=claim_bounds,
        sections=(section, MeasurementsSection(tuple(MeasurementRow.of(m) for m in ms))),
        final_checks=(
            Check(
                "invariant-preserved",
                Skipped("a published release is audited through its measurements; no draws to check"),
            ),
        ),
        plots=plots,
    )


@dataclass(frozen=True)
class MeasurementRow(Walked):
    """One row of the ``measurements`` array: the CSV line, geolevel, query, exact scale (and rho) as strings."""

    line: int
    geolevel: str
    query: str
    scale: str
    rho: str | None = field(default=None, metadata=OMIT_NONE)
    fixed: bool = False

    @classmethod
    def of(cls, m: Measurement) -> MeasurementRow:
        """The row of a measurement read from the CSV file."""
        return cls(m.line, m.geolevel, m.query, str(m.scale), None if m.rho is None else str(m.rho), m.fixed)


@dataclass(frozen=True)
class MeasurementsSection(Unrendered):
    """The ``measurements`` array: every measurement of the workload, in file order (JSON only)."""

    rows: tuple[MeasurementRow, ...]
    key: str = "measurements"

    def to_json(self) -> list[Any]:
        """The array of rows."""
        return [r.to_json() for r in self.rows]


def _curves(
    adv: Accounted,
    eff: Accounted,
    advertised: ZCDP,
    coarse: Any,
    ctx: Context,
    claim: Outcome | None,
    bounds: Bounds | None,
) -> Any:
    from semidp.verify.privacy_view import ProvenPoint
    from semidp.verify.spec_values import guarantee_of
    from semidp.verify.workload_plot import draw_workload_plot

    c = ctx.spec.claim
    shown = None
    proven = None
    if c is not None:
        g = c.guarantee
        text = ", ".join(
            f"{k} = {float(v):g}" for k in ("epsilon", "delta", "mu", "zcdp") if (v := getattr(g, k)) is not None
        )
        shown = (f"{c.framework}, {text or 'rdp'}", guarantee_of(g, advertised.relation))
        if bounds is not None and g.epsilon is not None and g.delta:
            proven = ProvenPoint(bounds.lower, float(g.delta))
    verdict = {Refuted: "fails", Verified: "holds", Unknown: "inconclusive"}.get(type(claim)) if claim else None

    def draw(path: Any, title: str) -> Any:
        return draw_workload_plot(
            path,
            title,
            [
                ("advertised rho (CKS)", advertised),
                ("exact composition (pld)", adv.pld),
                ("coarse Semi-DP a^2 rho (CKS)", coarse),
                ("query-level Semi-DP (pld)", eff.pld),
            ],
            claim=shown,
            verdict=verdict,
            proven=proven,
        )

    return draw


__all__ = ["Accounted", "WorkloadSection", "account", "groups", "rho_up", "workload_result"]
