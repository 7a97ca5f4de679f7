"""Bites for accountant/guarantees/conversions.py and conversion_routes.py (issue Step 16): values at the edges of each
conversion, checked against references computed here, so a flipped shortcut or a moved threshold fails."""

from __future__ import annotations

import mpmath
import pytest

from semidp.accountant.core.errors import InvalidArgument
from semidp.accountant.guarantees.conversions import zcdp_to_approx_dp, zcdp_to_delta
from semidp.accountant.guarantees.definitions import ZCDP, ApproxDP

REF = mpmath.MPContext()
REF.dps = 50


def _cks(rho: float, delta: float, alpha: mpmath.mpf) -> mpmath.mpf:
    """[CKS20, Cor. 13] at order alpha: alpha rho + (log(1/delta) + (alpha-1) log(1-1/alpha) - log alpha)/(alpha-1)."""
    r, d = REF.mpf(rho), REF.mpf(delta)
    return alpha * r + (-REF.log(d) + (alpha - 1) * REF.log(1 - 1 / alpha) - REF.log(alpha)) / (alpha - 1)


def _minimum(f: object, lo: float, hi: float) -> mpmath.mpf:
    """The minimum of a unimodal ``f`` on [lo, hi] by ternary search at 50 digits."""
    a, b = REF.mpf(lo), REF.mpf(hi)
    for _ in range(300):
        m1, m2 = a + (b - a) / 3, b - (b - a) / 3
        if f(m1) < f(m2):  # type: ignore[operator]
            b = m2
        else:
            a = m1
    return f((a + b) / 2)  # type: ignore[operator,no-any-return]


@pytest.mark.parametrize(
    ("rho", "delta"), [(1.0, 1e-6), (1e3, 1e-6), (1e-14, 1e-300), (1e-26, 1e-300), (1e-40, 1e-300)]
)
def test_cks_conversion_is_the_infimum_over_orders(rho: float, delta: float) -> None:
    """The returned epsilon is at least the bound's infimum over alpha = 1 + e^u (found here by a 50-digit
    ternary search) and within 1e-6 relative of it. A tiny rho puts the optimum far out (u ~ 19, 33 and 49), where
    the float search's window of +-30 around its guess u = log(log(1/delta)/rho)/2 must be centred right;
    rho = 0 alone converts to epsilon = 0."""
    eps = zcdp_to_approx_dp(ZCDP(rho), delta).epsilon
    best = _minimum(lambda u: _cks(rho, delta, 1 + REF.exp(u)), -80.0, 80.0)
    assert best <= eps <= best * (1 + REF.mpf(1e-6))
    assert zcdp_to_approx_dp(ZCDP(0.0), 1e-6).epsilon == 0.0


@pytest.mark.parametrize("delta", [0.0, 1.5, -0.1, float("nan")])
def test_zcdp_conversion_refuses_a_delta_outside_zero_one(delta: float) -> None:
    """delta must be in (0, 1]: 0 has no finite epsilon, above 1 is not a probability (exit 2, naming delta)."""
    with pytest.raises(InvalidArgument, match="delta"):
        zcdp_to_approx_dp(ZCDP(0.5), delta)


def test_zcdp_at_delta_one_is_trivial() -> None:
    for method in ("bun-steinke", "canonne-kamath-steinke"):
        out = zcdp_to_approx_dp(ZCDP(0.5), 1.0, method)  # type: ignore[arg-type]
        assert (out.epsilon, out.delta) == (0.0, 1.0) and isinstance(out, ApproxDP)


def test_zcdp_profile_at_rho_one_is_the_infimum_over_orders() -> None:
    """[CKS20, Cor. 13] at rho = 1, eps = 2: delta(eps) = inf_alpha e^{(alpha-1)(alpha rho - eps)} (1-1/alpha)^alpha
    / (alpha-1); the returned value is at least the infimum and within 1e-9 relative of it; rho = 0 gives 0."""

    def bound(a: mpmath.mpf) -> mpmath.mpf:
        return REF.exp((a - 1) * (a - 2) + a * REF.log(1 - 1 / a)) / (a - 1)

    alpha = REF.findroot(lambda a: REF.diff(bound, a), 1.5)
    best = bound(alpha)
    delta = zcdp_to_delta(ZCDP(1.0), 2.0)
    assert best <= delta <= best * (1 + REF.mpf(1e-9))
    assert zcdp_to_delta(ZCDP(0.0), 2.0) == 0.0


