"""Roots of monotone functions at full double precision (Brent, then bisection in double space) and a
stable log-sum-exp, shared by the private tests.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
from numpy.typing import NDArray
from scipy import optimize

FloatArray = NDArray[np.float64]


def logsumexp(a: FloatArray) -> float:
    if a.size == 0:
        return -math.inf
    top = float(np.max(a))
    if top == -math.inf:
        return -math.inf
    return top + math.log(float(np.sum(np.exp(a - top))))


def brent_root(fun: Callable[[float], float], lo: float, hi: float) -> float:
    """Brent's method at (nearly) full double precision on a bracketing interval."""
    return float(optimize.brentq(fun, lo, hi, xtol=1e-13, rtol=4 * 2.0**-52, maxiter=500))


def polish_root(fn: Callable[[float], float], x: float, max_ulps: int = 1 << 12) -> float:
    """Refine an approximate root ``x`` of a monotone ``fn`` to adjacent doubles, bisecting in
    double space; return the one with the smaller ``|fn|`` (``x`` itself if no sign change
    is found within ``max_ulps``)."""
    fx = fn(x)
    if fx == 0.0 or not math.isfinite(fx):
        return x
    for direction in (math.inf, -math.inf):
        a, fa = x, fx
        k = 1
        b = x
        while k <= max_ulps:
            for _ in range(k if k == 1 else k // 2):
                b = math.nextafter(b, direction)
            fb = fn(b)
            if fb == 0.0:
                return b
            if (fb > 0.0) != (fa > 0.0):
                lo, hi, flo = (a, b, fa) if a < b else (b, a, fb)
                while math.nextafter(lo, math.inf) < hi:
                    mid = lo + (hi - lo) / 2.0
                    if mid <= lo or mid >= hi:
                        break
                    fm = fn(mid)
                    if fm == 0.0:
                        return mid
                    if (fm > 0.0) == (flo > 0.0):
                        lo, flo = mid, fm
                    else:
                        hi = mid
                return lo if abs(flo) <= abs(fn(hi)) else hi
            a, fa = b, fb
            k *= 2
    return x
