"""Argument checks shared by the guarantee algebra (house style R5).

Each check raises :class:`~accountant.core.errors.InvalidArgument` naming the
argument, its value and the expected domain. NaN fails every check.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from semidp.accountant.core.errors import InvalidArgument


def check_finite_real(name: str, value: object) -> float:
    """Return ``value`` as a float, or raise if it is not a finite real number."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise InvalidArgument(f"{name}={value!r} must be a real number.")
    x = float(value)
    if not math.isfinite(x):
        raise InvalidArgument(f"{name}={value!r} must be finite.")
    return x


def check_nonnegative(name: str, value: object) -> float:
    """Return ``value`` as a float, or raise unless it is finite and ``>= 0``."""
    x = check_finite_real(name, value)
    if not x >= 0.0:
        raise InvalidArgument(f"{name}={value!r} must be >= 0.")
    return x


def check_positive(name: str, value: object) -> float:
    """Return ``value`` as a float, or raise unless it is finite and ``> 0``."""
    x = check_finite_real(name, value)
    if not x > 0.0:
        raise InvalidArgument(f"{name}={value!r} must be > 0.")
    return x


def check_in_interval(
    name: str, value: object, lo: float, hi: float, *, lo_open: bool = False, hi_open: bool = False
) -> float:
    """Return ``value`` as a float, or raise unless it lies in the stated interval."""
    x = check_finite_real(name, value)
    ok_lo = x > lo if lo_open else x >= lo
    ok_hi = x < hi if hi_open else x <= hi
    if not (ok_lo and ok_hi):
        left = "(" if lo_open else "["
        right = ")" if hi_open else "]"
        raise InvalidArgument(f"{name}={value!r} must be in {left}{lo}, {hi}{right}.")
    return x


def check_int(name: str, value: object, *, minimum: int = 0) -> int:
    """Return ``value`` as an int, or raise unless it is an integer ``>= minimum``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise InvalidArgument(f"{name}={value!r} must be an integer >= {minimum}.")
    k = int(value)
    if k < minimum:
        raise InvalidArgument(f"{name}={value!r} must be an integer >= {minimum}.")
    return k


def check_rng(rng: object) -> np.random.Generator:
    """Return ``rng`` if it is a :class:`numpy.random.Generator`, else raise InvalidArgument.

    Every sampler takes an explicit generator (``rng=``) and never a global one,
    so a run is reproducible from its seed.
    """
    if not isinstance(rng, np.random.Generator):
        raise InvalidArgument(
            f"rng={rng!r} must be a numpy.random.Generator (e.g. numpy.random.default_rng(seed)); "
            "samplers never use a global generator."
        )
    return rng
