r"""Conversions between privacy definitions (house style R1: free functions ``<from>_to_<to>``).

Every function returns a guarantee under the **same** relation as its input and
is conservative: epsilons and deltas are rounded up, tradeoff values down.
Closed forms are evaluated in 50-digit arithmetic (:data:`accountant.core.directed.MP`)
and then rounded outward. Where a conversion optimises a free parameter
(the Rényi order in the CKS bound), any value of the parameter gives a valid
bound, so the optimisation runs in floats and only the final evaluation is
certified.

Methods are labelled with the strings used in reports:

* ``"bun-steinke"`` -- [BS16, Prop. 1.3]; [CA24, Lemma 40];
* ``"canonne-kamath-steinke"`` -- [CKS20, Prop. 12 / Cor. 13];
* ``"mironov"`` -- [Mir17, Prop. 3];
* ``"balle-wang"`` -- exact GDP profile [BW18, Thm. 8], [DRS22, Cor. 2.13].
"""

from __future__ import annotations

import math
from fractions import Fraction as Q
from typing import Literal, Sequence

import mpmath
import numpy as np
from scipy import optimize

from semidp.accountant.core.arguments import check_in_interval, check_nonnegative
from semidp.accountant.core.directed import MP, up, up_exact
from semidp.accountant.core.errors import InvalidArgument
from semidp.accountant.guarantees.definitions import GDP, RDP, ZCDP, ApproxDP, PureDP, TradeOff
from semidp.accountant.profiles.gaussian import gdp_delta, gdp_epsilon

ZcdpMethod = Literal["bun-steinke", "canonne-kamath-steinke"]
RdpMethod = Literal["mironov", "canonne-kamath-steinke"]

#: Methods offered for RDP -> (epsilon, delta), in report order.
RDP_METHODS: tuple[RdpMethod, ...] = ("mironov", "canonne-kamath-steinke")
#: Methods offered for zCDP -> (epsilon, delta), in report order.
ZCDP_METHODS: tuple[ZcdpMethod, ...] = ("bun-steinke", "canonne-kamath-steinke")


# --------------------------------------------------------------------------- pure / approx


def pure_dp_to_approx_dp(g: PureDP) -> ApproxDP:
    """``epsilon``-DP is ``(epsilon, 0)``-DP."""
    return ApproxDP(g.epsilon, 0.0, g.relation)


def pure_dp_to_zcdp(g: PureDP) -> ZCDP:
    r""":math:`\varepsilon`-DP implies :math:`\tfrac12\varepsilon^2`-zCDP [BS16, Prop. 1.4]; rounded up.

    Examples
    --------
    >>> pure_dp_to_zcdp(PureDP(1.0)).rho
    0.5
    """
    return ZCDP(up_exact(Q(g.epsilon) ** 2 / 2), g.relation)


def approx_dp_to_approx_dp(g: ApproxDP | PureDP, delta: float) -> ApproxDP | None:
    r"""Re-express :math:`(\varepsilon,\delta_0)`-DP at another :math:`\delta \ge \delta_0`, exactly.

    The profile of :math:`f_{\varepsilon,\delta_0}` [DRS22, Prop. 2.12] is
    :math:`\delta(\varepsilon') = \delta_0 + (1-\delta_0)\,(e^\varepsilon - e^{\varepsilon'})_+/(1+e^\varepsilon)`,
    so :math:`\varepsilon' = \log\big(e^\varepsilon - (\delta-\delta_0)(1+e^\varepsilon)/(1-\delta_0)\big)`
    (0 when that is below 1). Tight: the four-point mechanism of [KOV15] attains it.
    Returns ``None`` when ``delta < delta_0`` (no finite epsilon follows). Rounded up.

    Examples
    --------
    >>> round(approx_dp_to_approx_dp(PureDP(1.0), 0.1).epsilon, 6)   # log(e - 0.1 (1 + e))
    0.852905
    """
    d = check_in_interval("delta", delta, 0.0, 1.0)
    d0 = g.delta if isinstance(g, ApproxDP) else 0.0
    if d < d0:
        return None
    if d == d0:
        return ApproxDP(g.epsilon, d, g.relation)
    if d0 >= 1.0:
        return ApproxDP(0.0, d, g.relation)
    e, md, md0 = MP.exp(MP.mpf(g.epsilon)), MP.mpf(d), MP.mpf(d0)
    inner = e - (md - md0) * (1 + e) / (1 - md0)
    eps = MP.log(inner) if inner > 1 else MP.mpf(0)
    # The profile decreases, so epsilon' <= epsilon exactly; the cap removes a one-ulp outward step.
    return ApproxDP(min(g.epsilon, up(eps)) if eps > 0 else 0.0, d, g.relation)


