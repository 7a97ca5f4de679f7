"""The runner's accounting of a measurement workload (:class:`~accountant.releases.measurements.MeasurementRelease`).

From the interpreter :func:`accountant.releases.accounting.pld_bracket` (exact rho and the certified PLD bracket of
the worst pair), within the ``--time-limit`` budget:

* ``advertised``: the total rho (Bun-Steinke and Canonne-Kamath-Steinke, as for any zCDP guarantee) plus
  ``method = "pld"``: the exact composition of the measurements' noise at the worst replace-one pair (certified
  bracket; the upper end is reported, the bracket beside it);
* ``effective`` (``semi-dp``, a(t) <= 2 known exactly): the joint worst case over semi-adjacent pairs at a(t) of
  the per-measurement shifts (:mod:`accountant.workloads.accounting`, proof there), as zCDP and as ``pld``, with the
  coarse group-privacy value a(t)^2 rho [CA24, Prop. 15] beside it (``coarse``); otherwise the coarse guarantee
  (Semi-DP) or the joint release's plain DP;
* inside both, the certificate's breakdowns, each a sub-release (the release's part groups): ``per_attribute`` (the
  measurements whose query splits the feature) and ``per_geolevel`` (keyed by X: the measurements at levels strictly
  finer than X, the certificate's "Block-within-X").

The claim is decided by the runner from the effective bracket (:func:`verify.runner.bracket_claim`).
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from semidp.accountant.core.budget import Budget
from semidp.accountant.core.outcome import Bounds, Outcome, Refuted, Unknown, Verified
from semidp.accountant.core.progress import Progress, stage
from semidp.accountant.guarantees.conversion_routes import AnyGuarantee, EpsilonDelta, epsilon_delta
from semidp.accountant.guarantees.definitions import ZCDP, Guarantee
from semidp.accountant.guarantees.relations import Relation, SemiAdjacent
from semidp.accountant.guarantees.semidp import joint_release_dp, semi_dp
from semidp.accountant.releases.accounting import BracketAccount, pld_bracket
from semidp.accountant.releases.measurements import GROUP_KINDS, MeasurementRelease
from semidp.verify.context import Context, Plot
from semidp.verify.report import Breakdown, GuaranteeSummary, PldEntry, Section
from semidp.verify.workload_report import WorkloadSection, rho_up

#: Share of the remaining ``--time-limit`` budget each main composition's refinement to the default width may use.
MAIN_SHARE = 0.25
#: Share of the remaining ``--time-limit`` budget the breakdowns' PLDs may use; later groups report
#: ``pld_unavailable`` (their exact rho and zCDP conversions stand).
BREAKDOWN_SHARE = 0.6
TIME_SKIP = "not composed: the --time-limit budget ran out first; the zCDP values are upper bounds"


def pld_entries(acct: BracketAccount, deltas: Sequence[float]) -> tuple[PldEntry, ...]:
    """The PLD bracket at each of ``deltas`` (none when the PLD could not be composed), refined when
    :meth:`~accountant.releases.accounting.BracketAccount.evaluated` refined it, with a ``bracket_note`` when it is
    wider than the requested width, or when the parts only bound the release from above (``acct.tight`` false:
    the lower end reported is then 0, :data:`UPPER_ONLY_NOTE`)."""
    if acct.pld_unavailable is not None:
        return ()
    if acct.pld is None:  # nothing is released: no privacy loss
        return tuple(PldEntry(d, 0.0, 0.0) for d in deltas)
    out = []
    for d in deltas:
        r = acct.refined.get(d)
        b = r.interval if r is not None else acct.pld.epsilon(d)
        note = r.shortfall() if r is not None else None
        lower = b.lower
        if not acct.tight:  # the parts bound the release's worst pair from above: their lower end proves nothing
            lower = 0.0
            note = "; ".join(x for x in (note, UPPER_ONLY_NOTE) if x)
        out.append(PldEntry(d, lower, b.upper, acct.set_aside_lines, note))
    return tuple(out)


#: ``bracket_note`` of a PLD entry whose parts only bound the release from above (Laplace noise at a(t) = 2: the
#: (4/b, 0)-DP pair of the l1 bound), so the entry's lower end is 0, the only proven one.
UPPER_ONLY_NOTE = (
    "lower end 0: the parts are pairs that bound the release's worst pair from above, so the optimistic "
    "composition bounds them, not the release"
)


def breakdown(acct: BracketAccount, deltas: Sequence[float], relation: Relation, count: int) -> Breakdown:
    """A group's ``{"rho", "rho_exact", "measurements", "epsilon_delta"[, "pld_unavailable"]}`` entry: BS and CKS on
    the summed rho, then the PLD (upper end reported, the bracket beside it)."""
    g = ZCDP(rho_up(acct.rho), relation)
    entries: tuple[EpsilonDelta | PldEntry, ...] = (
        *(e for d in deltas for e in epsilon_delta(g, d)),
        *pld_entries(acct, deltas),
    )
    return Breakdown(rho_up(acct.rho), str(acct.rho), count, entries, acct.pld_unavailable)


def _breakdowns(
    ctx: Context, release: MeasurementRelease, semi_radius: int | None
) -> dict[tuple[str, str], BracketAccount]:
    """The release's part groups, advertised (``"adv"``) and query-level (``"eff"``), within a time share.

    Keys are ``(side, group name)``; attribute and geolevel names differ (the loader checks it).
    """
    ordered = [g for kind in GROUP_KINDS for g in release.groups_of(kind)]
    jobs: list[tuple[str, Any, int | None]] = [("adv", g, None) for g in ordered]
    if semi_radius is not None:
        jobs += [("eff", g, semi_radius) for g in ordered]
    stage(f"{ctx.spec.name}: the certificate's breakdowns ({len(jobs)} groups)")
    budget = Budget.until(ctx.deadline).split(BREAKDOWN_SHARE)
    out: dict[tuple[str, str], BracketAccount] = {}
    with Progress("workload breakdowns", total=len(jobs)) as bar:
        for i, (side, g, radius) in enumerate(jobs):
            skip = TIME_SKIP if budget.expired else None
            out[side, g.name] = pld_bracket(release.group(g), radius, skip=skip).evaluated(ctx.deltas, budget)
            bar.update(i + 1, f"{side} {g.name}")
    return out


@dataclass(frozen=True)
class WorkloadAccount:
    """A measurement release accounted: the guarantees, their summaries and the brackets behind them."""

    advertised: ZCDP
    effective: AnyGuarantee
    adv_summary: GuaranteeSummary
    eff_summary: GuaranteeSummary
    adv: BracketAccount
    query_level: BracketAccount | None
    """The effective bracket at the query-level worst pair (``None``: not analysed, a(t) > 2 or known by bounds)."""
    coarse: Guarantee
    """The group-privacy guarantee a(t)^2 rho [CA24, Prop. 15]."""
    seconds: float


def account_workload(ctx: Context, release: MeasurementRelease) -> WorkloadAccount:
    """Account ``release`` in the context's framework (see the module docstring)."""
    start = time.monotonic()
    rel, deltas, a = ctx.relation, ctx.deltas, ctx.a
    query_level = ctx.framework == "semi-dp" and a.exact and a.value <= 2
    stage(f"{ctx.spec.name}: composing the PLD of {len(release.parts)} measurements ({release.noise}), advertised")
    budget = Budget.until(ctx.deadline)
    adv = pld_bracket(release).evaluated(deltas, budget.split(MAIN_SHARE))
    eff: BracketAccount | None = None
    if query_level:
        stage(f"{ctx.spec.name}: composing the PLD of the query-level Semi-DP worst pair (a(t) = {a.value})")
        eff = pld_bracket(release, a.value).evaluated(deltas, budget.split(MAIN_SHARE))
    groups = _breakdowns(ctx, release, a.value if query_level else None)

    def per(side: str, kind: str, relation: Relation) -> dict[str, Breakdown]:
        return {
            g.name: breakdown(groups[side, g.name], deltas, relation, len(g.indices)) for g in release.groups_of(kind)
        }

    advertised = ZCDP(rho_up(adv.rho), rel)
    adv_summary = (
        GuaranteeSummary.of(advertised, deltas)
        .with_pld(pld_entries(adv, deltas))
        .with_extra(
            rho_exact=str(adv.rho),
            pld_unavailable=adv.pld_unavailable,
            per_attribute=per("adv", "per_attribute", rel),
            per_geolevel=per("adv", "per_geolevel", rel),
        )
    )
    coarse = semi_dp(advertised, ctx.invariant, a.value)
    effective: AnyGuarantee
    if eff is not None:
        semi_rel = SemiAdjacent(rel, ctx.invariant, a.value)
        effective = ZCDP(rho_up(eff.rho), semi_rel)
        eff_summary = (
            GuaranteeSummary.of(effective, deltas, framework=ctx.framework)
            .with_pld(pld_entries(eff, deltas))
            .with_extra(
                method="query-level",
                rho_exact=str(eff.rho),
                pld_unavailable=eff.pld_unavailable,
                coarse=GuaranteeSummary.of(coarse, deltas),
                per_attribute=per("eff", "per_attribute", semi_rel),
                per_geolevel=per("eff", "per_geolevel", semi_rel),
            )
        )
    else:
        effective = coarse if ctx.framework == "semi-dp" else joint_release_dp(advertised, ctx.invariant, ctx.space)
        eff_summary = GuaranteeSummary.of(effective, deltas, framework=ctx.framework)
    return WorkloadAccount(advertised, effective, adv_summary, eff_summary, adv, eff, coarse, time.monotonic() - start)


