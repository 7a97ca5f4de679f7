"""Conversions over the whole valid domain: finite and conservative, infinite with a reason, or a clear error.

Cases from issue Step 7 (found side by side with mpmath and peer libraries), and
rounding-direction properties at inputs that are not exactly representable: each
of these fails if the rounding is turned to nearest (checked by hand when written).
"""

from __future__ import annotations

import math
from fractions import Fraction

import mpmath
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from semidp.accountant.guarantees.conversions import (
    gdp_to_approx_dp,
    gdp_to_delta,
    gdp_to_zcdp,
    pure_dp_to_zcdp,
    zcdp_to_approx_dp,
    zcdp_to_delta,
)
from semidp.accountant.guarantees.definitions import GDP, ZCDP
from semidp.accountant.profiles.gaussian import gaussian_sigma, gdp_delta, gdp_delta_lower, gdp_mu_for

SMALLEST = 5e-324


@pytest.mark.parametrize("delta", [1 - 1e-15, 1 - 1e-16, 0.5, 1e-300, SMALLEST])
@pytest.mark.parametrize("method", ["bun-steinke", "canonne-kamath-steinke"])
def test_zcdp_to_approx_dp_is_finite_and_consistent_with_the_profile(delta: float, method: str) -> None:
    g = ZCDP(1.0)
    e = zcdp_to_approx_dp(g, delta, method).epsilon  # type: ignore[arg-type]
    assert math.isfinite(e) and e >= 0
    assert zcdp_to_delta(g, e) <= delta * (1 + 1e-9)  # the profile at the reported epsilon


@pytest.mark.parametrize("rho", [1e50, 1e100, 1e-300])
def test_zcdp_extreme_rho(rho: float) -> None:
    bs = zcdp_to_approx_dp(ZCDP(rho), 1e-10, "bun-steinke").epsilon
    cks = zcdp_to_approx_dp(ZCDP(rho), 1e-10, "canonne-kamath-steinke").epsilon
    assert math.isfinite(cks) and 0 <= cks <= bs
    if rho >= 1:
        assert cks >= rho  # epsilon >= rho - log(1/delta)/... > rho here


def test_profiles_at_huge_epsilon_are_the_smallest_positive_float() -> None:
    assert zcdp_to_delta(ZCDP(1.0), 1e300) == SMALLEST
    assert gdp_to_delta(GDP(1.0), 1e300) == SMALLEST


def test_gdp_profile_never_rounds_below_the_truth_to_zero() -> None:
    """delta_mu(1000) at mu = 1e-12 is about 10^(-2.2e29) > 0: 0.0 would be below the truth."""
    assert gdp_to_delta(GDP(1e-12), 1000.0) == SMALLEST
    assert gdp_delta_lower(1e-12, 1000.0) == 0.0  # a lower bound may be 0


def test_subnormal_delta_is_accepted() -> None:
    r = gdp_to_approx_dp(GDP(1.0), SMALLEST)
    assert math.isfinite(r.epsilon) and gdp_delta(1.0, r.epsilon) <= SMALLEST


@pytest.mark.parametrize("eps, delta", [(1e-8, 1e-10), (1e-8, 1e-5), (1e-12, 1e-3)])
def test_analytic_gaussian_at_tiny_epsilon_is_certified(eps: float, delta: float) -> None:
    """Once a certification loop stepped 1e-15 relative per 50-digit evaluation here (minutes)."""
    sigma = gaussian_sigma(eps, delta)
    mu = gdp_mu_for(eps, delta)
    with mpmath.workdps(200):  # the profile at 200 digits: no cancellation left
        m, e = mpmath.mpf(mu), mpmath.mpf(eps)
        true = mpmath.ncdf(m / 2 - e / m) - mpmath.exp(e) * mpmath.ncdf(-m / 2 - e / m)
        assert true <= delta
    assert sigma >= 1 / mu * (1 - 1e-15)


def test_gdp_profile_interval_brackets_a_200_digit_value() -> None:
    for mu, eps in [(1e-6, 20.0), (0.5, 30.0), (3.0, 1.0), (1e-9, 1e-3)]:
        with mpmath.workdps(400):
            m, e = mpmath.mpf(mu), mpmath.mpf(eps)
            true = mpmath.ncdf(m / 2 - e / m) - mpmath.exp(e) * mpmath.ncdf(-m / 2 - e / m)
            assert mpmath.mpf(gdp_delta_lower(mu, eps)) <= true <= mpmath.mpf(gdp_delta(mu, eps))


@settings(max_examples=200, deadline=None)
@given(st.floats(min_value=1e-6, max_value=1e6, allow_nan=False))
def test_gdp_to_zcdp_rounds_up(mu: float) -> None:
    assert Fraction(gdp_to_zcdp(GDP(mu)).rho) >= Fraction(mu) ** 2 / 2


@settings(max_examples=200, deadline=None)
@given(st.floats(min_value=1e-6, max_value=1e6, allow_nan=False))
def test_pure_dp_to_zcdp_rounds_up(eps: float) -> None:
    from semidp.accountant.guarantees.definitions import PureDP

    assert Fraction(pure_dp_to_zcdp(PureDP(eps)).rho) >= Fraction(eps) ** 2 / 2


@settings(max_examples=60, deadline=None)
@given(st.floats(min_value=0.01, max_value=50.0), st.floats(min_value=0.0, max_value=60.0))
def test_zcdp_profile_rounds_up_against_mpmath(rho: float, eps: float) -> None:
    """The reported delta is never below the CKS infimum over orders, recomputed by bisection at 80 digits."""
    d = zcdp_to_delta(ZCDP(rho), eps)
    with mpmath.workdps(80):
        r, e = mpmath.mpf(rho), mpmath.mpf(eps)

        def deriv(a: mpmath.mpf) -> mpmath.mpf:  # increasing in a; its root is the optimal order
            return (2 * a - 1) * r - e + mpmath.log1p(-1 / a)

        lo, hi = mpmath.mpf(1) + mpmath.mpf(10) ** -40, mpmath.mpf(2)
        while deriv(hi) < 0:
            hi *= 2
        for _ in range(300):
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if deriv(mid) < 0 else (lo, mid)
        best = mpmath.exp((hi - 1) * (hi * r - e) + hi * mpmath.log1p(-1 / hi)) / (hi - 1)
        assert mpmath.mpf(d) >= min(best, mpmath.mpf(1)) * (1 - mpmath.mpf(10) ** -30)
