"""The typed audit report (contract: ``specs/README.md``), from which JSON, text and Markdown are rendered.

A :class:`Report` is one value: the shared header (:class:`SpecFile`, :class:`ToolInfo`, seed, relation,
:class:`InvariantInfo`, a(t) as :class:`SemiAdjacentInfo`; small walked dataclasses), the advertised and effective :class:`GuaranteeSummary`, the
kind's :class:`Section` objects (``mechanism``, ``test``, ``samples``, ...),
the claim (:class:`ClaimInfo`) and the :class:`Check` list. Checks carry an
:class:`~accountant.core.outcome.Outcome`; the verdict is a function of the outcome
*types* (:func:`verdict_of`), never of strings. :meth:`Report.to_json` gives the
contract's JSON object (field names fixed by contract v1: add, never rename).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from semidp.accountant.core.outcome import Bounds, NotApplicable, Outcome, Refuted, Skipped, Unknown, Verified
from semidp.accountant.guarantees.conversion_routes import AnyGuarantee, EpsilonDelta, epsilon_delta, native_forms
from semidp.verify.json_walk import JSON, OMIT_NONE, Walked, to_json

Status = Literal["pass", "fail", "skip"]
Verdict = Literal["holds", "fails", "inconclusive"]


def status_of(outcome: Outcome) -> Status:
    """Contract status of a check: ``pass`` (verified), ``fail`` (refuted), else ``skip`` (never a pass)."""
    if isinstance(outcome, Verified):
        return "pass"
    if isinstance(outcome, Refuted):
        return "fail"
    return "skip"


def outcome_name(outcome: Outcome) -> str:
    """The report's ``outcome`` field: ``verified``, ``refuted``, ``unknown``, ``not-applicable`` or ``skipped``."""
    return {
        Verified: "verified",
        Refuted: "refuted",
        Unknown: "unknown",
        NotApplicable: "not-applicable",
        Skipped: "skipped",
    }[type(outcome)]


def detail_of(outcome: Outcome) -> str:
    """The human-readable evidence of an outcome (an unknown says ``inconclusive:``)."""
    if isinstance(outcome, Verified):
        return outcome.certificate
    if isinstance(outcome, Refuted):
        return outcome.counterexample
    if isinstance(outcome, Unknown):
        return "inconclusive: " + outcome.reason
    return outcome.reason


@dataclass(frozen=True)
class Check:
    """One named check and its outcome; the ``claim`` check may carry the epsilon ``bounds`` its comparison proved.

    ``bounds`` (:class:`~accountant.core.outcome.Bounds`): ``lower`` is a proven lower bound of the release's epsilon
    at the claim's delta, ``upper`` a proven upper bound, ``estimate`` the reported value (JSON ``bounds``).
    """

    name: str
    outcome: Outcome
    bounds: Bounds | None = None

    @property
    def status(self) -> Status:
        """``pass``, ``fail`` or ``skip``."""
        return status_of(self.outcome)

    @property
    def detail(self) -> str:
        """The evidence, as text."""
        return detail_of(self.outcome)

    def to_json(self) -> JSON:
        """``{"name", "status", "outcome", "detail"[, "bounds": {"lower", "estimate", "upper"}]}``."""
        out: JSON = {
            "name": self.name,
            "status": self.status,
            "outcome": outcome_name(self.outcome),
            "detail": self.detail,
        }
        if self.bounds is not None:
            b = self.bounds
            out["bounds"] = {"lower": b.lower, "estimate": b.estimate, "upper": b.upper}
        return out


def verdict_of(checks: list[Check]) -> Verdict:
    """``fails`` if any check was refuted, else ``inconclusive`` if any was unknown, else ``holds``.

    :class:`~accountant.core.outcome.NotApplicable` and :class:`~accountant.core.outcome.Skipped`
    checks neither fail nor make the verdict inconclusive.
    """
    if any(isinstance(c.outcome, Refuted) for c in checks):
        return "fails"
    if any(isinstance(c.outcome, Unknown) for c in checks):
        return "inconclusive"
    return "holds"


