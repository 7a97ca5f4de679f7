"""The spec runner: a spec in, a report (contract v1 JSON fields) out.

Describe first, then account (house style R3): the spec is turned into values
of :mod:`accountant` (data space, invariant, relation, advertised guarantee),
the accountant computes the semi-adjacent parameter and the effective
guarantee, and :mod:`verify` checks the claim and re-certifies every reported
number independently (:mod:`verify.certify`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from accountant import conversions as conv
from accountant.dataspace import DataSpace, Feature
from accountant.errors import UnsupportedRelease
from accountant.guarantees import GDP, RDP, ZCDP, ApproxDP, Guarantee, PureDP, TradeOff
from accountant.callable_invariant import CallableInvariant
from accountant.invariants import Counting, Invariant, Linear, Margins, NoInvariant, Total
from accountant.relations import AddRemove, BaseRelation, Replace
from accountant.semiadjacent import SemiAdjacentParameter, semi_adjacent_parameter
from accountant.composition import compose, compose_as_zcdp, compose_tradeoffs
from accountant.semidp import NoFiniteGuarantee, joint_release_dp, semi_dp, semi_dp_composition
from verify import __version__
from verify.certify import certify_summary
from verify.claims import Claim, check_claim
from verify.outcome import Outcome, Refuted, Unknown, Verified, detail_of, status_of
from verify.spec import GuaranteeSpec, Spec

#: Mechanism kinds this version audits (the others are accepted by the spec format
#: and refused here with a clear message).
SUPPORTED_MECHANISMS = ("published", "umpu-odds-ratio", "gaussian", "projected-gaussian", "laplace",
                        "projected-laplace", "k-norm", "generalized-laplace", "generalized-gaussian")
#: Claim frameworks this version evaluates.
SUPPORTED_FRAMEWORKS = ("dp", "semi-dp")


@dataclass(frozen=True)
class Audit:
    """The values an audit computed, besides the JSON report (used for plots)."""

    report: dict[str, Any]
    """The JSON report (contract fields plus extensions)."""
    advertised: Guarantee
    """The advertised guarantee on ``(D, A_1)``."""
    effective: Guarantee | NoFiniteGuarantee
    """What holds for the joint release in the claim's framework."""


def space_of(spec: Spec) -> DataSpace:
    """The data space of ``[data] features``."""
    return DataSpace(tuple(Feature(f.name, f.levels) for f in spec.data.features))


def relation_of(spec: Spec) -> BaseRelation:
    """``Replace()`` for ``replace-one``, ``AddRemove()`` for ``add-remove``."""
    return Replace() if spec.data.adjacency == "replace-one" else AddRemove()


def invariant_of(spec: Spec) -> Invariant:
    """The invariant of ``[invariant]``."""
    inv = spec.invariant
    if inv.kind == "none":
        return NoInvariant()
    if inv.kind == "total":
        return Total()
    if inv.kind == "margins":
        assert inv.margins is not None  # checked by the loader
        return Margins(tuple(tuple(m) for m in inv.margins))
    if inv.kind == "linear":
        assert inv.matrix is not None
        return Linear(tuple(tuple(r) for r in inv.matrix))
    assert inv.sets is not None
    return Counting(tuple(tuple(s) for s in inv.sets))


def guarantee_of(g: GuaranteeSpec, relation: BaseRelation) -> Guarantee:
    """A spec guarantee table as a guarantee value (floats; exact values stay in the spec)."""
    if g.zcdp is not None:
        return ZCDP(float(g.zcdp), relation)
    if g.mu is not None:
        return GDP(float(g.mu), relation)
    if g.rdp is not None:
        return RDP((float(g.rdp.alpha),), (float(g.rdp.epsilon),), relation)
    assert g.epsilon is not None
    if g.delta is None or g.delta == 0:
        return PureDP(float(g.epsilon), relation)
    return ApproxDP(float(g.epsilon), float(g.delta), relation)


def claim_of(g: GuaranteeSpec) -> Claim:
    """A spec guarantee table as a claim tuple for :func:`verify.claims.check_claim`."""
    if g.zcdp is not None:
        return ("zcdp", g.zcdp)  # type: ignore[return-value]
    if g.mu is not None:
        return ("mu", g.mu)  # type: ignore[return-value]
    if g.rdp is not None:
        return ("rdp", g.rdp.alpha, g.rdp.epsilon)  # type: ignore[return-value]
    return ("epsilon", g.epsilon, g.delta if g.delta is not None else 0)  # type: ignore[return-value]