def test_composed_dp_epsilon_takes_the_optimal_composition_for_identical_parts() -> None:
    """100 identical (0.01, 0)-DP parts at delta = 1e-5: the optimal composition [KOV15, Thm. 3.3] (about 0.5) is
    far below the sum's profile (about 1.0) and is the one reported; distinct parts get the sum's profile."""
    from semidp.accountant.guarantees import conversions as conv
    from semidp.accountant.guarantees.composition import compose_recorded, homogeneous_epsilon
    from semidp.accountant.guarantees.conversion_routes import epsilon_delta
    from semidp.accountant.guarantees.definitions import PureDP

    for part in (ApproxDP(0.01, 0.0), PureDP(0.01)):
        g = compose_recorded([part] * 100)  # type: ignore[list-item]
        (row,) = epsilon_delta(g, 1e-5)
        kov = homogeneous_epsilon(ApproxDP(0.01, 0.0), 100, 1e-5)
        basic = conv.approx_dp_to_approx_dp(g, 1e-5)
        assert kov is not None and basic is not None and kov < 0.6 * basic.epsilon
        assert row.epsilon == kov and row.method == "f-dp-profile"
    h = compose_recorded([ApproxDP(0.1, 0.0), ApproxDP(0.2, 0.0)])
    (row,) = epsilon_delta(h, 1e-5)
    basic = conv.approx_dp_to_approx_dp(h, 1e-5)
    assert basic is not None and row.epsilon == basic.epsilon


def test_pure_dp_is_approximate_dp_with_delta_zero() -> None:
    """epsilon-DP is (epsilon, 0)-DP [DR14, Def. 2.4]: the same epsilon and relation, and delta exactly 0."""
    from semidp.accountant.guarantees.conversions import pure_dp_to_approx_dp
    from semidp.accountant.guarantees.definitions import PureDP
    from semidp.accountant.guarantees.relations import Replace

    out = pure_dp_to_approx_dp(PureDP(0.7, Replace(distance=2)))
    assert (out.epsilon, out.delta, out.relation) == (0.7, 0.0, Replace(distance=2))


def test_approx_dp_reexpressed_at_another_delta() -> None:
    """[DRS22, Prop. 2.12] / [KOV15, Thm. 2.4]: (eps, d0)-DP is (eps', d)-DP with
    eps' = log(e^eps - (d - d0)(1 + e^eps)/(1 - d0)) for d > d0 (0 once that is below 1): checked against a 50-digit
    reference (rounded up, within 2 ulp); d = d0 gives back eps itself, d < d0 has no finite epsilon (None), and a
    d large enough to make the argument <= 1 gives exactly 0."""
    from semidp.accountant.guarantees.conversions import approx_dp_to_approx_dp
    from semidp.accountant.guarantees.definitions import PureDP
    from semidp.accountant.guarantees.relations import Replace

    g = ApproxDP(1.0, 1e-3, Replace(distance=2))
    e, d0, d = REF.e, REF.mpf(1e-3), REF.mpf(0.1)
    ref = REF.log(e - (d - d0) * (1 + e) / (1 - d0))
    out = approx_dp_to_approx_dp(g, 0.1)
    assert out is not None and out.delta == 0.1 and out.relation == Replace(distance=2)
    assert ref <= out.epsilon <= ref * (1 + REF.mpf(2) ** -51)
    same = approx_dp_to_approx_dp(g, 1e-3)
    assert same is not None and (same.epsilon, same.delta) == (1.0, 1e-3)
    assert approx_dp_to_approx_dp(g, 5e-4) is None
    # (e - 1)/(1 + e) = 0.4621...: at d - d0 = 0.47 (1 - d0) the argument is below 1, so epsilon' = 0
    zero = approx_dp_to_approx_dp(g, 0.5)
    assert zero is not None and (zero.epsilon, zero.delta) == (0.0, 0.5)
    pure = approx_dp_to_approx_dp(PureDP(1.0), 0.1)
    ref0 = REF.log(e - d * (1 + e))
    assert pure is not None and ref0 <= pure.epsilon <= ref0 * (1 + REF.mpf(2) ** -51)


def _up_tight(value: float, ref: mpmath.mpf) -> bool:
    """``value`` is at least ``ref`` and at most 2 ulp above it (an outward rounding, not a looser bound)."""
    return bool(ref <= value <= ref * (1 + REF.mpf(2) ** -51))


