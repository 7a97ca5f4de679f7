r"""The Gaussian privacy profile and its inverses (Balle & Wang 2018; Dong, Roth & Su 2022).

For :math:`\mu`-GDP the tight privacy profile is

.. math:: \delta_\mu(\varepsilon) = \Phi\Big(\frac{\mu}{2}-\frac{\varepsilon}{\mu}\Big)
          - e^{\varepsilon}\,\Phi\Big(-\frac{\mu}{2}-\frac{\varepsilon}{\mu}\Big)

[BW18, Thm. 8], [DRS22, Cor. 2.13] (``docs/reference/semi-dp.md`` Sec. 2). It holds
for every real :math:`\varepsilon` (negative values are needed when the
Gaussian is one part of a composed privacy-loss distribution).

Two evaluation paths:

* :func:`gdp_delta` -- scalar, evaluated in mpmath at 50 digits and rounded
  **up** (certified upper bound);
* :func:`gdp_delta_array` -- vectorised float (``scipy.special.log_ndtr``),
  padded up by a stated error budget; used inside numerical accountants.
"""

from __future__ import annotations

import math
from fractions import Fraction

import mpmath
import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import optimize, special

from semidp.accountant.core.arguments import check_finite_real, check_in_interval, check_nonnegative, check_positive
from semidp.accountant.core.directed import MP, MP_REL_ERROR, down, up, up_exact
from semidp.accountant.core.errors import InvalidArgument

#: Relative error budget of :func:`gdp_delta_array` (log_ndtr is accurate to a
#: few ulps; the cancellation in ``1 - exp(d)`` is handled by ``expm1``; the
#: budget is six orders of magnitude above what we measured against mpmath).
ARRAY_REL_PAD = 1e-9
#: Absolute floor of the error budget of :func:`gdp_delta_array`.
ARRAY_ABS_PAD = 1e-300


#: Working precisions tried in turn by :func:`delta_interval` when the two terms of the profile cancel.
ADAPTIVE_DPS = (50, 120, 300, 800, 2000)


def delta_interval(mu: float, eps: float) -> tuple[mpmath.mpf, mpmath.mpf]:
    r"""A certified interval ``(lower, upper)`` around :math:`\delta_\mu(\varepsilon)` [BW18, Thm. 8].

    The profile :math:`\Phi(a)-e^{\varepsilon}\Phi(b)` (:math:`a=\mu/2-\varepsilon/\mu`,
    :math:`b=a-\mu`) cancels catastrophically when :math:`\varepsilon/\mu` is large.
    It is evaluated at increasing precision (:data:`ADAPTIVE_DPS`) with an error
    bound :math:`|\Phi(a)|\,(a^2+|\varepsilon|+10)\,10^{2-\mathrm{dps}}` (an input error
    :math:`\eta` in :math:`a` moves :math:`\log\Phi(a)` by about :math:`|a|\eta`) until the value
    clears ten times its error (ends rounded outward to 50 digits). Otherwise the interval falls back to
    :math:`[0, \Phi(a)]` (the subtracted term is non-negative). Far in the tail, :math:`\Phi(a)\le\varphi(a)/|a|`
    (Mills) bounds it without evaluating :math:`\Phi`; 50-digit rounding is covered by :data:`MP_REL_ERROR`.
    """
    if mu == 0:
        v = -MP.expm1(MP.mpf(eps)) if eps < 0 else MP.mpf(0)  # 1 - e^eps without cancellation (eps = -1e-30)
        return v * (1 - MP_REL_ERROR), v * (1 + MP_REL_ERROR)  # v rounded to 50 digits; 0 is exact
    a_f = mu / 2 - eps / mu
    b_f = a_f - mu
    if max(abs(a_f), abs(b_f)) > 1e6:  # far tails: Mills' ratio in log space, no Phi evaluated
        pa_upper = MP.exp(_log_phi_upper(a_f))
        pa_lower = 1 - MP.exp(_log_phi_upper(-a_f))
        sub_upper = MP.exp(MP.mpf(eps) + _log_phi_upper(b_f))  # e^eps Phi(b) <= this
        return max(MP.mpf(0), pa_lower - sub_upper - MP_REL_ERROR), min(MP.mpf(1), pa_upper * 2)  # terms' rounding
    val = err = pa = MP.mpf(0)
    for dps in ADAPTIVE_DPS:
        ctx = _context(dps)
        m, e = ctx.mpf(mu), ctx.mpf(eps)
        a = m / 2 - e / m
        pa = ctx.ncdf(a)
        val = pa - ctx.exp(e) * ctx.ncdf(a - m)
        err = abs(pa) * (a * a + abs(e) + 10) * ctx.mpf(10) ** (2 - dps)
        if val > 10 * err:
            return MP.fsub(val, err, rounding="f"), MP.fadd(val, err, rounding="c")  # outward to 50 digits
    upper = min(pa * (1 + err), val + err) if val + err > 0 else pa * (1 + err)
    return MP.mpf(0), MP.fadd(upper, 0, rounding="c")


