"""Packaging: our generic top-level names resolve to this checkout, the console script exists."""

from __future__ import annotations

import importlib
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_packages_are_ours_not_shadowed() -> None:
    # accountant / mechanisms / verify are generic names (house style R15): make sure no other
    # installed distribution provides them.
    for name in ("accountant", "mechanisms", "verify"):
        mod = importlib.import_module(name)
        assert Path(mod.__file__).resolve().parent == ROOT / name, f"{name} is shadowed by {mod.__file__}"
        assert (ROOT / name / "py.typed").exists()


def test_console_script_installed() -> None:
    here = Path(sys.executable).parent  # pip puts console scripts beside the interpreter
    assert shutil.which("semidp", path=str(here)) or shutil.which("semidp"), (
        "pip install -e '.[test]' installs the semidp command"
    )


def test_public_api_exports_resolve() -> None:
    for name in ("accountant", "mechanisms", "verify"):
        mod = importlib.import_module(name)
        for attr in getattr(mod, "__all__", []):
            assert hasattr(mod, attr), f"{name}.__all__ lists missing {attr!r}"
