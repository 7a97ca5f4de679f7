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
    for sub in ("accountant/guarantees.py", "mechanisms/protocol.py", "verify/kinds/published.py", "py.typed"):
        assert f"semidp/{sub}" in names
