"""Privacy numbers for people: rounded **up** at the displayed precision.

A report never shows an epsilon (or rho, or sensitivity) smaller than the
computed bound; the JSON report carries full precision.
"""

from __future__ import annotations

from decimal import ROUND_CEILING, Decimal

#: Decimals shown for epsilons and rhos in text and Markdown.
DECIMALS = 4


def fmt_up(x: float | None, decimals: int = DECIMALS) -> str:
    """``x`` rounded up (toward +inf) at ``decimals`` places, trailing zeros trimmed; ``None`` -> "none".

    A float whose shortest round-trip representation already has at most
    ``decimals`` places (such as ``10.24``) is shown as that representation:
    it *is* that float, not a rounding of it.

    Examples
    --------
    >>> fmt_up(40.950565838003726), fmt_up(10.24), fmt_up(None)
    ('40.9506', '10.24', 'none')
    """
    if x is None:
        return "none"
    short = repr(float(x))
    if "e" not in short and len(short.partition(".")[2]) <= decimals:
        return short[:-2] if short.endswith(".0") else short
    q = Decimal(x).quantize(Decimal(1).scaleb(-decimals), rounding=ROUND_CEILING)
    s = format(q, "f")
    return s.rstrip("0").rstrip(".") if "." in s else s


__all__ = ["DECIMALS", "fmt_up"]
