"""Tables too large to list S answer within the budget with the labelled fallback (issue Step 7, item 4).

A 12 x 12 table under both one-way margins has 589 513 sensitivity vectors [CA24, Prop. 32 with the
3-cycles]; S is not listed, its closed-form norms and span (:mod:`accountant.geometry.table_space_norms`, a superset
of S at the table) calibrate projected Laplace, b = Delta_1/epsilon = 6 (T-S2's Delta_1 = 6 for s >= 3).
"""

from __future__ import annotations

import time

import numpy as np
import pytest

from semidp.accountant.core.budget import Budget
from semidp.accountant.core.errors import InvalidArgument
from semidp.accountant.geometry.table_symmetry import TableSymmetry
from semidp.accountant.sensitivity.spaces import SensitivitySpace, table_space
from semidp.verify.load import loads
from semidp.verify.runner import audit


def _spec(kind: str, r: int, c: int, seed: int = 3) -> str:
    table = np.random.default_rng(seed).poisson(2, size=r * c).tolist()
    return f"""
version = 1
name = "big-{kind}"
[data]
features = [{{ name = "A", levels = {r} }}, {{ name = "B", levels = {c} }}]
table = {table}
[invariant]
kind = "margins"
margins = [["A"], ["B"]]
[mechanism]
kind = "{kind}"
epsilon = 1.0
[claim]
framework = "semi-dp"
guarantee = {{ epsilon = 1.0 }}
[audit]
samples = 100
seed = 1
"""


@pytest.mark.parametrize("kind", ["k-norm", "projected-laplace"])
def test_twelve_by_twelve_answers_within_its_budget(kind: str) -> None:
    limit = 20.0
    t0 = time.monotonic()
    a = audit(loads(_spec(kind, 12, 12)), budget=Budget.of(limit))
    elapsed = time.monotonic() - t0
    r = a.report
    assert elapsed <= 1.1 * limit + 2  # the contract's overshoot allowance
    mech = r["mechanism"]
    assert "not listed" in mech["sensitivity_not_listed"] and mech["sensitivity_exact"] is False
    assert mech["l1_sensitivity"] == 6 and mech["scale"] == 6.0  # b = Delta_1 / epsilon, closed form
    assert mech["noise_dimension"] == 121  # (12 - 1)(12 - 1)
    checks = {c["name"]: c["status"] for c in r["checks"]}
    assert checks["invariant-preserved"] == "pass" and checks["expected-l2-error"] == "pass"
    assert r["verdict"] in ("holds", "inconclusive") and checks["claim"] == "pass"
    if kind == "k-norm":
        assert mech["optimal"] is False and mech["label"].startswith("NON-OPTIMAL fallback for k-norm")
        alt = mech["alternatives"]
        assert alt["projected-laplace"]["expected_l2_upper"] < alt["containing-ball"]["expected_l2_upper"]


def test_symmetry_check_is_vectorised_and_can_fail() -> None:
    sym = TableSymmetry(3, 4)
    s = table_space(3, 4, 3)
    sym.check_invariant(s)  # the full space is invariant
    broken = SensitivitySpace.from_vectors([v for v in s.vectors if v[:2] not in ((1, -1), (-1, 1))], "broken")
    with pytest.raises(InvalidArgument, match="not invariant"):
        sym.check_invariant(broken)
