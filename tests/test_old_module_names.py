"""The accountant's module names from before the subpackages stay importable (issue 23, item 6).

h54-move: keep old names -- this file names the old modules on purpose; the move script leaves it alone.
"""

from __future__ import annotations

import importlib
import re
import sys
from pathlib import Path

import pytest

import semidp.accountant as accountant
from semidp.accountant.old_names import OLD_NAMES, OldNameFinder

ROOT = Path(__file__).resolve().parents[1]

#: The public names of the four modules whose names are now package names, as they were before the move.
REPLACED = {
    "pld": ("pld.grid", ["DEFAULT_GRID", "DEFAULT_N_EPS", "LossAtoms", "compose", "epsilon", "loss_atoms", "profile"]),
    "guarantees": (
        "guarantees.definitions",
        ["PureDP", "ApproxDP", "GDP", "ZCDP", "RDP", "TradeOff", "Guarantee", "with_relation"],
    ),
    "sensitivity": (
        "sensitivity.spaces",
        [
            "SensitivitySpace",
            "exact_rank",
            "table_moves",
            "table_three_cycles",
            "TABLE_SPACE_LIMIT",
            "table_space",
            "histogram_space",
            "group_inflated",
            "table_projector_kron",
        ],
    ),
    "lattice": (
        "lattice.kernel",
        [
            "GRAM_DIRECT_LIMIT",
            "MAX_CELLS_BLOCK",
            "MAX_CELLS_EXACT",
            "MAX_CELLS_SNF",
            "MAX_LLL_DIMENSION",
            "LatticeBasis",
            "LatticeCertificate",
            "basic_move_basis",
            "basis_for",
            "basis_from_columns",
            "certify",
            "counting_matrix",
            "kernel_lattice_basis",
            "table_margins_matrix",
            "tail_constant",
            "total_matrix",
        ],
    ),
}


def _import_old(old: str) -> object:
    """Import ``semidp.accountant.<old>`` afresh (as a first import would), expecting the deprecation warning."""
    sys.modules.pop(f"semidp.accountant.{old}", None)
    with pytest.warns(
        DeprecationWarning, match=rf"semidp\.accountant\.{old} moved to semidp\.accountant\.{re.escape(OLD_NAMES[old])}"
    ):
        return importlib.import_module(f"semidp.accountant.{old}")


def test_the_map_covers_every_module_that_moved() -> None:
    """61 flat modules moved (58, then the three release modules of the same session): 57 are aliases, 4 became
    packages; every alias points at a module that exists."""
    assert len(OLD_NAMES) == 57
    assert set(OLD_NAMES).isdisjoint(REPLACED)
    for new in OLD_NAMES.values():
        assert (ROOT / "accountant" / (new.replace(".", "/") + ".py")).is_file(), new
    assert [old for old in OLD_NAMES if (ROOT / "accountant" / f"{old}.py").exists()] == []


@pytest.mark.parametrize("old", sorted(OLD_NAMES))
def test_an_old_name_is_the_new_module(old: str) -> None:
    """One identity: the old name and the new name are the same module object, which keeps its own name."""
    module = _import_old(old)
    new = importlib.import_module(f"semidp.accountant.{OLD_NAMES[old]}")
    assert module is new
    assert new.__name__ == new.__spec__.name == f"semidp.accountant.{OLD_NAMES[old]}"
    assert sys.modules[f"semidp.accountant.{old}"] is new


def test_patching_through_an_old_name_reaches_the_new_module(monkeypatch: pytest.MonkeyPatch) -> None:
    """Monkeypatching ``semidp.accountant.pld_engine`` patches what ``compose_plds`` reads at run time."""
    from semidp.accountant.pld import engine

    old = _import_old("pld_engine")
    monkeypatch.setattr(old, "DEFAULT_POINTS", 17)
    assert engine.DEFAULT_POINTS == 17
    sys.modules.pop("semidp.accountant.knorm_cache", None)
    vars(accountant).pop("knorm_cache", None)  # as before any import of the old name
    with pytest.warns(DeprecationWarning, match="knorm_cache moved"):  # a dotted string, as tests patch
        monkeypatch.setattr("semidp.accountant.knorm_cache.CACHE_ENV", "SEMIDP_TEST_CACHE")
    from semidp.accountant.geometry import knorm_cache

    assert knorm_cache.CACHE_ENV == "SEMIDP_TEST_CACHE"


