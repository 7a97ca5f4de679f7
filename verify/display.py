"""Privacy numbers for people: rounded **up** at the displayed precision.

A report never shows an epsilon (or rho, or sensitivity) smaller than the
computed bound; the JSON report carries full precision.
"""

from __future__ import annotations

import math
from decimal import ROUND_CEILING, Context, Decimal
from fractions import Fraction

#: Decimals shown for epsilons and rhos in text and Markdown.
DECIMALS = 4

#: Magnitudes shown in fixed notation; outside, scientific notation (mantissa rounded up at ``DECIMALS``).
FIXED_RANGE = (1e-3, 1e9)

#: Enough digits for any float (a double has at most 767 significant decimal digits) at any exponent.
_EXACT = Context(prec=1200, Emax=10_000, Emin=-10_000)


def fmt_up(x: float | Fraction | None, decimals: int = DECIMALS) -> str:
    """``x`` rounded up (toward +inf) at ``decimals`` places, trailing zeros trimmed; ``None`` -> "none".

    A float whose shortest round-trip representation already has at most
    ``decimals`` places (such as ``10.24``) is shown as that representation:
    it *is* that float, not a rounding of it. A magnitude outside
    :data:`FIXED_RANGE` (every finite float is accepted: guarantees may be
    ``1e300`` or ``1e-300``) is shown in scientific notation, its mantissa rounded
    up at ``decimals`` places (``1.2346e+24``, ``1.0001e-07``): still never below
    ``x``. Infinities show as ``inf``/``-inf``, NaN as ``nan``. A
    :class:`~fractions.Fraction` is rounded from its exact value.

    Examples
    --------
    >>> fmt_up(40.950565838003726), fmt_up(10.24), fmt_up(None), fmt_up(1e24), fmt_up(Fraction(1, 3))
    ('40.9506', '10.24', 'none', '1e+24', '0.3334')
    """
    if x is None:
        return "none"
    if isinstance(x, float) and not math.isfinite(x):
        return "nan" if math.isnan(x) else ("inf" if x > 0 else "-inf")
    exact = (
        _EXACT.divide(Decimal(x.numerator), Decimal(x.denominator)) if isinstance(x, Fraction) else Decimal(float(x))
    )
    # A Fraction's quotient is rounded at 1200 digits; nudge it up one unit there so it never understates.
    if isinstance(x, Fraction) and Fraction(exact) < x:
        exact = _EXACT.next_plus(exact)
    mag = abs(exact)
    if mag == 0 or FIXED_RANGE[0] <= mag < FIXED_RANGE[1]:
        if not isinstance(x, Fraction):
            short = repr(float(x))
            if "e" not in short and len(short.partition(".")[2]) <= decimals:
                return short[:-2] if short.endswith(".0") else short
        q = exact.quantize(Decimal(1).scaleb(-decimals), rounding=ROUND_CEILING, context=_EXACT)
        s = format(q, "f")
        return s.rstrip("0").rstrip(".") if "." in s else s
    if not isinstance(x, Fraction):
        short = repr(float(x))
        if "e" in short and len(short.partition("e")[0].partition(".")[2]) <= decimals:
            return short  # e.g. 1e+25: that float's shortest representation
    return _scientific_up(exact, decimals)


def _scientific_up(exact: Decimal, decimals: int) -> str:
    """``exact`` in scientific notation, the mantissa rounded toward +inf at ``decimals`` places."""
    exp = abs(exact).adjusted()
    step = Decimal(1).scaleb(-decimals)
    mant = exact.scaleb(-exp, context=_EXACT).quantize(step, rounding=ROUND_CEILING, context=_EXACT)
    if abs(mant) >= 10:  # 9.99995 rounded up to 10.0000
        exp += 1
        mant = (mant / 10).quantize(step, rounding=ROUND_CEILING, context=_EXACT)
    m = format(mant, "f")
    m = m.rstrip("0").rstrip(".") if "." in m else m
    return f"{m}e{exp:+03d}"


def fmt_down(x: float | Fraction | None, decimals: int = DECIMALS) -> str:
    """``x`` rounded **down** (toward -inf) at ``decimals`` places: for a proven *lower* bound ("at least").

    The mirror of :func:`fmt_up` (same notation), so "epsilon >= 29.9863" never overstates the bound.

    >>> fmt_down(29.98636), fmt_down(1e25), fmt_down(0.0)
    ('29.9863', '1e+25', '0')
    """
    if x is None:
        return "none"
    s = fmt_up(-x, decimals)
    if s.startswith("-"):
        return s[1:]
    return "0" if s.strip("0.").startswith("e") or set(s) <= set("0.") else "-" + s


def fmt_delta(x: float | None) -> str:
    """A delta (a probability) at 3 significant digits, rounded **up**: ``1e-10``, ``0.05``, ``1.2346e-05`` -> ``1.24e-05``.

    A float whose ``%g`` form at 3 digits is exact (``1e-10``, ``0.05``) is shown so;
    otherwise the mantissa is rounded up, so a report never shows a delta below
    the value. ``None`` -> "none".
    """
    if x is None:
        return "none"
    x = float(x)
    short = f"{x:.3g}"
    if not math.isfinite(x) or float(short) == x or x == 0:
        return short
    return _scientific_up(Decimal(x), 2)


__all__ = ["DECIMALS", "FIXED_RANGE", "fmt_delta", "fmt_down", "fmt_up"]
