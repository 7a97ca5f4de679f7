"""Verdict direction for every claim form and bracket type (verify/claims.py, accountant/guarantees/claim_certificate.py).

The rule: a claim is *verified* only from a certified upper end, *refuted* only from a certified lower end, and
is *unknown* whenever the claimed value lies inside the bracket. Each effective guarantee here is probed at the
bracket's own ends: at the upper end (verified), strictly inside (unknown), at the lower end (unknown: the lower
end must exceed the claim to refute) and one float below it (refuted). A verdict taken from the wrong end, or a
comparison shifted by its boundary, fails a test (issue Step 16).
"""

from __future__ import annotations

import math
from fractions import Fraction as F

import mpmath
import pytest

from semidp.accountant.core.budget import Budget
from semidp.accountant.core.errors import InvalidArgument
from semidp.accountant.core.outcome import Refuted, Unknown, Verified
from semidp.accountant.guarantees.claim_certificate import (
    Enclosure,
    approx_dp_profile_enclosure,
    erfc_enclosure,
    gdp_delta_enclosure,
    rdp_epsilon_upper,
    sqrt_lower,
    tradeoff_profile_enclosure,
    zcdp_delta_upper,
)
from semidp.accountant.guarantees.conversions import approx_dp_to_tradeoff, zcdp_to_approx_dp
from semidp.accountant.guarantees.definitions import GDP, RDP, ZCDP, ApproxDP, PureDP
from semidp.accountant.guarantees.relations import Replace
from semidp.accountant.guarantees.semidp import NoFiniteGuarantee
from semidp.accountant.pld.engine import compose_plds
from semidp.accountant.profiles.gaussian import gdp_epsilon, gdp_epsilon_lower
from semidp.verify.claims import check_composed_claim, decide, dominating_part
from tests.claim_forms import claim

REF = mpmath.MPContext()
REF.dps = 80


def below(x: float) -> float:
    return math.nextafter(x, -math.inf)


def inside(lo: float, hi: float) -> float | None:
    """A float strictly between ``lo`` and ``hi``, if there is one."""
    mid = lo + (hi - lo) / 2
    return mid if lo < mid < hi else None


def verdict(out: object) -> type:
    assert isinstance(out, (Verified, Refuted, Unknown)), out
    return type(out)


def probe(decide: object, lower: float, upper: float) -> None:
    """At the upper end: verified; inside: unknown; at the lower end: unknown; below it: refuted."""
    assert verdict(decide(upper)) is Verified  # type: ignore[operator]
    mid = inside(lower, upper)
    if mid is not None:
        assert verdict(decide(mid)) is Unknown  # type: ignore[operator]
    if lower < upper:
        assert verdict(decide(lower)) is Unknown  # type: ignore[operator]
    assert verdict(decide(below(lower))) is Refuted  # type: ignore[operator]


# --- composed claims: the PLD bracket (grid), the Gaussian closed form, one Laplace mechanism


@pytest.mark.parametrize(
    "parts",
    [
        [GDP(1.0), PureDP(0.5)],  # a grid bracket (mixed laws)
        [GDP(1.0), GDP(0.5)],  # all Gaussian: closed form
        [PureDP(1.0), PureDP(0.3), ApproxDP(0.2, 1e-9)],  # a grid bracket with a delta atom
    ],
)
def test_composed_claim_decided_from_the_right_end(parts: list[object]) -> None:
    eps = 1.0
    pld = [dominating_part(p) for p in parts]  # type: ignore[arg-type]
    iv = compose_plds(pld).delta(eps)  # type: ignore[arg-type]
    assert 0 < iv.lower < iv.upper < 1

    def decide(delta: float) -> object:
        # no budget: the default grid's bracket, unrefined (refinement: tests/test_pld_refine_claims.py)
        res = check_composed_claim(parts, claim("epsilon", F(eps), F(delta)), budget=Budget.of(0.0))  # type: ignore[arg-type]
        assert res is not None
        out, b = res
        assert b.lower == iv.lower and b.upper == iv.upper and b.estimate == iv.upper
        return out

    probe(decide, iv.lower, iv.upper)


def test_composed_claim_trivial_and_not_applicable() -> None:
    res = check_composed_claim([GDP(1.0), PureDP(0.5)], claim("epsilon", F(1), F(1)))
    assert res is not None and verdict(res[0]) is Verified
    assert (res[1].lower, res[1].estimate, res[1].upper) == (0.0, 1.0, 1.0)  # delta in [0, 1], reported as 1
    assert check_composed_claim([GDP(1.0)], claim("mu", F(1))) is None
    assert check_composed_claim([], claim("epsilon", F(1), F(1, 10))) is None
    assert check_composed_claim([GDP(1.0), ZCDP(0.5)], claim("epsilon", F(1), F(1, 10))) is None


def test_dominating_parts() -> None:
    g = dominating_part(GDP(2.0))
    assert g is not None and g.sigma == 1.0 and g.sensitivity == 2.0  # type: ignore[attr-defined]
    z = dominating_part(GDP(0.0))
    assert z is not None and (z.epsilon, z.delta) == (0.0, 0.0)  # type: ignore[attr-defined]
    p = dominating_part(PureDP(0.7))
    assert p is not None and (p.epsilon, p.delta) == (0.7, 0.0)  # type: ignore[attr-defined]
    a = dominating_part(ApproxDP(0.7, 1e-6))
    assert a is not None and (a.epsilon, a.delta) == (0.7, 1e-6)  # type: ignore[attr-defined]
    assert dominating_part(ZCDP(1.0)) is None


# --- single guarantees: profile comparisons


def test_gdp_epsilon_claims() -> None:
    enc = gdp_delta_enclosure(1.0, 1.0)
    probe(lambda d: decide(GDP(1.0), claim("epsilon", F(1), F(d)))[0], enc.lower, enc.upper)
    out, b = decide(GDP(1.0), claim("epsilon", F(1), F(1, 10**5)))
    assert b is not None and b.lower < b.upper == b.estimate and b.lower > 4.377 and b.upper < 4.3772
    assert decide(GDP(1.0), claim("epsilon", F(1), F(0)))[1] is None


