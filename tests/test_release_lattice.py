"""The lattice kinds describe a Release (issue 23, item 1): their noise laws' interpreters, the runner's
accounting in each framework, and a vacuous guarantee (an unbounded sampler) that decides no claim."""

from __future__ import annotations

import dataclasses
import math
from fractions import Fraction
from pathlib import Path

import pytest

from semidp.accountant.combinatorics.semiadjacent import semi_adjacent_parameter
from semidp.accountant.core.outcome import Refuted, Unknown
from semidp.accountant.data.dataspace import DataSpace
from semidp.accountant.data.invariants import Margins
from semidp.accountant.guarantees.conversions import zcdp_to_approx_dp
from semidp.accountant.guarantees.definitions import ZCDP, ApproxDP, PureDP
from semidp.accountant.guarantees.relations import IntegerSubspace, Replace, SemiAdjacent
from semidp.accountant.guarantees.semidp import NoFiniteGuarantee
from semidp.accountant.releases.accounting import account, part_guarantee, upper_bound_only
from semidp.accountant.releases.model import Part, Release, Shift
from semidp.verify.kinds.generalized_gaussian import GeneralizedGaussianNoise
from semidp.verify.kinds.generalized_laplace import GeneralizedLaplaceNoise
from semidp.verify.kinds.lattice import LatticeSpec, SamplerSpec
from semidp.verify.load import load
from semidp.verify.privacy_claim import PrivacyClaim
from semidp.verify.report import Check
from semidp.verify.runner import audit, decide_claim, not_refuted_by_a_bound

ROOT = Path(__file__).resolve().parents[1]
COUNTY = ROOT / "specs" / "county-state-total-generalized-laplace.toml"
DELINQUENT = ROOT / "specs" / "delinquent-children-4x4-generalized-laplace.toml"

SPACE = DataSpace.of(("a", 2), ("b", 2))
INV = Margins((("a",), ("b",)))
BASE = Replace()
UNIT = IntegerSubspace("l1", ((1, 1, 0, 0), (0, 0, 1, 1), (1, 0, 1, 0), (0, 1, 0, 1)))
SEMI = SemiAdjacent(BASE, INV, 1)


def _release(
    law: GeneralizedLaplaceNoise | GeneralizedGaussianNoise, l1: float, l2sq: float, semi: SemiAdjacent = SEMI
) -> Release:
    part = Part(law, (Shift(UNIT, 1.0, 1.0), Shift(semi, l1, l2sq)), label="lattice")
    return Release(BASE, INV, (part,), advertised=PureDP(0.25, UNIT))


def test_laplace_law_charges_eps_d_and_the_tv_term() -> None:
    """[DGGY23, Thm. 10]: eps D on a pair at l1 distance D; an MCMC draw within TV d' adds (1 + e^{eps D}) d'."""
    exact = _release(GeneralizedLaplaceNoise(0.25, "l1", 0.0), 4.0, 4.0)
    assert part_guarantee(exact.parts[0], UNIT) == PureDP(0.25, UNIT)
    assert part_guarantee(exact.parts[0], SEMI) == PureDP(1.0, SEMI)
    mcmc = _release(GeneralizedLaplaceNoise(0.25, "l1", 0.01), 4.0, 4.0)
    g = part_guarantee(mcmc.parts[0], SEMI)
    assert isinstance(g, ApproxDP) and g.epsilon == 1.0
    assert g.delta == pytest.approx((1 + math.e) * 0.01, rel=1e-12) and g.delta >= (1 + math.e) * 0.01
    l2 = _release(GeneralizedLaplaceNoise(0.25, "l2", 0.0), 4.0, 4.0)  # the l2 norm reads the l2 shift: D = 2
    assert part_guarantee(l2.parts[0], SEMI) == PureDP(0.5, SEMI)
    unbounded = part_guarantee(_release(GeneralizedLaplaceNoise(0.25, "l1", 1.0), 4.0, 4.0).parts[0], SEMI)
    assert isinstance(unbounded, ApproxDP) and unbounded.delta == 1.0  # capped: vacuous


def test_gaussian_law_is_zcdp_then_charged_after_conversion() -> None:
    """rho = D^2 / 2 sigma^2 on equivalent pairs (reference alternative calibration); TV charged after conversion."""
    exact = _release(GeneralizedGaussianNoise(2.0, 0.0, 1e-6), 4.0, 6.0)
    g_semi = part_guarantee(exact.parts[0], SEMI)
    assert isinstance(g_semi, ZCDP) and g_semi.rho == pytest.approx(6 / 8, rel=1e-14) and g_semi.rho >= 6 / 8
    assert part_guarantee(exact.parts[0], UNIT) == ZCDP(1 / 8, UNIT)
    g = part_guarantee(_release(GeneralizedGaussianNoise(2.0, 0.001, 1e-6), 4.0, 6.0).parts[0], UNIT)
    assert isinstance(g, ApproxDP) and g.epsilon == zcdp_to_approx_dp(ZCDP(1 / 8, UNIT), 1e-6).epsilon
    assert g.delta >= 1e-6 + (1 + math.exp(g.epsilon)) * 0.001 and g.delta == pytest.approx(
        1e-6 + (1 + math.exp(g.epsilon)) * 0.001, rel=1e-12
    )


