"""The one wall-clock :class:`Budget` value (issue 23, Step 14 item 5): construction, shares, expiry."""

from __future__ import annotations

import dataclasses
import math
import time

import pytest

from semidp.accountant.core.budget import Budget, budget_argument
from semidp.accountant.core.errors import InvalidArgument


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


def test_budget_argument_keeps_the_old_keyword_for_one_release() -> None:
    """The public functions' ``time_limit=`` / ``time_budget=`` seconds still work, with a DeprecationWarning."""
    given = Budget.of(5.0)
    assert budget_argument(given, {}, where="f") is given
    assert budget_argument(None, {}, where="f", default=None) == Budget.unlimited()
    assert 0.0 < budget_argument(None, {}, where="f", default=3.0).remaining() <= 3.0
    with pytest.warns(DeprecationWarning, match=r"f\(time_limit=seconds\)"):
        old = budget_argument(None, {"time_limit": 2.0}, where="f", default=60.0)
    assert 0.0 < old.remaining() <= 2.0  # the old seconds, not the default
    with pytest.warns(DeprecationWarning, match="time_budget"):
        assert budget_argument(None, {"time_budget": None}, where="f", old="time_budget", zero_ok=True).bounded is False
    with pytest.warns(DeprecationWarning, match="time_budget"):
        assert budget_argument(None, {"time_budget": 0.0}, where="f", old="time_budget", zero_ok=True).expired
    with pytest.raises(InvalidArgument, match="time_limit"):  # still refused by name (before the warning)
        budget_argument(None, {"time_limit": 0.0}, where="f")
    with pytest.raises(InvalidArgument, match="not both"):
        budget_argument(given, {"time_limit": 2.0}, where="f")
    with pytest.raises(TypeError, match="unexpected keyword argument 'time_limt'"):
        budget_argument(None, {"time_limt": 2.0}, where="f")


def test_audit_takes_a_budget_and_still_the_old_keywords() -> None:
    """``audit(budget=...)``; ``time_limit=`` and ``deadline=`` are deprecated for one release, not broken."""
    from semidp.verify.load import load
    from semidp.verify.runner import audit

    spec = load("specs/census-2020-total.toml")
    assert audit(spec, budget=Budget.of(60.0)).verdict == "holds"
    with pytest.warns(DeprecationWarning, match="time_limit"):
        assert audit(spec, time_limit=60.0).verdict == "holds"
    with pytest.warns(DeprecationWarning, match="deadline"):
        assert audit(spec, deadline=time.monotonic() + 60.0).verdict == "holds"
    with pytest.raises(InvalidArgument, match="not both"):
        audit(spec, budget=Budget.of(60.0), deadline=time.monotonic() + 60.0)
