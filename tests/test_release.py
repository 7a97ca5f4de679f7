"""The release as data (accountant.releases.model) and its interpreters (accountant.releases.accounting).

Golden numbers: the reports the kinds produced before they described releases (main at 5a0362c, the same
numbers in the shipped specs' reports): census-2020-persons, release-mixed-components, census-2020-total.
"""

from __future__ import annotations

from fractions import Fraction

import pytest

from semidp.accountant.combinatorics.semiadjacent import SemiAdjacentParameter
from semidp.accountant.core.errors import InvalidArgument, UnsupportedRelease
from semidp.accountant.core.outcome import Refuted, Unknown, Verified
from semidp.accountant.data.dataspace import DataSpace
from semidp.accountant.data.invariants import Margins, Total
from semidp.accountant.guarantees.composition import compose_as_zcdp
from semidp.accountant.guarantees.conversion_routes import epsilon_delta
from semidp.accountant.guarantees.definitions import GDP, ZCDP, ApproxDP, PureDP
from semidp.accountant.guarantees.relations import AddRemove, Replace, SemiAdjacent
from semidp.accountant.guarantees.semidp import NoFiniteGuarantee
from semidp.accountant.pld.engine import compose_plds
from semidp.accountant.profiles.gaussian import gdp_delta
from semidp.accountant.releases.accounting import (
    AuditEvidence,
    account,
    part_guarantee,
    plain_dp,
    pld_parts,
    profile_not_attained,
    semi_dp_grouping,
    statistical_audit,
    zcdp_sum,
)
from semidp.accountant.releases.model import (
    BlackBox,
    DiscreteGaussianNoise,
    DiscreteLaplaceNoise,
    GaussianNoise,
    KnownGuarantee,
    LaplaceNoise,
    Part,
    Release,
    Shift,
)
from semidp.mechanisms.gaussian import GaussianMechanism

STATE = Margins((("state",),))
SPACE = DataSpace.of(("state", 52), ("age", 4))
R = Replace()


def _a(value: int, exact: bool = True) -> SemiAdjacentParameter:
    return SemiAdjacentParameter(value, "closed-form", "test", exact, "actual t")


def _eps(g: object, delta: float, method: str) -> float | None:
    return next(e.epsilon for e in epsilon_delta(g, delta) if e.method == method)  # type: ignore[arg-type]


def test_census_persons_golden_semi_dp_grouping() -> None:
    """census-2020-persons: 2.56-zCDP published with state totals, a(t) = 2 -> 10.24-zCDP [CA24, Sec. 6]."""
    g = ZCDP(2.56, R)
    acct = account(Release(R, STATE, (Part(KnownGuarantee(g)),), advertised=g), "semi-dp", _a(2), SPACE)
    assert acct.advertised == g
    assert isinstance(acct.effective, ZCDP) and acct.effective.rho == 10.24
    assert acct.effective.relation == SemiAdjacent(R, STATE, 2)
    assert _eps(acct.effective, 1e-10, "bun-steinke") == 40.950565838003726  # the report's number
    assert acct.effective_at_lower is None  # a(t) exact: nothing else to refute from
    assert isinstance(acct.plain, NoFiniteGuarantee)  # the state totals break plain DP


def test_census_total_golden_plain_dp() -> None:
    """census-2020-total under framework dp: the total is constant under replace-one, so the joint release
    keeps the advertised 2.56-zCDP."""
    g = ZCDP(2.56, R)
    acct = account(Release(R, Total(), (Part(KnownGuarantee(g)),), advertised=g), "dp", _a(1), SPACE)
    assert acct.effective == g and _eps(acct.effective, 1e-10, "bun-steinke") == 17.91528291900186


def test_mixed_components_golden_prop21() -> None:
    """release-mixed-components: 0.5-DP, (0.25, 1e-9)-DP and 0.5-GDP composed; a(t) = 2 (the report's numbers)."""
    parts = tuple(
        Part(KnownGuarantee(g), label=f"component {i}")
        for i, g in enumerate((PureDP(0.5, R), ApproxDP(0.25, 1e-9, R), GDP(0.5, R)))
    )
    acct = account(Release(R, STATE, parts), "semi-dp", _a(2), SPACE)
    assert _eps(acct.advertised, 1e-6, "f-dp-profile") == 2.8895130460954475
    assert _eps(acct.effective, 1e-6, "f-dp-profile") == 6.219812917769287
    assert acct.prop21 is not None and acct.prop21.semi_first == acct.effective


