r"""Exact privacy profile of the one-dimensional discrete Gaussian mechanism (Canonne, Kamath & Steinke 2020).

Adding :math:`X\sim N_{\mathbb Z}(0,\sigma^2)`, :math:`\Pr[X=x]\propto e^{-x^2/(2\sigma^2)}`, to
an integer-valued query with sensitivity :math:`\Delta\in\{1,2,\dots\}` gives
:math:`(\varepsilon,\delta)`-DP with

.. math:: \delta(\varepsilon)=\Pr\Big[X\ge\Big\lfloor\frac{\varepsilon\sigma^2}{\Delta}-\frac\Delta2\Big\rfloor+1\Big]
          -e^{\varepsilon}\Pr\Big[X\ge\Big\lfloor\frac{\varepsilon\sigma^2}{\Delta}+\frac\Delta2\Big\rfloor+1\Big]

[CKS20, Thm. 7] (``docs/reference/subspace-integer-postprocessing.md`` §3.5). For the
pair of inputs at distance :math:`\Delta` this is
:math:`\sum_y(\Pr[X=y]-e^\varepsilon\Pr[X+\Delta=y])_+`, i.e. the profile is attained
(tight), and it is continuous and decreasing in :math:`\varepsilon`.

The same mechanism is also :math:`\rho`-zCDP with :math:`\rho=\Delta^2/(2\sigma^2)`
[CKS20, Thm. 4] (the same Rényi bound as the continuous Gaussian). That is the right currency for *composition*; for a single release the
profile here is tighter than any zCDP-to-:math:`(\varepsilon,\delta)` conversion (e.g.
``accountant.guarantees.conversions.zcdp_to_delta``, [CKS20, Cor. 13]). Compared with the
continuous Gaussian profile with :math:`\mu=\Delta/\sigma` (``accountant.profiles.gaussian.gdp_delta``)
at the same :math:`\sigma` it is larger at some :math:`\varepsilon` (T-S2: 0.141351 vs
0.126937 at :math:`\sigma^2=1,\varepsilon=1`) and smaller at others -- the floors make it
kinked (:math:`\sigma^2=1`: 0.20398 vs 0.23842 at :math:`\varepsilon=0.5`; at
:math:`\delta=10^{-6}`, :math:`\varepsilon=4.4996` vs 4.8866) -- so neither bounds the other.

Numerics (house style R6): the floor arguments are exact rationals
(:class:`fractions.Fraction` from the float/int/decimal inputs), the tails are
summed in :data:`accountant.core.directed.MP` (50 digits) with a certified bound on
the truncated remainder and a blanket bound :data:`REL_ERROR` on rounding, and
the result is rounded **up** (:func:`discrete_gaussian_delta`) or down
(:func:`discrete_gaussian_delta_lower`).

References
----------
[CKS20] C. L. Canonne, G. Kamath, T. Steinke, "The Discrete Gaussian for Differential
Privacy", NeurIPS 2020, arXiv:2004.00010, Thm. 4 and Thm. 7 (numbering as in the
``docs/reference/subspace-integer-postprocessing.md`` §3.5).
"""

from __future__ import annotations

import math
from fractions import Fraction

import mpmath

from semidp.accountant.core.arguments import check_finite_real, check_in_interval, check_int
from semidp.accountant.core.directed import MP, down, exact, up
from semidp.accountant.core.errors import InvalidArgument, SearchTooLarge
from semidp.accountant.profiles.gaussian import gdp_epsilon

__all__ = [
    "MAX_TAIL_TERMS",
    "REL_ERROR",
    "discrete_gaussian_delta",
    "discrete_gaussian_delta_lower",
    "discrete_gaussian_epsilon",
]

#: Largest number of terms summed for one tail (about ``15 sigma``; ``sigma^2``
#: up to ~1.7e8); the cost is linear in the terms summed.
MAX_TAIL_TERMS = 200_000
#: Blanket relative error bound of every summed/multiplied quantity: each of
#: the <= 3 * MAX_TAIL_TERMS + 10 MP operations per quantity has relative error
#: <= 2**-168 < 3e-51 (exponentials get guard bits, :func:`_exp`), so the
#: accumulated error is < 2e-45, far below this.
REL_ERROR = MP.mpf(10) ** -40
#: Stop summing when the certified remainder bound is below this fraction of the partial sum.
_TRUNCATION = MP.mpf(10) ** -48

_Bounds = tuple[mpmath.mpf, mpmath.mpf]


def _exp(q: Fraction) -> mpmath.mpf:
    """``exp(q)`` for an exact rational, with guard bits so the error stays relative.

    Without them a huge argument (``n^2 / (2 sigma^2)`` far in a tail, or a large
    epsilon) would carry an absolute error of ``|q| 2**-prec`` into the exponent.
    """
    extra = max(0, abs(q.numerator).bit_length() - q.denominator.bit_length()) + 10
    with MP.extraprec(extra):
        v = MP.exp(MP.mpf(q.numerator) / q.denominator)
    return +v  # rounded once to the working precision