def test_zcdp_epsilon_claims_upper_from_cks_lower_from_the_gaussian() -> None:
    rho, eps = 0.5, 1.0
    upper = zcdp_delta_upper(rho, eps)[0].upper
    lower = gdp_delta_enclosure(sqrt_lower(2 * rho), eps).lower
    assert lower < upper
    probe(lambda d: decide(ZCDP(rho), claim("epsilon", F(eps), F(d)))[0], lower, upper)
    out, b = decide(ZCDP(rho), claim("epsilon", F(eps), F(1, 10**6)))
    assert b is not None and b.lower < b.upper
    with pytest.raises(InvalidArgument, match="epsilon >= 0"):  # no claim has a negative epsilon (PrivacyClaim)
        claim("epsilon", F(-1), F(1, 2))
    assert verdict(decide(ZCDP(rho), claim("epsilon", F(1), F(1)))[0]) is Verified


def test_approx_dp_epsilon_claims() -> None:
    enc = approx_dp_profile_enclosure(1.0, 1e-3, 0.5)
    probe(lambda d: decide(ApproxDP(1.0, 1e-3), claim("epsilon", F(1, 2), F(d)))[0], enc.lower, enc.upper)
    assert verdict(decide(ApproxDP(1.0, 1e-3), claim("epsilon", F(1), F(1, 10**3)))[0]) is Verified
    assert verdict(decide(ApproxDP(1.0, 1e-3), claim("epsilon", F(1), F(1, 10**3) - F(1, 10**12)))[0]) is Refuted
    assert verdict(decide(PureDP(1.0), claim("epsilon", F(1), F(0)))[0]) is Verified
    assert verdict(decide(PureDP(1.0), claim("epsilon", F(1) - F(1, 10**9), F(0)))[0]) is Refuted
    assert verdict(decide(PureDP(1.0), claim("zcdp", F(1, 2)))[0]) is Verified
    assert verdict(decide(PureDP(1.0), claim("zcdp", F(1, 2) - F(1, 10**9)))[0]) is Unknown
    assert verdict(decide(ApproxDP(1.0, 1e-9), claim("zcdp", F(100)))[0]) is Refuted
    assert verdict(decide(PureDP(1.0), claim("mu", F(100)))[0]) is Unknown


def test_tradeoff_claims_are_never_refuted() -> None:
    t = approx_dp_to_tradeoff(ApproxDP(1.0, 0.0))
    out = decide(t, claim("epsilon", F(1, 2), F(1, 10**9)))[0]
    assert verdict(out) is Unknown
    out = decide(t, claim("epsilon", F(1), F(1, 10**9)))[0]
    assert verdict(out) is Verified
    assert verdict(decide(t, claim("epsilon", F(0), F(1)))[0]) is Verified


def test_rdp_epsilon_claims_verified_from_the_upper_end_only() -> None:
    g = RDP((2.0, 8.0), (1.0, 3.0))
    enc = rdp_epsilon_upper(g.orders, g.epsilons, 1e-6)
    assert verdict(decide(g, claim("epsilon", F(enc.upper), F(1, 10**6)))[0]) is Verified
    assert verdict(decide(g, claim("epsilon", F(below(enc.upper)), F(1, 10**6)))[0]) is Unknown
    assert verdict(decide(g, claim("epsilon", F(1), F(1)))[0]) is Verified
    assert verdict(decide(g, claim("epsilon", F(100), F(0)))[0]) is Unknown
    assert verdict(decide(g, claim("rdp", F(2), F(1)))[0]) is Verified
    assert verdict(decide(g, claim("rdp", F(2), F(1) - F(1, 10**9)))[0]) is Unknown
    assert verdict(decide(g, claim("rdp", F(3), F(100)))[0]) is Unknown
    assert verdict(decide(g, claim("mu", F(100)))[0]) is Unknown


# --- exact comparisons: the boundary belongs to the claim


@pytest.mark.parametrize(
    ("effective", "form", "value"),
    [
        (GDP(1.5), "mu", (F(3, 2),)),
        (GDP(1.5), "zcdp", (F(9, 8),)),
        (GDP(1.5), "rdp", (F(3), F(27, 8))),
        (ZCDP(0.75), "zcdp", (F(3, 4),)),
        (ZCDP(0.75), "rdp", (F(4), F(3))),
    ],
)
def test_exact_claims_hold_at_equality_and_fail_just_below(effective: object, form: str, value: tuple[F, ...]) -> None:
    assert verdict(decide(effective, claim(form, *value))[0]) is Verified  # type: ignore[arg-type]
    lowered = (*value[:-1], value[-1] - F(1, 10**12))
    assert verdict(decide(effective, claim(form, *lowered))[0]) is Refuted  # type: ignore[arg-type]


def test_zcdp_mu_claims_refute_only_below_the_gaussian() -> None:
    assert verdict(decide(ZCDP(0.5), claim("mu", F(99, 100)))[0]) is Refuted  # sqrt(2 rho) = 1
    assert verdict(decide(ZCDP(0.5), claim("mu", F(1)))[0]) is Unknown
    assert verdict(decide(ZCDP(0.5), claim("mu", F(5)))[0]) is Unknown


def test_no_finite_guarantee() -> None:
    none = NoFiniteGuarantee("the invariant differs", Replace())
    assert verdict(decide(none, claim("epsilon", F(1), F(1)))[0]) is Verified
    assert verdict(decide(none, claim("epsilon", F(100), F(1) - F(1, 10**9)))[0]) is Refuted
    assert verdict(decide(none, claim("mu", F(100)))[0]) is Refuted


# --- the enclosures themselves: each end on its side of a reference, and tight


