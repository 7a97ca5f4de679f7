"""Tests for accountant.profiles.tradeoff: PL lower bounds of tradeoff functions.

Every privacy comparison is one-sided (house style R6/R10): a computed curve
may be *below* the exact tradeoff function (more conservative), never above.
Exact references are evaluated in mpmath at 40 digits.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from fractions import Fraction

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import norm

from semidp.accountant.core.errors import InvalidArgument
from semidp.accountant.profiles.gaussian import gdp_delta
from semidp.accountant.profiles.tradeoff import TradeoffCurve

MP = mpmath.MPContext()
MP.dps = 40

#: Slack for comparing against float (scipy) references of smooth functions: scipy's
#: ndtr/ndtri are accurate to ~1e-15 absolute on [0, 1]; exact (mpmath) checks use 0.
SCIPY_SLACK = 1e-13

fast = settings(max_examples=25, deadline=None, derandomize=True)
eps_st = st.floats(0.0, 6.0, allow_nan=False, allow_subnormal=False)
delta_st = st.one_of(st.just(0.0), st.floats(1e-12, 0.5, allow_subnormal=False))


# ---------------------------------------------------------------- exact references


def exact_fed(eps: float, delta: float, alpha: mpmath.mpf) -> mpmath.mpf:
    """std f_{eps,delta}(alpha) = max(0, 1-d-e^eps a, e^-eps (1-d-a)) [DRS22, Prop. 2.5]."""
    e, d = MP.mpf(eps), MP.mpf(delta)
    return max(MP.mpf(0), 1 - d - MP.exp(e) * alpha, MP.exp(-e) * (1 - d - alpha))


def exact_group(eps: float, delta: float, k: int, alpha: mpmath.mpf) -> mpmath.mpf:
    """std group privacy g_k(a) = f(1 - g_{k-1}(a)), g_1 = f (docs/reference/semi-dp.md Sec. 1 table)."""
    g = exact_fed(eps, delta, alpha)
    for _ in range(k - 1):
        g = exact_fed(eps, delta, 1 - g)
    return g


def gauss_std(mu: float, alpha: np.ndarray) -> np.ndarray:
    """std G_mu(alpha) = Phi(Phi^{-1}(1 - alpha) - mu) (docs/reference/semi-dp.md Sec. 1 table)."""
    return np.asarray(norm.cdf(norm.isf(alpha) - mu))  # isf(a) = Phi^{-1}(1 - a), accurate near 0


DENSE = np.union1d(np.linspace(0.0, 1.0, 20001), np.geomspace(1e-12, 1e-2, 400))


# ---------------------------------------------------------------- golden values


def test_t_f1_golden_values() -> None:
    # docs/reference/semi-dp.md Sec. 9, T-F1 (values verified there to 7 digits)
    f = TradeoffCurve.from_approx_dp(1.0, 0.0)
    assert 0.7281718 - 1e-7 < f.std(0.1) <= float(exact_fed(1.0, 0.0, MP.mpf(0.1)))
    g = TradeoffCurve.from_approx_dp(1.0, 0.01)
    assert 0.7181718 - 1e-7 < g.std(0.1) <= float(exact_fed(1.0, 0.01, MP.mpf(0.1)))
    # G_1^std(0.05) = G_1^paper(0.95) = 0.7404890; from_gdp is a lower bound within 1e-4
    h = TradeoffCurve.from_gdp(1.0)
    assert 0.7404890 - 1e-4 < h.std(0.05) <= 0.7404890 + 5e-8
    assert h.paper(0.95) <= 0.7404890 + 5e-8


def test_approx_dp_vertices_exact_up_to_rounding() -> None:
    # [DRS22, Prop. 2.5]: vertices (0,1-d), (c,c), (1-d,0), (1,0), c=(1-d)/(1+e^eps);
    # docs/reference/semi-dp.md T-C2 gives c = 0.266252 for (1, 0.01).
    f = TradeoffCurve.from_approx_dp(1.0, 0.01)
    c = (1 - 0.01) / (1 + math.e)
    assert f.n_vertices == 4
    assert abs(f.alphas[1] - c) < 1e-15 and abs(f.betas[1] - c) < 1e-15
    assert round(f.alphas[1], 6) == 0.266252
    assert f.alphas[2] == pytest.approx(0.99, abs=1e-15) and f.betas[2] == 0.0
    assert f.betas[0] <= 0.99 and f.betas[0] > 0.99 - 1e-15
    for a, b in zip(f.alphas, f.betas):  # never above the exact function at a vertex
        assert MP.mpf(b) <= exact_fed(1.0, 0.01, MP.mpf(a))


def test_approx_dp_degenerate_cases() -> None:
    assert TradeoffCurve.from_approx_dp(0.0, 0.0) == TradeoffCurve.identity()
    z = TradeoffCurve.from_approx_dp(0.0, 0.3)  # max(0, 0.7 - alpha)
    assert z.alphas == (0.0, 0.7, 1.0) and z.betas == (0.7, 0.0, 0.0)
    assert TradeoffCurve.from_approx_dp(2.0, 1.0) == TradeoffCurve.zero()
    assert TradeoffCurve.from_approx_dp(800.0, 0.0).dominates(TradeoffCurve.zero())


def test_group_golden_paper_convention() -> None:
    # docs/reference/semi-dp.md Sec. 1: paper-convention f_{0.5,0}^{o2}(0.7)=0.306531, (0.3)->0.110364,
    # (0.5)->0.183940; vertices (0,0),(0.622459,0.22899),(0.77101,0.377541),(1,1).
    g = TradeoffCurve.from_approx_dp(0.5, 0.0).group(2)
    vals = g.paper(np.array([0.7, 0.3, 0.5]))
    assert np.all(np.abs(vals - np.array([0.306531, 0.110364, 0.183940])) < 1e-6)
    verts = g.vertices("paper")
    expected = [(0.0, 0.0), (0.622459, 0.22899), (0.77101, 0.377541), (1.0, 1.0)]
    assert len(verts) == 4
    for (x, y), (ex, ey) in zip(verts, expected):
        assert abs(x - ex) < 1e-6 and abs(y - ey) < 1e-5
    for a in (0.3, 0.5, 0.7):  # paper(a) = std(1 - a) <= exact
        assert MP.mpf(g.paper(a)) <= exact_group(0.5, 0.0, 2, 1 - MP.mpf(a))
    # f-DP group bound beats "k epsilon-DP" and coincides with it on [0, 0.622459] (paper conv.)
    assert g.paper(0.7) > TradeoffCurve.from_approx_dp(1.0, 0.0).paper(0.7) + 0.04


def test_group_identity_and_zero() -> None:
    f = TradeoffCurve.from_approx_dp(0.7, 1e-3)
    assert f.group(1) is f
    assert f.group(0) == TradeoffCurve.identity()
    assert TradeoffCurve.identity().group(5) == TradeoffCurve.identity()
    assert TradeoffCurve.zero().group(3) == TradeoffCurve.zero()


@pytest.mark.parametrize(("mu", "k"), [(1.0, 2), (0.5, 3), (0.3, 4)])
def test_group_of_gdp_is_below_and_close_to_exact(mu: float, k: int) -> None:
    # [DRS22, Thm. 2.14] / docs/reference/semi-dp.md Sec. 1: G_mu^{o k} = G_{k mu}.
    g = TradeoffCurve.from_gdp(mu).group(k)
    exact = gauss_std(k * mu, DENSE)
    ours = g.std(DENSE)
    assert np.all(ours <= exact + SCIPY_SLACK)
    assert np.max(exact - ours) < 1e-3
    for a, b in zip(g.alphas[::25], g.betas[::25]):  # vertices against mpmath, no slack
        true = MP.ncdf(-MP.sqrt(2) * MP.erfinv(2 * MP.mpf(a) - 1) - k * mu) if 0 < a < 1 else None
        if true is not None:
            assert MP.mpf(b) <= true


@fast
@given(eps_st, delta_st, st.integers(2, 4), st.floats(0.0, 1.0, allow_subnormal=False))
def test_group_never_above_exact(eps: float, delta: float, k: int, alpha: float) -> None:
    g = TradeoffCurve.from_approx_dp(eps, delta).group(k)
    assert MP.mpf(g.std(alpha)) <= exact_group(eps, delta, k, MP.mpf(alpha))
    for a, b in zip(g.alphas, g.betas):
        assert MP.mpf(b) <= exact_group(eps, delta, k, MP.mpf(a))


# ---------------------------------------------------------------- constructors


@fast
@given(
    st.lists(st.tuples(eps_st, delta_st), min_size=1, max_size=5),
    st.floats(0.0, 1.0, allow_subnormal=False),
)
def test_from_profile_never_above_exact_envelope(pairs: list[tuple[float, float]], alpha: float) -> None:
    f = TradeoffCurve.from_profile([e for e, _ in pairs], [d for _, d in pairs])

    def exact(a: mpmath.mpf) -> mpmath.mpf:
        return max(exact_fed(e, d, a) for e, d in pairs)

    assert MP.mpf(f.std(alpha)) <= exact(MP.mpf(alpha))
    for a, b in zip(f.alphas, f.betas):
        assert MP.mpf(b) <= exact(MP.mpf(a))
        assert MP.mpf(b) >= exact(MP.mpf(a)) - MP.mpf(1e-14)  # vertices are tight


def test_from_gdp_is_a_tight_lower_bound() -> None:
    for mu in (0.2, 1.0, 3.0):
        g = TradeoffCurve.from_gdp(mu)
        exact = gauss_std(mu, DENSE)
        assert np.all(g.std(DENSE) <= exact + SCIPY_SLACK)
        assert np.max(exact - g.std(DENSE)) < 3e-4
    assert TradeoffCurve.from_gdp(0.0) == TradeoffCurve.identity()


def test_std_and_paper_conventions() -> None:
    f = TradeoffCurve.from_approx_dp(1.0, 0.05)
    x = np.linspace(0.0, 1.0, 101)
    assert np.array_equal(f.paper(1.0 - x[x >= 0.5]), f.std(x[x >= 0.5]))  # 1 - (1-x) exact here
    assert np.all(np.diff(f.std(x)) <= 0) and np.all(np.diff(f.paper(x)) >= 0)
    assert np.all(f.std(x) <= 1.0 - x)
    assert isinstance(f.std(0.3), float) and f.std(x).shape == x.shape
    assert f.std(0.0) == f.betas[0] and f.std(1.0) == 0.0


# ---------------------------------------------------------------- profile and epsilon


@fast
@given(eps_st, delta_st, st.floats(-2.0, 8.0, allow_subnormal=False))
def test_privacy_profile_upper_bounds_exact(eps: float, delta: float, e: float) -> None:
    # [DRS22, Prop. 2.12]: delta(e) = sup_a [1 - f(a) - e^e a]; for f_{eps,delta} exactly
    # max(delta + (1-delta)(1 - e^{e-eps})_+ ... ) -- we compare with the sup over a fine set
    # of exact vertices (0, c, 1-delta, 1) which attains it.
    f = TradeoffCurve.from_approx_dp(eps, delta)
    c = (1 - MP.mpf(delta)) / (1 + MP.exp(eps))
    verts = [MP.mpf(0), c, 1 - MP.mpf(delta), MP.mpf(1)]
    exact = max(1 - exact_fed(eps, delta, a) - MP.exp(e) * a for a in verts)
    ours = f.privacy_profile(e)
    assert MP.mpf(ours) >= exact
    assert ours <= float(exact) + 1e-13


def test_privacy_profile_of_gdp_t_f2() -> None:
    # docs/reference/semi-dp.md T-F2 (Balle-Wang): (mu, eps) = (1, 1): 0.1269367; (0.5, 1): 0.0068296.
    for mu, e, val in [(1.0, 1.0, 0.1269367), (0.5, 1.0, 0.0068296), (2.0, 3.0, 0.1838131)]:
        d = TradeoffCurve.from_gdp(mu).privacy_profile(e)
        assert d >= gdp_delta(mu, e) >= val - 5e-8
        assert d <= val + 5e-4  # tangent spacing of from_gdp's default 256 points
    arr = TradeoffCurve.from_gdp(1.0).privacy_profile(np.array([0.0, 1.0]))
    assert arr.shape == (2,) and arr[1] >= 0.1269367 - 5e-8


@fast
@given(eps_st, delta_st, st.floats(0.0, 0.5, allow_subnormal=False))
def test_epsilon_and_profile_round_trip(eps: float, delta: float, target: float) -> None:
    # dp_accounting-style round trip: delta(epsilon(d)) <= d and epsilon(delta(e)) <= e.
    f = TradeoffCurve.from_profile([eps, eps / 2], [delta, min(1.0, 2 * delta + 1e-3)])
    e = f.epsilon(target)
    if math.isinf(e):
        assert 1 - Fraction(f.betas[0]) > Fraction(target)
    else:
        assert f.privacy_profile(e) <= target + 1e-14
        if e > 0:  # minimal: a bit smaller epsilon violates target
            assert f.privacy_profile(max(0.0, e - 1e-6)) > target - 1e-14
    for e2 in (0.0, eps / 3, eps):
        d2 = f.privacy_profile(e2)
        assert f.epsilon(min(1.0, d2)) <= e2 + 1e-9


def test_epsilon_pure_dp_and_infinity() -> None:
    f = TradeoffCurve.from_approx_dp(1.5, 0.0)
    assert 1.5 <= f.epsilon(0.0) <= 1.5 + 1e-12
    g = TradeoffCurve.from_approx_dp(1.0, 1e-3)
    assert g.epsilon(1e-4) == math.inf  # 1 - f(0) = 1e-3 > 1e-4
    assert g.epsilon(1e-3) == math.inf  # f(0) is stored rounded down (documented)
    assert 1.0 - 1e-6 < g.epsilon(1e-3 * (1 + 1e-9)) <= 1.0
    assert TradeoffCurve.identity().epsilon(0.0) == 0.0
    assert TradeoffCurve.zero().epsilon(0.999) == math.inf and TradeoffCurve.zero().epsilon(1.0) == 0.0


# ---------------------------------------------------------------- order and simplification


def test_dominates_is_a_partial_order() -> None:
    fs = [TradeoffCurve.from_approx_dp(e, d) for e, d in [(0.5, 0.0), (1.0, 0.0), (1.0, 1e-2), (2.0, 0.1)]]
    ident, zero = TradeoffCurve.identity(), TradeoffCurve.zero()
    for f in fs:
        assert f.dominates(f) and ident.dominates(f) and f.dominates(zero)
        assert not f.dominates(ident) and not zero.dominates(f)
    assert fs[0].dominates(fs[1]) and fs[1].dominates(fs[2]) and fs[0].dominates(fs[2])
    assert not fs[1].dominates(fs[0])
    # incomparable pair: (0.5, 0.1) vs (1, 0)
    a, b = TradeoffCurve.from_approx_dp(0.5, 0.1), TradeoffCurve.from_approx_dp(1.0, 0.0)
    assert not a.dominates(b) and not b.dominates(a)


def test_dominates_is_exact_at_ulp_level() -> None:
    f = TradeoffCurve((0.0, 0.5, 1.0), (1.0, 0.25, 0.0))
    lower = TradeoffCurve((0.0, 0.5, 1.0), (1.0, math.nextafter(0.25, 0.0), 0.0))
    assert f.dominates(lower) and not lower.dominates(f)


def test_simplify_drops_collinear_and_coarsens_downwards() -> None:
    f = TradeoffCurve((0.0, 0.25, 0.5, 1.0), (1.0, 0.5, 0.0, 0.0))  # (0.25, 0.5) is collinear
    s = f.simplify()
    assert s.alphas == (0.0, 0.5, 1.0) and s.betas == (1.0, 0.0, 0.0)
    g = TradeoffCurve.from_gdp(1.0)
    for m in (40, 10, 3, 2):
        c = g.simplify(m)
        assert c.n_vertices <= m
        assert g.dominates(c)  # safe coarsening: never above
    c40 = g.simplify(40)
    assert np.max(g.std(DENSE) - c40.std(DENSE)) < 5e-3
    assert g.simplify(2) == TradeoffCurve.zero()


# ---------------------------------------------------------------- value-object behaviour


def test_repr_round_trips_and_equality() -> None:
    f = TradeoffCurve.from_approx_dp(1.0, 0.01)
    assert eval(repr(f)) == f
    assert hash(f) == hash(TradeoffCurve(f.alphas, f.betas))
    big = TradeoffCurve.from_gdp(1.0)
    assert "vertices" in repr(big) and len(repr(big)) < 200
    assert TradeoffCurve(np.array([0.0, 1.0]), [1.0, 0.0]) == TradeoffCurve.identity()  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("alphas", "betas", "match"),
    [
        ((0.0, 1.0), (1.0,), "same length"),
        ((0.0,), (1.0,), "at least 2"),
        ((0.1, 1.0), (0.9, 0.0), "start at 0.0"),
        ((0.0, 0.9), (1.0, 0.0), "end at 1.0"),
        ((0.0, 0.5, 0.5, 1.0), (1.0, 0.4, 0.3, 0.0), "strictly increasing"),
        ((0.0, 0.5, 1.0), (0.5, 0.6, 0.0), "non-increasing"),
        ((0.0, 1.0), (1.0, 0.1), "f\\(1\\) = 0"),
        ((0.0, 0.5, 1.0), (1.0, 0.6, 0.0), "1 - alpha"),
        ((0.0, 0.5, 1.0), (0.9, 0.5, 0.0), "convex"),
        ((0.0, 0.5, 1.0), (1.0, float("nan"), 0.0), "finite"),
        ((0.0, 0.5, 1.0), (1.0, -0.1, 0.0), "in \\[0, 1\\]"),
        ((0.0, "0.5", 1.0), (1.0, 0.2, 0.0), "real number"),
        ((0.0, True), (1.0, 0.0), "real number"),
        ("01", (1.0, 0.0), "sequence"),
    ],
)
def test_invalid_curves_raise(alphas: object, betas: object, match: str) -> None:
    with pytest.raises(InvalidArgument, match=match):
        TradeoffCurve(alphas, betas)  # type: ignore[arg-type]


def test_invalid_arguments_raise() -> None:
    f = TradeoffCurve.from_approx_dp(1.0, 0.0)
    bad_calls: list[Callable[[], object]] = [
        lambda: TradeoffCurve.from_approx_dp(-0.1, 0.0),
        lambda: TradeoffCurve.from_approx_dp(float("nan"), 0.0),
        lambda: TradeoffCurve.from_approx_dp(1.0, 1.5),
        lambda: TradeoffCurve.from_approx_dp(float("inf"), 0.0),
        lambda: TradeoffCurve.from_profile([1.0, 2.0], [0.0]),
        lambda: TradeoffCurve.from_profile([], []),
        lambda: TradeoffCurve.from_profile([1.0], [-1e-9]),
        lambda: TradeoffCurve.from_gdp(-1.0),
        lambda: TradeoffCurve.from_gdp(float("nan")),
        lambda: TradeoffCurve.from_gdp(1.0, n_points=1),
        lambda: f.std(1.5),
        lambda: f.std(float("nan")),
        lambda: f.paper(np.array([0.2, -0.1])),
        lambda: f.group(-1),
        lambda: f.group(1.5),  # type: ignore[arg-type]
        lambda: f.epsilon(2.0),
        lambda: f.epsilon(float("nan")),
        lambda: f.privacy_profile(float("nan")),
        lambda: f.dominates(0.5),  # type: ignore[arg-type]
        lambda: f.simplify(1),
        lambda: f.vertices("reflected"),
    ]
    for call in bad_calls:
        with pytest.raises(InvalidArgument):
            call()
