r"""Results of the Semi-DP sensitivity-space searches and the helpers they share [CA24, Def. 4, Sec. 4].

:class:`SensitivitySearchResult` (the exact space S, how it was found, whether it
is exact), :class:`NaiveSpaces` (Prop. 24) and :class:`ClosedFormComparison`
(Prop. 32), plus the norms of a space, sign canonicalisation of vectors and
the query matrix of a spec query.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from semidp.accountant.combinatorics.fiber import (
    AnyInvariant,
)
from semidp.accountant.core.errors import InvalidArgument
from semidp.accountant.data.dataspace import DataSpace
from semidp.accountant.data.exact_matrices import query_int64
from semidp.accountant.data.invariants import Counting, Linear, Margins, NoInvariant, Total
from semidp.accountant.sensitivity.spaces import (
    SensitivitySpace,
    exact_rank,
)

#: Methods accepted by :func:`semi_sensitivity_search`.
METHODS = ("auto", "enumeration", "closed-form", "fiber-pairs")


#: Default largest number of candidate pairs ``(P, N)`` with equal hash examined.
DEFAULT_PAIR_LIMIT = 500_000


#: Default largest number of record multisets (all levels together) hashed.
DEFAULT_MULTISET_LIMIT = 1_000_000


#: Default largest fiber enumerated for the realisability test (else integer programs).
DEFAULT_FIBER_LIMIT = 200_000


MATRIX_INVARIANTS = (NoInvariant, Total, Margins, Linear, Counting)


Query = NDArray[np.integer[Any]] | Sequence[Sequence[int]] | Total | Margins | Linear | Counting
"""A linear query ``Q h``: an integer matrix over cells, or a count statistic whose
``.matrix(space)`` is used (e.g. ``Margins((("A",),))`` for a one-way margin)."""


Vector = tuple[int, ...]


@dataclass(frozen=True)
class SensitivitySearchResult:
    """An exact Semi-DP sensitivity space with how it was obtained [CA24, Sec. 4].

    Examples
    --------
    >>> from semidp.accountant.data.invariants import Margins
    >>> space = DataSpace.of(("A", 2), ("B", 2))
    >>> from semidp.accountant.sensitivity.search import semi_sensitivity_search
    >>> r = semi_sensitivity_search(space, Margins((("A",), ("B",))), 3, table=(2, 1, 1, 0))
    >>> r.space.vectors                                      # docs/reference/semi-dp.md T-S1
    ((-1, 1, 1, -1), (0, 0, 0, 0), (1, -1, -1, 1))
    >>> r.candidates_from, r.realised_by, r.exact
    ('enumeration', 'fiber', True)
    >>> r.witnesses[(1, -1, -1, 1)]                          # h and h - u conform
    (3, 0, 0, 1)
    """

    space: SensitivitySpace
    """The sensitivity space of the query (equal to :attr:`cell_space` for the histogram)."""
    cell_space: SensitivitySpace
    """The histogram-level space ``{h - h'}`` (before applying the query)."""
    radius: int
    """The adjacency radius ``a`` used (``d_H <= a``)."""
    exact: bool
    """Whether every vector is proven realisable and no realisable vector is missing.
    ``False`` only when some integer programs were undecided (those vectors are
    included, which is conservative: a superset gives larger sensitivities)."""
    actual_t: bool
    """``True`` for the space at the published ``t``; ``False`` for the union over all ``t``."""
    candidates_from: str
    """``"enumeration"`` (meet in the middle), ``"closed-form"`` (table moves and
    3-cycles) or ``"fiber-pairs"`` (all pairs of conforming histograms)."""
    realised_by: str
    """``"fiber"``, ``"integer-program"``, ``"table"`` (every candidate is witnessed by
    the given table itself), ``"worst-case"`` (``n >= |u+|``) or ``"fiber-pairs"``."""
    witnesses: Mapping[Vector, Vector]
    """For one sign of each nonzero cell-level ``+-u`` (first nonzero entry positive,
    as produced): a histogram ``h`` with ``h`` and ``h - u`` conforming (worst case:
    for ``t = A h``). Use :meth:`witness` for either sign. Undecided vectors have none."""
    t: Hashable | None
    """The published value (``None`` in the worst case)."""
    n: int | None
    """Number of records (``None``: unknown, assumed ``>= radius``)."""
    candidates: int
    """Number of candidate ``u`` (one per sign) whose realisability was decided."""
    pairs_examined: int
    """Number of equal-hash multiset pairs examined (0 unless enumerated)."""
    undecided: tuple[Vector, ...] = ()
    """Cell-level vectors included without proof (integer program undecided)."""
    note: str = ""
    """Method switches, assumptions and budgets."""
    elapsed: float = field(default=0.0, compare=False)
    """Wall-clock seconds."""

    def witness(self, u: Sequence[int]) -> tuple[Vector, Vector]:
        """Conforming histograms ``(h, h')`` with ``h - h' = u`` and ``|h - h'|_1 <= 2a``.

        Raises
        ------
        InvalidArgument
            ``u`` is 0, not in :attr:`cell_space`, or undecided (no witness).
        """
        v = tuple(int(x) for x in u)
        if v in self.witnesses:
            h = self.witnesses[v]
        elif (neg := tuple(-x for x in v)) in self.witnesses:
            h = tuple(x + y for x, y in zip(self.witnesses[neg], v))  # h0 - (-v)
        else:
            raise InvalidArgument(f"u={v} has no witness: it is 0, undecided, or not in the sensitivity space.")
        return h, tuple(x - y for x, y in zip(h, v))


@dataclass(frozen=True)
class NaiveSpaces:
    r"""The naive spaces of [CA24, Prop. 24], for the histogram or a linear query.

    ``one_step`` is :math:`S^{\mathcal D, A_1}` (no invariant, replace-one),
    ``inflated`` the norms of :math:`a\cdot S^{\mathcal D, A_1}` (group
    privacy, alternative (i) of Sec. 4) and ``a_step`` the set
    :math:`S^{\mathcal D, A_a}` (alternative (ii)) when enumerable.
    """

    one_step: SensitivitySpace
    r""":math:`S^{\mathcal D, A_1}` (exact)."""
    inflated: dict[str, float | int]
    r"""Norms of :math:`a\cdot S^{\mathcal D, A_1}` (``l2`` rounded up)."""
    a_step: SensitivitySpace | None
    r""":math:`S^{\mathcal D, A_a}` as a set, or ``None`` when too large to enumerate."""
    a_step_norms: dict[str, float | int]
    r"""Norms of :math:`S^{\mathcal D, A_a}`: from the set, or (when not enumerated)
    exactly :math:`a'\,\Delta_K(S^{\mathcal D, A_1})` with :math:`a' = \min(a, n)`, since
    :math:`\mathrm{conv}\,S^{\mathcal D,A_{a'}} = a'\,\mathrm{conv}\,S^{\mathcal D,A_1}` (Notes of
    :func:`naive_spaces`)."""
    radius: int
    """The radius ``a``."""
    notes: tuple[str, ...]
    """How each part was obtained."""


@dataclass(frozen=True)
class ClosedFormComparison:
    """Where a published closed form disagrees with the exact space (report section).

    ``missing`` vectors make a mechanism calibrated to the closed form invalid
    (pairs of conforming datasets whose difference it does not cover);
    ``extra`` vectors only make it conservative.
    """

    agrees: bool
    """Whether the two sets are equal."""
    missing: tuple[Vector, ...]
    """In the exact space, not in the closed form."""
    extra: tuple[Vector, ...]
    """In the closed form, not realisable in the exact setting."""
    lines: tuple[str, ...]
    """Human-readable findings, one per line."""
    exact_norms: dict[str, float | int]
    """Norms of the exact space (keys of ``SensitivitySpace.norms()``; :func:`space_norms`)."""
    closed_norms: dict[str, float | int]
    """Norms of the closed form (same keys)."""
    exact_label: str
    """Label of the exact space."""
    closed_label: str
    """Label of the closed form."""


def query_matrix(space: DataSpace, query: Query | None) -> NDArray[np.int64] | None:
    """The query's integer matrix as int64, checked: integers within
    :data:`accountant.data.exact_matrices.QUERY_ENTRY_LIMIT` (never a silent cast)."""
    if query is None:
        return None
    if isinstance(query, MATRIX_INVARIANTS):
        return query_int64("query", query.matrix(space), space.n_cells)
    arr = np.asarray(query)
    if arr.ndim != 2 or arr.shape[1] != space.n_cells:
        raise InvalidArgument(
            f"query has shape {arr.shape}; expected (rows, {space.n_cells}) over the row-major cells."
        )
    if arr.dtype == bool or arr.dtype.kind not in "iuO":
        raise InvalidArgument(f"query={arr.tolist()!r} must be an integer matrix.")
    return query_int64("query", arr, space.n_cells)


def one_way_table(space: DataSpace, invariant: AnyInvariant) -> tuple[int, int] | None:
    """``(r, c)`` if ``invariant`` is exactly both one-way margins of a two-feature space."""
    if not isinstance(invariant, Margins) or len(space.features) != 2:
        return None
    if {tuple(m) for m in invariant.margins} == {(space.names[0],), (space.names[1],)} and len(invariant.margins) == 2:
        r, c = space.shape
        if r >= 2 and c >= 2:
            return r, c
    return None


def canonical_sign(u: NDArray[np.int64]) -> NDArray[np.int64]:
    """Flip rows so that the first nonzero entry is positive."""
    if u.shape[0] == 0:
        return u
    sign = np.sign(u[np.arange(u.shape[0]), (u != 0).argmax(axis=1)])
    out: NDArray[np.int64] = u * sign[:, None]
    return out


def positive_sign(vectors: Sequence[Vector]) -> NDArray[np.int64]:
    """One of each ``+-u`` (first nonzero entry positive), zero dropped."""
    keep = [v for v in vectors if any(v) and next(x for x in v if x) > 0]
    if not keep:
        return np.zeros((0, len(vectors[0]) if vectors else 0), dtype=np.int64)
    return np.array(keep, dtype=np.int64)


def format_t(t: Hashable) -> str:
    return str(t) if len(str(t)) <= 60 else str(t)[:57] + "..."


def space_from_array(arr: NDArray[np.int64], label: str, *, distinct: bool = False) -> SensitivitySpace:
    """``SensitivitySpace`` of the rows of ``arr``, their negations and 0.

    ``distinct=True`` promises that the rows are nonzero, pairwise distinct and
    contain no pair ``u, -u`` (as the candidate enumeration produces them), which
    skips the deduplication; :class:`SensitivitySpace` still re-checks symmetry.
    """
    k = arr.shape[1]
    full = np.vstack([np.zeros((1, k), dtype=np.int64), arr, -arr])
    if not distinct:
        full = np.unique(full, axis=0)
    return SensitivitySpace(tuple(map(tuple, full.tolist())), label)


def space_norms(space: SensitivitySpace) -> dict[str, float | int]:
    """The same dict as :meth:`SensitivitySpace.norms` (l1, l2 rounded up, linf, rank,
    dimension, size), with the rank from :func:`exact_rank` (fast on large spaces)."""
    return {
        "l1": space.l1,
        "l2": space.l2,
        "linf": space.linf,
        "rank": exact_rank(space.array),
        "dimension": space.dimension,
        "size": space.size,
    }
