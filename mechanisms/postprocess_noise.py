r"""Noise laws for the projection post-processing studies, and their :math:`\ell_1`-ball probabilities [ZVF21, Lemma 2].

The input noise :math:`\eta` of [ZVF21, Sec. 3] is i.i.d. per cell (reference
``docs/reference/subspace-integer-postprocessing.md`` §4.1, §4.3):

* :class:`LaplaceNoise` -- :math:`\mathrm{Lap}(\lambda)`, density :math:`e^{-|t|/\lambda}/2\lambda`, variance
  :math:`2\lambda^2`; sampled with ``rng.laplace``.
* :class:`GaussianNoise` -- :math:`N(0,\sigma^2)`; sampled with ``rng.normal``. No Lemma 2 form.
* :class:`DoubleGeometricNoise` -- :math:`\Pr[k]=\frac{1-a}{1+a}a^{|k|}` with :math:`a=e^{-1/t}`, i.e.
  :math:`\mathrm{Lap}_{\mathbb Z}(t)`; ZVF's ":math:`\mathrm{Geom}(\Delta_f/\epsilon)`" read as :math:`t=\Delta_f/\epsilon`
  (reference §7 item 7: the paper's notation does not fix this). Sampled **exactly** and vectorised
  by :func:`semidp.mechanisms.discrete.discrete_laplace_array` (Canonne, Kamath & Steinke 2020, Alg. 2).

:math:`\ell_1`-ball laws [ZVF21, Lemma 2]:

.. math::
    \Pr(\|\eta\|_1\le r)=1-e^{-r/\lambda}\sum_{i=0}^{n-1}\frac{(r/\lambda)^i}{i!}
    =\Pr[\mathrm{Gamma}(n,\lambda)\le r]\quad(\text{Laplace}),

    \Pr(\|\eta\|_1\le r)=1-\frac{2a^{r+1}}{1+a}\sum_{i=0}^{n-1}h_i(r)\Bigl(\frac{1-a}{1+a}\Bigr)^i
    \quad(\text{double geometric, integer } r\ge0),

with :math:`h_0\equiv1`, :math:`h_{i+1}(r)=\sum_{v=-r}^{r}h_i(r-|v|)`, the number of points of
:math:`\mathbb Z^i` in the :math:`\ell_1` ball of radius r, :math:`h_i(r)=\sum_k2^k\binom ik\binom rk`
(reference §4.3 [D]). Tails are computed directly (no ``1 - p`` cancellation): the Laplace tail as
the regularised upper incomplete gamma :math:`Q(n,r/\lambda)=\Pr[\mathrm{Poisson}(r/\lambda)\le n-1]`
in mpmath at 50 digits; the geometric tail from exact integers :math:`h_i(r)`, in exact rationals
when ``a`` is a :class:`~fractions.Fraction`, else in mpmath at 50 digits. Returned floats are
rounded to nearest; :func:`semidp.mechanisms.projection_bias.bias_bound` rounds its bound up.

Samplers are for research and auditing; they are not hardened against floating-point or timing
side channels. References: [ZVF21] Zhu, Van Hentenryck & Fioretto, AAAI 2021, arXiv:2010.04327.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import mpmath
import numpy as np

from semidp.accountant.core.arguments import check_int, check_nonnegative, check_positive, check_rng
from semidp.accountant.core.errors import InvalidArgument
from semidp.mechanisms.discrete import discrete_laplace_array

FloatArray = np.typing.NDArray[np.float64]

#: mpmath working precision (decimal digits) for the tails.
DIGITS = 50

__all__ = [
    "DoubleGeometricNoise",
    "GaussianNoise",
    "LaplaceNoise",
    "NoiseLaw",
    "double_geometric_l1_ball_probability",
    "double_geometric_l1_tail",
    "l1_ball_counts",
    "l1_lattice_points",
    "laplace_l1_ball_probability",
    "laplace_l1_tail",
]


def _shape(shape: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(check_int("shape", s, minimum=0) for s in shape)


@dataclass(frozen=True, slots=True)
class LaplaceNoise:
    r""":math:`\mathrm{Lap}(\lambda)^n` noise [ZVF21, Sec. 3].

    >>> LaplaceNoise(5.0).variance
    50.0
    """

    scale: float
    r""":math:`\lambda>0` (e.g. :math:`\Delta_1/\varepsilon`)."""

    def __post_init__(self) -> None:
        check_positive("scale", self.scale)

    @property
    def variance(self) -> float:
        r""":math:`2\lambda^2` per cell."""
        return 2.0 * self.scale**2

    def sample(self, shape: tuple[int, ...], *, rng: np.random.Generator) -> FloatArray:
        """i.i.d. draws of the given shape."""
        out: FloatArray = check_rng(rng).laplace(0.0, self.scale, _shape(shape))
        return out

    def l1_tail(self, n: int, r: float) -> float:
        r""":math:`\Pr(\|\eta\|_1>r)` for n cells (:func:`laplace_l1_tail`)."""
        return laplace_l1_tail(n, r, self.scale)


@dataclass(frozen=True, slots=True)
class GaussianNoise:
    r""":math:`N(0,\sigma^2)^n` noise (Monte Carlo only: [ZVF21, Lemma 2] has no Gaussian form).

    >>> GaussianNoise(2.0).variance
    4.0
    """

    sigma: float
    r"""Standard deviation :math:`\sigma>0`."""

    def __post_init__(self) -> None:
        check_positive("sigma", self.sigma)

    @property
    def variance(self) -> float:
        r""":math:`\sigma^2` per cell."""
        return self.sigma**2

    def sample(self, shape: tuple[int, ...], *, rng: np.random.Generator) -> FloatArray:
        """i.i.d. draws of the given shape."""
        out: FloatArray = check_rng(rng).normal(0.0, self.sigma, _shape(shape))
        return out


@dataclass(frozen=True, slots=True)
class DoubleGeometricNoise:
    r"""Double geometric :math:`\mathrm{DG}(a)`, :math:`a=e^{-1/t}` (= :math:`\mathrm{Lap}_{\mathbb Z}(t)`), exact sampler.

    >>> round(DoubleGeometricNoise(5).variance, 6)             # 2a/(1-a)^2, a = e^{-1/5}
    49.833666
    """

    scale: Fraction | int
    r""":math:`t>0`, rational (exact sampling); ZVF's ":math:`\mathrm{Geom}(\Delta_f/\epsilon)`"."""

    def __post_init__(self) -> None:
        if isinstance(self.scale, bool) or not isinstance(self.scale, (int, Fraction)) or not self.scale > 0:
            raise InvalidArgument(
                f"scale={self.scale!r} must be a positive int or fractions.Fraction (exact sampling)."
            )

    @property
    def ratio(self) -> float:
        r""":math:`a=e^{-1/t}` (rounded to nearest)."""
        return math.exp(-1.0 / float(self.scale))

    @property
    def variance(self) -> float:
        r""":math:`2a/(1-a)^2` per cell."""
        a = self.ratio
        return 2.0 * a / (1.0 - a) ** 2

    def sample(self, shape: tuple[int, ...], *, rng: np.random.Generator) -> FloatArray:
        """i.i.d. exact integer draws (as float64) of the given shape."""
        sh = _shape(shape)
        k = discrete_laplace_array(self.scale, int(np.prod(sh)), rng=rng)
        out: FloatArray = k.astype(np.float64).reshape(sh)
        return out

    def l1_tail(self, n: int, r: float) -> float:
        r""":math:`\Pr(\|\eta\|_1>r)=\Pr(\|\eta\|_1>\lfloor r\rfloor)` (:func:`double_geometric_l1_tail`)."""
        rr = math.floor(check_nonnegative("r", r))
        t = Fraction(self.scale)
        with mpmath.workdps(DIGITS):  # a = e^{-1/t} at 50 digits, not rounded to a double first
            return double_geometric_l1_tail(n, rr, mpmath.exp(-mpmath.mpf(t.denominator) / t.numerator))