def test_squares_halved_exactly_and_rounded_up() -> None:
    """eps-DP is eps^2/2-zCDP [BS16, Prop. 1.4] and mu-GDP is mu^2/2-zCDP [Mir17, Prop. 7]; zCDP rho is
    (alpha, alpha rho)-RDP [BS16, Def. 1.1]: exact rationals rounded up to the next float at most."""
    from fractions import Fraction as F

    from semidp.accountant.guarantees.conversions import gdp_to_rdp, gdp_to_zcdp, pure_dp_to_zcdp, zcdp_to_rdp
    from semidp.accountant.guarantees.definitions import GDP, PureDP

    for rho, exact in (
        (pure_dp_to_zcdp(PureDP(0.3)).rho, F(0.3) ** 2 / 2),
        (gdp_to_zcdp(GDP(1.3)).rho, F(1.3) ** 2 / 2),
    ):
        assert exact <= F(rho) < exact + F(2) ** -55
    rdp = zcdp_to_rdp(ZCDP(0.3), [1.5, 2, 10])
    assert rdp.orders == (1.5, 2.0, 10.0)
    for a, e in zip(rdp.orders, rdp.epsilons):
        assert F(a) * F(0.3) <= F(e) < F(a) * F(0.3) * (1 + F(2) ** -51)
    assert gdp_to_rdp(GDP(1.0), [2.0, 3.0]).epsilons == (1.0, 1.5)


def test_bun_steinke_conversion() -> None:
    """[BS16, Prop. 1.3]: eps = rho + 2 sqrt(rho log(1/delta)), at 50 digits, rounded up (T-Z2: rho = 2.56,
    delta = 1e-10 gives 17.915...)."""
    rho, delta = REF.mpf(2.56), REF.mpf(1e-10)
    ref = rho + 2 * REF.sqrt(rho * -REF.log(delta))
    out = zcdp_to_approx_dp(ZCDP(2.56), 1e-10, "bun-steinke")
    assert _up_tight(out.epsilon, ref) and out.delta == 1e-10 and round(out.epsilon, 3) == 17.915
    with pytest.raises(InvalidArgument, match="method"):
        zcdp_to_approx_dp(ZCDP(2.56), 1e-10, "bun")  # type: ignore[arg-type]


def test_rdp_conversion_takes_the_best_order_of_each_method() -> None:
    """An RDP curve at orders 1.5, 2, 4, 8: Mironov's eps(alpha) + log(1/delta)/(alpha - 1) [Mir17, Prop. 3] and
    CKS's eps(alpha) + (log(1/delta) + (alpha - 1) log(1 - 1/alpha) - log alpha)/(alpha - 1) [CKS20, Prop. 12],
    each the minimum over the orders at 50 digits, rounded up; delta = 1 is trivial; an unknown method is refused."""
    from semidp.accountant.guarantees.conversions import rdp_to_approx_dp
    from semidp.accountant.guarantees.definitions import RDP

    orders, eps = (1.5, 2.0, 4.0, 8.0), (0.3, 0.5, 1.2, 3.0)
    g = RDP(orders, eps)
    lid = -REF.log(REF.mpf(1e-6))
    mir = min(REF.mpf(e) + lid / (REF.mpf(a) - 1) for a, e in zip(orders, eps))
    cks = min(
        REF.mpf(e) + (lid + (REF.mpf(a) - 1) * REF.log(1 - 1 / REF.mpf(a)) - REF.log(a)) / (REF.mpf(a) - 1)
        for a, e in zip(orders, eps)
    )
    m, c = rdp_to_approx_dp(g, 1e-6, "mironov"), rdp_to_approx_dp(g, 1e-6)
    assert _up_tight(m.epsilon, mir) and _up_tight(c.epsilon, cks) and m.delta == c.delta == 1e-6
    one = rdp_to_approx_dp(g, 1.0)
    assert (one.epsilon, one.delta) == (0.0, 1.0)
    with pytest.raises(InvalidArgument, match="method"):
        rdp_to_approx_dp(g, 1e-6, "bun-steinke")  # type: ignore[arg-type]
    # a tiny curve at a large delta: the bound is negative at the best order, reported as 0
    assert rdp_to_approx_dp(RDP((2.0,), (0.0,)), 0.9).epsilon == 0.0


