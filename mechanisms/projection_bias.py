r"""Bias and variance of projection post-processing: Monte Carlo with confidence intervals, and ZVF's bounds.

Reference ``docs/reference/subspace-integer-postprocessing.md`` §4.2-§4.5, [ZVF21] (arXiv numbering):

* :func:`monte_carlo_bias` -- per-cell bias :math:`\mathbb E[\hat x-x]` and variance of any
  post-processing map under a :data:`~semidp.mechanisms.postprocess_noise.NoiseLaw`, with
  normal-approximation confidence intervals (seeded ``rng``).
* :func:`bias_bound` -- [ZVF21, Thm. 4]: for program (P+) with bounded feasible set
  :math:`\mathcal K=\{v:Av=b,\ v\ge0\}`,

  .. math:: \|\mathbb E[\hat x_+(\tilde x)-x]\|_\infty\le C'\,\Pr(\|\eta\|_1>r_m),\qquad
            r_m=\min_ix_i,\quad C'=\sup_{v\in\mathcal K}\|v-x\|_\infty,

  the tail from [ZVF21, Lemma 2] (Laplace: :math:`\Pr[\mathrm{Poisson}(r_m/\lambda)\le n-1]`;
  double geometric: the :math:`h_i` form; reference §4.4).
* :math:`C'`: :func:`max_deviation_total` (one total, :math:`C'=b-r_m` for :math:`n\ge2`,
  reference §4.4 [D]), :meth:`HierarchicalTotals.max_deviation
  <semidp.mechanisms.projection.HierarchicalTotals.max_deviation>`, and :func:`max_deviation_lp`
  for general ``A``: :math:`2n` linear programs (``scipy.optimize.linprog``, HiGHS), so the value is
  an **LP value** accurate to the solver's feasibility tolerance; it is padded up before use in a bound.
* :func:`sum_projection_variance` -- [ZVF21, Thm. 5]: the marginal error of :math:`(P_S)` (one total,
  no non-negativity) has variance :math:`(1-1/n)\operatorname{Var}\eta_i` (:math:`2\lambda^2(1-1/n)` for Laplace).

Units: counts (the same units as ``x``). References: [ZVF21] Zhu, Van Hentenryck & Fioretto,
AAAI 2021, arXiv:2010.04327.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from statistics import NormalDist

import mpmath
import numpy as np
from numpy.typing import ArrayLike
from scipy.optimize import linprog

from semidp.accountant.core.arguments import check_in_interval, check_int, check_nonnegative, check_rng
from semidp.accountant.core.directed import pad_up, up
from semidp.accountant.core.errors import InvalidArgument
from semidp.mechanisms.postprocess_noise import DoubleGeometricNoise, LaplaceNoise, NoiseLaw
from semidp.mechanisms.projection import AffineConstraint, FloatArray, check_draws

__all__ = [
    "BiasEstimate",
    "LPDeviation",
    "bias_bound",
    "max_deviation_lp",
    "max_deviation_total",
    "monte_carlo_bias",
    "sum_projection_variance",
]

#: A post-processing map: noisy draws ``(draws, n)`` -> post-processed ``(draws, n)``.
PostProcess = Callable[[FloatArray], FloatArray]
#: Relative + absolute padding added to an LP value of C' (HiGHS' default feasibility tolerance is 1e-7).
LP_PAD = 1e-6


def _vector(name: str, value: ArrayLike) -> FloatArray:
    v = np.asarray(value, dtype=np.float64)
    if v.ndim != 1 or v.size == 0:
        raise InvalidArgument(f"{name} has shape {v.shape}; expected a vector of counts, shape (n,).")
    return check_draws(name, v, v.size)


@dataclass(frozen=True, eq=False)
class BiasEstimate:
    r"""Monte Carlo per-cell bias and variance of :math:`\hat x-x` with two-sided normal-approximation CIs."""

    bias: FloatArray
    r"""Sample mean of :math:`\hat x_i-x_i` per cell."""
    bias_low: FloatArray
    """Lower end of the CI for the bias (``bias - z * se``)."""
    bias_high: FloatArray
    """Upper end of the CI for the bias."""
    variance: FloatArray
    r"""Sample variance of :math:`\hat x_i-x_i` per cell (divisor N - 1)."""
    variance_low: FloatArray
    r"""Lower end of the CI for the variance, from :math:`\mathrm{se}^2=(m_4-s^4)/N` (asymptotic normality)."""
    variance_high: FloatArray
    """Upper end of the CI for the variance."""
    draws: int
    """Number of Monte Carlo draws N."""
    level: float
    """Two-sided confidence level of the intervals (e.g. 0.95)."""

    def contains_bias(self, value: ArrayLike, slack: float = 0.0) -> bool:
        """True if every cell's CI, widened by ``slack`` (e.g. the reference's printed precision), contains ``value``."""
        v = np.broadcast_to(np.asarray(value, dtype=np.float64), self.bias.shape)
        return bool(np.all((self.bias_low - slack <= v) & (v <= self.bias_high + slack)))

    def contains_variance(self, value: ArrayLike, slack: float = 0.0) -> bool:
        """True if every cell's variance CI, widened by ``slack``, contains ``value``."""
        v = np.broadcast_to(np.asarray(value, dtype=np.float64), self.variance.shape)
        return bool(np.all((self.variance_low - slack <= v) & (v <= self.variance_high + slack)))

    def max_abs_bias_upper(self) -> float:
        r"""Upper confidence bound on :math:`\|\mathrm{bias}\|_\infty` (largest CI end in absolute value)."""
        return float(np.max(np.maximum(np.abs(self.bias_low), np.abs(self.bias_high))))