def timed_sections(sections: Sequence[Section], seconds: float) -> tuple[Section, ...]:
    """The kind's sections with the accounting's ``seconds`` added to the workload section's."""
    return tuple(
        dataclasses.replace(s, seconds=s.seconds + seconds) if isinstance(s, WorkloadSection) else s for s in sections
    )


def workload_plot(ctx: Context, w: WorkloadAccount, claim: Outcome | None, bounds: Bounds | None) -> tuple[Plot, ...]:
    """The tradeoff curves of a query-level account (none otherwise): advertised, exact composition, coarse and
    query-level Semi-DP, with the claim and its verdict."""
    if w.query_level is None:
        return ()
    return (
        Plot(
            "workload",
            "tradeoff curves: advertised, exact composition, coarse and query-level Semi-DP",
            _curves(w.adv, w.query_level, w.advertised, w.coarse, ctx, claim, bounds),
        ),
    )


def _curves(
    adv: BracketAccount,
    eff: BracketAccount,
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


__all__ = [
    "BREAKDOWN_SHARE",
    "MAIN_SHARE",
    "TIME_SKIP",
    "UPPER_ONLY_NOTE",
    "WorkloadAccount",
    "account_workload",
    "breakdown",
    "pld_entries",
    "timed_sections",
    "workload_plot",
]
