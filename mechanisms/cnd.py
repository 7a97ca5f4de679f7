r"""Canonical noise distributions (CNDs) for f-DP: Gaussian, Tulap, and the general construction.

A continuous CDF :math:`F` of a random variable :math:`N` is a *canonical noise
distribution* for a symmetric nontrivial tradeoff function :math:`f` [AV23, Def. 3.1]
(``docs/reference/semi-dp.md`` Sec. 6, Def. 35) if

1. :math:`S(X)+\Delta N` is :math:`f`-DP for every statistic of sensitivity :math:`\Delta`;
2. :math:`T(N,N+1)=f` (tight);
3. :math:`T(N,N+1)` is attained by threshold tests,
   :math:`T^{\rm std}(N,N+1)(\alpha)=F(F^{-1}(1-\alpha)-1)`;
4. :math:`F(x)=1-F(-x)` (symmetric about 0).

Tradeoff conventions (``docs/reference/semi-dp.md`` Sec. 1): every method that takes or returns
a tradeoff value says which convention it uses. The **standard** convention
(Dong--Roth--Su) is non-increasing, ``f_std(alpha) <= 1 - alpha``; Cho & Awan's
**paper** convention is its reflection ``f_paper(alpha) = f_std(1 - alpha)``
(non-decreasing, ``<= alpha``). Internally the CND recursion uses the paper form,
because it is evaluated at small probabilities (the tails).

Classes
-------
:class:`GaussianCND` is defined here; the others live in their own modules and are re-exported here.

:class:`GaussianCND`
    :math:`N(0,1/\mu^2)`, the CND of :math:`G_\mu` [DRS22, AV23].
:class:`~mechanisms.tulap.Tulap`
    Truncated-uniform-Laplace, the CND of :math:`f_{\varepsilon,\delta}` [AS18, AV23],
    with CDF, survival function and logs in closed form (no cancellation in
    either tail), quantile, and sampler, including the truncation for ``delta > 0``.
:class:`~mechanisms.cnd_construction.TradeoffCND`
    The construction of [AV23, Thm. 3.9] (reference Lemma 36) from any symmetric
    nontrivial tradeoff function, given as a callable (convention stated by the
    caller) or as an :class:`~accountant.profiles.tradeoff.TradeoffCurve`; built by
    :func:`~mechanisms.cnd_construction.cnd_from_tradeoff`. Sampling by inverse transform.

All three share :class:`~mechanisms.cnd_base.CanonicalNoise` (``cdf``, ``sf``, ``logcdf``, ``logsf``,
``ppf``, ``isf``, ``sample``, ``shift_tradeoff``, ``target``, ``guarantee``).

Samplers are for research and auditing. They are **not** hardened against
floating-point side channels ([HB21]; [Mir12]): the released float can leak more
than the mathematical mechanism does.

References
----------
[AV23]  J. Awan, S. Vadhan, "Canonical Noise Distributions and Private Hypothesis
        Tests", Annals of Statistics 51(2), 2023 (arXiv:2108.04303): Def. 3.1 (CND),
        Thm. 3.9 (construction), Sec. 4 (tests).
[AS18]  J. Awan, A. Slavković, "Differentially Private Uniformly Most Powerful
        Tests for Binomial Data", NeurIPS 2018 (arXiv:1805.09236): Tulap, Def. 4.1.
[AD22]  J. Awan, J. Dong, "Log-concave and Multivariate Canonical Noise
        Distributions for Differential Privacy", NeurIPS 2022 (Tulap is the unique
        log-concave CND of f_{eps,delta}).
[DRS22] J. Dong, A. Roth, W. Su, "Gaussian Differential Privacy", JRSS-B 2022.
[CA24]  Y. Cho, J. Awan, "Formal Privacy Guarantees with Invariant Statistics",
        arXiv:2410.17468v1, Sec. 5.3 (Def. 35, Lemma 36 in the reference numbering).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import special

from semidp.accountant.core.arguments import (
    check_positive,
    check_rng,
)
from semidp.accountant.guarantees.definitions import GDP, Guarantee
from semidp.accountant.guarantees.relations import Relation
from semidp.mechanisms.cnd_base import (
    CanonicalNoise,
    Convention,
    as_real_array,
    default_relation,
)
from semidp.mechanisms.cnd_construction import TradeoffCND, cnd_from_tradeoff
from semidp.mechanisms.tulap import Tulap, tulap_cdf, tulap_ppf, tulap_sample

__all__ = [
    "CanonicalNoise",
    "Convention",
    "GaussianCND",
    "TradeoffCND",
    "Tulap",
    "cnd_from_tradeoff",
    "tulap_cdf",
    "tulap_ppf",
    "tulap_sample",
]


FloatArray = NDArray[np.float64]


@dataclass(frozen=True, slots=True)
class GaussianCND(CanonicalNoise):
    r"""The CND of :math:`G_\mu`: :math:`N\sim N(0,1/\mu^2)`, :math:`F(x)=\Phi(\mu x)`.

    :math:`T(N,N+1)=G_\mu` [DRS22, Def. 2.7]; the Gaussian is a CND of
    :math:`G_\mu` [AV23, Sec. 3] (``docs/reference/semi-dp.md`` Sec. 6). Tails via
    ``scipy.special.ndtr`` / ``log_ndtr`` of the small side.

    Examples
    --------
    >>> n = GaussianCND(1.0)
    >>> round(n.cdf(-1.5), 7)                         # Phi(-1.5)
    0.0668072
    >>> round(n.shift_tradeoff(0.05, convention="std"), 7)   # G_1 std at 0.05 (T-F1)
    0.740489
    >>> n.guarantee()
    GDP(mu=1.0, relation=Replace(distance=1))
    """

    mu: float
    """GDP parameter, finite and ``> 0`` (``mu = 0`` is trivial: no finite noise is canonical)."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "mu", check_positive("mu", self.mu))

    def _lower(self, y: FloatArray) -> FloatArray:
        return np.asarray(special.ndtr(self.mu * y), dtype=np.float64)

    def _log_lower(self, y: FloatArray) -> FloatArray:
        return np.asarray(special.log_ndtr(self.mu * y), dtype=np.float64)

    def _ppf_lower(self, u: FloatArray) -> FloatArray:
        return np.asarray(special.ndtri(u), dtype=np.float64) / self.mu

    def _target_paper(self, s: FloatArray) -> FloatArray:
        # paper convention G_mu(s) = Phi(Phi^{-1}(s) - mu)   (docs/reference/semi-dp.md Sec. 1)
        with np.errstate(divide="ignore"):
            return np.asarray(special.ndtr(special.ndtri(s) - self.mu), dtype=np.float64)

    def pdf(self, x: ArrayLike) -> FloatArray:
        """Density :math:`\\mu\\varphi(\\mu x)`."""
        a, _ = as_real_array("x", x)
        return np.asarray(self.mu * np.exp(-0.5 * (self.mu * a) ** 2) / math.sqrt(2 * math.pi))

    def guarantee(self, relation: Relation | None = None) -> Guarantee:
        r""":math:`\mu`-GDP on ``relation`` (default replace-one) for sensitivity-1 statistics."""
        return GDP(self.mu, default_relation(relation))

    def sample(self, *, rng: np.random.Generator, size: int | tuple[int, ...] | None = None) -> float | FloatArray:
        """``rng.standard_normal(size) / mu`` (research/auditing sampler)."""
        check_rng(rng)
        z = rng.standard_normal(size) / self.mu
        return float(z) if size is None else np.asarray(z, dtype=np.float64)
