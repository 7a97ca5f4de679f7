r"""Binomial-Tulap tail sums in log space, for the DP UMP binomial test (:mod:`mechanisms.binomial_ump`).

Every probability of the DP test of a binomial proportion [AS18] is a *tail sum*

.. math:: T_s(z;\theta)=\sum_{x=0}^{n}\binom{n}{x}\theta^x(1-\theta)^{n-x}\,F_N\big(s\,(x-z)\big),
          \qquad s\in\{+1,-1\},

with :math:`F_N` the Tulap CDF: the right p-value is :math:`T_{+1}(z;\theta_0)=P(X+N\ge z)`,
the left one :math:`T_{-1}(z;\theta_0)=P(X+N\le z)`, the size and power of the UMP test
are :math:`T_{\pm1}(m;\theta)`. This module evaluates :math:`\log T_s` accurately for
``n`` up to ``10**8`` and for tails far below the smallest double.

Algorithm
---------
1. **Binomial log-pmf** by Loader's saddle-point form [Loa00] (the algorithm of R's
   ``dbinom``):

   .. math:: \log p(x)=\delta(n)-\delta(x)-\delta(n-x)-D(x,n\theta)-D(n-x,n(1-\theta))
             +\tfrac12\log\frac{n}{2\pi x(n-x)},

   with :math:`\delta(k)=\log k!-(k+\frac12)\log k+k-\frac12\log2\pi` (Stirling
   error: a 40-digit table for ``k <= 15``, the asymptotic series above) and
   :math:`D(x,M)=x\log(x/M)+M-x` (a series in :math:`v=(x-M)/(x+M)` when
   :math:`|x-M|<0.1(x+M)`, where the closed form cancels; there :math:`M=n\theta` is
   used as an exact double-double, since its rounding would otherwise dominate). The
   absolute error of :math:`\log p(x)` is about ``1e-13 + 8 u |log p(x)|``
   (``u = 2**-53``; the second term is the rounding of the log itself) at ``n`` up to
   ``10**8``, whereas ``scipy.stats.binom.logpmf`` (``gammaln`` differences) loses
   ``~1e-9`` at ``n = 10**6``. A table around the mode (about 40 sd each side) is cached
   per ``(n, theta)``.
2. **Small supports** (``n < 4096``): the sum over all ``n + 1`` terms, as a log-sum-exp.
3. **Summand-centred window** (larger ``n``). :math:`g(x)=\log p(x)+\log F_N(s(x-z))` is
   concave in the integer ``x`` where it is finite: the binomial pmf is log-concave, and
   on an integer-spaced grid of arguments the Tulap log-CDF is linear in the
   untruncated lower tail (slope :math:`\varepsilon`) and concave across 0 and above
   (its increments never exceed :math:`\varepsilon` there, as :math:`F(y+1)\le e^\varepsilon F(y)`);
   with truncation :math:`\log(F_0-q/2)` is concave as well (subtracting a constant
   keeps a log-concave CDF log-concave). So the maximiser :math:`x^*` is found by
   nested grids (the maximum lies between the neighbours of the grid maximum), and the
   sum is a log-sum-exp over the contiguous window where :math:`g\ge g(x^*)-K`,
   :math:`K=40+\log(n+1)`; every omitted term is below :math:`e^{-K}` times the largest,
   so the omitted mass is below :math:`e^{-40}` of the total. The window follows the
   dominant terms wherever they are (near the binomial mode, or deep in a binomial tail
   when :math:`z` is far out), which a mode-centred window would miss.

Arguments ``x`` are exact integers (``n <= 10**8 < 2**53``), so ``x - z`` carries one
rounding, and the Tulap log-CDF is the closed form of :class:`mechanisms.cnd.Tulap`
(no cancellation in either tail).

The module also holds the internal p-value combinations (one- and two-sided) and the
bracketing root-finder used to calibrate the test thresholds in
:mod:`mechanisms.binomial_ump`.

References
----------
[AS18]  J. Awan, A. Slavković, "Differentially Private Uniformly Most Powerful Tests
        for Binomial Data", NeurIPS 2018 (arXiv:1805.09236).
[Loa00] C. Loader, "Fast and Accurate Computation of Binomial Probabilities", 2000
        (the saddle-point algorithm behind R's ``dbinom``).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import Literal

import mpmath
import numpy as np
from numpy.typing import NDArray
from scipy import optimize

from semidp.accountant.core.errors import InvalidArgument
from semidp.mechanisms.cnd import Tulap
from semidp.mechanisms.monotone_roots import polish_root

__all__ = ["MAX_N", "Alternative", "binom_logpmf", "log_tail"]

FloatArray = NDArray[np.float64]

Alternative = Literal["greater", "less", "two-sided"]
"""``"greater"``: H1 theta > theta0; ``"less"``: H1 theta < theta0; ``"two-sided"``: H1 theta != theta0."""

#: Largest number of trials accepted (exact integer arithmetic in binary64, bounded work).
MAX_N = 10**8
#: Evaluate window sums in chunks of this many terms (bounded memory for very wide windows).
_CHUNK = 1 << 20
#: Half-width cap of the cached log-pmf table around the mode.
_TABLE_HALF = 1 << 18
#: Supports up to this size are summed directly, without the window search.
_SMALL = 4096
#: Log-p values below log(alpha) - CLIP_NATS are clipped in root-finding (keeps Brent finite).
CLIP_NATS = 1000.0
#: Extra nats below the largest summand that a window keeps, beyond log(n + 1).
_KEEP_NATS = 40.0

_LOG_2PI = math.log(2.0 * math.pi)
_S0, _S1, _S2, _S3, _S4 = 1.0 / 12, 1.0 / 360, 1.0 / 1260, 1.0 / 1680, 1.0 / 1188


@functools.cache
def _stirlerr_table() -> FloatArray:
    r""":math:`\delta(k)` for ``k = 0..15`` at 40 digits (``delta(0) = 0`` by convention, unused)."""
    ctx = mpmath.MPContext()
    ctx.dps = 40
    vals = [0.0]
    for k in range(1, 16):
        kk = ctx.mpf(k)
        v = ctx.loggamma(kk + 1) - (kk + ctx.mpf(1) / 2) * ctx.log(kk) + kk - ctx.log(2 * ctx.pi) / 2
        vals.append(float(v))
    return np.array(vals)


def _stirlerr(k: FloatArray) -> FloatArray:
    r"""Stirling error :math:`\delta(k)` for integer-valued ``k >= 0`` [Loa00]."""
    out = np.empty(k.shape, dtype=np.float64)
    small = k <= 15.0
    if np.any(small):
        out[small] = _stirlerr_table()[k[small].astype(np.int64)]
    big = ~small
    if np.any(big):
        kk = k[big]
        k2 = kk * kk
        out[big] = np.where(
            kk > 500.0,
            (_S0 - _S1 / k2) / kk,
            np.where(
                kk > 80.0,
                (_S0 - (_S1 - _S2 / k2) / k2) / kk,
                np.where(
                    kk > 35.0,
                    (_S0 - (_S1 - (_S2 - _S3 / k2) / k2) / k2) / kk,
                    (_S0 - (_S1 - (_S2 - (_S3 - _S4 / k2) / k2) / k2) / k2) / kk,
                ),
            ),
        )
    return out


def _two_prod(a: float, b: float) -> tuple[float, float]:
    """``a * b = p + e`` exactly (Dekker's product with Veltkamp splitting; no FMA needed)."""
    p = a * b

    def split(v: float) -> tuple[float, float]:
        c = 134217729.0 * v  # 2**27 + 1
        hi = c - (c - v)
        return hi, v - hi

    ah, al = split(a)
    bh, bl = split(b)
    return p, ((ah * bh - p) + ah * bl + al * bh) + al * bl


def _bd0(x: FloatArray, m_hi: float, m_lo: float) -> FloatArray:
    r"""Deviance term :math:`D(x,M)=x\log(x/M)+M-x` for ``x > 0``, ``M = m_hi + m_lo > 0``.

    ``M`` is a double-double (``n * theta`` exactly) because near the mode ``D`` is
    :math:`\approx(x-M)^2/2M` and the rounding of ``M`` itself would dominate its error.
    """
    m = m_hi + m_lo
    out = x * np.log(x / m) + m - x
    near = np.abs(x - m) < 0.1 * (x + m)
    if np.any(near):
        xn = x[near]
        d = (xn - m_hi) - m_lo  # xn - m_hi is exact (Sterbenz) in this branch
        v = d / (xn + m)
        s = d * v
        ej = 2.0 * xn * v
        v2 = v * v
        for j in range(1, 40):  # |v| < 0.1: each term is < 1/100 of the previous
            ej = ej * v2
            s_new = s + ej / (2 * j + 1)
            if np.array_equal(s_new, s):
                break
            s = s_new
        out[near] = s
    return out


def binom_logpmf(x: NDArray[np.float64], n: int, theta: float) -> FloatArray:
    r"""``log P(X = x)`` for :math:`X\sim\mathrm{Binomial}(n,\theta)` at integer-valued ``x`` in ``[0, n]``.

    Loader's saddle-point algorithm [Loa00] (see the module docstring); ``theta`` in
    ``[0, 1]``. No argument checking (internal); ``x`` outside ``[0, n]`` gives ``-inf``.
    """
    x = np.asarray(x, dtype=np.float64)
    out = np.full(x.shape, -math.inf)
    inside = (x >= 0.0) & (x <= n)
    if theta == 0.0:
        out[inside & (x == 0.0)] = 0.0
        return out
    if theta == 1.0:
        out[inside & (x == n)] = 0.0
        return out
    out[inside & (x == 0.0)] = n * math.log1p(-theta)
    out[inside & (x == n)] = n * math.log(theta)
    mid = inside & (x > 0.0) & (x < n)
    if np.any(mid):
        xm = x[mid]
        nf = float(n)
        ym = nf - xm
        q_hi = 1.0 - theta
        q_lo = (1.0 - q_hi) - theta  # 1 - theta = q_hi + q_lo exactly (Sterbenz twice)
        m1, m1_lo = _two_prod(nf, theta)
        m2, m2_lo = _two_prod(nf, q_hi)
        lc = (
            _stirlerr(np.array([nf]))[0]
            - _stirlerr(xm)
            - _stirlerr(ym)
            - _bd0(xm, m1, m1_lo)
            - _bd0(ym, m2, m2_lo + nf * q_lo)
        )
        out[mid] = lc + 0.5 * (math.log(nf) - _LOG_2PI - np.log(xm) - np.log(ym))
    return out


@functools.lru_cache(maxsize=32)
def _table(n: int, theta: float) -> tuple[int, FloatArray]:
    """Cached ``(lo, log p(lo..hi))`` around the mode, ``~40`` sd each side (read-only)."""
    sd = math.sqrt(n * theta * (1.0 - theta))
    mode = min(n, math.floor((n + 1) * theta))
    w = min(math.ceil(40.0 * sd) + 64, _TABLE_HALF)
    lo, hi = max(0, mode - w), min(n, mode + w)
    arr = binom_logpmf(np.arange(lo, hi + 1, dtype=np.float64), n, theta)
    arr.setflags(write=False)
    return lo, arr


def _logpmf_at(xs: FloatArray, n: int, theta: float) -> FloatArray:
    lo, arr = _table(n, theta)
    idx = xs - lo
    inside = (idx >= 0.0) & (idx < len(arr))
    if np.all(inside):
        return arr[idx.astype(np.int64)]
    out = np.empty(xs.shape, dtype=np.float64)
    out[inside] = arr[idx[inside].astype(np.int64)]
    out[~inside] = binom_logpmf(xs[~inside], n, theta)
    return out


def _summand(xs: FloatArray, n: int, theta: float, noise: Tulap, z: float, sign: float) -> FloatArray:
    with np.errstate(divide="ignore"):
        lf = np.asarray(noise.logcdf(sign * (xs - z)), dtype=np.float64)
    return _logpmf_at(xs, n, theta) + lf


def _logsumexp_shifted(a: FloatArray, top: float) -> float:
    return float(np.sum(np.exp(a - top)))


def log_tail(n: int, theta: float, noise: Tulap, z: float, sign: float) -> float:
    r""":math:`\log\sum_{x=0}^{n}p_\theta(x)F_N(\mathrm{sign}\,(x-z))` (``-inf`` if the sum is 0).

    ``sign = +1``: :math:`\log P_\theta(X+N\ge z)`; ``sign = -1``: :math:`\log P_\theta(X+N\le z)`.
    Internal: arguments are trusted (``n`` in ``[1, MAX_N]``, ``theta`` in ``[0, 1]``,
    finite ``z``, ``sign`` in ``{+1, -1}``). See the module docstring for the algorithm
    and its error bound.
    """
    if theta == 0.0 or theta == 1.0:
        x0 = 0.0 if theta == 0.0 else float(n)
        with np.errstate(divide="ignore"):
            return float(noise.logcdf(sign * (x0 - z)))
    if n < _SMALL:  # small support: sum it all (no window search needed)
        xs = np.arange(n + 1, dtype=np.float64)
        vals = _summand(xs, n, theta, noise, z, sign)
        top0 = float(np.max(vals))
        if top0 == -math.inf:
            return -math.inf
        return top0 + math.log(_logsumexp_shifted(vals, top0))
    lo, hi = 0, n
    edge = noise.support_edge
    if math.isfinite(edge):
        # F(sign (x - z)) > 0 iff sign (x - z) > -edge; trim the support to that set
        if sign > 0:
            lo = max(lo, math.floor(z - edge))
        else:
            hi = min(hi, math.ceil(z + edge))
        if lo > n or hi < 0:
            return -math.inf
        while lo <= hi and float(_summand(np.array([float(lo)]), n, theta, noise, z, sign)[0]) == -math.inf:
            lo += 1
        while hi >= lo and float(_summand(np.array([float(hi)]), n, theta, noise, z, sign)[0]) == -math.inf:
            hi -= 1
        if lo > hi:
            return -math.inf
    # 1. maximiser of the concave summand by nested grids
    a, b = lo, hi
    while b - a > 256:
        grid = np.unique(np.linspace(a, b, 129).round()).astype(np.float64)
        vals = _summand(grid, n, theta, noise, z, sign)
        i = int(np.argmax(vals))
        a = int(grid[max(i - 1, 0)])
        b = int(grid[min(i + 1, len(grid) - 1)])
    xs = np.arange(a, b + 1, dtype=np.float64)
    vals = _summand(xs, n, theta, noise, z, sign)
    i = int(np.argmax(vals))
    xstar, top = int(xs[i]), float(vals[i])
    if top == -math.inf:  # pragma: no cover - lo/hi were trimmed to finite summands
        return -math.inf
    # 2. window where the summand is >= top - K (concave: probe at doubling distances)
    keep = top - (_KEEP_NATS + math.log(n + 1.0))
    steps = np.ldexp(1.0, np.arange(0, 31))
    left = xstar - steps
    left = left[left >= lo]
    right = xstar + steps
    right = right[right <= hi]
    wa, wb = lo, hi
    if left.size:
        lv = _summand(left, n, theta, noise, z, sign)
        below = np.nonzero(lv < keep)[0]
        if below.size:
            wa = int(left[below[0]])
    if right.size:
        rv = _summand(right, n, theta, noise, z, sign)
        below = np.nonzero(rv < keep)[0]
        if below.size:
            wb = int(right[below[0]])
    # 3. log-sum-exp over the window, in chunks
    total = 0.0
    start = wa
    while start <= wb:
        stop = min(wb, start + _CHUNK - 1)
        chunk = _summand(np.arange(start, stop + 1, dtype=np.float64), n, theta, noise, z, sign)
        total += _logsumexp_shifted(chunk, top)
        start = stop + 1
    return top + math.log(total)


# ======================================================================================
# p-value helpers and root finding (used by mechanisms.binomial_ump)
# ======================================================================================


def log_two_sided_pvalue(n: int, theta: float, noise: Tulap, z: float, centre: float) -> float:
    """log of the two-sided p-value of binomialDP [AS20]: both tails at distance ``|z - centre|``."""
    t = abs(z - centre)
    up = log_tail(n, theta, noise, centre + t, 1.0)
    dn = log_tail(n, theta, noise, centre - t, -1.0)
    return min(0.0, float(np.logaddexp(up, dn)))


def log_pvalue(n: int, theta: float, noise: Tulap, z: float, alternative: Alternative) -> float:
    """log p-value of the released ``z`` at ``theta`` for the alternative [AS18, Thm. 3.2], [AS20]."""
    if alternative == "two-sided":
        return log_two_sided_pvalue(n, theta, noise, z, n * theta)
    return min(0.0, log_tail(n, theta, noise, z, 1.0 if alternative == "greater" else -1.0))


def monotone_root(
    fn: Callable[[float], float], z0: float, scale: float, increasing: bool, floor: float = -math.inf
) -> float:
    """Root of a monotone ``fn`` (finite near the root): bracket from ``z0`` in doubling steps
    of ``scale`` (never below ``floor``), Brent on the clipped function, then polish to the
    best double."""

    def clipped(v: float) -> float:
        return max(fn(v), -CLIP_NATS)

    f0 = clipped(z0)
    if f0 == 0.0:
        return z0
    # decreasing fn: positive -> root to the right; increasing fn: positive -> root to the left
    direction = 1.0 if (f0 > 0.0) != increasing else -1.0
    prev, step = z0, scale
    while True:
        cur = max(z0 + direction * step, floor)
        fc = clipped(cur)
        if fc == 0.0:
            return cur
        if (fc > 0.0) != (f0 > 0.0):
            break
        if cur == floor:  # pragma: no cover - callers guarantee a sign change above floor
            raise InvalidArgument("internal: the level equation has no root above its floor.")
        prev, step = cur, step * 2.0
        if step > 1e15:  # pragma: no cover - p-values tend to 0 and 1 at the ends
            raise InvalidArgument("internal: the level equation could not be bracketed.")
    lo, hi = min(prev, cur), max(prev, cur)
    root = float(optimize.brentq(clipped, lo, hi, xtol=1e-13, rtol=4 * 2.0**-52, maxiter=500))
    return polish_root(fn, root)
