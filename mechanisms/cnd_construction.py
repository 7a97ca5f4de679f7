"""A canonical noise distribution for any symmetric tradeoff function f [AV23, Thm. 3.9].

The recursive construction on a piecewise-linear lower bound of f.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray
from scipy import optimize

from semidp.accountant.core.arguments import (
    check_int,
)
from semidp.accountant.core.errors import InvalidArgument
from semidp.accountant.guarantees.definitions import Guarantee, TradeOff
from semidp.accountant.guarantees.relations import Relation
from semidp.accountant.profiles.piecewise_linear import convex_minorant
from semidp.accountant.profiles.tradeoff import TradeoffCurve
from semidp.mechanisms.cnd_base import CanonicalNoise, Convention, check_convention, default_relation

FloatArray = NDArray[np.float64]


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
        return TradeOff(self.curve, default_relation(relation))

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
        :class:`~accountant.profiles.tradeoff.TradeoffCurve` (standard convention by
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
    >>> from semidp.mechanisms.tulap import Tulap
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
            raise InvalidArgument(f"f={f!r} must be a callable tradeoff function or an accountant TradeoffCurve.")
        if convention is None:
            raise InvalidArgument(
                "convention is required for a callable tradeoff function: pass convention='std' "
                "(Dong-Roth-Su, non-increasing, f(alpha) <= 1 - alpha) or convention='paper' "
                "(Cho & Awan, non-decreasing, f(alpha) <= alpha)."
            )
        conv = check_convention(convention)
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
            optimize.brentq(lambda a: float(f_std(np.array([a]))[0]) - a, 0.0, 0.5, xtol=1e-300, rtol=4 * 2.0**-52)
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