def test_tradeoff_profile_and_its_inverse_for_one_approx_dp_curve() -> None:
    """f_{eps,d0} with eps = 1, d0 = 1e-3 [KOV15, Thm. 2.4]: delta(eps') = d0 + (1 - d0)(e - e^eps')/(1 + e) for
    eps' < 1 (50-digit reference); the smallest epsilon at delta = 0.01 inverts it; below d0 there is none (None)."""
    from semidp.accountant.guarantees.conversions import approx_dp_to_tradeoff, tradeoff_to_approx_dp, tradeoff_to_delta

    t = approx_dp_to_tradeoff(ApproxDP(1.0, 1e-3))
    d0, e = REF.mpf(1e-3), REF.e
    ref = d0 + (1 - d0) * (e - REF.exp(REF.mpf(0.5))) / (1 + e)
    assert abs(tradeoff_to_delta(t, 0.5) - ref) <= 1e-12 and tradeoff_to_delta(t, 0.5) >= ref
    inv = REF.log(e - (REF.mpf(0.01) - d0) * (1 + e) / (1 - d0))
    out = tradeoff_to_approx_dp(t, 0.01)
    assert out is not None and out.delta == 0.01 and inv <= out.epsilon <= inv + 1e-9
    assert tradeoff_to_approx_dp(t, 1e-4) is None
    with pytest.raises(InvalidArgument, match="epsilon"):
        tradeoff_to_delta(t, -0.5)


def test_zcdp_profile_edges() -> None:
    """zcdp_to_delta [CKS20, Cor. 13]: a bound above 1 is reported as 1 (rho = 100 at eps = 0, where the optimal
    order is at the search's lower end alpha = 1 + 1e-12); rho = 0.01 at eps = 0 is the infimum over orders
    (50-digit reference, within 1e-9 relative); a negative epsilon is refused."""

    def bound(a: mpmath.mpf, rho: float, eps: float) -> mpmath.mpf:
        return REF.exp((a - 1) * (a * rho - eps) + a * REF.log(1 - 1 / a)) / (a - 1)

    assert zcdp_to_delta(ZCDP(100.0), 0.0) == 1.0
    best = _minimum(lambda u: bound(1 + REF.exp(u), 0.01, 0.0), -40.0, 40.0)
    got = zcdp_to_delta(ZCDP(0.01), 0.0)
    assert best <= got <= best * (1 + REF.mpf(1e-9))
    with pytest.raises(InvalidArgument, match="epsilon"):
        zcdp_to_delta(ZCDP(0.01), -1.0)


def test_zcdp_tradeoff_is_the_envelope_of_its_profile_lines() -> None:
    """zcdp_to_tradeoff [CKS20, Cor. 13] + [DRS22, Prop. 2.12]: the default grid's curve has the profile of
    rho-zCDP at each grid epsilon (at most the CKS delta, and tight to 1e-9 at eps = 0.5 on a given grid);
    rho = 0 is the identity curve (perfect privacy)."""
    from semidp.accountant.guarantees.conversions import tradeoff_to_delta, zcdp_to_tradeoff

    g = zcdp_to_tradeoff(ZCDP(0.5), [0.0, 0.5, 2.0])
    for e in (0.0, 0.5, 2.0):
        assert tradeoff_to_delta(g, e) <= zcdp_to_delta(ZCDP(0.5), e) + 1e-12
    assert abs(tradeoff_to_delta(g, 0.5) - zcdp_to_delta(ZCDP(0.5), 0.5)) <= 1e-9
    full = zcdp_to_tradeoff(ZCDP(0.5))
    assert abs(tradeoff_to_delta(full, 3.0) - zcdp_to_delta(ZCDP(0.5), 3.0)) <= 2e-2 * zcdp_to_delta(ZCDP(0.5), 3.0)
    assert tradeoff_to_delta(full, 0.0) <= zcdp_to_delta(ZCDP(0.5), 0.0) + 1e-12
    zero = zcdp_to_tradeoff(ZCDP(0.0))
    assert (zero.curve.alphas, zero.curve.betas) == ((0.0, 1.0), (1.0, 0.0))


def test_reexpressing_needs_a_delta_in_zero_one() -> None:
    """approx_dp_to_approx_dp takes delta in [0, 1] (a probability): 1.5 is refused naming delta (exit 2)."""
    from semidp.accountant.guarantees.conversions import approx_dp_to_approx_dp

    with pytest.raises(InvalidArgument, match="delta"):
        approx_dp_to_approx_dp(ApproxDP(1.0, 1e-3), 1.5)
    one = approx_dp_to_approx_dp(ApproxDP(1.0, 1e-3), 1.0)
    assert one is not None and (one.epsilon, one.delta) == (0.0, 1.0)