_CONTEXTS: dict[int, mpmath.MPContext] = {}


def _context(dps: int) -> mpmath.MPContext:
    """An mpmath context at ``dps`` digits, made once (making one costs more than a profile evaluation);
    its precision is never changed after it is made."""
    ctx = _CONTEXTS.get(dps)
    if ctx is None:
        ctx = mpmath.MPContext()
        ctx.dps = dps
        _CONTEXTS[dps] = ctx
    return ctx


def _log_phi_upper(x: float) -> mpmath.mpf:
    r"""log of an upper bound on :math:`\Phi(x)`: Mills' ratio :math:`\varphi(x)/|x|` for :math:`x<-1`, else 0."""
    if x >= -1:
        return MP.mpf(0)
    xm = MP.mpf(x)
    return -xm * xm / 2 - MP.log(-xm) - MP.log(2 * MP.pi) / 2


def _mp_delta(mu: mpmath.mpf, eps: mpmath.mpf) -> mpmath.mpf:
    """An upper bound of the profile (the upper end of :func:`delta_interval`)."""
    return delta_interval(float(mu), float(eps))[1]


def _float_log_delta(mu: float, eps: float) -> float:
    """Float ``log delta_mu(eps)`` for root-finding only (never reported)."""
    a = mu / 2 - eps / mu
    la = float(special.log_ndtr(a))
    d = eps + float(special.log_ndtr(-mu / 2 - eps / mu)) - la
    if d >= 0.0:
        return -math.inf
    return la + math.log(-math.expm1(d))


def gdp_delta(mu: float, eps: float) -> float:
    r"""Certified upper bound on :math:`\delta_\mu(\varepsilon)` for :math:`\mu`-GDP.

    Parameters
    ----------
    mu:
        GDP parameter, ``>= 0``.
    eps:
        Any real epsilon.

    Returns
    -------
    float
        ``delta`` rounded up (never below the true profile value).

    References
    ----------
    [BW18] Balle & Wang, "Improving the Gaussian Mechanism for Differential Privacy", Thm. 8.
    Reference target T-F2.

    Examples
    --------
    >>> round(gdp_delta(1.0, 1.0), 7)   # T-F2
    0.1269367
    """
    m = check_nonnegative("mu", mu)
    e = check_finite_real("eps", eps)
    return min(1.0, max(0.0, up(delta_interval(m, e)[1])))


def gdp_delta_lower(mu: float, eps: float) -> float:
    r"""Certified **lower** bound on :math:`\delta_\mu(\varepsilon)` (50 digits, rounded down).

    Used to *refute* claims: the Gaussian mechanism attains this profile exactly.
    """
    m = check_nonnegative("mu", mu)
    e = check_finite_real("eps", eps)
    return min(1.0, max(0.0, down(delta_interval(m, e)[0])))