def compose_parts(parts: list[Guarantee]) -> Guarantee:
    """The advertised guarantee of several released parts: closed form if one definition, else
    numerical f-DP (pure/approx/GDP) or zCDP (pure/GDP/zCDP) composition."""
    kinds = {type(p) for p in parts}
    if len(kinds) == 1 and RDP not in kinds:
        return compose(parts)
    if kinds <= {PureDP, ApproxDP, GDP, TradeOff}:
        return compose_tradeoffs(parts)  # type: ignore[arg-type]
    if kinds <= {PureDP, GDP, ZCDP}:
        return compose_as_zcdp(parts)  # type: ignore[arg-type]
    raise UnsupportedRelease(
        f"cannot compose components of kinds {sorted(k.__name__ for k in kinds)}: mix pure/approx/GDP "
        "(f-DP composition) or pure/GDP/zCDP (zCDP composition)."
    )


def summarize(g: Guarantee | NoFiniteGuarantee, deltas: list[float]) -> dict[str, Any]:
    """Report object of a guarantee: every form it converts to, each (epsilon, delta) labelled."""
    out: dict[str, Any] = {"relation": _relation_text(g)}
    eds: list[dict[str, Any]] = []
    if isinstance(g, NoFiniteGuarantee):
        out.update(epsilon=None, zcdp=None, mu=None, reason=g.reason)
        eds = [{"delta": d, "epsilon": None, "method": "none"} for d in deltas]
    elif isinstance(g, ZCDP):
        out["zcdp"] = g.rho
        for d in deltas:
            for m in conv.ZCDP_METHODS:
                eds.append({"delta": d, "epsilon": conv.zcdp_to_approx_dp(g, d, m).epsilon, "method": m})
    elif isinstance(g, GDP):
        out["mu"] = g.mu
        out["zcdp"] = conv.gdp_to_zcdp(g).rho
        eds = [{"delta": d, "epsilon": conv.gdp_to_approx_dp(g, d).epsilon, "method": "balle-wang"}
               for d in deltas]
    elif isinstance(g, (PureDP, ApproxDP)):
        out["epsilon"] = g.epsilon
        if isinstance(g, ApproxDP):
            out["delta"] = g.delta
        else:
            out["zcdp"] = conv.pure_dp_to_zcdp(g).rho
        for d in deltas:
            r = conv.approx_dp_to_approx_dp(g, d)
            eds.append({"delta": d, "epsilon": None if r is None else r.epsilon, "method": "f-dp-profile"})
    elif isinstance(g, RDP):
        out["rdp"] = [{"alpha": a, "epsilon": e} for a, e in zip(g.orders, g.epsilons)]
        for d in deltas:
            for rm in conv.RDP_METHODS:
                eds.append({"delta": d, "epsilon": conv.rdp_to_approx_dp(g, d, rm).epsilon, "method": rm})
    elif isinstance(g, TradeOff):
        # The curve is a lower bound of f; its epsilon(delta) is an upper bound (None when infinite).
        for d in deltas:
            r = conv.tradeoff_to_approx_dp(g, d)
            eds.append({"delta": d, "epsilon": None if r is None else r.epsilon, "method": "f-dp-profile"})
    out["epsilon_delta"] = eds
    return out


def _relation_text(g: Guarantee | NoFiniteGuarantee) -> str:
    return g.relation.describe()


def _semi_adjacent(
    spec: Spec, space: DataSpace, inv: Invariant, rel: BaseRelation, time_limit: float
) -> SemiAdjacentParameter:
    table = list(spec.data.table) if spec.data.table is not None else None
    return semi_adjacent_parameter(space, inv, rel, table=table, records=spec.data.records,
                                   time_limit=time_limit)


#: Largest fiber (conforming histograms) on which a closed form is cross-checked by search.
CROSS_CHECK_LIMIT = 100_000


#: Largest number of cells for which a(t) is also proved exactly by Z3 in an audit.
Z3_CELL_LIMIT = 16


def _z3_proof(space: DataSpace, inv: Invariant, table: list[int] | None, a: SemiAdjacentParameter) -> Outcome:
    from verify.z3_semiadjacent import certify_value

    if a.search is None or table is None or not a.exact or isinstance(inv, CallableInvariant):
        return Unknown("not attempted (needs an exact search result at the actual table)")
    if space.n_cells > Z3_CELL_LIMIT:
        return Unknown(f"not attempted ({space.n_cells} cells > {Z3_CELL_LIMIT})")
    w = a.search.witness
    return certify_value(space, inv, table, a.search.value, w.dataset, w.record, w.target)