def test_reexpressing_where_the_log_argument_is_between_one_and_two_or_negative() -> None:
    """(1, 1e-3)-DP at d = 0.3: the argument e - (d - d0)(1 + e)/(1 - d0) = 1.605 is in (1, 2), so eps' = log of it
    = 0.473 (50-digit reference, rounded up); at d = 0.9 the argument is negative (-0.63): eps' = 0 exactly."""
    from semidp.accountant.guarantees.conversions import approx_dp_to_approx_dp

    g = ApproxDP(1.0, 1e-3)
    e, d0, d = REF.e, REF.mpf(1e-3), REF.mpf(0.3)
    ref = REF.log(e - (d - d0) * (1 + e) / (1 - d0))
    out = approx_dp_to_approx_dp(g, 0.3)
    assert out is not None and 1 < e - (d - d0) * (1 + e) / (1 - d0) < 2
    assert ref <= out.epsilon <= ref * (1 + REF.mpf(2) ** -51)
    neg = approx_dp_to_approx_dp(g, 0.9)
    assert neg is not None and (neg.epsilon, neg.delta) == (0.0, 0.9)


@pytest.mark.parametrize("method", ["mironov", "canonne-kamath-steinke"])
def test_rdp_conversion_picks_the_best_of_many_close_orders(method: str) -> None:
    """The RDP curve of 0.5-zCDP at the 191 orders 1.1, 1.2, ..., 20 (epsilon(alpha) = alpha / 2, exact): neighbouring
    orders' bounds differ by about 1e-3, so the float pre-selection must use the method's own formula (Mironov
    [Mir17, Prop. 3] or CKS [CKS20, Prop. 12]) to land on the best one; the result is the 50-digit minimum over
    all orders, rounded up (2 ulp); delta = 0 and 1.5 are refused (exit 2, naming delta)."""
    from semidp.accountant.guarantees.conversions import rdp_to_approx_dp
    from semidp.accountant.guarantees.definitions import RDP

    orders = tuple(k / 10 for k in range(11, 201))
    g = RDP(orders, tuple(a / 2 for a in orders))
    lid = -REF.log(REF.mpf(1e-6))

    def bound(a_f: float) -> mpmath.mpf:
        a = REF.mpf(a_f)
        if method == "mironov":
            return a / 2 + lid / (a - 1)
        return a / 2 + (lid + (a - 1) * REF.log(1 - 1 / a) - REF.log(a)) / (a - 1)

    ref = min(bound(a) for a in orders)
    out = rdp_to_approx_dp(g, 1e-6, method)  # type: ignore[arg-type]
    assert ref <= out.epsilon <= ref * (1 + REF.mpf(2) ** -51)
    for bad in (0.0, 1.5):
        with pytest.raises(InvalidArgument, match="delta"):
            rdp_to_approx_dp(g, bad, method)  # type: ignore[arg-type]


def test_tradeoff_inverse_needs_a_delta_in_zero_one() -> None:
    from semidp.accountant.guarantees.conversions import approx_dp_to_tradeoff, tradeoff_to_approx_dp

    with pytest.raises(InvalidArgument, match="delta"):
        tradeoff_to_approx_dp(approx_dp_to_tradeoff(ApproxDP(1.0, 1e-3)), 1.5)


def test_zcdp_profile_where_the_lower_end_of_the_search_is_already_past_the_optimum() -> None:
    """rho = 28, eps = 0: the derivative (2 alpha - 1) rho - eps + log(1 - 1/alpha) at alpha = 1 + 1e-12 is
    28 - 27.63 = 0.37 >= 0, so that order is used (no root to bracket): the bound there, at 50 digits, rounded up."""
    a = REF.mpf(1.0 + 1e-12)
    ref = REF.exp((a - 1) * a * 28 + a * REF.log(1 - 1 / a)) / (a - 1)
    assert ref <= zcdp_to_delta(ZCDP(28.0), 0.0) <= ref * (1 + REF.mpf(2) ** -51)


