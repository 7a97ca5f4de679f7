r"""Piecewise-linear lower bounds of symmetric tradeoff functions (numerical f-DP).

A :class:`TradeoffCurve` stores a convex, continuous, non-increasing,
piecewise-linear (PL) function on ``[0, 1]`` by its vertices, in the
**standard convention** of Dong, Roth & Su [DRS22, Def. 2.1]:

.. math:: f^{\rm std}(\alpha) = \inf_\phi\{1-\mathbb E_Q\phi : \mathbb E_P\phi\le\alpha\},

i.e. the smallest type-II error at type-I error ``<= alpha``
(``f(alpha) <= 1 - alpha``, ``f(1) = 0``). Cho & Awan [CA24, footnote in Sec. 2]
use the reflected **paper convention** ``f_paper(alpha) = f_std(1 - alpha)``
(non-decreasing, ``f(alpha) <= alpha``) in which group privacy is plain
function composition; :meth:`TradeoffCurve.paper` evaluates in that
convention. Reference: ``docs/reference/semi-dp.md`` Sec. 1.

Every curve is meant as a **lower bound** of the true (symmetric) tradeoff
function of a mechanism: a lower tradeoff curve is a weaker privacy claim, so
all numerical error is pushed *downwards*:

* a vertex value (``beta``) is always the exact value of some valid lower
  bound at that vertex, rounded **down** to a float (exact rational arithmetic
  with :class:`fractions.Fraction`, then
  :func:`accountant.core.directed.down_exact`);
* where a vertex is the intersection of two valid supporting lines (an
  envelope) and its abscissa cannot be represented exactly, the abscissa is
  rounded **down** and the value is taken on the line to its right (see
  :func:`_curve_from_pieces`), so that every chord of the stored polygon lies
  under one valid line -- a naive "evaluate the true function at a rounded
  breakpoint" would put the chord *above* a convex function;
* the result is replaced by its greatest convex minorant (never raises a
  point), so the stored vertices are exactly convex.

No fixed absolute error budget is needed for constructing curves because the
arithmetic is exact; the only approximations are *choices of which valid lines
to keep* (dropping a supporting line always lowers the envelope) and the
outward rounding of the slopes ``e^{+-eps}`` of those lines (certified in
mpmath for small inputs; for long epsilon grids numpy's ``exp`` widened by a
stated relative budget, :data:`~accountant.profiles.piecewise_linear.EXP_REL_PAD`). Evaluating a stored polygon at
an arbitrary point in floats is padded down by :data:`_EVAL_REL_PAD`.

The tradeoff functions of real mechanisms are symmetric (``f = f^{-1}``, as
adjacency is symmetric). The curve itself may be slightly asymmetric after
rounding; that is harmless: if ``g <= f`` and ``f`` is symmetric then also
``g^{-1} <= f``, which is what :meth:`TradeoffCurve.from_profile` uses when it
adds the reflected line of every ``(epsilon, delta)`` pair.

References: [DRS22, Def. 2.1, Prop. 2.12, Cor. 2.13, Thm. 2.14, Thm. 3.2], [CA24, Prop. 15], [BW18, Thm. 8]
(keys of the README's References section).
"""

from __future__ import annotations

import heapq
import itertools
import math
import numbers
from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import overload

import numpy as np
from numpy.typing import ArrayLike, NDArray

from semidp.accountant.core.arguments import check_in_interval, check_int, check_nonnegative
from semidp.accountant.core.directed import MP, down_exact, up
from semidp.accountant.core.errors import InvalidArgument, VerificationError
from semidp.accountant.profiles.gaussian import gdp_delta_array
from semidp.accountant.profiles.piecewise_linear import (
    UNIT_ROUNDOFF,
    Line,
    check_alpha,
    convex_minorant,
    dyadic_scale,
    exp_bounds,
    line_at,
    segment_line,
    sorted_lines,
    turn,
    upper_hull_indices,
)

__all__ = ["TradeoffCurve"]


#: Relative error budget for evaluating a stored segment in floats (see ``_eval_std``):
#: t = (x - a_j)/(a_{j+1} - a_j) has relative error <= 3u, the product with
#: (b_{j+1} - b_j) adds 2u, the final sum u; 8u covers it with room to spare.
_EVAL_REL_PAD = 8 * UNIT_ROUNDOFF


#: Repr prints all vertices (and round-trips) up to this many vertices.
_REPR_MAX_VERTICES = 12