def gdp_delta_array(mu: float, eps: ArrayLike) -> NDArray[np.float64]:
    r"""Vectorised float upper bound on :math:`\delta_\mu(\varepsilon)` (padded up).

    Computed as :math:`\Phi(a)\,(1-e^{d})`, :math:`d = \varepsilon + \log\Phi(b) - \log\Phi(a)`,
    with ``log_ndtr`` and ``expm1``, ``d`` moved down by its float error, 4e-15 (|eps| + |log Phi(a)| + |log Phi(b)|)
    (at a tiny mu, d ~ -mu is all cancellation), padded by :data:`ARRAY_REL_PAD` (relative) and
    :data:`ARRAY_ABS_PAD` (absolute) and clipped to ``[0, 1]``.
    """
    m = check_nonnegative("mu", mu)
    e = np.asarray(eps, dtype=np.float64)
    if m == 0.0:
        out = np.where(e < 0, -np.expm1(np.minimum(e, 0.0)), 0.0)
        return np.clip(out * (1 + ARRAY_REL_PAD) + ARRAY_ABS_PAD, 0.0, 1.0)
    a = m / 2 - e / m
    b = -m / 2 - e / m
    la, lb = special.log_ndtr(a), special.log_ndtr(b)
    d = e + lb - la - 4e-15 * (np.abs(e) + (np.abs(la) + np.abs(lb)))  # an upper bound needs d's lower end
    with np.errstate(over="ignore"):
        val = np.exp(la) * -np.expm1(np.minimum(d, 0.0))
    res: NDArray[np.float64] = np.clip(val * (1 + ARRAY_REL_PAD) + ARRAY_ABS_PAD, 0.0, 1.0)
    return res


def gdp_epsilon(mu: float, delta: float) -> float:
    r"""Smallest certified :math:`\varepsilon \ge 0` with :math:`\delta_\mu(\varepsilon) \le \delta`.

    Solved in floats (``brentq`` on the monotone profile), then certified: the
    candidate is increased until the 50-digit profile value is ``<= delta``.
    Returns ``0.0`` when ``delta >= delta_mu(0)``.

    Examples
    --------
    >>> round(gdp_epsilon(1.0, 1e-5), 7)   # issue Step 1 golden value
    4.3771781
    """
    m = check_nonnegative("mu", mu)
    d = check_in_interval("delta", delta, 0.0, 1.0, lo_open=True)
    mm, md = MP.mpf(m), MP.mpf(d)
    # delta_mu(0) <= delta means epsilon = 0; certified at 50 digits unless the float value is clearly above
    if (m == 0 or _float_log_delta(m, 0.0) <= math.log(d) + 1e-6) and _mp_delta(mm, MP.mpf(0)) <= md:
        return 0.0
    # Bracket: delta_mu(eps) <= exp(-(eps - mu^2/2)^2 / (2 mu^2)) by the Gaussian tail of the loss, so hi is
    # above the root (were it not, brentq falls back to hi and the certification below moves outward).
    hi = m * m / 2 + m * math.sqrt(-2 * math.log(d)) + 1.0  # -log(d), not log(1/d): 1/d overflows for subnormals

    def f(x: float) -> float:
        return max(_float_log_delta(m, x), -1e300) - math.log(d)

    try:
        x = optimize.brentq(f, 0.0, hi, xtol=1e-14, rtol=1e-15, maxiter=200)
    except ValueError:  # no float sign change (delta just below delta_mu(0), f(0) <= 0): search out from 0
        x = 0.0
    x = up(MP.mpf(x))
    step = max(abs(x) * 1e-13, 1e-300)  # the float root is within ~1e-14: one step out is usually certified
    x = x + step
    while _mp_delta(mm, MP.mpf(x)) > md:  # certify: move outward (doubling steps) until the bound holds
        step *= 2
        x = x + step
    return x