def check_semi_adjacent(
    spec: Spec, space: DataSpace, inv: Invariant, rel: BaseRelation, a: SemiAdjacentParameter
) -> Outcome:
    """Independent evidence for a(t): re-check a search witness, or cross-check a closed form by search."""
    from verify.witness import check_result

    head = f"a(t) = {a.value} by {a.method} ({'exact' if a.exact else 'upper bound'}, {a.scope})"
    table = list(spec.data.table) if spec.data.table is not None else None
    if a.search is not None:
        chk = check_result(space, inv, a.search, table=table)
        if not chk.passed:
            return Refuted(f"BUG: {head}, but the witness check failed: {chk.reason}")
        proof = _z3_proof(space, inv, table, a)
        if isinstance(proof, Refuted):
            return Refuted(f"BUG: {head}, but z3 disagrees: {proof.counterexample}")
        z3_note = proof.certificate if isinstance(proof, Verified) else f"not proved by z3: {proof.reason}"
        return Verified(f"{head}; witness re-checked from scratch ({chk.reason}); {z3_note}")
    if table is None or a.method != "closed-form":
        return Verified(f"{head}; no table given, so the closed form is not cross-checked by search")
    from accountant.errors import SearchTooLarge, ToolkitError
    from accountant.semiadjacent_search import semiadjacent_by_graph_search

    try:
        r = semiadjacent_by_graph_search(space, inv, table=table, limit=CROSS_CHECK_LIMIT, time_limit=10.0)
    except SearchTooLarge as e:
        return Verified(f"{head}; not cross-checked by search ({e})")
    except ToolkitError as e:
        return Verified(f"{head}; not cross-checked by search ({e})")
    hamming = r.value * (2 if isinstance(rel, AddRemove) else 1)
    if r.exact and hamming != a.value and a.exact:
        return Refuted(f"BUG: closed form gives {a.value} but graph search gives {hamming}")
    if r.exact and hamming > a.value:
        return Refuted(f"BUG: closed-form bound {a.value} is below the exact value {hamming}")
    return Verified(f"{head}; graph search over {r.fiber_size} conforming histograms gives "
                    f"{hamming}{' (the closed form is an upper bound)' if hamming < a.value else ''}")


def _check(name: str, outcome: Outcome, **extra: Any) -> dict[str, Any]:
    kind = type(outcome).__name__.lower()
    return {"name": name, "status": status_of(outcome), "outcome": kind,
            "detail": detail_of(outcome), **extra}


def audit(spec: Spec, *, seed: int | None = None, time_limit: float = 60.0) -> Audit:
    """Run the audit of one spec (see the module docstring); raise ``UnsupportedRelease`` when it cannot.

    ``time_limit`` (seconds) bounds the exact a(t) search; when it runs out the
    search's proven upper bound is used and the report says so.
    """
    m = spec.mechanism
    if m.kind not in SUPPORTED_MECHANISMS:
        raise UnsupportedRelease(
            f"{spec.path}: mechanism.kind = {m.kind!r} is not audited by semidp {__version__} yet; "
            f"supported: {list(SUPPORTED_MECHANISMS)}."
        )
    if m.kind == "umpu-odds-ratio":
        from verify.umpu_audit import audit_umpu

        return audit_umpu(spec, seed=seed, time_limit=time_limit)
    if m.kind in ("generalized-laplace", "generalized-gaussian"):
        from verify.lattice_audit import audit_lattice

        return audit_lattice(spec, seed=seed, time_limit=time_limit)
    if m.kind in ("gaussian", "projected-gaussian", "laplace", "projected-laplace", "k-norm"):
        from verify.mechanism_audit import audit_mechanism

        return audit_mechanism(spec, seed=seed, time_limit=time_limit)
    framework = spec.claim.framework if spec.claim else ("dp" if spec.invariant.kind == "none" else "semi-dp")
    if framework not in SUPPORTED_FRAMEWORKS:
        raise UnsupportedRelease(
            f"{spec.path}: claim.framework = {framework!r} is not evaluated by semidp {__version__} yet; "
            f"supported: {list(SUPPORTED_FRAMEWORKS)}."
        )
    space, inv, rel = space_of(spec), invariant_of(spec), relation_of(spec)
    deltas = [float(d) for d in spec.report.deltas]
    a = _semi_adjacent(spec, space, inv, rel, time_limit)
    prop21: dict[str, Any] | None = None
    if m.components is not None:
        parts = [guarantee_of(c, rel) for c in m.components]
        advertised = compose_parts(parts)
        if framework == "semi-dp":
            both = semi_dp_composition(parts, inv, a.value)
            prop21 = {
                "semi_first": summarize(both.semi_first, deltas),
                "composition_first": summarize(both.composition_first, deltas),
                "note": "Cho & Awan Prop. 21: group each part then compose (semi_first) is never "
                        "weaker than compose then group; effective uses semi_first",
            }
            semi_effective: Guarantee = both.semi_first
    else:
        assert m.guarantee is not None  # the loader requires guarantee or components
        advertised = guarantee_of(m.guarantee, rel)
    plain = joint_release_dp(advertised, inv, space)
    if framework == "dp":
        effective: Guarantee | NoFiniteGuarantee = plain
    elif prop21 is not None:
        effective = semi_effective
    else:
        effective = semi_dp(advertised, inv, a.value)

    adv_summary = summarize(advertised, deltas)
    eff_summary = {"framework": framework, **summarize(effective, deltas)}
    if prop21 is not None:
        eff_summary["prop21"] = prop21
    checks = [
        _check("semi-adjacent-parameter", check_semi_adjacent(spec, space, inv, rel, a)),
        _check("conversions-certified", certify_summary([adv_summary, eff_summary], advertised, effective)),
    ]
    checks += claim_check(spec, effective)
    sens: dict[str, Any] | None = None
    if spec.query is not None:
        from verify.sensitivity_report import sensitivity_section

        sens, sens_outcome = sensitivity_section(spec, space, inv, a, time_limit)
        checks.append(_check("sensitivity", sens_outcome))
    checks.append({
        "name": "invariant-preserved", "status": "skip", "outcome": "skipped",
        "detail": "a published release is audited through its advertised guarantee; no draws to check",
    })

    report: dict[str, Any] = {
        **report_header(spec, space, rel, inv, a, seed),
        **({"sensitivity": sens} if sens is not None else {}),
        "advertised": adv_summary,
        "effective": eff_summary,
        "plain_dp": summarize(plain, deltas),
        **report_footer(spec, checks),
    }
    return Audit(report=report, advertised=advertised, effective=effective)