def _curve_from_pieces(bps: Sequence[Fraction], pieces: Sequence[Line]) -> TradeoffCurve:
    """Float vertices of a convex PL lower bound given exactly by its affine pieces.

    ``pieces[k]`` is the exact affine function on ``[bps[k], bps[k+1]]`` of a
    convex, non-increasing function ``h >= 0`` on ``[0, 1]`` with ``h(1) = 0``,
    ``bps[0] = 0``, ``bps[-1] = 1``. Each piece, extended, is ``<= h`` (supporting
    line of a convex function).

    Rounding rule (the reason a stored polygon never exceeds ``h``): vertex ``k``
    is placed at ``x_k = float_down(bps[k])`` with value ``pieces[k](x_k)``
    rounded down. Then both ends of the chord ``[x_k, x_{k+1}]`` are ``<=
    pieces[k]`` (at ``x_{k+1} <= bps[k+1]`` the right piece is below the left one),
    so the chord is ``<= pieces[k] <= h``. Vertices that land on the same float
    keep the later (smaller) value. Finally the convex minorant is taken.
    """
    n = len(pieces)
    if len(bps) != n + 1 or bps[0] != 0 or bps[-1] != 1:
        raise VerificationError("internal: malformed envelope (breakpoints do not span [0, 1]).")
    xs: list[float] = []
    vs: list[Fraction] = []
    for k in range(n):
        xk = 0.0 if k == 0 else down_exact(bps[k])
        a, b = pieces[k]
        v = a + b * Fraction(xk)
        if v < 0:
            raise VerificationError(f"internal: negative envelope value {float(v)!r} at {xk!r}.")
        if xs and xs[-1] == xk:
            vs[-1] = v
        else:
            xs.append(xk)
            vs.append(v)
    a, b = pieces[-1]
    if a + b != 0:
        raise VerificationError(f"internal: envelope value at alpha=1 is {float(a + b)!r}, not 0.")
    xs.append(1.0)
    vs.append(Fraction(0))
    ys = [down_exact(v) for v in vs]
    hx, hy = convex_minorant(xs, ys)
    return TradeoffCurve(tuple(hx), tuple(hy))


def _curve_from_int_pieces(av: Sequence[int], bv: Sequence[int], shift: int) -> TradeoffCurve:
    """:func:`_curve_from_pieces` for dyadic pieces ``(av[k] + bv[k] x) / 2**shift`` (all-integer).

    Same rounding rule; breakpoints ``(av[k-1]-av[k])/(bv[k]-bv[k-1])`` are rounded down
    to floats and values rounded down, using correctly rounded ``int / int`` division
    corrected by one step after an exact integer comparison.
    """
    n = len(av)
    xs: list[float] = []
    ys: list[float] = []
    for k in range(n):
        if k == 0:
            xn, xd = 0, 1
            xk = 0.0
        else:
            num, den = av[k - 1] - av[k], bv[k] - bv[k - 1]
            xk = num / den
            xn, xd = xk.as_integer_ratio()
            if xn * den > num * xd:  # landed above the breakpoint: step down
                xk = math.nextafter(xk, -math.inf)
                xn, xd = xk.as_integer_ratio()
        v_num = av[k] * xd + bv[k] * xn
        v_den = xd << shift
        if v_num < 0:
            raise VerificationError(f"internal: negative envelope value at {xk!r}.")
        yk = v_num / v_den
        yn, yd = yk.as_integer_ratio()
        if yn * v_den > v_num * yd:
            yk = math.nextafter(yk, -math.inf)
        if xs and xs[-1] == xk:
            ys[-1] = yk
        else:
            xs.append(xk)
            ys.append(yk)
    if av[-1] + bv[-1] != 0:
        raise VerificationError("internal: envelope value at alpha=1 is not 0.")
    xs.append(1.0)
    ys.append(0.0)
    hx, hy = convex_minorant(xs, ys)
    return TradeoffCurve(tuple(hx), tuple(hy))