def approx_dp_to_tradeoff(g: ApproxDP | PureDP) -> TradeOff:
    r""":math:`(\varepsilon,\delta)`-DP is exactly :math:`f_{\varepsilon,\delta}`-DP [DRS22, Prop. 2.5]."""
    from semidp.accountant.profiles.tradeoff import TradeoffCurve

    delta = g.delta if isinstance(g, ApproxDP) else 0.0
    return TradeOff(TradeoffCurve.from_approx_dp(g.epsilon, delta), g.relation)


pure_dp_to_tradeoff = approx_dp_to_tradeoff


# --------------------------------------------------------------------------- GDP


def gdp_to_approx_dp(g: GDP, delta: float) -> ApproxDP:
    r"""Smallest :math:`\varepsilon` with :math:`\delta_\mu(\varepsilon)\le\delta`, exact profile [BW18, Thm. 8].

    Lossless: :math:`\mu`-GDP holds iff :math:`(\varepsilon,\delta_\mu(\varepsilon))`-DP
    holds for all :math:`\varepsilon` [DRS22, Cor. 2.13]. Certified at 50 digits.

    Examples
    --------
    >>> round(gdp_to_approx_dp(GDP(1.0), 1e-5).epsilon, 7)   # issue Step 1 golden value
    4.3771781
    """
    return ApproxDP(gdp_epsilon(g.mu, delta), delta, g.relation)


def gdp_to_delta(g: GDP, epsilon: float) -> float:
    r"""Tight :math:`\delta_\mu(\varepsilon)` (Balle–Wang), rounded up."""
    return gdp_delta(g.mu, epsilon)


def gdp_to_zcdp(g: GDP) -> ZCDP:
    r""":math:`\mu`-GDP implies :math:`\tfrac12\mu^2`-zCDP.

    A :math:`G_\mu`-DP pair is a post-processing of :math:`(N(0,1),N(\mu,1))`
    [DRS22, Thm. 2.10], whose Rényi divergence is :math:`\alpha\mu^2/2`
    [Mir17, Prop. 7]; Rényi divergence obeys data processing.
    """
    return ZCDP(up_exact(Q(g.mu) ** 2 / 2), g.relation)


def gdp_to_rdp(g: GDP, orders: Sequence[float]) -> RDP:
    r"""RDP curve :math:`\varepsilon(\alpha)=\alpha\mu^2/2` at ``orders`` (see :func:`gdp_to_zcdp`)."""
    return zcdp_to_rdp(gdp_to_zcdp(g), orders)


def gdp_to_tradeoff(g: GDP, n_points: int = 400) -> TradeOff:
    r"""Piecewise-linear lower bound of :math:`G_\mu` (tangent lines from the exact profile)."""
    from semidp.accountant.profiles.tradeoff import TradeoffCurve

    return TradeOff(TradeoffCurve.from_gdp(g.mu, n_points=n_points), g.relation)


# --------------------------------------------------------------------------- zCDP


def zcdp_to_rdp(g: ZCDP, orders: Sequence[float]) -> RDP:
    r""":math:`\rho`-zCDP is :math:`(\alpha, \alpha\rho)`-RDP for every :math:`\alpha>1` [BS16, Def. 1.1]."""
    orders_t = tuple(float(a) for a in orders)
    return RDP(orders_t, tuple(up_exact(Q(a) * Q(g.rho)) for a in orders_t), g.relation)


def _log_inv_delta(delta: float) -> mpmath.mpf:
    return -MP.log(MP.mpf(delta))


def _bun_steinke_eps(rho: float, delta: float) -> float:
    r = MP.mpf(rho)
    return up(r + 2 * MP.sqrt(r * _log_inv_delta(delta)))


def _cks_slack(u: mpmath.mpf, log_inv_delta: mpmath.mpf) -> mpmath.mpf:
    r"""[CKS20, Prop. 12]: :math:`\frac{\log(1/\delta)+(\alpha-1)\log(1-1/\alpha)-\log\alpha}{\alpha-1}` at
    :math:`\alpha = 1 + e^u`, so epsilon = RDP epsilon at alpha + this (valid for every order).

    Written in :math:`u=\log(\alpha-1)` so that orders within :math:`10^{-300}` of 1 (tiny
    :math:`\log(1/\delta)` or huge :math:`\rho`) neither round to 1 nor take the log of 0:
    :math:`\log(1-1/\alpha) = u - \log(1+e^u)`.
    """
    t = MP.exp(u)
    l1p = MP.log1p(t)
    return (log_inv_delta - l1p) / t + (u - l1p)


