"""Directed (outward) rounding for numbers that bound privacy loss (house style R6).

Convention: a quantity that *bounds privacy loss* (epsilon, delta, rho, mu, a
sensitivity) is rounded **up**; a quantity that *bounds protection* (a value of
a tradeoff function, a noise scale solved for) is rounded **down**.

Closed forms are evaluated in :mod:`mpmath` at :data:`PRECISION_DPS` decimal
digits and then converted to the adjacent float in the safe direction. The
mpmath error (about ``10**-45`` relative) is far below half a float ulp, so
``up(mp_value) >= true value`` holds for every finite input.
"""

from __future__ import annotations

import math
from fractions import Fraction

import mpmath

from accountant.errors import InvalidArgument

#: Working precision (decimal digits) for certified closed-form evaluation.
PRECISION_DPS = 50

#: mpmath context used for all certified evaluations (never the global one).
MP = mpmath.MPContext()
MP.dps = PRECISION_DPS


def up(x: float | mpmath.mpf) -> float:
    """Smallest float that is ``>= x`` up to one ulp of slack (rounds toward +inf).

    For a float input the value is returned unchanged (it is exact); for an
    mpmath value, the nearest float is moved one step up unless it already
    equals the high-precision value exactly.

    Examples
    --------
    >>> up(MP.mpf(1) / 3) > 1 / 3
    True
    >>> up(0.5)
    0.5
    """
    if isinstance(x, float):
        return x
    f = float(x)
    if math.isinf(f) or MP.mpf(f) >= x:
        return f
    return math.nextafter(f, math.inf)


def down(x: float | mpmath.mpf) -> float:
    """Largest float that is ``<= x`` (rounds toward -inf); see :func:`up`.

    Examples
    --------
    >>> down(MP.mpf(1) / 3) < 1 / 3
    True
    """
    if isinstance(x, float):
        return x
    f = float(x)
    if math.isinf(f) or MP.mpf(f) <= x:
        return f
    return math.nextafter(f, -math.inf)


def pad_up(x: float, rel: float = 1e-12, abs_: float = 0.0) -> float:
    """Return ``x`` moved up by a stated relative/absolute error budget.

    Used for float computations (e.g. sums of many probabilities) whose
    accumulated error is bounded analytically by ``rel*|x| + abs_``.
    """
    return math.nextafter(x + abs(x) * rel + abs_, math.inf)


def pad_down(x: float, rel: float = 1e-12, abs_: float = 0.0) -> float:
    """Return ``x`` moved down by a stated error budget (see :func:`pad_up`)."""
    return math.nextafter(x - abs(x) * rel - abs_, -math.inf)


def exact(value: float | int | str | Fraction) -> Fraction:
    """Exact rational value of a float (its binary value), an int, or a decimal string.

    Decimal strings such as ``"17.14"`` or ratios such as ``"293764/114921"``
    are parsed exactly (not through float), so a printed claim is compared as
    printed.

    Examples
    --------
    >>> exact("17.14")
    Fraction(857, 50)
    >>> exact(0.5)
    Fraction(1, 2)
    """
    if isinstance(value, bool):
        raise InvalidArgument(f"value={value!r} is not a number.")
    if isinstance(value, Fraction):
        return value
    if isinstance(value, int):
        return Fraction(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise InvalidArgument(f"value={value!r} must be finite to be made exact.")
        return Fraction(value)
    if isinstance(value, str):
        try:
            return Fraction(value.strip())
        except (ValueError, ZeroDivisionError) as e:
            raise InvalidArgument(
                f"value={value!r} is not a decimal or 'p/q' rational literal."
            ) from e
    raise InvalidArgument(f"value={value!r} is not a number.")