@dataclass(frozen=True, slots=True, repr=False)
class TradeoffCurve:
    r"""Convex piecewise-linear lower bound of a symmetric tradeoff function (std convention).

    The function is the polygon through ``(alphas[j], betas[j])`` in the
    standard Dong--Roth--Su convention [DRS22, Def. 2.1]: ``f(alpha)`` is a
    lower bound on the type-II error of any test with type-I error ``<= alpha``.
    Larger curves mean more privacy; :meth:`identity` (``1 - alpha``) is
    perfect privacy, :meth:`zero` is none.

    Invariants checked at construction (exactly, in rational arithmetic):
    ``alphas`` strictly increasing from ``0.0`` to ``1.0``; ``betas`` in
    ``[0, 1]``, non-increasing, ending in ``0.0``; ``betas[j] <= 1 - alphas[j]``;
    the polygon is convex.

    Examples
    --------
    >>> f = TradeoffCurve.from_approx_dp(1.0, 0.0)
    >>> round(float(f.std(0.1)), 7)      # T-F1: std f_{1,0}(0.1)
    0.7281718
    >>> f.group(1) == f
    True
    """

    alphas: tuple[float, ...]
    """Vertex abscissae (type-I errors), strictly increasing, ``0.0`` first and ``1.0`` last."""
    betas: tuple[float, ...]
    """Vertex values (type-II error lower bounds), non-increasing, ``0.0`` last."""
    _a: NDArray[np.float64] = field(init=False, repr=False, compare=False)
    _b: NDArray[np.float64] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        a = self._as_floats("alphas", self.alphas)
        b = self._as_floats("betas", self.betas)
        if len(a) != len(b):
            raise InvalidArgument(f"alphas and betas must have the same length; got {len(a)} and {len(b)}.")
        if len(a) < 2:
            raise InvalidArgument(f"a tradeoff curve needs at least 2 vertices; got {len(a)}.")
        if a[0] != 0.0 or a[-1] != 1.0:
            raise InvalidArgument(
                f"alphas must start at 0.0 and end at 1.0; got alphas[0]={a[0]!r}, alphas[-1]={a[-1]!r}."
            )
        for j in range(1, len(a)):
            if not a[j] > a[j - 1]:
                raise InvalidArgument(
                    f"alphas must be strictly increasing; specifically alphas[{j}]={a[j]!r} "
                    f"<= alphas[{j - 1}]={a[j - 1]!r}."
                )
        for j, v in enumerate(b):
            if not 0.0 <= v <= 1.0:
                raise InvalidArgument(f"betas[{j}]={v!r} must be in [0, 1].")
            if j and v > b[j - 1]:
                raise InvalidArgument(
                    f"betas must be non-increasing (a tradeoff function is); specifically "
                    f"betas[{j}]={v!r} > betas[{j - 1}]={b[j - 1]!r}."
                )
        if b[-1] != 0.0:
            raise InvalidArgument(f"betas[-1]={b[-1]!r} must be 0.0: every tradeoff function has f(1) = 0.")
        for j, (x, y) in enumerate(zip(a, b)):
            # f(alpha) <= 1 - alpha, checked exactly when the float sum is close to 1
            if x + y > 1.0 - 4 * UNIT_ROUNDOFF and Fraction(x) + Fraction(y) > 1:
                raise InvalidArgument(
                    f"vertex {j} = ({x!r}, {y!r}) violates f(alpha) <= 1 - alpha; no tradeoff "
                    "function lies above the identity 1 - alpha (perfect privacy)."
                )
        for j in range(1, len(a) - 1):
            if turn(a[j - 1], b[j - 1], a[j], b[j], a[j + 1], b[j + 1]) < 0:
                raise InvalidArgument(
                    f"the curve must be convex; specifically the slope decreases at vertex {j} "
                    f"= ({a[j]!r}, {b[j]!r}) (neighbours ({a[j - 1]!r}, {b[j - 1]!r}) and "
                    f"({a[j + 1]!r}, {b[j + 1]!r})). Tradeoff functions are convex; to bound "
                    "one from below by (epsilon, delta) pairs use TradeoffCurve.from_profile."
                )
        object.__setattr__(self, "alphas", tuple(a))
        object.__setattr__(self, "betas", tuple(b))
        aa = np.array(a, dtype=np.float64)
        bb = np.array(b, dtype=np.float64)
        aa.flags.writeable = False
        bb.flags.writeable = False
        object.__setattr__(self, "_a", aa)
        object.__setattr__(self, "_b", bb)

    @staticmethod
    def _as_floats(name: str, values: object) -> list[float]:
        if isinstance(values, (str, bytes)) or not hasattr(values, "__iter__"):
            raise InvalidArgument(f"{name}={values!r} must be a sequence of real numbers.")
        out: list[float] = []
        for j, v in enumerate(values):
            if isinstance(v, (bool, np.bool_)) or not isinstance(v, numbers.Real):
                raise InvalidArgument(f"{name}[{j}]={v!r} must be a real number.")
            x = float(v)
            if not math.isfinite(x):
                raise InvalidArgument(f"{name}[{j}]={v!r} must be finite.")
            out.append(x)
        return out

    def __repr__(self) -> str:
        if len(self.alphas) <= _REPR_MAX_VERTICES:
            return f"TradeoffCurve(alphas={self.alphas!r}, betas={self.betas!r})"
        return (
            f"<TradeoffCurve: {len(self.alphas)} vertices, std f(0)={self.betas[0]!r}, "
            f"first vertices {list(zip(self.alphas[:2], self.betas[:2]))!r}>"
        )

    # ----------------------------------------------------------------------------------
    # basic accessors and evaluation
    # ----------------------------------------------------------------------------------

    @property
    def n_vertices(self) -> int:
        """Number of stored vertices."""
        return len(self.alphas)

    def vertices(self, convention: str = "std") -> tuple[tuple[float, float], ...]:
        """The vertices as ``(alpha, beta)`` pairs.

        Parameters
        ----------
        convention:
            ``"std"`` (stored, exact) or ``"paper"`` (``(1 - alpha, beta)`` in
            increasing order; ``1 - alpha`` rounded to nearest, for display).
        """
        if convention == "std":
            return tuple(zip(self.alphas, self.betas))
        if convention == "paper":
            return tuple((1.0 - x, y) for x, y in zip(reversed(self.alphas), reversed(self.betas)))
        raise InvalidArgument(f"convention={convention!r} must be 'std' or 'paper'.")

    def _eval_std(self, x: NDArray[np.float64]) -> NDArray[np.float64]:
        a, b = self._a, self._b
        j = np.clip(np.searchsorted(a, x, side="right") - 1, 0, len(a) - 2)
        t = (x - a[j]) / (a[j + 1] - a[j])
        val = b[j] + t * (b[j + 1] - b[j])
        # directed: float interpolation error <= 6.2u * b[j]; pad down unless exact (t == 0)
        val = np.where(t == 0.0, b[j], val - _EVAL_REL_PAD * b[j])
        return np.maximum(val, 0.0)

    @overload
    def std(self, alpha: float) -> float: ...
    @overload
    def std(self, alpha: NDArray[np.float64]) -> NDArray[np.float64]: ...

    def std(self, alpha: ArrayLike) -> float | NDArray[np.float64]:
        r"""Evaluate in the **standard** convention: ``f(alpha)``, non-increasing.

        Parameters
        ----------
        alpha:
            Type-I error(s) in ``[0, 1]`` (scalar or array).

        Returns
        -------
        float or ndarray
            The polygon's value, rounded **down** (float interpolation error is
            padded by ``8u * beta_j``; exact at vertices).

        Raises
        ------
        InvalidArgument
            If some ``alpha`` is NaN or outside ``[0, 1]``.
        """
        x = check_alpha("alpha", alpha)
        out = self._eval_std(np.atleast_1d(x))
        return float(out[0]) if x.ndim == 0 else out.reshape(x.shape)

    @overload
    def paper(self, alpha: float) -> float: ...
    @overload
    def paper(self, alpha: NDArray[np.float64]) -> NDArray[np.float64]: ...

    def paper(self, alpha: ArrayLike) -> float | NDArray[np.float64]:
        r"""Evaluate in the **paper** (reflected) convention: ``f_std(1 - alpha)``, non-decreasing.

        This is Cho & Awan's convention [CA24, Sec. 2], in which group privacy
        is ``f o f``. The argument ``1 - alpha`` is rounded **up** when it is not
        exact (``f_std`` is non-increasing, so the value is rounded down).

        Examples
        --------
        >>> f2 = TradeoffCurve.from_approx_dp(0.5, 0.0).group(2)
        >>> round(float(f2.paper(0.7)), 6)   # docs/reference/semi-dp.md Sec. 1
        0.306531
        """
        x = check_alpha("alpha", alpha)
        xa = np.atleast_1d(x)
        t = 1.0 - xa
        # t >= 0.5: 1 - t is exact, so a mismatch reveals an inexact t; t < 0.5: t is exact.
        t = np.where((1.0 - t) != xa, np.nextafter(t, 2.0), t)
        out = self._eval_std(np.minimum(t, 1.0))
        return float(out[0]) if x.ndim == 0 else out.reshape(x.shape)

    def _exact_at(self, x: Fraction) -> Fraction:
        """Exact value of the stored polygon at a rational point of ``[0, 1]``."""
        a = self.alphas
        j = int(np.clip(np.searchsorted(self._a, float(x), side="right") - 1, 0, len(a) - 2))
        # float(x) may round across a vertex; fix the segment index exactly
        while j > 0 and Fraction(a[j]) > x:
            j -= 1
        while j < len(a) - 2 and Fraction(a[j + 1]) <= x:
            j += 1
        return line_at(segment_line(a[j], self.betas[j], a[j + 1], self.betas[j + 1]), x)

    # ----------------------------------------------------------------------------------
    # constructors
    # ----------------------------------------------------------------------------------

    @classmethod
    def identity(cls) -> TradeoffCurve:
        """``f(alpha) = 1 - alpha``: perfect privacy (identical distributions)."""
        return cls((0.0, 1.0), (1.0, 0.0))

    @classmethod
    def zero(cls) -> TradeoffCurve:
        """``f = 0``: no privacy guarantee (the trivial lower bound)."""
        return cls((0.0, 1.0), (0.0, 0.0))

    @classmethod
    def from_approx_dp(cls, epsilon: float, delta: float = 0.0) -> TradeoffCurve:
        r"""The tradeoff function of :math:`(\varepsilon,\delta)`-DP [DRS22, Prop. 2.5].

        .. math:: f_{\varepsilon,\delta}(\alpha)=\max\{0,\ 1-\delta-e^{\varepsilon}\alpha,\
                  e^{-\varepsilon}(1-\delta-\alpha)\}\quad\text{(std)}

        with vertices ``(0, 1-delta)``, ``(c, c)``, ``(1-delta, 0)``, ``(1, 0)``,
        ``c = (1-delta)/(1+e^epsilon)``. Degenerate cases: ``epsilon = 0`` gives
        ``max(0, 1-delta-alpha)``; ``delta = 1`` gives :meth:`zero`.

        The slopes use ``exp(epsilon)`` rounded up and ``exp(-epsilon)`` rounded
        down (each line lowered); vertex values are rounded down, so the curve is
        ``<=`` the exact function and within a few ulps of it.

        Examples
        --------
        >>> f = TradeoffCurve.from_approx_dp(1.0, 0.01)
        >>> round(float(f.std(0.1)), 7)      # T-F1
        0.7181718
        """
        e = check_nonnegative("epsilon", epsilon)
        d = check_in_interval("delta", delta, 0.0, 1.0)
        return cls.from_profile([e], [d])

    @classmethod
    def from_profile(cls, epsilons: ArrayLike, deltas: ArrayLike) -> TradeoffCurve:
        r"""Upper envelope :math:`\max_i f_{\varepsilon_i,\delta_i}` of several DP guarantees.

        A mechanism that is :math:`(\varepsilon_i,\delta_i)`-DP for every ``i`` is
        :math:`\max_i f_{\varepsilon_i,\delta_i}`-DP [DRS22, Prop. 2.12 (primal-dual)].
        The envelope of the ``2n+1`` lines ``1-delta_i-e^{eps_i} alpha``,
        ``e^{-eps_i}(1-delta_i-alpha)`` and ``0`` is computed **exactly** (convex
        hull trick over rationals), not by sampling ``alpha``.

        Parameters
        ----------
        epsilons:
            Finite ``epsilon_i >= 0`` (1-d).
        deltas:
            ``delta_i`` in ``[0, 1]``, same length.

        Notes
        -----
        Rounding: each line is lowered (``exp(eps)`` up, ``exp(-eps)`` down; see
        :func:`exp_bounds`: certified in mpmath for up to 64 pairs, numpy with a
        ``1e-13`` relative budget beyond); lines whose slope ``e^{eps}`` overflows a double
        (``eps > 709``) are dropped (dropping a line lowers the envelope). Vertex
        values are rounded down (see the module docstring).

        Examples
        --------
        >>> f = TradeoffCurve.from_profile([0.0, 1.0], [0.2, 0.0])   # (0, .2)- and (1, 0)-DP
        >>> round(float(f.std(0.5)), 6), round(float(f.std(0.1)), 6)
        (0.3, 0.728172)
        """
        eps = np.atleast_1d(np.asarray(epsilons, dtype=object))
        dls = np.atleast_1d(np.asarray(deltas, dtype=object))
        if eps.ndim != 1 or dls.ndim != 1 or len(eps) != len(dls) or len(eps) == 0:
            raise InvalidArgument(
                "epsilons and deltas must be 1-d sequences of the same, nonzero length; "
                f"got shapes {eps.shape} and {dls.shape}."
            )
        ev = np.array([check_nonnegative(f"epsilons[{i}]", v) for i, v in enumerate(eps)])
        dv = [check_in_interval(f"deltas[{i}]", v, 0.0, 1.0) for i, v in enumerate(dls)]
        _, e_hi = exp_bounds(ev)  # slope -e^eps rounded down (line lowered)
        e_lo, _ = exp_bounds(-ev)  # reflected line e^-eps (1-delta-alpha), e^-eps rounded down
        lines: list[Line] = [(Fraction(0), Fraction(0))]
        for d, hi, lo in zip(dv, e_hi.tolist(), e_lo.tolist()):
            one_minus_d = 1 - Fraction(d)  # exact
            if math.isfinite(hi):
                lines.append((one_minus_d, -Fraction(hi)))
            flo = Fraction(lo)
            lines.append((flo * one_minus_d, -flo))
        return cls._from_lines(lines)

    @classmethod
    def _from_lines(cls, lines: Sequence[Line]) -> TradeoffCurve:
        """Curve of the upper envelope of valid lines (the zero line must be among them).

        Exact convex-hull trick (:func:`upper_hull_indices`). When every coefficient is dyadic
        (the usual case: floats and their products) everything runs on integers
        scaled by a common power of two, which is exact and much faster than
        :class:`Fraction`.
        """
        items = sorted_lines(lines)
        shift = dyadic_scale(items)
        if shift is not None:
            av = [a.numerator << (shift - a.denominator.bit_length() + 1) for a, _ in items]
            bv = [b.numerator << (shift - b.denominator.bit_length() + 1) for _, b in items]
            idx = upper_hull_indices(av, bv)
            return _curve_from_int_pieces([av[i] for i in idx], [bv[i] for i in idx], shift)
        idx = upper_hull_indices([a for a, _ in items], [b for _, b in items])
        hull = [items[i] for i in idx]
        bps = [Fraction(0)]
        for (a1, b1), (a2, b2) in itertools.pairwise(hull):
            bps.append((a1 - a2) / (b2 - b1))
        bps.append(Fraction(1))
        return _curve_from_pieces(bps, hull)

    @classmethod
    def from_gdp(cls, mu: float, n_points: int = 256) -> TradeoffCurve:
        r"""A PL lower bound of the Gaussian tradeoff function :math:`G_\mu` [DRS22, Def. 2.7].

        :math:`G_\mu(\alpha)=\Phi(\Phi^{-1}(1-\alpha)-\mu)` (std). Built with
        :meth:`from_profile` from the exact privacy profile [BW18, Thm. 8],
        [DRS22, Cor. 2.13] at ``n_points`` equally spaced ``epsilon`` in
        ``[0, mu^2/2 + 9 mu]`` (``delta`` padded up by
        :func:`accountant.profiles.gaussian.gdp_delta_array`). Each line is a tangent of
        :math:`G_\mu` (tight at its tangency point) moved down by the delta padding,
        so the curve is ``<= G_mu`` everywhere. Lines beyond ``delta ~ 1e-19`` are
        omitted (omitting lines lowers the curve).

        Examples
        --------
        >>> g = TradeoffCurve.from_gdp(1.0)
        >>> 0.7404890 - 1e-3 < float(g.std(0.05)) <= 0.7404890   # T-F1
        True
        """
        m = check_nonnegative("mu", mu)
        n = check_int("n_points", n_points, minimum=2)
        if m == 0.0:
            return cls.identity()
        eps = np.linspace(0.0, m * m / 2 + 9.0 * m, n)
        return cls.from_profile(eps, np.minimum(gdp_delta_array(m, eps), 1.0))

    # ----------------------------------------------------------------------------------
    # privacy profile and epsilon
    # ----------------------------------------------------------------------------------

    @overload
    def privacy_profile(self, eps: float) -> float: ...
    @overload
    def privacy_profile(self, eps: NDArray[np.float64]) -> NDArray[np.float64]: ...

    def privacy_profile(self, eps: ArrayLike) -> float | NDArray[np.float64]:
        r"""Smallest :math:`\delta` with :math:`f \ge f_{\varepsilon,\delta}`, rounded **up**.

        .. math:: \delta(\varepsilon)=\sup_\alpha\,[1-f(\alpha)-e^{\varepsilon}\alpha]
                  = \max_j\,[1-\beta_j-e^{\varepsilon}\alpha_j]

        [DRS22, Prop. 2.12]; the supremum of a concave PL function is attained at
        a vertex, so the max is exact. Valid for any real ``eps`` (negative values
        give ``delta >= 1 - e^eps``).

        Notes
        -----
        ``e^eps`` is rounded down (:func:`exp_bounds`); each term
        ``(1-beta_j) - E alpha_j`` is padded up by ``4u (1 + E alpha_j)``, which
        bounds its float error (``u = 2^-53``).

        Examples
        --------
        >>> f = TradeoffCurve.from_approx_dp(1.0, 1e-3)
        >>> f.privacy_profile(1.0) >= 1e-3 and f.privacy_profile(1.0) < 1e-3 + 1e-14
        True
        """
        try:
            e = np.asarray(eps, dtype=np.float64)
        except (TypeError, ValueError) as err:
            raise InvalidArgument(f"eps={eps!r} must be real.") from err
        if not np.all(np.isfinite(e)):
            raise InvalidArgument(f"eps={eps!r} must be finite.")
        ea = np.atleast_1d(e)
        big, _ = exp_bounds(ea)
        one_minus_b = 1.0 - self._b
        prod = big[..., None] * self._a  # (..., n)
        terms = one_minus_b - prod
        terms = terms + 4 * UNIT_ROUNDOFF * (one_minus_b + prod)
        out = np.clip(np.nextafter(terms.max(axis=-1), np.inf), 0.0, 1.0)
        return float(out[0]) if e.ndim == 0 else out.reshape(e.shape)

    def epsilon(self, delta: float) -> float:
        r"""Smallest :math:`\varepsilon \ge 0` with :math:`\delta(\varepsilon)\le\delta`, rounded **up**.

        Closed form from the vertices: ``f >= f_{eps,delta}`` iff
        ``1 - beta_j - e^eps alpha_j <= delta`` for every vertex, i.e.

        .. math:: \varepsilon = \max\Big(0,\ \max_{j:\alpha_j>0}
                  \log\frac{1-\beta_j-\delta}{\alpha_j}\Big),

        and ``math.inf`` if ``1 - f(0) > delta`` (no finite epsilon works).
        Numerators and the maximising ratio are computed exactly (rationals);
        the logarithm in mpmath, rounded up.

        Because ``f(0)`` is stored rounded *down*, a curve built from
        ``(epsilon, delta)`` usually has ``1 - f(0)`` one ulp above ``delta``
        (``1 - delta`` is rarely a float), so asking for exactly that ``delta``
        returns ``inf``; ask at a slightly larger ``delta`` (e.g. ``delta * (1 + 1e-9)``).

        Raises
        ------
        InvalidArgument
            If ``delta`` is not in ``[0, 1]``.

        Examples
        --------
        >>> f = TradeoffCurve.from_approx_dp(1.0, 1e-3)
        >>> f.epsilon(1e-3), 0.999 < f.epsilon(1.000001e-3) <= 1.0
        (inf, True)
        """
        d = check_in_interval("delta", delta, 0.0, 1.0)
        fd = Fraction(d)
        if 1 - Fraction(self.betas[0]) > fd:
            return math.inf
        a, b = self._a, self._b
        num = (1.0 - b) - d  # float error < 3u (values in [-1, 1])
        cand = np.nonzero((num > -4 * UNIT_ROUNDOFF) & (a > 0))[0]
        best: Fraction | None = None
        for j in cand:
            nj = 1 - Fraction(self.betas[j]) - fd
            if nj <= 0:
                continue
            r = nj / Fraction(self.alphas[j])
            if best is None or r > best:
                best = r
        if best is None or best <= 1:
            return 0.0
        val = MP.log(MP.mpf(best.numerator) / MP.mpf(best.denominator))
        return max(0.0, up(val))

    # ----------------------------------------------------------------------------------
    # algebra
    # ----------------------------------------------------------------------------------

    def dominates(self, other: TradeoffCurve) -> bool:
        """``True`` iff ``self >= other`` pointwise ("at least as private") -- exact.

        The difference of two PL functions is PL with breakpoints among the union
        of both vertex sets, so checking there (in rational arithmetic) is exact.
        """
        if not isinstance(other, TradeoffCurve):
            raise InvalidArgument(f"other={other!r} must be a TradeoffCurve.")
        xs = np.union1d(self._a, other._a)
        diff = self._eval_std(xs) - other._eval_std(xs)
        # _eval_std is within 8u of exact (and exact at own vertices); decide the clear cases
        clear_ok = diff > 1e-13
        if np.all(clear_ok):
            return True
        for x in xs[~clear_ok]:
            fx = Fraction(float(x))
            if self._exact_at(fx) < other._exact_at(fx):
                return False
        return True

    def group(self, k: int) -> TradeoffCurve:
        r"""Group privacy: the curve for datasets at distance ``<= k``.

        Paper convention [CA24, Prop. 15]: :math:`f^{\circ k}`; standard
        convention [DRS22, Thm. 2.14]: :math:`1-(1-f)^{\circ k}`, i.e.
        ``g_1 = f``, ``g_k(alpha) = f(1 - g_{k-1}(alpha))``.

        Computed **exactly** for PL functions: ``f(1 - g)`` is convex PL with
        breakpoints at the breakpoints of ``g`` and the preimages of the
        breakpoints of ``f``; its affine pieces are found in rational arithmetic
        and rounded by the rule in :func:`_curve_from_pieces`. Because ``f_std``
        is non-increasing (paper: ``f`` non-decreasing), composing lower bounds
        gives a lower bound of the true ``f^{o k}``.

        ``group(0)`` is :meth:`identity` (a pair at distance 0 is one dataset);
        ``group(1)`` returns ``self``.

        Examples
        --------
        >>> g = TradeoffCurve.from_approx_dp(0.5, 0.0).group(2)
        >>> [round(float(x), 6) for x in g.paper([0.3, 0.5])]   # docs/reference/semi-dp.md Sec. 1
        [0.110364, 0.18394]
        """
        kk = check_int("k", k, minimum=0)
        if kk == 0:
            return TradeoffCurve.identity()
        g = self
        for _ in range(kk - 1):
            g = _compose_std(self, g)
        return g

    def simplify(self, max_vertices: int | None = None) -> TradeoffCurve:
        """Drop collinear vertices; optionally coarsen **downwards** to ``<= max_vertices``.

        Dropping a vertex of a convex polygon would *raise* it (unsafe). The safe
        coarsening keeps a subset of the supporting lines (one per segment, plus
        the zero line): their upper envelope is ``<=`` the curve. Lines are removed
        greedily, each time the one whose removal lowers the curve least (the
        lowering is measured at the new intersection of its two neighbours).

        Parameters
        ----------
        max_vertices:
            Target vertex count (``>= 2``); ``None`` only removes collinear vertices.
        """
        m = None if max_vertices is None else check_int("max_vertices", max_vertices, minimum=2)
        xs, ys = convex_minorant(self.alphas, self.betas)
        if m is None or len(xs) <= m:
            if len(xs) == len(self.alphas):
                return self
            return TradeoffCurve(tuple(xs), tuple(ys))
        # float lines of the segments (for the greedy choice only; the final envelope is exact)
        nseg = len(xs) - 1
        fa = np.array(xs)
        fb = np.array(ys)
        slope = (fb[1:] - fb[:-1]) / (fa[1:] - fa[:-1])
        icpt = fb[:-1] - slope * fa[:-1]
        alive = [True] * nseg
        prev = list(range(-1, nseg - 1))
        nxt = list(range(1, nseg + 1))  # nseg = the zero line

        def line(i: int) -> tuple[float, float]:
            return (0.0, 0.0) if i == nseg else (float(icpt[i]), float(slope[i]))

        def cost(i: int) -> float:
            a, b = line(i)
            r = line(nxt[i])
            if prev[i] < 0:
                return a - r[0]  # lowering at alpha = 0
            left = line(prev[i])
            if r[1] == left[1]:
                return math.inf
            x = (left[0] - r[0]) / (r[1] - left[1])
            x = min(max(x, 0.0), 1.0)
            return a + b * x - max(left[0] + left[1] * x, r[0] + r[1] * x)

        is_live = [not (fb[i] == 0.0 and fb[i + 1] == 0.0) for i in range(nseg)]  # flat 0: zero line
        live = [i for i in range(nseg) if is_live[i]]
        count = len(live) + 1  # kept lines, including the zero line
        version = [0] * nseg
        heap = [(cost(i), i, 0) for i in live]
        heapq.heapify(heap)
        while count + 1 > m and heap:
            _, i, ver = heapq.heappop(heap)
            if not alive[i] or ver != version[i]:
                continue
            alive[i] = False
            count -= 1
            p, q = prev[i], nxt[i]
            if p >= 0:
                nxt[p] = q
            if q < nseg:
                prev[q] = p
            for j in (p, q):
                if 0 <= j < nseg and alive[j] and is_live[j]:
                    version[j] += 1
                    heapq.heappush(heap, (cost(j), j, version[j]))
        kept = [
            segment_line(xs[i], ys[i], xs[i + 1], ys[i + 1])
            for i in range(nseg)
            if alive[i] and not (ys[i] == 0.0 and ys[i + 1] == 0.0)
        ]
        kept.append((Fraction(0), Fraction(0)))
        return TradeoffCurve._from_lines(kept)


