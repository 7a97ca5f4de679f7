"""The accountant's module names before issue 23's item 6, kept importable as aliases of the new modules.

``semidp.accountant.<old>`` resolves to the very module object at its new path (``sys.modules`` holds one module
under both names), so monkeypatching through an old name patches the new module. Importing an old name warns
(:class:`DeprecationWarning`) once per process and name. The old names that are now package names (``pld``,
``guarantees``, ``lattice``, ``sensitivity``) are not aliases: those packages re-export the old modules'
public names (see their docstrings). This file is generated from the move's map; edit the map, not this file.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
import types
import warnings
from collections.abc import Sequence

#: old module name (under ``semidp.accountant``) -> its new dotted name under ``semidp.accountant``
OLD_NAMES: dict[str, str] = {
    "arguments": "core.arguments",
    "budget": "core.budget",
    "callable_invariant": "data.callable_invariant",
    "claim_certificate": "guarantees.claim_certificate",
    "composition": "guarantees.composition",
    "containing_ball": "geometry.containing_ball",
    "conversion_routes": "guarantees.conversion_routes",
    "conversions": "guarantees.conversions",
    "dataspace": "data.dataspace",
    "design": "workloads.design",
    "design_allocation": "workloads.allocation",
    "directed": "core.directed",
    "discrete_gaussian_dp": "profiles.discrete_gaussian_dp",
    "errors": "core.errors",
    "exact_matrices": "data.exact_matrices",
    "face_fan": "geometry.face_fan",
    "fiber": "combinatorics.fiber",
    "gaussian": "profiles.gaussian",
    "integer_matrix": "lattice.integer_matrix",
    "invariants": "data.invariants",
    "kernel_moves": "sensitivity.kernel_moves",
    "knorm": "geometry.knorm",
    "knorm_cache": "geometry.knorm_cache",
    "knorm_certificates": "geometry.knorm_certificates",
    "knorm_verify": "geometry.knorm_verify",
    "lattice_split": "lattice.split",
    "lp_balls": "geometry.lp_balls",
    "outcome": "core.outcome",
    "piecewise_linear": "profiles.piecewise_linear",
    "pld_closed_forms": "pld.closed_forms",
    "pld_engine": "pld.engine",
    "pld_parts": "pld.parts",
    "pld_refine": "pld.refine",
    "progress": "core.progress",
    "record_multisets": "combinatorics.record_multisets",
    "relations": "guarantees.relations",
    "release": "releases.model",
    "release_accounting": "releases.accounting",
    "release_design": "releases.design",
    "root_polytope": "geometry.root_polytope",
    "semiadjacent": "combinatorics.semiadjacent",
    "semiadjacent_brute_force": "combinatorics.semiadjacent_brute_force",
    "semiadjacent_graph": "combinatorics.semiadjacent_graph",
    "semiadjacent_ilp": "combinatorics.semiadjacent_ilp",
    "semiadjacent_results": "combinatorics.semiadjacent_results",
    "semiadjacent_search": "combinatorics.semiadjacent_search",
    "semidp": "guarantees.semidp",
    "sensitivity_comparisons": "sensitivity.comparisons",
    "sensitivity_realise": "sensitivity.realise",
    "sensitivity_results": "sensitivity.results",
    "sensitivity_search": "sensitivity.search",
    "span_coordinates": "geometry.span_coordinates",
    "symmetric_fan": "geometry.symmetric_fan",
    "table_space_norms": "geometry.table_space_norms",
    "table_symmetry": "geometry.table_symmetry",
    "tradeoff": "profiles.tradeoff",
    "workload": "workloads.accounting",
}

PACKAGE = "semidp.accountant"


class _AliasLoader(importlib.abc.Loader):
    """Hands the module at the new name to the import system and keeps that module's own spec."""

    def __init__(self, target: str) -> None:
        self.target = target
        self.spec: importlib.machinery.ModuleSpec | None = None

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        module = importlib.import_module(self.target)
        self.spec = module.__spec__
        return module

    def exec_module(self, module: types.ModuleType) -> None:
        module.__spec__ = self.spec  # the import system set the alias's spec; the module keeps its own


class OldNameFinder(importlib.abc.MetaPathFinder):
    """Finds ``semidp.accountant.<old>`` for every old name of :data:`OLD_NAMES` (a meta-path finder, PEP 451)."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: types.ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        """A spec that aliases the new module, or None for any other name."""
        prefix, _, leaf = fullname.rpartition(".")
        if prefix != PACKAGE or leaf not in OLD_NAMES:
            return None
        new = f"{PACKAGE}.{OLD_NAMES[leaf]}"
        warnings.warn(f"{fullname} moved to {new}; import {new}", DeprecationWarning, stacklevel=2)
        return importlib.machinery.ModuleSpec(fullname, _AliasLoader(new))


def install() -> None:
    """Append the finder to :data:`sys.meta_path` once (the real modules are found first)."""
    if not any(isinstance(f, OldNameFinder) for f in sys.meta_path):
        sys.meta_path.append(OldNameFinder())


__all__ = ["OLD_NAMES", "OldNameFinder", "install"]
