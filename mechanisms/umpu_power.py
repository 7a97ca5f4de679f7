r"""Exact power curves of odds-ratio tests with public margins: Semi-DP UMPU vs Fisher vs naive DP.

Setting (``docs/reference/semi-dp.md`` Sec. 6; [CA24, Sec. 5.3]). Given the one-way margins
``t`` of a :math:`2\times2` table, :math:`X_{11}\mid t\sim\mathrm{FNCH}(n_{1\cdot},
n_{2\cdot},n_{\cdot1};\theta)`; every test below has conditional size **exactly**
:math:`\alpha` at :math:`\theta_0` (Neyman structure) and its conditional power

.. math:: \beta_\phi(\theta)=\sum_{x=L}^{U}p_\theta(x)\,\phi(x)

is computed **exactly** (no simulation) from the log-space FNCH pmf
(:class:`~mechanisms.fnch.FisherNoncentralHypergeometric`), summed with ``math.fsum``.
Only the one-sided alternative :math:`H_1:\theta>\theta_0` (``"greater"``) is covered.

The three tests
---------------
1. **Semi-DP UMPU** [CA24, Thm. 37]: :math:`\phi^*(x)=F_N(x-m)`, ``F_N`` the CND of
   the target ``f`` (``noise``), :math:`f`-DP on :math:`(\mathcal D_t,A_3)`; its power
   is :meth:`SemiDPOddsRatioTest.power <mechanisms.umpu.SemiDPOddsRatioTest.power>`.
2. **Non-private UMPU conditional test** (randomised one-sided Fisher exact test)
   [Lehmann & Romano, *Testing Statistical Hypotheses*, 3rd ed., Sec. 4.5-4.6]: reject
   when :math:`x_{11}>c`, with probability :math:`\gamma` when :math:`x_{11}=c`, where
   :math:`P_{\theta_0}(X>c)\le\alpha<P_{\theta_0}(X\ge c)` and
   :math:`\gamma=(\alpha-P_{\theta_0}(X>c))/p_{\theta_0}(c)\in[0,1)`. By the
   Neyman--Pearson lemma (monotone likelihood ratio in :math:`x_{11}`) it is the most
   powerful test of conditional size :math:`\alpha` for every :math:`\theta>\theta_0`;
   every private test in the family (4) has that size, so it upper-bounds both private
   curves pointwise on :math:`\theta\ge\theta_0`.
3. **Naive DP test** (ignores the Semi-DP structure). It treats :math:`x_{11}` as a
   statistic of sensitivity 1 under ordinary (replace-one, :math:`A_1`) adjacency and
   reaches the target :math:`f` on :math:`(\mathcal D_t,A_3)` by **group privacy**
   [Dong, Roth & Su 2022, Thm. 2.14]: a mechanism that is :math:`g`-DP on :math:`A_1`
   is :math:`g^{\circ3}`-DP (paper convention; std :math:`1-(1-g)^{\circ3}`) on pairs
   at Hamming distance :math:`\le3`, i.e. on :math:`A_3`. So it needs a :math:`g` with
   :math:`g^{\circ3}\ge f` and uses the CND of ``g``:

   * ``Tulap(eps, delta)`` :math:`\to` ``Tulap(eps/3, delta')`` with
     :math:`\delta'=\delta/(1+e^{\varepsilon/3}+e^{2\varepsilon/3})`, because
     :math:`f_{\varepsilon/3,\delta'}^{\circ3}\ge f_{\varepsilon,\delta}` (group privacy
     of approximate DP: :math:`(k\varepsilon',\delta'\sum_{i<k}e^{i\varepsilon'})`);
     for :math:`\delta=0` this is ``Tulap(eps/3)`` and the inequality
     :math:`f_{\varepsilon/3,0}^{\circ3}\ge f_{\varepsilon,0}` holds with equality near
     :math:`\alpha\in\{0,1\}` and strictly in between (checked, up to the ulp-level rounding of the PL curves, by
     :func:`group_inequality_holds`);
   * ``GaussianCND(mu)`` :math:`\to` ``GaussianCND(mu/3)``, because
     :math:`G_{\mu/3}^{\circ3}=G_\mu` exactly [DRS22, Thm. 2.14].

   The test is then the same Theorem-37 construction with this weaker noise,
   :math:`\phi_{\rm naive}(x)=F_{N'}(x-m')`. It is :math:`f`-DP on :math:`(\mathcal D_t,A_3)`
   with conditional size :math:`\alpha`, so it lies in :math:`\Phi_f` and the Semi-DP
   UMPU test, being UMP there [CA24, Thm. 37], is at least as powerful for every
   :math:`\theta>\theta_0`.

Hence, for :math:`\theta\ge\theta_0`: Fisher :math:`\ge` Semi-DP :math:`\ge` naive, all
equal to :math:`\alpha` at :math:`\theta_0` (and all below :math:`\alpha` for
:math:`\theta<\theta_0`, where the order reverses).

References
----------
[CA24] Cho & Awan (2024), Semi-DP, Thm. 37. [DRS22] Dong, Roth & Su (2022), Gaussian
differential privacy, JRSS-B, Thm. 2.14. Lehmann & Romano, Testing Statistical
Hypotheses (UMPU tests for exponential families, the conditional 2x2 test).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import ArrayLike, NDArray

from semidp.accountant.core.arguments import check_in_interval, check_positive
from semidp.accountant.core.errors import InvalidArgument
from semidp.accountant.profiles.tradeoff import TradeoffCurve
from semidp.mechanisms.cnd import CanonicalNoise, GaussianCND, Tulap
from semidp.mechanisms.umpu import SemiDPOddsRatioTest, TableMargins

__all__ = [
    "GROUP_SIZE",
    "FisherConditionalTest",
    "PowerCurves",
    "group_inequality_holds",
    "naive_group_noise",
    "power_curves",
]

FloatArray = NDArray[np.float64]

GROUP_SIZE = 3
"""``a(t) = 3``: Hamming radius of the semi-adjacency :math:`A_3` for 2x2 tables with margins."""

_LOG_TINY = -745.2  # exp() of anything below is 0.0 in double precision


def _fsum_exp(logp: FloatArray) -> float:
    keep = logp[logp > _LOG_TINY]
    return math.fsum(np.exp(keep).tolist())


# ======================================================================================
# non-private UMPU conditional test (randomised one-sided Fisher exact test)
# ======================================================================================


@dataclass(frozen=True, slots=True, eq=False)
class FisherConditionalTest:
    r"""The randomised one-sided Fisher exact test, the non-private UMPU conditional test.

    Rejects :math:`H_0:\theta\le\theta_0` for :math:`x_{11}>c`, and with probability
    :math:`\gamma` at :math:`x_{11}=c`, so that the conditional size is exactly
    :math:`\alpha` under :math:`\theta_0` [Lehmann & Romano, TSH, Sec. 4.5-4.6].

    Parameters
    ----------
    margins:
        The one-way margins.
    theta0:
        Null odds ratio (``> 0``).
    alpha:
        Level in ``(0, 1)``.

    Examples
    --------
    >>> t = FisherConditionalTest(TableMargins((5, 5), (4, 6)))
    >>> t.c, round(t.gamma, 6), abs(t.size() - 0.05) < 1e-15
    (3, 0.11, True)
    """

    margins: TableMargins
    """The invariant one-way margins."""
    theta0: float = 1.0
    """Null odds ratio."""
    alpha: float = 0.05
    """Level (exact conditional size)."""
    c: int = field(init=False, default=0)
    """Randomisation point: reject above ``c``."""
    gamma: float = field(init=False, default=0.0)
    r"""Rejection probability at :math:`x_{11}=c`, in ``[0, 1)``."""

    def __post_init__(self) -> None:
        if not isinstance(self.margins, TableMargins):
            raise InvalidArgument(f"margins={self.margins!r} must be a TableMargins.")
        object.__setattr__(self, "theta0", check_positive("theta0", self.theta0))
        a = check_in_interval("alpha", self.alpha, 0.0, 1.0, lo_open=True, hi_open=True)
        object.__setattr__(self, "alpha", a)
        lo, logp = self.margins.null(self.theta0).log_pmf_table()
        n = len(logp)
        # c = smallest x with P(X > x) <= alpha: locate with float tail sums, then
        # settle with exactly rounded (fsum) tails
        probs = np.exp(logp)
        tails = np.cumsum(probs[::-1])[::-1]  # tails[i] ~ P(X >= lo + i)
        over = np.nonzero(tails > a)[0]
        idx = int(over[-1]) if over.size else 0

        def above_of(i: int) -> float:  # P(X > lo + i)
            return _fsum_exp(logp[i + 1 :])

        while idx + 1 < n and above_of(idx) > a:
            idx += 1
        while idx > 0 and above_of(idx - 1) <= a:
            idx -= 1
        above = above_of(idx)
        # P(X > lo + idx) = above <= alpha < P(X >= lo + idx) (or idx = 0)
        p_c = float(probs[idx])
        gamma = (a - above) / p_c if p_c > 0 else 0.0
        object.__setattr__(self, "c", lo + idx)
        object.__setattr__(self, "gamma", min(max(gamma, 0.0), 1.0))

    def phi(self, x11: ArrayLike) -> FloatArray:
        r""":math:`\phi(x)=1\{x>c\}+\gamma 1\{x=c\}`."""
        x = np.asarray(x11, dtype=np.float64)
        return np.asarray(np.where(x > self.c, 1.0, np.where(x == self.c, self.gamma, 0.0)))

    def power(self, theta: float) -> float:
        r"""Exact conditional power :math:`P_\theta(X>c)+\gamma\,p_\theta(c)`."""
        lo, logp = self.margins.null(check_positive("theta", theta)).log_pmf_table()
        k = self.c - lo
        return math.fsum([_fsum_exp(logp[k + 1 :]), self.gamma * math.exp(logp[k])])

    def size(self) -> float:
        r"""Exact conditional size at :math:`\theta_0` (equals ``alpha`` up to rounding)."""
        return self.power(self.theta0)


# ======================================================================================
# naive DP test: group privacy from A_1 to A_3
# ======================================================================================


def naive_group_noise(noise: CanonicalNoise, k: int = GROUP_SIZE) -> CanonicalNoise:
    r"""The CND of a ``g`` with :math:`g^{\circ k}\ge f` (group privacy [DRS22, Thm. 2.14]).

    ``Tulap(eps, delta)`` :math:`\to` ``Tulap(eps/k, delta/sum_{i<k} e^{i eps/k})``;
    ``GaussianCND(mu)`` :math:`\to` ``GaussianCND(mu/k)`` (:math:`G_{\mu/k}^{\circ k}=G_\mu`).
    Other CNDs raise :class:`~accountant.core.errors.InvalidArgument` (no closed-form ``g``).
    """
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise InvalidArgument(f"k={k!r} must be a positive integer.")
    if isinstance(noise, GaussianCND):
        return GaussianCND(noise.mu / k)
    if isinstance(noise, Tulap):
        e = noise.epsilon / k
        d = noise.delta / math.fsum(math.exp(i * e) for i in range(k)) if noise.delta > 0 else 0.0
        return Tulap(e, d)
    raise InvalidArgument(
        f"noise={noise!r}: the naive group-privacy calibration is implemented for Tulap and GaussianCND only."
    )


def group_inequality_holds(epsilon: float, delta: float = 0.0, k: int = GROUP_SIZE, *, slack: float = 1e-9) -> bool:
    r"""Check :math:`f_{\varepsilon/k,\delta'}^{\circ k}\ge f_{\varepsilon,\delta}` (paper convention).

    Uses :meth:`TradeoffCurve.group <accountant.profiles.tradeoff.TradeoffCurve.group>` (paper
    convention :math:`f^{\circ k}`) and :meth:`~accountant.profiles.tradeoff.TradeoffCurve.dominates`
    (pointwise order, the same in both conventions; exact for piecewise-linear curves),
    with ``delta'`` as in :func:`naive_group_noise`.

    The two sides are *equal* near :math:`\alpha\in\{0,1\}` (e.g. for
    :math:`\delta=0` and small paper-:math:`\alpha`, both are :math:`e^{-\varepsilon}\alpha`),
    while :class:`~accountant.profiles.tradeoff.TradeoffCurve` rounds every curve *down* by
    a few ulps (so it stays a valid lower bound); an exact comparison of the two
    rounded curves therefore fails by ~1e-16 where they coincide. The right-hand side
    is taken as :math:`f_{\varepsilon(1+s),\,\delta+s}` with ``s = slack`` (a curve
    below :math:`f_{\varepsilon,\delta}` by :math:`O(s)`); ``slack=0`` is the raw
    exact comparison.

    Examples
    --------
    >>> group_inequality_holds(1.0), group_inequality_holds(2.0, 1e-3)
    (True, True)
    """
    eps = check_positive("epsilon", epsilon)
    s = check_in_interval("slack", slack, 0.0, 1e-3)
    g = naive_group_noise(Tulap(eps, delta), k)
    assert isinstance(g, Tulap)
    grouped = TradeoffCurve.from_approx_dp(g.epsilon, g.delta).group(k)
    target = TradeoffCurve.from_approx_dp(eps * (1.0 + s), min(1.0, delta + s))
    return grouped.dominates(target)


# ======================================================================================
# power curves
# ======================================================================================


@dataclass(frozen=True, slots=True, eq=False)
class PowerCurves:
    r"""Exact conditional power of the three tests on a grid of odds ratios.

    Attributes ``semi_dp``, ``fisher`` and ``naive`` are arrays aligned with ``thetas``.
    """

    thetas: FloatArray
    """Odds ratios (increasing)."""
    semi_dp: FloatArray
    """Power of the Semi-DP UMPU test [CA24, Thm. 37]."""
    fisher: FloatArray
    """Power of the randomised one-sided Fisher exact test (non-private UMPU)."""
    naive: FloatArray
    """Power of the naive DP test calibrated by group privacy (:func:`naive_group_noise`)."""
    alpha: float
    """Level (exact conditional size of all three)."""
    theta0: float
    """Null odds ratio."""
    margins: TableMargins
    """Margins the curves are conditional on."""
    noise: CanonicalNoise
    """CND of the Semi-DP test (target ``f`` on :math:`(\\mathcal D_t, A_3)`)."""
    naive_noise: CanonicalNoise
    """CND of the naive test (``g`` with :math:`g^{\\circ3}\\ge f` on :math:`A_1`)."""
    semi_dp_test: SemiDPOddsRatioTest = field(repr=False)
    """The calibrated Semi-DP test."""
    naive_test: SemiDPOddsRatioTest = field(repr=False)
    """The calibrated naive test (same construction, noise ``naive_noise``)."""
    fisher_test: FisherConditionalTest = field(repr=False)
    """The calibrated Fisher test."""


def power_curves(
    margins: TableMargins,
    noise: CanonicalNoise,
    *,
    theta0: float = 1.0,
    alpha: float = 0.05,
    thetas: ArrayLike | None = None,
    naive_noise: CanonicalNoise | None = None,
) -> PowerCurves:
    r"""Exact power curves of the Semi-DP UMPU, Fisher and naive group-privacy DP tests.

    Parameters
    ----------
    margins:
        One-way margins of the table.
    noise:
        CND of the target ``f`` (``Tulap`` or ``GaussianCND``; any CND if
        ``naive_noise`` is given).
    theta0:
        Null odds ratio; the alternative is :math:`\theta>\theta_0`.
    alpha:
        Level in ``(0, 1)``.
    thetas:
        Positive odds ratios; default ``theta0 * 2**linspace(-2, 4, 49)`` (contains
        ``theta0``). Sorted and deduplicated.
    naive_noise:
        Override the group-privacy calibration (default :func:`naive_group_noise`).

    Returns
    -------
    PowerCurves

    Examples
    --------
    >>> pc = power_curves(TableMargins((50, 50), (40, 60)), Tulap(1.0), thetas=[1.0, 4.0])
    >>> bool(pc.fisher[1] >= pc.semi_dp[1] >= pc.naive[1])
    True
    """
    th0 = check_positive("theta0", theta0)
    if thetas is None:
        grid = th0 * np.exp2(np.linspace(-2.0, 4.0, 49))
        grid[16] = th0
    else:
        raw = np.asarray(thetas, dtype=np.float64).ravel()
        if raw.size == 0 or not np.all(np.isfinite(raw)) or np.any(raw <= 0):
            raise InvalidArgument(f"thetas={thetas!r} must be finite positive odds ratios.")
        grid = np.unique(raw)
    semi = SemiDPOddsRatioTest(margins, noise, th0, alpha, "greater")
    nn = naive_group_noise(noise) if naive_noise is None else naive_noise
    naive = SemiDPOddsRatioTest(margins, nn, th0, alpha, "greater")
    fisher = FisherConditionalTest(margins, th0, alpha)
    ts = [float(t) for t in grid]
    return PowerCurves(
        thetas=grid,
        semi_dp=np.array([semi.power(t) for t in ts]),
        fisher=np.array([fisher.power(t) for t in ts]),
        naive=np.array([naive.power(t) for t in ts]),
        alpha=semi.alpha,
        theta0=th0,
        margins=margins,
        noise=noise,
        naive_noise=nn,
        semi_dp_test=semi,
        naive_test=naive,
        fisher_test=fisher,
    )
