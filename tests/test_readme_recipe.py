"""The README's CI recipe, as written in the README, on a copy of this repository's ``specs/`` (issue Step 18.2).

The commands are read out of README.md's *Privacy regression tests in CI* section (the ``bash`` blocks and
the YAML job's ``semidp check`` line), so the test breaks when the README drifts from what works. The fast
test runs them on a few specs (one that imports code, one that holds, one whose claim is refuted and
recorded as a known failure); the slow one on every shipped spec.
"""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from semidp.verify.cli import main

ROOT = Path(__file__).resolve().parents[1]
FEW = ("implementation-gaussian-3x3.toml", "census-2020-total.toml", "census-2020-persons.toml")


def recipe() -> list[list[str]]:
    """The recipe's commands, in README order, each split as a shell would (comments dropped)."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("## Privacy regression tests in CI", 1)[1].split("\n## ", 1)[0]
    lines = [ln for block in re.findall(r"```bash\n(.*?)```", section, flags=re.S) for ln in block.splitlines()]
    lines += [ln.strip()[2:] for ln in section.splitlines() if ln.strip().startswith("- semidp check")]
    return [shlex.split(ln, comments=True) for ln in lines if ln.strip()]


def test_the_recipe_is_where_the_test_reads_it() -> None:
    cmds = recipe()
    heads = [c[:2] for c in cmds]
    assert heads == [["semidp", "check"], ["semidp", "check"], ["pytest", "specs/"], ["semidp", "check"]], cmds
    assert "--update-baseline" in cmds[0] and "--junit" in cmds[1] and "--junit" in cmds[3]


def _run(cmd: list[str], cwd: Path) -> tuple[int, str]:
    """One recipe command in ``cwd``: ``semidp ...`` through the CLI's main, ``pytest ...`` as a process."""
    if cmd[0] == "semidp":
        return main(cmd[1:]), ""
    assert cmd[0] == "pytest"
    got = subprocess.run(
        [sys.executable, "-m", "pytest", *cmd[1:], "-p", "no:cacheprovider"], cwd=cwd, capture_output=True, text=True
    )
    return got.returncode, got.stdout + got.stderr


def _recipe_on(specs: list[Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, str]]:
    (tmp_path / "specs").mkdir()
    for p in specs:
        shutil.copy(p, tmp_path / "specs" / p.name)
    monkeypatch.chdir(tmp_path)
    out = []
    for cmd in recipe():
        out.append(_run(cmd, tmp_path))
        if cmd[0] == "semidp" and "--update-baseline" in cmd:
            assert (tmp_path / "privacy-baseline.json").is_file()
    return out


def test_the_readme_recipe_passes_on_shipped_specs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    got = _recipe_on([ROOT / "specs" / n for n in FEW], tmp_path, monkeypatch)
    assert [rc for rc, _ in got] == [0, 0, 0, 0], got
    assert "3 passed" in got[2][1]
    xml = (tmp_path / "privacy.xml").read_text()
    assert 'tests="3" failures="0" errors="0"' in xml
    out = capsys.readouterr().out
    assert "[PASS] specs/census-2020-persons.toml: fails; no regression" in out  # a known failure, recorded


@pytest.mark.slow
def test_the_readme_recipe_passes_on_every_shipped_spec(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    files = sorted((ROOT / "specs").glob("*.toml")) + sorted((ROOT / "specs").glob("*.csv"))  # csv: measurements
    files = [f for f in files if not f.stem.startswith("audit-")]  # real libraries (audit-peers extra, own tests)
    got = _recipe_on(files, tmp_path, monkeypatch)
    assert [rc for rc, _ in got] == [0] * len(got), got


def test_without_allow_code_the_message_names_the_option_of_the_interface(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "specs").mkdir()
    shutil.copy(ROOT / "specs" / FEW[0], tmp_path / "specs" / FEW[0])
    monkeypatch.chdir(tmp_path)
    assert main(["check", "specs/"]) == 2
    out = capsys.readouterr().out
    assert "rerun with --allow-code" in out and "--semidp-allow-code" not in out
    rc, text = _run(["pytest", "specs/"], tmp_path)
    assert rc == 1 and "rerun with --semidp-allow-code" in text, text
    assert re.search(r"(?<![\w-])--allow-code", text) is None, text