@pytest.mark.parametrize("rho", [0.5, 1e-8])
def test_zcdp_tradeoff_default_grid(rho: float) -> None:
    """The default grid is eps = 0 and 300 geometric points from 1e-3 to max(epsilon at delta = 1e-12, 1e-2)
    (0.5-zCDP: up to 7.5; 1e-8-zCDP: up to 1e-2, its epsilon 8e-4 being below)."""
    import numpy as np

    from semidp.accountant.guarantees.conversions import zcdp_to_tradeoff

    top = zcdp_to_approx_dp(ZCDP(rho), 1e-12).epsilon
    assert (top > 7.5) if rho == 0.5 else (top < 1e-2)
    grid = [0.0, *(float(x) for x in np.geomspace(1e-3, max(top, 1e-2), 300))]
    full, ref = zcdp_to_tradeoff(ZCDP(rho)).curve, zcdp_to_tradeoff(ZCDP(rho), grid).curve
    assert (full.alphas, full.betas) == (ref.alphas, ref.betas)


@pytest.mark.parametrize("rho", [1e-60, 1e-200, 1e-320, 5e-324])
def test_zcdp_profile_of_a_vanishing_rho(rho: float) -> None:
    """rho-zCDP at eps = 0: the bound's optimal order ~ 1/sqrt(2 rho) lies far inside [1, 1/(2 rho)], which brentq's
    default 100 steps could not narrow (RuntimeError, an internal error, at rho = 1e-60; bug fixed with
    maxiter=2000): delta is within 1e-9 of the infimum over orders (50-digit ternary search in log(alpha - 1)),
    about sqrt(2 rho / e). From rho ~ 1e-309 the starting bracket 1/(2 rho) overflowed to inf (RuntimeError; bug
    fixed by capping it at 1e300 like cks_order)."""

    def bound(a: mpmath.mpf) -> mpmath.mpf:
        return REF.exp((a - 1) * a * rho + a * REF.log1p(-1 / a)) / (a - 1)

    best = _minimum(lambda u: bound(1 + REF.exp(u)), 0.0, 400.0)
    got = zcdp_to_delta(ZCDP(rho), 0.0)
    assert best <= got <= best * (1 + REF.mpf(1e-9))
    assert abs(got / REF.sqrt(2 * REF.mpf(rho) / REF.e) - 1) < 1e-6


@pytest.mark.parametrize("method", ["mironov", "canonne-kamath-steinke"])
def test_rdp_conversion_at_delta_one_is_trivial_whatever_the_curve(method: str) -> None:
    """delta = 1 holds for every mechanism: (0, 1) for a curve whose bound at delta = 1 would still be positive
    (epsilon(2) = 5: Mironov gives 5 + 0, CKS 5 + log(1/2) - log 2 = 3.6 at alpha = 2 [CKS20, Prop. 12])."""
    from semidp.accountant.guarantees.conversions import rdp_to_approx_dp
    from semidp.accountant.guarantees.definitions import RDP

    out = rdp_to_approx_dp(RDP((2.0,), (5.0,)), 1.0, method)  # type: ignore[arg-type]
    assert (out.epsilon, out.delta) == (0.0, 1.0)


def test_zcdp_profile_whose_optimal_order_is_beyond_the_float_range() -> None:
    """rho = 5e-324, eps = 1: the optimal order ~ eps/(2 rho) ~ 1e323 is beyond every float (the doubling loop ran
    to inf and brentq failed, an internal error); capped at 1e300, the bound there is e^{-1e300}, any order is
    sound [CKS20, Cor. 13], so delta is the smallest positive float."""
    assert zcdp_to_delta(ZCDP(5e-324), 1.0) == 5e-324
    assert zcdp_to_delta(ZCDP(1e-310), 2.0) == 5e-324


def test_approx_dp_route_below_its_own_delta_gives_no_epsilon() -> None:
    """(1, 0.1)-DP at delta = 0.01 < 0.1: no finite epsilon follows (the profile of f_{1,0.1} never goes below its
    delta atom 0.1 [KOV15]), so the route reports ``None`` rather than a number or a crash."""
    from semidp.accountant.guarantees.conversion_routes import EpsilonDelta, epsilon_delta

    assert epsilon_delta(ApproxDP(1.0, 0.1), 0.01) == [EpsilonDelta(0.01, None, "f-dp-profile")]


