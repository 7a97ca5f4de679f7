"""The spec runner: a spec in, a typed :class:`~verify.report.Report` out (contract: ``specs/README.md``).

Describe first, then account (house style R3, R16). The runner does the part
every kind shares, once: the data space, invariant and relation as
:mod:`accountant` values, the semi-adjacent parameter a(t) at the table, the
claim's framework; then it looks the kind up in :mod:`verify.registry` and runs
it; then it adds the shared checks -- a(t) re-checked independently
(:mod:`verify.semi_adjacent_check`), every reported (epsilon, delta) re-certified
(:mod:`verify.certify`), the claim (:mod:`verify.claims`), the sensitivity
section of a ``[query]`` for kinds that report it -- and the verdict follows
from the checks' outcome types.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from semidp.accountant.combinatorics.semiadjacent import semi_adjacent_parameter
from semidp.accountant.core.budget import Budget, budget_argument
from semidp.accountant.core.errors import InvalidArgument, InvalidSpec, UnsupportedRelease
from semidp.accountant.core.outcome import Bounds, NotApplicable, Outcome, Refuted, Unknown, Verified
from semidp.accountant.guarantees.conversion_routes import AnyGuarantee, EpsilonDelta, epsilon_delta
from semidp.accountant.guarantees.definitions import GDP, ZCDP, ApproxDP, Guarantee
from semidp.accountant.guarantees.relations import SemiAdjacent
from semidp.accountant.guarantees.semidp import NoFiniteGuarantee, joint_release_dp, semi_dp
from semidp.accountant.releases.accounting import (
    AuditAccount,
    account,
    base_guarantees,
    covering_radius,
    profile_not_attained,
    states_base,
    statistical_audit,
    upper_bound_only,
)
from semidp.accountant.releases.measurements import MeasurementRelease
from semidp.accountant.releases.model import KnownGuarantee, Release, Shift
from semidp.verify.certify import certify_summary, section_summaries
from semidp.verify.claims import check_composed_claim, decide
from semidp.verify.context import MIN_STEP_SECONDS, Context, KindResult, Plot
from semidp.verify.display import fmt_down, fmt_up
from semidp.verify.exact_composition import ExactSum, decide_exact, decimal_claim, exact_sum
from semidp.verify.load import validate
from semidp.verify.privacy_claim import PrivacyClaim
from semidp.verify.registry import lookup, prepare_sections
from semidp.verify.report import (
    Check,
    ClaimInfo,
    GuaranteeSummary,
    InvariantInfo,
    LowerBound,
    Prop21,
    Report,
    Section,
    SemiAdjacentInfo,
    SpecFile,
    ToolInfo,
)
from semidp.verify.run_options import DEFAULT_OPTIONS, RunOptions
from semidp.verify.semi_adjacent_check import check_semi_adjacent
from semidp.verify.sensitivity_report import AnySensitivity, SensitivitySection, sensitivity_section
from semidp.verify.spec import GuaranteeSpec, Spec
from semidp.verify.spec_values import guarantee_spec_json, invariant_of, relation_of, space_of
from semidp.verify.version import __version__
from semidp.verify.workload_accounting import WorkloadAccount, account_workload, timed_sections, workload_plot
from semidp.verify.workload_report import WORST_PAIR, rho_up


@dataclass(frozen=True)
class Audit:
    """The result of auditing one spec: the typed report and the values behind it (for plots and files)."""

    typed: Report
    """The report value; :attr:`report` is its JSON."""
    advertised: Guarantee
    """The advertised guarantee (or calibration target)."""
    effective: AnyGuarantee | None
    """What holds for the joint release in the claim's framework (``None``: a black box, none certified)."""
    samples: NDArray[np.float64] | None = None
    """Drawn releases, ``(samples, cells)`` float64 row-major (``None`` when the kind draws none)."""
    plots: tuple[Plot, ...] = ()
    """The kind's plots (the shared privacy plot is drawn by the CLI)."""

    @property
    def report(self) -> dict[str, Any]:
        """The contract's JSON report."""
        return self.typed.to_json()

    @property
    def verdict(self) -> str:
        """``holds``, ``fails`` or ``inconclusive``."""
        return self.typed.verdict