def test_account_in_each_framework() -> None:
    """integer-subspace-dp: the unit guarantee; semi-dp: the part's own shift at a(t); dp: read on base, and the
    margins break plain DP (no finite guarantee)."""
    a = semi_adjacent_parameter(SPACE, INV, BASE, table=[2, 1, 1, 2])
    semi = SemiAdjacent(BASE, INV, a.value)
    rel = _release(GeneralizedLaplaceNoise(0.25, "l1", 0.0), 4.0, 4.0, semi)
    assert account(rel, "integer-subspace-dp", a, SPACE).effective == PureDP(0.25, UNIT)
    assert account(rel, "semi-dp", a, SPACE).effective == PureDP(1.0, semi)
    assert isinstance(account(rel, "dp", a, SPACE).effective, NoFiniteGuarantee)


def test_a_vacuous_guarantee_does_not_refute() -> None:
    """delta >= 1 holds for every mechanism: a claim it does not imply is unknown, never refuted."""
    claim = PrivacyClaim.of_spec(load(DELINQUENT).claim.guarantee)  # type: ignore[union-attr]
    vacuous, _ = decide_claim(claim, ApproxDP(0.25, 1.0, UNIT))
    assert isinstance(vacuous, Unknown) and "vacuous" in vacuous.reason
    real, _ = decide_claim(claim, ApproxDP(0.25, 0.5, UNIT))
    assert isinstance(real, Refuted)  # a non-vacuous guarantee still refutes


def test_unbounded_sampler_leaves_the_claim_unknown() -> None:
    """The coupling cannot finish: delta' = 1 is charged, the claim is unknown and the verdict inconclusive."""
    spec = load(DELINQUENT)
    m = spec.mechanism
    assert isinstance(m, LatticeSpec) and spec.audit is not None
    smp = dataclasses.replace(m.sampler or SamplerSpec(), pairs=50, lag=1000, time_limit=Fraction(1, 100))
    spec = dataclasses.replace(
        spec, mechanism=dataclasses.replace(m, sampler=smp), audit=dataclasses.replace(spec.audit, samples=10)
    )
    res = audit(spec, seed=1)
    claim = next(c for c in res.typed.to_json()["checks"] if c["name"] == "claim")
    assert claim["outcome"] == "unknown" and "vacuous" in claim["detail"]
    assert isinstance(res.effective, ApproxDP) and res.effective.delta == 1.0
    assert res.report["verdict"] == "inconclusive"


def test_plain_dp_framework_is_accounted_not_a_crash() -> None:
    """Before the release, framework = "dp" handed a Semi-DP guarantee to joint_release_dp (InvalidArgument).
    The state total is constant on replace-one pairs, so the plain-DP guarantee is the Semi-DP one at a(t) = 1:
    one move shifts the histogram by 2 in l1, eps = 2 x 0.192."""
    spec = load(COUNTY)
    spec = dataclasses.replace(
        spec,
        claim=dataclasses.replace(spec.claim, framework="dp"),  # type: ignore[type-var]
        audit=dataclasses.replace(spec.audit, samples=20),  # type: ignore[type-var]
    )
    res = audit(spec, seed=3)
    assert res.effective == PureDP(0.384, Replace())
    assert res.report["verdict"] == "fails"  # claimed 0.192 on (D, A_1): exactly refuted


def test_mcmc_draws_and_loose_shifts_make_the_guarantee_an_upper_bound() -> None:
    """A part drawn by MCMC (delta' charged from the TV bound) or stated with a shift that is only a bound gives an
    upper bound: ``upper_bound_only`` says why; exact draws at the exact shift give none (they may refute)."""
    exact = _release(GeneralizedLaplaceNoise(0.25, "l1", 0.0), 2.0, 2.0)
    assert upper_bound_only(exact) is None
    mcmc = _release(GeneralizedLaplaceNoise(0.25, "l1", 1e-6), 2.0, 2.0)
    assert "TV distance" in (upper_bound_only(mcmc) or "")
    gauss = _release(GeneralizedGaussianNoise(2.0, 1e-6, 1e-9), 2.0, 2.0)
    assert "TV distance" in (upper_bound_only(gauss) or "")
    part = Part(GeneralizedLaplaceNoise(0.25, "l1", 0.0), (Shift(UNIT, 1.0, 1.0), Shift(SEMI, 2.0, 2.0, exact=False)))
    loose = Release(BASE, INV, (part,), advertised=PureDP(0.25, UNIT))
    assert "upper bound, not the exact sensitivity" in (upper_bound_only(loose) or "")


def test_a_claim_refuted_from_an_upper_bound_is_unknown() -> None:
    """House rule: refute only from a proven lower bound. The charged MCMC guarantee (eps D, (1 + e^{eps D})
    delta') does not imply a claim at a smaller delta, but the mechanism may: the claim is unknown, not refuted."""
    a = semi_adjacent_parameter(SPACE, INV, BASE, table=[2, 1, 1, 2])
    semi = SemiAdjacent(BASE, INV, a.value)
    release = _release(GeneralizedLaplaceNoise(0.25, "l1", 1e-6), 2.0, 2.0, semi)
    acct = account(release, "semi-dp", a, SPACE)
    assert acct.effective is not None
    outcome, _ = decide_claim(PrivacyClaim.epsilon_delta(0.5, 1e-9), acct.effective)
    assert isinstance(outcome, Refuted)  # the charged guarantee alone does not imply it
    checked = not_refuted_by_a_bound(Check("claim", outcome), upper_bound_only(release))
    assert isinstance(checked.outcome, Unknown) and "TV distance" in checked.outcome.reason
    exact = _release(GeneralizedLaplaceNoise(0.25, "l1", 0.0), 2.0, 2.0)
    kept = not_refuted_by_a_bound(Check("claim", Refuted("x")), upper_bound_only(exact))
    assert isinstance(kept.outcome, Refuted)  # exact draws at the exact shift still refute
