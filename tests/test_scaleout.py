"""Scale-out on Dask (issue Step 11, item 4): the same audits on a local cluster and serially give identical
reports for the same seed (each spec draws from its own seed, whichever worker runs it)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from semidp.verify.cli import main

pytest.importorskip("distributed")

SPECS = Path(__file__).resolve().parents[1] / "specs"
NAMES = ["census-2020-total.toml", "table-3x3-projected-laplace.toml", "table-3x3-projected-gaussian.toml"]


def _reports(capsys: pytest.CaptureFixture[str], *extra: str) -> list[dict[str, object]]:
    code = main(
        ["audit", *(str(SPECS / n) for n in NAMES), "--json", "--seed", "11", "--quiet", "--time-limit", "600", *extra]
    )
    assert code == 0
    out: list[dict[str, object]] = json.loads(capsys.readouterr().out)
    return out


def test_local_cluster_gives_the_serial_reports(capsys: pytest.CaptureFixture[str]) -> None:
    serial = _reports(capsys)
    dask = _reports(capsys, "--workers", "2")
    assert [r["name"] for r in dask] == [r["name"] for r in serial]  # in the order of the specs
    assert dask == serial  # draws, checks and numbers: identical


def test_check_runs_on_the_cluster_too(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    base = tmp_path / "b.json"
    args = ["check", *(str(SPECS / n) for n in NAMES[:2]), "--baseline", str(base), "--seed", "3", "--quiet"]
    assert main([*args, "--update-baseline"]) == 0
    assert main([*args, "--workers", "2"]) == 0
    assert "2 passed, 0 failed" in capsys.readouterr().out


def test_bad_worker_counts_and_unreachable_schedulers_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as e:
        main(["audit", str(SPECS / NAMES[0]), "--workers", "0"])
    assert e.value.code == 2
    assert "at least one worker" in capsys.readouterr().err
    assert main(["audit", str(SPECS / NAMES[0]), "--scheduler", "tcp://127.0.0.1:9", "--quiet"]) == 2
    assert "--scheduler 'tcp://127.0.0.1:9': cannot connect" in capsys.readouterr().err
