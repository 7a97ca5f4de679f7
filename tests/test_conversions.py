"""Conversions: golden values with provenance, and never-optimistic checks against mpmath."""

from __future__ import annotations

import math
from fractions import Fraction

import mpmath
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from semidp.accountant import (
    GDP,
    RDP,
    ZCDP,
    ApproxDP,
    InvalidArgument,
    PureDP,
    Replace,
    gaussian_sigma,
    gdp_delta,
    gdp_to_approx_dp,
    gdp_to_zcdp,
    pure_dp_to_zcdp,
    rdp_to_approx_dp,
    zcdp_to_approx_dp,
    zcdp_to_delta,
    zcdp_to_rdp,
)
from semidp.accountant.profiles.gaussian import gdp_delta_array, gdp_delta_lower
from tests.golden_cases import assert_close, cases

HP = mpmath.MPContext()
HP.dps = 100  # reference precision, independent of the library's 50-digit context


def _num(x: object) -> float:
    return float(Fraction(x)) if isinstance(x, str) else float(x)  # type: ignore[arg-type]


@pytest.mark.parametrize("case", cases("conversions.toml"))
def test_golden(case: dict) -> None:
    i = case["inputs"]
    kind = case["kind"]
    if kind == "zcdp-eps":
        ours = zcdp_to_approx_dp(ZCDP(_num(i["rho"])), i["delta"], i["method"]).epsilon
    elif kind == "gdp-eps":
        ours = gdp_to_approx_dp(GDP(i["mu"]), i["delta"]).epsilon
    elif kind == "gdp-delta":
        ours = gdp_delta(i["mu"], i["eps"])
    elif kind == "gaussian-sigma":
        ours = gaussian_sigma(i["eps"], i["delta"], i["sensitivity"])
    elif kind == "zcdp-group":
        ours = ZCDP(_num(i["rho"])).group(i["k"]).rho
    else:  # pragma: no cover - a typo in the golden file must fail loudly
        raise AssertionError(f"unknown golden kind {kind!r}")
    assert_close(ours, case)


# ---------------------------------------------------------------- never optimistic (vs mpmath)

rhos = st.floats(1e-4, 50.0)
deltas = st.floats(1e-14, 0.5)
mus = st.floats(1e-3, 20.0)


def hp_cks_delta(rho: float, eps: float) -> mpmath.mpf:
    """min over a fine alpha grid at 100 digits: an upper bound on the CKS profile (any alpha valid)."""
    r, e = HP.mpf(rho), HP.mpf(eps)
    best = HP.mpf(1)
    for k in range(1, 400):
        a = 1 + HP.mpf(10) ** (HP.mpf(k) / 60 - 4)
        val = HP.exp((a - 1) * (a * r - e) + a * HP.log1p(-1 / a)) / (a - 1)
        best = min(best, val)
    return best


@settings(max_examples=40, deadline=None)
@given(rhos, deltas)
def test_bun_steinke_never_below_exact(rho: float, delta: float) -> None:
    eps = zcdp_to_approx_dp(ZCDP(rho), delta, "bun-steinke").epsilon
    exact = HP.mpf(rho) + 2 * HP.sqrt(HP.mpf(rho) * HP.log(1 / HP.mpf(delta)))
    assert HP.mpf(eps) >= exact
    assert HP.mpf(eps) - exact <= HP.mpf(1e-13) * exact  # and tight (one-ulp outward rounding)


@settings(max_examples=30, deadline=None)
@given(rhos, deltas)
def test_cks_is_valid_and_tighter_than_bun_steinke(rho: float, delta: float) -> None:
    cks = zcdp_to_approx_dp(ZCDP(rho), delta).epsilon
    bs = zcdp_to_approx_dp(ZCDP(rho), delta, "bun-steinke").epsilon
    assert cks <= bs
    # valid: the CKS delta at the reported epsilon is within the target (some alpha certifies).
    grid_delta = hp_cks_delta(rho, cks)
    exact_opt = zcdp_to_delta(ZCDP(rho), cks)
    assert min(grid_delta, HP.mpf(exact_opt)) <= HP.mpf(delta) * (1 + HP.mpf(1e-9))
    # tight: a visibly smaller epsilon would need a larger delta (unless epsilon is already 0).
    if cks > 1e-3:
        assert hp_cks_delta(rho, cks * (1 - 1e-4)) > delta


@settings(max_examples=40, deadline=None)
@given(mus, deltas)
def test_gdp_epsilon_never_optimistic(mu: float, delta: float) -> None:
    eps = gdp_to_approx_dp(GDP(mu), delta).epsilon
    m, e = HP.mpf(mu), HP.mpf(eps)
    true_delta = HP.ncdf(m / 2 - e / m) - HP.exp(e) * HP.ncdf(-m / 2 - e / m)
    assert true_delta <= HP.mpf(delta)
    if eps > 0:  # tight: slightly smaller epsilon violates delta
        e2 = e * (1 - HP.mpf(1e-9)) - HP.mpf(1e-12)
        assert HP.ncdf(m / 2 - e2 / m) - HP.exp(e2) * HP.ncdf(-m / 2 - e2 / m) > HP.mpf(delta)