def test_semi_dp_at_the_lower_bound_of_a_when_only_bounds_are_known() -> None:
    g = PureDP(0.5, R)
    rel = Release(R, STATE, (Part(KnownGuarantee(g)),), advertised=g)
    search_free = account(rel, "semi-dp", _a(3, exact=False), SPACE)  # closed-form upper bound: lower = 0
    assert isinstance(search_free.effective, PureDP) and search_free.effective.epsilon == 1.5
    assert isinstance(search_free.effective_at_lower, PureDP) and search_free.effective_at_lower.epsilon == 0.0
    grouped = semi_dp_grouping(rel, 2)
    assert grouped is not None and grouped.guarantee == PureDP(1.0, SemiAdjacent(R, STATE, 2))


def test_noise_laws_give_the_mechanisms_privacy_maps() -> None:
    """Gaussian: mu = Delta_2 / sigma, as mechanisms.gaussian; Laplace: eps = Delta_1 / b; discrete Gaussian:
    rho = Delta_2^2 / (2 sigma^2); discrete Laplace: eps = Delta_1 / t."""
    shift = Shift(R, l1=3.0, l2_squared=2.0)
    gauss = part_guarantee(Part(GaussianNoise(3.0), (shift,)), R)
    assert gauss == GaussianMechanism(3.0, 2.0**0.5, R).privacy_map(R)
    assert part_guarantee(Part(LaplaceNoise(6.0), (shift,)), R) == PureDP(0.5, R)
    assert part_guarantee(Part(DiscreteLaplaceNoise(Fraction(12)), (shift,)), R) == PureDP(0.25, R)
    assert part_guarantee(Part(DiscreteGaussianNoise(Fraction(4)), (shift,)), R) == ZCDP(0.25, R)
    assert part_guarantee(Part(LaplaceNoise(6.0), (shift,)), AddRemove()) is None  # no shift stated there


def test_zcdp_sum_is_the_exact_sum() -> None:
    shift = Shift(R, l1=1.0, l2_squared=1.0)
    rel = Release(R, Total(), (Part(GaussianNoise(2.0), (shift,)), Part(KnownGuarantee(PureDP(1.0, R)))))
    z = zcdp_sum(rel)
    assert z is not None and z.rho == 0.625 == compose_as_zcdp([GDP(0.5, R), PureDP(1.0, R)]).rho
    approx = Release(R, Total(), (Part(KnownGuarantee(ApproxDP(1.0, 1e-6, R))),))
    assert zcdp_sum(approx) is None  # approximate DP has no zCDP form


def test_pld_bracket_contains_the_gaussian_closed_form() -> None:
    """Two Gaussian parts (mu = 0.5 and 0.5 after the shift): the composition is sqrt(0.5)-GDP [DRS22, Cor. 3.3]."""
    shift = Shift(R, l1=1.0, l2_squared=1.0)
    rel = Release(R, Total(), (Part(GaussianNoise(2.0), (shift,)), Part(KnownGuarantee(GDP(0.5, R)))))
    parts = pld_parts(rel)
    assert parts is not None and len(parts) == 2
    iv = compose_plds(parts).delta(1.0)
    exact = gdp_delta(0.5**0.5, 1.0)
    assert iv.lower <= exact <= iv.upper and iv.upper - iv.lower < 1e-3 * exact
    assert pld_parts(Release(R, Total(), (Part(KnownGuarantee(ZCDP(1.0, R))),))) is None  # no dominating pair


def test_calibrated_part_is_read_on_its_relation_only() -> None:
    """A mechanism known by its privacy map on SemiAdjacent at a(t): not regrouped at another radius."""
    semi = SemiAdjacent(R, STATE, 2)
    part = Part(KnownGuarantee(PureDP(1.0, semi)), (Shift(semi, 4.0, 4.0),))
    rel = Release(R, STATE, (part,), advertised=PureDP(1.0, semi))
    assert account(rel, "semi-dp", _a(2), SPACE).effective == PureDP(1.0, semi)
    assert semi_dp_grouping(rel, 1) is None
    assert isinstance(plain_dp(rel, SPACE), NoFiniteGuarantee)
    with pytest.raises(UnsupportedRelease, match="no Semi-DP guarantee at radius 3"):
        account(rel, "semi-dp", _a(3), SPACE)


