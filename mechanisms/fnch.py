r"""Fisher's noncentral hypergeometric distribution, exactly and in log space.

Given the margins of a :math:`2\times2` table (rows :math:`n_{1\cdot}, n_{2\cdot}`,
first column :math:`n_{\cdot1}`), the cell :math:`X_{11}` of a multinomial table
with odds ratio :math:`\theta` is Fisher noncentral hypergeometric [CA24, Sec. 5.3]
(``docs/reference/semi-dp.md`` Sec. 6, "Conditional law"):

.. math:: p_\theta(x)=\frac{\binom{n_{1\cdot}}{x}\binom{n_{2\cdot}}{n_{\cdot1}-x}\theta^x}
          {\sum_{u=L}^{U}\binom{n_{1\cdot}}{u}\binom{n_{2\cdot}}{n_{\cdot1}-u}\theta^u},
          \qquad L=\max(0,n_{\cdot1}-n_{2\cdot}),\ U=\min(n_{1\cdot},n_{\cdot1}).

It is the null distribution of the Semi-DP UMPU test (:mod:`mechanisms.umpu`).

Algorithm (mode-centred recursion)
----------------------------------
The ratio of consecutive probabilities is a rational function of ``x``:

.. math:: \frac{p(x+1)}{p(x)} = \frac{(n_{1\cdot}-x)(n_{\cdot1}-x)}
          {(x+1)(n_{2\cdot}-n_{\cdot1}+x+1)}\,\theta =: \rho(x)\,\theta ,

strictly decreasing in ``x``, so the mode is ``L + #{x : rho(x) theta >= 1}``.
Unnormalised log-probabilities relative to the mode are prefix sums of
``log rho(x)`` outward from the mode plus ``(x - mode) log theta``, and the
normaliser is a log-sum-exp. Error control (the reason this is accurate to
``~1e-13`` where ``scipy.stats.nchypergeom_fisher`` loses ``~1e-9`` and underflows
tails):

* ``rho(x)`` is a ratio of two products of integers; each product is exact in
  binary64 while it is below ``2**53`` (always for ``n <= 9e7``), so ``rho`` carries
  one rounding. ``log rho`` is taken as ``log1p((num - den)/den)`` when
  ``rho`` is in ``[1/2, 2]`` (near the mode, where the terms are small and many) and
  ``log(num/den)`` otherwise; either way the absolute error of a term is
  ``<= ~2u`` (``u = 2**-53``) and ``~u |log rho|`` near the mode;
* the prefix sums are **compensated**: the rounding error of every step of
  :func:`numpy.cumsum` is recovered exactly with Knuth's TwoSum (vectorised, since
  the rounded partial sums are known) and added back; so the error of
  ``log p(x)`` is about ``|x - mode| * 2u`` from the terms plus one rounding,
  instead of ``|x - mode| * u * |log p(x)|``;
* the ``theta`` term is one product ``(x - mode) * log(theta)``;
* nothing is exponentiated before normalisation, so tails far below the
  smallest double (``1e-308``) keep a finite log-probability.

Measured against a 50-digit mpmath reference (``benchmarks/umpu.py``): relative
error ``<= ~1e-13`` for every probability that is representable, at ``n`` up to
``10**6`` (``benchmarks/umpu.py`` times it).

References
----------
[CA24]  Cho & Awan, "Formal Privacy Guarantees with Invariant Statistics",
        arXiv:2410.17468v1, Sec. 5.3.
[Fog08] A. Fog, "Calculation methods for Wallenius' noncentral hypergeometric
        distribution" / "Sampling methods for Wallenius' and Fisher's noncentral
        hypergeometric distributions", Comm. Stat. Simul. Comput. 37 (2008)
        (the mode-centred recursion for Fisher's distribution).
"""

from __future__ import annotations

import bisect
import functools
import math
import numbers
from dataclasses import dataclass, field

import mpmath
import numpy as np
from numpy.typing import ArrayLike, NDArray