def claim_of(g: GuaranteeSpec) -> PrivacyClaim:
    """A spec guarantee table as the claim :func:`verify.claims.decide` takes (:meth:`PrivacyClaim.of_spec`)."""
    return PrivacyClaim.of_spec(g)


def _pure(g: GuaranteeSpec) -> bool:
    """Whether the claim is pure DP (form ``epsilon`` with ``delta = 0``)."""
    c = claim_of(g)
    return c.form == "epsilon" and c.exact("delta") == 0


def decide_claim(
    claim: PrivacyClaim,
    effective: AnyGuarantee,
    parts: Sequence[Guarantee] | None = None,
    budget: Budget | None = None,
) -> tuple[Outcome, Bounds | None]:
    """:func:`verify.claims.decide`, and for a composed release (``parts``) its PLD bracket.

    A vacuous guarantee (delta >= 1) says nothing of the release, so it never refutes. The closed-form
    composition of approximate or pure DP parts is not tight, so only the PLD bracket of the parts' dominating
    pairs may refute an ``(epsilon, delta)`` claim on it; either route may verify. GDP parts
    compose exactly in closed form, so their closed-form refutation stands.
    """
    outcome, bounds = decide(effective, claim)
    if isinstance(outcome, Refuted) and isinstance(effective, ApproxDP) and effective.delta >= 1:
        return Unknown(
            f"the effective guarantee is vacuous (delta = {effective.delta:g}: e.g. a sampler whose TV distance is not "
            f"bounded, see the kind's checks), an upper bound only: it does not refute ({outcome.counterexample})"
        ), bounds
    composed = (
        None if parts is None or isinstance(outcome, Verified) else check_composed_claim(parts, claim, budget=budget)
    )
    if composed is None:
        return outcome, bounds
    # composed[1] bounds delta at the claim's epsilon, not epsilon: never reported as the claim's epsilon bounds
    if not isinstance(composed[0], Unknown):  # the bracket decides
        return composed[0], bounds
    if not isinstance(outcome, Refuted) or (parts is not None and all(isinstance(p, GDP) for p in parts)):
        return outcome, bounds
    return Unknown(
        f"{composed[0].reason}; the closed-form composition ({outcome.counterexample}) is not tight for these "
        "parts, so it does not refute"
    ), bounds


def composed_parts(ctx: Context, radius: int, release: Release | None = None) -> list[Guarantee] | None:
    """The released parts of a composed release (one described without an advertised guarantee, e.g.
    ``mechanism.components``) as guarantees on the claim's relation: each grouped to ``radius`` for Semi-DP
    [CA24, Prop. 21, Semi-DP first]; ``None`` for a release that is not composed (or a kind without a release)."""
    if release is None or release.black_box is not None or release.advertised is not None or not states_base(release):
        return None
    parts = base_guarantees(release)
    if ctx.framework == "semi-dp":
        return [semi_dp(p, ctx.invariant, radius) for p in parts]
    if ctx.framework != "dp" or isinstance(joint_release_dp(parts[0], ctx.invariant, ctx.space), NoFiniteGuarantee):
        return None  # plain DP: the invariant itself breaks every finite guarantee, whatever is composed
    return parts


def claim_check(
    spec: Spec,
    effective: AnyGuarantee,
    parts: Sequence[Guarantee] | None = None,
    exact: ExactSum | None = None,
    budget: Budget | None = None,
) -> list[Check]:
    """The ``claim`` check (with epsilon bounds when the comparison yields them), if the spec has a claim; a
    composed release's ``exact`` sum decides first when it can (:mod:`verify.exact_composition`)."""
    if spec.claim is None:
        return []
    decided = None if exact is None else decide_exact(decimal_claim(spec.claim.guarantee), exact)
    if decided is not None:
        return [Check("claim", decided)]
    outcome, bounds = decide_claim(claim_of(spec.claim.guarantee), effective, parts, budget)
    return [Check("claim", outcome, bounds)]


#: Share of ``--time-limit`` the exact a(t) search may use; the kind's steps share the rest.
SEMI_ADJACENT_SHARE = 0.5