@pytest.mark.parametrize("z", [0.0, 0.3, 1.0, 2.5, 3.999, 4.0, 4.001, 6.0, 12.0, 30.0, -0.7, -5.0])
def test_erfc_enclosure_contains_erfc_and_is_tight(z: float) -> None:
    enc = erfc_enclosure(z)
    ref = REF.erfc(REF.mpf(z))
    assert REF.mpf(enc.lower) <= ref <= REF.mpf(enc.upper)
    assert enc.upper <= math.nextafter(math.nextafter(float(ref), math.inf), math.inf)
    assert enc.lower >= math.nextafter(math.nextafter(float(ref), -math.inf), -math.inf)


def test_erfc_on_an_interval_straddling_zero_and_the_switch() -> None:
    from mpmath.ctx_iv import MPIntervalContext

    from semidp.accountant.guarantees.claim_certificate import erfc_iv

    c = MPIntervalContext()
    c.dps = 40
    for lo, hi, tight in [(-0.5, 0.25, True), (-3.0, -2.0, False), (3.5, 4.5, False)]:
        v = erfc_iv(c, c.mpf([lo, hi]))
        assert REF.mpf(v.a) <= REF.erfc(hi) and REF.erfc(lo) <= REF.mpf(v.b)
        if tight:  # ends evaluated at the ends (erfc is monotone); the series on a wide interval is loose
            assert REF.mpf(v.b) - REF.mpf(v.a) <= (REF.erfc(lo) - REF.erfc(hi)) * (1 + REF.mpf(10) ** -20)


@pytest.mark.parametrize(("mu", "eps"), [(1.0, 1.0), (0.2, 3.0), (3.0, -1.0), (0.5, 0.0), (2.0, 9.0)])
def test_gdp_enclosure_brackets_the_profile(mu: float, eps: float) -> None:
    enc = gdp_delta_enclosure(mu, eps)
    m, e = REF.mpf(mu), REF.mpf(eps)
    ref = REF.ncdf(m / 2 - e / m) - REF.exp(e) * REF.ncdf(-m / 2 - e / m)
    assert REF.mpf(enc.lower) <= ref <= REF.mpf(enc.upper)
    assert enc.upper - enc.lower <= 4 * math.ulp(float(ref))


def test_gdp_enclosure_without_noise() -> None:
    assert gdp_delta_enclosure(0.0, 0.5) == Enclosure(0.0, 0.0, "exact (mu = 0)")
    enc = gdp_delta_enclosure(0.0, -1.0)
    ref = 1 - REF.exp(-1)
    assert REF.mpf(enc.lower) <= ref <= REF.mpf(enc.upper) and enc.upper - enc.lower <= 2 * math.ulp(0.63)


def test_approx_dp_profile_enclosure() -> None:
    enc = approx_dp_profile_enclosure(1.0, 0.01, 0.25)
    ref = REF.mpf(0.01) + (1 - REF.mpf(0.01)) * (REF.e - REF.exp(0.25)) / (1 + REF.e)
    assert REF.mpf(enc.lower) <= ref <= REF.mpf(enc.upper) and enc.upper - enc.lower <= 2 * math.ulp(float(ref))
    assert approx_dp_profile_enclosure(1.0, 0.01, 1.0).upper == 0.01 == approx_dp_profile_enclosure(1.0, 0.01, 2).lower


def test_zcdp_profile_bound_at_a_given_order() -> None:
    rho, eps, alpha = 0.5, 2.0, F(3)
    enc, al = zcdp_delta_upper(rho, eps, alpha)
    a = REF.mpf(3)
    ref = REF.exp((a - 1) * (a * REF.mpf(rho) - eps) + a * REF.log(1 - 1 / a)) / (a - 1)
    assert al == alpha and REF.mpf(enc.lower) <= ref <= REF.mpf(enc.upper)
    assert enc.upper - enc.lower <= 2 * math.ulp(float(ref))
    assert zcdp_delta_upper(0.0, 1.0)[0].upper == 0.0
    with pytest.raises(InvalidArgument, match="alpha"):
        zcdp_delta_upper(rho, eps, F(1))


def test_tradeoff_profile_enclosure_is_the_max_over_vertices() -> None:
    enc = tradeoff_profile_enclosure([0.0, 0.2, 1.0], [1.0, 0.3, 0.0], 0.5)
    ref = 1 - REF.mpf(0.3) - REF.exp(0.5) * REF.mpf(0.2)
    assert REF.mpf(enc.lower) <= ref <= REF.mpf(enc.upper) and enc.upper - enc.lower <= 2 * math.ulp(float(ref))
    assert tradeoff_profile_enclosure([0.5], [0.6], 0.0) == Enclosure(0.0, 0.0, "mpmath.iv at 1 vertices")
    with pytest.raises(InvalidArgument):
        tradeoff_profile_enclosure([], [], 0.0)


def test_rdp_conversion_picks_the_best_order() -> None:
    enc = rdp_epsilon_upper([2.0, 8.0, 0.5], [1.0, 3.0, 0.0], 1e-6)
    d = REF.mpf(1e-6)

    def bound(a: float, e: float) -> mpmath.mpf:
        a_ = REF.mpf(a)
        return e + (-REF.log(d) + (a_ - 1) * REF.log(1 - 1 / a_) - REF.log(a_)) / (a_ - 1)

    ref = min(bound(2.0, 1.0), bound(8.0, 3.0))
    assert REF.mpf(enc.lower) <= ref <= REF.mpf(enc.upper) and enc.upper - enc.lower <= 2 * math.ulp(float(ref))
    with pytest.raises(InvalidArgument):
        rdp_epsilon_upper([0.5], [1.0], 1e-6)


def test_sqrt_lower_is_below() -> None:
    assert sqrt_lower(4.0) == 2.0
    assert F(sqrt_lower(2.0)) ** 2 <= 2 and F(math.nextafter(sqrt_lower(2.0), 3.0)) ** 2 > 2


