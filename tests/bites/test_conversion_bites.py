"""Bites for accountant/conversions.py and conversion_routes.py (issue Step 16): values at the edges of each
conversion, checked against references computed here, so a flipped shortcut or a moved threshold fails."""

from __future__ import annotations

import mpmath

from semidp.accountant.conversions import zcdp_to_approx_dp, zcdp_to_delta
from semidp.accountant.guarantees import ZCDP, ApproxDP

REF = mpmath.MPContext()
REF.dps = 50


def _cks(rho: float, delta: float, alpha: mpmath.mpf) -> mpmath.mpf:
    """[CKS20, Cor. 13] at order alpha: alpha rho + (log(1/delta) + (alpha-1) log(1-1/alpha) - log alpha)/(alpha-1)."""
    r, d = REF.mpf(rho), REF.mpf(delta)
    return alpha * r + (-REF.log(d) + (alpha - 1) * REF.log(1 - 1 / alpha) - REF.log(alpha)) / (alpha - 1)


def test_cks_conversion_at_rho_one_is_the_infimum_over_orders() -> None:
    """rho = 1, delta = 1e-6: the returned epsilon is at least the bound's infimum (found here by mpmath's
    minimiser over alpha) and within 1e-9 relative of it; rho = 0 alone converts to epsilon = 0."""
    eps = zcdp_to_approx_dp(ZCDP(1.0), 1e-6).epsilon
    alpha = REF.findroot(lambda a: REF.diff(lambda x: _cks(1.0, 1e-6, x), a), 4)
    best = _cks(1.0, 1e-6, alpha)
    assert best <= eps <= best * (1 + REF.mpf(1e-9))
    assert 7.76 < eps < 7.77
    assert zcdp_to_approx_dp(ZCDP(0.0), 1e-6).epsilon == 0.0


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
