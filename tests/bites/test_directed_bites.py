"""Fast guards of directed rounding (accountant/core/directed.py): every outward step, pinned to the float it must give.

Each test asserts the exact float a rounding returns in a case where the two directions differ, so flipping any
single up/down, comparison or error margin in the module fails a test here (issue Step 16; judged by
``python benchmarks/mutation.py accountant/core/directed.py``).
"""

from __future__ import annotations

import math
import sys
from fractions import Fraction

import pytest

from semidp.accountant.core.directed import (
    MP,
    MP_REL_ERROR,
    PRECISION_DPS,
    down,
    down_exact,
    exact,
    pad_down,
    pad_up,
    sqrt_down,
    sqrt_up,
    up,
    up_exact,
)
from semidp.accountant.core.errors import InvalidArgument

ABOVE = math.nextafter(0.5, math.inf)
BELOW = math.nextafter(0.5, -math.inf)


def test_working_precision_and_margin() -> None:
    assert PRECISION_DPS == 50 and MP.dps == 50
    assert MP_REL_ERROR == MP.mpf(10) ** -45


def test_up_and_down_of_a_float_are_the_float() -> None:
    assert up(0.1) == 0.1 and down(0.1) == 0.1


def test_exact_zero_carries_no_error() -> None:
    assert up(MP.mpf(0)) == 0.0 and down(MP.mpf(0)) == 0.0


def test_nearest_float_clear_of_the_value_is_kept_on_its_side() -> None:
    tenth = MP.mpf(1) / 10  # float 0.1 is above 1/10 by 5.5e-18, below 2/10's float? no: 0.2 is above too
    assert up(tenth) == 0.1
    assert down(tenth) == math.nextafter(0.1, -math.inf)
    third = MP.mpf(1) / 3  # float(1/3) is below 1/3
    assert down(third) == 1 / 3
    assert up(third) == math.nextafter(1 / 3, math.inf)
    assert up(-tenth) == math.nextafter(-0.1, math.inf) and down(-tenth) == -0.1


def test_a_value_within_the_error_margin_of_a_float_steps_outward() -> None:
    # 0.5 - 1e-48 rounds to 0.5, but only 1e-48 below it: within the 1e-45 error bound, so up() steps on.
    assert up(MP.mpf(0.5) - MP.mpf(10) ** -48) == ABOVE
    assert down(MP.mpf(0.5) + MP.mpf(10) ** -48) == BELOW
    # exactly a float: still outward (the mpmath value may be off by the error bound either way)
    assert up(MP.mpf(0.5)) == ABOVE and down(MP.mpf(0.5)) == BELOW


def test_the_margin_is_exactly_the_stated_relative_error() -> None:
    # 3e-46 relative: inside a 1e-45 margin (steps), outside a 1e-46 one (would not)
    near = MP.mpf(0.5) * (1 - 3 * MP.mpf(10) ** -46)
    assert up(near) == ABOVE
    assert down(MP.mpf(0.5) * (1 + 3 * MP.mpf(10) ** -46)) == BELOW
    # 3e-45 relative: outside the 1e-45 margin (kept), inside a 1e-44 one (would step)
    assert up(MP.mpf(0.5) * (1 - 3 * MP.mpf(10) ** -45)) == 0.5
    assert down(MP.mpf(0.5) * (1 + 3 * MP.mpf(10) ** -45)) == 0.5


def test_beyond_the_float_range() -> None:
    huge = MP.mpf(10) ** 400
    assert up(huge) == math.inf
    assert down(-huge) == -math.inf
    assert up(-huge) == -sys.float_info.max  # the smallest float >= -1e400
    assert down(huge) == sys.float_info.max  # the largest float <= 1e400


def test_up_exact_and_down_exact() -> None:
    tiny = Fraction(1) + Fraction(1, 10**100)
    assert up_exact(tiny) == math.nextafter(1.0, math.inf) and down_exact(tiny) == 1.0
    assert up_exact(Fraction(1, 3)) == math.nextafter(1 / 3, math.inf) and down_exact(Fraction(1, 3)) == 1 / 3
    assert up_exact(Fraction(1, 10)) == 0.1 and down_exact(Fraction(1, 10)) == math.nextafter(0.1, -math.inf)
    assert up_exact(Fraction(1, 2)) == 0.5 and down_exact(Fraction(1, 2)) == 0.5
    assert up_exact(3) == 3.0 and down_exact(-3) == -3.0
    big = Fraction(10) ** 400
    assert up_exact(big) == math.inf and up_exact(-big) == -sys.float_info.max
    assert down_exact(big) == sys.float_info.max and down_exact(-big) == -math.inf


def test_square_roots_are_verified_by_exact_squaring() -> None:
    assert sqrt_up(Fraction(25)) == 5.0 and sqrt_down(Fraction(25)) == 5.0
    assert sqrt_up(Fraction(0)) == 0.0 and sqrt_down(Fraction(0)) == 0.0
    for q in (Fraction(2), Fraction(3, 7), Fraction(10) ** 30 + 1, Fraction(1, 10**30) + Fraction(1, 10**45)):
        u, d = sqrt_up(q), sqrt_down(q)
        assert Fraction(u) ** 2 >= q and Fraction(math.nextafter(u, 0.0)) ** 2 < q
        assert Fraction(d) ** 2 <= q and Fraction(math.nextafter(d, math.inf)) ** 2 > q
        assert u == math.nextafter(d, math.inf)
    with pytest.raises(InvalidArgument, match="q >= 0"):
        sqrt_up(Fraction(-1))


def test_pads_move_by_the_stated_budget_then_one_float() -> None:
    assert pad_up(1.0) == math.nextafter(1.0 + 1e-12, math.inf)
    assert pad_down(1.0) == math.nextafter(1.0 - 1e-12, -math.inf)
    assert pad_up(-1.0) == math.nextafter(-1.0 + 1e-12, math.inf)
    assert pad_down(-1.0) == math.nextafter(-1.0 - 1e-12, -math.inf)
    assert pad_up(2.0, rel=0.0, abs_=0.5) == math.nextafter(2.5, math.inf)
    assert pad_down(2.0, rel=0.0, abs_=0.5) == math.nextafter(1.5, -math.inf)
    assert pad_up(4.0, rel=0.25) == math.nextafter(5.0, math.inf)
    assert pad_down(4.0, rel=0.25) == math.nextafter(3.0, -math.inf)


def test_exact_parses_as_printed() -> None:
    assert exact("17.14") == Fraction(857, 50)
    assert exact(" 293764/114921 ") == Fraction(293764, 114921)
    assert exact(0.1) == Fraction(3602879701896397, 36028797018963968)
    assert exact(7) == Fraction(7)
    assert exact(Fraction(2, 3)) == Fraction(2, 3)
    for bad in (True, math.inf, math.nan, "1/0", "abc", None, [1]):
        with pytest.raises(InvalidArgument):
            exact(bad)  # type: ignore[arg-type]