def gdp_epsilon_lower(mu: float, delta: float, *, start: float | None = None) -> float:
    r"""Certified **lower** bound on the smallest :math:`\varepsilon` with :math:`\delta_\mu(\varepsilon)\le\delta`.

    Returns ``x`` whose certified lower end of :func:`delta_interval` exceeds ``delta`` (times
    ``1 + MP_REL_ERROR``), so the true epsilon exceeds
    ``x`` because the profile is decreasing. Used to *refute* claims: the
    Gaussian mechanism needs at least this epsilon. ``0.0`` when nothing
    positive is certified. ``start``: an upper bound of the answer to search down from (e.g.
    :func:`gdp_epsilon` at a larger ``mu``); by default :func:`gdp_epsilon` at ``mu``.
    """
    m = check_nonnegative("mu", mu)
    d = check_in_interval("delta", delta, 0.0, 1.0, lo_open=True)
    md = MP.mpf(d)
    x = gdp_epsilon(m, d) if start is None else check_nonnegative("start", start)
    step = max(abs(x) * 1e-13, 1e-300)
    x = max(0.0, x - 2 * step)  # an upper bound sits about one step above the float root: start below it
    while x > 0:
        if delta_interval(m, x)[0] > md * (1 + MP_REL_ERROR):  # the LOWER end (far tails: [0, 2 Mills] is wide)
            return x  # delta(x) > delta certified: the true epsilon is above x
        step *= 2
        x = max(0.0, x - step)
    return 0.0


def gdp_mu_for(eps: float, delta: float) -> float:
    r"""Largest certified :math:`\mu` such that :math:`\mu`-GDP implies :math:`(\varepsilon,\delta)`-DP.

    This is the analytic Gaussian mechanism calibration [BW18, Alg. 1]: a
    Gaussian mechanism with L2 sensitivity :math:`\Delta` and
    :math:`\sigma = \Delta/\mu` is :math:`(\varepsilon,\delta)`-DP. The value is
    rounded **down** (more noise), then certified in 50-digit arithmetic.

    Examples
    --------
    >>> round(1.0 / gdp_mu_for(1.0, 1e-5), 7)   # sigma for Delta=1 [BW18]
    3.7306316
    """
    e = check_nonnegative("eps", eps)
    d = check_in_interval("delta", delta, 0.0, 1.0, lo_open=True, hi_open=True)
    me, md = MP.mpf(e), MP.mpf(d)

    def g(mu: float) -> float:  # increasing in mu
        return max(_float_log_delta(mu, e), -1e300) - math.log(d)

    lo, hi = 0.5, 1.0
    while g(hi) < 0:
        lo, hi = hi, hi * 2
    while g(lo) > 0:
        lo, hi = lo / 2, lo
        if hi < 1e-12:  # the root is below hi: delta_mu(eps) > delta for every usable mu
            raise InvalidArgument(f"(eps={eps!r}, delta={delta!r}) needs mu < 1e-12: no usable Gaussian calibration.")
    x = optimize.brentq(g, lo, hi, xtol=1e-15, rtol=1e-15, maxiter=300)
    x = down(MP.mpf(x))
    rel = 1e-15
    while _mp_delta(MP.mpf(x), me) > md:  # certify: move inward (doubling steps) until the bound holds
        x = math.nextafter(x * (1 - rel), 0.0)
        rel = min(2 * rel, 0.5)
    return x


def gaussian_sigma(eps: float, delta: float, sensitivity: float = 1.0) -> float:
    r"""Analytic Gaussian noise scale for :math:`(\varepsilon,\delta)`-DP, rounded up [BW18].

    Examples
    --------
    >>> round(gaussian_sigma(1.0, 1e-5), 7)   # [BW18]; issue Step 1 golden value
    3.7306316
    """
    s = check_positive("sensitivity", sensitivity)
    return up_exact(Fraction(s) / Fraction(gdp_mu_for(eps, delta)))