def test_statistical_audit_refutes_or_is_unknown_never_verifies() -> None:
    box = Release(R, STATE, black_box=BlackBox(PureDP(1.0, R), "pkg:release"))
    assert box.is_black_box
    refuted = statistical_audit(box, AuditEvidence(Refuted("below the curve"), ((1e-6, 1.3),)))
    assert isinstance(refuted.claim_outcome, Refuted) and refuted.epsilon_lower == ((1e-6, 1.3),)
    assert isinstance(statistical_audit(box, AuditEvidence(Verified("?"))).claim_outcome, Unknown)
    assert isinstance(statistical_audit(box, AuditEvidence(Unknown("n"))).claim_outcome, Unknown)
    with pytest.raises(InvalidArgument, match="black box has no guarantee"):
        account(box, "semi-dp", _a(2), SPACE)
    with pytest.raises(InvalidArgument, match="statistical_audit accounts a black box"):
        statistical_audit(Release(R, STATE, (Part(KnownGuarantee(PureDP(1.0, R))),)), AuditEvidence(Unknown("n")))


@pytest.mark.parametrize(
    ("build", "match"),
    [
        (lambda: Release(R, STATE), "exactly one of them"),
        (
            lambda: Release(
                R, STATE, (Part(KnownGuarantee(PureDP(1.0, R))),), black_box=BlackBox(PureDP(1.0, R), "m:f")
            ),
            "exactly one of them",
        ),
        (lambda: Part(GaussianNoise(1.0)), "needs the query's shift"),
        (lambda: GaussianNoise(0.0), "GaussianNoise.sigma must be a finite number > 0"),
        (lambda: LaplaceNoise(float("inf")), "LaplaceNoise.b"),
        (lambda: Shift(R, -1.0, 1.0), "Shift.l1"),
        (lambda: Release(R, STATE, (Part(KnownGuarantee(PureDP(1.0, AddRemove()))),)), "not on the release's base"),
        (
            lambda: Release(R, STATE, (Part(KnownGuarantee(PureDP(1.0, SemiAdjacent(R, Total(), 1)))),)),
            "not on the release's base",
        ),
    ],
)
def test_invalid_releases_are_refused_by_name(build: object, match: str) -> None:
    with pytest.raises(InvalidArgument, match=match):
        build()  # type: ignore[operator]


def test_profile_not_attained_names_the_part_whose_noise_attains_its_pure_epsilon_only() -> None:
    """A mechanism's pure-DP map marked ``pure_only`` (Laplace-type noise) refutes pure claims only; a published
    guarantee, or one without the mark, is judged as stated (the runner's use: tests/test_laplace_l1_dominance.py)."""
    laplace = Part(KnownGuarantee(PureDP(0.4), pure_only="Laplace noise"), label="laplace")
    assert profile_not_attained(Release(R, Total(), (laplace,))) == "'laplace': Laplace noise"
    published = Part(KnownGuarantee(ApproxDP(1.0, 1e-6)))
    assert profile_not_attained(Release(R, Total(), (published,))) is None
    assert profile_not_attained(Release(R, Total(), (published, Part(laplace.law)))) == "part 1: Laplace noise"


def test_calibrated_invariant_check_with_no_draw_passes_nothing() -> None:
    """No draw (a budget spent before any): the invariant is unchecked, so the check is unknown, not a pass."""
    import numpy as np

    from semidp.verify.kinds.calibrated import invariant_check

    a = np.array([[1, 1, 1]], dtype=np.int64)
    table = np.array([1.0, 2.0, 3.0])
    assert isinstance(invariant_check(a, table, np.zeros((0, 3))), Unknown)
    assert isinstance(invariant_check(a, table, table[None, :]), Verified)
    assert isinstance(invariant_check(a, table, table[None, :] + [1.0, 0.0, 0.0]), Refuted)