def _sigma2(sigma2: object) -> Fraction:
    if isinstance(sigma2, bool) or not isinstance(sigma2, (int, float, str, Fraction)):
        raise InvalidArgument(f"sigma2={sigma2!r} must be an int, float, Fraction or decimal string.")
    s2 = exact(sigma2)
    if not s2 > 0:
        raise InvalidArgument(f"sigma2={sigma2!r} must be > 0.")
    return s2


class _Tails:
    r"""Certified bounds on :math:`T(n)=\Pr[X\ge n]`, :math:`X\sim N_{\mathbb Z}(0,\sigma^2)`, memoised."""

    def __init__(self, s2: Fraction) -> None:
        self.s2_exact = s2
        self.memo: dict[int, _Bounds] = {}
        terms = 15 * math.sqrt(float(s2))  # S(1) needs about sigma * sqrt(2 ln 1e48) terms
        if terms > MAX_TAIL_TERMS:
            raise SearchTooLarge(
                "terms of a discrete Gaussian tail sum",
                terms,
                MAX_TAIL_TERMS,
                "sigma2 is too large for exact summation; use the zCDP guarantee "
                "rho = Delta^2 / (2 sigma2) or the continuous Gaussian profile.",
            )
        s1_lo, s1_hi = self._sum(1)
        self.z = (1 + 2 * s1_lo, 1 + 2 * s1_hi)  # Z = sum_x w(x) = 1 + 2 S(1) by symmetry

    def _sum(self, n: int) -> _Bounds:
        r"""Bounds on :math:`S(n)=\sum_{x\ge n}e^{-x^2/(2\sigma^2)}` for ``n >= 1``.

        Terms by the recurrence :math:`w(x+1)=w(x)r_x`, :math:`r_x=e^{-(2x+1)/(2\sigma^2)}`,
        :math:`r_{x+1}=r_xe^{-1/\sigma^2}`; since :math:`r_x` decreases,
        :math:`\sum_{j\ge1}w(x+j)\le w(x)\,r_x/(1-r_x)` bounds the remainder.
        """
        w = _exp(-n * n / (2 * self.s2_exact))
        r = _exp(-(2 * n + 1) / (2 * self.s2_exact))
        c = _exp(-1 / self.s2_exact)
        total = MP.mpf(0)
        for _ in range(MAX_TAIL_TERMS):
            total += w
            rem = w * r / (1 - r)
            if rem <= total * _TRUNCATION:
                return total * (1 - REL_ERROR), (total + rem) * (1 + REL_ERROR)
            w, r = w * r, r * c
        raise SearchTooLarge(
            "terms of a discrete Gaussian tail sum",
            MAX_TAIL_TERMS + 1,
            MAX_TAIL_TERMS,
            "sigma2 is too large for exact summation.",
        )

    def tail(self, n: int) -> _Bounds:
        """``(lo, hi)`` with ``lo <= Pr[X >= n] <= hi``."""
        if n not in self.memo:
            if n >= 1:
                s_lo, s_hi = self._sum(n)
                self.memo[n] = (s_lo / self.z[1] * (1 - REL_ERROR), s_hi / self.z[0] * (1 + REL_ERROR))
            else:  # Pr[X >= n] = 1 - Pr[X <= n - 1] = 1 - Pr[X >= 1 - n]
                lo, hi = self.tail(1 - n)
                self.memo[n] = (1 - hi * (1 + REL_ERROR), 1 - lo * (1 - REL_ERROR))
        return self.memo[n]

    def floor_index(self, eps: Fraction, sens: int) -> int:
        r""":math:`a=\lfloor\varepsilon\sigma^2/\Delta-\Delta/2\rfloor+1` in exact rationals."""
        return math.floor(eps * self.s2_exact / sens - Fraction(sens, 2)) + 1

    def delta(self, eps: Fraction, sens: int) -> _Bounds:
        """Bounds on the [CKS20, Thm. 7] profile at ``eps`` (given exactly)."""
        a = self.floor_index(eps, sens)
        (ta_lo, ta_hi), (tb_lo, tb_hi) = self.tail(a), self.tail(a + sens)  # b = a + Delta exactly
        e = _exp(eps)
        slack = (ta_hi + e * tb_hi) * REL_ERROR
        hi = ta_hi - e * (1 - REL_ERROR) * tb_lo + slack
        lo = ta_lo - e * (1 + REL_ERROR) * tb_hi - slack
        return max(lo, MP.mpf(0)), min(max(hi, MP.mpf(0)), MP.mpf(1))


def _tails(sigma2: object) -> _Tails:
    return _Tails(_sigma2(sigma2))


