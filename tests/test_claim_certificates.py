"""Certified claim arithmetic: interval enclosures against independent methods, and claim outcomes at the edge."""

from __future__ import annotations

import math
from fractions import Fraction

import mpmath
import pytest
from scipy import special

from semidp.accountant.core.outcome import Refuted, Unknown, Verified
from semidp.accountant.guarantees.claim_certificate import (
    approx_dp_profile_enclosure,
    erfc_enclosure,
    gdp_delta_enclosure,
    rdp_epsilon_upper,
    sqrt_lower,
    tradeoff_profile_enclosure,
    zcdp_delta_upper,
)
from semidp.accountant.guarantees.conversions import zcdp_to_delta
from semidp.accountant.guarantees.definitions import GDP, ZCDP, ApproxDP, PureDP
from semidp.accountant.guarantees.relations import Replace
from semidp.accountant.profiles.gaussian import gdp_delta
from semidp.accountant.profiles.tradeoff import TradeoffCurve
from semidp.verify.claims import check_composed_claim, decide
from tests.claim_forms import claim

HP = mpmath.MPContext()
HP.dps = 120
R = Replace()


def _gdp_true(mu: float, eps: float) -> mpmath.mpf:
    m, e = HP.mpf(mu), HP.mpf(eps)
    return HP.ncdf(m / 2 - e / m) - HP.exp(e) * HP.ncdf(-m / 2 - e / m)


@pytest.mark.parametrize("z", [0.0, 1e-9, 0.3, 1.0, 2.5, 3.999, 4.0, 4.001, 6.0, 12.5, 25.0, -0.7, -5.0])
def test_erfc_enclosure_contains_mpmath_and_scipy(z: float) -> None:
    enc = erfc_enclosure(z)
    true = HP.erfc(HP.mpf(z))
    assert enc.lower <= true <= enc.upper
    assert enc.upper - enc.lower <= 4 * math.ulp(float(true)) + 1e-300  # tight: a couple of ulps
    assert enc.lower <= special.erfc(z) * (1 + 1e-14) and special.erfc(z) * (1 - 1e-14) <= enc.upper


@pytest.mark.parametrize(("mu", "eps"), [(1.0, 1.0), (0.5, 3.0), (3.0, 0.5), (2.0, 17.14), (0.2, 5.0), (6.0, -1.0)])
def test_gdp_enclosure_contains_truth_and_agrees_with_accountant(mu: float, eps: float) -> None:
    enc = gdp_delta_enclosure(mu, eps)
    true = _gdp_true(mu, eps)
    assert enc.lower <= true <= enc.upper
    assert enc.upper <= gdp_delta(mu, eps) * (1 + 1e-15) + 1e-300  # the accountant's route is an upper bound too
    assert gdp_delta(mu, eps) <= enc.upper * (1 + 1e-12)


def test_claim_at_a_float_edge_is_decided_by_the_rounding_direction() -> None:
    """Fails if the upper end is rounded down or the lower end up (T-F2: delta_1(1) = 0.126936...)."""
    true = _gdp_true(1.0, 1.0)
    below = float(true)
    below = below if HP.mpf(below) < true else math.nextafter(below, 0.0)
    above = math.nextafter(below, 1.0)
    enc = gdp_delta_enclosure(1.0, 1.0)
    assert enc.lower <= true <= enc.upper and enc.lower <= below and above <= enc.upper
    g = GDP(1.0, R)
    assert not isinstance(decide(g, claim("epsilon", 1.0, below))[0], Verified)  # upper end rounded up
    assert not isinstance(decide(g, claim("epsilon", 1.0, above))[0], Refuted)  # lower end rounded down
    assert isinstance(decide(g, claim("epsilon", 1.0, math.nextafter(below, 0.0)))[0], Refuted)
    out = decide(g, claim("epsilon", 1.0, math.nextafter(above, 1.0)))[0]
    assert isinstance(out, Verified) and "certified (interval arithmetic" in out.certificate


def test_approx_profile_enclosure_matches_closed_form() -> None:
    e, d, c = 1.0, 1e-6, 0.5
    true = HP.mpf(d) + (1 - HP.mpf(d)) * (HP.exp(e) - HP.exp(c)) / (1 + HP.exp(e))
    enc = approx_dp_profile_enclosure(e, d, c)
    assert enc.lower <= true <= enc.upper
    assert approx_dp_profile_enclosure(1.0, 0.25, 2.0).lower == 0.25  # no positive part: exactly delta_e


def test_zcdp_upper_is_above_the_infimum_and_matches_the_accountant() -> None:
    rho, eps = 2.56, 17.14
    enc, alpha = zcdp_delta_upper(rho, eps)
    r, e = HP.mpf(rho), HP.mpf(eps)

    def bound(a: mpmath.mpf) -> mpmath.mpf:
        return HP.exp((a - 1) * (a * r - e) + a * HP.log1p(-1 / a)) / (a - 1)

    inf = HP.findroot(lambda a: HP.diff(lambda t: HP.log(bound(t)), a), HP.mpf(float(alpha)))
    assert bound(inf) <= enc.upper  # any order bounds delta; ours is at (near) the best one
    assert enc.upper <= bound(inf) * (1 + 1e-9)
    assert enc.upper <= zcdp_to_delta(ZCDP(rho), eps) * (1 + 1e-15)