def build_context(
    spec: Spec,
    *,
    seed: int | None,
    budget: Budget,
    options: RunOptions = DEFAULT_OPTIONS,
) -> Context:
    """The shared part of an audit: accountant values of the spec and a(t) at its table.

    ``budget`` is the whole spec's :class:`~semidp.accountant.core.budget.Budget`: a(t) may use
    :data:`SEMI_ADJACENT_SHARE` of what is left, and every later step is given what remains
    (:meth:`Context.remaining`, :attr:`Context.budget`).
    """
    left = max(budget.remaining(), MIN_STEP_SECONDS)
    kind = lookup(spec.mechanism.kind, spec.path)
    framework = spec.claim.framework if spec.claim else kind.default_framework(spec)
    if framework not in kind.info.frameworks:
        raise UnsupportedRelease(
            f"{spec.path}: claim.framework = {framework!r} is not evaluated for mechanism.kind = "
            f"{kind.info.name!r} by semidp {__version__}; supported: {list(kind.info.frameworks)}."
        )
    space, inv, rel = space_of(spec), invariant_of(spec), relation_of(spec)
    table = None if spec.data.table is None else [int(c) for c in spec.data.table]
    method = kind.semi_adjacent_method(spec)
    a = semi_adjacent_parameter(
        space,
        inv,
        rel,
        table=table,
        records=spec.data.records,
        budget=Budget.of(SEMI_ADJACENT_SHARE * left),
        method="closed-form" if method == "closed-form" else "auto",
    )
    return Context(
        spec=spec,
        space=space,
        invariant=inv,
        relation=rel,
        deltas=[float(d) for d in spec.report.deltas],
        framework=framework,
        a=a,
        time_limit=left,
        seed=seed,
        deadline=budget.deadline,
        options=options,
    )


def calibrated_to_exact(sens: AnySensitivity, outcome: Outcome, shift: Shift) -> Outcome:
    """The sensitivity check for a release whose part states its exact shift on the semi-adjacent relation (a
    mechanism calibrated to the exact space S): the section's independently computed l1 and l2 must equal it."""
    if not isinstance(sens, SensitivitySection):  # refused: nothing computed to compare
        return outcome
    l2 = sens.l2
    if not math.isclose(float(l2) ** 2, shift.l2_squared, rel_tol=1e-12):
        return Refuted(
            f"BUG: the sensitivity section has l2 = {l2!r}, the mechanism was calibrated to sqrt({shift.l2_squared})"
        )
    l1 = sens.l1
    if float(l1) != shift.l1:
        return Refuted(f"BUG: the sensitivity section has l1 = {l1!r}, the mechanism was calibrated to {shift.l1}")
    return outcome


def _exact_semi_shift(ctx: Context, part: KindResult) -> Shift | None:
    """The exact shift a one-part release states on ``SemiAdjacent(base, invariant, a(t))``, if any."""
    rel = part.release
    if len(rel.parts) != 1:
        return None
    s = rel.parts[0].shift(SemiAdjacent(ctx.relation, ctx.invariant, ctx.a.value))
    return s if s is not None and s.exact else None


@dataclass(frozen=True)
class Accounted:
    """The runner's accounting of a kind's result: the guarantees and their report summaries."""

    advertised: Guarantee
    effective: AnyGuarantee | None
    """``None``: a black box (no certified guarantee)."""
    adv_summary: GuaranteeSummary
    eff_summary: GuaranteeSummary
    certify: list[GuaranteeSummary]
    """The summaries re-certified, each against the guarantee it holds (:attr:`GuaranteeSummary.guarantee`)."""
    effective_at_lower: AnyGuarantee | None = None
    audit: AuditAccount | None = None
    """A black box's account: decides its claim (refuted or unknown)."""
    claim: Check | None = None
    """The claim decided from a measurement release's PLD bracket (:func:`bracket_claim`), if it decides it."""
    plots: tuple[Plot, ...] = ()
    """Plots of the accounting (a measurement release's tradeoff curves), after the kind's."""
    sections: tuple[Section, ...] | None = None
    """The kind's sections as the accounting completed them (a workload's timing); ``None``: as the kind gave them."""


