"""Z3 certificates of a(t): exact agreement with the searches on reference targets, and refutations."""

from __future__ import annotations

import pytest

from semidp.accountant import DataSpace, Margins, Replace, Total
from semidp.accountant.combinatorics.semiadjacent import semi_adjacent_parameter
from semidp.accountant.core.outcome import Refuted, Unknown, Verified
from semidp.verify.z3_semiadjacent import certify_lower_bound, certify_upper_bound, certify_value

AB = DataSpace.of(("A", 2), ("B", 2))
ABC = DataSpace.of(("A", 2), ("B", 2), ("C", 2))
ONE_WAY2 = Margins((("A",), ("B",)))
ONE_WAY3 = Margins((("A",), ("B",), ("C",)))


@pytest.mark.parametrize(
    ("space", "inv", "table", "expected"),
    [
        (AB, ONE_WAY2, [1, 1, 1, 1], 2),  # T-A2
        (AB, ONE_WAY2, [2, 1, 1, 0], 3),  # T-A3
        (AB, ONE_WAY2, [1, 1, 1, 0], 3),  # T-A4
        (AB, ONE_WAY2, [3, 1, 0, 0], 2),  # T-A6
        (ABC, ONE_WAY3, [1, 1, 1, 0, 1, 0, 0, 0], 4),  # T-A7 (= p + 1)
        (ABC, ONE_WAY3, [1, 0, 0, 1, 0, 1, 1, 0], 3),  # T-A8
        (ABC, ONE_WAY3, [1, 0, 0, 0, 0, 0, 0, 1], 2),  # T-A9
        (DataSpace.of(("v", 3)), Margins((("v",),)), [2, 1, 1], 2),  # T-A10
    ],
)
def test_z3_proves_reference_values_and_refutes_one_less(space, inv, table, expected) -> None:  # type: ignore[no-untyped-def]
    r = semi_adjacent_parameter(space, inv, Replace(), table=table, method="search")
    assert r.value == expected  # docs/reference/semi-dp.md §9
    w = r.search.witness
    assert isinstance(certify_value(space, inv, table, expected, w.dataset, w.record, w.target), Verified)
    bad = certify_upper_bound(space, inv, table, expected - 1)
    assert isinstance(bad, Refuted) and "histogram" in bad.counterexample


def test_z3_refutes_an_inflated_witness_distance() -> None:
    r = semi_adjacent_parameter(AB, ONE_WAY2, Replace(), table=[1, 1, 1, 1], method="search")
    w = r.search.witness
    assert isinstance(certify_lower_bound(AB, ONE_WAY2, w.dataset, w.record, w.target, w.distance + 1), Refuted)


def test_degenerate_and_invariant_free_cases() -> None:
    assert isinstance(certify_upper_bound(AB, ONE_WAY2, [4, 0, 0, 0], 0), Verified)  # a(t) = 0
    assert isinstance(certify_upper_bound(AB, Total(), [1, 1, 1, 1], 1), Verified)  # total only: 1
    assert isinstance(certify_upper_bound(AB, Total(), [1, 1, 1, 1], 0), Refuted)


def test_budget_gives_unknown_not_success(monkeypatch: pytest.MonkeyPatch) -> None:
    import semidp.verify.z3_semiadjacent as z

    monkeypatch.setattr(z, "MOVE_BUDGET", 10)
    assert isinstance(certify_upper_bound(ABC, ONE_WAY3, [1, 0, 0, 1, 0, 1, 1, 0], 3), Unknown)
