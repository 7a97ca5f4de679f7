r"""Canonical noise distributions (CNDs) for f-DP: Gaussian, Tulap, and the general construction.

A continuous CDF :math:`F` of a random variable :math:`N` is a *canonical noise
distribution* for a symmetric nontrivial tradeoff function :math:`f` [AV23, Def. 3.1]
(reference ``semi-dp.md`` Sec. 6, Def. 35) if

1. :math:`S(X)+\Delta N` is :math:`f`-DP for every statistic of sensitivity :math:`\Delta`;
2. :math:`T(N,N+1)=f` (tight);
3. :math:`T(N,N+1)` is attained by threshold tests,
   :math:`T^{\rm std}(N,N+1)(\alpha)=F(F^{-1}(1-\alpha)-1)`;
4. :math:`F(x)=1-F(-x)` (symmetric about 0).

Tradeoff conventions (``semi-dp.md`` Sec. 1): every method that takes or returns
a tradeoff value says which convention it uses. The **standard** convention
(Dong--Roth--Su) is non-increasing, ``f_std(alpha) <= 1 - alpha``; Cho & Awan's
**paper** convention is its reflection ``f_paper(alpha) = f_std(1 - alpha)``
(non-decreasing, ``<= alpha``). Internally the CND recursion uses the paper form,
because it is evaluated at small probabilities (the tails).

Classes
-------
:class:`GaussianCND`
    :math:`N(0,1/\mu^2)`, the CND of :math:`G_\mu` [DRS22, AV23].
:class:`Tulap`
    Truncated-uniform-Laplace, the CND of :math:`f_{\varepsilon,\delta}` [AS18, AV23],
    with CDF, survival function and logs in closed form (no cancellation in
    either tail), quantile, and sampler, including the truncation for ``delta > 0``.
:class:`TradeoffCND`
    The construction of [AV23, Thm. 3.9] (reference Lemma 36) from any symmetric
    nontrivial tradeoff function, given as a callable (convention stated by the
    caller) or as an :class:`~accountant.tradeoff.TradeoffCurve`; built by
    :func:`cnd_from_tradeoff`. Sampling by inverse transform.

All three share :class:`CanonicalNoise` (``cdf``, ``sf``, ``logcdf``, ``logsf``,
``ppf``, ``isf``, ``sample``, ``shift_tradeoff``, ``target``, ``guarantee``).

Samplers are for research and auditing. They are **not** hardened against
floating-point side channels (see Haney et al., "Secure Random Sampling in
Differential Privacy", and Mironov, "On Significance of the Least Significant
Bits for Differential Privacy", CCS 2012): the released float can leak more
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
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal, overload

import mpmath
import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import optimize, special

from accountant.arguments import (
    check_finite_real,
    check_in_interval,
    check_int,
    check_positive,
    check_rng,
)
from accountant.directed import MP, up
from accountant.errors import InvalidArgument
from accountant.guarantees import GDP, ApproxDP, Guarantee, PureDP, TradeOff
from accountant.piecewise_linear import convex_minorant
from accountant.relations import Relation, Replace
from accountant.tradeoff import TradeoffCurve

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

Convention = Literal["std", "paper"]
"""Tradeoff-function convention: ``"std"`` (Dong--Roth--Su) or ``"paper"`` (Cho & Awan)."""

FloatArray = NDArray[np.float64]


def _check_convention(convention: object) -> Convention:
    if convention == "std":
        return "std"
    if convention == "paper":
        return "paper"
    raise InvalidArgument(
        f"convention={convention!r} must be 'std' (Dong-Roth-Su: f(alpha) non-increasing, "
        "f(alpha) <= 1 - alpha) or 'paper' (Cho & Awan: f_paper(alpha) = f_std(1 - alpha))."
    )


def _as_real_array(name: str, x: ArrayLike) -> tuple[FloatArray, bool]:
    """``(array, is_scalar)``; raises on NaN or non-real input (never returns NaN)."""
    try:
        a = np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError) as e:
        raise InvalidArgument(f"{name}={x!r} must be a real number or an array of them.") from e
    if np.any(np.isnan(a)):
        raise InvalidArgument(f"{name} contains NaN; got {x!r}.")
    return a, a.ndim == 0


def _as_prob_array(name: str, u: ArrayLike) -> tuple[FloatArray, bool]:
    a, scalar = _as_real_array(name, u)
    bad = ~((a >= 0.0) & (a <= 1.0))
    if np.any(bad):
        raise InvalidArgument(f"{name} must lie in [0, 1]; got {float(a[bad].flat[0])!r}.")
    return a, scalar


def _ret(a: FloatArray, scalar: bool) -> float | FloatArray:
    return float(a.reshape(())) if scalar else a


# ======================================================================================
# the common interface
# ======================================================================================


class CanonicalNoise(ABC):
    r"""A canonical noise distribution: symmetric about 0, continuous CDF :math:`F`.

    Subclasses implement the lower half (``y <= 0``, ``u <= 1/2``); the upper half
    follows from symmetry :math:`F(y)=1-F(-y)` **without** cancellation:
    ``sf(y) = cdf(-y)`` and ``logsf(y) = logcdf(-y)`` are computed from the small
    side directly, so tail probabilities far below ``1e-16`` are not lost.
    """

    __slots__ = ()

    # ---- subclass hooks (arrays in, arrays out; finite inputs only) -------------------

    @abstractmethod
    def _lower(self, y: FloatArray) -> FloatArray:
        """``F(y)`` for finite ``y <= 0``."""

    @abstractmethod
    def _log_lower(self, y: FloatArray) -> FloatArray:
        """``log F(y)`` for finite ``y <= 0``."""

    @abstractmethod
    def _ppf_lower(self, u: FloatArray) -> FloatArray:
        """``inf{y : F(y) >= u}`` for ``u`` in ``[0, 1/2]``."""

    @abstractmethod
    def _target_paper(self, s: FloatArray) -> FloatArray:
        """The tradeoff function this is a CND of, paper convention."""

    @abstractmethod
    def guarantee(self, relation: Relation | None = None) -> Guarantee:
        """The f-DP guarantee of ``S(X) + N`` for a statistic of sensitivity 1 on ``relation``."""

    # ---- evaluation -------------------------------------------------------------------

    def _cdf_arr(self, y: FloatArray) -> FloatArray:
        out = np.empty(y.shape, dtype=np.float64)
        lo = y <= 0.0
        fin = np.isfinite(y)
        a = lo & fin
        b = ~lo & fin
        out[a] = self._lower(y[a])
        out[b] = 1.0 - self._lower(-y[b])
        out[y == -math.inf] = 0.0
        out[y == math.inf] = 1.0
        return out

    def _logcdf_arr(self, y: FloatArray) -> FloatArray:
        out = np.empty(y.shape, dtype=np.float64)
        lo = y <= 0.0
        fin = np.isfinite(y)
        a = lo & fin
        b = ~lo & fin
        out[a] = self._log_lower(y[a])
        out[b] = np.log1p(-self._lower(-y[b]))
        out[y == -math.inf] = -math.inf
        out[y == math.inf] = 0.0
        return out

    def _ppf_arr(self, u: FloatArray) -> FloatArray:
        out = np.empty(u.shape, dtype=np.float64)
        lo = u <= 0.5
        out[lo] = self._ppf_lower(u[lo])
        out[~lo] = -self._ppf_lower(1.0 - u[~lo])  # 1 - u is exact for u >= 1/2
        return out

    @overload
    def cdf(self, x: float) -> float: ...
    @overload
    def cdf(self, x: FloatArray) -> FloatArray: ...

    def cdf(self, x: ArrayLike) -> float | FloatArray:
        """CDF :math:`F(x)=P(N\\le x)`."""
        a, s = _as_real_array("x", x)
        return _ret(self._cdf_arr(a), s)

    @overload
    def sf(self, x: float) -> float: ...
    @overload
    def sf(self, x: FloatArray) -> FloatArray: ...

    def sf(self, x: ArrayLike) -> float | FloatArray:
        """Survival function :math:`1-F(x)=F(-x)`, computed from the small side."""
        a, s = _as_real_array("x", x)
        return _ret(self._cdf_arr(-a), s)

    @overload
    def logcdf(self, x: float) -> float: ...
    @overload
    def logcdf(self, x: FloatArray) -> FloatArray: ...

    def logcdf(self, x: ArrayLike) -> float | FloatArray:
        r""":math:`\log F(x)`, accurate in the far lower tail (closed forms do not underflow)."""
        a, s = _as_real_array("x", x)
        with np.errstate(divide="ignore"):
            return _ret(self._logcdf_arr(a), s)

    @overload
    def logsf(self, x: float) -> float: ...
    @overload
    def logsf(self, x: FloatArray) -> FloatArray: ...

    def logsf(self, x: ArrayLike) -> float | FloatArray:
        r""":math:`\log(1-F(x))=\log F(-x)`."""
        a, s = _as_real_array("x", x)
        with np.errstate(divide="ignore"):
            return _ret(self._logcdf_arr(-a), s)

    @overload
    def ppf(self, u: float) -> float: ...
    @overload
    def ppf(self, u: FloatArray) -> FloatArray: ...

    def ppf(self, u: ArrayLike) -> float | FloatArray:
        r"""Quantile :math:`F^{-1}(u)=\inf\{y: F(y)\ge u\}`, ``u`` in ``[0, 1]``."""
        a, s = _as_prob_array("u", u)
        with np.errstate(divide="ignore"):
            return _ret(self._ppf_arr(a), s)

    @overload
    def isf(self, u: float) -> float: ...
    @overload
    def isf(self, u: FloatArray) -> FloatArray: ...

    def isf(self, u: ArrayLike) -> float | FloatArray:
        r"""Inverse survival function :math:`F^{-1}(1-u)=-F^{-1}(u)` (exact for small ``u``)."""
        a, s = _as_prob_array("u", u)
        with np.errstate(divide="ignore"):
            return _ret(-self._ppf_arr(a), s)

    # ---- tradeoff functions -----------------------------------------------------------

    def target(self, alpha: ArrayLike, *, convention: Convention) -> float | FloatArray:
        """The tradeoff function ``f`` this distribution is canonical for, in ``convention``."""
        conv = _check_convention(convention)
        a, s = _as_prob_array("alpha", alpha)
        arg = a if conv == "paper" else 1.0 - a
        return _ret(np.asarray(self._target_paper(np.atleast_1d(arg)), dtype=np.float64).reshape(a.shape), s)

    def shift_tradeoff(self, alpha: ArrayLike, *, convention: Convention) -> float | FloatArray:
        r""":math:`T(N,N+1)` from the distribution itself, via threshold tests (CND property 3).

        Standard convention :math:`F(F^{-1}(1-\alpha)-1)`, evaluated as
        ``sf(ppf(alpha) + 1)`` (no cancellation for small ``alpha``); paper
        convention :math:`F(F^{-1}(\alpha)-1)`. For a CND this equals
        :meth:`target` (property 2); comparing the two is a numerical check of the
        construction.
        """
        conv = _check_convention(convention)
        a, s = _as_prob_array("alpha", alpha)
        with np.errstate(divide="ignore", invalid="ignore"):
            q = self._ppf_arr(a)
            val = self._cdf_arr(-(q + 1.0)) if conv == "std" else self._cdf_arr(q - 1.0)
        return _ret(val, s)

    @property
    def fixed_point(self) -> float:
        r""":math:`c=F(-1/2)`, the fixed point ``f_std(c) = c`` of the target tradeoff function."""
        return float(self._lower(np.array([-0.5]))[0])

    # ---- sampling -----------------------------------------------------------------------

    def sample(
        self, *, rng: np.random.Generator, size: int | tuple[int, ...] | None = None
    ) -> float | FloatArray:
        """Draw noise by inverse transform (subclasses may override with an exact sampler).

        ``N = sign * F^{-1}(W / 2)`` with ``W`` uniform on ``(0, 1]`` (53-bit grid) and an
        independent fair sign: exactly symmetric, and the tails are resolved down to
        probability ``2**-54`` (no draw lies beyond ``F^{-1}(2**-54)``).

        Research/auditing sampler: not hardened against floating-point side channels.
        """
        check_rng(rng)
        w = 1.0 - rng.random(size)
        sign = np.where(rng.random(size) < 0.5, -1.0, 1.0)
        a = np.atleast_1d(np.asarray(w, dtype=np.float64))
        out = np.asarray(sign, dtype=np.float64).reshape(a.shape) * self._ppf_lower(a / 2.0)
        return float(out[0]) if size is None else out.reshape(np.shape(w))




def _default_relation(relation: Relation | None) -> Relation:
    return Replace() if relation is None else relation


# ======================================================================================
# Gaussian
# ======================================================================================


@dataclass(frozen=True, slots=True)
class GaussianCND(CanonicalNoise):
    r"""The CND of :math:`G_\mu`: :math:`N\sim N(0,1/\mu^2)`, :math:`F(x)=\Phi(\mu x)`.

    :math:`T(N,N+1)=G_\mu` [DRS22, Def. 2.7]; the Gaussian is a CND of
    :math:`G_\mu` [AV23, Sec. 3] (reference ``semi-dp.md`` Sec. 6). Tails via
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
        # paper convention G_mu(s) = Phi(Phi^{-1}(s) - mu)   (semi-dp.md Sec. 1)
        with np.errstate(divide="ignore"):
            return np.asarray(special.ndtr(special.ndtri(s) - self.mu), dtype=np.float64)

    def pdf(self, x: ArrayLike) -> FloatArray:
        """Density :math:`\\mu\\varphi(\\mu x)`."""
        a, _ = _as_real_array("x", x)
        return np.asarray(self.mu * np.exp(-0.5 * (self.mu * a) ** 2) / math.sqrt(2 * math.pi))

    def guarantee(self, relation: Relation | None = None) -> Guarantee:
        r""":math:`\mu`-GDP on ``relation`` (default replace-one) for sensitivity-1 statistics."""
        return GDP(self.mu, _default_relation(relation))

    def sample(
        self, *, rng: np.random.Generator, size: int | tuple[int, ...] | None = None
    ) -> float | FloatArray:
        """``rng.standard_normal(size) / mu`` (research/auditing sampler)."""
        check_rng(rng)
        z = rng.standard_normal(size) / self.mu
        return float(z) if size is None else np.asarray(z, dtype=np.float64)