def test_enclosure_clamp_and_order() -> None:
    assert Enclosure(-0.5, 1.5, "m").clamp() == Enclosure(0.0, 1.0, "m")
    assert Enclosure(2.0, 3.0, "m").clamp() == Enclosure(1.0, 1.0, "m")
    with pytest.raises(InvalidArgument):
        Enclosure(1.0, 0.5, "m")
    assert Enclosure(0.5, 0.5, "m").text() == "[0.5, 0.5]"


def test_trivial_delta_one_claims_hold_even_where_the_bound_exceeds_one() -> None:
    # rho = 50 at eps = 0: the CKS bound is far above 1 (the enclosure says so and stops at 1) and the Gaussian's
    # lower end is below 1, so only the trivial rule (every mechanism satisfies delta <= 1) verifies it
    enc = zcdp_delta_upper(50.0, 0.0)[0]
    assert (enc.lower, enc.upper) == (1.0, 1.0) and enc.method.startswith("trivial: the CKS bound")
    assert verdict(decide(ZCDP(50.0), claim("epsilon", F(0), F(1)))[0]) is Verified
    assert verdict(decide(RDP((2.0,), (100.0,)), claim("epsilon", F(0), F(1)))[0]) is Verified
    # the trivial rule answers a zCDP claim at delta = 1 itself: no epsilon bounds at delta = 1 are reported
    out, bounds = decide(ZCDP(5.0), claim("epsilon", F(0), F(1)))
    assert out == Verified("certified (trivial): delta >= 1 holds trivially") and bounds is None


def test_tradeoff_claims_verified_only_from_the_upper_end_of_the_profile() -> None:
    t = approx_dp_to_tradeoff(ApproxDP(1.0, 0.0))
    enc = tradeoff_profile_enclosure(t.curve.alphas, t.curve.betas, 0.5)
    assert enc.lower < enc.upper
    assert verdict(decide(t, claim("epsilon", F(1, 2), F(enc.upper)))[0]) is Verified
    assert verdict(decide(t, claim("epsilon", F(1, 2), F(enc.lower)))[0]) is Unknown
    assert verdict(decide(t, claim("epsilon", F(1, 2), F(below(enc.lower))))[0]) is Unknown  # never refuted


def test_zcdp_at_small_epsilon_uses_the_cks_bound() -> None:
    # eps = 0 and eps = 0.5 are on the CKS side (only eps < 0 falls back to delta <= 1)
    assert verdict(decide(ZCDP(0.001), claim("epsilon", F(0), F(1, 2)))[0]) is Verified
    assert verdict(decide(ZCDP(0.001), claim("epsilon", F(1, 2), F(1, 10**20)))[0]) is Verified


def test_zcdp_epsilon_bounds() -> None:
    rho, delta = 0.125, 1e-6
    out, b = decide(ZCDP(rho), claim("epsilon", F(1), F(delta)))
    assert verdict(out) is Refuted and b is not None
    assert b.lower == gdp_epsilon_lower(sqrt_lower(2 * rho), delta) > 2.25
    assert b.upper == b.estimate == zcdp_to_approx_dp(ZCDP(rho), delta).epsilon
    assert decide(ZCDP(rho), claim("epsilon", F(1), F(0)))[1] is None  # a pure claim: no epsilon(delta) bounds
    out, b = decide(ZCDP(0.0), claim("epsilon", F(1), F(delta)))
    assert verdict(out) is Verified and b is not None and b.lower == 0.0 == b.upper


def test_gdp_bounds_only_for_a_delta_strictly_inside_zero_one() -> None:
    assert decide(GDP(1.0), claim("epsilon", F(1), F(1)))[1] is None
    assert decide(GDP(1.0), claim("epsilon", F(1), F(0)))[1] is None
    b = decide(GDP(1.0), claim("epsilon", F(1), F(1, 10)))[1]
    assert b is not None and b.upper == gdp_epsilon(1.0, 0.1) and b.lower == gdp_epsilon_lower(1.0, 0.1)


def test_pure_claims_on_approximate_dp_need_a_zero_delta() -> None:
    # (1, 1e-3)-DP never implies (2, 0)-DP: its profile is 1e-3 at every epsilon >= 1
    assert verdict(decide(ApproxDP(1.0, 1e-3), claim("epsilon", F(2), F(0)))[0]) is Refuted
    assert verdict(decide(PureDP(1.0), claim("epsilon", F(2), F(0)))[0]) is Verified


def test_pure_dp_gives_half_epsilon_squared_zcdp() -> None:
    assert verdict(decide(PureDP(0.5), claim("zcdp", F(1, 8)))[0]) is Verified  # [BS16, Prop. 1.4]
    assert verdict(decide(PureDP(0.5), claim("zcdp", F(1, 8) - F(1, 10**12)))[0]) is Unknown


def test_the_exact_pure_comparison_only_for_two_zero_deltas() -> None:
    assert verdict(decide(PureDP(2.0), claim("epsilon", F(1), F(1)))[0]) is Verified  # delta = 1 always holds
    assert verdict(decide(ApproxDP(0.5, 1.0), claim("epsilon", F(1), F(0)))[0]) is Refuted
    # (1/8, 1/8)-DP at eps = 0: 1/8 + 7/8 tanh(1/16) = 0.18 > 1/8 (epsilon compared with epsilon, not delta)
    assert verdict(decide(ApproxDP(0.125, 0.125), claim("epsilon", F(0), F(1, 8)))[0]) is Refuted


class _CoarseStop:
    """An interval context at 60 digits that reports ``dps = -3``: ``_erfc_series`` then stops once a term is
    below 1 % of the sum, so its truncation term is far above the interval arithmetic's rounding width (at the
    real stopping rule, 10^5 below it, no float test can see the term)."""

    def __init__(self) -> None:
        from mpmath.ctx_iv import MPIntervalContext

        self._c = MPIntervalContext()
        self._c.dps = 60
        self.dps = -3

    def __getattr__(self, name: str) -> object:
        return getattr(self._c, name)


