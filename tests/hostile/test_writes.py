"""Writes that cannot lose a report (issue 21, Step 17.4).

Every report, sample, plot, baseline and JUnit file is written through :mod:`verify.atomic_write`
(temporary file in the same folder, fsync, rename): a failed write keeps the previous file and is exit 2
naming the path, a kill mid-write leaves the previous file valid, and two specs that would write the same
files are refused before any work is done.
"""

from __future__ import annotations

import errno
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from semidp.verify.atomic_write import WriteError, remove_stale_temporaries, write_text
from semidp.verify.cli import main

ROOT = Path(__file__).resolve().parents[2]
TOTAL = ROOT / "specs" / "census-2020-total.toml"


def _no_space(*args: object, **kwargs: object) -> None:
    raise OSError(errno.ENOSPC, "No space left on device")


def _hidden(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.startswith("."))


def test_a_failed_write_keeps_the_previous_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "r.json"
    write_text(target, '{"verdict": "holds"}\n')
    monkeypatch.setattr(os, "fsync", _no_space)  # the disk fills while the new file is written
    with pytest.raises(WriteError, match="No space left") as e:
        write_text(target, '{"verdict": "fails", "padding": "' + "x" * 10_000 + '"}\n', what="--out")
    assert str(target) in str(e.value) and "--out" in str(e.value)
    assert target.read_text() == '{"verdict": "holds"}\n'
    assert _hidden(tmp_path) == []  # the temporary file is gone


def test_a_failed_rename_keeps_the_previous_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "b.json"
    target.write_text("old\n")
    monkeypatch.setattr(os, "replace", _no_space)
    with pytest.raises(WriteError):
        write_text(target, "new\n")
    assert target.read_text() == "old\n" and _hidden(tmp_path) == []


def test_stale_temporaries_of_dead_writers_are_removed(tmp_path: Path) -> None:
    dead = subprocess.Popen(["true"])
    dead.wait()
    stale = tmp_path / f".b.json.semidp-{dead.pid}-0a1b2c3d.tmp.json"
    mine = tmp_path / f".b.json.semidp-{os.getpid()}-0a1b2c3d.tmp.json"
    stale.write_text("partial")
    mine.write_text("in progress")
    assert remove_stale_temporaries(tmp_path) == [stale]
    assert mine.exists() and not stale.exists()


def _check(tmp_path: Path, *extra: str) -> int:
    return main(["check", "--quiet", "--time-limit", "30", str(TOTAL), *extra])


def test_full_disk_during_update_baseline_keeps_the_baseline(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # was: written in place (a full disk truncates it)
    baseline = tmp_path / "baseline.json"
    old = '{"specs": {}, "tool": "semidp", "version": 1}\n'
    baseline.write_text(old)
    monkeypatch.setattr(os, "fsync", _no_space)
    assert _check(tmp_path, "--baseline", str(baseline), "--update-baseline") == 2
    err = capsys.readouterr().err
    assert "--baseline" in err and str(baseline) in err and "Traceback" not in err
    assert baseline.read_text() == old and _hidden(tmp_path) == []


@pytest.mark.parametrize("option", ["--baseline", "--junit"])
def test_unwritable_baseline_or_junit_is_exit_2_naming_the_path(
    option: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # was: a traceback and exit 1 (the regression code). Root ignores permissions: the parent is a file.
    (tmp_path / "file").write_text("not a folder")
    path = tmp_path / "file" / "out.xml"
    extra = [option, str(path)] + (["--update-baseline"] if option == "--baseline" else [])
    assert _check(tmp_path, *extra) == 2
    err = capsys.readouterr().err
    assert option in err and str(path) in err and "Traceback" not in err


def test_full_disk_during_out_keeps_the_previous_report(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # was: a full disk left truncated JSON that looked like a report, and a rerun destroyed the good one
    out = tmp_path / "out"
    assert main(["audit", "--quiet", "--time-limit", "30", "--out", str(out), str(TOTAL)]) == 0
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    assert "census-2020-total.json" in before
    monkeypatch.setattr(os, "fsync", _no_space)  # inherited by the forked audit
    assert main(["audit", "--quiet", "--time-limit", "30", "--out", str(out), str(TOTAL)]) == 2
    err = capsys.readouterr().err
    assert "--out" in err and "No space left" in err and "Traceback" not in err
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before
    json.loads(before["census-2020-total.json"])


def test_two_specs_with_one_name_into_one_out_are_refused_before_any_work(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # was: both ran, exit 1, and the JSON on disk (the last one written) said "holds"
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    text = TOTAL.read_text()
    (tmp_path / "a" / "s.toml").write_text(text)
    (tmp_path / "b" / "s.toml").write_text(text)
    out = tmp_path / "out"
    from semidp.verify import scaleout

    def no_work(*args: object, **kwargs: object) -> None:
        raise AssertionError("an audit started")

    monkeypatch.setattr(scaleout, "run_spec", no_work)
    args = ["audit", "--quiet", "--out", str(out), str(tmp_path / "a" / "s.toml"), str(tmp_path / "b" / "s.toml")]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "census-2020-total" in err and "same name" in err
    assert not out.exists()


DRIVER = """
import builtins, io, os, sys, time
from pathlib import Path

READY, TARGET = Path(sys.argv[1]), Path(sys.argv[2]).name
real_open = io.open


class Slow:
    def __init__(self, f):
        self._f = f

    def write(self, data):
        n = self._f.write(data[: len(data) // 2])
        self._f.flush()
        READY.write_text("writing")
        time.sleep(600)  # killed here, half written
        return n

    def __getattr__(self, name):
        return getattr(self._f, name)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return self._f.__exit__(*exc)


def slow_open(file, mode="r", *args, **kwargs):
    f = real_open(file, mode, *args, **kwargs)
    name = os.path.basename(os.fspath(file)) if isinstance(file, (str, os.PathLike)) else ""
    if "w" in mode and TARGET in name:  # the baseline itself, or a temporary file named after it
        return Slow(f)
    return f


io.open = builtins.open = slow_open
from semidp.verify.cli import main

main(sys.argv[3:])
"""


def test_sigkill_during_update_baseline_leaves_the_old_baseline(tmp_path: Path) -> None:
    # was: a SIGKILL during --update-baseline left a 0-byte baseline
    baseline = tmp_path / "baseline.json"
    old = '{"specs": {}, "tool": "semidp", "version": 1}\n'
    baseline.write_text(old)
    ready = tmp_path / "ready"
    (tmp_path / "driver.py").write_text(DRIVER)
    args = ["check", "--quiet", "--time-limit", "30", str(TOTAL), "--baseline", str(baseline), "--update-baseline"]
    p = subprocess.Popen(
        [sys.executable, str(tmp_path / "driver.py"), str(ready), str(baseline), *args],
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 240
        while not ready.exists() and p.poll() is None and time.monotonic() < deadline:
            time.sleep(0.1)
        assert ready.exists(), "the driver never reached the write"
        os.kill(p.pid, signal.SIGKILL)
        p.wait(30)
    finally:
        if p.poll() is None:
            p.kill()
    assert baseline.read_text() == old  # the previous baseline, whole
    assert json.loads(baseline.read_text())["version"] == 1
    assert len(_hidden(tmp_path)) == 1  # the dead writer's temporary file...
    write_text(tmp_path / "other.json", "{}\n")
    assert _hidden(tmp_path) == []  # ...is removed by the next write to the folder