NoiseLaw = LaplaceNoise | GaussianNoise | DoubleGeometricNoise


def laplace_l1_tail(n: int, r: float, scale: float) -> float:
    r""":math:`\Pr(\|\eta\|_1>r)=e^{-r/\lambda}\sum_{i<n}(r/\lambda)^i/i!=\Pr[\mathrm{Poisson}(r/\lambda)\le n-1]` [ZVF21, Lemma 2].

    >>> f"{laplace_l1_tail(33, 348, 5):.4e}"                   # T-Z4 (New Mexico)
    '3.7578e-07'
    """
    k = check_int("n", n, minimum=1)
    rr = check_nonnegative("r", r)
    lam = check_positive("scale", scale)
    with mpmath.workdps(DIGITS):
        return float(mpmath.gammainc(k, mpmath.mpf(rr) / mpmath.mpf(lam), mpmath.inf, regularized=True))


def laplace_l1_ball_probability(n: int, r: float, scale: float) -> float:
    r""":math:`\Pr(\|\eta\|_1\le r)=\Pr[\mathrm{Gamma}(n,\lambda)\le r]` for :math:`\eta\sim\mathrm{Lap}(\lambda)^n` [ZVF21, Lemma 2].

    >>> round(laplace_l1_ball_probability(3, 2, 1), 10)          # T-Z2
    0.3233235838
    """
    k = check_int("n", n, minimum=1)
    rr = check_nonnegative("r", r)
    lam = check_positive("scale", scale)
    with mpmath.workdps(DIGITS):
        return float(mpmath.gammainc(k, 0, mpmath.mpf(rr) / mpmath.mpf(lam), regularized=True))