def _cks_eps_at(rho: mpmath.mpf, u: mpmath.mpf, log_inv_delta: mpmath.mpf) -> mpmath.mpf:
    """The zCDP bound at the order ``1 + e^u``: :math:`\alpha\rho` plus :func:`_cks_slack`."""
    return (1 + MP.exp(u)) * rho + _cks_slack(u, log_inv_delta)


def _cks_float_eps(rho: float, u: float, log_inv_delta: float) -> float:
    t = math.exp(u)
    if t == 0.0:
        return math.inf
    l1p = math.log1p(t)
    return (1 + t) * rho + (log_inv_delta - l1p) / t + (u - l1p)


def _cks_zcdp_eps(rho: float, delta: float) -> float:
    if rho == 0.0:
        return 0.0
    lid = -math.log(delta)
    # Search over u = log(alpha - 1); the optimum is near alpha = 1 + sqrt(log(1/delta)/rho).
    guess = 0.5 * (math.log(max(lid, 1e-300)) - math.log(rho))
    res = optimize.minimize_scalar(
        lambda u: _cks_float_eps(rho, u, lid),
        bounds=(min(guess, 0.0) - 30, max(guess, 0.0) + 30),
        method="bounded",
        options={"xatol": 1e-10},
    )
    eps = _cks_eps_at(MP.mpf(rho), MP.mpf(float(res.x)), _log_inv_delta(delta))
    return max(0.0, up(eps))


def zcdp_to_approx_dp(g: ZCDP, delta: float, method: ZcdpMethod = "canonne-kamath-steinke") -> ApproxDP:
    r"""Convert :math:`\rho`-zCDP to :math:`(\varepsilon,\delta)`-DP.

    ``method="bun-steinke"``: :math:`\varepsilon=\rho+2\sqrt{\rho\log(1/\delta)}`
    [BS16, Prop. 1.3]; [CA24, Lemma 40].

    ``method="canonne-kamath-steinke"`` (tighter):
    :math:`\varepsilon=\inf_{\alpha>1}\ \alpha\rho+\frac{\log(1/\delta)+(\alpha-1)\log(1-1/\alpha)-\log\alpha}{\alpha-1}`
    [CKS20, Cor. 13].

    Both are rounded up; the infimum is approached in floats and the bound
    at the chosen order is evaluated at 50 digits (any order is valid).

    Examples
    --------
    >>> round(zcdp_to_approx_dp(ZCDP(2.56), 1e-10, "bun-steinke").epsilon, 3)  # T-Z2
    17.915
    >>> round(zcdp_to_approx_dp(ZCDP(0.5), 1e-6).epsilon, 6)   # issue Step 1 golden value
    5.221534
    """
    check_in_interval("delta", delta, 0.0, 1.0, lo_open=True)
    if delta >= 1.0:
        return ApproxDP(0.0, 1.0, g.relation)
    if method == "bun-steinke":
        return ApproxDP(_bun_steinke_eps(g.rho, delta), delta, g.relation)
    if method == "canonne-kamath-steinke":
        return ApproxDP(_cks_zcdp_eps(g.rho, delta), delta, g.relation)
    raise InvalidArgument(f"method={method!r} must be one of {ZCDP_METHODS}.")


def zcdp_to_delta(g: ZCDP, epsilon: float) -> float:
    r"""Privacy profile of :math:`\rho`-zCDP [CKS20, Cor. 13], rounded up.

    :math:`\delta(\varepsilon)=\inf_{\alpha>1}\frac{e^{(\alpha-1)(\alpha\rho-\varepsilon)}}{\alpha-1}(1-\tfrac1\alpha)^\alpha`;
    the optimal order solves :math:`(2\alpha-1)\rho-\varepsilon+\log(1-1/\alpha)=0`
    (increasing in :math:`\alpha`), found by bisection in floats.
    """
    eps = check_nonnegative("epsilon", epsilon)
    rho = g.rho
    if rho == 0.0:
        return 0.0

    def deriv(a: float) -> float:
        return (2 * a - 1) * rho - eps + math.log1p(-1 / a)

    lo, hi = 1.0 + 1e-12, min(1e300, max(2.0, (eps + 1) / (2 * rho) + 2))
    while deriv(hi) < 0 and hi < 1e300:  # maxiter below: a tiny rho's root ~ 1/sqrt(2 rho) needs > 100 steps
        hi = min(1e300, hi * 2)
    alpha_f = optimize.brentq(deriv, lo, hi, xtol=1e-14, maxiter=2000) if deriv(lo) < 0 <= deriv(hi) else lo
    a = MP.mpf(hi if deriv(hi) < 0 else alpha_f)  # a root beyond the cap 1e300: any order > 1 is sound
    r, e = MP.mpf(rho), MP.mpf(eps)
    val = MP.exp((a - 1) * (a * r - e) + a * MP.log1p(-1 / a)) / (a - 1)
    return min(1.0, up(val))


