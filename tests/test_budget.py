"""The one wall-clock :class:`Budget` value (issue 23, Step 14 item 5): construction, shares, expiry."""

from __future__ import annotations

import dataclasses
import math
import time

import pytest

from semidp.accountant.budget import Budget
from semidp.accountant.errors import InvalidArgument


def test_unlimited_never_expires_and_its_shares_stay_unlimited() -> None:
    b = Budget.unlimited()
    assert not b.bounded and not b.expired and b.remaining() == math.inf
    assert b.split(0.5) == b and b.child(math.inf) == b
    assert b.child(10.0).bounded and 0.0 < b.child(10.0).remaining() <= 10.0
    assert Budget.of(None) == b and Budget.of(math.inf) == b and Budget.until(math.inf) == b


def test_of_and_until_agree_on_the_monotonic_clock() -> None:
    before = time.monotonic()
    b = Budget.of(100.0)
    after = time.monotonic()
    assert before + 100.0 <= b.deadline <= after + 100.0
    assert Budget.until(b.deadline) == b
    assert 99.0 < b.remaining() <= 100.0 and b.allows(50.0) and not b.allows(101.0)


def test_shares_never_end_after_their_parent() -> None:
    parent = Budget.of(10.0)
    half = parent.split(0.5)
    assert half.deadline <= parent.deadline and 0.0 < half.remaining() <= 5.0
    assert parent.split(1.0).deadline == parent.deadline
    assert parent.child(1000.0).deadline == parent.deadline  # a child cannot extend its parent
    assert parent.child(1.0).remaining() <= 1.0
    assert parent.split(0.0).expired and parent.child(0.0).expired


def test_an_expired_budget_has_nothing_left() -> None:
    gone = Budget.until(time.monotonic() - 1.0)
    assert gone.expired and gone.remaining() == 0.0 and not gone.allows(1e-9)
    assert gone.split(0.5).expired and gone.child(10.0).expired  # nothing is created from nothing
    assert Budget.of(0.0).expired


def test_bad_values_are_refused_by_name() -> None:
    with pytest.raises(InvalidArgument, match="seconds"):
        Budget.of(-1.0)
    with pytest.raises(InvalidArgument, match="seconds"):
        Budget.unlimited().child(float("nan"))
    with pytest.raises(InvalidArgument, match="fraction"):
        Budget.of(1.0).split(1.5)
    with pytest.raises(InvalidArgument, match="NaN"):
        Budget.until(float("nan"))
    with pytest.raises(dataclasses.FrozenInstanceError):
        Budget.of(1.0).deadline = 0.0  # type: ignore[misc]
