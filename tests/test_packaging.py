"""Packaging: one top-level package ``semidp``, the console script, and the public API resolving."""

from __future__ import annotations

import importlib
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_layers_are_subpackages_of_semidp_from_this_checkout() -> None:
    for name in ("accountant", "mechanisms", "verify"):
        mod = importlib.import_module(f"semidp.{name}")
        assert Path(mod.__file__).resolve().parent == (ROOT / name).resolve(), f"semidp.{name} is {mod.__file__}"
        assert (ROOT / name / "py.typed").exists()


def test_console_script_installed() -> None:
    here = Path(sys.executable).parent  # pip puts console scripts beside the interpreter
    assert shutil.which("semidp", path=str(here)) or shutil.which("semidp"), (
        "pip install -e '.[test]' installs the semidp command"
    )


def test_public_api_exports_resolve() -> None:
    for name in ("semidp", "semidp.accountant", "semidp.mechanisms", "semidp.verify"):
        mod = importlib.import_module(name)
        for attr in getattr(mod, "__all__", []):
            assert hasattr(mod, attr), f"{name}.__all__ lists missing {attr!r}"


def test_import_semidp_exposes_the_main_api() -> None:
    import semidp

    assert semidp.audit(semidp.load(ROOT / "specs" / "census-2020-total.toml")).verdict == "holds"
    assert semidp.ZCDP(2.56).group(2).rho == 10.24


@pytest.mark.slow
def test_wheel_installs_only_semidp_at_the_top_level(tmp_path: Path) -> None:
    """PyPI has distributions named accountant and verify: the wheel must not put those names at the top."""
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp_path), str(ROOT)],
        check=True,
        capture_output=True,
    )
    wheel = next(tmp_path.glob("semidp-*.whl"))
    tops = {n.split("/")[0] for n in zipfile.ZipFile(wheel).namelist()}
    assert {t for t in tops if not t.endswith(".dist-info")} == {"semidp"}
    names = zipfile.ZipFile(wheel).namelist()
    for sub in (
        "accountant/guarantees/definitions.py",
        "mechanisms/protocol.py",
        "verify/kinds/published.py",
        "py.typed",
    ):
        assert f"semidp/{sub}" in names
    # the contract that `semidp audit --help` points to ships as a file, not as a dangling link
    shipped = zipfile.ZipFile(wheel).read("semidp/verify/contract.md").decode()
    assert shipped == (ROOT / "specs" / "README.md").read_text(encoding="utf-8")


def test_the_contract_is_installed_and_help_points_to_it(capsys: pytest.CaptureFixture[str]) -> None:
    from semidp.verify.cli import main
    from semidp.verify.contract import contract_path, contract_text

    assert contract_text() == (ROOT / "specs" / "README.md").read_text(encoding="utf-8")
    assert contract_path().name == "contract.md" and contract_path().is_file()
    assert main(["contract"]) == 0
    assert capsys.readouterr().out.startswith("# Spec files and audit reports (contract v1)\n")
    assert main(["contract", "--path"]) == 0
    assert capsys.readouterr().out.strip() == str(contract_path())
    for cmd in ("audit", "check"):
        with pytest.raises(SystemExit):
            main([cmd, "--help"])
        text = " ".join(capsys.readouterr().out.split())
        assert "`semidp contract` prints them" in text and "specs/README.md" not in text


def test_a_closed_pipe_is_not_a_traceback() -> None:
    # `semidp contract | head -1`: the reader leaves early; the rest of the write is not an error (`true` leaves
    # before semidp has even started, so the write always meets a closed pipe)
    import subprocess
    import sys

    cmd = f"{sys.executable} -c 'from semidp.entry import main; raise SystemExit(main())' contract | true"
    out = subprocess.run(["bash", "-c", cmd], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert "Traceback" not in out.stderr and "BrokenPipe" not in out.stderr, out.stderr
    assert out.returncode == 0
