"""The typed ``audit_lower_bound`` section (:mod:`verify.audit_report`): its JSON keys come out in contract order,
the nested objects' too (the walk of :mod:`verify.json_walk` writes fields in declaration order, so swapping two
fields would reorder the report)."""

from __future__ import annotations

from semidp.verify.audit_pairs import AuditPair
from semidp.verify.audit_report import (
    AuditCandidate,
    AuditDraws,
    AuditPairRow,
    AuditRound,
    AuditSection,
    AuditSpending,
    EpsilonDeltaRow,
    TradeoffPoint,
)
from semidp.verify.threshold_audit import Candidate, Measured

SECTION_KEYS = [
    "method", "callable", "refuted", "stop", "confidence", "tests", "per_bound_level", "rounds", "spending",
    "tradeoff_points", "epsilon_delta", "draws", "pairs", "candidates", "evidence", "reproducible",
    "reproducibility", "claimed_curve", "note",
]  # fmt: skip
ROUND_KEYS = [
    "round", "planned_per_side", "draws_per_side", "alpha", "per_bound_level", "refuted", "measured", "seconds"
]  # fmt: skip
SPENDING_KEYS = ["rule", "first_round", "growth", "planned_per_side", "alphas"]
POINT_KEYS = [
    "pair", "statistic", "threshold", "alpha", "beta", "alpha_hat", "beta_hat", "claimed_beta", "below_claim",
    "draws_per_side",
]  # fmt: skip
ROW_KEYS = ["delta", "epsilon_lower", "epsilon_upper", "gap", "upper_source"]
DRAWS_KEYS = ["per_side", "drawn_per_side", "selection_share", "total", "seconds", "draw_seconds", "per_second"]
PAIR_KEYS = ["x", "x_prime", "difference", "l2_squared", "origin", "distance", "draws", "stop"]
CANDIDATE_KEYS = ["pair", "statistic", "threshold", "predicted_gap"]


def _section() -> AuditSection:
    cand = Candidate(pair=0, statistic="projection", threshold=0.25, predicted_gap=0.1)
    measured = Measured(cand, 0.1, 0.2, 0.15, 0.3, 0.5, 40)
    return AuditSection(
        method="m",
        callable="pkg:fn",
        refuted=True,
        stop="refuted",
        confidence=0.95,
        tests=1,
        per_bound_level=0.99,
        rounds=(AuditRound(1, 100, 100, 0.05, 0.99, True, True, 0.5),),
        spending=AuditSpending("linear: ...", 100, 4, (100,), (0.05,)),
        tradeoff_points=(TradeoffPoint.of(measured),),
        epsilon_delta=(EpsilonDeltaRow(1e-6, 0.5, 1.0, 0.5, "claim"),),
        draws=AuditDraws(200, 100, 0.5, 400, 1.0, 0.8, 500.0),
        pairs=(AuditPairRow.of(AuditPair((3, 1), (1, 2), "spec", 2), (100, 100), "refuted"),),
        candidates=(AuditCandidate.of(cand),),
        evidence=None,
        reproducible=True,
        reproducibility="r",
        claimed_curve="c",
        note="n",
    )


def test_audit_section_keys_in_contract_order() -> None:
    js = _section().to_json()
    assert list(js) == SECTION_KEYS
    assert list(js["rounds"][0]) == ROUND_KEYS
    assert list(js["spending"]) == SPENDING_KEYS
    assert list(js["tradeoff_points"][0]) == POINT_KEYS
    assert list(js["epsilon_delta"][0]) == ROW_KEYS
    assert list(js["draws"]) == DRAWS_KEYS
    assert list(js["pairs"][0]) == PAIR_KEYS
    assert list(js["candidates"][0]) == CANDIDATE_KEYS
    assert js["evidence"] is None  # written as null, not left out


def test_audit_section_values_from_the_typed_rows() -> None:
    js = _section().to_json()
    assert js["pairs"][0] == {
        "x": [3, 1], "x_prime": [1, 2], "difference": [2, -1], "l2_squared": 5, "origin": "spec", "distance": 2,
        "draws": [100, 100], "stop": "refuted",
    }  # fmt: skip
    assert js["tradeoff_points"][0]["alpha"] == 0.15 and js["tradeoff_points"][0]["below_claim"] is True
    assert js["candidates"][0] == {"pair": 0, "statistic": "projection", "threshold": 0.25, "predicted_gap": 0.1}


def test_audit_section_text_and_markdown_read_the_typed_fields() -> None:
    sec = _section()
    text = sec.text_lines(None)  # type: ignore[arg-type]  # the report is not read
    assert text[1] == (
        "statistical audit of pkg:fn: 1 pairs, 200 draws per side planned (400 drawn in all, 1.00 s, 500 draws/s), "
        "1 tests at joint confidence 0.95"
    )
    assert text[2] == (
        "    1 round(s), stopped: refuted at 100 draws per side of 200 planned (error spent per round: linear)"
    )
    assert text[3] == "    pair 0: spec, distance 2, |x - x'|_2^2 = 5"
    assert text[4] == (
        "    test (pair 0, projection): alpha <= 0.15, beta <= 0.3; claim needs beta >= 0.5: BELOW the claim"
    )
    assert text[-1] == "    1e-06        0.5                         1                       0.5"
    md = sec.markdown_lines(None)  # type: ignore[arg-type]
    assert md[2] == (
        "- callable: `pkg:fn`; confidence 0.95; 1 tests; 200 draws per side planned, 100 drawn; stopped: refuted; "
        "refuted: True"
    )
    assert md[-2] == "| 1e-06 | 0.5 | 1 | 0.5 |"
