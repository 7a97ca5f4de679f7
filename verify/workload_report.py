"""A published measurement workload described as a release, and its report sections.

A ``published`` spec with ``measurements`` (:mod:`verify.workload_spec`) describes a
:class:`~accountant.releases.measurements.MeasurementRelease` (:func:`workload_release`): one part per measurement,
the certificate's breakdowns as its part groups -- ``per_attribute`` (the measurements whose query splits the
feature) and ``per_geolevel`` (keyed by X: the measurements at levels strictly finer than X, the certificate's
"Block-within-X"). The runner accounts it (:mod:`verify.workload_accounting`: advertised, exact and query-level
Semi-DP) and decides the claim from its PLD bracket (:func:`verify.runner.bracket_claim`). This module holds the
``workload`` section (text tables of the breakdowns) and the ``measurements`` array.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from semidp.accountant.core.outcome import Skipped
from semidp.accountant.releases.measurements import MeasurementRelease, PartGroup, measurement_release
from semidp.accountant.workloads.accounting import SET_ASIDE_DELTA
from semidp.verify.context import Context, KindResult
from semidp.verify.display import fmt_delta, fmt_up
from semidp.verify.json_walk import INTERNAL, OMIT_NONE, Walked
from semidp.verify.report import Breakdown, Check, PldEntry, Report
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


def workload_release(ctx: Context, noise: str, ms: Sequence[Measurement]) -> MeasurementRelease:
    """The release of the measurements ``ms`` (read from the spec's file) next to the invariant, with the
    certificate's breakdowns (:func:`groups`) as its part groups."""
    per_attr, per_level = groups(ctx.spec, ms)
    index = {id(m): i for i, m in enumerate(ms)}
    parts = [
        PartGroup(kind, name, tuple(index[id(m)] for m in group))
        for kind, named in (("per_attribute", per_attr), ("per_geolevel", per_level))
        for name, group in named.items()
    ]
    return measurement_release(
        ctx.relation,
        ctx.invariant,
        [m.accountant_value() for m in ms],
        noise,
        lines=[m.line for m in ms],
        groups=parts,
    )


def worst_pair_text(ctx: Context) -> str | None:
    """The Semi-DP worst pair the runner analyses (a(t) <= 2 known exactly), or why none is (absent for plain DP)."""
    a = ctx.a
    if ctx.framework != "semi-dp":
        return None
    if a.exact and a.value <= 2:
        return WORST_PAIR if a.value == 2 else "one record changes within its invariant cell"
    return (
        f"not analysed (a(t) {'= ' + str(a.value) if a.exact else 'known by bounds'}): the coarse "
        "group-privacy guarantee a(t)^2 rho is reported [CA24, Prop. 15]"
    )


def workload_result(ctx: Context, file: MeasurementsKey, noise: str, ms: Sequence[Measurement]) -> KindResult:
    """The kind result of a published workload: its release (:func:`workload_release`) and sections; the runner
    accounts it (:mod:`verify.workload_accounting`). ``ms`` are the measurements read from ``file`` (validated by
    the loader)."""
    start = time.monotonic()
    spec = ctx.spec
    release = workload_release(ctx, noise, ms)
    section = WorkloadSection(
        measurements_file(file),
        noise,
        len(ms),
        ctx.deltas[0],
        tuple(m.label for m in ms if m.fixed),
        {m.label: m.fixed_by for m in ms if m.fixed},
        geography_names(spec)[-1],
        worst_pair_text(ctx),
        time.monotonic() - start,
    )
    return KindResult(
        release=release,
        seed=None,  # nothing is drawn: no randomness to report
        sections=(section, MeasurementsSection(tuple(MeasurementRow.of(m) for m in ms))),
        final_checks=(
            Check(
                "invariant-preserved",
                Skipped("a published release is audited through its measurements; no draws to check"),
            ),
        ),
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


__all__ = [
    "MeasurementsSection",
    "WORST_PAIR",
    "WorkloadSection",
    "groups",
    "rho_up",
    "workload_release",
    "workload_result",
    "worst_pair_text",
]