def discrete_gaussian_delta(epsilon: float, sigma2: float | str | Fraction, sensitivity: int = 1) -> float:
    r"""Certified upper bound on the exact :math:`\delta(\varepsilon)` of the discrete Gaussian [CKS20, Thm. 7].

    Parameters
    ----------
    epsilon:
        Any finite real :math:`\varepsilon` (its exact binary value is used in the floors).
    sigma2:
        :math:`\sigma^2>0` of :math:`N_{\mathbb Z}(0,\sigma^2)` (int, Fraction, decimal
        string such as ``"2.5"`` read exactly, or float taken at its binary value).
    sensitivity:
        Integer :math:`\Delta\ge1`: neighbouring query values differ by at most :math:`\Delta`.

    Returns
    -------
    float
        :math:`\delta` rounded up, in ``[0, 1]``.

    Raises
    ------
    InvalidArgument
        Bad parameters.
    SearchTooLarge
        ``sigma2`` so large that a tail needs more than :data:`MAX_TAIL_TERMS` terms.

    Notes
    -----
    Also :math:`\rho=\Delta^2/(2\sigma^2)`-zCDP [CKS20, Thm. 4]; see the module docstring.

    Examples
    --------
    >>> round(discrete_gaussian_delta(1.0, 1), 6), round(discrete_gaussian_delta(1.0, 4), 8)   # T-S2
    (0.141351, 0.00724878)
    """
    eps = check_finite_real("epsilon", epsilon)
    sens = check_int("sensitivity", sensitivity, minimum=1)
    return min(1.0, up(_tails(sigma2).delta(Fraction(eps), sens)[1]))


def discrete_gaussian_delta_lower(epsilon: float, sigma2: float | str | Fraction, sensitivity: int = 1) -> float:
    r"""Certified **lower** bound on :math:`\delta(\varepsilon)` [CKS20, Thm. 7], rounded down.

    The mechanism attains the profile (pair at distance :math:`\Delta`), so this
    refutes any claim of a smaller :math:`\delta`.
    """
    eps = check_finite_real("epsilon", epsilon)
    sens = check_int("sensitivity", sensitivity, minimum=1)
    return max(0.0, down(_tails(sigma2).delta(Fraction(eps), sens)[0]))


def discrete_gaussian_epsilon(delta: float, sigma2: float | str | Fraction, sensitivity: int = 1) -> float:
    r"""Smallest certified :math:`\varepsilon\ge0` with :math:`\delta(\varepsilon)\le\delta` [CKS20, Thm. 7].

    On each interval of :math:`\varepsilon` where the floor index
    :math:`a=\lfloor\varepsilon\sigma^2/\Delta-\Delta/2\rfloor+1` is constant the profile is
    :math:`T(a)-e^\varepsilon T(a+\Delta)`. The interval holding the root is found by
    galloping search and bisection on ``a`` (started from the continuous
    Gaussian's epsilon), then the root of the certified upper bound is solved
    in closed form, rounded **up**, and re-checked (moved up until
    :func:`discrete_gaussian_delta` at the returned value is ``<= delta``).
    ``0.0`` when :math:`\delta(0)\le\delta`.

    Examples
    --------
    >>> e = discrete_gaussian_epsilon(0.141351, 1)     # T-S2 read backwards
    >>> 0.99999 < e < 1.00001
    True
    """
    d = check_in_interval("delta", delta, 0.0, 1.0, lo_open=True)
    sens = check_int("sensitivity", sensitivity, minimum=1)
    tails = _tails(sigma2)
    target, s2 = MP.mpf(d), tails.s2_exact
    if tails.delta(Fraction(0), sens)[1] <= target:
        return 0.0

    def left(a: int) -> Fraction:  # smallest eps >= 0 whose floor index is a
        return max(Fraction(0), (a - 1 + Fraction(sens, 2)) * sens / s2)

    def above(a: int) -> bool:  # True for small a, False from the root's interval + 1 on
        return bool(tails.delta(left(a), sens)[1] > target)

    first = tails.floor_index(Fraction(0), sens)
    try:
        guess = max(first, tails.floor_index(Fraction(gdp_epsilon(sens / math.sqrt(s2), d)), sens))
    except (InvalidArgument, ValueError, OverflowError):
        guess = first
    lo, hi, step = guess, guess, 1
    if above(guess):
        while above(hi):
            lo, hi, step = hi, guess + step, 2 * step
    else:
        while lo > first and not above(lo):
            hi, lo, step = lo, max(first, guess - step), 2 * step
    while hi - lo > 1:  # invariant: above(lo), not above(hi)
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if above(mid) else (lo, mid)
    ta_hi, (tb_lo, tb_hi) = tails.tail(lo)[1], tails.tail(lo + sens)
    r = REL_ERROR  # solve  ta_hi (1 + r) - e^x ((1 - r) tb_lo - r tb_hi) = target  for x
    denom = (1 - r) * tb_lo - r * tb_hi
    num = ta_hi * (1 + r) - target
    x = float(left(hi)) if denom <= 0 or num <= 0 else up(MP.log(num / denom))
    x = min(max(x, float(left(lo))), up(MP.mpf(left(hi).numerator) / left(hi).denominator))
    step_f = max(abs(x) * 1e-15, 1e-300)
    while tails.delta(Fraction(x), sens)[1] > target:  # certify: move outward until the bound holds
        x, step_f = x + step_f, 2 * step_f
    return x