def monte_carlo_bias(
    counts: ArrayLike,
    postprocess: PostProcess,
    noise: NoiseLaw,
    draws: int,
    *,
    rng: np.random.Generator,
    level: float = 0.95,
    batch: int = 100_000,
) -> BiasEstimate:
    r"""Estimate per-cell bias and variance of ``postprocess(x + eta) - x`` by Monte Carlo.

    Draws are processed in batches of ``batch`` rows (one vectorised call of ``postprocess`` per
    batch); moments are accumulated about the first batch's mean to avoid cancellation.

    Parameters
    ----------
    counts:
        True counts x, shape ``(n,)``.
    postprocess:
        Map from noisy draws ``(m, n)`` to post-processed ``(m, n)`` (e.g.
        :func:`~semidp.mechanisms.projection.project_simplex` with the total bound in).
    noise:
        The i.i.d. noise law.
    draws:
        N >= 2.
    rng:
        The generator (house style R4: required, keyword-only).
    level:
        Two-sided confidence level in (0, 1).

    Examples
    --------
    >>> from semidp.mechanisms.projection import project_simplex
    >>> x = np.array([1.0, 1.0, 1.0, 97.0])
    >>> est = monte_carlo_bias(x, lambda d: project_simplex(d, 100.0), LaplaceNoise(5.0), 20_000,
    ...                        rng=np.random.default_rng(0))
    >>> bool(est.bias[0] > 0.5 and est.bias[3] < -2.0)           # T-Z5: P+ pushes small cells up
    True
    """
    x = _vector("counts", counts)
    big_n = check_int("draws", draws, minimum=2)
    b = check_int("batch", batch, minimum=1)
    check_in_interval("level", level, 0.0, 1.0, lo_open=True, hi_open=True)
    g = check_rng(rng)
    n = x.size

    def errors(m: int) -> FloatArray:
        e = np.asarray(postprocess(x + noise.sample((m, n), rng=g)), dtype=np.float64) - x
        if e.shape != (m, n):
            raise InvalidArgument(f"postprocess returned shape {e.shape}; expected {(m, n)}.")
        return e

    first = errors(min(b, big_n))
    shift = first.mean(axis=0)
    s1, s2, s3, s4 = (np.zeros(n) for _ in range(4))
    done = 0
    while done < big_n:
        m = min(b, big_n - done)
        d = (first if done == 0 else errors(m)) - shift
        s1 += d.sum(axis=0)
        d2 = d * d
        s2 += d2.sum(axis=0)
        s3 += (d2 * d).sum(axis=0)
        s4 += (d2 * d2).sum(axis=0)
        done += m
    mu_d = s1 / big_n
    m2 = s2 / big_n - mu_d**2
    m4 = s4 / big_n - 4 * mu_d * s3 / big_n + 6 * mu_d**2 * s2 / big_n - 3 * mu_d**4
    var = m2 * big_n / (big_n - 1)
    z = NormalDist().inv_cdf(0.5 + level / 2)
    se_mean = np.sqrt(var / big_n)
    se_var = np.sqrt(np.maximum(m4 - m2**2, 0.0) / big_n)
    mean = shift + mu_d
    return BiasEstimate(
        mean, mean - z * se_mean, mean + z * se_mean, var, var - z * se_var, var + z * se_var, big_n, float(level)
    )


def sum_projection_variance(noise: NoiseLaw, n: int) -> float:
    r"""Exact marginal error variance of :math:`(P_S)`: :math:`(1-1/n)\operatorname{Var}\eta_i` [ZVF21, Thm. 5].

    For Laplace noise :math:`2\lambda^2(1-1/n)`; the error of cell i is
    :math:`((n-1)\eta_i-\sum_{j\ne i}\eta_j)/n` (reference §4.5; the seed's sum index is a typo).

    >>> round(sum_projection_variance(LaplaceNoise(10.0), 15), 4), round(sum_projection_variance(LaplaceNoise(10.0), 254), 4)
    (186.6667, 199.2126)
    """
    k = check_int("n", n, minimum=1)
    return noise.variance * (1.0 - 1.0 / k)