def l1_lattice_points(i: int, r: int) -> int:
    r""":math:`h_i(r)=|\{z\in\mathbb Z^i:\|z\|_1\le r\}|=\sum_k2^k\binom ik\binom rk` (exact) [reference §4.3 [D]].

    >>> [l1_lattice_points(2, r) for r in range(5)]             # T-Z3b
    [1, 5, 13, 25, 41]
    """
    ii = check_int("i", i, minimum=0)
    rr = check_int("r", r, minimum=0)
    return sum(2**k * math.comb(ii, k) * math.comb(rr, k) for k in range(min(ii, rr) + 1))


def l1_ball_counts(i_max: int, r_max: int) -> list[list[int]]:
    r"""Table :math:`h_i(r)`, :math:`0\le i\le i_{\max}`, :math:`0\le r\le r_{\max}`, by ZVF's recursion [ZVF21, Lemma 2].

    :math:`h_0\equiv1`, :math:`h_{i+1}(r)=\sum_{v=-r}^{r}h_i(r-|v|)=h_i(r)+2\sum_{s<r}h_i(s)`.

    >>> l1_ball_counts(4, 4)[4]                                  # T-Z3b
    [1, 9, 41, 129, 321]
    """
    im = check_int("i_max", i_max, minimum=0)
    rm = check_int("r_max", r_max, minimum=0)
    table = [[1] * (rm + 1)]
    for _ in range(im):
        prev = table[-1]
        row, below = [], 0
        for r in range(rm + 1):
            row.append(prev[r] + 2 * below)
            below += prev[r]
        table.append(row)
    return table


def _dg_check(n: int, r: int) -> tuple[int, int]:
    return check_int("n", n, minimum=1), check_int("r", r, minimum=0)


def _dg_tail_exact(k: int, rr: int, a: Fraction) -> Fraction:
    if not 0 < a < 1:
        raise InvalidArgument(f"ratio={a!r} must be in (0, 1).")
    q = (1 - a) / (1 + a)
    s = sum((l1_lattice_points(i, rr) * q**i for i in range(k)), Fraction(0))
    return 2 * a ** (rr + 1) / (1 + a) * s


def _dg_tail_mp(k: int, rr: int, ratio: float | mpmath.mpf) -> mpmath.mpf:
    """The tail in mpmath; call inside ``mpmath.workdps(DIGITS)``."""
    a = mpmath.mpf(ratio)
    if not 0 < a < 1:
        raise InvalidArgument(f"ratio={ratio!r} must be in (0, 1).")
    q = (1 - a) / (1 + a)
    s = mpmath.fsum(mpmath.mpf(l1_lattice_points(i, rr)) * q**i for i in range(k))
    return 2 * a ** (rr + 1) / (1 + a) * s


def double_geometric_l1_tail(n: int, r: int, ratio: float | Fraction | mpmath.mpf) -> float:
    r""":math:`\Pr(\|\eta\|_1>r)=\frac{2a^{r+1}}{1+a}\sum_{i<n}h_i(r)(\frac{1-a}{1+a})^i`, :math:`\eta\sim\mathrm{DG}(a)^n` [ZVF21, Lemma 2].

    Exact (then rounded once) for a :class:`~fractions.Fraction` ``ratio``; mpmath at 50 digits otherwise.

    >>> round(double_geometric_l1_tail(3, 5, Fraction(7, 10)), 10)   # T-Z3
    0.6700221901
    """
    k, rr = _dg_check(n, r)
    if isinstance(ratio, Fraction):
        return float(_dg_tail_exact(k, rr, ratio))
    with mpmath.workdps(DIGITS):
        return float(_dg_tail_mp(k, rr, ratio))


def double_geometric_l1_ball_probability(n: int, r: int, ratio: float | Fraction | mpmath.mpf) -> float:
    r""":math:`\Pr(\|\eta\|_1\le r)` for :math:`\eta\sim\mathrm{DG}(a)^n` [ZVF21, Lemma 2] (exact, or 50 digits).

    >>> double_geometric_l1_ball_probability(1, 3, Fraction(1, 2)) == 11 / 12   # 1 - 2a^4/(1+a)
    True
    """
    k, rr = _dg_check(n, r)
    if isinstance(ratio, Fraction):
        return float(1 - _dg_tail_exact(k, rr, ratio))
    with mpmath.workdps(DIGITS):
        return float(1 - _dg_tail_mp(k, rr, ratio))