from semidp.accountant.core.arguments import check_positive
from semidp.accountant.core.errors import InvalidArgument

__all__ = ["FisherNoncentralHypergeometric", "logpmf_reference"]

#: Margins are limited so that the integer products in the ratio stay exact in binary64
#: (``n1 * c1 < 2**53``) and the support fits in memory comfortably.
MAX_TOTAL = 10**8


def _check_count(name: str, value: object) -> int:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        raise InvalidArgument(f"{name}={value!r} must be a non-negative integer.")
    v = int(value)
    if v < 0:
        raise InvalidArgument(f"{name}={value!r} must be a non-negative integer.")
    return v


def _count_leading_ge(dec: NDArray[np.float64], v: float) -> int:
    """Number of leading entries ``>= v`` of a non-increasing array (binary search)."""
    return bisect.bisect_left(range(len(dec)), True, key=lambda i: bool(dec[i] < v))


@functools.lru_cache(maxsize=256)
def _split_log(theta: float) -> tuple[float, float]:
    """``log(theta) = hi + lo`` to ~100 bits, ``hi`` with at most 23 significant bits."""
    ctx = mpmath.MPContext()
    ctx.prec = 120
    lt = ctx.log(ctx.mpf(theta))
    m, e = math.frexp(float(lt))
    hi = math.ldexp(round(math.ldexp(m, 23)), e - 23)
    return hi, float(lt - hi)


def _two_sum_cumsum(t: NDArray[np.float64], s: NDArray[np.float64], c: NDArray[np.float64]) -> None:
    """Prefix sums of ``t`` as an unevaluated pair: ``sum(t[:i+1]) ~= s[i] + c[i]``.

    ``s = cumsum(t)`` is computed in floats (sequentially); the exact error of
    step ``i``, ``(s[i-1] + t[i]) - s[i]``, is recovered with TwoSum [Knuth, TAOCP 2,
    4.2.2] -- vectorised, because the rounded partial sums are known -- and ``c``
    is the prefix sum of those errors. The pair represents the exact prefix sum up
    to the (tiny) rounding of ``c``; it is kept unevaluated so that a large
    opposite term can be added to ``s`` first. ``s`` and ``c`` are output arrays
    (views allowed) of the same length as ``t``.
    """
    n = t.shape[0]
    if n == 0:
        return
    np.cumsum(t, out=s)
    c[0] = 0.0
    if n == 1:
        return
    a = s[:-1]
    sn = s[1:]
    bb = np.subtract(sn, a)  # TwoSum(a, t): bb = s - a
    tmp = np.subtract(sn, bb)
    np.subtract(a, tmp, out=tmp)  # a - (s - bb)
    np.subtract(t[1:], bb, out=bb)  # t - bb
    np.add(tmp, bb, out=tmp)  # exact error of step i
    np.cumsum(tmp, out=c[1:])


