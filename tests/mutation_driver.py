"""``benchmarks/mutation.py`` loaded as a module for the tests of the mutation driver (issue Step 16)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[1]


def load_driver() -> ModuleType:
    """The driver script as a module (``benchmarks/`` is not a package), registered under its own name."""
    spec = importlib.util.spec_from_file_location("semidp_mutation_driver", ROOT / "benchmarks" / "mutation.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # dataclasses look their module up by name
    spec.loader.exec_module(mod)
    return mod
