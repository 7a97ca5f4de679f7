"""``semidp check`` speaks up on the console (issue Step 18.4): improvements, specs missing from a checked
folder and baseline problems each get a line; a missing or mistyped baseline and a bad ``--rtol`` are
errors (exit 2) naming what is wrong, never a silent pass or a traceback."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from semidp.verify import regression
from semidp.verify.cli import main

SPECS = Path(__file__).resolve().parents[1] / "specs"
TOTAL, PERSONS = "census-2020-total.toml", "census-2020-persons.toml"
BASE = ["check", "specs", "--baseline", "b.json"]


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Path:
    """A user's folder with two specs and a recorded baseline (cwd)."""
    (tmp_path / "specs").mkdir()
    for name in (TOTAL, PERSONS):
        shutil.copy(SPECS / name, tmp_path / "specs" / name)
    monkeypatch.chdir(tmp_path)
    assert main([*BASE, "--update-baseline"]) == 0
    capsys.readouterr()
    return tmp_path


def _edit(repo: Path, spec: str, change: Any) -> None:
    data = json.loads((repo / "b.json").read_text())
    change(data["specs"][f"specs/{spec}"])
    (repo / "b.json").write_text(json.dumps(data))


def test_improvements_are_printed_on_the_console(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    def worse_before(entry: dict[str, Any]) -> None:
        entry["effective"]["params"]["zcdp"] = 3.0  # the baseline recorded a weaker guarantee than now (2.56)
        entry["verdict"] = "inconclusive"

    _edit(repo, TOTAL, worse_before)
    assert main([*BASE, "--junit", "j.xml"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert "    improved: verdict inconclusive -> holds" in out
    assert "    improved: effective zcdp: 3.0 -> 2.56" in out
    assert "improved: effective zcdp: 3.0 -&gt; 2.56" in (repo / "j.xml").read_text()


def test_a_spec_missing_from_the_folder_is_reported_and_dropped_on_update(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (repo / "specs" / PERSONS).unlink()
    assert main([*BASE, "--junit", "j.xml"]) == 0  # reported, not failed: a removed spec is no weaker guarantee
    out = capsys.readouterr().out
    assert f"[MISSING] specs/{PERSONS}: in the baseline, no longer in the checked folder" in out
    assert out.rstrip().endswith("1 passed, 0 failed, 1 missing")
    assert 'tests="2" failures="0" errors="0" skipped="1"' in (repo / "j.xml").read_text()
    assert main(["check", f"specs/{TOTAL}", "--baseline", "b.json"]) == 0  # one file: its siblings are not missing
    assert "[MISSING]" not in capsys.readouterr().out
    assert main([*BASE, "--update-baseline"]) == 0
    assert "1 missing spec(s) dropped" in capsys.readouterr().out
    assert list(json.loads((repo / "b.json").read_text())["specs"]) == [f"specs/{TOTAL}"]


def test_a_missing_baseline_is_an_error_unless_updating(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "specs", "--baseline", "typo.json"]) == 2
    err = capsys.readouterr().err
    assert "--baseline 'typo.json': no such file" in err and "--update-baseline" in err
    assert main(["check", "specs", "--baseline", "new.json", "--update-baseline"]) == 0
    assert (repo / "new.json").is_file()


@pytest.mark.parametrize("rtol", ["-1", "nan", "inf", "-inf", "abc"])
def test_rtol_must_be_a_finite_number_at_least_zero(repo: Path, rtol: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as e:
        main([*BASE, "--rtol", rtol])
    assert e.value.code == 2
    assert "--rtol" in capsys.readouterr().err


def test_rtol_zero_is_accepted(repo: Path) -> None:
    assert main([*BASE, "--rtol", "0"]) == 0


@pytest.mark.parametrize(
    ("change", "named"),
    [
        (lambda e: e["effective"]["params"].update(zcdp="2.56"), "effective.params.zcdp: expected a number or null"),
        (lambda e: e["effective"].update(epsilon_delta=[1, 2]), "effective.epsilon_delta: expected an object"),
        (lambda e: e.update(checks=["claim"]), "checks: expected an object"),
        (lambda e: e.update(verdict="ok"), "verdict: expected one of"),
        (lambda e: e["semi_adjacent_parameter"].update(value=True), "semi_adjacent_parameter.value: expected a"),
        (lambda e: e.update(effective=7), "effective: expected an object"),
    ],
)
def test_a_baseline_value_of_the_wrong_type_is_an_invalid_baseline(
    repo: Path, change: Any, named: str, capsys: pytest.CaptureFixture[str]
) -> None:
    _edit(repo, TOTAL, change)
    assert main(BASE) == 2
    err = capsys.readouterr().err
    assert f"invalid baseline: spec 'specs/{TOTAL}': {named}" in err and "Traceback" not in err
    assert main([*BASE, "--update-baseline"]) == 0  # --update-baseline rewrites the bad entry, saying so
    assert f"baseline entry dropped: spec 'specs/{TOTAL}': {named}" in capsys.readouterr().err
    assert main(BASE) == 0


def test_an_entry_that_is_not_an_object_is_named(tmp_path: Path) -> None:
    (tmp_path / "b.json").write_text(json.dumps({"version": 1, "specs": {"a.toml": [], "b.toml": {"checks": {}}}}))
    with pytest.raises(regression.InvalidBaseline, match=r"spec 'a.toml': \(entry\): expected an object, got \[\]"):
        regression.load_baseline(tmp_path / "b.json")
    assert regression.entry_problems("b.toml", {"checks": {}}) == []
    assert regression.entry_problems("c", {"effective": {"params": {"mu": None, "epsilon": float("inf")}}}) == []


def test_the_pytest_plugin_names_its_own_baseline_option(repo: Path) -> None:
    got = subprocess.run(
        [sys.executable, "-m", "pytest", "specs", "-p", "no:cacheprovider", "-q", "--semidp-baseline", "typo.json"],
        cwd=repo,
        capture_output=True,
        text=True,
    )
    assert got.returncode == 1, got.stdout + got.stderr
    assert "--semidp-baseline 'typo.json': no such file" in got.stdout and "2 failed" in got.stdout


def test_an_unwritable_junit_or_baseline_names_the_option(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (repo / "out").mkdir()
    assert main([*BASE, "--junit", "out"]) == 2
    err = capsys.readouterr().err
    assert "semidp: check: --junit 'out': cannot write" in err and "Is a directory" in err
    (repo / "plain").write_text("")
    assert main(["check", "specs", "--baseline", "plain/b.json", "--update-baseline"]) == 2
    err = capsys.readouterr().err
    assert "semidp: check: --baseline 'plain" in err and "cannot write" in err and "Traceback" not in err


@pytest.mark.parametrize(
    ("option", "value", "said"),
    [
        ("--semidp-time-limit", "nan", "must be a finite number of seconds > 0"),
        ("--semidp-time-limit", "-1", "must be a finite number of seconds > 0"),
        ("--semidp-seed", "-3", "a seed is an integer >= 0"),
    ],
)
def test_the_pytest_plugin_validates_its_options_like_the_cli(repo: Path, option: str, value: str, said: str) -> None:
    got = subprocess.run(
        [sys.executable, "-m", "pytest", "specs", "-p", "no:cacheprovider", "-q", f"{option}={value}"],
        cwd=repo,
        capture_output=True,
        text=True,
    )
    assert got.returncode == 4, got.stdout + got.stderr  # pytest's usage error, before any spec runs
    assert f"argument {option}: {value} " in got.stderr and said in got.stderr
