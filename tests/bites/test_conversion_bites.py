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
