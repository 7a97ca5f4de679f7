"""Fast guards of the baseline comparison (verify/regression.py): which changes are regressions, which are
improvements, and where the tolerance lies.

Issue Step 16: a privacy number that grew, a verdict that got worse or a check that stopped passing must fail
``semidp check``; flipping any single comparison, side or tolerance here fails a test (judged by
``python benchmarks/mutation.py verify/regression.py``).
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from semidp.verify.regression import (
    ATOL,
    BASELINE_VERSION,
    RTOL,
    InvalidBaseline,
    compare,
    entry_problems,
    load_baseline,
    spec_key,
    summarize,
    write_baseline,
)

REPORT: dict[str, Any] = {
    "name": "s",
    "verdict": "holds",
    "checks": [{"name": "a", "status": "pass"}, {"name": "b", "status": "fail"}],
    "semi_adjacent_parameter": {"value": 2, "lower": 1, "exact": True, "extra": 5},
    "advertised": {
        "epsilon": 1.0,
        "delta": 1e-10,
        "relation": "x",
        "framework": "y",
        "flag": True,
        "label": "z",
        "epsilon_delta": [
            {"delta": 1e-6, "method": "pld", "epsilon": 2.5},
            {"delta": 1e-6},
            "junk",
            {"method": "pld", "epsilon": 1.0},
        ],
    },
    "effective": "not a guarantee",
}


def _summary(**over: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "verdict": "holds",
        "checks": {"a": "pass", "b": "fail"},
        "semi_adjacent_parameter": {"value": 2.0},
        "advertised": {"params": {"epsilon": 1.0}, "epsilon_delta": {"delta=1e-06;pld": 2.5}},
    }
    base.update(over)
    return base


def test_constants() -> None:
    assert (BASELINE_VERSION, RTOL, ATOL) == (1, 1e-9, 1e-12)


def test_summarize_keeps_the_privacy_numbers_only() -> None:
    assert summarize(REPORT) == {
        "name": "s",
        "verdict": "holds",
        "checks": {"a": "pass", "b": "fail"},
        "semi_adjacent_parameter": {"value": 2, "lower": 1, "exact": True},
        "advertised": {"params": {"epsilon": 1.0, "delta": 1e-10}, "epsilon_delta": {"delta=1e-06;pld": 2.5}},
    }
    assert summarize({}) == {"name": None, "verdict": None, "checks": {}, "semi_adjacent_parameter": {
        "value": None, "lower": None, "exact": None}}  # fmt: skip


def test_identical_summaries_compare_clean() -> None:
    c = compare("s", _summary(), _summary())
    assert (c.regressions, c.improvements, c.notes, c.regressed) == ([], [], [], False)


@pytest.mark.parametrize(
    "before, after, worse",
    [("holds", "inconclusive", True), ("inconclusive", "fails", True), ("holds", "fails", True),
     ("fails", "holds", False), ("inconclusive", "holds", False)],
)  # fmt: skip
def test_verdict_order(before: str, after: str, worse: bool) -> None:
    c = compare("s", _summary(verdict=before), _summary(verdict=after))
    assert c.regressed is worse
    assert (c.regressions if worse else c.improvements) == [f"verdict {before} -> {after}"]
    assert (c.improvements if worse else c.regressions) == []


def test_unknown_verdicts_rank_worst() -> None:
    assert compare("s", _summary(verdict="fails"), _summary(verdict=None)).regressions == ["verdict fails -> None"]
    assert compare("s", _summary(verdict=None), _summary(verdict="fails")).improvements == ["verdict None -> fails"]
    both = compare("s", _summary(verdict=None), _summary(verdict="odd"))
    assert (both.regressions, both.improvements) == ([], [])


def test_checks() -> None:
    c = compare(
        "s",
        _summary(checks={"a": "pass", "b": "fail", "c": "pass"}),
        _summary(checks={"b": "pass", "c": "fail", "d": "skip"}),
    )
    assert c.regressions == ["check 'a' passed and is no longer reported", "check 'c': pass -> fail"]
    assert c.improvements == ["check 'b': fail -> pass"]
    assert c.notes == ["new check 'd': skip"]
    # a check that failed before and is gone, or fails still, is neither
    c = compare("s", _summary(checks={"b": "fail", "e": "skip"}), _summary(checks={"e": "fail"}))
    assert (c.regressions, c.improvements, c.notes) == ([], [], [])


def test_a_of_t_compares_exactly() -> None:
    up = compare("s", _summary(), _summary(semi_adjacent_parameter={"value": math.nextafter(2.0, 3.0)}))
    assert up.regressions == [f"a(t): 2.0 -> {math.nextafter(2.0, 3.0)!r} (weaker)"]
    down = compare("s", _summary(), _summary(semi_adjacent_parameter={"value": 1.0}))
    assert down.improvements == ["a(t): 2.0 -> 1.0"] and not down.regressed


def test_a_guarantee_number_within_the_tolerance_is_unchanged() -> None:
    def eps_change(before: float, after: float) -> tuple[list[str], list[str]]:
        c = compare(
            "s",
            _summary(advertised={"params": {"epsilon": before}}),
            _summary(advertised={"params": {"epsilon": after}}),
        )
        return c.regressions, c.improvements

    assert eps_change(1.0, 1.0 + 0.5e-9) == ([], [])
    assert eps_change(1.0, 1.0 - 0.5e-9) == ([], [])
    assert eps_change(1.0, 1.0 + 2e-9)[0] == [f"advertised epsilon: 1.0 -> {1.0 + 2e-9!r} (weaker)"]
    assert eps_change(1.0, 1.0 - 2e-9)[1] == [f"advertised epsilon: 1.0 -> {1.0 - 2e-9!r}"]
    # near 0 the absolute tolerance decides
    assert eps_change(0.0, 0.5e-12) == ([], [])
    assert eps_change(0.0, 2e-12)[0] == ["advertised epsilon: 0.0 -> 2e-12 (weaker)"]
    assert eps_change(-1.0, -1.0 + 2e-9)[0] == [f"advertised epsilon: -1.0 -> {-1.0 + 2e-9!r} (weaker)"]
    assert eps_change(-1.0, -1.0 + 0.5e-9) == ([], [])


def test_custom_tolerances() -> None:
    b, n = _summary(advertised={"params": {"epsilon": 1.0}}), _summary(advertised={"params": {"epsilon": 1.01}})
    assert compare("s", b, n, rtol=0.1).regressions == []
    assert compare("s", b, n, rtol=0.0, atol=0.1).regressions == []
    assert compare("s", b, n, rtol=0.0, atol=0.001).regressed


def test_epsilon_delta_entries_are_compared() -> None:
    c = compare(
        "s", _summary(), _summary(advertised={"params": {"epsilon": 1.0}, "epsilon_delta": {"delta=1e-06;pld": 3.0}})
    )
    assert c.regressions == ["advertised delta=1e-06;pld: 2.5 -> 3.0 (weaker)"]


def test_no_finite_value_is_the_weakest() -> None:
    def change(before: object, after: object) -> tuple[list[str], list[str]]:
        c = compare(
            "s", _summary(advertised={"params": {"mu": before}}), _summary(advertised={"params": {"mu": after}})
        )
        return c.regressions, c.improvements

    assert change(1.0, None) == (["advertised mu: 1.0 -> None (no finite value)"], [])
    assert change(1.0, math.inf) == (["advertised mu: 1.0 -> inf (no finite value)"], [])
    assert change(None, None) == ([], [])
    assert change(math.inf, None) == ([], [])
    assert change(None, math.inf) == ([], [])
    assert change(None, 2.0) == ([], ["advertised mu: none -> 2.0"])
    assert change(math.inf, 2.0) == ([], [])  # inf -> finite: not a number to compare, not reported
    assert change("x", 2.0) == ([], [])
    assert change(1.0, "x") == ([], [])


def test_guarantees_missing_or_not_reported() -> None:
    c = compare("s", _summary(), {k: v for k, v in _summary().items() if k != "advertised"})
    assert c.regressions == ["advertised guarantee is no longer reported"]
    c = compare("s", _summary(), _summary(advertised={"params": {}}))
    assert c.regressions == [] and c.notes == [
        "advertised epsilon: no longer reported",
        "advertised delta=1e-06;pld: no longer reported",
    ]
    c = compare("s", _summary(advertised="x", effective=None), _summary(advertised={"params": {"epsilon": 9.0}}))
    assert (c.regressions, c.notes) == ([], [])
    c = compare("s", _summary(effective={"params": {"rho": 0.1}}), _summary(effective={"params": {"rho": 0.2}}))
    assert c.regressions == ["effective rho: 0.1 -> 0.2 (weaker)"]


def test_entry_problems() -> None:
    assert entry_problems("a", _summary()) == []
    assert entry_problems("a", [1]) == ["spec 'a': (entry): expected an object, got [1]"]
    bad = {
        "verdict": "great",
        "checks": {"x": 1},
        "semi_adjacent_parameter": {"value": "two"},
        "advertised": {"params": {"epsilon": "abc"}, "epsilon_delta": []},
        "effective": 3,
    }
    assert entry_problems("a", bad) == [
        "spec 'a': verdict: expected one of ['fails', 'holds', 'inconclusive'], got \"great\"",
        "spec 'a': checks.x: expected a status string, got 1",
        "spec 'a': semi_adjacent_parameter.value: expected a number or null, got \"two\"",
        "spec 'a': advertised.params.epsilon: expected a number or null, got \"abc\"",
        "spec 'a': advertised.epsilon_delta: expected an object, got []",
        "spec 'a': effective: expected an object, got 3",
    ]
    assert entry_problems("a", {"checks": [], "semi_adjacent_parameter": 1}) == [
        "spec 'a': checks: expected an object, got []",
        "spec 'a': semi_adjacent_parameter: expected an object, got 1",
    ]
    assert entry_problems("a", {"verdict": None, "advertised": {"params": {"e": None, "f": True}}}) == [
        "spec 'a': advertised.params.f: expected a number or null, got true"
    ]
    assert entry_problems("a", {"semi_adjacent_parameter": {"value": "x" * 50}})[0].endswith('"' + "x" * 36 + "...")
    assert entry_problems("a", {"semi_adjacent_parameter": {"value": "x" * 38}})[0].endswith('"' + "x" * 38 + '"')
    assert entry_problems("a", {"semi_adjacent_parameter": {"value": "x" * 39}})[0].endswith('"' + "x" * 36 + "...")


def test_baseline_round_trip_and_refusals(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "base.json"
    with pytest.raises(InvalidBaseline, match="no such file"):
        load_baseline(path)
    assert load_baseline(path, missing_ok=True) == {}
    write_baseline(path, {"b.toml": _summary(), "a.toml": _summary(verdict="fails")})
    text = path.read_text()
    assert text.endswith("}\n") and text.startswith('{\n  "specs": {')
    data = json.loads(text)
    assert data["version"] == BASELINE_VERSION and list(data["specs"]) == ["a.toml", "b.toml"]
    assert load_baseline(path) == {"a.toml": _summary(verdict="fails"), "b.toml": _summary()}
    path.write_text("{not json")
    with pytest.raises(InvalidBaseline, match="not a readable JSON baseline"):
        load_baseline(path, option="--semidp-baseline")
    path.write_text(json.dumps({"version": 2, "specs": {}}))
    with pytest.raises(InvalidBaseline, match="expected"):
        load_baseline(path)
    path.write_text(json.dumps({"version": 1, "specs": []}))
    with pytest.raises(InvalidBaseline, match="expected"):
        load_baseline(path)
    path.write_text(json.dumps({"version": 1, "specs": {"ok": _summary(), "bad": {"verdict": "x"}, "worse": 3}}))
    with pytest.raises(InvalidBaseline) as info:
        load_baseline(path)
    assert "(+1 more)" in str(info.value)
    assert len(info.value.problems) == 2 and info.value.valid == {"ok": _summary()}
    path.write_text(json.dumps({"version": 1, "specs": {"bad": {"verdict": "x"}}}))
    with pytest.raises(InvalidBaseline) as info:
        load_baseline(path)
    assert "more)" not in str(info.value)


def test_spec_key(tmp_path: Path) -> None:
    assert spec_key(tmp_path / "specs" / "a.toml", tmp_path / "base.json") == "specs/a.toml"
    outside = Path("/elsewhere/a.toml")
    assert spec_key(outside, tmp_path / "base.json") == outside.resolve().as_posix()


def test_summary_of_a_typed_report_reads_both_bounds_of_a_of_t() -> None:
    """``summary_of`` reads the typed report (here a stand-in with the typed header and guarantee summaries'
    attributes): a(t)'s value, its lower bound and exactness, the numeric forms and every (epsilon, delta) entry
    keyed by delta and method -- the same object ``summarize`` makes of the report's JSON."""
    from types import SimpleNamespace as NS

    from semidp.verify.regression import summary_of
    from semidp.verify.report import SemiAdjacentInfo

    a = SemiAdjacentInfo(value=4, lower=2, method="m", witness="w", exact=False, scope="actual t")
    adv = NS(forms={"epsilon": 1.0, "relation": "x", "flag": True}, entries=[NS(delta=1e-6, method="pld", epsilon=2.5)])
    eff = NS(forms={"rho": 0.5}, entries=[])
    report = NS(
        name="s",
        verdict="holds",
        checks=[NS(name="a", status="pass")],
        semi_adjacent_parameter=a,
        advertised=adv,
        effective=eff,
    )
    assert summary_of(report) == {  # type: ignore[arg-type]
        "name": "s",
        "verdict": "holds",
        "checks": {"a": "pass"},
        "semi_adjacent_parameter": {"value": 4, "lower": 2, "exact": False},
        "advertised": {"params": {"epsilon": 1.0}, "epsilon_delta": {"delta=1e-06;pld": 2.5}},
        "effective": {"params": {"rho": 0.5}, "epsilon_delta": {}},
    }