@dataclass(frozen=True, slots=True)
class FisherNoncentralHypergeometric:
    r"""The law of :math:`X_{11}` given the margins of a :math:`2\times2` table.

    Parameters are the margins, in the notation of the reference: first-row total
    ``row1`` (:math:`n_{1\cdot}`), second-row total ``row2`` (:math:`n_{2\cdot}`),
    first-column total ``col1`` (:math:`n_{\cdot1}`), and the odds ratio ``theta``.
    ``scipy.stats.nchypergeom_fisher(M=row1+row2, n=row1, N=col1, odds=theta)`` is
    the same distribution.

    All probabilities come from one exact log-space table over the support
    (:meth:`log_pmf_table`, see the module docstring for the error analysis).

    Examples
    --------
    >>> d = FisherNoncentralHypergeometric(5, 5, 4, 1.0)          # T-U1 null
    >>> d.support()
    (0, 4)
    >>> [round(float(p) * 42, 10) for p in d.pmf(np.arange(5))]
    [1.0, 10.0, 20.0, 10.0, 1.0]
    >>> big = FisherNoncentralHypergeometric(500_000, 500_000, 500_000, 1.0)
    >>> float(big.logsf(260_000)) < -700                         # far tail, no underflow
    True
    """

    row1: int
    """First-row total :math:`n_{1\\cdot}` (``>= 0``)."""
    row2: int
    """Second-row total :math:`n_{2\\cdot}` (``>= 0``)."""
    col1: int
    """First-column total :math:`n_{\\cdot1}`, ``0 <= col1 <= row1 + row2``."""
    theta: float
    """Odds ratio, finite and ``> 0``."""
    _table: tuple[int, NDArray[np.float64]] | None = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        r1 = _check_count("row1", self.row1)
        r2 = _check_count("row2", self.row2)
        c1 = _check_count("col1", self.col1)
        th = check_positive("theta", self.theta)
        if c1 > r1 + r2:
            raise InvalidArgument(
                f"col1={c1} exceeds the table total row1 + row2 = {r1 + r2}; the margins of a 2x2 table must add up."
            )
        if r1 + r2 > MAX_TOTAL:
            raise InvalidArgument(
                f"table total {r1 + r2} exceeds the supported {MAX_TOTAL} (integer products "
                "in the recursion must stay exact in binary64)."
            )
        object.__setattr__(self, "row1", r1)
        object.__setattr__(self, "row2", r2)
        object.__setattr__(self, "col1", c1)
        object.__setattr__(self, "theta", th)

    # ------------------------------------------------------------------------------
    # the table
    # ------------------------------------------------------------------------------

    def support(self) -> tuple[int, int]:
        """``(L, U)``: the smallest and largest possible value of :math:`X_{11}`."""
        return max(0, self.col1 - self.row2), min(self.row1, self.col1)

    def mode(self) -> int:
        r"""A mode: ``L + #{x in [L, U) : rho(x) * theta >= 1}`` (ratios decrease in ``x``)."""
        lo, hi = self.support()
        if lo == hi:
            return lo
        x = np.arange(lo, hi, dtype=np.float64)
        num = (self.row1 - x) * (self.col1 - x)
        den = (x + 1.0) * (self.row2 - self.col1 + x + 1.0)
        return lo + int(np.count_nonzero(num * self.theta >= den))

    def log_pmf_table(self) -> tuple[int, NDArray[np.float64]]:
        r"""``(L, logp)`` with ``logp[i] = log p_theta(L + i)`` for the whole support.

        Computed once per instance (cached). Entries are finite even where
        ``exp`` underflows. See the module docstring for the algorithm and its
        error analysis.
        """
        if self._table is not None:
            return self._table
        lo, hi = self.support()
        if lo == hi:
            out = (lo, np.zeros(1))
            object.__setattr__(self, "_table", out)
            return out
        # ratio p(x+1)/p(x) for x = L..U-1, in few passes (in-place where possible)
        x = np.arange(lo, hi, dtype=np.float64)
        num = np.subtract(self.row1, x)
        den = np.subtract(self.col1, x)
        num *= den  # (n1 - x)(c1 - x): exact integer (< 2**53)
        np.add(x, 1.0, out=den)
        x += self.row2 - self.col1 + 1.0
        den *= x  # (x + 1)(n2 - c1 + x + 1): exact
        rho = np.divide(num, den, out=x)  # one rounding; strictly decreasing
        # mode = L + #{x : rho(x) theta >= 1} (binary search: rho is decreasing)
        mode = lo + _count_leading_ge(rho, 1.0 / self.theta)
        # near rho = 1 (a contiguous range) log1p of the exact difference is used: the
        # term error drops from ~u/2 to ~u/2 * |rho - 1|
        i0 = _count_leading_ge(rho, 2.0)
        i1 = _count_leading_ge(rho, 0.5)
        with np.errstate(divide="ignore"):
            lr = np.log(rho, out=rho)
        if i1 > i0:
            lr[i0:i1] = np.log1p((num[i0:i1] - den[i0:i1]) / den[i0:i1])
        k = mode - lo
        # relative log-probabilities as an unevaluated sum  big + small  per entry
        big = np.empty(hi - lo + 1, dtype=np.float64)
        small = np.empty(hi - lo + 1, dtype=np.float64)
        big[k] = small[k] = 0.0
        # upward: log p(mode + j) - log p(mode) = sum_{y=mode}^{mode+j-1} log rho(y)
        _two_sum_cumsum(lr[k:], big[k + 1 :], small[k + 1 :])
        # downward: log p(mode - j) - log p(mode) = -sum_{y=mode-j}^{mode-1} log rho(y)
        neg = np.negative(lr[:k][::-1])
        _two_sum_cumsum(neg, big[:k][::-1], small[:k][::-1])
        if self.theta != 1.0:
            # + (x - mode) * log(theta), with log(theta) split as hi + lo: hi has <= 23
            # significant bits, so (x - mode) * hi is exact (|x - mode| < 2**27). It is
            # added to the big part *before* rounding the pair: the sum of log rho and
            # the theta term can be much smaller than either.
            th_hi, th_lo = _split_log(self.theta)
            d = np.arange(lo - mode, hi - mode + 1, dtype=np.float64)
            big += d * th_hi  # two exact floats: one rounding of the (smaller) result
            small += d * th_lo
        logp = big
        logp += small
        # normaliser: the mode term (0) is the largest; pairwise summation
        z = float(np.sum(np.exp(logp)))
        logp -= math.log(z)
        logp.flags.writeable = False
        out = (lo, logp)
        object.__setattr__(self, "_table", out)
        return out

    # ------------------------------------------------------------------------------
    # scipy-like accessors
    # ------------------------------------------------------------------------------

    @staticmethod
    def _lookup(x: ArrayLike, fill: float) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        xa = np.asarray(x)
        if xa.dtype.kind not in "iuf":
            raise InvalidArgument(f"x={x!r} must be numeric.")
        xf = xa.astype(np.float64)
        if np.any(np.isnan(xf)):
            raise InvalidArgument(f"x={x!r} contains NaN.")
        return xf, np.full(xf.shape, fill)

    def logpmf(self, x: ArrayLike) -> NDArray[np.float64]:
        """``log p_theta(x)``; ``-inf`` off the support or at non-integers."""
        lo, logp = self.log_pmf_table()
        xf, out = self._lookup(x, -math.inf)
        ok = (xf == np.floor(xf)) & (xf >= lo) & (xf <= lo + len(logp) - 1)
        out[ok] = logp[(xf[ok] - lo).astype(np.int64)]
        return out

    def pmf(self, x: ArrayLike) -> NDArray[np.float64]:
        """``p_theta(x)`` (``exp`` of :meth:`logpmf`; may underflow to 0 in far tails)."""
        return np.exp(self.logpmf(x))

    def _log_cum(self, upper: bool) -> NDArray[np.float64]:
        _, logp = self.log_pmf_table()
        if upper:
            return np.logaddexp.accumulate(logp[::-1])[::-1]
        return np.logaddexp.accumulate(logp)

    def logcdf(self, x: ArrayLike) -> NDArray[np.float64]:
        r"""``log P(X <= x)`` in log space (accurate far into the lower tail)."""
        lo, logp = self.log_pmf_table()
        xf, out = self._lookup(x, -math.inf)
        acc = self._log_cum(upper=False)
        k = np.floor(xf)
        out[k >= lo + len(logp) - 1] = 0.0
        mid = (k >= lo) & (k < lo + len(logp) - 1)
        out[mid] = acc[(k[mid] - lo).astype(np.int64)]
        return out

    def logsf(self, x: ArrayLike) -> NDArray[np.float64]:
        r"""``log P(X > x)`` in log space (accurate far into the upper tail)."""
        lo, logp = self.log_pmf_table()
        xf, out = self._lookup(x, 0.0)
        acc = self._log_cum(upper=True)
        k = np.floor(xf) + 1  # P(X > x) = P(X >= floor(x) + 1)
        out[k > lo + len(logp) - 1] = -math.inf
        mid = (k > lo) & (k <= lo + len(logp) - 1)
        out[mid] = acc[(k[mid] - lo).astype(np.int64)]
        return out

    def cdf(self, x: ArrayLike) -> NDArray[np.float64]:
        """``P(X <= x)``."""
        return np.exp(self.logcdf(x))

    def sf(self, x: ArrayLike) -> NDArray[np.float64]:
        """``P(X > x)``."""
        return np.exp(self.logsf(x))

    def mean(self) -> float:
        """``E[X]`` (from the table)."""
        lo, logp = self.log_pmf_table()
        return lo + float(np.dot(np.exp(logp), np.arange(len(logp), dtype=np.float64)))

    def sample(self, *, rng: np.random.Generator, size: int | None = None) -> int | NDArray[np.int64]:
        """Draw from the distribution by inverse transform on the table (research use)."""
        lo, logp = self.log_pmf_table()
        p = np.exp(logp)
        cum = np.cumsum(p)
        cum /= cum[-1]
        u = rng.random(size)
        idx = np.minimum(np.searchsorted(cum, u, side="right"), len(p) - 1)
        if size is None:
            return lo + int(idx)
        return (lo + idx).astype(np.int64)


