r"""The Semi-DP UMPU test for the odds ratio of a 2x2 table with public margins [CA24, Thm. 37].

Setting [CA24, Sec. 5.3] (``docs/reference/semi-dp.md`` Sec. 6). A :math:`2\times2` table
:math:`X\sim\mathrm{Multinomial}(n,\pi)` with odds ratio
:math:`\theta=\pi_{11}\pi_{22}/(\pi_{12}\pi_{21})` is released next to its **exact**
one-way margins :math:`t=(n_{1\cdot},n_{2\cdot},n_{\cdot1},n_{\cdot2})`. Given
:math:`t` the table is a function of :math:`x=X_{11}`, tables in
:math:`\mathcal D_t` at Hamming distance :math:`\le a(t)=3` differ by at most 1 in
:math:`x_{11}` (constraint (2)), and under :math:`\theta=\theta_0`
:math:`X_{11}\mid t` is Fisher noncentral hypergeometric
(:class:`~mechanisms.fnch.FisherNoncentralHypergeometric`).

The test (Theorem 37; DP Neyman--Pearson lemma [AV23, Thm. 4.8] = reference Lemma 47).
For a symmetric nontrivial tradeoff function :math:`f` with canonical noise
distribution :math:`F_N` (:mod:`mechanisms.cnd`) and :math:`\alpha\in(0,1)`, for
:math:`H_0:\theta\le\theta_0` vs :math:`H_1:\theta>\theta_0`:

.. math:: \phi^*(x)=F_N(x-m),\qquad \sum_{x=L}^{U}p_{\theta_0}(x)\,F_N(x-m)=\alpha \tag{5}

is UMP among tests that are :math:`f`-DP on :math:`(\mathcal D_t,A_3)` and have
conditional size exactly :math:`\alpha` (Neyman structure), hence Semi-DP UMPU. It is
implemented as a release plus post-processing: :math:`Z=X_{11}+N`,
:math:`N\sim F_N`, is :math:`f`-DP on :math:`(\mathcal D_t,A_3)`, and

.. math:: p(Z)=\sum_{x=L}^{U}p_{\theta_0}(x)\,F_N(x-Z) \tag{6}

is a valid p-value with :math:`P(p(Z)\le\alpha\mid X)=\phi^*(X)` (because ``p`` is
decreasing in ``Z`` and ``p(m) = alpha``). ``m`` is found by bracketing root-finding
(Brent) of (5): the size is continuous and strictly decreasing in ``m`` wherever some
``F_N(x - m)`` lies in ``(0, 1)``.

Alternatives
------------
``"greater"`` (:math:`H_1:\theta>\theta_0`, the reference's) as above.
``"less"`` (:math:`H_1:\theta<\theta_0`) is its mirror image: :math:`\phi^*(x)=F_N(m-x)`,
:math:`p(Z)=\sum_x p_{\theta_0}(x)F_N(Z-x)`; UMP by the same argument applied to
:math:`-X_{11}` (the likelihood ratio is monotone in :math:`-x`).

``"two-sided"`` (:math:`H_0:\theta=\theta_0`) -- **documented variant, not part of
Theorem 37.** The test rejects when :math:`Z\le m_1` or :math:`Z\ge m_2`, i.e.
:math:`\phi(x)=F_N(m_1-x)+F_N(x-m_2)` (a post-processing of ``Z``, hence
:math:`f`-DP on :math:`(\mathcal D_t,A_3)`), with the two conditions of the classical
unbiased two-sided test of a one-parameter exponential family [Lehmann & Romano,
TSH, Sec. 4.2] (the Neyman-structure argument of [CA24, Lemmas 45/46] conditions on
``t`` in the same way):

* size: :math:`E_{\theta_0}\phi(X)=\alpha`;
* local unbiasedness: :math:`\frac{d}{d\log\theta}E_\theta\phi(X)\big|_{\theta_0}
  =\mathrm{Cov}_{\theta_0}(X,\phi(X))=0`.

Writing :math:`h(t)=\mathrm{Cov}_{\theta_0}(X,F_N(X-t))` (positive, unimodal when the
noise density is PF2 -- Gaussian, and Tulap on the integer lattice), the second
condition is :math:`h(m_1)=h(m_2)` with :math:`m_1` left and :math:`m_2` right of the
maximum; the size then decreases as the pair moves outwards, and ``m_2`` is found by
bracketing root-finding. The p-value of ``Z`` is the size of the test that has ``Z`` on
its boundary (its partner is the other point at the same level of ``h``), which makes
:math:`p(Z)\le\alpha` exactly the decision at level :math:`\alpha`. For Tulap noise
``h`` is piecewise linear and can be flat at its maximum; inside that plateau the
boundary is not determined and the p-value is 1 (the conservative choice). When
:math:`\phi-\alpha` has the sign pattern :math:`(+,-,+)` in ``x`` (true for PF2
noise), the power function has a minimum at :math:`\theta_0` (variation
diminishing), so the test is **unbiased**; it is the natural DP analogue of the UMPU
two-sided test, but we do **not** claim it is UMPU among all :math:`f`-DP tests
(Theorem 37 is one-sided). If the margins fix :math:`X_{11}` (``L = U``) the level is
split equally between the two tails.

Numerics
--------
The null is an exact log-space table (:mod:`mechanisms.fnch`). (5) is solved on the
window of the support where :math:`p_{\theta_0}(x)\ge\alpha e^{-60}` (the rest moves
the size by less than ``alpha * 1e-20``), as an offset from an integer centre so that
``m`` is resolved to about one ulp; the reported ``size`` re-sums
:math:`\sum_x p_{\theta_0}(x)\phi^*(x)` over every entry of the support whose
probability is a nonzero double, and equals ``alpha`` up to the effect of rounding ``m``
to a double: relative ``~1e-16`` for small tables, ``~1e-13`` at ``n = 10**6``, and up to
``~1e-11`` for tiny ``alpha`` with truncated Tulap noise, whose CDF is steep in relative
terms near its support edge (``alpha`` always lies between the sizes at the two doubles
adjacent to ``m``; ``tests/test_umpu.py`` checks exactly that).
p-values (6) are log-sum-exps with the CND's ``logcdf`` (closed form for Gaussian and
Tulap) over the window where :math:`p_{\theta_0}(x)\ge e^{-800}`, or over the whole
support when the omitted mass cannot be shown negligible, so they stay accurate far
below ``1e-300`` (:meth:`SemiDPOddsRatioTest.log_pvalue`).

The relation is :math:`A_3` because :math:`a(t)=3` is the worst case over margins
(``docs/reference/semi-dp.md`` T-A3..T-A5); where :math:`a(t)=2` (e.g. T-A2) the statement on
:math:`A_3` implies the one on :math:`A_{a(t)}`: any two conforming tables within
Hamming distance 3 differ by at most 1 in :math:`x_{11}` (T-S1).

Samplers are for research/auditing, not hardened against floating-point side channels.

References
----------
[CA24]  Y. Cho, J. Awan, "Formal Privacy Guarantees with Invariant Statistics",
        arXiv:2410.17468v1, Sec. 5.3, Thm. 37 (reference numbering), eqs. (5)-(6).
[AV23]  J. Awan, S. Vadhan, "Canonical Noise Distributions and Private Hypothesis
        Tests", Ann. Statist. 51(2), 2023, Thm. 4.8 (reference Lemma 47).
[AS18]  J. Awan, A. Slavković, "Differentially Private Uniformly Most Powerful
        Tests for Binomial Data", NeurIPS 2018 (the one-sample analogue).
[LR05]  E. Lehmann, J. Romano, "Testing Statistical Hypotheses", 3rd ed., Sec. 4.2
        (unbiased two-sided tests in exponential families).
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import optimize

from semidp.accountant.core.arguments import check_in_interval, check_positive, check_rng
from semidp.accountant.core.errors import InvalidArgument
from semidp.accountant.guarantees.definitions import Guarantee
from semidp.accountant.guarantees.relations import Relation, check_same_relation
from semidp.mechanisms.alternatives import ALTERNATIVE_H1, Alternative, check_alternative  # noqa: F401  (re-exported)
from semidp.mechanisms.cnd import CanonicalNoise
from semidp.mechanisms.monotone_roots import brent_root, logsumexp, polish_root  # noqa: F401  (re-exported)
from semidp.mechanisms.protocol import releases_at_count
from semidp.mechanisms.table_margins import SEMI_ADJACENT_RADIUS, ConfidenceInterval, TableMargins  # noqa: F401  (re-exported)

__all__ = [
    "Alternative",
    "ConfidenceInterval",
    "SemiDPOddsRatioTest",
    "TableMargins",
    "UMPUTestResult",
    "umpu_odds_ratio_test",
]


FloatArray = NDArray[np.float64]


#: (5) is solved on the support window where p(x) >= alpha * exp(-_WINDOW_NATS).
_WINDOW_NATS = 60.0


#: p-values are first summed on the window where p(x) >= exp(-_PVALUE_NATS); the whole
#: support is used when the omitted mass cannot be shown negligible.
_PVALUE_NATS = 800.0


#: log of the smallest positive double: entries below contribute nothing to a float sum.
_LOG_TINY = -745.2


@dataclass(frozen=True, slots=True)
class UMPUTestResult:
    r"""Outcome of the Semi-DP UMPU odds-ratio test (scipy-style result object).

    Examples
    --------
    >>> from semidp.mechanisms.cnd import Tulap
    >>> test = SemiDPOddsRatioTest(TableMargins((5, 5), (4, 6)), Tulap(1.0))
    >>> r = test.result(3.7)
    >>> round(r.pvalue, 8), round(r.m, 8), r.reject         # T-U1
    (0.12014987, 4.51867827, False)
    >>> r.guarantee.relation.radius, r.guarantee.epsilon
    (3, 1.0)
    """

    statistic: float
    r"""The private release :math:`Z=X_{11}+N`."""
    pvalue: float
    r"""p-value (6) (``"greater"``); its mirror or the two-sided version otherwise."""
    alternative: Alternative
    """The alternative hypothesis."""
    m: float
    r"""Threshold of (5): reject iff :math:`Z\ge m` (``"greater"``), :math:`Z\le m` (``"less"``);
    for ``"two-sided"`` the upper threshold :math:`m_2`."""
    m_lower: float | None
    r"""Two-sided only: the lower threshold :math:`m_1` (reject iff :math:`Z\le m_1` or :math:`Z\ge m_2`)."""
    alpha: float
    """The level the test was calibrated to."""
    reject: bool
    """``pvalue <= alpha`` (equivalently, ``Z`` in the rejection region)."""
    size: float
    r"""Exact conditional size :math:`\sum_x p_{\theta_0}(x)\phi^*(x)` over the whole support (= alpha)."""
    theta0: float
    """The null odds ratio."""
    margins: TableMargins
    """The invariant margins."""
    guarantee: Guarantee
    r"""The privacy guarantee of the release (f-DP on :math:`(\mathcal D_t, A_3)`)."""
    test: SemiDPOddsRatioTest = field(repr=False, compare=False)
    """The calibrated test (for further p-values, power, confidence intervals)."""

    def reject_at(self, level: float) -> bool:
        """Decision at another level: ``pvalue <= level`` (valid because the p-value is)."""
        lv = check_in_interval("level", level, 0.0, 1.0)
        return self.pvalue <= lv

    def confidence_interval(self, confidence_level: float = 0.95) -> ConfidenceInterval:
        r"""Confidence interval for :math:`\theta` by inverting the test over :math:`\theta_0`.

        ``"greater"``: :math:`(\theta_L,\infty)` with :math:`p(Z;\theta_L)=1-\gamma`
        (the p-value (6) is increasing in :math:`\theta_0`, as :math:`p_{\theta}`
        is stochastically increasing); ``"less"``: :math:`(0,\theta_U)`;
        ``"two-sided"``: the equal-tailed interval made of the two one-sided bounds
        at level :math:`(1+\gamma)/2` each (valid by the union bound; it is *not* the
        inversion of the unbiased two-sided test). A bound of ``0.0``/``inf`` means
        the constraint is inactive; ``(inf, inf)`` (or ``(0, 0)``) is the empty set,
        which occurs with probability at most ``1 - confidence_level``.
        """
        g = check_in_interval("confidence_level", confidence_level, 0.0, 1.0, lo_open=True, hi_open=True)
        t = self.test
        z = self.statistic
        if self.alternative == "greater":
            return ConfidenceInterval(t._theta_bound(z, 1.0 - g, "greater"), math.inf)
        if self.alternative == "less":
            return ConfidenceInterval(0.0, t._theta_bound(z, 1.0 - g, "less"))
        a = (1.0 - g) / 2.0
        return ConfidenceInterval(t._theta_bound(z, a, "greater"), t._theta_bound(z, a, "less"))


@dataclass(frozen=True, slots=True, eq=False)
class SemiDPOddsRatioTest:
    r"""The Semi-DP UMPU test of the odds ratio, calibrated for given margins [CA24, Thm. 37].

    Parameters
    ----------
    margins:
        The invariant margins (:class:`TableMargins`).
    noise:
        A canonical noise distribution for the target ``f`` (:class:`~mechanisms.cnd.Tulap`,
        :class:`~mechanisms.cnd.GaussianCND`, :func:`~mechanisms.cnd.cnd_from_tradeoff`).
    theta0:
        Null odds ratio (``> 0``).
    alpha:
        Level, in ``(0, 1)``; the conditional size is exactly ``alpha``.
    alternative:
        ``"greater"`` (default, the reference's), ``"less"`` or ``"two-sided"``
        (see the module docstring: the two-sided test is the unbiased variant, not
        covered by Theorem 37).

    Examples
    --------
    >>> from semidp.mechanisms.cnd import GaussianCND
    >>> test = SemiDPOddsRatioTest(TableMargins((5, 5), (4, 6)), GaussianCND(1.0))
    >>> round(test.m, 8), round(test.pvalue(5.2), 8)                      # T-U1
    (4.12440303, 0.00638049)
    >>> [round(float(v), 8) for v in test.phi(np.arange(5))]
    [1.858e-05, 0.00089083, 0.01681823, 0.13042104, 0.45049809]
    >>> abs(test.size() - 0.05) < 1e-14
    True
    >>> z = test.release(3, rng=np.random.default_rng(0))     # the private statistic
    """

    margins: TableMargins
    """The invariant one-way margins."""
    noise: CanonicalNoise
    """Canonical noise distribution ``F_N`` of the target tradeoff function."""
    theta0: float = 1.0
    """Null odds ratio."""
    alpha: float = 0.05
    """Level (exact conditional size)."""
    alternative: Alternative = "greater"
    """Alternative hypothesis."""
    m: float = field(init=False, default=math.nan)
    r"""Threshold solving (5) (upper threshold :math:`m_2` for two-sided)."""
    m_lower: float | None = field(init=False, default=None)
    r"""Two-sided only: the lower threshold :math:`m_1`."""
    _lo: int = field(init=False, default=0, repr=False)
    _logp: FloatArray = field(init=False, repr=False, default_factory=lambda: np.zeros(0))
    _mode: int = field(init=False, default=0, repr=False)

    def __post_init__(self) -> None:
        if not isinstance(self.margins, TableMargins):
            raise InvalidArgument(f"margins={self.margins!r} must be a TableMargins.")
        if not isinstance(self.noise, CanonicalNoise):
            raise InvalidArgument(
                f"noise={self.noise!r} must be a canonical noise distribution "
                "(mechanisms.cnd.Tulap, GaussianCND or cnd_from_tradeoff(...))."
            )
        object.__setattr__(self, "theta0", check_positive("theta0", self.theta0))
        object.__setattr__(self, "alpha", check_in_interval("alpha", self.alpha, 0.0, 1.0, lo_open=True, hi_open=True))
        object.__setattr__(self, "alternative", check_alternative(self.alternative))
        null = self.margins.null(self.theta0)
        lo, logp = null.log_pmf_table()
        object.__setattr__(self, "_lo", lo)
        object.__setattr__(self, "_logp", logp)
        object.__setattr__(self, "_mode", lo + int(np.argmax(logp)))
        if self.alternative == "two-sided":
            m1, m2 = self._solve_two_sided()
            object.__setattr__(self, "m", m2)
            object.__setattr__(self, "m_lower", m1)
        else:
            object.__setattr__(self, "m", self._solve_one_sided())

    # ---- helpers ----------------------------------------------------------------------

    @property
    def _sign(self) -> float:
        return -1.0 if self.alternative == "less" else 1.0

    def _xs(self, sl: slice | None = None) -> FloatArray:
        n = len(self._logp)
        idx = np.arange(n, dtype=np.float64) if sl is None else np.arange(n, dtype=np.float64)[sl]
        return idx + self._lo

    def _window(self, nats: float) -> slice:
        """Contiguous index range where ``log p >= max log p - nats`` (the pmf is unimodal)."""
        keep = np.nonzero(self._logp >= -nats)[0]
        return slice(int(keep[0]), int(keep[-1]) + 1)

    def _log_tail(self, logp: FloatArray, xs: FloatArray, shift: float, sign: float) -> float:
        r""":math:`\log\sum_x p(x)F_N(\mathrm{sign}\,(x-\mathrm{shift}))` in log space."""
        with np.errstate(divide="ignore"):
            lf = np.asarray(self.noise.logcdf(sign * (xs - shift)), dtype=np.float64)
        return logsumexp(logp + lf)

    # ---- one-sided calibration (5) ------------------------------------------------------

    def _solve_one_sided(self) -> float:
        a = self.alpha
        sg = self._sign
        sl = self._window(-math.log(a) + _WINDOW_NATS)
        lp = self._logp[sl]
        xs = self._xs(sl)
        la = math.log(a)
        x0, x1 = float(xs[0]), float(xs[-1])
        # solve for the offset from an integer centre c0: x - c0 is exact, so the root's
        # relative tolerance applies to a small number and m is resolved to ~1 ulp
        c0 = float(round(0.5 * (x0 + x1)))
        dx = xs - c0

        def g(delta: float) -> float:  # size(c0 + delta)/alpha - 1 on the window; finite
            with np.errstate(divide="ignore"):
                lf = np.asarray(self.noise.logcdf(sg * (dx - delta)), dtype=np.float64)
            return float(np.sum(np.exp(lp + lf - la))) - 1.0

        # brackets: sum p F(s(x - m)) lies between F(s(x_min - m)) and F(s(x_max - m))
        hi_q = float(self.noise.ppf(a / 2.0))  # F(ppf(a/2)) = a/2 < a, robust to rounding
        lo_q = float(self.noise.ppf(a + (1.0 - a) / 2.0))  # > a: covers the window's mass deficit
        if sg > 0:  # size decreasing in m; size(m_a) >= alpha >= size(m_b)
            d_a, d_b = (x0 - c0) - lo_q, (x1 - c0) - hi_q
        else:  # size of F(m - x) increasing in m
            d_a, d_b = (x1 - c0) + lo_q, (x0 - c0) + hi_q
        ga, gb = g(d_a), g(d_b)
        if ga == 0.0:
            return c0 + d_a
        if gb == 0.0:
            return c0 + d_b
        if not (ga > 0.0 > gb):  # pragma: no cover - the bracket is valid by construction
            raise InvalidArgument(f"internal: no sign change of the size equation on [{d_a}, {d_b}].")
        m = c0 + brent_root(g, min(d_a, d_b), max(d_a, d_b))
        # polish to the best double: Brent stops a few ulps away, which matters where the
        # size is steep in relative terms (e.g. near the edge of a truncated Tulap)
        return polish_root(lambda mm: g(mm - c0), m)

    # ---- two-sided calibration ------------------------------------------------------------

    def _two_sided_arrays(self, nats: float) -> tuple[FloatArray, FloatArray, FloatArray, float]:
        sl = self._window(nats)
        lp = self._logp[sl]
        xs = self._xs(sl)
        d = xs - self._mode  # centred: small integers, so the mean is accurate
        p = np.exp(lp)
        mu = float(np.sum(p * d) / np.sum(p))
        return lp, xs, d - mu, mu + self._mode

    @staticmethod
    def _log_signed(lw: FloatArray, dc: FloatArray) -> float:
        r"""``log sum_i dc_i exp(lw_i)`` (``-inf`` if the sum is not positive), in log space."""
        with np.errstate(divide="ignore"):
            lpos = logsumexp(lw[dc > 0] + np.log(dc[dc > 0]))
            lneg = logsumexp(lw[dc < 0] + np.log(-dc[dc < 0]))
        if lneg == -math.inf:
            return lpos
        if lpos <= lneg:
            return -math.inf
        return lpos + math.log1p(-math.exp(lneg - lpos))

    def _log_h_right(self, t: float, lp: FloatArray, xs: FloatArray, dc: FloatArray) -> float:
        r""":math:`\log h(t)`, :math:`h(t)=E[(X-\mu)F(X-t)]` as written (accurate for ``t`` right of the mean)."""
        with np.errstate(divide="ignore"):
            lw = lp + np.asarray(self.noise.logcdf(xs - t), dtype=np.float64)
        return self._log_signed(lw, dc)

    def _log_h_left(self, t: float, lp: FloatArray, xs: FloatArray, dc: FloatArray) -> float:
        r""":math:`\log h(t)` with :math:`h(t)=E[(\mu-X)F(t-X)]` (the same function, as
        :math:`E[X-\mu]=0`; accurate for ``t`` left of the mean)."""
        with np.errstate(divide="ignore"):
            lw = lp + np.asarray(self.noise.logcdf(t - xs), dtype=np.float64)
        return self._log_signed(lw, -dc)

    def _peak(self, lp: FloatArray, xs: FloatArray, dc: FloatArray, mean: float) -> float:
        """Maximiser ``t*`` of ``h`` (bounded Brent on ``[x_min - 1, x_max + 1]``)."""

        def neg_log_h(t: float) -> float:
            v = self._log_h_right(t, lp, xs, dc) if t >= mean else self._log_h_left(t, lp, xs, dc)
            return -v if v > -math.inf else math.inf

        r = optimize.minimize_scalar(
            neg_log_h,
            bounds=(float(xs[0]) - 1.0, float(xs[-1]) + 1.0),
            method="bounded",
            options={"xatol": 1e-10},
        )
        return float(r.x)

    def _plateau(self, arrays: tuple[FloatArray, FloatArray, FloatArray, float]) -> tuple[float, float]:
        """``[a, b]``: where ``h >= (1 - 1e-9) max h`` around the maximiser.

        For Tulap noise ``h`` is piecewise linear between half-integers and can be flat
        at its maximum, so ``h(m_1) = h(m_2)`` does not determine a pair inside the
        plateau; boundary points are taken outside it (and the p-value is 1 inside).
        """
        lp, xs, dc, mean = arrays
        tstar = self._peak(lp, xs, dc, mean)
        lmax = max(self._log_h_left(tstar, lp, xs, dc), self._log_h_right(tstar, lp, xs, dc))
        lthr = lmax + math.log1p(-1e-9)
        a = self._level_crossing(lambda s: self._log_h_left(s, lp, xs, dc) - lthr, tstar, -1.0)
        b = self._level_crossing(lambda s: self._log_h_right(s, lp, xs, dc) - lthr, tstar, 1.0)
        return a, b

    @staticmethod
    def _level_crossing(fn: Callable[[float], float], start: float, direction: float) -> float:
        """Root of ``fn`` (positive at ``start``, negative far out) going from ``start`` in ``direction``."""
        if fn(start) <= 0.0:
            return start
        step = 1.0
        prev = start
        cur = start + direction * step
        while fn(cur) > 0.0:
            prev = cur
            step *= 2.0
            cur = start + direction * step
            if step > 1e12:  # pragma: no cover - h -> 0 at +-inf
                raise InvalidArgument("internal: two-sided threshold not bracketed.")
        return brent_root(fn, min(prev, cur), max(prev, cur))

    def _partner(
        self,
        t: float,
        plateau: tuple[float, float],
        arrays: tuple[FloatArray, FloatArray, FloatArray, float],
    ) -> float:
        """The point on the other side of the plateau with the same ``h`` value as ``t``."""
        lp, xs, dc, _ = arrays
        a, b = plateau
        if a <= t <= b:
            return t
        if t > b:
            lv = self._log_h_right(t, lp, xs, dc)
            return self._level_crossing(lambda s: self._log_h_left(s, lp, xs, dc) - lv, a, -1.0)
        lv = self._log_h_left(t, lp, xs, dc)
        return self._level_crossing(lambda s: self._log_h_right(s, lp, xs, dc) - lv, b, 1.0)

    def _two_sided_log_size(self, m1: float, m2: float, lp: FloatArray, xs: FloatArray) -> float:
        r""":math:`\log(E[F_N(X-m_2)]+E[F_N(m_1-X)])` in log space."""
        up = self._log_tail(lp, xs, m2, 1.0)
        dn = self._log_tail(lp, xs, m1, -1.0)
        return float(np.logaddexp(up, dn))

    def _solve_two_sided(self) -> tuple[float, float]:
        lo, hi = self.margins.support()
        if lo == hi:
            # X11 is fixed by the margins: power is constant in theta, unbiasedness is
            # vacuous; split alpha equally between the two tails.
            q = float(self.noise.ppf(self.alpha / 2.0))
            return lo + q, lo - q
        arrays = self._two_sided_arrays(-math.log(self.alpha) + _WINDOW_NATS)
        lp, xs, _, _ = arrays
        plateau = self._plateau(arrays)

        def size_at(m2: float) -> float:
            m1 = self._partner(m2, plateau, arrays)
            return math.exp(self._two_sided_log_size(m1, m2, lp, xs)) - self.alpha

        # the size decreases from its plateau value (>= alpha for the usual alpha) to 0
        b = plateau[1]
        if size_at(b) <= 0.0:
            raise InvalidArgument(
                f"alpha={self.alpha!r} is too large for the unbiased two-sided test at these margins: "
                f"even the smallest acceptance region has size {size_at(b) + self.alpha:.6g}."
            )
        m2 = self._level_crossing(size_at, b, 1.0)
        return self._partner(m2, plateau, arrays), m2

    # ---- public API --------------------------------------------------------------------------

    def phi(self, x11: ArrayLike) -> float | FloatArray:
        r"""The test as a function of the confidential cell: :math:`P(\text{reject}\mid X_{11}=x)`.

        ``"greater"``: :math:`\phi^*(x)=F_N(x-m)`; ``"less"``: :math:`F_N(m-x)`;
        ``"two-sided"``: :math:`F_N(m_1-x)+F_N(x-m_2)`.
        """
        x = np.asarray(x11, dtype=np.float64)
        if self.alternative == "two-sided":
            m1 = -math.inf if self.m_lower is None else self.m_lower  # always set for two-sided
            val = self.noise.cdf(m1 - x) + self.noise.cdf(x - self.m)
        else:
            val = self.noise.cdf(self._sign * (x - self.m))
        return float(val) if np.ndim(val) == 0 else np.asarray(val, dtype=np.float64)

    def size(self) -> float:
        r"""Exact conditional size :math:`\sum_{x=L}^{U}p_{\theta_0}(x)\phi^*(x)` (fsum over the whole support)."""
        return self._power_with(self._lo, self._logp)

    def _power_with(self, lo: int, logp: FloatArray) -> float:
        # only entries whose probability is a nonzero double contribute to a float sum
        keep = np.nonzero(logp > _LOG_TINY)[0]
        sl = slice(int(keep[0]), int(keep[-1]) + 1)
        xs = lo + np.arange(sl.start, sl.stop, dtype=np.float64)
        ph = np.asarray(self.phi(xs), dtype=np.float64)
        return math.fsum((np.exp(logp[sl]) * ph).tolist())

    def power(self, theta: float) -> float:
        r"""Exact conditional power :math:`\sum_x p_\theta(x)\phi^*(x)` at odds ratio ``theta``."""
        lo, logp = self.margins.null(check_positive("theta", theta)).log_pmf_table()
        return self._power_with(lo, logp)

    def log_pvalue(self, z: float) -> float:
        r"""Natural log of the p-value of the release ``z`` (accurate in the far tails)."""
        zz = check_in_interval("z", z, -math.inf, math.inf)
        if self.alternative == "two-sided":
            return self._two_sided_log_pvalue(zz)
        return min(0.0, self._log_pvalue_with(self._lo, self._logp, zz, self._sign))

    def _log_pvalue_with(self, lo: int, logp: FloatArray, z: float, sign: float) -> float:
        r"""``log sum_x p(x) F(sign (x - z))``: window first, whole support if needed.

        Entries outside the window have ``p(x) < exp(-800)``; there are fewer than
        ``len(logp)`` of them and ``F <= 1``, so the omitted mass is below
        ``len(logp) * exp(-800)``. If that is not ``e^-40`` times smaller than the
        windowed sum, the whole support is summed instead.
        """
        keep = np.nonzero(logp >= -_PVALUE_NATS)[0]
        a, b = int(keep[0]), int(keep[-1]) + 1
        xs = lo + np.arange(a, b, dtype=np.float64)
        val = self._log_tail(logp[a:b], xs, z, sign)
        if a == 0 and b == len(logp):
            return val
        if math.log(len(logp)) - _PVALUE_NATS < val - 40.0:
            return val
        xs_all = lo + np.arange(len(logp), dtype=np.float64)
        return self._log_tail(logp, xs_all, z, sign)

    def pvalue(self, z: float) -> float:
        r"""The p-value (6) of the release ``z`` (or its mirror / two-sided version)."""
        return math.exp(self.log_pvalue(z))

    def _two_sided_log_pvalue(self, z: float) -> float:
        lo, hi = self.margins.support()
        if lo == hi:
            return min(0.0, math.log(2.0) + float(self.noise.logcdf(-abs(z - lo))))
        out = self._two_sided_log_pvalue_on(z, _PVALUE_NATS)
        if out < -_PVALUE_NATS + 60.0 + math.log(len(self._logp)):
            # the omitted entries (p < e^-800) might matter: use the whole support
            out = self._two_sided_log_pvalue_on(z, math.inf)
        return out

    def _two_sided_log_pvalue_on(self, z: float, nats: float) -> float:
        arrays = self._two_sided_arrays(nats)
        lp, xs, _, _ = arrays
        plateau = self._plateau(arrays)
        if plateau[0] <= z <= plateau[1]:
            return 0.0
        other = self._partner(z, plateau, arrays)
        m1, m2 = (other, z) if z > plateau[1] else (z, other)
        return min(0.0, self._two_sided_log_size(m1, m2, lp, xs))

    def _log_pvalue_at(self, z: float, theta: float, sign: float) -> float:
        lo, logp = self.margins.null(theta).log_pmf_table()
        return self._log_pvalue_with(lo, logp, z, sign)

    def _theta_bound(self, z: float, a: float, side: Literal["greater", "less"]) -> float:
        """One-sided confidence bound: the theta where the one-sided p-value equals ``a``."""
        sign = 1.0 if side == "greater" else -1.0
        la = math.log(a)

        def g(lt: float) -> float:
            return self._log_pvalue_at(z, math.exp(lt), sign) - la

        lim = 700.0  # |log theta| <= 700: beyond, the null is a point mass to double precision
        # "greater": p increases in theta; "less": p decreases in theta. Bracket outward
        # from theta = 1 in doubling steps of log theta, then Brent.
        incr = side == "greater"
        g0 = g(0.0)
        if g0 == 0.0:
            return 1.0
        direction = 1.0 if (g0 < 0.0) == incr else -1.0  # towards the sign change
        prev, step = 0.0, 1.0
        while True:
            cur = direction * min(step, lim)
            gc = g(cur)
            if (gc > 0.0) != (g0 > 0.0) or gc == 0.0:
                break
            if step >= lim:
                # no sign change within |log theta| <= 700: the constraint is inactive
                # (bound 0 / inf) or no theta is accepted (empty set)
                if side == "greater":
                    return 0.0 if g0 > 0.0 else math.inf
                return math.inf if g0 > 0.0 else 0.0
            prev, step = cur, step * 2.0
        lo_, hi_ = min(prev, cur), max(prev, cur)
        return math.exp(float(optimize.brentq(g, lo_, hi_, xtol=1e-12, maxiter=500)))

    @property
    def guarantee(self) -> Guarantee:
        r"""The f-DP guarantee of the release ``Z`` (and of the test) on :math:`(\mathcal D_t, A_3)`."""
        return self.noise.guarantee(self.margins.relation)

    def privacy_map(self, relation: Relation) -> Guarantee:
        """The guarantee of the release on ``relation``, which must be the test's (the mechanism protocol)."""
        g = self.guarantee
        check_same_relation(g.relation, relation)
        return g

    def sample(self, value: ArrayLike, *, rng: np.random.Generator, size: int | None = None) -> float | FloatArray:
        """Releases at ``value`` (the count x11 of the table): :meth:`release` once (``size=None``) or ``size`` times."""
        check_rng(rng)
        return releases_at_count(lambda c: self.release(c, rng=rng), value, size, "the count x11 of the table")

    def release(self, x11: int, *, rng: np.random.Generator) -> float:
        r"""The private statistic :math:`Z=x_{11}+N`, :math:`N\sim F_N` (research/auditing sampler)."""
        check_rng(rng)
        lo, hi = self.margins.support()
        if isinstance(x11, (bool, np.bool_)) or not isinstance(x11, numbers.Integral) or not lo <= x11 <= hi:
            raise InvalidArgument(
                f"x11={x11!r} must be an integer in [{lo}, {hi}] (the values allowed by the margins)."
            )
        return float(x11) + float(self.noise.sample(rng=rng))

    def result(self, z: float) -> UMPUTestResult:
        """The full result for an already released statistic ``z`` (post-processing only)."""
        p = self.pvalue(z)
        return UMPUTestResult(
            statistic=float(z),
            pvalue=p,
            alternative=self.alternative,
            m=self.m,
            m_lower=self.m_lower,
            alpha=self.alpha,
            reject=p <= self.alpha,
            size=self.size(),
            theta0=self.theta0,
            margins=self.margins,
            guarantee=self.guarantee,
            test=self,
        )


def umpu_odds_ratio_test(
    table: ArrayLike,
    *,
    noise: CanonicalNoise,
    rng: np.random.Generator,
    theta0: float = 1.0,
    alpha: float = 0.05,
    alternative: Alternative = "greater",
    features: tuple[str, str] = ("A", "B"),
) -> UMPUTestResult:
    r"""Run the Semi-DP UMPU odds-ratio test on a confidential 2x2 table [CA24, Thm. 37].

    Publishes the margins (invariant), releases :math:`Z=x_{11}+N` with ``rng`` and
    returns the result of the test calibrated at ``alpha``. The release is f-DP on
    :math:`(\mathcal D_t, A_3)` for the target ``f`` of ``noise`` (see
    ``result.guarantee``).

    Examples
    --------
    >>> from semidp.mechanisms.cnd import Tulap
    >>> r = umpu_odds_ratio_test([[30, 10], [12, 28]], noise=Tulap(1.0),
    ...                          rng=np.random.default_rng(2024))
    >>> r.alternative, r.reject, round(r.size, 12)
    ('greater', True, 0.05)
    """
    margins = TableMargins.from_table(table, features)
    t = np.asarray(table).astype(np.int64)
    test = SemiDPOddsRatioTest(margins, noise, theta0, alpha, alternative)
    z = test.release(int(t[0, 0]), rng=rng)
    return test.result(z)
