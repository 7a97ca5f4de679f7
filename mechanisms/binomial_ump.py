r"""The DP uniformly most powerful test for a binomial proportion (Awan & Slavković 2018).

Setting [AS18]. A dataset is ``n`` binary records; the confidential statistic is
their sum :math:`X\sim\mathrm{Binomial}(n,\theta)`. Neighbouring datasets are taken
under the **replace-one** relation (:class:`~accountant.guarantees.relations.Replace`: same ``n``,
one record changed), so :math:`|X-X'|\le1`; ``n`` is public. The release is

.. math:: Z=X+N,\qquad N\sim\mathrm{Tulap}(0,b=e^{-\varepsilon},q),

with :class:`mechanisms.cnd.Tulap` (``q = 0`` for pure :math:`\varepsilon`-DP,
:math:`q=2\delta b/(1-b+2\delta b)` for :math:`(\varepsilon,\delta)`-DP). ``Z`` is
:math:`(\varepsilon,\delta)`-DP on ``Replace()`` -- indeed :math:`f_{\varepsilon,\delta}`-DP
with equality, Tulap being the canonical noise of :math:`f_{\varepsilon,\delta}`
[AV23] -- and everything below is post-processing of ``Z``.

One-sided tests (the result of [AS18]). For :math:`H_0:\theta\le\theta_0` vs
:math:`H_1:\theta>\theta_0` (``alternative="greater"``) the test

.. math:: \phi^*(x)=F_N(x-m),\qquad \sum_{x=0}^{n}\binom nx\theta_0^x(1-\theta_0)^{n-x}F_N(x-m)=\alpha

is UMP at level :math:`\alpha` among **all** tests that are :math:`(\varepsilon,\delta)`-DP
on ``Replace()`` (the DP Neyman--Pearson lemma for binomial data of [AS18]; in f-DP
form [AV23, Thm. 4.8], ``docs/reference/semi-dp.md`` Lemma 47). It is run as a release plus
post-processing: the p-value

.. math:: p(z)=P_{\theta_0}(X+N\ge z)=\sum_x\binom nx\theta_0^x(1-\theta_0)^{n-x}F_N(x-z)

is exact (``P(p(Z) <= u) = u`` at :math:`\theta_0`, ``<= u`` below it) and
:math:`P(p(Z)\le\alpha\mid X=x)=\phi^*(x)` because ``p`` is decreasing and ``p(m) = alpha``.
``alternative="less"`` is the mirror image: :math:`\phi^*(x)=F_N(m-x)`,
:math:`p(z)=P_{\theta_0}(X+N\le z)` (binomialDP's ``pvalLeft``; ``pvalRight`` is
``"greater"``).

Two-sided (``alternative="two-sided"``, :math:`H_0:\theta=\theta_0`) -- **not** a UMP or
UMPU test. This is the p-value ``pvalTwoSide`` of the authors' R package binomialDP
(CRAN, v1.0.0; Awan & Slavković, JPC 10(1), 2020 [AS20]), documented there as
"asymptotically unbiased": with :math:`c=n\theta_0` and :math:`t=|z-c|`,

.. math:: p(z)=P_{\theta_0}(X+N\ge c+t)+P_{\theta_0}(X+N\le c-t)=P_{\theta_0}(|X+N-c|\ge|z-c|).

It is the exact tail probability of the continuous statistic :math:`|Z-c|`, so it is
a valid p-value with size exactly :math:`\alpha`; the level-:math:`\alpha` test rejects
iff :math:`|Z-c|\ge t_\alpha`, i.e. :math:`\phi(x)=F_N(x-m)+F_N(m_1-x)` with
:math:`m=c+t_\alpha`, :math:`m_1=c-t_\alpha`. It can be **biased** at finite ``n``:
for ``n = 30``, :math:`\theta_0=0.1`, :math:`\varepsilon=1`, :math:`\alpha=0.05` its power
at :math:`\theta=0.08` is ``0.0438 < alpha`` (checked in ``tests/test_binomial_ump.py``). [AS20] also derives a DP-UMPU
two-sided test (binomialDP's ``UMPU``: :math:`F_N(|x-k|-s)` with ``k`` set by a
zero-covariance condition); it is not implemented here.

Confidence sets invert the p-values as binomialDP's ``CILower``/``CIUpper``/``CITwoSide``
do (see :meth:`BinomialTestResult.confidence_interval`).

Numerics: all probabilities are log-space tail sums from :mod:`mechanisms.binomial_tail`
(saddle-point binomial pmf, summand-centred window, Tulap closed-form log-CDF), so
p-values stay accurate far below ``1e-300`` and ``n = 10**6`` costs milliseconds per
p-value. ``m`` is found by bracketing root-finding on :math:`\log p(m)=\log\alpha` (the
size function is continuous and strictly monotone where some ``F_N(x - m)`` lies in
``(0, 1)``) and polished to the best double.

Samplers are for research/auditing, not hardened against floating-point side channels.

References
----------
[AS18]  J. Awan, A. Slavković, "Differentially Private Uniformly Most Powerful Tests for
        Binomial Data", NeurIPS 2018 (arXiv:1805.09236): Tulap (Def. 4.1), the DP-UMP
        one-sided test and its p-value.
[AS20]  J. Awan, A. Slavković, "Differentially Private Inference for Binomial Data",
        J. Privacy and Confidentiality 10(1), 2020 (arXiv:1904.00459); R package
        binomialDP 1.0.0 (J. Awan, A. Slavković, T. Tran), CRAN.
[AV23]  J. Awan, S. Vadhan, "Canonical Noise Distributions and Private Hypothesis Tests",
        Ann. Statist. 51(2), 2023, Thm. 4.8.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import optimize, special

from semidp.accountant.core.arguments import check_in_interval, check_int, check_rng
from semidp.accountant.core.errors import InvalidArgument
from semidp.accountant.guarantees.definitions import Guarantee
from semidp.accountant.guarantees.relations import Relation, Replace, check_same_relation
from semidp.mechanisms.alternatives import check_alternative
from semidp.mechanisms.binomial_tail import (
    CLIP_NATS,
    MAX_N,
    Alternative,
    log_pvalue,
    log_tail,
    log_two_sided_pvalue,
    monotone_root,
)
from semidp.mechanisms.cnd import Tulap
from semidp.mechanisms.protocol import releases_at_count

__all__ = [
    "Alternative",
    "BinomialTestResult",
    "BinomialUMPTest",
    "ConfidenceInterval",
    "binomial_log_pvalue",
    "binomial_pvalue",
    "binomial_ump_test",
]

FloatArray = NDArray[np.float64]


#: binomialDP's p-value function for each alternative (named in error messages).
_BINOMIALDP_PVALUES: dict[Alternative, str] = {
    "greater": "binomialDP pvalRight",
    "less": "pvalLeft",
    "two-sided": "pvalTwoSide",
}


def _check_n(n: object) -> int:
    k = check_int("n", n, minimum=1)
    if k > MAX_N:
        raise InvalidArgument(f"n={n!r} must be <= {MAX_N} (number of binary records).")
    return k


def _check_noise(noise: object) -> Tulap:
    if not isinstance(noise, Tulap):
        raise InvalidArgument(
            f"noise={noise!r} must be a mechanisms.cnd.Tulap (e.g. Tulap(epsilon, delta) or "
            "Tulap.from_bq(b, q)); the UMP property of [AS18] is specific to Tulap noise."
        )
    return noise


def _check_z(z: object) -> float:
    return check_in_interval("z", z, -math.inf, math.inf)


def binomial_log_pvalue(
    z: float, *, n: int, theta0: float, noise: Tulap, alternative: Alternative = "greater"
) -> float:
    r"""Natural log of the DP p-value of the release ``z = x + N`` [AS18] (accurate far below 1e-300).

    ``"greater"``: :math:`\log P_{\theta_0}(X+N\ge z)` (binomialDP ``pvalRight``);
    ``"less"``: :math:`\log P_{\theta_0}(X+N\le z)` (``pvalLeft``);
    ``"two-sided"``: :math:`\log P_{\theta_0}(|X+N-n\theta_0|\ge|z-n\theta_0|)` (``pvalTwoSide``).

    Raises
    ------
    InvalidArgument
        If ``z`` is not finite, ``n`` not an integer in ``[1, 10**8]``, ``theta0`` not in
        ``(0, 1)``, ``noise`` not a :class:`~mechanisms.cnd.Tulap`, or ``alternative`` unknown.
    """
    zz = _check_z(z)
    nn = _check_n(n)
    th = check_in_interval("theta0", theta0, 0.0, 1.0, lo_open=True, hi_open=True)
    return log_pvalue(nn, th, _check_noise(noise), zz, check_alternative(alternative, _BINOMIALDP_PVALUES))


def binomial_pvalue(z: float, *, n: int, theta0: float, noise: Tulap, alternative: Alternative = "greater") -> float:
    r"""The DP p-value of the release ``z`` [AS18]; see :func:`binomial_log_pvalue`.

    Examples
    --------
    >>> import math
    >>> t = Tulap.from_bq(math.exp(-1), 0.05)          # binomialDP's b, q parameters
    >>> round(binomial_pvalue(9, n=30, theta0=0.5, noise=t, alternative="less"), 8)  # binomialDP dpPropTest
    0.02069401
    """
    return math.exp(binomial_log_pvalue(z, n=n, theta0=theta0, noise=noise, alternative=alternative))


# ======================================================================================
# results
# ======================================================================================


class ConfidenceInterval(NamedTuple):
    """A confidence interval for the proportion :math:`\\theta` (scipy style)."""

    low: float
    high: float


@dataclass(frozen=True, slots=True)
class BinomialTestResult:
    r"""Outcome of the DP binomial test [AS18] for one released statistic (scipy-style result).

    Examples
    --------
    >>> test = BinomialUMPTest(n=10, theta0=0.4, noise=Tulap(1.0, 0.01), alpha=0.05)
    >>> r = test.result(8.2)
    >>> round(r.pvalue, 8), round(r.m, 8), r.reject
    (0.02080006, 7.32244112, True)
    >>> r.guarantee
    ApproxDP(epsilon=1.0, delta=0.01, relation=Replace(distance=1))
    """

    statistic: float
    r"""The private release :math:`Z=X+N`."""
    pvalue: float
    """p-value for ``alternative`` (binomialDP ``pvalRight``/``pvalLeft``/``pvalTwoSide``)."""
    alternative: Alternative
    """The alternative hypothesis."""
    m: float
    r"""Threshold: reject iff :math:`Z\ge m` (``"greater"``, ``"two-sided"`` upper) or :math:`Z\le m` (``"less"``)."""
    m_lower: float | None
    r"""Two-sided only: the lower threshold :math:`m_1` (also reject iff :math:`Z\le m_1`)."""
    alpha: float
    """Level the test was calibrated to."""
    reject: bool
    """Decision at ``alpha``: ``pvalue <= alpha``."""
    size: float
    r"""Size :math:`E_{\theta_0}\phi(X)` of the calibrated test (equals ``alpha``)."""
    n: int
    """Number of binary records."""
    theta0: float
    """Null proportion."""
    guarantee: Guarantee
    """Privacy guarantee of the release on ``Replace()``: ``PureDP(eps)`` or ``ApproxDP(eps, delta)``."""
    test: BinomialUMPTest = field(repr=False, compare=False)
    """The calibrated test (for further p-values, power, intervals)."""

    def reject_at(self, level: float) -> bool:
        """Decision at another level: ``pvalue <= level`` (valid because the p-value is exact)."""
        lv = check_in_interval("level", level, 0.0, 1.0)
        return self.pvalue <= lv

    def confidence_interval(self, confidence_level: float = 0.95) -> ConfidenceInterval:
        r"""Confidence interval for :math:`\theta` by inverting the p-value, as binomialDP does.

        With :math:`a=1-\gamma` (``gamma = confidence_level``):

        * ``"greater"``: :math:`(\theta_L,1]` with :math:`P_{\theta_L}(X+N\ge Z)=a`
          (``CILower``); the right p-value increases in :math:`\theta`, so this is the
          exact inversion of the UMP test (uniformly most accurate lower bound [AS20]).
          ``theta_L = 0`` if even :math:`\theta=0` is not rejected; ``low = 1.0`` means every
          :math:`\theta` is rejected (the empty set, probability at most ``a``).
        * ``"less"``: :math:`[0,\theta_U)` with :math:`P_{\theta_U}(X+N\le Z)=a` (``CIUpper``);
          ``high = 0.0`` is the empty set.
        * ``"two-sided"``: binomialDP's ``CITwoSide``: with :math:`\hat\theta=\min(\max(Z/n,0),1)`,
          the roots of the two-sided p-value :math:`p(Z;\theta)=a` in :math:`[0,\hat\theta]` and
          :math:`[\hat\theta,1]` (``0``/``1`` where :math:`p\ge a` at the end point). The p-value
          is 1 at :math:`\theta=Z/n`; it is not proven monotone on either side, so the set
          :math:`\{\theta:p>a\}` is reported by its outermost crossing found by bracketing.
        """
        g = check_in_interval("confidence_level", confidence_level, 0.0, 1.0, lo_open=True, hi_open=True)
        la = math.log1p(-g)
        t = self.test
        z = self.statistic
        if self.alternative == "greater":
            return ConfidenceInterval(t._theta_crossing(z, la, 1.0), 1.0)
        if self.alternative == "less":
            return ConfidenceInterval(0.0, t._theta_crossing(z, la, -1.0))
        return t._two_sided_interval(z, la)


# ======================================================================================
# the test
# ======================================================================================


@dataclass(frozen=True, slots=True, eq=False)
class BinomialUMPTest:
    r"""The DP-UMP test of a binomial proportion, calibrated at level ``alpha`` [AS18].

    Parameters
    ----------
    n:
        Number of binary records (public), integer in ``[1, 10**8]``.
    theta0:
        Null proportion, in ``(0, 1)``.
    noise:
        :class:`~mechanisms.cnd.Tulap` noise (``Tulap(epsilon, delta)``, or
        ``Tulap.from_bq(b, q)`` for binomialDP's parameters). See :meth:`from_privacy`.
    alpha:
        Level in ``(0, 1)``; the size is exactly ``alpha``.
    alternative:
        ``"greater"`` (default), ``"less"`` (both UMP) or ``"two-sided"`` (binomialDP's
        asymptotically unbiased test; exact size, not UMPU -- see the module docstring).

    Notes
    -----
    The release and every test here are :math:`(\varepsilon,\delta)`-DP with respect to
    ``Replace()`` on ``{0,1}**n`` (one record replaced changes ``X`` by at most 1):
    :attr:`guarantee`.

    Examples
    --------
    >>> test = BinomialUMPTest.from_privacy(n=10, theta0=0.4, epsilon=1.0, delta=0.01)
    >>> round(test.m, 8), abs(test.size() - 0.05) < 1e-15
    (7.32244112, True)
    >>> [round(float(v), 6) for v in test.phi([6, 8, 10])]
    [0.124807, 0.764285, 0.973132]
    >>> round(test.power(0.7), 6)
    0.439896
    >>> z = test.release(7, rng=np.random.default_rng(1))   # the private statistic
    """

    n: int
    """Number of binary records."""
    theta0: float
    """Null proportion."""
    noise: Tulap
    """The Tulap noise of the release."""
    alpha: float = 0.05
    """Level (exact size)."""
    alternative: Alternative = "greater"
    """Alternative hypothesis."""
    m: float = field(init=False, default=math.nan)
    r"""Threshold of the test (upper threshold :math:`m=c+t_\alpha` for two-sided)."""
    m_lower: float | None = field(init=False, default=None)
    r"""Two-sided only: the lower threshold :math:`m_1=c-t_\alpha`."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "n", _check_n(self.n))
        object.__setattr__(
            self, "theta0", check_in_interval("theta0", self.theta0, 0.0, 1.0, lo_open=True, hi_open=True)
        )
        _check_noise(self.noise)
        object.__setattr__(self, "alpha", check_in_interval("alpha", self.alpha, 0.0, 1.0, lo_open=True, hi_open=True))
        object.__setattr__(self, "alternative", check_alternative(self.alternative, _BINOMIALDP_PVALUES))
        if self.alternative == "two-sided":
            t = self._solve_two_sided()
            c = self.n * self.theta0
            object.__setattr__(self, "m", c + t)
            object.__setattr__(self, "m_lower", c - t)
        else:
            object.__setattr__(self, "m", self._solve_one_sided())

    @classmethod
    def from_privacy(
        cls,
        n: int,
        theta0: float,
        epsilon: float,
        delta: float = 0.0,
        alpha: float = 0.05,
        alternative: Alternative = "greater",
    ) -> BinomialUMPTest:
        r"""The test with ``Tulap(epsilon, delta)`` noise: :math:`(\varepsilon,\delta)`-DP on ``Replace()``."""
        return cls(n, theta0, Tulap(epsilon, delta), alpha, alternative)

    # ---- calibration ------------------------------------------------------------------------

    def _sd(self) -> float:
        b = self.noise.b
        var_n = 2.0 * b / (1.0 - b) ** 2 + 1.0 / 12.0  # untruncated Tulap variance (a guess only)
        return math.sqrt(self.n * self.theta0 * (1.0 - self.theta0) + var_n)

    def _solve_one_sided(self) -> float:
        sign = 1.0 if self.alternative == "greater" else -1.0
        la = math.log(self.alpha)
        c = self.n * self.theta0
        sd = self._sd()
        z0 = c - sign * float(special.ndtri(self.alpha)) * sd  # normal-approximation guess

        def fn(m: float) -> float:
            return log_tail(self.n, self.theta0, self.noise, m, sign) - la

        return monotone_root(fn, z0, max(1.0, sd), increasing=sign < 0)

    def _solve_two_sided(self) -> float:
        la = math.log(self.alpha)
        c = self.n * self.theta0
        sd = self._sd()
        t0 = -float(special.ndtri(self.alpha / 2.0)) * sd

        def fn(t: float) -> float:
            return log_two_sided_pvalue(self.n, self.theta0, self.noise, c + t, c) - la

        return monotone_root(fn, t0, max(1.0, sd), increasing=False, floor=0.0)

    # ---- the test -------------------------------------------------------------------------

    def phi(self, x: ArrayLike) -> float | FloatArray:
        r"""The test as a function of the confidential count: :math:`P(\text{reject}\mid X=x)`.

        ``"greater"``: :math:`F_N(x-m)`; ``"less"``: :math:`F_N(m-x)`;
        ``"two-sided"``: :math:`F_N(x-m)+F_N(m_1-x)`.
        """
        xa = np.asarray(x, dtype=np.float64)
        if self.alternative == "greater":
            val = self.noise.cdf(xa - self.m)
        elif self.alternative == "less":
            val = self.noise.cdf(self.m - xa)
        else:
            m1 = self.m if self.m_lower is None else self.m_lower
            val = np.asarray(self.noise.cdf(xa - self.m)) + np.asarray(self.noise.cdf(m1 - xa))
        return float(val) if np.ndim(val) == 0 else np.asarray(val, dtype=np.float64)

    def _log_power(self, theta: float) -> float:
        if self.alternative == "greater":
            return log_tail(self.n, theta, self.noise, self.m, 1.0)
        if self.alternative == "less":
            return log_tail(self.n, theta, self.noise, self.m, -1.0)
        m1 = self.m if self.m_lower is None else self.m_lower
        up = log_tail(self.n, theta, self.noise, self.m, 1.0)
        return float(np.logaddexp(up, log_tail(self.n, theta, self.noise, m1, -1.0)))

    def size(self) -> float:
        r"""Size :math:`E_{\theta_0}\phi(X)` (equals ``alpha`` up to the rounding of ``m``)."""
        return math.exp(self._log_power(self.theta0))

    def power(self, theta: float) -> float:
        r"""Power :math:`E_\theta\phi(X)=\sum_x\binom nx\theta^x(1-\theta)^{n-x}\phi(x)`, ``theta`` in ``[0, 1]``."""
        th = check_in_interval("theta", theta, 0.0, 1.0)
        return math.exp(self._log_power(th))

    def log_pvalue(self, z: float) -> float:
        """Natural log of the p-value of the release ``z`` (see :func:`binomial_log_pvalue`)."""
        return log_pvalue(self.n, self.theta0, self.noise, _check_z(z), self.alternative)

    def pvalue(self, z: float) -> float:
        """The p-value of the release ``z``."""
        return math.exp(self.log_pvalue(z))

    @property
    def guarantee(self) -> Guarantee:
        r"""Privacy of the release: ``PureDP(eps)`` / ``ApproxDP(eps, delta)`` on ``Replace()``."""
        return self.noise.guarantee(Replace())

    def privacy_map(self, relation: Relation) -> Guarantee:
        """The guarantee of the release on ``relation``, which must be the test's (the mechanism protocol)."""
        g = self.guarantee
        check_same_relation(g.relation, relation)
        return g

    def sample(self, value: ArrayLike, *, rng: np.random.Generator, size: int | None = None) -> float | FloatArray:
        """Releases at ``value`` (the count x): :meth:`release` once (``size=None``) or ``size`` times."""
        check_rng(rng)
        return releases_at_count(lambda c: self.release(c, rng=rng), value, size, "the count x")

    def release(self, x: int, *, rng: np.random.Generator) -> float:
        r"""The private statistic :math:`Z=x+N` (research/auditing sampler, explicit ``rng``)."""
        check_rng(rng)
        if isinstance(x, (bool, np.bool_)) or not isinstance(x, numbers.Integral) or not 0 <= x <= self.n:
            raise InvalidArgument(f"x={x!r} must be an integer count in [0, {self.n}].")
        return float(x) + float(self.noise.sample(rng=rng))

    def result(self, z: float) -> BinomialTestResult:
        """The full result for an already released statistic ``z`` (post-processing only)."""
        p = self.pvalue(z)
        return BinomialTestResult(
            statistic=float(z),
            pvalue=p,
            alternative=self.alternative,
            m=self.m,
            m_lower=self.m_lower,
            alpha=self.alpha,
            reject=p <= self.alpha,
            size=self.size(),
            n=self.n,
            theta0=self.theta0,
            guarantee=self.guarantee,
            test=self,
        )

    # ---- confidence sets ------------------------------------------------------------------

    def _theta_crossing(self, z: float, la: float, sign: float) -> float:
        """``theta`` where the one-sided p-value (``sign = +1`` right, ``-1`` left) equals ``exp(la)``."""

        def g(th: float) -> float:
            return max(log_tail(self.n, th, self.noise, z, sign), la - CLIP_NATS) - la

        g0, g1 = g(0.0), g(1.0)
        if sign > 0:  # increasing in theta
            if g0 >= 0.0:
                return 0.0
            if g1 <= 0.0:
                return 1.0
        else:  # decreasing in theta
            if g0 <= 0.0:
                return 0.0
            if g1 >= 0.0:
                return 1.0
        return float(optimize.brentq(g, 0.0, 1.0, xtol=1e-15, rtol=4 * 2.0**-52, maxiter=500))

    def _two_sided_interval(self, z: float, la: float) -> ConfidenceInterval:
        mle = min(max(z / self.n, 0.0), 1.0)

        def g(th: float) -> float:
            return max(log_two_sided_pvalue(self.n, th, self.noise, z, self.n * th), la - CLIP_NATS) - la

        if g(mle) <= 0.0:
            return ConfidenceInterval(mle, mle)  # every theta rejected (z far outside [0, n])
        low = (
            0.0
            if mle == 0.0 or g(0.0) >= 0.0
            else float(optimize.brentq(g, 0.0, mle, xtol=1e-15, rtol=4 * 2.0**-52, maxiter=500))
        )
        high = (
            1.0
            if mle == 1.0 or g(1.0) >= 0.0
            else float(optimize.brentq(g, mle, 1.0, xtol=1e-15, rtol=4 * 2.0**-52, maxiter=500))
        )
        return ConfidenceInterval(low, high)


def binomial_ump_test(
    x: int,
    *,
    n: int,
    theta0: float,
    epsilon: float,
    delta: float = 0.0,
    rng: np.random.Generator,
    alpha: float = 0.05,
    alternative: Alternative = "greater",
) -> BinomialTestResult:
    r"""Release :math:`Z=x+\mathrm{Tulap}(0,e^{-\varepsilon},q)` and test :math:`\theta_0` [AS18].

    ``x`` is the confidential count of ``n`` binary records. The release is
    :math:`(\varepsilon,\delta)`-DP on ``Replace()`` (``result.guarantee``); the returned
    result is post-processing of it.

    Examples
    --------
    >>> r = binomial_ump_test(19, n=30, theta0=0.4, epsilon=1.0, rng=np.random.default_rng(7))
    >>> r.alternative, round(r.size, 12), r.guarantee
    ('greater', 0.05, PureDP(epsilon=1.0, relation=Replace(distance=1)))
    """
    test = BinomialUMPTest(n, theta0, Tulap(epsilon, delta), alpha, alternative)
    z = test.release(x, rng=rng)
    return test.result(z)
