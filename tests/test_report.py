"""The typed report: the verdict follows from the outcome types, and JSON keeps the contract's fields."""

from __future__ import annotations

import pytest

from semidp.accountant.core.outcome import Bounds, NotApplicable, Outcome, Refuted, Skipped, Unknown, Verified
from semidp.accountant.guarantees.definitions import ZCDP
from semidp.verify.report import Check, GuaranteeSummary, verdict_of


@pytest.mark.parametrize(
    "outcomes, verdict",
    [
        ([Verified("a"), Skipped("b"), NotApplicable("c")], "holds"),  # not run is neither fail nor unknown
        ([Verified("a"), Unknown("b")], "inconclusive"),
        ([Unknown("a"), Refuted("b"), Verified("c")], "fails"),
        ([], "holds"),
    ],
)
def test_verdict_is_a_function_of_outcome_types(outcomes: list[Outcome], verdict: str) -> None:
    assert verdict_of([Check(f"c{i}", o) for i, o in enumerate(outcomes)]) == verdict


@pytest.mark.parametrize(
    "outcome, status, name, detail",
    [
        (Verified("proof"), "pass", "verified", "proof"),
        (Refuted("pair"), "fail", "refuted", "pair"),
        (Unknown("timeout"), "skip", "unknown", "inconclusive: timeout"),
        (NotApplicable("full-dimensional"), "skip", "not-applicable", "full-dimensional"),
        (Skipped("no draws"), "skip", "skipped", "no draws"),
    ],
)
def test_check_json_fields(outcome: Outcome, status: str, name: str, detail: str) -> None:
    assert Check("x", outcome, Bounds(1.0, 1.5, 2.0)).to_json() == {
        "name": "x",
        "status": status,
        "outcome": name,
        "detail": detail,
        "bounds": {"lower": 1.0, "estimate": 1.5, "upper": 2.0},
    }
    assert "bounds" not in Check("x", outcome).to_json()


def test_guarantee_summary_contract_fields() -> None:
    """ZCDP rho = 2.56 at delta = 1e-10: both routes, labelled, Bun-Steinke first (T-Z2: 17.915)."""
    s = GuaranteeSummary.of(ZCDP(2.56), [1e-10], framework="semi-dp").to_json()
    assert list(s)[:3] == ["framework", "relation", "zcdp"] and s["zcdp"] == 2.56
    assert [e["method"] for e in s["epsilon_delta"]] == ["bun-steinke", "canonne-kamath-steinke"]
    assert round(s["epsilon_delta"][0]["epsilon"], 3) == 17.915