@dataclass(frozen=True)
class PldEntry:
    """One ``method = "pld"`` entry of a guarantee's ``epsilon_delta``: the upper end of a PLD bracket.

    ``epsilon`` (= ``upper``) bounds the privacy loss at ``delta`` from the pessimistic composition of the
    parts' privacy-loss distributions, ``lower`` from the optimistic one (discretisation and FFT rounding
    bounded, :mod:`accountant.pld.engine`): that bracket is the entry's certificate (:data:`PLD_CERTIFICATE`).
    ``set_aside`` lists the CSV lines of measurements bounded through their (eps0, delta0) guarantee;
    ``bracket_note`` says why the bracket is wider than the requested relative width
    (``"bracket width 2.1e-3 > 1e-3: budget"``, :meth:`semidp.accountant.pld.refine.RefinedInterval.shortfall`).
    """

    delta: float
    lower: float
    upper: float
    set_aside: tuple[int, ...] = ()
    bracket_note: str | None = None

    @property
    def epsilon(self) -> float:
        """The reported epsilon: the bracket's upper end."""
        return self.upper

    @property
    def method(self) -> str:
        """``pld``: how the entry was computed (the JSON ``method``)."""
        return "pld"

    def to_json(self) -> JSON:
        """``{"delta", "epsilon", "method": "pld", "bracket": {"lower", "upper"}[, "set_aside"][, "bracket_note"]}``."""
        out: JSON = {
            "delta": self.delta,
            "epsilon": self.upper,
            "method": "pld",
            "bracket": {"lower": self.lower, "upper": self.upper},
        }
        if self.set_aside:
            out["set_aside"] = list(self.set_aside)
        if self.bracket_note is not None:
            out["bracket_note"] = self.bracket_note
        return out


#: How a PLD entry is certified (named by the ``conversions-certified`` check).
PLD_CERTIFICATE = "the PLD bracket (pessimistic composition, discretisation and FFT rounding bounded)"


@dataclass(frozen=True)
class Breakdown(Walked):
    """One entry of a workload guarantee's ``per_attribute`` or ``per_geolevel`` breakdown (:mod:`verify.workload_report`).

    ``rho`` is the group's exact zCDP ``rho_exact`` (a rational, as a string) rounded up; ``epsilon_delta`` its
    conversions and PLD entries, as in a :class:`GuaranteeSummary`.
    """

    rho: float
    rho_exact: str
    measurements: int
    epsilon_delta: tuple[EpsilonDelta | PldEntry, ...]
    pld_unavailable: str | None = field(default=None, metadata=OMIT_NONE)


@dataclass(frozen=True)
class LowerBound(Walked):
    """One ``epsilon_lower`` entry of a black box's effective guarantee: the statistical audit's lower bound of
    epsilon at ``delta`` (at the audit's confidence; ``method = "statistical-audit"``), never an upper bound."""

    delta: float
    epsilon: float
    method: str


@dataclass(frozen=True)
class Prop21(Walked):
    """A composed release's two Semi-DP orders [CA24, Prop. 21]: group each part then compose, or the reverse."""

    semi_first: GuaranteeSummary
    composition_first: GuaranteeSummary
    note: str