def logpmf_reference(
    row1: int, row2: int, col1: int, theta: float | str, x: ArrayLike, *, dps: int = 50
) -> list[mpmath.mpf]:
    r"""Slow high-precision oracle: ``log p_theta(x)`` from the closed form in mpmath.

    Each term :math:`\log\binom{n_{1\cdot}}{x}+\log\binom{n_{2\cdot}}{n_{\cdot1}-x}+x\log\theta`
    is evaluated with ``loggamma`` at ``dps`` digits (independently of the float
    recursion). The normaliser is summed over the window around the mode where
    terms exceed ``10**-(dps + 10)`` times the largest; the window is grown until
    its edge terms are below that, so the omitted mass is below
    ``n * 10**-(dps+10)`` relative. For tests and benchmarks only (``O(window)``
    mpmath evaluations: about a second at ``n = 10**6``).

    Returns
    -------
    list of mpmath.mpf
        ``log p(x)`` per requested ``x`` (``-inf`` off the support).
    """
    ctx = mpmath.MPContext()
    ctx.dps = dps
    r1, r2, c1 = int(row1), int(row2), int(col1)
    lo, hi = max(0, c1 - r2), min(r1, c1)
    lt = ctx.log(ctx.mpf(theta))
    g1, g2 = ctx.loggamma(r1 + 1), ctx.loggamma(r2 + 1)

    def term(v: int) -> mpmath.mpf:
        return (
            g1
            - ctx.loggamma(v + 1)
            - ctx.loggamma(r1 - v + 1)
            + g2
            - ctx.loggamma(c1 - v + 1)
            - ctx.loggamma(r2 - c1 + v + 1)
            + v * lt
        )

    mode = FisherNoncentralHypergeometric(r1, r2, c1, float(theta)).mode() if lo < hi else lo
    tm = term(mode)
    cut = -(dps + 10) * ctx.log(10)
    total = ctx.mpf(1)
    for step in (1, -1):
        v = mode + step
        while lo <= v <= hi:
            d = term(v) - tm
            total += ctx.exp(d)
            if d < cut:
                break
            v += step
    logz = tm + ctx.log(total)
    out: list[mpmath.mpf] = []
    for xv in np.atleast_1d(np.asarray(x)).tolist():
        xi = int(xv)
        out.append(term(xi) - logz if (xi == xv and lo <= xi <= hi) else ctx.mpf("-inf"))
    return out