def test_sqrt_lower_and_rdp_upper() -> None:
    assert Fraction(sqrt_lower(2)) ** 2 <= 2 < Fraction(math.nextafter(sqrt_lower(2), 3.0)) ** 2
    enc = rdp_epsilon_upper([2.0, 4.0], [1.0, 2.0], 1e-6)
    a = HP.mpf(4)
    true = 2 + (-HP.log(HP.mpf(1e-6)) + (a - 1) * HP.log1p(-1 / a) - HP.log(a)) / (a - 1)
    assert enc.lower <= true <= enc.upper


def test_tradeoff_profile_enclosure_matches_curve() -> None:
    curve = TradeoffCurve.from_approx_dp(1.0, 0.01)
    enc = tradeoff_profile_enclosure(curve.alphas, curve.betas, 0.5)
    assert enc.lower <= approx_dp_profile_enclosure(1.0, 0.01, 0.5).upper * (1 + 1e-12)
    assert abs(enc.upper - float(curve.privacy_profile(0.5))) <= 1e-12


def _rr2_delta(eps: float, eps_c: float) -> mpmath.mpf:
    """Profile of two composed randomized responses with epsilon ``eps`` each at ``eps_c`` (loss in {2e, 0, -2e})."""
    p = HP.exp(eps) / (1 + HP.exp(eps))
    q = 1 - p
    laws = [(2 * HP.mpf(eps), p * p), (HP.mpf(0), 2 * p * q), (-2 * HP.mpf(eps), q * q)]
    return sum((w * max(HP.mpf(0), 1 - HP.exp(HP.mpf(eps_c) - loss)) for loss, w in laws), HP.mpf(0))


def test_composed_claim_is_refuted_and_verified_by_the_pld_bracket() -> None:
    parts = [PureDP(1.0, R), PureDP(1.0, R)]
    true = float(_rr2_delta(1.0, 1.5))
    refuted = check_composed_claim(parts, claim("epsilon", 1.5, true * 0.9))
    verified = check_composed_claim(parts, claim("epsilon", 1.5, true * 1.1))
    assert refuted is not None and isinstance(refuted[0], Refuted)
    assert "certified (PLD bracket)" in refuted[0].counterexample
    assert verified is not None and isinstance(verified[0], Verified)
    assert refuted[1].lower <= true <= refuted[1].upper
    # The closed form (2-DP, four-point profile) would refute a claim the composition meets:
    closed = decide(PureDP(2.0, R), claim("epsilon", 1.5, true * 1.1))[0]
    assert isinstance(closed, Refuted)


def test_composed_claim_needs_dominating_pairs() -> None:
    assert check_composed_claim([ZCDP(0.5, R)], claim("epsilon", 1.0, 1e-6)) is None
    assert check_composed_claim([PureDP(1.0, R)], claim("zcdp", 1.0)) is None
    out = check_composed_claim([GDP(0.5, R), ApproxDP(0.25, 1e-9, R)], claim("epsilon", 2.0, 1e-3))
    assert out is not None and isinstance(out[0], Verified)
    # composing more can only raise the profile: the bracket's upper end is above the Gaussian's alone
    assert out[1].upper >= float(_gdp_true(0.5, 2.0))


def test_decide_claim_does_not_refute_from_a_loose_closed_form() -> None:
    from semidp.verify.runner import decide_claim

    parts = [PureDP(1.0, R), PureDP(1.0, R)]
    true = float(_rr2_delta(1.0, 1.5))
    out, _ = decide_claim(claim("epsilon", 1.5, true * 1.1), PureDP(2.0, R), parts)
    assert isinstance(out, Verified)
    out, _ = decide_claim(claim("epsilon", 1.5, true * 0.9), PureDP(2.0, R), parts)
    assert isinstance(out, Refuted)
    out, _ = decide_claim(claim("epsilon", 1.5, true), PureDP(2.0, R), parts)  # inside the bracket
    assert isinstance(out, (Unknown, Verified, Refuted))


@pytest.mark.parametrize("rho", [1e-300, 5e-324])
def test_a_vanishing_rho_is_certified_not_an_internal_error(rho: float) -> None:
    """Found by the spec fuzzer: delta = e^{-1e299} has an exponent no exact rational can hold; the interval end
    is moved outward to 2^-16384 instead (an upper bound), and the CKS order is capped at 1e300 (any order > 1 is sound)."""
    from semidp.accountant.guarantees.claim_certificate import cks_order, zcdp_delta_upper

    assert 1 < cks_order(rho, 1.0) <= Fraction(1e300)
    enc, _ = zcdp_delta_upper(rho, 1.0)
    assert enc.lower == 0.0 and 0.0 < enc.upper <= 5e-324  # the smallest float above 2^-16384


@pytest.mark.parametrize("rho", [1e17, 1e24, 1e300])
def test_an_astronomical_rho_gives_the_trivial_bound(rho: float) -> None:
    # was: "an interval end beyond 2^16384" (exit 2 naming no key); the CKS bound exceeds 1, so delta <= 1
    from semidp.accountant.guarantees.claim_certificate import zcdp_delta_upper

    enc = zcdp_delta_upper(rho, 1.0)[0]
    assert (enc.lower, enc.upper) == (1.0, 1.0) and "exceeds 1" in enc.method