#: ``advertised.source`` of a black box: its claim is stated, not certified.
CLAIM_SOURCE = "the spec's claim: stated for the code, not a certified guarantee"
#: ``effective.reason`` of a black box.
BLACK_BOX_REASON = (
    "a black box has no certified guarantee; a statistical audit bounds its privacy loss from below only "
    "(epsilon_lower, at the audit's confidence)"
)


#: Share of the remaining ``--time-limit`` budget a claim's refinement may use (finer grids until decided).
CLAIM_SHARE = 0.5


def bracket_claim(ctx: Context, w: WorkloadAccount) -> tuple[Outcome, Bounds] | None:
    """An epsilon claim decided by the query-level PLD bracket of a measurement release: verified only from its
    certified upper end, refuted only below its certified lower end when the parts' shifts are exact (the worst
    pair attains them; a bracket of bounds' dominating pairs refutes nothing), refined within
    :data:`CLAIM_SHARE` of the ``--time-limit`` budget; with the bounds of epsilon at the claim's delta it was
    decided from. ``None``: not a Semi-DP epsilon claim at a delta > 0 on a query-level account (the comparison
    with the effective guarantee decides it)."""
    claim, eff = ctx.spec.claim, w.query_level
    if claim is None or claim.guarantee.epsilon is None or ctx.framework != "semi-dp" or eff is None:
        return None
    e, d = float(claim.guarantee.epsilon), float(claim.guarantee.delta or 0)
    if d <= 0:
        return None
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
    if eff.pld is None:
        return Verified("no measurement changes on a semi-adjacent pair: 0-DP"), Bounds(0.0, 0.0, 0.0)
    r = eff.decide_at(d, e, Budget.until(ctx.deadline).split(CLAIM_SHARE))
    b = r.interval
    bounds = Bounds(b.lower, b.upper, b.upper)
    grid = f"pld, {r.points} grid points" if r.points is not None else "pld"
    if e >= b.upper:
        return Verified(
            f"query-level Semi-DP epsilon <= {fmt_up(b.upper)} <= claimed {e} at delta = {d:g} ({grid})"
        ), bounds
    if e < b.lower and not eff.tight:
        return Unknown(
            f"claimed {e} < {fmt_down(b.lower)}, the lower end of the pld bracket at delta = {d:g}, but that bracket "
            "composes the dominating pairs of bounds (Laplace noise at a(t) = 2: (4/b, 0)-DP per measurement), an "
            "upper bound only: it does not refute"
        ), Bounds(0.0, b.upper, b.upper)
    if e < b.lower:
        return Refuted(
            f"query-level Semi-DP epsilon >= {fmt_down(b.lower)} > claimed {e} at delta = {d:g} ({grid} lower bound, "
            f"attained by the worst pair: {WORST_PAIR})"
        ), bounds
    why = f"; {r.shortfall()}" if r.shortfall() else f"; refinement stopped: {r.stopped_by}" if r.stopped_by else ""
    return Unknown(
        f"claimed {e} lies in the pld bracket [{fmt_down(b.lower)}, {fmt_up(b.upper)}] at delta = {d:g}{why}"
    ), bounds


def _workload_accounted(ctx: Context, part: KindResult, rel: MeasurementRelease) -> Accounted:
    """A measurement release: :func:`verify.workload_accounting.account_workload`, the claim from its bracket."""
    w = account_workload(ctx, rel)
    decided = bracket_claim(ctx, w)
    claim = None if decided is None or ctx.spec.claim is None else Check("claim", decided[0], decided[1])
    plots = workload_plot(ctx, w, *(decided if decided is not None else (None, None)))
    return Accounted(
        w.advertised,
        w.effective,
        w.adv_summary,
        w.eff_summary,
        [w.adv_summary, w.eff_summary],
        claim=claim,
        plots=plots,
        sections=timed_sections(part.sections, w.seconds),
    )