@pytest.mark.parametrize("z", [0.5, 1.0, 2.0, 3.5])
def test_erfc_series_tail_bound_encloses_the_truncated_terms(z: float) -> None:
    """[AS64, Eq. 7.1.6]: for n >= N the term ratio is at most r = 2 z^2 / (2N + 3), so the dropped terms lie in
    [0, t_N / (1 - r)]; the enclosure must contain erfc whatever the stopping point, and the tail bound is at
    most a few times the first dropped term (so it is not vacuous)."""
    from semidp.accountant.guarantees.claim_certificate import _erfc_series

    c = _CoarseStop()
    v = _erfc_series(c, c.mpf(z))
    ref = REF.erfc(REF.mpf(z))
    lo, hi = REF.mpf(v.a), REF.mpf(v.b)
    assert lo <= ref <= hi
    # the partial sum stops within 1 % of erf's series, so the width is a few percent of erf(z) at most
    assert 0 < hi - lo <= REF.mpf(0.05) * REF.erf(REF.mpf(z))


def test_gdp_enclosure_takes_more_digits_when_the_terms_cancel() -> None:
    """mu = eps = 1e-50: Phi(a) ~ 0.16 and delta ~ 8.3e-52, a cancellation of 10^-50, so 60 digits leave a
    relative width of about 10^-10; the enclosure must go on to 150 digits and be float-tight (reference: the
    profile [BW18, Thm. 8] at 200 digits)."""
    ref_ctx = mpmath.MPContext()
    ref_ctx.dps = 200
    m = ref_ctx.mpf(1e-50)
    ref = ref_ctx.ncdf(m / 2 - m / m) - ref_ctx.exp(m) * ref_ctx.ncdf(-m / 2 - m / m)
    enc = gdp_delta_enclosure(1e-50, 1e-50)
    assert ref_ctx.mpf(enc.lower) <= ref <= ref_ctx.mpf(enc.upper)
    assert enc.upper - enc.lower <= 2 * math.ulp(float(ref))
    assert enc.method == "mpmath.iv, 150 digits"


def test_interval_ends_beyond_the_exponent_limit() -> None:
    """``END_EXPONENT_LIMIT = 2^14``: the zCDP bound at rho = 1000, alpha = 3 is e^6000 ~ 2^8656 and at alpha = 4
    e^12000 ~ 2^17312 (beyond 2^16384: no exact rational). Both exceed 1, which the bound's logarithm shows without
    forming the exponential: delta <= 1 trivially, never an error (a zcdp of 1e18-1e24 ended in "interval end
    beyond 2^16384" before)."""
    for alpha in (F(3), F(4), F(10**6)):
        enc, al = zcdp_delta_upper(1000.0, 0.0, alpha)
        assert al == alpha and (enc.lower, enc.upper) == (1.0, 1.0) and enc.method.startswith("trivial")
    enc, _ = zcdp_delta_upper(1e-3, 5.0, F(3))  # a bound below 1 is still enclosed, not clamped to 1
    assert 0.0 < enc.lower <= enc.upper < 1.0 and enc.method.startswith("mpmath.iv")


def test_cks_order_is_capped_for_a_tiny_rho() -> None:
    """rho = 1e-300, eps = 5: the optimal order is beyond 1e300, where the search stops at the cap (any order > 1
    is sound) instead of doubling forever."""
    from semidp.accountant.guarantees.claim_certificate import cks_order

    assert cks_order(1e-300, 5.0) == F(1e300)


def test_gdp_enclosure_without_noise_at_epsilon_zero_is_exact() -> None:
    assert gdp_delta_enclosure(0.0, 0.0) == Enclosure(0.0, 0.0, "exact (mu = 0)")


def test_an_end_far_below_the_float_range_is_clamped_outward() -> None:
    """rho = 0.5, eps = 12000, alpha = 2: the zCDP bound is e^-12001 ~ 2^-17314, below 2^-16384, so its ends are
    clamped to [0, 2^-16384] and certified as [0, 5e-324] (the smallest float above the value)."""
    enc, _ = zcdp_delta_upper(0.5, 12000.0, F(2))
    assert (enc.lower, enc.upper) == (0.0, 5e-324)


@pytest.mark.parametrize("delta", [0.0, 1.0])
def test_rdp_conversion_needs_a_delta_strictly_inside_zero_one(delta: float) -> None:
    with pytest.raises(InvalidArgument, match="delta"):
        rdp_epsilon_upper([2.0], [1.0], delta)


def test_an_enclosure_cannot_be_changed_after_it_is_certified() -> None:
    """Enclosure is frozen: a certified [lower, upper] cannot be widened or narrowed in place afterwards."""
    import dataclasses

    enc = Enclosure(0.25, 0.5, "m")
    with pytest.raises(dataclasses.FrozenInstanceError):
        enc.upper = 0.3  # type: ignore[misc]
    assert (enc.lower, enc.upper) == (0.25, 0.5)


def test_the_exponent_limit_is_two_to_the_fourteen() -> None:
    """``END_EXPONENT_LIMIT = 2^14`` on both sides: at eps = 6000 the vertex (1e-3, 0) of a tradeoff curve gives
    1 - e^6000 / 1000 ~ -2^8646, below 2^16384 in magnitude, so it is still an exact rational and the profile
    max(0, 1 - 1 - 0, 1 - e^6000/1000) = 0 is certified as [0, 0] [DRS22, Prop. 2.12]; at eps = 12000 the same
    vertex gives ~ -2^17302, beyond the limit, which is refused (InvalidArgument, exit 2) instead of forming a
    17 000-bit integer."""
    enc = tradeoff_profile_enclosure([0.0, 1e-3], [1.0, 0.0], 6000.0)
    assert (enc.lower, enc.upper) == (0.0, 0.0)
    with pytest.raises(InvalidArgument, match="2\\^16384"):
        tradeoff_profile_enclosure([0.0, 1e-3], [1.0, 0.0], 12000.0)