@settings(max_examples=40, deadline=None)
@given(mus, st.floats(-5.0, 60.0))
def test_gdp_delta_brackets_truth(mu: float, eps: float) -> None:
    m, e = HP.mpf(mu), HP.mpf(eps)
    true_delta = HP.ncdf(m / 2 - e / m) - HP.exp(e) * HP.ncdf(-m / 2 - e / m)
    assert HP.mpf(gdp_delta_lower(mu, eps)) <= true_delta <= HP.mpf(gdp_delta(mu, eps))
    arr = float(gdp_delta_array(mu, [eps])[0])
    assert HP.mpf(arr) >= true_delta  # the vectorised path is padded up, never below
    assert HP.mpf(arr) <= true_delta * (1 + HP.mpf(1e-6)) + HP.mpf(1e-290)


@settings(max_examples=25, deadline=None)
@given(st.floats(0.01, 10.0), st.floats(1e-12, 0.1), st.floats(0.1, 100.0))
def test_analytic_gaussian_is_private(eps: float, delta: float, sens: float) -> None:
    sigma = gaussian_sigma(eps, delta, sens)
    mu = HP.mpf(sens) / HP.mpf(sigma)
    e = HP.mpf(eps)
    assert HP.ncdf(mu / 2 - e / mu) - HP.exp(e) * HP.ncdf(-mu / 2 - e / mu) <= HP.mpf(delta)


def test_simple_closed_forms() -> None:
    assert gdp_to_zcdp(GDP(2.0)).rho == 2.0  # mu^2/2 [DRS22 Thm 2.10 + Mir17 Prop 7]
    assert pure_dp_to_zcdp(PureDP(1.0)).rho == 0.5  # [BS16, Prop. 1.4]
    r = zcdp_to_rdp(ZCDP(0.5), [2.0, 3.0])
    assert r.epsilons == (1.0, 1.5)
    # RDP conversions: CKS never worse than Mironov, and both at least the zCDP optimum.
    rr = zcdp_to_rdp(ZCDP(0.5), [1.25, 1.5, 2, 3, 4, 5, 6, 8, 12, 16, 32])
    cks = rdp_to_approx_dp(rr, 1e-6).epsilon
    mir = rdp_to_approx_dp(rr, 1e-6, "mironov").epsilon
    assert zcdp_to_approx_dp(ZCDP(0.5), 1e-6).epsilon <= cks <= mir
    assert mir == pytest.approx(0.5 * 6 + math.log(1e6) / 5, rel=1e-12)  # order 6 is best: 3 + 2.763


def test_conversions_keep_relation() -> None:
    rel = Replace(3)
    assert zcdp_to_approx_dp(ZCDP(1.0, rel), 1e-6).relation == rel
    assert gdp_to_approx_dp(GDP(1.0, rel), 1e-6).relation == rel


@pytest.mark.parametrize(
    "call",
    [
        lambda: zcdp_to_approx_dp(ZCDP(1.0), 0.0),
        lambda: zcdp_to_approx_dp(ZCDP(1.0), float("nan")),
        lambda: zcdp_to_approx_dp(ZCDP(1.0), 1e-5, "nope"),  # type: ignore[arg-type]
        lambda: gdp_to_approx_dp(GDP(1.0), 1.5),
        lambda: gaussian_sigma(1.0, 0.0),
        lambda: gaussian_sigma(1.0, 1e-5, -1.0),
        lambda: rdp_to_approx_dp(RDP((2.0,), (1.0,)), -1.0),
        lambda: gdp_delta(-1.0, 1.0),
    ],
)
def test_bad_arguments_raise_invalid_argument(call) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(InvalidArgument):
        call()


def test_delta_one_is_trivial() -> None:
    assert zcdp_to_approx_dp(ZCDP(3.0), 1.0).epsilon == 0.0
    assert ApproxDP(0.0, 1.0).delta == 1.0


@settings(max_examples=25, deadline=None)
@given(mus, deltas)
def test_gdp_epsilon_lower_and_upper_bracket_truth(mu: float, delta: float) -> None:
    from semidp.accountant.profiles.gaussian import gdp_epsilon_lower

    lo, hi = gdp_epsilon_lower(mu, delta), gdp_to_approx_dp(GDP(mu), delta).epsilon
    assert lo <= hi
    m = HP.mpf(mu)

    def d(x: float) -> mpmath.mpf:
        e = HP.mpf(x)
        return HP.ncdf(m / 2 - e / m) - HP.exp(e) * HP.ncdf(-m / 2 - e / m)

    assert d(hi) <= delta  # hi is achievable
    if lo > 0:
        assert d(lo) > delta  # lo is not: the true epsilon lies in (lo, hi]
        assert hi - lo <= 1e-9 * max(1.0, hi)  # and the bracket is tight


@settings(max_examples=40, deadline=None)
@given(st.floats(0.0, 20.0), st.floats(0.0, 0.5), st.floats(0.0, 1.0))
def test_approx_reexpression_is_exact_profile(eps: float, d0: float, d: float) -> None:
    from semidp.accountant.guarantees.conversions import approx_dp_to_approx_dp

    r = approx_dp_to_approx_dp(ApproxDP(eps, d0), d)
    if d < d0:
        assert r is None
        return
    assert r is not None and r.epsilon <= eps
    # The f_{eps,d0} profile at the reported epsilon must be within d (exact, 100 digits).
    e, e2 = HP.exp(HP.mpf(eps)), HP.exp(HP.mpf(r.epsilon))
    prof = HP.mpf(d0) + (1 - HP.mpf(d0)) * max(HP.mpf(0), e - e2) / (1 + e)
    assert prof <= HP.mpf(d) * (1 + HP.mpf(10) ** -30)
