"""semidp.accountant: the guarantee algebra, data spaces, invariants and Semi-DP accounting.

Compatibility rule (kept from dp_accounting): guarantee, relation and invariant
types and their fields are never repurposed; new meanings get new types.

Public API
----------
Guarantees (frozen values, each with its relation): :class:`PureDP`,
:class:`ApproxDP`, :class:`GDP`, :class:`ZCDP`, :class:`RDP`, :class:`TradeOff`.
Relations: :class:`Replace`, :class:`AddRemove`, :class:`SemiAdjacent`.
Data: :class:`DataSpace`, :class:`Feature`; invariants :class:`NoInvariant`,
:class:`Total`, :class:`Margins`, :class:`Linear`, :class:`Counting`.
Conversions: :mod:`accountant.guarantees.conversions` (``<from>_to_<to>``).
Composition: :func:`compose`, :func:`compose_tradeoffs`, :func:`compose_as_zcdp`.
Semi-DP: :func:`semi_dp` (Prop. 15), :func:`semi_dp_composition` (Prop. 21),
:func:`joint_release_dp`, the semi-adjacent parameter :func:`closed_form`.
Exact a(t): :func:`semi_adjacent_parameter` (closed form or search, labelled).
Sensitivity spaces: :class:`SensitivitySpace`, :func:`table_space`, :func:`histogram_space`,
:func:`semi_sensitivity_search` (exact), :func:`naive_spaces`, :func:`compare_with_closed_form`.
K-norm balls: :class:`KNormBall`, :func:`exact_gauge`, :func:`containing_ball`, :func:`compare_lp_balls`,
:func:`cached_knorm_ball` (verified disk cache), :class:`RootPolytopeBall` (2 x c tables, closed form).
Integer kernel lattices [DGGY23, Prop. 8]: :func:`kernel_lattice_basis`, :func:`basis_for`,
:func:`certify`, :class:`LatticeBasis`, :func:`tail_constant`.
Discrete Gaussian privacy profile (CKS): :func:`discrete_gaussian_delta`, :func:`discrete_gaussian_epsilon`.
Errors: :class:`ToolkitError` and its subclasses.

Subpackages and their layers
----------------------------
The modules live in subpackages that name their concepts (issue 23, item 6). Each line names a subpackage and
the only other subpackages its modules may import (at module level or inside a function); the graph has no
cycle, and ``tests/test_architecture.py`` reads this table and enforces it.

- core: (none) -- errors, argument checks, budgets, progress, directed rounding, outcomes
- data: core -- data spaces, invariants, exact invariant matrices
- profiles: core -- Gaussian and discrete Gaussian profiles, piecewise-linear tradeoff curves
- pld: core, profiles -- the two PLD engines behind one façade (its docstring says which serves what)
- lattice: core, data -- integer kernel lattices and exact integer matrices
- guarantees: core, data, profiles, pld -- guarantee types, relations, conversions, composition, Semi-DP
- combinatorics: core, data, guarantees -- fibers and the semi-adjacent parameter a(t)
- sensitivity: core, data, combinatorics -- sensitivity spaces and their exact searches
- geometry: core, data, guarantees, sensitivity -- K-norm balls, their certificates, fans, symmetry
- workloads: core, pld -- workload accounting and design
- releases: core, data, pld, guarantees, combinatorics, workloads -- a release as data and its interpreters

Modules directly in this package (this ``__init__`` and :mod:`~semidp.accountant.old_names`) may import any
subpackage. The module names from before the subpackages (``pld_engine``, ``knorm`` ... directly under
``semidp.accountant``) stay importable as aliases of the new modules, with a
:class:`DeprecationWarning` (:mod:`~semidp.accountant.old_names`); ``pld``, ``guarantees``, ``lattice`` and
``sensitivity`` are now packages that re-export the names of the modules they replace.
"""

import importlib
from types import ModuleType

