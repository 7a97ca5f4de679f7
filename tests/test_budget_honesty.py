"""A search cut short by its budget never yields a verdict that contradicts the exact one (issue Step 7).

3x3x3 table under its three two-way margins; with a generous budget the graph search proves a(t) = 7
(about a minute, the slow test below), so rho = 0.5 becomes 0.5 * 49 = 24.5 under Semi-DP [CA24, Prop. 15].
With a tiny budget only bounds are known: the verdict is the exact one or inconclusive, never the other.
"""

from __future__ import annotations

import pytest

from semidp.accountant.core.budget import Budget
from semidp.verify.load import loads
from semidp.verify.runner import audit

TABLE = [0, 0, 0, 1, 0, 2, 2, 1, 1, 2, 0, 2, 0, 2, 2, 0, 1, 2, 1, 2, 2, 1, 2, 1, 2, 1, 0]
SPEC = f"""
version = 1
name = "t333"
[data]
features = [{{ name = "A", levels = 3 }}, {{ name = "B", levels = 3 }}, {{ name = "C", levels = 3 }}]
table = {TABLE}
[invariant]
kind = "margins"
margins = [["A", "B"], ["A", "C"], ["B", "C"]]
[mechanism]
kind = "published"
guarantee = {{ zcdp = 0.5 }}
[claim]
framework = "semi-dp"
guarantee = {{ zcdp = CLAIM }}
"""
EXACT_A = 7


def _exact_verdict(claim: float) -> str:
    return "holds" if 0.5 * EXACT_A**2 <= claim else "fails"


@pytest.mark.parametrize("claim", [0.6, 20.0, 30.0])
def test_cut_short_verdict_never_contradicts_the_exact_one(claim: float) -> None:
    r = audit(loads(SPEC.replace("CLAIM", str(claim))), budget=Budget.of(0.05)).report
    a = r["semi_adjacent_parameter"]
    assert a["lower"] <= EXACT_A <= a["value"]  # the bounds bracket the truth
    assert r["verdict"] in ("inconclusive", _exact_verdict(claim))
    if not a["exact"]:
        chk = next(c for c in r["checks"] if c["name"] == "semi-adjacent-parameter")
        assert chk["status"] != "pass"  # bounds are not a PASS


@pytest.mark.slow
def test_generous_budget_proves_the_exact_value() -> None:
    r = audit(loads(SPEC.replace("CLAIM", "20")), budget=Budget.of(600)).report
    assert (r["semi_adjacent_parameter"]["value"], r["semi_adjacent_parameter"]["exact"]) == (EXACT_A, True)
    assert r["verdict"] == "fails"
