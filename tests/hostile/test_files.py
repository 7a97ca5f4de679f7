"""Hostile specs naming files: every file key resolves inside the spec's folder, is a regular file, is size-capped,
and no error echoes its content (issue Step 17, deliverable 2; contract: specs/README.md, "Files a spec names").

Each case runs the CLI as CI would and asserts the exit code (2: invalid spec, naming the key), that the
refusal is immediate (exit 2, never the hard stop's 3), and that a secret planted in the file appears in
neither stdout, stderr nor the ``--junit`` file.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from semidp.verify import spec_files
from semidp.verify.cli import main
from semidp.verify.spec_files import SpecFileRefused, files_root, read_bytes

ROOT = Path(__file__).resolve().parents[2]
UNITS_SPEC = ROOT / "specs" / "census-2020-pl94-units-us.toml"
UNITS_CSV = ROOT / "specs" / "census-2020-pl94-units-us.csv"
SECRET = "hunter2-SECRET-5f1c9a"
KEY = "mechanism.measurements"


def _workload(folder: Path, measurements: str) -> Path:
    """The shipped units workload spec in ``folder``, its measurements key set to ``measurements``."""
    folder.mkdir(parents=True, exist_ok=True)
    text = UNITS_SPEC.read_text().replace('"census-2020-pl94-units-us.csv"', repr(measurements).replace("'", '"'))
    spec = folder / "spec.toml"
    spec.write_text(text)
    return spec


def _cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main([*argv, "--quiet"])
    return code, out.getvalue(), err.getvalue()


def _check_with_junit(spec: Path, junit: Path, *extra: str) -> tuple[int, str]:
    """``semidp check SPEC --junit FILE`` in a subprocess (what CI runs): exit code and stdout + stderr + junit."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "SEMIDP_TEST_SECRET": SECRET}
    got = subprocess.run(
        [sys.executable, "-m", "semidp.verify.cli", "check", str(spec), "--junit", str(junit), "--quiet", *extra],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    text = got.stdout + got.stderr + (junit.read_text() if junit.exists() else "")
    return got.returncode, text


def test_an_absolute_path_is_refused_naming_the_key(tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere" / "m.csv"
    outside.parent.mkdir()
    outside.write_text(f"geolevel,query,rho\n{SECRET},detailed,1/2\n")
    spec = _workload(tmp_path / "spec", str(outside))
    code, out, err = _cli("audit", str(spec))
    assert code == 2
    assert f"{KEY}: file " in err and "absolute path" in err and "--files-root" in err
    assert SECRET not in out + err


def test_a_dotdot_escape_is_refused_and_its_first_line_not_printed(tmp_path: Path) -> None:
    (tmp_path / "secret.csv").write_text(f"{SECRET},x,y\n")
    spec = _workload(tmp_path / "spec", "../secret.csv")
    code, out, err = _cli("audit", str(spec))
    assert code == 2 and f"{KEY}: file '../secret.csv': resolves outside the spec's folder" in err
    assert SECRET not in out + err


def test_etc_passwd_through_dotdots_is_refused_unread(tmp_path: Path) -> None:
    spec = _workload(tmp_path / "spec", "../" * 30 + "etc/passwd")
    code, out, err = _cli("audit", str(spec))
    assert code == 2 and "resolves outside the spec's folder" in err
    assert "root:" not in out + err


def test_a_symlink_out_of_the_folder_is_refused_and_one_inside_is_followed(tmp_path: Path) -> None:
    (tmp_path / "secret.csv").write_text(f"{SECRET},x,y\n")
    folder = tmp_path / "spec"
    spec = _workload(folder, "link.csv")
    (folder / "link.csv").symlink_to(tmp_path / "secret.csv")
    code, out, err = _cli("audit", str(spec))
    assert code == 2 and "resolves outside the spec's folder" in err
    assert SECRET not in out + err
    # a symlink whose target lies inside the folder is read like the target
    (folder / "link.csv").unlink()
    (folder / "data").mkdir()
    (folder / "data" / "m.csv").write_text(UNITS_CSV.read_text())
    (folder / "link.csv").symlink_to(folder / "data" / "m.csv")
    code, out, err = _cli("audit", str(spec), "--json", "--time-limit", "60")
    assert code != 2, err  # audited (exit 1: the certificate's 2.47 is refuted for Semi-DP), not refused
    assert json.loads(out)["workload"]["count"] == 6


def test_files_root_names_a_wider_allowed_folder(tmp_path: Path) -> None:
    (tmp_path / "shared").mkdir()
    (tmp_path / "shared" / "m.csv").write_text(UNITS_CSV.read_text())
    spec = _workload(tmp_path / "specs", "../shared/m.csv")
    code, _, err = _cli("audit", str(spec))
    assert code == 2 and "resolves outside the spec's folder" in err
    code, _, err = _cli("audit", str(spec), "--files-root", str(tmp_path))
    assert code != 2, err
    # an absolute path is allowed inside the root, refused outside it
    spec = _workload(tmp_path / "specs", str(tmp_path / "shared" / "m.csv"))
    assert _cli("audit", str(spec), "--files-root", str(tmp_path))[0] != 2
    code, _, err = _cli("audit", str(spec), "--files-root", str(tmp_path / "specs"))
    assert code == 2 and "resolves outside the --files-root folder" in err


def test_proc_self_environ_is_never_read_nor_echoed_to_stdout_stderr_or_junit(tmp_path: Path) -> None:
    """The probe's worst file case: the whole environment (secrets included) went to stdout and into --junit."""
    spec = _workload(tmp_path / "spec", "/proc/self/environ")
    code, text = _check_with_junit(spec, tmp_path / "j1.xml")
    assert code == 2 and KEY in text and "absolute path" in text
    assert SECRET not in text
    # even with / as the allowed root, /proc, /sys and /dev are never read
    code, text = _check_with_junit(spec, tmp_path / "j2.xml", "--files-root", "/")
    assert code == 2 and "/proc, /sys or /dev is never read" in text
    assert SECRET not in text


def test_a_cell_is_shown_only_as_a_short_escaped_excerpt(tmp_path: Path) -> None:
    """A file inside the folder whose cells hold a secret past their first 40 characters, and terminal escapes."""
    folder = tmp_path / "spec"
    spec = _workload(folder, "m.csv")
    pad = "x" * 40
    rows = [
        f"geolevel,query,rho,{pad}{SECRET}",  # an unknown column
        f"{pad}{SECRET},detailed,1/2,0",  # a geolevel
        f"US,{pad}{SECRET},1/2,0",  # a query
        f"State,detailed,{pad}{SECRET},0",  # a value
        "County,detailed,\x1b[2J\x1b]0;pwned\x07,0",  # terminal control sequences
    ]
    (folder / "m.csv").write_text("\n".join(rows) + "\n")
    code, text = _check_with_junit(spec, tmp_path / "j.xml")
    assert code == 2 and KEY in text
    assert SECRET not in text and "\x1b" not in text and "\x07" not in text
    # the table form reads the same file: its unnamed column is ignored, the cells still excerpted
    table = '{ file = "m.csv", columns = { rho = "rho" } }'
    (folder / "spec.toml").write_text(UNITS_SPEC.read_text().replace('"census-2020-pl94-units-us.csv"', table))
    code, text = _check_with_junit(folder / "spec.toml", tmp_path / "j2.xml")
    assert code == 2 and "line 2, column 'geolevel'" in text
    assert SECRET not in text and "\x1b" not in text


def test_a_fifo_is_refused_without_waiting_for_a_writer(tmp_path: Path) -> None:
    """Opening a FIFO for reading blocks until a writer comes: the old reader hung until the hard stop."""
    folder = tmp_path / "spec"
    spec = _workload(folder, "m.csv")
    os.mkfifo(folder / "m.csv")
    t0 = time.monotonic()
    code, _, err = _cli("audit", str(spec), "--time-limit", "30")
    elapsed = time.monotonic() - t0
    assert code == 2, err  # refused; a hang ends at the hard stop with exit 3
    assert "not a regular file (a FIFO)" in err
    assert elapsed < 30  # far inside the budget (a hang would take the whole 30 s + grace)
    # a FIFO named as the spec itself (semidp check on a folder from a pull request) is refused too
    os.mkfifo(tmp_path / "fifo.toml")
    code, _, err = _cli("audit", str(tmp_path / "fifo.toml"), "--time-limit", "30")
    assert code == 2 and "not a regular file (a FIFO)" in err


def test_a_directory_and_a_device_are_refused(tmp_path: Path) -> None:
    folder = tmp_path / "spec"
    spec = _workload(folder, "m.csv")
    (folder / "m.csv").mkdir()
    code, _, err = _cli("audit", str(spec))
    assert code == 2 and "not a regular file (a directory)" in err
    (folder / "m.csv").rmdir()
    (folder / "m.csv").symlink_to("/dev/zero")  # out of the folder, and a device
    with files_root("/"), pytest.raises(SpecFileRefused, match="never read"):
        read_bytes(str(spec), KEY, "m.csv")


def test_the_size_cap_is_checked_before_reading(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "spec"
    spec = _workload(folder, "m.csv")
    big = folder / "m.csv"
    with big.open("wb") as f:  # sparse: 1 byte past the cap, no disk used
        f.truncate(spec_files.MAX_FILE_BYTES + 1)
    with pytest.raises(SpecFileRefused, match=r"268435457 bytes; the limit is 268435456 bytes"):
        read_bytes(str(spec), KEY, "m.csv")
    monkeypatch.setattr(spec_files, "MAX_FILE_BYTES", 3000)  # the CLI reads the module's cap (forked child too)
    big.write_text(UNITS_CSV.read_text() + "# padding\n" * 400)  # the spec (2 kB) fits, the file (6 kB) does not
    code, _, err = _cli("audit", str(spec))
    assert code == 2 and f"{KEY}: file 'm.csv': " in err and "the limit is 3000 bytes" in err


def test_recorded_samples_are_confined_too(tmp_path: Path) -> None:
    """``mechanism.pairs[i].samples.x``: the same reader (a .npy outside the folder is never opened)."""
    np.save(tmp_path / "outside.npy", np.zeros((10, 9)))
    folder = tmp_path / "spec"
    folder.mkdir()
    x, xp = [1, 1, 0, 0, 0, 1, 1, 0, 0], [0, 1, 1, 1, 0, 0, 1, 0, 0]  # a 3-cycle apart: same margins
    text = (ROOT / "specs" / "implementation-gaussian-3x3.toml").read_text()
    text = text.replace('callable = "semidp.mechanisms.examples:gaussian_release"\n', "")
    text = text.replace(
        "draws = 50000",
        f'pairs = [{{ x = {x}, x_prime = {xp}, samples = {{ x = "../outside.npy", x_prime = "xp.npy" }} }}]',
    )
    (folder / "s.toml").write_text(text)
    np.save(folder / "xp.npy", np.zeros((10, 9)))
    code, _, err = _cli("audit", str(folder / "s.toml"))
    assert code == 2 and "mechanism.pairs[0].samples.x = '../outside.npy': resolves outside" in err
    (folder / "x.npy").write_bytes(b"not an npy " + SECRET.encode())
    (folder / "s.toml").write_text(text.replace("../outside.npy", "x.npy"))
    code, out, err = _cli("audit", str(folder / "s.toml"))
    assert code == 2 and "mechanism.pairs[0].samples.x = 'x.npy': not a readable .npy array" in err
    assert SECRET not in out + err


def test_a_symlinked_intermediate_folder_out_of_the_spec_folder_is_refused(tmp_path: Path) -> None:
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "m.csv").write_text(f"{SECRET},x,y\n")
    folder = tmp_path / "spec"
    spec = _workload(folder, "sub/m.csv")
    (folder / "sub").symlink_to(tmp_path / "outside", target_is_directory=True)
    with pytest.raises(SpecFileRefused, match="resolves outside the spec's folder"):
        read_bytes(str(spec), KEY, "sub/m.csv")
    code, out, err = _cli("audit", str(spec))
    assert code == 2 and "resolves outside the spec's folder" in err and SECRET not in out + err


@pytest.mark.parametrize("swapped", ["sub", "sub/deeper", "sub/deeper/m.csv"])
def test_a_component_swapped_for_a_symlink_after_the_check_is_not_followed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, swapped: str
) -> None:
    """The check-then-open race (TOCTOU): the path is checked inside the folder, then a folder (or the file) on
    it becomes a symlink out of the folder before the open. The open walks from the folder's descriptor with
    O_NOFOLLOW on every component, so the swapped component is refused, never followed to the secret."""
    outside = tmp_path / "outside"
    (outside / "deeper").mkdir(parents=True)
    (outside / "deeper" / "m.csv").write_text(f"{SECRET},x,y\n")
    (outside / "m.csv").write_text(f"{SECRET},x,y\n")
    folder = tmp_path / "spec"
    spec = _workload(folder, "sub/deeper/m.csv")
    (folder / "sub" / "deeper").mkdir(parents=True)
    (folder / "sub" / "deeper" / "m.csv").write_text("fine,x,y\n")
    assert read_bytes(str(spec), KEY, "sub/deeper/m.csv") == b"fine,x,y\n"
    checked = spec_files._confined

    def check_then_swap(spec_path: str, key: str, name: str) -> tuple[Path, Path]:
        got = checked(spec_path, key, name)  # the check passes on the honest tree ...
        victim = folder / swapped  # ... then the attacker swaps one component for a symlink out
        victim.rename(folder / "moved-away")
        victim.symlink_to(outside / Path(swapped).relative_to("sub") if swapped != "sub" else outside)
        return got

    monkeypatch.setattr(spec_files, "_confined", check_then_swap)
    with pytest.raises(SpecFileRefused, match="symlink or changed while reading") as e:
        read_bytes(str(spec), KEY, "sub/deeper/m.csv")
    assert SECRET not in str(e.value)
