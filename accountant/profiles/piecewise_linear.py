"""Exact building blocks of piecewise-linear tradeoff curves (:mod:`accountant.profiles.tradeoff`).

Orientation tests, the greatest convex minorant, hulls of lines in rational
arithmetic, and :math:`e^x` rounded in a stated direction [DRS22, Prop. 2.12].
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from semidp.accountant.core.directed import MP, down, up
from semidp.accountant.core.errors import InvalidArgument

#: Unit roundoff of IEEE double precision (half an ulp of 1.0).
UNIT_ROUNDOFF = 2.0**-53


#: Largest finite double; used as a *lower* stand-in for ``exp(eps)`` when it overflows.
FLOAT_MAX = float(np.finfo(np.float64).max)


#: Up to this many exponentials per call are certified in mpmath (:func:`exp_bounds`).
EXP_MPMATH_MAX = 64


#: Relative error budget for numpy's ``exp`` beyond that: numpy/libm ``exp`` is accurate to
#: a few ulps (~1e-15); the budget is 100 times larger. Its effect on a curve is <= 1e-13.
EXP_REL_PAD = 1e-13


Line = tuple[Fraction, Fraction]
"""An affine function ``x -> A + B x`` as the exact pair ``(A, B)``."""


def turn(x1: float, y1: float, x2: float, y2: float, x3: float, y3: float) -> int:
    """Exact sign of ``(x2-x1)(y3-y2) - (y2-y1)(x3-x2)`` (``> 0``: strictly convex turn).

    Float filter first (each of the two products carries relative error <= 3u
    plus u for the final subtraction, so ``6u(|d1|+|d2|)`` bounds the error),
    exact :class:`Fraction` arithmetic only when the float result is ambiguous.
    """
    d1 = (x2 - x1) * (y3 - y2)
    d2 = (y2 - y1) * (x3 - x2)
    diff = d1 - d2
    bound = 6.0 * UNIT_ROUNDOFF * (abs(d1) + abs(d2)) + 1e-300
    if diff > bound:
        return 1
    if diff < -bound:
        return -1
    fx1, fy1, fx2, fy2, fx3, fy3 = map(Fraction, (x1, y1, x2, y2, x3, y3))
    e = (fx2 - fx1) * (fy3 - fy2) - (fy2 - fy1) * (fx3 - fx2)
    return (e > 0) - (e < 0)


def convex_minorant(xs: Sequence[float], ys: Sequence[float]) -> tuple[list[float], list[float]]:
    """Vertices of the greatest convex minorant (lower hull) of the points, collinear dropped.

    The minorant is ``<=`` the polygon through the points, so replacing a
    lower-bound polygon by it is safe. Requires strictly increasing ``xs``.
    """
    hx: list[float] = []
    hy: list[float] = []
    for x, y in zip(xs, ys):
        while len(hx) >= 2 and turn(hx[-2], hy[-2], hx[-1], hy[-1], x, y) <= 0:
            hx.pop()
            hy.pop()
        hx.append(x)
        hy.append(y)
    return hx, hy


def sorted_lines(lines: Sequence[Line]) -> list[Line]:
    """Lines sorted by slope, keeping for each slope only the highest intercept."""
    best: dict[Fraction, Fraction] = {}
    for a, b in lines:
        if b not in best or a > best[b]:
            best[b] = a
    return [(best[b], b) for b in sorted(best, key=lambda b: (float(b), b))]  # float first: fast


def dyadic_scale(lines: Sequence[Line]) -> int | None:
    """``s`` such that every coefficient times ``2**s`` is an integer, or ``None``."""
    dens = [x.denominator for ln in lines for x in ln]
    if all(d & (d - 1) == 0 for d in dens):
        return max(d.bit_length() - 1 for d in dens)
    return None


def upper_hull_indices(av: Sequence[Any], bv: Sequence[Any]) -> list[int]:
    """Indices of the upper envelope on ``[0, 1]`` of lines ``a + b x`` sorted by increasing ``b``.

    Exact convex-hull trick: a middle line is dropped when its neighbours cross
    before it rises above them; then lines active only outside ``[0, 1]`` are
    trimmed. Only ring operations and comparisons are used, so the result is
    exact for ints (dyadic coefficients on a common scale) and Fractions alike.
    """
    hull: list[int] = []
    for i in range(len(av)):
        a, b = av[i], bv[i]
        while len(hull) >= 2:
            a1, b1 = av[hull[-2]], bv[hull[-2]]
            a2, b2 = av[hull[-1]], bv[hull[-1]]
            # drop line 2 if x(l1, l3) <= x(l1, l2); denominators (b - b1), (b2 - b1) > 0
            if (a1 - a) * (b2 - b1) <= (a1 - a2) * (b - b1):
                hull.pop()
            else:
                break
        hull.append(i)
    # restrict to [0, 1]: x(l1, l2) = (a1 - a2) / (b2 - b1) with b2 > b1
    start = 0
    while len(hull) - start >= 2 and av[hull[start]] - av[hull[start + 1]] <= 0:
        start += 1
    hull = hull[start:]
    while len(hull) >= 2:
        i1, i2 = hull[-2], hull[-1]
        # x >= 1  <=>  a1 - a2 >= b2 - b1   (a common scale cancels)
        if av[i1] - av[i2] >= bv[i2] - bv[i1]:
            hull.pop()
        else:
            break
    return hull


def segment_line(x0: float, y0: float, x1: float, y1: float) -> Line:
    """Exact affine function through two float points (``x0 < x1``)."""
    fx0, fy0 = Fraction(x0), Fraction(y0)
    b = (Fraction(y1) - fy0) / (Fraction(x1) - fx0)
    return (fy0 - b * fx0, b)


def line_at(line: Line, x: Fraction) -> Fraction:
    return line[0] + line[1] * x


def exp_up(x: float) -> float:
    """Certified float ``>= exp(x)`` (``inf`` on overflow; exact at ``x = 0``)."""
    return 1.0 if x == 0.0 else up(MP.exp(MP.mpf(x)))


def exp_down(x: float) -> float:
    """Certified float ``<= exp(x)``, capped at the largest finite double (exact at ``x = 0``)."""
    return 1.0 if x == 0.0 else max(0.0, min(down(MP.exp(MP.mpf(x))), FLOAT_MAX))


def exp_bounds(x: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Floats ``lo <= exp(x) <= hi`` elementwise (``lo`` capped at the largest double).

    Up to :data:`EXP_MPMATH_MAX` values: mpmath at 50 digits, rounded outward
    (certified). Beyond that (large epsilon grids), numpy's ``exp`` widened by the
    relative budget :data:`EXP_REL_PAD`; ``exp(0) = 1`` is kept exact.
    """
    flat = np.asarray(x, dtype=np.float64).ravel()
    if flat.size <= EXP_MPMATH_MAX:
        lo = np.array([exp_down(float(v)) for v in flat], dtype=np.float64)
        hi = np.array([exp_up(float(v)) for v in flat], dtype=np.float64)
    else:
        with np.errstate(over="ignore"):
            e = np.exp(flat)
        hi = np.nextafter(e * (1 + EXP_REL_PAD), np.inf)
        lo = np.minimum(np.nextafter(e * (1 - EXP_REL_PAD), -np.inf), FLOAT_MAX)
        hi = np.where(flat == 0.0, 1.0, hi)
        lo = np.where(flat == 0.0, 1.0, np.maximum(lo, 0.0))  # exp > 0: never a negative bound
    return lo.reshape(np.shape(x)), hi.reshape(np.shape(x))


def check_alpha(name: str, alpha: ArrayLike) -> NDArray[np.float64]:
    """Type-I errors as a float array in ``[0, 1]`` (NaN and values outside refused, naming ``name``)."""
    try:
        a = np.asarray(alpha, dtype=np.float64)
    except (TypeError, ValueError) as e:
        raise InvalidArgument(f"{name}={alpha!r} must be a real number or an array of them.") from e
    if a.dtype.kind != "f":
        raise InvalidArgument(f"{name}={alpha!r} must be real.")
    bad = ~((a >= 0.0) & (a <= 1.0))  # NaN fails too
    if np.any(bad):
        first = a[bad].flat[0]
        raise InvalidArgument(f"{name} must lie in [0, 1]; got {float(first)!r}.")
    return a