def _compose_std(f: TradeoffCurve, g: TradeoffCurve) -> TradeoffCurve:
    """Exact PL ``h(x) = f(1 - g(x))`` (std convention; paper: ``f o g``).

    Breakpoints: those of ``g`` and the points where ``u = 1 - g`` (concave,
    non-decreasing) crosses a vertex abscissa of ``f``. On each interval
    ``h = F_m(1 - G_j(x))`` for the affine segment ``G_j`` of ``g`` and ``F_m``
    of ``f``; ``h`` is convex (convex non-increasing ``f`` after concave ``u``),
    so every piece is a supporting line and :func:`_curve_from_pieces` applies.
    """
    gx = [Fraction(v) for v in g.alphas]
    gy = [Fraction(v) for v in g.betas]
    fa = [Fraction(v) for v in f.alphas]
    n = len(gx) - 1
    mlast = len(fa) - 2
    u = [1 - y for y in gy]
    glines = [segment_line(g.alphas[j], g.betas[j], g.alphas[j + 1], g.betas[j + 1]) for j in range(n)]
    flines = [segment_line(f.alphas[m], f.betas[m], f.alphas[m + 1], f.betas[m + 1]) for m in range(mlast + 1)]
    # initial outer segment: largest m <= mlast with fa[m] <= u[0]
    m = 0
    while m < mlast and fa[m + 1] <= u[0]:
        m += 1
    bps: list[Fraction] = [Fraction(0)]
    pieces: list[Line] = []

    def piece(j: int, mm: int) -> Line:
        ga, gb = glines[j]
        fa_, fb_ = flines[mm]
        return (fa_ + fb_ * (1 - ga), -fb_ * gb)

    for j in range(n):
        while m < mlast and fa[m + 1] < u[j + 1]:
            # u crosses fa[m+1] strictly inside segment j (u[j] <= current u < fa[m+1])
            x = gx[j] + (fa[m + 1] - u[j]) * (gx[j + 1] - gx[j]) / (u[j + 1] - u[j])
            pieces.append(piece(j, m))
            bps.append(x)
            m += 1
        pieces.append(piece(j, m))
        bps.append(gx[j + 1])
        if m < mlast and fa[m + 1] <= u[j + 1]:
            m += 1
    return _curve_from_pieces(bps, pieces)
