"""Typed report sections, the rest (issue 23, item 2): the workload ``design`` section and the report header
(``tool``, ``spec``, ``invariant``, ``semi_adjacent_parameter``, ``claim``).

The shipped specs' reports are compared byte for byte in ``tests/test_report_golden.py`` (the allocation design
among them); these tests pin the shapes the goldens do not reach: a design that found no scale, a scale design at
an (epsilon, delta) target and at a zCDP target (whose text once raised ``KeyError: 'delta'``), with the contract's
key order (``specs/README.md``, "[design]").
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping

from semidp.verify.design import (
    Achieved,
    AllocationSummary,
    DesignError,
    DesignFound,
    DesignNotFound,
    FailingScale,
    MeasurementVariance,
    Probe,
)
from semidp.verify.json_walk import to_json
from semidp.verify.report import ClaimInfo, InvariantInfo, SemiAdjacentInfo, SpecFile, ToolInfo

HEAD = {"framework": "semi-dp", "vary": "scale", "rel_tol": 0.001, "csv_file": "x.design.csv"}
EPS_TARGET = {"epsilon": 17.14, "delta": 1e-10}
EPS_ACHIEVED = Achieved(17.0, 17.1, 1e-10)


def _found(
    target: Mapping[str, object],
    *,
    allocation: AllocationSummary | None = None,
    achieved: Achieved = EPS_ACHIEVED,
) -> DesignFound:
    return DesignFound(
        target=target,
        **HEAD,  # type: ignore[arg-type]
        scale=0.5,
        scale_exact="1/2",
        allocation=allocation,
        achieved=achieved,
        tight=True,
        tightness="proven",
        failing=FailingScale(0.5005, 1.001, 17.15, 17.2),
        stopped=None,
        iterations=3,
        seconds=0.25,
        probes=(Probe(1.0, 29.9, 30.0),),
        expected_error=DesignError(2.0, "2", "note", (MeasurementVariance("US", "total", "1", "1/2", 1.0, 2.0),)),
        csv_text="geolevel,query,rho\nUS,total,1/2\n",
    )


def test_found_design_keys_in_contract_order_and_csv() -> None:
    j = to_json(_found(EPS_TARGET))
    assert list(j) == [
        "target",
        "framework",
        "vary",
        "rel_tol",
        "scale",
        "scale_exact",
        "csv_file",
        "achieved",
        "tight",
        "tightness",
        "failing",
        "stopped",
        "iterations",
        "seconds",
        "probes",
        "expected_error",
    ]
    assert j["achieved"] == {"lower": 17.0, "upper": 17.1, "delta": 1e-10}
    assert j["failing"] == {"scale": 0.5005, "ratio": 1.001, "lower": 17.15, "upper": 17.2}
    assert j["expected_error"]["per_measurement"] == [
        {"geolevel": "US", "query": "total", "rho_before": "1", "rho": "1/2", "sigma2_before": 1.0, "sigma2": 2.0}
    ]
    json.dumps(j)  # plain JSON: no dataclass left inside
    assert _found(EPS_TARGET).out_files("x") == [("x.design.csv", "geolevel,query,rho\nUS,total,1/2\n")]


def test_not_found_design_writes_why_even_when_none_and_no_csv() -> None:
    s = DesignNotFound(
        target=EPS_TARGET,
        **HEAD,  # type: ignore[arg-type]
        scale=None,
        scale_exact=None,
        why=None,
        stopped="the time budget ran out",
        iterations=0,
        seconds=0.0,
    )
    j = to_json(s)
    assert list(j)[4:] == ["scale", "scale_exact", "csv_file", "why", "stopped", "iterations", "seconds"]
    assert j["why"] is None and j["scale"] is None
    assert s.out_files("x") == []
    assert s.text_lines(None)[1] == "  no certified design: the time budget ran out"  # type: ignore[arg-type]
    ended = dataclasses.replace(s, stopped=None)  # neither a precondition nor the budget: the check's wording
    assert ended.text_lines(None)[1] == "  no certified design: the search ended without one"  # type: ignore[arg-type]


def test_allocation_sits_after_csv_file_and_its_objectives_only_once_designed() -> None:
    a = AllocationSummary("1", "1", (0,), 3.0, 2.0, 1.0, "closed-form", "none", "optimal", 0.0, "n")
    assert "objective_designed" not in to_json(a)
    a = AllocationSummary("1", "1", (0,), 3.0, 2.0, 1.0, "closed-form", "none", "optimal", 0.0, "n", 1.5, 4.0)
    j = to_json(_found(EPS_TARGET, allocation=a))
    assert list(j)[6:9] == ["csv_file", "allocation", "achieved"]
    assert list(j["allocation"])[-2:] == ["objective_designed", "objective_published"]
    text = _found(EPS_TARGET, allocation=a).text_lines(None)  # type: ignore[arg-type]
    assert (
        text[1]
        == "  allocation (closed-form, none) then scale c = 1/2 (0.5); 1 measurement(s) kept (fixed by the invariant)"
    )
    assert text[2] == "  sum of weight x variance: published 4 -> designed 1.5"


def test_design_text_at_an_epsilon_delta_target_and_at_a_zcdp_target() -> None:
    eps = _found(EPS_TARGET).text_lines(None)  # type: ignore[arg-type]
    assert eps[0] == "design: semi-dp target epsilon = 17.14, delta = 1e-10, vary = scale"
    assert eps[2].startswith("  achieved: epsilon in [17, 17.1") and "at delta = 1e-10" in eps[2]
    zcdp = _found({"zcdp": 40.0}, achieved=Achieved(40.0, 40.0)).text_lines(None)  # type: ignore[arg-type]
    assert zcdp[0] == "design: semi-dp target zcdp = 40.0, vary = scale"
    assert zcdp[2] == "  achieved: zcdp = 40 (exact) (certified; upper end <= target)"
    assert zcdp[-1] == "  3 PLD evaluation(s) in 0.25 s; with --out: x.design.csv"


# --------------------------------------------------------------------------------------
# the report header: tool, spec, invariant, semi_adjacent_parameter, claim
# --------------------------------------------------------------------------------------


def test_semi_adjacent_info_keys_witness_data_only_after_a_search_and_bounds_text() -> None:
    exact = SemiAdjacentInfo(2, 2, "closed-form", "w", True, "actual t")
    assert to_json(exact) == {
        "value": 2,
        "lower": 2,
        "method": "closed-form",
        "witness": "w",
        "exact": True,
        "scope": "actual t",
    }
    searched = SemiAdjacentInfo(4, 3, "graph-search", "w", False, "actual t", {"cells": [1, 0]})
    assert list(to_json(searched))[-1] == "witness_data" and to_json(searched)["witness_data"] == {"cells": [1, 0]}
    assert exact.bounds_text() == "a(t) = 2"
    assert searched.bounds_text(bold=True) == "a(t) in **[3, 4]**"  # an upper bound is shown as a bound


def test_claim_numbers_and_header_json() -> None:
    claim = ClaimInfo("semi-dp", {"epsilon": 17.14, "delta": 1e-10})
    assert (claim.number("epsilon"), claim.number("delta"), claim.number("zcdp")) == (17.14, 1e-10, None)
    assert ClaimInfo("dp", {"rdp": {"alpha": 2.0, "epsilon": 1.0}}).number("epsilon") is None
    assert to_json(claim) == {"framework": "semi-dp", "guarantee": {"epsilon": 17.14, "delta": 1e-10}}
    assert to_json(ToolInfo("semidp", "0.1.0")) == {"name": "semidp", "version": "0.1.0"}
    assert to_json(SpecFile("specs/x.toml", "ab12")) == {"path": "specs/x.toml", "sha256": "ab12"}
    assert to_json(InvariantInfo("margins", "margins (State)")) == {"kind": "margins", "description": "margins (State)"}