# ======================================================================================
# Tulap
# ======================================================================================


@dataclass(frozen=True, slots=True)
class Tulap(CanonicalNoise):
    r"""Truncated-uniform-Laplace noise, the CND of :math:`f_{\varepsilon,\delta}` [AS18, AV23].

    Parameters :math:`b=e^{-\varepsilon}`, :math:`q=\frac{2\delta b}{1-b+2\delta b}`,
    location 0 (use :func:`tulap_cdf` etc. for a location ``m``). Untruncated CDF
    (``[y]`` the nearest integer) [AS18, Def. 4.1], reference ``semi-dp.md`` Sec. 6:

    .. math:: F_0(y)=\frac{b^{-[y]}}{1+b}\Big(b+\big(y-[y]+\tfrac12\big)(1-b)\Big),\quad y\le0,
              \qquad F_0(y)=1-F_0(-y),\quad y>0,

    and for ``delta > 0`` the truncation
    :math:`F(y)=\min\{1,\max\{0,(F_0(y)-q/2)/(1-q)\}\}`.

    Numerics: the lower tail is the product form above (relative accuracy, in
    log space for :meth:`logcdf`: :math:`\log F_0(y)=[y]\varepsilon-\log(1+b)+\log(b+\dots)`),
    and the upper tail is computed as the lower tail of :math:`-y`; the textbook
    ``1 - ...`` form, which rounds every upper-tail probability below ``1e-16``
    to 0, is never used for a small result.

    Sampling [AS18, Alg. 2]: :math:`N=G_1-G_2+U`, :math:`G_i` i.i.d. geometric with
    :math:`P(G=k)=(1-b)b^k`, :math:`U\sim U(-\frac12,\frac12)`; for ``delta > 0`` draws
    with :math:`F_0(N)\notin[q/2,1-q/2]` are rejected and redrawn (acceptance ``1 - q``).

    Parameters
    ----------
    epsilon:
        ``> 0`` and finite. (``epsilon = 0`` with ``delta > 0`` has the uniform CND;
        build it with ``cnd_from_tradeoff(TradeoffCurve.from_approx_dp(0, delta))``.)
    delta:
        In ``[0, 1)``.

    Examples
    --------
    >>> t = Tulap(1.0)
    >>> [round(t.cdf(x), 10) for x in (-2.3, 0.2, 1.7)]          # T-C1
    [0.0489054147, 0.5924234315, 0.9135701315]
    >>> round(Tulap(1.0, 0.01).q, 6), round(Tulap(1.0, 0.01).fixed_point, 6)   # T-C2
    (0.011506, 0.266252)
    >>> t.sf(60.0) > 0.0 and t.logsf(2000.0) < -1999              # no underflow to 0
    True
    """

    epsilon: float
    """Privacy parameter, ``> 0``."""
    delta: float = 0.0
    """Privacy parameter, in ``[0, 1)``; ``> 0`` truncates the distribution."""
    _b: float = field(default=0.0, init=False, repr=False, compare=False)
    _omb: float = field(default=0.0, init=False, repr=False, compare=False)  # 1 - b
    _q: float = field(default=0.0, init=False, repr=False, compare=False)
    _log1pb: float = field(default=0.0, init=False, repr=False, compare=False)
    _given_bq: bool = field(default=False, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        eps = check_positive("epsilon", self.epsilon)
        d = check_in_interval("delta", self.delta, 0.0, 1.0, hi_open=True)
        object.__setattr__(self, "epsilon", eps)
        object.__setattr__(self, "delta", d)
        b = math.exp(-eps)
        omb = -math.expm1(-eps)
        self._set_bq(b, omb, 2.0 * d * b / (omb + 2.0 * d * b) if d > 0 else 0.0)

    def _set_bq(self, b: float, omb: float, q: float) -> None:
        object.__setattr__(self, "_b", b)
        object.__setattr__(self, "_omb", omb)
        object.__setattr__(self, "_q", q)
        object.__setattr__(self, "_log1pb", math.log1p(b))

    @classmethod
    def from_bq(cls, b: float, q: float = 0.0) -> Tulap:
        r"""Tulap with the parameters of [AS18] used as given: ``b`` in ``(0, 1)``, ``q`` in ``[0, 1)``.

        ``epsilon = -log b`` and ``delta = q (1 - b) / (2 b (1 - q))`` are recorded
        for the guarantee (they invert the map in the class docstring), each
        rounded up (computed at 50 digits, then one step up).
        """
        bb = check_in_interval("b", b, 0.0, 1.0, lo_open=True, hi_open=True)
        qq = check_in_interval("q", q, 0.0, 1.0, hi_open=True)
        # Recorded guarantee rounded conservatively (house style R6): epsilon and delta up.
        mb, mq = MP.mpf(bb), MP.mpf(qq)
        delta = up(mq * (1 - mb) / (2 * mb * (1 - mq))) if qq > 0 else 0.0
        if not delta < 1.0:
            raise InvalidArgument(f"q={q!r} with b={b!r} corresponds to delta={delta!r} >= 1.")
        t = cls(up(-MP.log(mb)), delta)
        t._set_bq(bb, 1.0 - bb, qq)
        object.__setattr__(t, "_given_bq", True)
        return t

    @property
    def b(self) -> float:
        r""":math:`b=e^{-\varepsilon}`."""
        return self._b

    @property
    def q(self) -> float:
        r"""Truncation mass :math:`q=2\delta b/(1-b+2\delta b)` (``0`` when ``delta = 0``)."""
        return self._q

    # -- untruncated pieces --

    def _f0_lower(self, y: FloatArray) -> FloatArray:
        k = np.rint(y)
        with np.errstate(under="ignore"):
            return np.exp(k * self.epsilon) * ((self._b + (y - k + 0.5) * self._omb) / (1.0 + self._b))

    def _log_f0_lower(self, y: FloatArray) -> FloatArray:
        k = np.rint(y)
        return k * self.epsilon - self._log1pb + np.log(self._b + (y - k + 0.5) * self._omb)

    def _f0_ppf_lower(self, v: FloatArray) -> FloatArray:
        """Inverse of the untruncated CDF on ``[0, 1/2]``."""
        with np.errstate(divide="ignore", invalid="ignore"):
            lw = np.log(v) + self._log1pb  # log(v (1 + b)), in (-inf, log((1+b)/2)]
            j = np.maximum(np.floor(-lw / self.epsilon), 0.0)
            t = np.exp(lw + j * self.epsilon)  # in (b, 1]
            s = np.clip((t - self._b) / self._omb - 0.5, -0.5, 0.5)
            out = -j + s
        return np.where(v <= 0.0, -math.inf, out)

    # -- hooks --

    def _lower(self, y: FloatArray) -> FloatArray:
        f0 = self._f0_lower(y)
        if self._q == 0.0:
            return f0
        half = self._q / 2.0
        diff = f0 - half
        out = np.clip(diff / (1.0 - self._q), 0.0, 1.0)
        # Near the truncation edge F_0(y) - q/2 cancels (both ~q/2, the difference tiny):
        # where more than ~10 bits would be lost, recompute that entry in mpmath, so the
        # CDF keeps its relative accuracy down to the edge (a handful of entries at most
        # in a UMPU sum, whose arguments are spaced by 1).
        near = np.abs(diff) < half * 2.0**-10
        if np.any(near):
            out[near] = [self._lower_mp(float(v)) for v in y[near]]
        return out

    def _lower_mp(self, y: float) -> float:
        """Truncated ``F(y)``, ``y <= 0``, at 40 digits (for arguments next to the edge)."""
        ctx = mpmath.MPContext()
        ctx.dps = 40
        if self._given_bq:
            b, q = ctx.mpf(self._b), ctx.mpf(self._q)
        else:
            b = ctx.exp(-ctx.mpf(self.epsilon))
            d = ctx.mpf(self.delta)
            q = 2 * d * b / (1 - b + 2 * d * b)
        yy = ctx.mpf(y)
        k = ctx.nint(yy)
        f0 = b ** (-k) / (1 + b) * (b + (yy - k + ctx.mpf(1) / 2) * (1 - b))
        return float(min(ctx.mpf(1), max(ctx.mpf(0), (f0 - q / 2) / (1 - q))))

    def _log_lower(self, y: FloatArray) -> FloatArray:
        if self._q == 0.0:
            return self._log_f0_lower(y)
        with np.errstate(divide="ignore"):
            return np.log(self._lower(y))

    def _ppf_lower(self, u: FloatArray) -> FloatArray:
        if self._q == 0.0:
            return self._f0_ppf_lower(u)
        v = self._q / 2.0 + (1.0 - self._q) * u
        return self._f0_ppf_lower(v)

    def _target_paper(self, s: FloatArray) -> FloatArray:
        # f_{eps,delta}(s) = max{0, 1 - delta - e^eps (1 - s), e^-eps (s - delta)}  (paper conv.)
        e = math.exp(self.epsilon)
        lines = np.maximum(1.0 - self.delta - e * (1.0 - s), self._b * (s - self.delta))
        return np.maximum(lines, 0.0)

    @property
    def support_edge(self) -> float:
        """``sup |N|``: ``inf`` when ``delta = 0``, else ``-F_0^{-1}(q/2)``."""
        if self._q == 0.0:
            return math.inf
        return float(-self._f0_ppf_lower(np.array([self._q / 2.0]))[0])

    def pdf(self, x: ArrayLike) -> FloatArray:
        r"""Density: :math:`b^{|[y]|}(1-b)/(1+b)`, divided by ``1 - q`` inside the truncation."""
        a, _ = _as_real_array("x", x)
        k = np.abs(np.rint(a))
        with np.errstate(under="ignore", invalid="ignore"):
            dens = np.exp(-k * self.epsilon) * self._omb / (1.0 + self._b)
        dens = np.where(np.isfinite(a), dens, 0.0)
        if self._q > 0.0:
            dens = np.where(np.abs(a) <= self.support_edge, dens / (1.0 - self._q), 0.0)
        return np.asarray(dens, dtype=np.float64)

    def guarantee(self, relation: Relation | None = None) -> Guarantee:
        r""":math:`\varepsilon`-DP (``delta = 0``) or :math:`(\varepsilon,\delta)`-DP on ``relation``."""
        rel = _default_relation(relation)
        if self.delta == 0.0:
            return PureDP(self.epsilon, rel)
        return ApproxDP(self.epsilon, self.delta, rel)

    def sample(
        self, *, rng: np.random.Generator, size: int | tuple[int, ...] | None = None
    ) -> float | FloatArray:
        """Geometric-difference sampler with rejection for the truncation [AS18, Alg. 2].

        Research/auditing sampler: not hardened against floating-point side channels.
        """
        check_rng(rng)
        shape: tuple[int, ...] = () if size is None else tuple(np.atleast_1d(size).tolist())
        n = int(np.prod(shape)) if shape else 1
        out = np.empty(n, dtype=np.float64)
        todo = np.arange(n)
        edge = self.support_edge
        while todo.size:
            m = todo.size
            g1 = rng.geometric(self._omb, m) - 1  # P(G = k) = (1 - b) b^k, k >= 0
            g2 = rng.geometric(self._omb, m) - 1
            u = rng.random(m) - 0.5
            draw = (g1 - g2).astype(np.float64) + u
            ok = np.abs(draw) <= edge
            out[todo[ok]] = draw[ok]
            todo = todo[~ok]
        return float(out[0]) if size is None else out.reshape(shape)


def _tulap_from(b: float, q: float) -> Tulap:
    return Tulap.from_bq(b, q)


def tulap_cdf(x: ArrayLike, m: float, b: float, q: float = 0.0) -> float | FloatArray:
    r"""CDF of :math:`\mathrm{Tulap}(m,b,q)` at ``x`` [AS18, Def. 4.1] (upper tail without cancellation).

    Examples
    --------
    >>> round(tulap_cdf(0.2, 0.0, math.exp(-1)), 10)      # T-C1
    0.5924234315
    """
    mm = check_finite_real("m", m)
    a, s = _as_real_array("x", x)
    return _ret(_tulap_from(b, q)._cdf_arr(a - mm), s)


def tulap_ppf(u: ArrayLike, m: float, b: float, q: float = 0.0) -> float | FloatArray:
    r"""Quantile of :math:`\mathrm{Tulap}(m,b,q)`."""
    mm = check_finite_real("m", m)
    a, s = _as_prob_array("u", u)
    with np.errstate(divide="ignore"):
        return _ret(mm + _tulap_from(b, q)._ppf_arr(a), s)


def tulap_sample(
    m: float, b: float, q: float = 0.0, *, rng: np.random.Generator, size: int | None = None
) -> float | FloatArray:
    r"""Draws of :math:`\mathrm{Tulap}(m,b,q)` (research/auditing sampler; see :class:`Tulap`)."""
    mm = check_finite_real("m", m)
    draw = _tulap_from(b, q).sample(rng=rng, size=size)
    return mm + draw


# ======================================================================================
# general construction (Awan & Vadhan Thm 3.9; reference Lemma 36)
# ======================================================================================

#: Arrays of at most this many distinct fractional offsets are evaluated by shared chains.
_CHAIN_MAX_UNIQUE = 64


@dataclass(frozen=True, slots=True, eq=False)
class TradeoffCND(CanonicalNoise):
    r"""The CND of a symmetric nontrivial tradeoff function [AV23, Thm. 3.9] (reference Lemma 36).

    With :math:`c` the fixed point :math:`f^{\rm std}(c)=c` (:math:`c<1/2`),

    .. math:: F(x)=\begin{cases} f^{\rm paper}\big(F(x+1)\big) & x<-\tfrac12\\
              c\,(\tfrac12-x)+(1-c)(x+\tfrac12) & -\tfrac12\le x\le\tfrac12\\
              1-F(-x) & x>\tfrac12 \end{cases}

    (std form: :math:`F(x)=f^{\rm std}(1-F(x+1))` for :math:`x<-\frac12`). ``F(x)`` for
    :math:`x<-\frac12` is ``k = ceil(-x - 1/2)`` applications of :math:`f^{\rm paper}` to
    the linear piece; arrays whose arguments share few fractional parts (as in the
    UMPU test, where all arguments are ``integer - m``) share one chain, stopped as
    soon as it reaches 0. Quantiles by locating the unit cell on the chain of cell
    boundaries :math:`F(-\frac12-j)` and bisecting inside it (60 steps).

    Build with :func:`cnd_from_tradeoff`. Tail accuracy depends on the input: a
    callable given in the *paper* convention is evaluated at the small tail
    probabilities directly; one given in the std convention is evaluated at
    ``1 - s``, which rounds ``s < 1e-16`` away (the tail then drops to 0 early, an
    absolute error below ``1e-16``).
    """

    f_paper: Callable[[FloatArray], FloatArray]
    """The target tradeoff function, paper convention, vectorised (``f(s) <= s``)."""
    c: float
    """Fixed point: ``f_std(c) = c``, ``0 <= c < 1/2``; ``F(-1/2) = c``."""
    curve: TradeoffCurve
    """A certified piecewise-linear lower bound of the target (std), used for :meth:`guarantee`."""
    source: str = "callable"
    """Where the target came from: ``"callable (std)"``, ``"callable (paper)"`` or ``"TradeoffCurve"``."""
    max_steps: int = 10**6
    """Refuse chains longer than this (heavy tails would need too many applications of ``f``)."""

    # -- the chain --

    def _base(self, s: FloatArray) -> FloatArray:
        return self.c + (1.0 - 2.0 * self.c) * (s + 0.5)

    def _f(self, v: FloatArray) -> FloatArray:
        out = np.asarray(self.f_paper(v), dtype=np.float64).reshape(v.shape)
        return np.clip(out, 0.0, v)  # f_paper(s) <= s; clipping only removes float noise

    def _too_long(self) -> InvalidArgument:
        return InvalidArgument(
            f"the CND chain needs more than max_steps={self.max_steps} applications of f: the "
            "target tradeoff function has very heavy-tailed canonical noise here. Raise "
            "max_steps, or use a closed-form CND (GaussianCND, Tulap)."
        )

    def _lower(self, y: FloatArray) -> FloatArray:
        if y.size == 0:
            return np.empty(y.shape)
        k = np.maximum(np.ceil(-y - 0.5), 0.0)
        s = y + k  # exact (Sterbenz); in [-1/2, 1/2)
        ki = k.astype(np.int64)
        su, inv = np.unique(s, return_inverse=True)
        inv = inv.reshape(y.shape)
        if su.size <= _CHAIN_MAX_UNIQUE:
            # one chain per distinct offset, stopped when every value has reached 0
            kmax = int(ki.max())
            rows = [self._base(su)]
            while len(rows) <= kmax and np.any(rows[-1] > 0.0):
                if len(rows) > self.max_steps:
                    raise self._too_long()
                rows.append(self._f(rows[-1]))
            chain = np.array(rows)
            idx = np.minimum(ki, len(rows) - 1)
            out = chain[idx, inv]
            return np.where(ki < len(rows), out, 0.0)
        # many distinct offsets: iterate on the still-active entries only
        v = self._base(s).ravel()
        rem = ki.ravel().copy()
        act = np.nonzero((rem > 0) & (v > 0.0))[0]
        steps = 0
        while act.size:
            steps += 1
            if steps > self.max_steps:
                raise self._too_long()
            v[act] = self._f(v[act])
            rem[act] -= 1
            act = act[(rem[act] > 0) & (v[act] > 0.0)]
        v[rem > 0] = 0.0
        return v.reshape(y.shape)

    def _log_lower(self, y: FloatArray) -> FloatArray:
        with np.errstate(divide="ignore"):
            return np.log(self._lower(y))

    def _boundaries(self, umin: float) -> FloatArray:
        """``B_j = F(-1/2 - j)``, ``j = 0, 1, ...``, until ``B_j < umin`` or ``B_j = 0``."""
        rows = [self.c]
        v = np.array([self.c])
        while rows[-1] >= umin and rows[-1] > 0.0:
            if len(rows) > self.max_steps:
                raise self._too_long()
            v = self._f(v)
            rows.append(float(v[0]))
        return np.array(rows)

    def _ppf_lower(self, u: FloatArray) -> FloatArray:
        out = np.empty(u.shape, dtype=np.float64)
        mid = u >= self.c
        if self.c < 0.5:
            out[mid] = (u[mid] - self.c) / (1.0 - 2.0 * self.c) - 0.5
        else:  # pragma: no cover - excluded at construction (nontrivial f)
            out[mid] = 0.0
        out[u <= 0.0] = -math.inf
        tail = (u < self.c) & (u > 0.0)
        if not np.any(tail):
            return out
        ut = u[tail]
        bnd = self._boundaries(float(ut.min()))
        # cell j: B_{j+1} < u <= B_j  <=>  y in (-3/2 - j, -1/2 - j]
        j = np.searchsorted(-bnd, -ut, side="left") - 1  # largest j with B_j >= u
        j = np.clip(j, 0, len(bnd) - 2)
        steps = j + 1
        # bisection on the linear-piece value v in [c, 1 - c]: F(-(j+1) + s(v)) = f^{j+1}(v)
        lo = np.full(ut.shape, self.c)
        hi = np.full(ut.shape, 1.0 - self.c)
        for _ in range(60):
            midv = 0.5 * (lo + hi)
            val = self._apply_n(midv, steps)
            ge = val >= ut
            hi = np.where(ge, midv, hi)
            lo = np.where(ge, lo, midv)
        s = (hi - self.c) / (1.0 - 2.0 * self.c) - 0.5
        out[tail] = s - steps
        return out

    def _apply_n(self, v: FloatArray, n: NDArray[np.int64]) -> FloatArray:
        """``f_paper`` applied ``n[i]`` times to ``v[i]``."""
        v = v.copy()
        rem = n.copy()
        act = np.nonzero(rem > 0)[0]
        while act.size:
            v[act] = self._f(v[act])
            rem[act] -= 1
            act = act[rem[act] > 0]
        return v

    def _target_paper(self, s: FloatArray) -> FloatArray:
        return np.asarray(self.f_paper(s), dtype=np.float64).reshape(s.shape)

    def guarantee(self, relation: Relation | None = None) -> Guarantee:
        """``TradeOff(curve)`` on ``relation``: the certified PL lower bound of the target.

        The mechanism ``S(X) + N`` is ``f``-DP for the target ``f`` itself; the
        guarantee object can only carry a piecewise-linear lower bound, which is
        weaker and therefore also valid (see :func:`cnd_from_tradeoff`).
        """
        return TradeOff(self.curve, _default_relation(relation))

    def __repr__(self) -> str:
        return f"TradeoffCND(c={self.c!r}, source={self.source!r}, curve={self.curve!r})"


def _vectorised(f: Callable[..., object]) -> Callable[[FloatArray], FloatArray]:
    """Wrap a scalar or vectorised callable as ``array -> float64 array`` of the same shape."""
    probe = np.array([0.25, 0.5, 0.75])
    try:
        r = np.asarray(f(probe), dtype=np.float64)
        vec = r.shape == probe.shape
    except Exception:  # noqa: BLE001 - any failure means "not vectorised"
        vec = False

    if vec:
        def g(v: FloatArray) -> FloatArray:
            return np.asarray(f(v), dtype=np.float64).reshape(np.shape(v))
    else:
        def g(v: FloatArray) -> FloatArray:
            flat = np.ravel(v)
            out = np.array([float(f(float(t))) for t in flat], dtype=np.float64)  # type: ignore[arg-type]
            return out.reshape(np.shape(v))

    return g


def _symmetrise(curve: TradeoffCurve) -> TradeoffCurve:
    """Greatest convex minorant of ``min(f, f^{-1})``: symmetric, ``<= f``, a tradeoff function.

    The vertices of ``f^{-1}`` are those of ``f`` reflected in the diagonal; the
    lower hull of both vertex sets is the minorant. For an exactly symmetric
    curve this returns the same polygon.
    """
    pts: dict[float, float] = {}
    for a, b in zip(curve.alphas, curve.betas):
        for x, y in ((a, b), (b, a)):
            pts[x] = min(y, pts.get(x, math.inf))
    xs = sorted(pts)
    hx, hy = convex_minorant(xs, [pts[x] for x in xs])
    if hy[-1] != 0.0 or hx[-1] != 1.0 or hx[0] != 0.0:  # pragma: no cover - defensive
        raise InvalidArgument("internal: symmetrised curve does not span [0, 1].")
    return TradeoffCurve(tuple(hx), tuple(hy))


def _pl_lower_bound(xs: FloatArray, ys: FloatArray) -> TradeoffCurve:
    """A convex PL lower bound of a convex non-increasing ``f`` from exact samples ``ys = f(xs)``.

    On ``[x_i, x_{i+1}]`` the secants of the neighbouring intervals, extended, lie
    below a convex function (a secant lies below it outside its own interval); the
    polygon through the grid points and the intersections of those two secants is
    therefore ``<= f``, and its greatest convex minorant is returned. Values are
    lowered by an absolute ``1e-12`` for float error in the samples and the line
    arithmetic.
    """
    pad = 1e-12
    ys = np.maximum(np.minimum(ys - pad, np.nextafter(1.0 - xs, -1.0)), 0.0)
    n = len(xs) - 1
    m = np.diff(ys) / np.diff(xs)  # secant slopes, interval i = [x_i, x_{i+1}]
    px: list[float] = []
    py: list[float] = []

    def line(i: int, x: float) -> float:
        return float(ys[i] + m[i] * (x - xs[i]))

    # first interval: the secant of interval 1 extended left
    px.append(0.0)
    py.append(min(float(ys[0]), line(1, 0.0)) - pad)
    for i in range(1, n - 1):
        px.append(float(xs[i]))
        py.append(float(ys[i]))
        if m[i + 1] > m[i - 1]:
            z = (ys[i + 1] - ys[i] - m[i + 1] * xs[i + 1] + m[i - 1] * xs[i]) / (m[i - 1] - m[i + 1])
            z = float(min(max(z, xs[i]), xs[i + 1]))
        else:
            z = float(0.5 * (xs[i] + xs[i + 1]))
        if xs[i] < z < xs[i + 1]:
            px.append(z)
            py.append(min(line(i - 1, z), line(i + 1, z)) - pad)
    px.append(float(xs[n - 1]))
    py.append(float(ys[n - 1]))
    # last interval: the secant of interval n-2 extended right, floored at 0
    if m[n - 2] < 0.0:
        w = float(xs[n - 1] - ys[n - 1] / m[n - 2])
        if xs[n - 1] < w < 1.0:
            px.append(w)
            py.append(0.0)
    px.append(1.0)
    py.append(0.0)
    pyc = [max(0.0, v) for v in py]
    hx, hy = convex_minorant(px, pyc)
    return TradeoffCurve(tuple(hx), tuple(hy))


def cnd_from_tradeoff(
    f: Callable[..., object] | TradeoffCurve,
    *,
    convention: Convention | None = None,
    grid_size: int = 2049,
    max_steps: int = 10**6,
) -> TradeoffCND:
    r"""The canonical noise distribution of a symmetric nontrivial tradeoff function [AV23, Thm. 3.9].

    Parameters
    ----------
    f:
        Either a callable ``alpha -> f(alpha)`` on ``[0, 1]`` (scalar or vectorised),
        in the convention named by ``convention`` (required for callables), or a
        :class:`~accountant.tradeoff.TradeoffCurve` (standard convention by
        construction; ``convention`` must be omitted or ``"std"``). A curve is first
        replaced by the greatest convex minorant of ``min(f, f^{-1})`` (symmetric and
        ``<= f``; identical for a symmetric curve) because the construction needs
        symmetry.
    convention:
        ``"std"`` or ``"paper"`` (see the module docstring).
    grid_size:
        Number of grid points (``>= 17``) for validating a callable and for the
        certified piecewise-linear lower bound used by :meth:`TradeoffCND.guarantee`.
    max_steps:
        Longest chain of applications of ``f`` allowed when evaluating tails.

    Returns
    -------
    TradeoffCND

    Raises
    ------
    InvalidArgument
        If ``convention`` is missing for a callable or invalid; if ``f`` fails a
        check on the grid (values in ``[0, 1]``, ``f_std <= 1 - alpha``,
        non-increasing, convex, symmetric: ``f(f(alpha)) = alpha`` wherever
        ``f(alpha) > 0``, tolerance ``1e-7``); or if ``f`` is trivial
        (``f_std(1/2) >= 1/2``, i.e. ``f = 1 - alpha``: no noise distribution is canonical).

    Notes
    -----
    The callable is trusted as the exact target; the checks catch mistakes, they
    do not certify it. For the guarantee a PL lower bound is built from the grid
    (secants of neighbouring intervals; see ``_pl_lower_bound``), so
    ``guarantee()`` never claims more than ``f``.

    Examples
    --------
    >>> from scipy.stats import norm
    >>> g1 = cnd_from_tradeoff(lambda a: norm.cdf(norm.ppf(a) - 1.0), convention="paper")
    >>> round(g1.c, 7), round(g1.cdf(-0.7), 8), round(g1.cdf(1.2), 8)     # T-C3
    (0.3085375, 0.23948951, 0.88359755)
    >>> t = cnd_from_tradeoff(TradeoffCurve.from_approx_dp(1.0, 0.01))
    >>> abs(t.cdf(-2.3) - Tulap(1.0, 0.01).cdf(-2.3)) < 1e-12
    True
    """
    steps = check_int("max_steps", max_steps, minimum=1)
    gs = check_int("grid_size", grid_size, minimum=17)
    if isinstance(f, TradeoffCurve):
        if convention not in (None, "std"):
            raise InvalidArgument(
                f"convention={convention!r}: a TradeoffCurve is always in the standard "
                "convention; omit convention or pass 'std'."
            )
        curve = _symmetrise(f)
        f_paper: Callable[[FloatArray], FloatArray] = lambda s: np.asarray(
            curve.paper(np.clip(np.asarray(s, dtype=np.float64), 0.0, 1.0)), dtype=np.float64
        )
        f_std: Callable[[FloatArray], FloatArray] = lambda a: np.asarray(
            curve.std(np.clip(np.asarray(a, dtype=np.float64), 0.0, 1.0)), dtype=np.float64
        )
        source = "TradeoffCurve"
    else:
        if not callable(f):
            raise InvalidArgument(
                f"f={f!r} must be a callable tradeoff function or an accountant TradeoffCurve."
            )
        if convention is None:
            raise InvalidArgument(
                "convention is required for a callable tradeoff function: pass convention='std' "
                "(Dong-Roth-Su, non-increasing, f(alpha) <= 1 - alpha) or convention='paper' "
                "(Cho & Awan, non-decreasing, f(alpha) <= alpha)."
            )
        conv = _check_convention(convention)
        g = _vectorised(f)
        if conv == "paper":
            f_paper = g
            f_std = lambda a: g(1.0 - np.asarray(a, dtype=np.float64))
        else:
            f_std = g
            f_paper = lambda s: g(1.0 - np.asarray(s, dtype=np.float64))
        source = f"callable ({conv})"
        t = 0.5 * (1.0 - np.cos(np.linspace(0.0, math.pi, gs)))  # dense near 0 and 1
        t[0], t[-1] = 0.0, 1.0
        ys = f_std(t)
        _validate_grid(t, ys, f_std)
        curve = _pl_lower_bound(t, ys)
    half = float(f_std(np.array([0.5]))[0])
    if not half < 0.5:
        raise InvalidArgument(
            f"f is trivial: f_std(1/2) = {half!r} is not < 1/2, so f = 1 - alpha (perfect "
            "privacy) and no noise distribution is canonical for it."
        )
    zero = float(f_std(np.array([0.0]))[0])
    if zero <= 0.0:
        c = 0.0
    else:
        c = float(
            optimize.brentq(
                lambda a: float(f_std(np.array([a]))[0]) - a, 0.0, 0.5, xtol=1e-300, rtol=4 * 2.0**-52
            )
        )
    return TradeoffCND(f_paper=f_paper, c=c, curve=curve, source=source, max_steps=steps)


def _validate_grid(t: FloatArray, ys: FloatArray, f_std: Callable[[FloatArray], FloatArray]) -> None:
    tol = 1e-9
    if ys.shape != t.shape or not np.all(np.isfinite(ys)):
        raise InvalidArgument("f returned non-finite values (or the wrong shape) on [0, 1].")
    if np.any(ys < -tol) or np.any(ys > 1.0 + tol):
        i = int(np.argmax((ys < -tol) | (ys > 1.0 + tol)))
        raise InvalidArgument(f"f must map [0, 1] into [0, 1]; specifically f_std({t[i]!r}) = {ys[i]!r}.")
    over = ys - (1.0 - t)
    if np.any(over > tol):
        i = int(np.argmax(over))
        raise InvalidArgument(
            f"f_std(alpha) <= 1 - alpha fails at alpha={t[i]!r} (f_std = {ys[i]!r}). Is the "
            "callable in the paper convention? Then pass convention='paper'."
        )
    d = np.diff(ys)
    if np.any(d > tol):
        i = int(np.argmax(d))
        raise InvalidArgument(
            f"f_std must be non-increasing; it increases between alpha={t[i]!r} and {t[i + 1]!r}. "
            "Is the callable in the paper convention? Then pass convention='paper'."
        )
    slopes = d / np.diff(t)
    if np.any(np.diff(slopes) * np.diff(t)[1:] < -1e-7):
        i = int(np.argmin(np.diff(slopes)))
        raise InvalidArgument(f"f must be convex; the slope decreases near alpha={t[i + 1]!r}.")
    pos = ys > 1e-9
    back = f_std(np.clip(ys[pos], 0.0, 1.0))
    err = np.abs(back - t[pos])
    if np.any(err > 1e-7):
        i = int(np.argmax(err))
        raise InvalidArgument(
            "f must be symmetric (f = f^{-1}, as for any DP guarantee under a symmetric "
            f"neighbouring relation); specifically f(f({t[pos][i]!r})) = {back[i]!r}. "
            "Symmetrise it first, e.g. min(f, f^{-1}) and its convex minorant."
        )
