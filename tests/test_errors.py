"""Messages stay printable for any size: :func:`accountant.core.errors.format_size`."""

from __future__ import annotations

import math

from hypothesis import given
from hypothesis import strategies as st

from semidp.accountant.core.errors import format_size


def test_huge_integers_beyond_the_str_limit() -> None:
    # Python refuses str() of ints beyond 4300 digits; a fiber estimate of the census table is ~10^47000
    assert format_size(10**400) == "1.000e+400"
    assert format_size(-98765 * 10**5000) == "-9.876e+5004"
    assert format_size(3**100_000) == "1.334e+47712"  # 100000 log10(3) = 47712.1254...


@given(st.integers(min_value=10**309, max_value=10**2000))
def test_mantissa_and_exponent_agree_with_log10(n: int) -> None:
    text = format_size(n)
    mant, exp = text.split("e+")
    assert int(exp) == math.floor(math.log10(n)) or 10 ** int(exp) <= n < 10 ** (int(exp) + 1)
    assert 1 <= float(mant) < 10
    lead = n // 10 ** (int(exp) - 3)  # truncated, never shown larger than the size
    assert float(mant) == lead / 1000