def report_header(
    spec: Spec, space: DataSpace, rel: BaseRelation, inv: Invariant, a: SemiAdjacentParameter,
    seed: int | None,
) -> dict[str, Any]:
    """The report fields every audit kind shares (contract: name, spec, seed, a(t), ...)."""
    return {
        "name": spec.name,
        "title": spec.title,
        "tool": {"name": "semidp", "version": __version__},
        "spec": {"path": spec.path, "sha256": spec.sha256},
        "seed": seed,
        "relation": rel.spec_name,
        "invariant": {"kind": inv.kind, "description": inv.describe()},
        "semi_adjacent_parameter": {
            "value": a.value, "method": a.method, "witness": a.witness, "exact": a.exact, "scope": a.scope,
            **({"witness_data": wd} if (wd := a.witness_data(space)) is not None else {}),
        },
    }


def verdict_of(checks: list[dict[str, Any]]) -> str:
    """``fails`` if any check was refuted, else ``inconclusive`` if any was unknown, else ``holds``."""
    outcomes = [c["outcome"] for c in checks]
    return "fails" if "refuted" in outcomes else "inconclusive" if "unknown" in outcomes else "holds"


def claim_check(spec: Spec, effective: Guarantee | NoFiniteGuarantee) -> list[dict[str, Any]]:
    """The ``claim`` check (with epsilon bounds when the comparison yields them), if the spec has a claim."""
    if spec.claim is None:
        return []
    outcome, bounds = check_claim(claim_of(spec.claim.guarantee), effective)
    extra = {"bounds": {"lower": bounds.lower, "estimate": bounds.estimate, "upper": bounds.upper}} if bounds else {}
    return [_check("claim", outcome, **extra)]


def report_footer(spec: Spec, checks: list[dict[str, Any]]) -> dict[str, Any]:
    """The report fields every audit kind ends with: claim, checks, verdict, references."""
    return {
        "claim": None if spec.claim is None else {
            "framework": spec.claim.framework, "guarantee": _guarantee_spec_json(spec.claim.guarantee)},
        "checks": checks,
        "verdict": verdict_of(checks),
        "references": list(spec.references),
    }


def _guarantee_spec_json(g: GuaranteeSpec) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k in ("epsilon", "delta", "mu", "zcdp"):
        v = getattr(g, k)
        if v is not None:
            out[k] = float(v)
    if g.rdp is not None:
        out["rdp"] = {"alpha": float(g.rdp.alpha), "epsilon": float(g.rdp.epsilon)}
    return out


def exit_code(verdicts: list[str]) -> int:
    """Contract exit status for evaluated reports: 1 if any fails, else 3 if any inconclusive, else 0."""
    if "fails" in verdicts:
        return 1
    if "inconclusive" in verdicts:
        return 3
    return 0


__all__ = ["Audit", "audit", "exit_code", "summarize", "Unknown"]