@dataclass(frozen=True)
class GuaranteeSummary:
    """A guarantee in every form it converts to: its parameters and labelled ``(epsilon, delta, method)`` entries.

    ``epsilon_delta`` holds the conversion routes' entries, ``pld`` the PLD brackets of a composed release
    (reported after them, in the same JSON list). The optional fields after ``pld`` are written after
    ``epsilon_delta`` when set, in declaration order (:data:`NOTE_FIELDS`): ``source`` (where a black box's
    guarantee comes from), ``method`` and ``rho_exact`` (a workload's exact rational rho, as a string),
    ``pld_unavailable`` (why no PLD entry), ``coarse`` (the group-privacy guarantee beside a query-level one),
    ``prop21``, the workload breakdowns ``per_attribute``/``per_geolevel``, and a black box's audit lower bounds
    ``epsilon_lower`` (:class:`LowerBound`).
    """

    relation: str
    forms: JSON
    """The guarantee's own parameters (:func:`accountant.guarantees.conversion_routes.native_forms`)."""
    epsilon_delta: tuple[EpsilonDelta, ...]
    framework: str | None = None
    pld: tuple[PldEntry, ...] = ()
    source: str | None = None
    method: str | None = None
    rho_exact: str | None = None
    pld_unavailable: str | None = None
    coarse: GuaranteeSummary | None = None
    prop21: Prop21 | None = None
    per_attribute: Mapping[str, Breakdown] | None = None
    per_geolevel: Mapping[str, Breakdown] | None = None
    epsilon_lower: tuple[LowerBound, ...] | None = None
    guarantee: AnyGuarantee | None = field(default=None, compare=False, repr=False)
    """The guarantee summarised (not written): :mod:`verify.certify` re-certifies the entries against it."""

    @classmethod
    def of(cls, g: AnyGuarantee, deltas: list[float], framework: str | None = None) -> GuaranteeSummary:
        """Summarise ``g`` at each of ``deltas`` by every route of :mod:`accountant.guarantees.conversion_routes`."""
        eds = tuple(e for d in deltas for e in epsilon_delta(g, d))
        return cls(g.relation.describe(), native_forms(g), eds, framework, guarantee=g)

    def nested(self) -> list[tuple[str, GuaranteeSummary | Breakdown]]:
        """The summaries and breakdowns reported inside this one, by JSON path (``coarse``, ``per_attribute.sex``)."""
        out: list[tuple[str, GuaranteeSummary | Breakdown]] = []
        if self.coarse is not None:
            out.append(("coarse", self.coarse))
        if self.prop21 is not None:
            out += [("prop21.semi_first", self.prop21.semi_first)]
            out += [("prop21.composition_first", self.prop21.composition_first)]
        for kind, groups in (("per_attribute", self.per_attribute), ("per_geolevel", self.per_geolevel)):
            out += [(f"{kind}.{name}", b) for name, b in (groups or {}).items()]
        return out

    def __post_init__(self) -> None:
        shadowed = sorted(set(self.forms) & {"framework", "relation", "epsilon_delta", *NOTE_FIELDS})
        if shadowed:  # a programming error: one key would be written twice
            raise ValueError(f"guarantee forms {shadowed} would shadow typed fields of the guarantee summary")

    def with_extra(self, **notes: Any) -> GuaranteeSummary:
        """A copy with some of the optional fields :data:`NOTE_FIELDS` set (any other name: ``ValueError``)."""
        unknown = sorted(set(notes) - set(NOTE_FIELDS))
        if unknown:  # a programming error: the JSON contract has no such field
            raise ValueError(f"{unknown} are not optional fields of the guarantee summary ({', '.join(NOTE_FIELDS)})")
        return dataclasses.replace(self, **notes)

    def with_pld(self, entries: tuple[PldEntry, ...]) -> GuaranteeSummary:
        """A copy with the PLD entries of a composed release."""
        return dataclasses.replace(self, pld=self.pld + tuple(entries))

    @property
    def entries(self) -> tuple[EpsilonDelta | PldEntry, ...]:
        """Every reported ``(epsilon, delta)``: the conversion routes' entries, then the PLD ones (JSON order)."""
        return (*self.epsilon_delta, *self.pld)

    def to_json(self) -> JSON:
        """The contract's guarantee object."""
        head: JSON = {"framework": self.framework} if self.framework is not None else {}
        out: JSON = {
            **head,
            "relation": self.relation,
            **self.forms,
            "epsilon_delta": [e.to_json() for e in self.entries],
        }
        for name in NOTE_FIELDS:
            value = getattr(self, name)
            if value is not None:
                out[name] = to_json(value)
        return out


NOTE_FIELDS = (
    "source",
    "method",
    "rho_exact",
    "pld_unavailable",
    "coarse",
    "prop21",
    "per_attribute",
    "per_geolevel",
    "epsilon_lower",
)
"""The optional fields of a :class:`GuaranteeSummary`, in JSON order (after ``epsilon_delta``)."""


@dataclass(frozen=True)
class ToolInfo(Walked):
    """``tool``: the program that wrote the report, and its version."""

    name: str
    version: str


@dataclass(frozen=True)
class SpecFile(Walked):
    """``spec``: the spec file as loaded (its path, and the sha256 of its bytes, hex)."""

    path: str
    sha256: str


@dataclass(frozen=True)
class InvariantInfo(Walked):
    """``invariant``: the invariant's kind (the spec's ``invariant.kind``) and a one-line description."""

    kind: str
    description: str


