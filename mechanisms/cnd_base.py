"""The canonical noise distribution interface [AV23, Def. 3.2].

Cdf, quantile, sampler and tradeoff function of a CND, and the argument helpers shared by its
implementations.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from typing import Literal, overload

import numpy as np
from numpy.typing import ArrayLike, NDArray

from semidp.accountant.core.arguments import (
    check_rng,
)
from semidp.accountant.core.errors import InvalidArgument
from semidp.accountant.guarantees.definitions import Guarantee
from semidp.accountant.guarantees.relations import Relation, Replace

FloatArray = NDArray[np.float64]


Convention = Literal["std", "paper"]
"""Tradeoff-function convention: ``"std"`` (Dong--Roth--Su) or ``"paper"`` (Cho & Awan)."""


def check_convention(convention: object) -> Convention:
    if convention == "std":
        return "std"
    if convention == "paper":
        return "paper"
    raise InvalidArgument(
        f"convention={convention!r} must be 'std' (Dong-Roth-Su: f(alpha) non-increasing, "
        "f(alpha) <= 1 - alpha) or 'paper' (Cho & Awan: f_paper(alpha) = f_std(1 - alpha))."
    )


def as_real_array(name: str, x: ArrayLike) -> tuple[FloatArray, bool]:
    """``(array, is_scalar)``; raises on NaN or non-real input (never returns NaN)."""
    try:
        a = np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError) as e:
        raise InvalidArgument(f"{name}={x!r} must be a real number or an array of them.") from e
    if np.any(np.isnan(a)):
        raise InvalidArgument(f"{name} contains NaN; got {x!r}.")
    return a, a.ndim == 0


def as_prob_array(name: str, u: ArrayLike) -> tuple[FloatArray, bool]:
    a, scalar = as_real_array(name, u)
    bad = ~((a >= 0.0) & (a <= 1.0))
    if np.any(bad):
        raise InvalidArgument(f"{name} must lie in [0, 1]; got {float(a[bad].flat[0])!r}.")
    return a, scalar


def scalar_or_array(a: FloatArray, scalar: bool) -> float | FloatArray:
    return float(a.reshape(())) if scalar else a


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
        a, s = as_real_array("x", x)
        return scalar_or_array(self._cdf_arr(a), s)

    @overload
    def sf(self, x: float) -> float: ...
    @overload
    def sf(self, x: FloatArray) -> FloatArray: ...

    def sf(self, x: ArrayLike) -> float | FloatArray:
        """Survival function :math:`1-F(x)=F(-x)`, computed from the small side."""
        a, s = as_real_array("x", x)
        return scalar_or_array(self._cdf_arr(-a), s)

    @overload
    def logcdf(self, x: float) -> float: ...
    @overload
    def logcdf(self, x: FloatArray) -> FloatArray: ...

    def logcdf(self, x: ArrayLike) -> float | FloatArray:
        r""":math:`\log F(x)`, accurate in the far lower tail (closed forms do not underflow)."""
        a, s = as_real_array("x", x)
        with np.errstate(divide="ignore"):
            return scalar_or_array(self._logcdf_arr(a), s)

    @overload
    def logsf(self, x: float) -> float: ...
    @overload
    def logsf(self, x: FloatArray) -> FloatArray: ...

    def logsf(self, x: ArrayLike) -> float | FloatArray:
        r""":math:`\log(1-F(x))=\log F(-x)`."""
        a, s = as_real_array("x", x)
        with np.errstate(divide="ignore"):
            return scalar_or_array(self._logcdf_arr(-a), s)

    @overload
    def ppf(self, u: float) -> float: ...
    @overload
    def ppf(self, u: FloatArray) -> FloatArray: ...

    def ppf(self, u: ArrayLike) -> float | FloatArray:
        r"""Quantile :math:`F^{-1}(u)=\inf\{y: F(y)\ge u\}`, ``u`` in ``[0, 1]``."""
        a, s = as_prob_array("u", u)
        with np.errstate(divide="ignore"):
            return scalar_or_array(self._ppf_arr(a), s)

    @overload
    def isf(self, u: float) -> float: ...
    @overload
    def isf(self, u: FloatArray) -> FloatArray: ...

    def isf(self, u: ArrayLike) -> float | FloatArray:
        r"""Inverse survival function :math:`F^{-1}(1-u)=-F^{-1}(u)` (exact for small ``u``)."""
        a, s = as_prob_array("u", u)
        with np.errstate(divide="ignore"):
            return scalar_or_array(-self._ppf_arr(a), s)

    # ---- tradeoff functions -----------------------------------------------------------

    def target(self, alpha: ArrayLike, *, convention: Convention) -> float | FloatArray:
        """The tradeoff function ``f`` this distribution is canonical for, in ``convention``."""
        conv = check_convention(convention)
        a, s = as_prob_array("alpha", alpha)
        arg = a if conv == "paper" else 1.0 - a
        return scalar_or_array(np.asarray(self._target_paper(np.atleast_1d(arg)), dtype=np.float64).reshape(a.shape), s)

    def shift_tradeoff(self, alpha: ArrayLike, *, convention: Convention) -> float | FloatArray:
        r""":math:`T(N,N+1)` from the distribution itself, via threshold tests (CND property 3).

        Standard convention :math:`F(F^{-1}(1-\alpha)-1)`, evaluated as
        ``sf(ppf(alpha) + 1)`` (no cancellation for small ``alpha``); paper
        convention :math:`F(F^{-1}(\alpha)-1)`. For a CND this equals
        :meth:`target` (property 2); comparing the two is a numerical check of the
        construction.
        """
        conv = check_convention(convention)
        a, s = as_prob_array("alpha", alpha)
        with np.errstate(divide="ignore", invalid="ignore"):
            q = self._ppf_arr(a)
            val = self._cdf_arr(-(q + 1.0)) if conv == "std" else self._cdf_arr(q - 1.0)
        return scalar_or_array(val, s)

    @property
    def fixed_point(self) -> float:
        r""":math:`c=F(-1/2)`, the fixed point ``f_std(c) = c`` of the target tradeoff function."""
        return float(self._lower(np.array([-0.5]))[0])

    # ---- sampling -----------------------------------------------------------------------

    def sample(self, *, rng: np.random.Generator, size: int | tuple[int, ...] | None = None) -> float | FloatArray:
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


def default_relation(relation: Relation | None) -> Relation:
    return Replace() if relation is None else relation