from semidp.accountant.combinatorics.semiadjacent import SemiAdjacentParameter, closed_form, semi_adjacent_parameter
from semidp.accountant.combinatorics.semiadjacent_results import SemiAdjacentResult, Witness
from semidp.accountant.core.errors import (
    BudgetExhausted,
    InvalidArgument,
    InvalidSpec,
    RelationMismatch,
    SearchTooLarge,
    ToolkitError,
    UnsupportedRelease,
    VerificationError,
)
from semidp.accountant.data.dataspace import DataSpace, Feature
from semidp.accountant.data.invariants import Counting, Invariant, Linear, Margins, NoInvariant, Total
from semidp.accountant.geometry.containing_ball import containing_ball
from semidp.accountant.geometry.knorm import KNormBall
from semidp.accountant.geometry.knorm_cache import cached_knorm_ball
from semidp.accountant.geometry.knorm_certificates import exact_gauge
from semidp.accountant.geometry.lp_balls import compare_lp_balls
from semidp.accountant.geometry.root_polytope import RootPolytopeBall
from semidp.accountant.geometry.table_symmetry import TableSymmetry
from semidp.accountant.guarantees.composition import compose, compose_as_zcdp, compose_tradeoffs
from semidp.accountant.guarantees.conversions import (
    approx_dp_to_tradeoff,
    gdp_to_approx_dp,
    gdp_to_delta,
    gdp_to_rdp,
    gdp_to_tradeoff,
    gdp_to_zcdp,
    pure_dp_to_approx_dp,
    pure_dp_to_tradeoff,
    pure_dp_to_zcdp,
    rdp_to_approx_dp,
    tradeoff_to_approx_dp,
    tradeoff_to_delta,
    zcdp_to_approx_dp,
    zcdp_to_delta,
    zcdp_to_rdp,
    zcdp_to_tradeoff,
)
from semidp.accountant.guarantees.definitions import GDP, RDP, ZCDP, ApproxDP, Guarantee, PureDP, TradeOff
from semidp.accountant.guarantees.relations import AddRemove, Relation, Replace, SemiAdjacent, Subspace
from semidp.accountant.guarantees.semidp import (
    NoFiniteGuarantee,
    Prop21Result,
    joint_release_dp,
    semi_dp,
    semi_dp_composition,
)
from semidp.accountant.lattice.kernel import LatticeBasis, basis_for, certify, kernel_lattice_basis, tail_constant
from semidp.accountant.old_names import OLD_NAMES, install
from semidp.accountant.profiles.discrete_gaussian_dp import discrete_gaussian_delta, discrete_gaussian_epsilon
from semidp.accountant.profiles.gaussian import gaussian_sigma, gdp_delta, gdp_epsilon
from semidp.accountant.sensitivity.comparisons import compare_with_closed_form, naive_spaces
from semidp.accountant.sensitivity.search import semi_sensitivity_search
from semidp.accountant.sensitivity.spaces import SensitivitySpace, histogram_space, table_space

install()


def __getattr__(name: str) -> ModuleType:
    """An old module name (a key of ``OLD_NAMES``) as an attribute of the package: the aliased new module."""
    if name in OLD_NAMES:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


if __name__ != "semidp.accountant":  # one identity per module (issue 23, item 8)
    raise ImportError(
        f"import semidp.accountant, not {__name__!r}: the repository's accountant/ folder is the package "
        "semidp.accountant; a second import name would load second copies of its classes, which semidp rejects."
    )

__all__ = [
    "AddRemove",
    "ApproxDP",
    "BudgetExhausted",
    "KNormBall",
    "SemiAdjacentResult",
    "TableSymmetry",
    "Witness",
    "compare_lp_balls",
    "compare_with_closed_form",
    "containing_ball",
    "exact_gauge",
    "naive_spaces",
    "semi_adjacent_parameter",
    "semi_sensitivity_search",
    "Counting",
    "DataSpace",
    "Feature",
    "GDP",
    "Guarantee",
    "InvalidArgument",
    "InvalidSpec",
    "Invariant",
    "Linear",
    "Margins",
    "NoFiniteGuarantee",
    "NoInvariant",
    "Prop21Result",
    "PureDP",
    "RDP",
    "Relation",
    "RelationMismatch",
    "Replace",
    "SearchTooLarge",
    "SemiAdjacent",
    "Subspace",
    "SemiAdjacentParameter",
    "SensitivitySpace",
    "Total",
    "ToolkitError",
    "TradeOff",
    "UnsupportedRelease",
    "VerificationError",
    "ZCDP",
    "approx_dp_to_tradeoff",
    "closed_form",
    "compose",
    "compose_as_zcdp",
    "compose_tradeoffs",
    "gaussian_sigma",
    "gdp_delta",
    "histogram_space",
    "table_space",
    "gdp_epsilon",
    "gdp_to_approx_dp",
    "gdp_to_delta",
    "gdp_to_rdp",
    "gdp_to_tradeoff",
    "gdp_to_zcdp",
    "joint_release_dp",
    "pure_dp_to_approx_dp",
    "pure_dp_to_tradeoff",
    "pure_dp_to_zcdp",
    "rdp_to_approx_dp",
    "semi_dp",
    "semi_dp_composition",
    "tradeoff_to_approx_dp",
    "tradeoff_to_delta",
    "zcdp_to_approx_dp",
    "zcdp_to_delta",
    "zcdp_to_rdp",
    "zcdp_to_tradeoff",
    "LatticeBasis",
    "basis_for",
    "certify",
    "kernel_lattice_basis",
    "tail_constant",
    "discrete_gaussian_delta",
    "discrete_gaussian_epsilon",
    "cached_knorm_ball",
    "RootPolytopeBall",
]
