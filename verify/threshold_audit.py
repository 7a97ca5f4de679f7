r"""Threshold tests on release samples: empirical tradeoff points, an epsilon lower bound, and a refutation rule.

A black-box audit of a claimed guarantee on one pair of datasets ``(x, x')``
[JUO20, NST21, DPAud]: draw releases on both sides, reduce each to a real
statistic ``s`` (larger = more evidence for ``x'``), and read the threshold test
"reject ``x`` when ``s > tau``" as a point

.. math:: \alpha = P_x(s > \tau), \qquad \beta = P_{x'}(s \le \tau)

of the mechanism's tradeoff function :math:`T` [DRS22, Def. 2.1]. The draws are
split in two: the **selection** half chooses the statistic and the threshold,
the **measurement** half measures the chosen tests only, so the selection costs
nothing in validity. For each measured test the one-sided Clopper–Pearson upper
bounds [CP34] :math:`\alpha_U, \beta_U` hold jointly over all ``M`` measured tests
at confidence ``c`` (Bonferroni: level :math:`(1-c)/(2M)` for each of the
``2M`` bounds). Then, with probability at least ``c``,

* :math:`T(\alpha_U)\le T(\alpha)\le\beta\le\beta_U` for every measured test
  (``T`` is non-increasing): each :math:`(\alpha_U, \beta_U)` is a point on or
  above the mechanism's tradeoff curve, i.e. an **empirical lower bound on the
  privacy loss** (``tradeoff_points``);
* a claim with tradeoff function :math:`f` is violated if
  :math:`\beta_U < f_{\rm lo}(\alpha_U)` for a lower bound :math:`f_{\rm lo}\le f`
  of the claimed curve (``f`` is non-increasing, so
  :math:`\beta \le \beta_U < f_{\rm lo}(\alpha_U) \le f(\alpha)`): the claim is
  **refuted** at confidence ``c``. Otherwise it is *not refuted at this sample
  size* -- never verified;
* every :math:`(\varepsilon,\delta)`-DP guarantee satisfies
  :math:`1-\delta\le e^\varepsilon\alpha+\beta` and :math:`1-\delta\le\alpha+e^\varepsilon\beta`
  [DRS22, Prop. 2.5], so
  :math:`\varepsilon \ge \max\{\log\frac{1-\delta-\beta_U}{\alpha_U},\log\frac{1-\delta-\alpha_U}{\beta_U}\}`
  (``epsilon_lower``, rounded down).

**Sequential rounds.** The draws come in rounds of growing size (:func:`round_sizes`: ``FIRST_ROUND`` draws
per side, then ``GROWTH`` times as many in all after each round, up to the planned ``n``), and the tests are
chosen and measured after every round on all draws so far. The error budget ``1 - c`` is spent across the
rounds by the linear alpha-spending function of Lan and DeMets [LD83], ``alpha(t) = (1 - c) t`` at information
``t = N_k / n`` (:func:`spending`), with a Bonferroni (union) bound over the looks instead of their
correlation: look ``k`` gets ``alpha_k = (1 - c)(N_k - N_{k-1}) / n`` and each of its ``2M`` bounds
``alpha_k / (2M)``. Every look is valid on its own: its thresholds come from the selection rows, its bounds
from the measurement rows, and a row never changes role (each batch's first share selects,
:func:`batch_split`). The events "some bound of look ``k`` fails" have probabilities summing to at most
``sum_k alpha_k = 1 - c`` over every look that could happen, whatever the stopping, so stopping at the first
refutation is valid and all bounds of all looks hold jointly at confidence ``c``. A look cut short by the
budget uses the level of its round (a round has one look); the time at which it is cut depends on the clock,
not on the values drawn.

Everything here is vectorised over draws and thresholds; nothing draws.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray
from scipy.stats import beta as beta_dist

from semidp.accountant.core.errors import InvalidArgument

FloatArray = NDArray[np.float64]
Curve = Callable[[FloatArray], FloatArray]
"""A lower bound of the claimed tradeoff function (standard convention), vectorised over alpha."""

#: Draws per side of each pair in the first round of a sequential audit, and the growth of the rounds.
FIRST_ROUND = 10_000
GROWTH = 4
#: Thresholds tried per statistic on the selection half (quantiles of the pooled scores).
THRESHOLDS = 256


def cp_upper(k: FloatArray | float, n: FloatArray | float, level: float) -> FloatArray:
    r"""One-sided Clopper–Pearson upper bound of a binomial proportion [CP34]: ``P(p <= upper) >= 1 - level``.

    :math:`\mathrm{Beta}^{-1}(1-\text{level};\,k+1,\,n-k)`, and 1 when ``k = n``. ``k`` may be fractional
    (the selection step predicts the measurement's bound from a proportion). Padded up by a relative 1e-12
    for the float error of the quantile.

    Examples
    --------
    >>> round(float(cp_upper(0, 100, 0.05)), 4)     # the rule of three: 3/n, about
    0.0295
    """
    kk = np.asarray(k, dtype=np.float64)
    nn = np.broadcast_to(np.asarray(n, dtype=np.float64), kk.shape)
    full = kk >= nn
    b = np.where(full, 1.0, nn - kk)
    u = np.where(full, 1.0, beta_dist.ppf(1.0 - level, kk + 1.0, b))
    return np.asarray(np.minimum(1.0, u * (1.0 + 1e-12) + 1e-300), dtype=np.float64)


def epsilon_lower(alpha_u: float, beta_u: float, delta: float) -> float:
    r"""The epsilon every :math:`(\varepsilon,\delta)`-DP mechanism needs to allow a test at ``(alpha_u, beta_u)``.

    :math:`\max\{0, \log\frac{1-\delta-\beta_U}{\alpha_U}, \log\frac{1-\delta-\alpha_U}{\beta_U}\}`
    [DRS22, Prop. 2.5]; rounded down (a lower bound may only be weakened).

    Examples
    --------
    >>> round(epsilon_lower(0.05, 0.5, 0.0), 4)      # log(0.5 / 0.05)
    2.3026
    """
    best = 0.0
    for a, b in ((alpha_u, beta_u), (beta_u, alpha_u)):
        num = 1.0 - delta - b
        if num > 0 and a > 0:
            best = max(best, math.log(num / a))
    return math.nextafter(best, 0.0) if best > 0 else 0.0


@dataclass(frozen=True)
class Statistic:
    """A real statistic of a release, vectorised over draws: larger means more evidence for ``x'``."""

    name: str
    """``projection`` (Gaussian likelihood ratio), ``l1-ratio`` (Laplace), ``k-norm-ratio`` (K-norm)."""
    score: Callable[[FloatArray], FloatArray]
    """``(draws, cells) -> (draws,)``."""
    exact_range: tuple[float, float] | None = None
    """``[lo, hi]`` holding ``score`` for every release in exact arithmetic (e.g. ``+-|x - x'|_1`` for the
    l1 ratio, by the triangle inequality), or ``None``; a refutation counting only values outside it rests on
    outputs impossible for the claimed law computed exactly (:mod:`verify.audit_evidence`)."""


@dataclass(frozen=True)
class Candidate:
    """A test chosen on the selection half: which pair, which statistic, which threshold, and its predicted gap."""

    pair: int
    statistic: str
    threshold: float
    predicted_gap: float
    """``f_lo(alpha_U) - beta_U`` predicted for the measurement half (> 0: expected to refute)."""


@dataclass(frozen=True)
class Measured:
    """A chosen test measured on the measurement half."""

    candidate: Candidate
    alpha_hat: float
    beta_hat: float
    alpha_upper: float
    beta_upper: float
    claimed_beta: float
    """``f_lo(alpha_upper)``: the least type-II error the claim allows there."""
    draws: int
    """Measurement draws per side."""

    @property
    def refutes(self) -> bool:
        """``beta_upper < f_lo(alpha_upper)``: the point lies below the claimed curve."""
        return self.beta_upper < self.claimed_beta


def split_sizes(n: int, selection: float) -> tuple[int, int]:
    """``(selection draws, measurement draws)`` per side: at least one of each."""
    if n < 2:
        raise InvalidArgument(f"an audit needs at least 2 draws per side; got {n}.")
    s = min(n - 1, max(1, int(n * selection)))
    return s, n - s


def _counts_above(sorted_scores: FloatArray, thresholds: FloatArray) -> FloatArray:
    """``#{s > tau}`` for each threshold (``sorted_scores`` ascending)."""
    return np.asarray(len(sorted_scores) - np.searchsorted(sorted_scores, thresholds, side="right"), dtype=np.float64)


def select(
    pair: int,
    stats: Sequence[Statistic],
    sel_x: FloatArray,
    sel_xp: FloatArray,
    curve: Curve,
    *,
    n_measure: int,
    level: float,
) -> list[Candidate]:
    """The best threshold of each statistic on the selection half (one candidate per statistic).

    The gap ``f_lo(alpha_U) - beta_U`` is predicted at the measurement's size and per-bound ``level``
    (Clopper–Pearson at the selection proportions), so a threshold whose counts are too small to survive
    the measurement's interval is not preferred.
    """
    out: list[Candidate] = []
    n0, n1 = sel_x.shape[0], sel_xp.shape[0]
    grid = (np.arange(THRESHOLDS) + 0.5) / THRESHOLDS
    for st in stats:
        s0 = np.sort(st.score(sel_x))
        s1 = np.sort(st.score(sel_xp))
        pooled = np.concatenate([s0, s1])
        taus = np.unique(np.quantile(pooled, grid))
        p0 = _counts_above(s0, taus) / n0
        q1 = 1.0 - _counts_above(s1, taus) / n1
        a_u = cp_upper(p0 * n_measure, n_measure, level)
        b_u = cp_upper(q1 * n_measure, n_measure, level)
        gap = curve(a_u) - b_u
        j = int(np.argmax(gap))
        out.append(Candidate(pair, st.name, float(taus[j]), float(gap[j])))
    return out


def measure(
    cand: Candidate, stat: Statistic, meas_x: FloatArray, meas_xp: FloatArray, curve: Curve, *, level: float
) -> Measured:
    """Clopper–Pearson upper bounds of the chosen test's alpha and beta on the measurement half."""
    n0, n1 = meas_x.shape[0], meas_xp.shape[0]
    k0 = float(np.count_nonzero(stat.score(meas_x) > cand.threshold))
    m1 = float(np.count_nonzero(stat.score(meas_xp) <= cand.threshold))
    a_u = float(cp_upper(k0, n0, level))
    b_u = float(cp_upper(m1, n1, level))
    return Measured(
        candidate=cand,
        alpha_hat=k0 / n0,
        beta_hat=m1 / n1,
        alpha_upper=a_u,
        beta_upper=b_u,
        claimed_beta=float(curve(np.array([a_u]))[0]),
        draws=min(n0, n1),
    )


def choose(candidates: Sequence[Candidate], tests: int) -> list[Candidate]:
    """The ``tests`` candidates with the largest predicted gap (the Bonferroni family is their number)."""
    ranked = sorted(candidates, key=lambda c: (-c.predicted_gap, c.pair, c.statistic))
    return ranked[: max(1, tests)]


def round_sizes(n: int, first: int = FIRST_ROUND, growth: int = GROWTH) -> list[int]:
    """Cumulative draws per side after each round: ``first``, ``growth * first``, ... capped at ``n`` (the last).

    Examples
    --------
    >>> round_sizes(1_000_000)
    [10000, 40000, 160000, 640000, 1000000]
    >>> round_sizes(500)
    [500]
    """
    if n < 1 or first < 1 or growth < 2:
        raise InvalidArgument(f"round_sizes needs n, first >= 1 and growth >= 2; got {n}, {first}, {growth}.")
    sizes = [min(n, first)]
    while sizes[-1] < n:
        sizes.append(min(n, sizes[-1] * growth))
    return sizes


def spending(total: float, sizes: Sequence[int]) -> list[float]:
    r"""The error spent at each look: linear alpha-spending [LD83], ``total * (N_k - N_{k-1}) / N_K``.

    They sum to ``total`` (up to rounding, which is downward: each share is rounded to the float below).

    Examples
    --------
    >>> [round(a, 6) for a in spending(0.05, [10000, 40000, 160000, 640000, 1000000])]
    [0.0005, 0.0015, 0.006, 0.024, 0.018]
    """
    last = sizes[-1]
    prev = 0
    out = []
    for s in sizes:
        out.append(math.nextafter(total * (s - prev) / last, 0.0))
        prev = s
    return out


def batch_split(b: int, selection: float) -> int:
    """Rows of a batch of ``b`` draws that select (its first rows; the rest measure): at least one of each when
    ``b >= 2``; a single draw measures."""
    return min(b - 1, max(1, int(b * selection))) if b >= 2 else 0


def per_bound_level(confidence: float, tests: int) -> float:
    """Bonferroni: each of the ``2 * tests`` one-sided bounds at level ``(1 - confidence) / (2 tests)``."""
    return (1.0 - confidence) / (2 * max(1, tests))


__all__ = [
    "Candidate",
    "Curve",
    "Measured",
    "Statistic",
    "FIRST_ROUND",
    "GROWTH",
    "THRESHOLDS",
    "batch_split",
    "choose",
    "cp_upper",
    "epsilon_lower",
    "measure",
    "per_bound_level",
    "round_sizes",
    "select",
    "spending",
    "split_sizes",
]