# --------------------------------------------------------------------------- RDP


def rdp_to_approx_dp(g: RDP, delta: float, method: RdpMethod = "canonne-kamath-steinke") -> ApproxDP:
    r"""Convert an RDP curve to :math:`(\varepsilon,\delta)`-DP, best order, rounded up.

    ``"mironov"``: :math:`\varepsilon=\varepsilon(\alpha)+\frac{\log(1/\delta)}{\alpha-1}` [Mir17, Prop. 3].
    ``"canonne-kamath-steinke"``:
    :math:`\varepsilon=\varepsilon(\alpha)+\frac{\log(1/\delta)+(\alpha-1)\log(1-1/\alpha)-\log\alpha}{\alpha-1}`
    [CKS20, Prop. 12]. Minimum over the curve's orders.

    Examples
    --------
    >>> r = zcdp_to_rdp(ZCDP(0.5), [1.5, 2, 4, 5.0, 6, 8, 16])
    >>> round(rdp_to_approx_dp(r, 1e-6).epsilon, 4) >= 5.2215   # never below the zCDP optimum
    True
    """
    d = check_in_interval("delta", delta, 0.0, 1.0, lo_open=True)
    if d >= 1.0:
        return ApproxDP(0.0, 1.0, g.relation)
    if method not in RDP_METHODS:
        raise InvalidArgument(f"method={method!r} must be one of {RDP_METHODS}.")
    # Every order gives a valid bound: pick the best in floats, certify that one at 50 digits.
    a = np.asarray(g.orders)
    e = np.asarray(g.epsilons)
    lid_f = -math.log(d)
    with np.errstate(divide="ignore"):
        if method == "mironov":
            cand = e + lid_f / (a - 1)
        else:
            cand = e + (lid_f + (a - 1) * np.log1p(-1 / a) - np.log(a)) / (a - 1)
    k = int(np.argmin(cand))
    ak, lid = MP.mpf(g.orders[k]), _log_inv_delta(d)
    if method == "mironov":
        best = MP.mpf(g.epsilons[k]) + lid / (ak - 1)
    else:
        best = MP.mpf(g.epsilons[k]) + _cks_slack(MP.log(ak - 1), lid)
    return ApproxDP(max(0.0, up(best)), d, g.relation)


# --------------------------------------------------------------------------- f-DP


def tradeoff_to_delta(g: TradeOff, epsilon: float) -> float:
    r"""Privacy profile :math:`\delta(\varepsilon)=1+f^*(-e^\varepsilon)` of an :math:`f`-DP guarantee [DRS22, Prop. 2.12]; rounded up."""
    check_nonnegative("epsilon", epsilon)
    return float(g.curve.privacy_profile(epsilon))


def tradeoff_to_approx_dp(g: TradeOff, delta: float) -> ApproxDP | None:
    r"""Smallest :math:`\varepsilon` with :math:`\delta(\varepsilon)\le\delta` [DRS22, Prop. 2.12]; rounded up.

    ``None`` when no finite epsilon holds at ``delta`` (``delta < 1 - f(0)``).
    """
    d = check_in_interval("delta", delta, 0.0, 1.0)
    eps = float(g.curve.epsilon(d))
    return ApproxDP(eps, d, g.relation) if math.isfinite(eps) else None


def zcdp_to_tradeoff(g: ZCDP, epsilons: Sequence[float] | None = None) -> TradeOff:
    r"""Lower bound of the tradeoff implied by :math:`\rho`-zCDP: :math:`\max_i f_{\varepsilon_i,\delta(\varepsilon_i)}`.

    Uses the CKS privacy profile (:func:`zcdp_to_delta`) on a grid of
    epsilons; every line is valid, so the envelope is a valid lower bound.
    """
    from semidp.accountant.profiles.tradeoff import TradeoffCurve

    if epsilons is None:
        top = _cks_zcdp_eps(g.rho, 1e-12) if g.rho > 0 else 1.0
        eps = [0.0, *(float(x) for x in np.geomspace(1e-3, max(top, 1e-2), 300))]
    else:
        eps = [float(e) for e in epsilons]
    deltas = [zcdp_to_delta(g, e) for e in eps]
    return TradeOff(TradeoffCurve.from_profile(eps, deltas), g.relation)