def test_composed_identical_parts_between_the_product_and_the_sum_of_deltas() -> None:
    """Two (1, 0.1)-DP parts at delta = 0.195: below the sum's delta 0.2 (basic composition gives nothing) but above
    1 - 0.9^2 = 0.19, so the optimal composition [KOV15, Thm. 3.3] is finite. Its profile on [0, 2) is
    0.19 + 0.81 p^2 (1 - e^{eps - 2}), p = e/(1 + e) (privacy loss 2 with probability p^2), hence
    eps = 2 + log(1 - 0.005/(0.81 p^2)) ~ 1.98838, reported rounded up within 1e-9 relative."""
    from semidp.accountant.guarantees import conversions as conv
    from semidp.accountant.guarantees.composition import compose_recorded
    from semidp.accountant.guarantees.conversion_routes import epsilon_delta

    g = compose_recorded([ApproxDP(1.0, 0.1)] * 2)
    assert conv.approx_dp_to_approx_dp(g, 0.195) is None
    (row,) = epsilon_delta(g, 0.195)
    p = REF.e / (1 + REF.e)
    keep = (1 - REF.mpf(0.1)) ** 2  # the probability that neither part's delta atom fires
    exact = 2 + REF.log(1 - (REF.mpf(0.195) - (1 - keep)) / (keep * p**2))
    assert row.epsilon is not None and exact <= row.epsilon <= exact * (1 + REF.mpf(1e-9))
    assert row.method == "f-dp-profile"


def test_route_records_are_immutable_slotted_values() -> None:
    """An (epsilon, delta) row is a frozen value (a report row cannot be edited after the conversion that proved
    it) and carries no ``__dict__`` (slots)."""
    import dataclasses

    from semidp.accountant.guarantees.conversion_routes import EpsilonDelta

    row = EpsilonDelta(1e-6, 1.0, "bun-steinke")
    with pytest.raises(dataclasses.FrozenInstanceError):
        row.epsilon = 0.5  # type: ignore[misc]
    assert not hasattr(row, "__dict__")
    assert row.to_json() == {"delta": 1e-6, "epsilon": 1.0, "method": "bun-steinke"}


def test_delta_at_through_the_tradeoff_route() -> None:
    """The default ``delta_at`` goes through the tradeoff curve: epsilon-DP at eps' = 0.5 has the exact profile
    (e - e^0.5)/(1 + e) of f_{1,0} [KOV15] (no delta atom: a pure guarantee is (1, 0)-DP, not (1, 1)-DP), reported
    within 1e-12 relative above; an RDP curve has no tradeoff route (``None``); and no finite guarantee means
    delta = 1 at every epsilon (a smaller value would be optimistic)."""
    from semidp.accountant.guarantees.conversion_routes import delta_at
    from semidp.accountant.guarantees.definitions import RDP, PureDP
    from semidp.accountant.guarantees.relations import Replace
    from semidp.accountant.guarantees.semidp import NoFiniteGuarantee

    for eps_prime in (0.0, 0.5):
        exact = (REF.e - REF.exp(eps_prime)) / (1 + REF.e)
        got = delta_at(PureDP(1.0), eps_prime)
        assert got is not None and exact <= got <= exact * (1 + REF.mpf(1e-12))
    assert delta_at(RDP((2.0,), (1.0,)), 1.0) is None
    assert delta_at(NoFiniteGuarantee("T differs on an adjacent pair", Replace()), 3.0) == 1.0


def test_gdp_tradeoff_is_tight_at_its_400_tangency_points() -> None:
    """``gdp_to_tradeoff``'s curve is built from tangents of G_mu at 400 equally spaced epsilon in [0, mu^2/2 + 9 mu]
    (``TradeoffCurve.from_gdp``): at those epsilon its profile is the exact Balle-Wang delta [BW18, Thm. 8] up to the
    padding (measured 1e-9 relative at mu = 1), while between tangents it is ~1e-3 above (399 or 401 points)."""
    import numpy as np

    from semidp.accountant.guarantees.conversions import gdp_to_tradeoff, tradeoff_to_delta
    from semidp.accountant.guarantees.definitions import GDP

    mu = 1.0
    curve = gdp_to_tradeoff(GDP(mu))
    grid = np.linspace(0.0, mu * mu / 2 + 9.0 * mu, 400)
    for k in (5, 40, 100, 133, 170):
        e, m = REF.mpf(float(grid[k])), REF.mpf(mu)
        exact = REF.ncdf(-e / m + m / 2) - REF.exp(e) * REF.ncdf(-e / m - m / 2)
        assert exact <= tradeoff_to_delta(curve, float(grid[k])) <= exact * (1 + REF.mpf(1e-6))