def max_deviation_total(counts: ArrayLike, total: float | None = None) -> float:
    r""":math:`C'=\sup\{\|v-x\|_\infty: v\ge0,\ \mathbf 1^\top v=b\}=\max_i\max(x_i,b-x_i)=b-r_m` [ZVF21, Thm. 4].

    For :math:`n\ge2` (reference §4.4 [D]).

    ``total`` defaults to :math:`\sum_ix_i`.

    >>> max_deviation_total([348.0, 1000.0, 7287764.0])          # b - r_m
    7288764.0
    """
    x = _vector("counts", counts)
    if x.size < 2 or np.any(x < 0):
        raise InvalidArgument(f"counts must be a non-negative vector of length n >= 2; got shape {x.shape}.")
    b = math.fsum(x.tolist()) if total is None else check_nonnegative("total", total)
    return float(np.max(np.maximum(x, b - x)))


@dataclass(frozen=True, eq=False)
class LPDeviation:
    r""":math:`C'` from :math:`2n` LPs (an LP value, not exact)."""

    value: float
    r"""Solver value of :math:`\max_i\max(\max_{\mathcal K}v_i-x_i,\ x_i-\min_{\mathcal K}v_i)`."""
    upper: float
    """``value`` padded up by ``LP_PAD * (1 + value)``: the number to use in a bound."""
    cell: int
    """A cell attaining the maximum."""


def max_deviation_lp(constraint: AffineConstraint, counts: ArrayLike) -> LPDeviation:
    r""":math:`C'=\sup_{v\in\mathcal K}\|v-x\|_\infty` for :math:`\mathcal K=\{Av=b,\ v\ge0\}` by :math:`2n` LPs [ZVF21, Thm. 4].

    For each cell i: :math:`\max v_i` and :math:`\min v_i` over :math:`\mathcal K` with
    ``scipy.optimize.linprog`` (HiGHS). Raises :class:`InvalidArgument` if an LP is unbounded
    (Thm. 4 needs a bounded :math:`\mathcal K`) or fails.

    >>> c = AffineConstraint.of(np.ones((1, 3)), [10.0])
    >>> max_deviation_lp(c, [2.0, 3.0, 5.0]).value                # = b - r_m
    8.0
    """
    x = check_draws("counts", counts, constraint.dimension)
    if x.ndim != 1:
        raise InvalidArgument(f"counts has shape {x.shape}; expected ({constraint.dimension},).")
    n = constraint.dimension
    best, cell = -math.inf, 0
    for i in range(n):
        for sign in (1.0, -1.0):
            cvec = np.zeros(n)
            cvec[i] = -sign  # linprog minimises: maximise sign * v_i
            res = linprog(cvec, A_eq=constraint.matrix, b_eq=constraint.rhs, bounds=(0, None), method="highs")
            if res.status == 3:
                raise InvalidArgument(
                    f"the feasible set {{A v = b, v >= 0}} is unbounded in cell {i}: [ZVF21, Thm. 4] needs it bounded."
                )
            if res.status != 0:
                raise InvalidArgument(f"LP for cell {i} failed: {res.message}")
            dev = sign * (float(res.x[i]) - float(x[i]))
            if dev > best:
                best, cell = dev, i
    return LPDeviation(best, pad_up(best, rel=LP_PAD, abs_=LP_PAD), cell)


def bias_bound(counts: ArrayLike, noise: LaplaceNoise | DoubleGeometricNoise, max_deviation: float) -> float:
    r"""[ZVF21, Thm. 4]: :math:`\|\mathrm{bias}(\hat x_+)\|_\infty\le C'\Pr(\|\eta\|_1>r_m)`, rounded up.

    Parameters
    ----------
    counts:
        True counts x >= 0 (shape ``(n,)``); :math:`r_m=\min_ix_i`.
    noise:
        Laplace (tail :math:`\Pr[\mathrm{Poisson}(r_m/\lambda)\le n-1]`) or double geometric
        (tail at :math:`\lfloor r_m\rfloor`) [ZVF21, Lemma 2]. Gaussian noise has no Lemma 2 form.
    max_deviation:
        :math:`C'` (e.g. :func:`max_deviation_total`, or ``max_deviation_lp(...).upper``).

    Examples
    --------
    >>> round(bias_bound([1.0, 1.0, 1.0, 97.0], LaplaceNoise(5.0), 99.0), 2)     # T-Z5
    98.99
    """
    x = _vector("counts", counts)
    if np.any(x < 0):
        raise InvalidArgument("counts must be a non-negative vector (true counts, shape (n,)).")
    if not isinstance(noise, (LaplaceNoise, DoubleGeometricNoise)):
        raise InvalidArgument(
            f"noise={noise!r}: [ZVF21, Thm. 4] is stated through Lemma 2, which has Laplace and double geometric "
            "forms only; estimate the bias with monte_carlo_bias instead."
        )
    c = check_nonnegative("max_deviation", max_deviation)
    tail = noise.l1_tail(x.size, float(np.min(x)))
    return up(mpmath.mpf(c) * mpmath.mpf(tail) * (1 + mpmath.mpf(2) ** -40))  # tail is rounded to nearest: pad up
