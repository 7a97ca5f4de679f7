"""Numbers in specs and their files, checked for size before any arithmetic (contract: ``specs/README.md``).

A spec number (a TOML number, an exact ``"p/q"`` string, a CSV cell) becomes an exact
:class:`~fractions.Fraction`. Converting text is only cheap when the text is short and its
decimal exponent small: ``Fraction("1e999999999")`` computes :math:`10^{999999999}` and burns
CPU until the hard stop. So the text is checked first (:data:`MAX_NUMBER_CHARS`,
:data:`MAX_DECIMAL_EXPONENT`), then converted, then its magnitude checked against
:data:`MAGNITUDE_RANGE` (every spec number must survive the float conversions the
accountant makes: a nonzero value that would round to 0.0 or to inf is refused, never rounded).

A TOML float keeps the decimal text it was written with (:class:`DecimalText`, the loader's
``parse_float``), and its exact number is a :class:`DecimalFraction`: the binary value as before
(every comparison and float computation is unchanged), carrying the rational its text writes
(``epsilon = 2.64``: 66/25) in ``decimal``. Only :mod:`verify.exact_composition` reads it, so sums of
decimals compare exactly with a decimal claim (``30 x 2.64 = 79.2``).
"""

from __future__ import annotations

import math
import re
from fractions import Fraction

#: The longest number text accepted (characters): ample for exact rationals such as 1588675712/1929937650363.
MAX_NUMBER_CHARS = 400
#: The largest decimal exponent accepted in number text (``1e400``): beyond the float range both ways.
MAX_DECIMAL_EXPONENT = 400
#: The magnitude of a nonzero spec number: within the normal float range with room to spare.
MAGNITUDE_RANGE = (Fraction(10) ** -300, Fraction(10) ** 300)

_EXPONENT = re.compile(r"[eE]\s*([-+]?[\d_]+)")


class DecimalText(float):
    """A TOML float that keeps its decimal text (the loader's ``tomllib`` ``parse_float``).

    It is the float TOML gives (``float(text)``, correctly rounded) everywhere a float is used;
    :func:`exact_number` makes it a :class:`DecimalFraction` that also carries its text's rational.

    >>> x = exact_number(DecimalText("2.64"))
    >>> x == Fraction(2.64), x.decimal
    (True, Fraction(66, 25))
    """

    __slots__ = ("text",)
    text: str

    def __new__(cls, text: str) -> DecimalText:
        out = super().__new__(cls, text)
        out.text = text
        return out

    def __reduce__(self) -> tuple[type[DecimalText], tuple[str]]:
        return (DecimalText, (self.text,))


class DecimalFraction(Fraction):
    """The binary value of a TOML float (equal to ``Fraction(float)``, as every spec number was) with the exact
    rational of its decimal text in ``decimal``; arithmetic gives plain Fractions of the binary value."""

    __slots__ = ("decimal",)
    decimal: Fraction

    def __new__(cls, numerator: int, denominator: int, decimal: Fraction) -> DecimalFraction:
        out = super().__new__(cls, numerator, denominator)
        out.decimal = decimal
        return out

    def __reduce__(self) -> tuple[type[DecimalFraction], tuple[int, int, Fraction]]:
        return (DecimalFraction, (self.numerator, self.denominator, self.decimal))

    def __repr__(self) -> str:  # the value is the binary one: shown as the Fraction it equals
        return f"Fraction({self.numerator}, {self.denominator})"

    def __copy__(self) -> DecimalFraction:
        return self

    def __deepcopy__(self, memo: object) -> DecimalFraction:
        return self


def decimal_value(x: Fraction) -> Fraction:
    """The exact rational a spec number was written as: a TOML float's decimal text, else ``x`` itself."""
    return x.decimal if isinstance(x, DecimalFraction) else x


class NumberRefused(ValueError):
    """A number text or value beyond the stated limits, or not a number; the message says which (no key: the
    caller adds it). ``syntax`` is true when the text is not a number at all."""

    def __init__(self, message: str, *, syntax: bool = False) -> None:
        super().__init__(message)
        self.syntax = syntax


def exact_number(value: object) -> Fraction:
    """``value`` (an ``int``, a finite ``float`` or a number / ``"p/q"`` string) as an exact Fraction within
    :data:`MAGNITUDE_RANGE` (or 0); raise :class:`NumberRefused` otherwise, before any costly arithmetic.

    >>> exact_number("11/10000"), exact_number(0.5), exact_number(" 3 ")
    (Fraction(11, 10000), Fraction(1, 2), Fraction(3, 1))
    >>> try:
    ...     exact_number("1e999999999")  # refused from its text: 10**999999999 is never computed
    ... except NumberRefused as e:
    ...     print(e)
    '1e999999999' has a decimal exponent beyond +-400
    """
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise NumberRefused(f"expected a number or an exact 'p/q' string, got {_short(value)}", syntax=True)
    if isinstance(value, DecimalText) and math.isfinite(value):  # its binary value, with the decimal it was written as
        binary = exact_number(float(value))
        return DecimalFraction(binary.numerator, binary.denominator, exact_number(value.text.replace("_", "")))
    if isinstance(value, str):
        text = value.strip()
        if len(text) > MAX_NUMBER_CHARS:
            raise NumberRefused(f"a number of {len(text)} characters; at most {MAX_NUMBER_CHARS}")
        m = _EXPONENT.search(text)
        if m is not None:
            try:
                exponent = int(m.group(1))
            except ValueError:
                raise NumberRefused(
                    f"{_short(value)} is not a finite number or an exact 'p/q' rational", syntax=True
                ) from None
            if abs(exponent) > MAX_DECIMAL_EXPONENT:
                raise NumberRefused(f"{_short(value)} has a decimal exponent beyond +-{MAX_DECIMAL_EXPONENT}")
        try:
            v = Fraction(text)
        except (ValueError, ZeroDivisionError):
            raise NumberRefused(
                f"{_short(value)} is not a finite number or an exact 'p/q' rational", syntax=True
            ) from None
    else:
        if isinstance(value, int) and value.bit_length() > 1100:  # beyond 1e300 anyway; no Fraction arithmetic
            raise NumberRefused(f"an integer of {value.bit_length()} bits is beyond {float(MAGNITUDE_RANGE[1]):g}")
        try:
            v = Fraction(value)
        except (ValueError, OverflowError):
            raise NumberRefused(f"{value!r} is not a finite number") from None
    if v != 0 and not _in_range(v):
        lo, hi = (float(x) for x in MAGNITUDE_RANGE)
        raise NumberRefused(f"{_short(value)} is out of range: a nonzero magnitude must lie in [{lo:g}, {hi:g}]")
    return v


def _in_range(v: Fraction) -> bool:
    """``MAGNITUDE_RANGE[0] <= |v| <= MAGNITUDE_RANGE[1]``, by a float compare when the float is well inside."""
    try:
        f = abs(v.numerator / v.denominator)  # correctly rounded; OverflowError beyond the float range
    except OverflowError:
        return False
    if 1e-299 <= f <= 1e299:
        return True
    return MAGNITUDE_RANGE[0] <= abs(v) <= MAGNITUDE_RANGE[1]  # near an end: exactly


def _short(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:40] + "..."


__all__ = [
    "DecimalFraction",
    "DecimalText",
    "MAGNITUDE_RANGE",
    "MAX_DECIMAL_EXPONENT",
    "MAX_NUMBER_CHARS",
    "NumberRefused",
    "decimal_value",
    "exact_number",
]