def _cks_root(rho: float, eps: float) -> mpmath.mpf:
    """The order solving (2 alpha - 1) rho - eps + log(1 - 1/alpha) = 0 (increasing in alpha), by 80-digit
    bisection on [1 + 1e-40, 1e8]."""
    lo, hi = 1 + REF.mpf(10) ** -40, REF.mpf(10) ** 8
    for _ in range(400):
        mid = (lo + hi) / 2
        if (2 * mid - 1) * rho - eps + REF.log(1 - 1 / mid) < 0:
            lo = mid
        else:
            hi = mid
    return hi


@pytest.mark.parametrize(("rho", "eps"), [(0.5, 1.0), (0.5, 2.0), (0.05, 1.0), (2.0, 1.0), (10.0, 0.0), (0.01, 0.0)])
def test_the_default_cks_order_is_the_optimal_one(rho: float, eps: float) -> None:
    """[CKS20, Cor. 13]: the bound e^{(alpha-1)(alpha rho - eps)} (1 - 1/alpha)^alpha / (alpha - 1) is least where
    (2 alpha - 1) rho - eps + log(1 - 1/alpha) = 0. cks_order finds that root to 1e-13 relative (an 80-digit
    bisection is the reference; roots from 1.0000454 at rho = 10 to 11.4 at rho = 0.05), and
    zcdp_delta_upper at that order is at least the bound there and within 1e-12 relative of the infimum."""
    from semidp.accountant.guarantees.claim_certificate import cks_order

    root = _cks_root(rho, eps)
    al = cks_order(rho, eps)
    assert abs((REF.mpf(al.numerator) / al.denominator) - root) <= 1e-13 * root
    enc, used = zcdp_delta_upper(rho, eps)
    assert used == al

    def bound(a: mpmath.mpf) -> mpmath.mpf:
        return REF.exp((a - 1) * (a * rho - eps) + a * REF.log(1 - 1 / a)) / (a - 1)

    assert bound((REF.mpf(al.numerator) / al.denominator)) <= enc.upper <= bound(root) * (1 + REF.mpf(1e-12))
    assert enc.lower <= bound((REF.mpf(al.numerator) / al.denominator))


def test_cks_order_at_the_lower_end_of_its_search() -> None:
    """rho = 100, eps = 0: the derivative (2 alpha - 1) rho - eps + log(1 - 1/alpha) is already positive at the
    search's lower end alpha = 1 + 1e-12 (100 - 27.6 > 0), so that order is returned; the bound there exceeds 1,
    which the enclosure reports as the trivial delta <= 1."""
    from semidp.accountant.guarantees.claim_certificate import cks_order

    assert cks_order(100.0, 0.0) == F(1.0 + 1e-12)
    enc, al = zcdp_delta_upper(100.0, 0.0)
    assert al == F(1.0 + 1e-12) and (enc.lower, enc.upper) == (1.0, 1.0)


def test_interval_ends_at_the_exponent_limits_exactly() -> None:
    """``_end`` reads an interval end m 2^e (|m| < 2^bc) as an exact rational unless e + bc < -2^14 (moved outward
    to 0 or +-2^-16384: both round to the floats 0 and +-5e-324 like the exact end would) or e + bc > 2^14 (refused:
    no float is that large). Checked at the boundaries: 2^-16385 is exact, 2^-16386 is moved (the lower end of a
    positive value to 0, its upper end to 2^-16384; a negative one's lower end to -2^-16384, its upper end to 0);
    2^16383 is exact, 2^16384 is refused."""
    from mpmath.libmp import from_man_exp

    from semidp.accountant.guarantees.claim_certificate import _end

    tiny = F(1, 1 << 16384)
    assert _end(from_man_exp(1, -16385), upper=False) == F(1, 1 << 16385) == _end(from_man_exp(1, -16385), upper=True)
    assert (_end(from_man_exp(1, -16386), upper=False), _end(from_man_exp(1, -16386), upper=True)) == (0, tiny)
    assert (_end(from_man_exp(-1, -16386), upper=False), _end(from_man_exp(-1, -16386), upper=True)) == (-tiny, 0)
    assert _end(from_man_exp(-1, -16385), upper=False) == -F(1, 1 << 16385)
    assert _end(from_man_exp(1, 16383), upper=True) == F(1 << 16383)
    with pytest.raises(InvalidArgument, match="2\\^16384"):
        _end(from_man_exp(1, 16384), upper=True)
    with pytest.raises(InvalidArgument, match="2\\^16384"):
        _end(from_man_exp(-1, 16384), upper=False)


def test_a_vanishing_rho_is_certified_without_an_astronomical_rational() -> None:
    """rho = 1e-300, eps = 5: the order is capped at 1e300 and the bound is e^{-4e300}, whose exponent no exact
    rational could hold; its ends move outward to [0, 2^-16384], certified as [0, 5e-324] (spec fuzzer case)."""
    enc, al = zcdp_delta_upper(1e-300, 5.0)
    assert al == F(1e300) and (enc.lower, enc.upper) == (0.0, 5e-324)


@pytest.mark.parametrize("rho", [1e-60, 1e-200, 1e-300])
def test_the_cks_order_of_a_vanishing_rho_is_found(rho: float) -> None:
    """rho-zCDP at eps = 0 [CKS20, Cor. 13]: the optimal order solves (2 alpha - 1) rho + log(1 - 1/alpha) = 0,
    alpha ~ 1/sqrt(2 rho) (7.07e29 to 7.07e149 here; an 80-digit bisection is the reference), and the bound there is
    ~ sqrt(2 rho / e) (8.58e-31 to 8.58e-151). With 200 bisection steps from [1, 1/(2 rho)] the order was 3.1e139 at
    rho = 1e-200 (not converged) and the certified delta the trivial 1 (bug fixed: steps enough for [1, 1e300])."""
    from semidp.accountant.guarantees.claim_certificate import cks_order

    lo, hi = REF.mpf(1), REF.mpf(10) ** 160
    for _ in range(1200):
        mid = (lo + hi) / 2
        if (2 * mid - 1) * rho + REF.log1p(-1 / mid) < 0:
            lo = mid
        else:
            hi = mid
    al = cks_order(rho, 0.0)
    assert abs(REF.mpf(al.numerator) / al.denominator - hi) <= 1e-13 * hi
    a = hi
    best = REF.exp((a - 1) * a * rho + a * REF.log1p(-1 / a)) / (a - 1)
    enc = zcdp_delta_upper(rho, 0.0)[0]
    assert best <= enc.upper <= best * (1 + REF.mpf(1e-12)) and enc.upper < 1e-30