def test_an_old_name_as_an_attribute_of_the_package() -> None:
    sys.modules.pop("semidp.accountant.knorm", None)
    vars(accountant).pop("knorm", None)
    with pytest.warns(DeprecationWarning, match="semidp.accountant.knorm moved"):
        knorm = accountant.knorm
    from semidp.accountant.geometry import knorm as new

    assert knorm is new
    with pytest.raises(AttributeError, match="no attribute 'not_a_module'"):
        accountant.not_a_module  # noqa: B018


@pytest.mark.parametrize("old", sorted(REPLACED))
def test_a_replaced_module_name_reexports_its_names(old: str) -> None:
    """``semidp.accountant.pld`` (and the three others) is a package now; its old module's names are the same
    objects as in the module that holds them."""
    new, names = REPLACED[old]
    package = importlib.import_module(f"semidp.accountant.{old}")
    module = importlib.import_module(f"semidp.accountant.{new}")
    assert [n for n in names if getattr(package, n, None) is not getattr(module, n)] == []
    assert set(names) <= set(package.__all__)


def test_the_package_exports_stay() -> None:
    """Everything exported from ``semidp.accountant`` before the move is still there (and resolves)."""
    assert len(accountant.__all__) == 80
    assert [n for n in accountant.__all__ if not hasattr(accountant, n)] == []


def test_the_wheel_lists_every_subpackage() -> None:
    """setuptools installs the packages pyproject.toml lists: every accountant subpackage is among them."""
    import tomllib

    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]["packages"])
    subpackages = {f"semidp.accountant.{p.parent.name}" for p in (ROOT / "accountant").glob("*/__init__.py")}
    assert len(subpackages) == 11
    assert subpackages <= listed


def test_cached_balls_keep_their_keys() -> None:
    """The on-disk K-norm cache names a ball by a hash that includes its builder's name: the move keeps the
    name, so balls cached before it are found again (the key of the 3 x 3 table as computed before the move)."""
    from semidp.accountant.geometry.knorm_cache import cache_key
    from semidp.accountant.sensitivity.spaces import table_space

    assert cache_key(table_space(3, 3)) == "f4fc71bdaeafc1912710dec7f25839688ca5cbe24836de63162743e3345e24f3"


def test_the_finder_ignores_other_names() -> None:
    finder = OldNameFinder()
    assert finder.find_spec("semidp.accountant.pld.engine", None) is None
    assert finder.find_spec("semidp.verify.knorm", None) is None
    assert finder.find_spec("semidp.accountant.no_such_module", None) is None
    assert sum(isinstance(f, OldNameFinder) for f in sys.meta_path) == 1


OLD_REFERENCE = re.compile(
    r"(?<![\w.])(?:semidp\.)?accountant\.(" + "|".join(sorted(OLD_NAMES, key=len, reverse=True)) + r")(?!\w)"
    r"|(?<![\w.])accountant/(" + "|".join(sorted([*OLD_NAMES, *REPLACED], key=len, reverse=True)) + r")\.py\b"
)


def test_the_repository_uses_only_the_new_names() -> None:
    """No source, test, benchmark, spec or document names an old module (pytest turns the alias's warning into
    an error, and a path like ``accountant/pld_parts.py`` would not exist). After a merge that brings old names
    back, run the move script again (see accountant/old_names.py)."""
    bad = []
    for folder in ("accountant", "mechanisms", "verify", "tests", "benchmarks", "specs", "docs", "semidp"):
        for path in sorted((ROOT / folder).rglob("*")):
            if path.is_symlink() or not path.is_file() or path.suffix not in {".py", ".md", ".toml", ".json"}:
                continue
            if any(p.is_symlink() for p in path.relative_to(ROOT).parents if p != Path(".")):
                continue
            text = path.read_text(encoding="utf-8", errors="replace")
            if "h54-move: keep old names" in text or path.name == "old_names.py":
                continue
            bad += [f"{path.relative_to(ROOT)}: {m.group(0)}" for m in OLD_REFERENCE.finditer(text)]
    for name in ("README.md", "pyproject.toml"):
        bad += [f"{name}: {m.group(0)}" for m in OLD_REFERENCE.finditer((ROOT / name).read_text(encoding="utf-8"))]
    assert bad == []