def accounted(ctx: Context, part: KindResult) -> Accounted:
    """Apply the interpreters of :mod:`accountant.releases.accounting` to the kind's release."""
    rel = part.release
    if isinstance(rel, MeasurementRelease):
        return _workload_accounted(ctx, part, rel)
    if rel.black_box is not None:
        if part.audit is None:  # pragma: no cover - KindResult refuses it
            raise TypeError("a black-box release needs its statistical audit")
        audit_acct = statistical_audit(rel, part.audit)
        claim = rel.black_box.claim
        adv = GuaranteeSummary.of(claim, ctx.deltas).with_extra(source=CLAIM_SOURCE)
        low = dict(audit_acct.epsilon_lower)
        eff = GuaranteeSummary(
            claim.relation.describe(),
            {"certified": False, "reason": BLACK_BOX_REASON},
            tuple(EpsilonDelta(d, None, "none-certified") for d in ctx.deltas),
            ctx.framework,
            epsilon_lower=tuple(LowerBound(d, low.get(d, 0.0), "statistical-audit") for d in ctx.deltas),
        )
        return Accounted(claim, None, adv, eff, [adv], audit=audit_acct)
    acct = account(rel, ctx.framework, ctx.a, ctx.space)
    # nothing advertised besides what holds (a test known on A_3 only): reported as the effective one
    adv = GuaranteeSummary.of(
        acct.advertised, ctx.deltas, framework=ctx.framework if acct.advertised_is_effective else None
    )
    eff = GuaranteeSummary.of(acct.effective, ctx.deltas, framework=ctx.framework)
    extra: dict[str, object] = {}
    if acct.prop21 is not None:
        extra["prop21"] = Prop21(
            GuaranteeSummary.of(acct.prop21.semi_first, ctx.deltas),
            GuaranteeSummary.of(acct.prop21.composition_first, ctx.deltas),
            "Cho & Awan Prop. 21: group each part then compose (semi_first) is never "
            "weaker than compose then group; effective uses semi_first",
        )
    if extra:
        eff = eff.with_extra(**extra)
    return Accounted(
        acct.advertised,
        acct.effective,
        adv,
        eff,
        [adv, eff],
        effective_at_lower=acct.effective_at_lower,
    )


def _claim_with_bounds(check: Check, ctx: Context, acct: Accounted, release: Release | None) -> Check:
    """Refute a Semi-DP claim only from a proven lower bound of a(t) (verify from the upper one).

    The effective Semi-DP guarantee is computed at the proven upper bound of a(t)
    (sound, [CA24, Prop. 11]), so it may *verify* a claim; it is tight only at the
    true a(t), so when a(t) is known only by bounds, a refutation must hold at
    the lower bound too (:attr:`Accounted.effective_at_lower`), else the claim is unknown.
    """
    a = ctx.a
    if a.exact or ctx.framework != "semi-dp" or not isinstance(check.outcome, Refuted):
        return check
    if acct.effective_at_lower is not None and ctx.spec.claim is not None:
        low, _ = decide_claim(
            claim_of(ctx.spec.claim.guarantee),
            acct.effective_at_lower,
            composed_parts(ctx, a.lower, release),
            Budget.until(ctx.deadline),
        )
        if isinstance(low, Refuted):
            return Check(
                "claim",
                Refuted(
                    f"refuted even at the proven lower bound a(t) >= {a.lower} "
                    f"({a.bounds_text()}): {low.counterexample}"
                ),
                check.bounds,
            )
    return Check(
        "claim",
        Unknown(
            f"{a.bounds_text()}: at the upper end the claim does not follow "
            f"({check.outcome.counterexample}), but it is not refuted at the proven lower "
            "end"
        ),
        check.bounds,
    )


def not_refuted_by_a_bound(check: Check, loose: str | None) -> Check:
    """A claim refuted from a guarantee that is an upper bound only (``loose`` says why,
    :func:`accountant.releases.accounting.upper_bound_only`) is unknown: refute only from a proven lower bound."""
    if loose is None or not isinstance(check.outcome, Refuted):
        return check
    return Check(
        "claim",
        Unknown(f"{loose}; the claim does not follow from it ({check.outcome.counterexample}), but it is not refuted"),
        check.bounds,
    )


def _cover_check(ctx: Context, release: Release | None) -> Outcome | None:
    """For a release known on A_R by a result covering every a(t) <= R (:func:`covering_radius`): a(t) <= R is
    what its guarantee needs (the a(t) upper bound suffices), in place of re-deriving a(t); ``None`` otherwise."""
    r = None if release is None else covering_radius(release)
    if release is None or r is None:
        return None
    law = release.parts[0].law
    source = law.covers if isinstance(law, KnownGuarantee) else ""
    a = ctx.a
    if a.value <= r:
        return Verified(
            f"a(t) = {a.value} by {a.method} <= {r}: the (D_t, A_{r}) guarantee covers every semi-adjacent pair "
            f"({source})"
        )
    return Refuted(
        f"a(t) = {a.value} > {r}: the A_{r} guarantee does not cover A_a(t)"
    )  # pragma: no cover - account refuses it first


