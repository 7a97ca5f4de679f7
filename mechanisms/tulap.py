"""The Tulap distribution, the canonical noise of (epsilon, delta)-DP [AS18; AV23, Thm. 4.8].

Cdf, quantile and an exact-in-law sampler.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import mpmath
import numpy as np
from numpy.typing import ArrayLike, NDArray

from semidp.accountant.core.arguments import (
    check_finite_real,
    check_in_interval,
    check_positive,
    check_rng,
)
from semidp.accountant.core.directed import MP, up
from semidp.accountant.core.errors import InvalidArgument
from semidp.accountant.guarantees.definitions import ApproxDP, Guarantee, PureDP
from semidp.accountant.guarantees.relations import Relation
from semidp.mechanisms.cnd_base import CanonicalNoise, as_prob_array, as_real_array, default_relation, scalar_or_array

FloatArray = NDArray[np.float64]


@dataclass(frozen=True, slots=True)
class Tulap(CanonicalNoise):
    r"""Truncated-uniform-Laplace noise, the CND of :math:`f_{\varepsilon,\delta}` [AS18, AV23].

    Parameters :math:`b=e^{-\varepsilon}`, :math:`q=\frac{2\delta b}{1-b+2\delta b}`,
    location 0 (use :func:`tulap_cdf` etc. for a location ``m``). Untruncated CDF
    (``[y]`` the nearest integer) [AS18, Def. 4.1], ``docs/reference/semi-dp.md`` Sec. 6:

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
        a, _ = as_real_array("x", x)
        k = np.abs(np.rint(a))
        with np.errstate(under="ignore", invalid="ignore"):
            dens = np.exp(-k * self.epsilon) * self._omb / (1.0 + self._b)
        dens = np.where(np.isfinite(a), dens, 0.0)
        if self._q > 0.0:
            dens = np.where(np.abs(a) <= self.support_edge, dens / (1.0 - self._q), 0.0)
        return np.asarray(dens, dtype=np.float64)

    def guarantee(self, relation: Relation | None = None) -> Guarantee:
        r""":math:`\varepsilon`-DP (``delta = 0``) or :math:`(\varepsilon,\delta)`-DP on ``relation``."""
        rel = default_relation(relation)
        if self.delta == 0.0:
            return PureDP(self.epsilon, rel)
        return ApproxDP(self.epsilon, self.delta, rel)

    def sample(self, *, rng: np.random.Generator, size: int | tuple[int, ...] | None = None) -> float | FloatArray:
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


def tulap_from(b: float, q: float) -> Tulap:
    return Tulap.from_bq(b, q)


def tulap_cdf(x: ArrayLike, m: float, b: float, q: float = 0.0) -> float | FloatArray:
    r"""CDF of :math:`\mathrm{Tulap}(m,b,q)` at ``x`` [AS18, Def. 4.1] (upper tail without cancellation).

    Examples
    --------
    >>> round(tulap_cdf(0.2, 0.0, math.exp(-1)), 10)      # T-C1
    0.5924234315
    """
    mm = check_finite_real("m", m)
    a, s = as_real_array("x", x)
    return scalar_or_array(tulap_from(b, q)._cdf_arr(a - mm), s)


def tulap_ppf(u: ArrayLike, m: float, b: float, q: float = 0.0) -> float | FloatArray:
    r"""Quantile of :math:`\mathrm{Tulap}(m,b,q)`."""
    mm = check_finite_real("m", m)
    a, s = as_prob_array("u", u)
    with np.errstate(divide="ignore"):
        return scalar_or_array(mm + tulap_from(b, q)._ppf_arr(a), s)


def tulap_sample(
    m: float, b: float, q: float = 0.0, *, rng: np.random.Generator, size: int | None = None
) -> float | FloatArray:
    r"""Draws of :math:`\mathrm{Tulap}(m,b,q)` (research/auditing sampler; see :class:`Tulap`)."""
    mm = check_finite_real("m", m)
    draw = tulap_from(b, q).sample(rng=rng, size=size)
    return mm + draw
