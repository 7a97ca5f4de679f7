"""Directed (outward) rounding for numbers that bound privacy loss (house style R6).

Convention: a quantity that *bounds privacy loss* (epsilon, delta, rho, mu, a
sensitivity) is rounded **up**; a quantity that *bounds protection* (a value of
a tradeoff function, a noise scale solved for) is rounded **down**.

Two kinds of arithmetic:

* **exact** -- sums, integer multiples and squares of floats are rational:
  they are computed with :class:`fractions.Fraction` and converted by
  :func:`up_exact` / :func:`down_exact` (``float(Fraction)`` is correctly
  rounded, then corrected by one step if it landed on the wrong side);
  square roots by :func:`sqrt_up`, checked by squaring exactly;
* **transcendental** (exp, log, Phi) -- evaluated in :mod:`mpmath` at
  :data:`PRECISION_DPS` digits; :func:`up` / :func:`down` step one float
  outward unless the nearest float clears the mpmath value by more than its
  error bound (so the result is safe even when the true value sits within
  ``10**-45`` of a float).
"""

from __future__ import annotations

import math
import sys
from fractions import Fraction

import mpmath

from semidp.accountant.core.errors import InvalidArgument

#: Working precision (decimal digits) for certified closed-form evaluation.
PRECISION_DPS = 50

#: mpmath context used for all certified evaluations (never the global one).
MP = mpmath.MPContext()
MP.dps = PRECISION_DPS


#: Relative error bound assumed for a 50-digit mpmath evaluation of a closed form.
MP_REL_ERROR = MP.mpf(10) ** -(PRECISION_DPS - 5)


def up(x: float | mpmath.mpf) -> float:
    """A float ``>= x`` (rounds toward +inf, at most one ulp beyond the nearest float).

    For a float input the value is returned unchanged (it is exact); for an
    mpmath value (an approximation with relative error below
    :data:`MP_REL_ERROR`), the nearest float is returned only if it exceeds the
    value by more than that error, else the next float up.

    Examples
    --------
    >>> MP.mpf(up(MP.mpf(1) / 3)) >= MP.mpf(1) / 3
    True
    >>> up(0.5)
    0.5
    """
    if isinstance(x, float):
        return x
    if x == 0:  # an exact zero (e.g. from max(0, .)) carries no evaluation error
        return 0.0
    f = float(x)
    # +inf is >= anything; -inf (x below the float range) is not >= x: the next float up is -max
    if f == math.inf or MP.mpf(f) > x + abs(x) * MP_REL_ERROR:
        return f
    return math.nextafter(f, math.inf)


def down(x: float | mpmath.mpf) -> float:
    """Largest float that is ``<= x`` (rounds toward -inf); see :func:`up`.

    Examples
    --------
    >>> MP.mpf(down(MP.mpf(1) / 3)) <= MP.mpf(1) / 3
    True
    """
    if isinstance(x, float):
        return x
    if x == 0:
        return 0.0
    f = float(x)
    if f == -math.inf or MP.mpf(f) < x - abs(x) * MP_REL_ERROR:
        return f
    return math.nextafter(f, -math.inf)


def up_exact(q: Fraction | int) -> float:
    """The smallest float ``>= q`` for an exact rational ``q``.

    Examples
    --------
    >>> up_exact(Fraction(1) + Fraction(4.2e-106)) > 1.0
    True
    >>> up_exact(Fraction(256, 100) * 4) == 10.24 or up_exact(Fraction(256, 100) * 4) > 10.24
    True
    >>> up_exact(Fraction(10) ** 400)     # beyond the float range: +inf is the smallest float above it
    inf
    """
    q = Fraction(q)
    try:
        f = float(q)
    except OverflowError:
        return math.inf if q > 0 else -sys.float_info.max
    return f if Fraction(f) >= q else math.nextafter(f, math.inf)


def down_exact(q: Fraction | int) -> float:
    """The largest float ``<= q`` for an exact rational ``q`` (beyond the float range: the largest finite
    float for a positive ``q``, ``-inf`` for a negative one)."""
    q = Fraction(q)
    try:
        f = float(q)
    except OverflowError:
        return sys.float_info.max if q > 0 else -math.inf
    return f if Fraction(f) <= q else math.nextafter(f, -math.inf)


def sqrt_up(q: Fraction) -> float:
    """The smallest float ``>= sqrt(q)`` for a rational ``q >= 0``, verified by exact squaring.

    Examples
    --------
    >>> sqrt_up(Fraction(25)), sqrt_up(Fraction(2)) ** 2 >= 2
    (5.0, True)
    """
    if q < 0:
        raise InvalidArgument(f"sqrt_up needs q >= 0, got {q}.")
    f = float(MP.sqrt(MP.mpf(q.numerator) / q.denominator))
    while Fraction(f) ** 2 < q:
        f = math.nextafter(f, math.inf)
    while f > 0 and Fraction(math.nextafter(f, 0.0)) ** 2 >= q:
        f = math.nextafter(f, 0.0)
    return f


def sqrt_down(q: Fraction) -> float:
    """The largest float ``<= sqrt(q)`` for a rational ``q >= 0``, verified by exact squaring.

    Examples
    --------
    >>> sqrt_down(Fraction(25)), sqrt_down(Fraction(2)) ** 2 <= 2
    (5.0, True)
    """
    f = sqrt_up(q)
    return f if Fraction(f) ** 2 <= q else math.nextafter(f, 0.0)


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
            raise InvalidArgument(f"value={value!r} is not a decimal or 'p/q' rational literal.") from e
    raise InvalidArgument(f"value={value!r} is not a number.")