@dataclass(frozen=True)
class SemiAdjacentInfo(Walked):
    """``semi_adjacent_parameter``: a(t), a proven upper bound (``value``) and lower bound (``lower``; both equal
    when ``exact``), how it was obtained, a worst case and, after a search, the witness histograms."""

    value: int
    lower: int
    method: str
    witness: str
    exact: bool
    scope: str
    """``"actual t"`` (at the given table) or ``"worst case over t"``."""
    witness_data: Mapping[str, object] | None = field(default=None, metadata=OMIT_NONE)
    """The search's witness, JSON-ready (cells row-major; records as 1-based levels)."""

    def bounds_text(self, bold: bool = False) -> str:
        """``a(t) = v`` when exact, else ``a(t) in [lower, upper]`` (bounds shown as bounds; ``**`` when bold)."""
        b = "**" if bold else ""
        if self.exact:
            return f"a(t) = {b}{self.value}{b}"
        return f"a(t) in {b}[{self.lower}, {self.value}]{b}"


@dataclass(frozen=True)
class ClaimInfo(Walked):
    """``claim``: the spec's claim, its framework and its guarantee table's keys (floats)."""

    framework: str
    guarantee: Mapping[str, object]

    def number(self, key: str) -> float | None:
        """The guarantee's parameter ``key`` (``epsilon``, ``delta``, ``zcdp``, ``mu``), ``None`` when absent."""
        v = self.guarantee.get(key)
        return float(v) if isinstance(v, (int, float)) else None


class Section(Protocol):
    """A kind's part of the report: a JSON object under ``key`` and its text and Markdown renderings."""

    @property
    def key(self) -> str: ...

    def to_json(self) -> Any: ...

    def text_lines(self, report: Report) -> list[str]: ...

    def markdown_lines(self, report: Report) -> list[str]: ...


@dataclass(frozen=True)
class Report:
    """One audit report (see the module docstring)."""

    name: str
    title: str
    tool: ToolInfo
    spec: SpecFile
    seed: int | None
    relation: str
    invariant: InvariantInfo
    semi_adjacent_parameter: SemiAdjacentInfo
    advertised: GuaranteeSummary
    effective: GuaranteeSummary
    claim: ClaimInfo | None
    checks: tuple[Check, ...]
    references: tuple[str, ...]
    sections: tuple[Section, ...] = ()
    """The kind's sections, in report order (keys unique)."""
    plots: tuple[str, ...] = ()
    """PNG file names written next to the JSON by ``--out``."""
    samples_file: str | None = None
    """``<name>.samples.npy`` when ``--out`` wrote the draws."""
    plots_note: str | None = None
    """Why plots of ``--out`` are missing (the budget ran out after the verdict; the verdict stands)."""

    @property
    def verdict(self) -> Verdict:
        """Computed from the checks' outcome types (:func:`verdict_of`)."""
        return verdict_of(list(self.checks))

    def section(self, key: str) -> Section | None:
        """The kind's section under ``key``, if any."""
        return next((s for s in self.sections if s.key == key), None)

    def to_json(self) -> JSON:
        """The contract's JSON report (field names of contract v1; added fields only)."""
        out: JSON = {
            "name": self.name,
            "title": self.title,
            "tool": self.tool.to_json(),
            "spec": self.spec.to_json(),
            "seed": self.seed,
            "relation": self.relation,
            "invariant": self.invariant.to_json(),
            "semi_adjacent_parameter": self.semi_adjacent_parameter.to_json(),
        }
        for s in self.sections:
            out[s.key] = s.to_json()
        out.update(
            advertised=self.advertised.to_json(),
            effective=self.effective.to_json(),
            claim=None if self.claim is None else self.claim.to_json(),
            checks=[c.to_json() for c in self.checks],
            verdict=self.verdict,
            references=list(self.references),
        )
        if self.plots:
            out["plots"] = list(self.plots)
        if self.samples_file is not None:
            out["samples_file"] = self.samples_file
        if self.plots_note is not None:
            out["plots_note"] = self.plots_note
        return out


__all__ = [
    "Breakdown",
    "Check",
    "ClaimInfo",
    "GuaranteeSummary",
    "InvariantInfo",
    "NOTE_FIELDS",
    "Prop21",
    "PLD_CERTIFICATE",
    "PldEntry",
    "Report",
    "Section",
    "SemiAdjacentInfo",
    "SpecFile",
    "Status",
    "ToolInfo",
    "Verdict",
    "detail_of",
    "outcome_name",
    "status_of",
    "verdict_of",
]