def test_zcdp_bound_edges_rho_zero_and_a_log_between_zero_and_one() -> None:
    """rho = 0: delta = 0 exactly, reported at order 2. rho = 0.7, eps = 0, alpha = 2: the bound's logarithm is
    (alpha - 1)(alpha rho - eps) + alpha log(1 - 1/alpha) - log(alpha - 1) = 1.4 - 2 log 2 = 0.0137 in (0, 1), so the
    bound e^0.0137 exceeds 1 and is reported as the trivial delta <= 1 [CKS20, Cor. 13]."""
    assert zcdp_delta_upper(0.0, 1.0) == (Enclosure(0.0, 0.0, "exact (rho = 0)"), F(2))
    enc, al = zcdp_delta_upper(0.7, 0.0, F(2))
    assert al == 2 and (enc.lower, enc.upper) == (1.0, 1.0) and enc.method.startswith("trivial")
    assert 0 < 1.4 - 2 * math.log(2) < 1


def test_rdp_conversion_skips_orders_at_or_below_one() -> None:
    """[CKS20, Prop. 12] needs alpha > 1: orders 1 and 0.5 are skipped (1 would divide by alpha - 1 = 0), so the
    curve (1, 0), (0.5, 0), (2, 1) gives the bound at alpha = 2 alone: 1 + log(1/delta) - 2 log 2 at delta = 1e-6."""
    enc = rdp_epsilon_upper([1.0, 0.5, 2.0], [0.0, 0.0, 1.0], 1e-6)
    ref = 1 - REF.log(REF.mpf(1e-6)) + REF.log(REF.mpf(0.5)) - REF.log(2)
    assert REF.mpf(enc.lower) <= ref <= REF.mpf(enc.upper) and enc.upper - enc.lower <= 2 * math.ulp(float(ref))
    assert "alpha = 2.0" in enc.method


def test_each_end_comes_from_its_own_side_at_a_coarse_precision(monkeypatch: pytest.MonkeyPatch) -> None:
    """At 12 working digits every enclosure is about 1e-12 wide, far wider than a float's rounding, so an upper end
    taken from the interval's lower end (or the reverse) falls on the wrong side of the 80-digit reference, which a
    60-digit run hides inside one float step. Each certified function is run at 12 digits (PRECISIONS patched) and
    must still contain its reference: erfc [AS64, 7.1.6 / 7.1.14], the GDP profile [BW18, Thm. 8], the profile of
    f_{eps,delta} [KOV15, Thm. 2.4], the zCDP bound at order 3 [CKS20, Cor. 13], a tradeoff curve's profile
    [DRS22, Prop. 2.12], the RDP conversion [CKS20, Prop. 12] and sqrt(2) from below."""
    from semidp.accountant.guarantees import claim_certificate as cc

    monkeypatch.setattr(cc, "PRECISIONS", (12,))
    e, d = REF.e, REF.mpf(1e-6)
    a3 = REF.mpf(3)
    cases = [
        (erfc_enclosure(0.7, dps=12), REF.erfc(REF.mpf(0.7))),
        (erfc_enclosure(6.0, dps=12), REF.erfc(REF.mpf(6))),
        (erfc_enclosure(-1.0, dps=12), REF.erfc(REF.mpf(-1))),
        (gdp_delta_enclosure(1.0, 1.0), REF.ncdf(REF.mpf(-0.5)) - e * REF.ncdf(REF.mpf(-1.5))),
        (approx_dp_profile_enclosure(1.0, 0.01, 0.25), 0.01 + (1 - REF.mpf(0.01)) * (e - REF.exp(0.25)) / (1 + e)),
        (zcdp_delta_upper(0.5, 2.0, F(3))[0], REF.exp(2 * (a3 / 2 - 2) + 3 * REF.log(2 / a3)) / 2),
        (tradeoff_profile_enclosure([0.0, 0.2, 1.0], [1.0, 0.3, 0.0], 0.5), 0.7 - REF.exp(0.5) * REF.mpf(0.2)),
        (
            rdp_epsilon_upper([2.0, 8.0], [1.0, 3.0], 1e-6),
            3 + (-REF.log(d) + 7 * REF.log(7 / REF.mpf(8)) - REF.log(8)) / 7,
        ),
    ]
    for enc, ref in cases:
        assert REF.mpf(enc.lower) <= ref <= REF.mpf(enc.upper), (enc, ref)
        assert 0 < enc.upper - enc.lower <= 1e-9 * abs(ref), (enc, ref)  # coarse, but not vacuous
    s = sqrt_lower(2.0)
    assert F(s) ** 2 <= 2 and s > 1.4142135


def test_rdp_conversion_keeps_the_order_with_the_least_upper_end(monkeypatch: pytest.MonkeyPatch) -> None:
    """Two orders whose bounds [CKS20, Prop. 12] agree to 1e-15 (epsilon(2) = 1.001, epsilon(8) chosen so): at 12
    working digits the order-2 enclosure is wider on both sides, so its lower end is the smaller and its upper end
    the larger. Only the upper end bounds epsilon, so the order-8 enclosure must be kept, in either listing order."""
    from semidp.accountant.guarantees import claim_certificate as cc

    monkeypatch.setattr(cc, "PRECISIONS", (12,))
    e8 = 11.887166301428271
    two, eight = rdp_epsilon_upper([2.0], [1.001], 1e-6), rdp_epsilon_upper([8.0], [e8], 1e-6)
    assert two.lower < eight.lower <= eight.upper < two.upper
    assert rdp_epsilon_upper([2.0, 8.0], [1.001, e8], 1e-6) == eight
    assert rdp_epsilon_upper([8.0, 2.0], [e8, 1.001], 1e-6) == eight


