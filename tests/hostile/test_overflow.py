"""Hostile specs: integers that overflow int64 or floats that cannot be exact (issue 21, Step 17.1 and 17.6).

Each case runs the CLI in a subprocess under a time limit and asserts the exit code, that no
traceback appears and that no verdict claims more than was proven (no false HOLDS). The
adversarial probe found: an invariant [[0, -2**63, 2**62]] (the same constraint as [[0, -2, 1]])
reported a(t) = 2 instead of 4 and a 15.5-zCDP claim "proved exactly by z3"; a query entry
4 000 000 000 gave l2 = 0 reported exact; inf and 1e308 were cast to int64 garbage.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
TIME_LIMIT = 60  # --time-limit of each run; the subprocess is killed at twice that plus start-up


def _spec(
    invariant: str = '[invariant]\nkind = "total"', query: str = 'kind = "histogram"', table: str = "[2, 2, 2]"
) -> str:
    return f"""version = 1
name = "hostile-overflow"
[data]
features = [{{ name = "A", levels = 3 }}]
adjacency = "replace-one"
table = {table}
{invariant}
[query]
{query}
[mechanism]
kind = "published"
guarantee = {{ zcdp = 1.0 }}
[claim]
framework = "semi-dp"
guarantee = {{ zcdp = 15.5 }}
"""


def _linear(matrix: str) -> str:
    return f'[invariant]\nkind = "linear"\nmatrix = {matrix}'


def _run(tmp_path: Path, text: str) -> tuple[int, dict[str, Any] | None, str]:
    spec = tmp_path / "hostile.toml"
    spec.write_text(text)
    env = {**os.environ, "PYTHONPATH": os.environ.get("PYTHONPATH", str(ROOT))}
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "semidp.verify.cli",
            "audit",
            str(spec),
            "--json",
            "--quiet",
            "--time-limit",
            str(TIME_LIMIT),
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=2 * TIME_LIMIT + 30,
    )
    assert "Traceback" not in proc.stdout + proc.stderr, proc.stderr[-2000:]
    report = json.loads(proc.stdout) if proc.stdout.strip().startswith("{") else None
    if report is not None:
        assert report["verdict"] != "holds" or proc.returncode == 0
    return proc.returncode, report, proc.stderr


@pytest.mark.parametrize(
    "matrix",
    [
        "[[0, -2, 1]]",
        f"[[0, {-(2**63)}, {2**62}]]",  # the probe's case: int64 wraps the products
        f"[[0, {-(2**64)}, {2**63}]]",  # beyond int64 altogether
        f"[[0, {2**120 * 2}, {-(2**120)}]]",  # the same constraint, scaled by -2**120
    ],
)
def test_equivalent_invariants_give_a_of_t_4_and_refute_the_claim(tmp_path: Path, matrix: str) -> None:
    """a(t) = 4 for every form of the constraint: 1-zCDP is 16-zCDP semi-DP, so 15.5 is refuted."""
    code, rep, _ = _run(tmp_path, _spec(_linear(matrix)))
    assert code == 1 and rep is not None
    assert rep["verdict"] == "fails"
    assert rep["semi_adjacent_parameter"]["value"] == 4 and rep["semi_adjacent_parameter"]["lower"] == 4
    assert rep["effective"]["zcdp"] == 16


@pytest.mark.parametrize(
    ("matrix", "table", "key"),
    [
        (f"[[0, -3, {2**63 - 1}]]", "[2, 2, 2]", "invariant.matrix[0][2]"),  # coprime: no reduction helps
        (f"[[0, 1, {2**60}]]", "[2, 2, 2]", "invariant.matrix[0][2]"),
        ("[[1, 2, 3]]", f"[{2**60}, 0, 0]", "invariant.matrix[0][2]"),  # ||row||_1 * n beyond 2**53
    ],
)
def test_invariant_beyond_the_exact_range_exits_2_naming_the_entry(
    tmp_path: Path, matrix: str, table: str, key: str
) -> None:
    code, rep, err = _run(tmp_path, _spec(_linear(matrix), table=table))
    assert code == 2 and rep is None
    assert f"{key}: is " in err and "2**53" in err


@pytest.mark.parametrize(
    ("matrix", "key"),
    [
        ("[[4000000000, 0, 0], [0, 1, 0]]", "query.matrix[0][0]: is 4000000000"),  # the probe: l2 = 0, "exact"
        ("[[1, 0, 0], [0, -4000000000, 0]]", "query.matrix[1][1]: is -4000000000"),
        ("[[inf, 0, 0]]", "query.matrix[0][0]"),
        ("[[-inf, 0, 0]]", "query.matrix[0][0]"),
        ("[[nan, 0, 0]]", "query.matrix[0][0]"),
        ("[[1e308, 0, 0]]", "query.matrix[0][0]"),  # refused here, or earlier by the number limits
        (f"[[{2**64}, 0, 0]]", "query.matrix[0][0]"),
        ("[[0.5, 0, 0]]", "query.matrix[0][0]: 1/2 is not an integer"),
        ('[["1/3", 0, 0]]', "query.matrix[0][0]: 1/3 is not an integer"),
    ],
)
def test_query_beyond_the_exact_range_exits_2_naming_the_entry(tmp_path: Path, matrix: str, key: str) -> None:
    code, rep, err = _run(tmp_path, _spec(query=f'kind = "linear"\nmatrix = {matrix}'))
    assert code == 2 and rep is None
    assert key in err


def test_query_at_the_edge_of_the_range_is_exact(tmp_path: Path) -> None:
    """Entries 2**31 - 1: l1, linf exact integers and l2 = sqrt(2) (2**31 - 1) rounded up (int64 squares would
    still fit one by one, but their sum must not wrap)."""
    m = 2**31 - 1
    code, rep, _ = _run(tmp_path, _spec(query=f'kind = "linear"\nmatrix = [[{m}, 0, 0], [0, {m}, 0], [0, 0, {m}]]'))
    assert code == 0 and rep is not None
    s = rep["sensitivity"]
    assert (s["l1"], s["linf"], s["exact"]) == (2 * m, m, True)
    assert s["l2"] >= math.sqrt(2) * m and s["l2"] == pytest.approx(math.sqrt(2) * m, rel=1e-15)


def test_integral_float_query_entries_are_read_exactly(tmp_path: Path) -> None:
    code, rep, _ = _run(tmp_path, _spec(query='kind = "linear"\nmatrix = [[4.0, 0, 0], ["6/2", 1, 0]]'))
    assert code == 0 and rep is not None
    assert (rep["sensitivity"]["l1"], rep["sensitivity"]["linf"]) == (7, 4)  # columns (4, 3), (0, 1), (0, 0)


@pytest.mark.parametrize(
    ("invariant", "table", "key"),
    [
        ('[invariant]\nkind = "margins"\nmargins = [["A"]]', f"[{2**70}, 0, 1]", "data.table: sums to "),
        ('[invariant]\nkind = "total"', f"[{2**63}, 0, 0]", "data.table: sums to "),
    ],
)
def test_counts_beyond_the_exact_range_exit_2_naming_the_key(
    tmp_path: Path, invariant: str, table: str, key: str
) -> None:
    """Counts that int64 cannot hold were an internal error (OverflowError) before."""
    code, rep, err = _run(tmp_path, _spec(invariant, table=table))
    assert code == 2 and rep is None
    assert key in err and "internal error" not in err
