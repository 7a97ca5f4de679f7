"""Privacy regression tests in a user's CI (issue Step 11, item 3): ``semidp check`` and the pytest plugin.

A user's repository with a ``specs/`` folder and a baseline gets a failing job when a change weakens a
guarantee: here the 3x3 K-norm spec's epsilon goes from 1 to 1.3 (its claim of 1 no longer holds).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from semidp.verify.cli import main
from semidp.verify.regression import compare, summarize

SPECS = Path(__file__).resolve().parents[1] / "specs"
pytest_plugins = ["pytester"]


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    (tmp_path / "specs").mkdir()
    for name in ("census-2020-total.toml", "census-2020-persons.toml", "table-3x3-projected-laplace.toml"):
        shutil.copy(SPECS / name, tmp_path / "specs" / name)
    return tmp_path


def _weaken(repo: Path) -> None:
    p = repo / "specs" / "table-3x3-projected-laplace.toml"
    text = p.read_text(encoding="utf-8")
    assert "\nepsilon = 1.0\n" in text
    p.write_text(text.replace("\nepsilon = 1.0\n", "\nepsilon = 1.3\n"), encoding="utf-8")


def test_check_passes_then_fails_after_a_weakening_change(
    repo: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(repo)
    base = ["check", "specs", "--baseline", "privacy-baseline.json", "--seed", "1"]
    assert main([*base, "--update-baseline"]) == 0
    stored = json.loads((repo / "privacy-baseline.json").read_text())
    assert set(stored["specs"]) == {
        f"specs/{n}" for n in ("census-2020-total.toml", "census-2020-persons.toml", "table-3x3-projected-laplace.toml")
    }
    assert stored["specs"]["specs/census-2020-persons.toml"]["verdict"] == "fails"  # known, recorded
    assert main([*base, "--junit", "junit.xml"]) == 0  # nothing changed: the known failure is not a regression
    capsys.readouterr()
    _weaken(repo)
    assert main([*base, "--junit", "junit.xml"]) == 1
    out = capsys.readouterr().out
    assert "[FAIL] specs/table-3x3-projected-laplace.toml: verdict holds -> fails" in out
    assert "effective epsilon: 1.0 -> 1.3 (weaker)" in out and "2 passed, 1 failed" in out
    xml = (repo / "junit.xml").read_text()
    assert 'tests="3" failures="1" errors="0"' in xml and 'type="privacy-regression"' in xml


def test_without_a_baseline_a_refuted_claim_fails(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", str(repo / "specs" / "census-2020-persons.toml")]) == 1
    assert "verdict fails (no baseline entry" in capsys.readouterr().out
    assert main(["check", str(repo / "specs" / "census-2020-total.toml")]) == 0


def test_bad_invocations_exit_2(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", str(repo / "specs"), "--update-baseline"]) == 2
    (repo / "bad.json").write_text("[1, 2]")
    assert main(["check", str(repo / "specs"), "--baseline", str(repo / "bad.json")]) == 2
    (repo / "specs" / "broken.toml").write_text('version = 1\nname = "x"\n[mechanism]\nkind = "nope"\n')
    assert main(["check", str(repo / "specs" / "broken.toml")]) == 2
    err = capsys.readouterr().err
    assert "--update-baseline needs --baseline" in err and "expected {'version': 1" in err


def test_compare_finds_every_kind_of_regression() -> None:
    before = {
        "verdict": "holds",
        "checks": {"claim": "pass", "a": "pass"},
        "semi_adjacent_parameter": {"value": 2},
        "effective": {"params": {"zcdp": 1.0}, "epsilon_delta": {"delta=1e-10;cks": 5.0}},
    }
    same = compare("s", before, before)
    assert not same.regressed and not same.improvements
    after = {
        "verdict": "inconclusive",
        "checks": {"claim": "skip"},
        "semi_adjacent_parameter": {"value": 3},
        "effective": {"params": {"zcdp": 1.0 + 1e-6}, "epsilon_delta": {"delta=1e-10;cks": None}},
    }
    got = compare("s", before, after).regressions
    assert got == [
        "verdict holds -> inconclusive",
        "check 'claim': pass -> skip",
        "check 'a' passed and is no longer reported",
        "a(t): 2.0 -> 3.0 (weaker)",
        "effective zcdp: 1.0 -> 1.000001 (weaker)",
        "effective delta=1e-10;cks: 5.0 -> None (no finite value)",
    ]
    better = compare("s", before, {**before, "effective": {"params": {"zcdp": 0.5}, "epsilon_delta": {}}})
    assert better.improvements == ["effective zcdp: 1.0 -> 0.5"] and not better.regressed
    assert not compare("s", before, {**before, "effective": {"params": {"zcdp": 1.0 + 1e-12}}}).regressed  # rtol


def test_summary_keeps_the_privacy_numbers() -> None:
    report = {
        "name": "x",
        "verdict": "holds",
        "checks": [{"name": "claim", "status": "pass"}],
        "semi_adjacent_parameter": {"value": 2, "lower": 2, "exact": True, "witness": "long text"},
        "effective": {"relation": "r", "zcdp": 2.5, "epsilon_delta": [{"delta": 1e-10, "epsilon": 7.0, "method": "m"}]},
    }
    s = summarize(report)
    assert s["effective"] == {"params": {"zcdp": 2.5}, "epsilon_delta": {"delta=1e-10;m": 7.0}}
    assert s["semi_adjacent_parameter"] == {"value": 2, "lower": 2, "exact": True}


def test_pytest_plugin_collects_specs_and_fails_on_a_regression(repo: Path) -> None:
    """``pytest specs/`` in a user's repository: one item per spec, failures read like test failures."""
    assert (
        main(
            [
                "check",
                str(repo / "specs"),
                "--baseline",
                str(repo / "privacy-baseline.json"),
                "--update-baseline",
                "--seed",
                "1",
            ]
        )
        == 0
    )
    cmd = [
        sys.executable,
        "-m",
        "pytest",
        "specs",
        "-p",
        "no:cacheprovider",
        "-q",
        "--semidp-baseline",
        "privacy-baseline.json",
        "--semidp-seed",
        "1",
    ]
    ok = subprocess.run(cmd, cwd=repo, capture_output=True, text=True)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert "3 passed" in ok.stdout
    _weaken(repo)
    bad = subprocess.run(cmd, cwd=repo, capture_output=True, text=True)
    assert bad.returncode == 1
    assert "1 failed, 2 passed" in bad.stdout
    assert "verdict holds -> fails" in bad.stdout and "[FAIL] claim:" in bad.stdout  # checks as sub-results


@pytest.mark.parametrize("name", ["census-2020-total", "census-2020-pl94-units-us", "release-mixed-components"])
def test_summary_of_the_typed_report_equals_the_summary_of_its_json(name: str) -> None:
    """Issue 23, item 3: ``semidp check`` summarises the typed report (its guarantees' forms and every entry, the
    PLD ones included), giving the same summary as the report's JSON file does."""
    from semidp.verify.load import load
    from semidp.verify.regression import summary_of
    from semidp.verify.runner import audit

    r = audit(load(str(SPECS / f"{name}.toml"))).typed
    typed = summary_of(r)
    assert typed == summarize(r.to_json())
    assert json.dumps(typed) == json.dumps(summarize(r.to_json()))  # same key order too
    assert typed["effective"]["epsilon_delta"]  # figures were read, not an empty summary