@pytest.mark.parametrize("mu", [1e-70, 1e-100])
def test_gdp_profile_whose_60_digit_enclosure_straddles_zero_is_refined(mu: float) -> None:
    """At eps = 0 the profile is Phi(mu/2) - Phi(-mu/2) = mu/sqrt(2 pi) (1 - mu^2/24 + ...): the two terms ~ 1/2
    cancel to 1e-70, so at 60 digits the enclosure straddles 0 and must be refined at more digits (an acceptance
    test on the lower end instead of the upper would keep [0, ~1e-60])."""
    enc = gdp_delta_enclosure(mu, 0.0)
    ref = REF.mpf(mu) / REF.sqrt(2 * REF.pi)
    assert enc.lower <= ref <= enc.upper
    assert enc.upper <= float(ref) * (1 + 1e-12)
    assert enc.lower >= float(ref) * (1 - 1e-12)
    assert "60 digits" not in enc.method


@pytest.mark.parametrize("z", [4.5, 6.0, 12.0, 40.0])
def test_erfc_continued_fraction_enclosure_contains_erfc_at_60_digits(z: float) -> None:
    """Above SERIES_SWITCH erfc comes from the hull of two *consecutive* approximants of Laplace's continued
    fraction, which bracket the value [LW08, Thm. 3.11]; two approximants of one parity lie on one side, off by
    about the hull's 1e-52 relative width: invisible in floats, visible against an 80-digit reference."""
    from mpmath.ctx_iv import MPIntervalContext

    from semidp.accountant.guarantees.claim_certificate import erfc_iv

    c = MPIntervalContext()
    c.dps = 60
    v = erfc_iv(c, c.mpf(z))
    ref = REF.erfc(REF.mpf(z))
    assert REF.mpf(v.a) <= ref <= REF.mpf(v.b)
    assert REF.mpf(v.b) - REF.mpf(v.a) <= ref * REF.mpf(10) ** -45


def test_each_end_of_an_interval_moves_outward_at_the_exponent_limit() -> None:
    """``_ends`` reads the lower end as a lower end: an interval [-2^-16386, 2^-16386] becomes [-2^-16384, 2^-16384]
    (reading the lower end as an upper one would give 0, above the interval's true lower end)."""
    from mpmath.ctx_iv import MPIntervalContext

    from semidp.accountant.guarantees.claim_certificate import _ends

    c = MPIntervalContext()
    c.dps = 60
    x = mpmath.ldexp(mpmath.mpf(1), -16386)
    tiny = F(1, 1 << 16384)
    assert _ends(c.mpf([-x, x])) == (-tiny, tiny)
    assert _ends(c.mpf([x, x])) == (F(0), tiny)
    assert _ends(c.mpf([-x, -x])) == (-tiny, F(0))


def test_cks_order_at_a_huge_epsilon_runs_its_doubling_loop() -> None:
    """eps = 1e300, rho = 1: the start hi = (eps + 1)/2 + 2 = 5e299 has a negative derivative in floats
    ((2 hi - 1) rho - eps cancels to 0, log(1 - 1/hi) < 0), so the doubling loop runs once (to the cap 1e300) and
    the bisection ends on the float root ~ 5e299; the bound there is e^{-~1e300}: delta <= 5e-324."""
    from semidp.accountant.guarantees.claim_certificate import cks_order

    al = cks_order(1.0, 1e300)
    assert float(al) == pytest.approx(5e299, rel=1e-12)
    enc, used = zcdp_delta_upper(1.0, 1e300)
    assert used == al and (enc.lower, enc.upper) == (0.0, 5e-324)


# --- verify/claims.py: an infinite bound, and the composed certificate's wording (mutation survivors, session 32)


def _text(out: object) -> str:
    for name in ("certificate", "counterexample", "reason"):
        if hasattr(out, name):
            return str(getattr(out, name))
    raise AssertionError(out)


def test_an_infinite_upper_bound_decides_nothing_and_does_not_crash() -> None:
    """The CKS conversion of an RDP curve at the float maximum overflows to an upper end of inf: ``_le``
    compares it as a float (an exact rational comparison would raise OverflowError) and inf verifies no claim."""
    out, _ = decide(RDP((1.01,), (1.7976931348623157e308,)), claim("epsilon", F(1), F(1, 100000)))
    assert verdict(out) is Unknown and "inf" in _text(out)


def test_a_composed_certificate_names_the_grid_it_was_decided_on() -> None:
    """The certificate of a composed claim names the grid spacing of the bracket that decided it, the
    refinement (only when there was one) and the ends' laws."""
    parts = [GDP(1.0), PureDP(0.5)]
    pld = [dominating_part(p) for p in parts]
    first = compose_plds(pld)  # type: ignore[arg-type]
    iv = first.delta(1.0)
    laws = "; optimistic law -> lower, pessimistic law -> upper, FFT rounding bounded"
    res = check_composed_claim(parts, claim("epsilon", F(1), F(iv.upper)), budget=Budget.of(0.0))
    assert res is not None and verdict(res[0]) is Verified
    assert f"(grid h = {first.h!r}{laws})" in _text(res[0])  # type: ignore[attr-defined]
    mid = inside(iv.lower, iv.upper)
    assert mid is not None
    res = check_composed_claim(parts, claim("epsilon", F(1), F(mid)))
    assert res is not None
    text = _text(res[0])
    import re

    m = re.search(r"after refinement to (\d+) grid points", text)
    assert m is not None, text
    final = compose_plds(pld, points=int(m.group(1)))  # type: ignore[arg-type]
    assert final.h != first.h  # type: ignore[attr-defined]
    assert f"(grid h = {final.h!r} after refinement to {m.group(1)} grid points{laws})" in text  # type: ignore[attr-defined]