def assemble(ctx: Context, part: KindResult, *, reports_sensitivity: bool) -> Report:
    """The report of a kind's result: shared header, checks and verdict around the kind's sections."""
    return assemble_accounted(ctx, part, accounted(ctx, part), reports_sensitivity=reports_sensitivity)


def assemble_accounted(ctx: Context, part: KindResult, acct: Accounted, *, reports_sensitivity: bool) -> Report:
    """:func:`assemble` with the release already accounted (:func:`accounted`)."""
    spec, a = ctx.spec, ctx.a
    adv, eff = acct.adv_summary, acct.eff_summary
    cover = None if isinstance(part.release, MeasurementRelease) else _cover_check(ctx, part.release)
    a_outcome = cover or check_semi_adjacent(
        ctx.space, ctx.invariant, ctx.relation, a, ctx.table, Budget.of(ctx.remaining())
    )
    if cover is None and isinstance(a_outcome, Verified) and not a.exact:  # bounds: not a PASS
        a_outcome = Unknown(
            f"only bounds are proven: {a.bounds_text()} (every guarantee here uses the upper "
            f"end, which is sound [CA24, Prop. 11]; a larger --time-limit may close the gap); "
            f"{a_outcome.certificate}"
        )
    checks = [
        Check("semi-adjacent-parameter", a_outcome),
        *part.checks,
        Check("conversions-certified", certify_summary([*acct.certify, *section_summaries(part.sections)])),
    ]
    if spec.claim is not None and acct.audit is not None:  # a black box: refuted from its lower bound, or unknown
        checks.append(Check("claim", acct.audit.claim_outcome))
    elif acct.claim is not None:  # decided from a measurement release's PLD bracket
        checks.append(acct.claim)
    elif acct.effective is not None:
        # a measurement release not decided by its bracket: the comparison with its effective guarantee alone
        release = None if isinstance(part.release, MeasurementRelease) else part.release
        parts = composed_parts(ctx, a.value, release)
        group = 1 if ctx.framework == "dp" else a.value if ctx.framework == "semi-dp" else 0
        exact = exact_sum(getattr(spec.mechanism, "components", None), group) if parts is not None else None
        loose = upper_bound_only(release) if release is not None else None
        if loose is None and release is not None and spec.claim is not None and not _pure(spec.claim.guarantee):
            loose = profile_not_attained(release)
        checks += [
            not_refuted_by_a_bound(_claim_with_bounds(c, ctx, acct, release), loose)
            for c in claim_check(spec, acct.effective, parts, exact, Budget.until(ctx.deadline))
        ]
    claims = [c.outcome for c in checks if c.name == "claim"]
    if isinstance(a_outcome, Unknown) and not a.exact and claims and all(isinstance(o, Verified) for o in claims):
        # The claim holds at the proven upper end of a(t): the exact value cannot change the verdict.
        checks[0] = Check(
            "semi-adjacent-parameter",
            NotApplicable(
                f"{a_outcome.reason}; the claim is verified at the upper end, so the exact a(t) "
                "does not change the verdict"
            ),
        )
    sections = list(part.sections if acct.sections is None else acct.sections)
    if reports_sensitivity and spec.query is not None:
        sens, sens_outcome = sensitivity_section(spec, ctx.space, ctx.invariant, a, Budget.of(ctx.remaining()))
        shift = None if isinstance(part.release, MeasurementRelease) else _exact_semi_shift(ctx, part)
        if shift is not None:
            sens_outcome = calibrated_to_exact(sens, sens_outcome, shift)
        checks.append(Check("sensitivity", sens_outcome))
        sections.insert(0, sens)
    checks += part.final_checks
    witness = a.witness_data(ctx.space)
    return Report(
        name=spec.name,
        title=spec.title,
        tool=ToolInfo("semidp", __version__),
        spec=SpecFile(spec.path, spec.sha256),
        seed=part.seed,
        relation=ctx.relation.spec_name,
        invariant=InvariantInfo(ctx.invariant.kind, ctx.invariant.describe()),
        semi_adjacent_parameter=SemiAdjacentInfo(a.value, a.lower, a.method, a.witness, a.exact, a.scope, witness),
        advertised=adv,
        effective=eff,
        claim=None
        if spec.claim is None
        else ClaimInfo(spec.claim.framework, guarantee_spec_json(spec.claim.guarantee)),
        checks=tuple(checks),
        references=tuple(spec.references),
        sections=tuple(sections),
    )


