"""The mutation driver's bookkeeping (issue Step 16): the default timeout, the rows it writes and ``--report``.

The score the README prints is assembled by ``benchmarks/mutation.py --report`` from the ``--out`` files of one
whole run and its continuations; these tests pin how verdicts are joined (a later file's verdict replaces an
earlier one's), which mutants count as equivalent, stale or not yet judged, and that a timeout is recorded as a
kill that says so.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from tests.mutation_driver import load_driver

MODULE = "accountant/pld/refine.py"


DRIVER = load_driver()


def _rows(mutants: list, outcome: str, **extra: object) -> list[dict[str, object]]:
    return [DRIVER._row(mu, outcome, 1.0, **extra) for mu in mutants]


def test_default_timeout_is_ten_baselines_and_at_least_a_minute() -> None:
    assert DRIVER._auto_timeout(0.4) == 60.0
    assert DRIVER._auto_timeout(6.0) == 60.0
    assert DRIVER._auto_timeout(11.9) == pytest.approx(119.0)


def test_a_timeout_is_a_kill_that_says_so() -> None:
    mu = DRIVER.mutants_of(MODULE)[0]
    row = DRIVER._row(mu, "timeout", 60.1, tests="3")
    assert row["outcome"] == "killed" and row["timeout"] is True and row["tests"] == "3"
    assert "timeout" not in DRIVER._row(mu, "killed", 2.0)
    assert DRIVER._row_key(row) == mu.key


def test_report_joins_files_later_verdicts_win(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    mutants = DRIVER.mutants_of(MODULE)
    equivalents = {mutants[0].key}
    first, second = tmp_path / "a.json", tmp_path / "b.json"
    # every mutant but the last three judged: mutants[1] and [2] survive the first run, [3] times out
    rows = _rows(mutants[1:3], "survived") + _rows(mutants[3:4], "timeout") + _rows(mutants[4:-3], "killed")
    stale = {**rows[-1], "line": 99999}  # a key the code no longer has
    DRIVER._write_results(first, [*rows, stale])
    DRIVER._write_results(second, _rows(mutants[1:2], "killed"))  # a --rerun after a new test kills [1]
    assert not list(tmp_path.glob("*.tmp"))

    code = DRIVER.report([MODULE], [first, second], equivalents, 95.0)
    out = capsys.readouterr().out
    n = len(mutants)
    killed = 1 + 1 + (n - 3 - 4)  # [1] by the rerun, [3] by its timeout, [4:-3]
    row = f"| {MODULE} | {n} | {n - 4} | {killed} (1) | 1 | 1 | 3 | {100 * killed / (killed + 1):.1f} % |"
    assert row in out
    assert "1 verdicts name no current mutant" in out and ":99999:" in out
    assert f"1 survivors counted against the score:\n  {mutants[2].key}\n" in out
    assert code == 1  # three mutants not judged yet

    DRIVER._write_results(second, _rows(mutants[1:3], "killed") + _rows(mutants[-3:], "killed"))
    assert DRIVER.report([MODULE], [first, second], equivalents, 95.0) == 0
    assert "| 100.0 % |" in capsys.readouterr().out


def test_an_equivalent_survivor_is_not_counted_against(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    mutants = DRIVER.mutants_of(MODULE)
    out_file = tmp_path / "a.json"
    DRIVER._write_results(out_file, _rows(mutants[:1], "survived") + _rows(mutants[1:], "killed"))
    assert DRIVER.report([MODULE], [out_file], {mutants[0].key}, 95.0) == 0
    assert "counted against" not in capsys.readouterr().out


def test_unreadable_out_files_are_named(tmp_path: Path) -> None:
    truncated = tmp_path / "cut.json"
    truncated.write_text('[{"module": "a')
    with pytest.raises(SystemExit, match=r"cut\.json: not a readable --out file"):
        DRIVER._read_results(truncated)
    with pytest.raises(SystemExit, match=r"name the modules before --report"):
        DRIVER._read_results(Path(MODULE))
    other = tmp_path / "other.json"
    other.write_text(json.dumps({"module": MODULE}))
    with pytest.raises(SystemExit, match=r"other\.json: not an --out file"):
        DRIVER._read_results(other)


def test_gzipped_out_files_are_read(tmp_path: Path) -> None:
    """The kept results of a whole run are gzipped (benchmarks/results/): ``--report`` reads them as they are."""
    rows = _rows(DRIVER.mutants_of(MODULE)[:3], "killed")
    packed = tmp_path / "run.json.gz"
    packed.write_bytes(gzip.compress(json.dumps(rows).encode()))
    assert DRIVER._read_results(packed) == rows
    packed.write_bytes(b"not gzip")
    with pytest.raises(SystemExit, match=r"run\.json\.gz: not a readable --out file"):
        DRIVER._read_results(packed)