def audit(
    spec: Spec,
    *,
    seed: int | None = None,
    budget: Budget | None = None,
    options: RunOptions = DEFAULT_OPTIONS,
    **legacy: float | None,
) -> Audit:
    """Audit one spec: the shared part, the kind's part (looked up by ``mechanism.kind``), the verdict.

    ``budget`` (a :class:`~semidp.accountant.core.budget.Budget`; default 60 s from the call) is one budget for the
    whole spec: each step gets what is left, and a step that runs out degrades to its proven bounds (the report
    says so; the verdict is then inconclusive unless the bounds decide the claim). A budget that started before
    this call (e.g. at process start) is ``Budget.until(deadline)``. The deprecated ``time_limit=`` seconds and
    ``deadline=`` (``time.monotonic()``) still work for one release, with a :class:`DeprecationWarning`.
    ``options`` (:class:`~verify.run_options.RunOptions`: ``--allow-code``, a Dask scheduler) are handed to the
    kind unchanged. Raises :class:`~accountant.core.errors.UnsupportedRelease` when the spec cannot be evaluated.

    Examples
    --------
    >>> from semidp.verify.load import load
    >>> audit(load("specs/census-2020-total.toml")).verdict
    'holds'
    """
    kind = lookup(spec.mechanism.kind, spec.path)
    spec = prepare_sections(spec)  # a spec built in Python: what the loader's section plugins prepare (idempotent)
    problems = validate(spec)  # a spec built or edited in Python has not been through the loader
    if problems:
        raise InvalidSpec(spec.path, [str(p) for p in problems])
    ctx = build_context(spec, seed=seed, budget=_audit_budget(budget, legacy), options=options)
    part = kind.run(ctx)
    acct = accounted(ctx, part)
    report = assemble_accounted(ctx, part, acct, reports_sensitivity=kind.info.reports_sensitivity)
    return Audit(
        typed=report,
        advertised=acct.advertised,
        effective=acct.effective,
        samples=part.samples,
        plots=part.plots + acct.plots,
    )


def _audit_budget(budget: Budget | None, legacy: dict[str, float | None]) -> Budget:
    """:func:`audit`'s budget from ``budget=`` or the deprecated ``time_limit=`` / ``deadline=`` (one release):
    ``deadline`` (``time.monotonic()``), when given, ends the budget; otherwise ``time_limit`` seconds from now."""
    rest = dict(legacy)
    deadline = rest.pop("deadline", None)
    b = budget_argument(budget, rest, where="audit", default=60.0)
    if deadline is None:
        return b
    if budget is not None:
        raise InvalidArgument("audit: pass budget= or the deprecated deadline=, not both.")
    warnings.warn(
        "audit(deadline=...) is deprecated; pass budget=Budget.until(deadline) (semidp.accountant.core.budget).",
        DeprecationWarning,
        stacklevel=3,
    )
    return Budget.until(deadline)


def exit_code(verdicts: list[str]) -> int:
    """Contract exit status for evaluated reports: 1 if any fails, else 3 if any inconclusive, else 0."""
    if "fails" in verdicts:
        return 1
    if "inconclusive" in verdicts:
        return 3
    return 0


__all__ = [
    "Accounted",
    "Audit",
    "accounted",
    "bracket_claim",
    "not_refuted_by_a_bound",
    "assemble",
    "assemble_accounted",
    "audit",
    "build_context",
    "calibrated_to_exact",
    "claim_check",
    "claim_of",
    "composed_parts",
    "decide_claim",
    "exit_code",
]
