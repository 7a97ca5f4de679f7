r"""Exact Semi-DP sensitivity spaces by enumeration (Cho & Awan 2024, Def. 4, Sec. 4).

The Semi-DP sensitivity space of a query ``q`` of the histogram is the
sensitivity space (Def. 4) of the conforming datasets under the adjacency
:math:`A_{a(t)}` (Sec. 4):

.. math::

    S_{\rm semi} = \{ q(X) - q(X') : X, X' \in D_t,\ d_H(X, X') \le a \}.

Reduction to histograms
-----------------------
For a dataset ``X`` with histogram ``h`` and any histogram ``h'`` with the same
total, the least Hamming distance to a dataset with histogram ``h'`` is
:math:`\tfrac12\|h - h'\|_1` (Lemma 1 of ``semiadjacent_search.md`` without the
individual constraint), and it is attained. So, with
:math:`F = \{h \ge 0 : A h = t,\ \mathbf 1^\top h = n\}`,

.. math::

    S^{\rm cells} = \{ h - h' : h, h' \in F,\ \tfrac12 \|h - h'\|_1 \le a \}
      = \{ u \in \mathbb Z^k : A u = 0,\ \mathbf 1^\top u = 0,\ \|u^+\|_1 \le a,\
           \exists h \in F,\ h \ge u^+ \},

because ``h - u`` is then in ``F`` (same ``A``-value and total, and
``h - u = (h - u^+) + u^- \ge 0``); the condition depends on ``u^+`` only and
holds for ``u`` iff it holds for ``-u`` (witness ``h - u``). A linear query
``Q h`` has :math:`S = Q S^{\rm cells}`.

Algorithm
---------
1. **Candidates** (meet in the middle): every nonzero ``u`` above is
   ``P - N`` for the multisets ``P = u^+``, ``N = u^-`` of ``s = \|u^+\|_1 \le a``
   records with disjoint supports and ``A P = A N``. Level by level
   (``s = 1..a``) all multisets are hashed through ``A`` (the linear 64-bit hash
   of :class:`accountant.semiadjacent_search.RecordOffsets`), equal hashes are
   paired, and every pair is re-checked exactly (disjoint supports and
   ``A(P - N) = 0`` in integers), so a hash collision can cost time, never
   correctness, and each ``u`` is produced exactly once (as ``(u^+, u^-)``).
   The number of multisets and then the exact number of pairs are computed
   **before** pairing and the search is refused above the limits
   (:class:`~accountant.errors.SearchTooLarge`, naming the estimate and the limit).
2. **Realisability** at the actual ``t``: "is there ``h \in F`` with
   ``h \ge u^+``?" -- by the enumerated fiber (bitsets of
   :class:`accountant.semiadjacent_search.RowBits`) when its size, estimated
   before enumerating, is at most ``fiber_limit``; otherwise by integer
   feasibility (HiGHS, :func:`accountant.fiber.integer_point`), where every
   feasible ``h`` found certifies all candidates below it and every
   infeasible lower bound refutes all candidates above it.
   **Worst case over t** (no ``t``): ``u`` is realisable for some ``t`` iff
   ``n \ge \|u^+\|_1`` (take ``h = u^+`` plus ``n - \|u^+\|_1`` records
   anywhere; necessity: ``n = \sum h \ge \sum u^+``); with ``n`` unknown it is
   assumed ``\ge a`` and the label says so.

Every vector comes with a witness ``h`` (``h`` and ``h - u`` conforming) that
the tests re-check independently; completeness is the enumeration of step 1.

Closed form (fallback)
----------------------
An ``r x c`` table under both one-way margins with ``a <= 3``: the nonzero
``u`` are exactly the :math:`2\times2` moves and the 3-cycles
(:func:`accountant.sensitivity.table_space`, Notes: an integer
margin-preserving ``u`` with :math:`\|u\|_1\le 6` has entries in
:math:`\{0,\pm1\}` -- an entry :math:`\pm2` forces :math:`\|u\|_1\ge 8` -- and
its support is an alternating cycle of length 4 or 6 in the row-column
bipartite graph). When enumeration is refused, these are used as the
candidates and realisability is still decided exactly; the result says so.

References
----------
[CA24] Cho & Awan, "Formal Privacy Guarantees with Invariant Statistics",
       arXiv:2410.17468v1: Def. 4 (sensitivity space, after Awan & Slavković
       2021), Sec. 4 (Semi-DP sensitivity space, Prop. 24 naive spaces,
       Prop. 25 rank deficiency), Prop. 32 (tables; incomplete for
       :math:`\min(r, c) \ge 3`, reference ``semi-dp.md`` §5 caveat).
"""

from __future__ import annotations

import itertools
import math
import time
from collections.abc import Hashable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np
from numpy.typing import NDArray

from accountant.arguments import check_int, check_positive
from accountant.callable_invariant import CallableInvariant
from accountant.dataspace import DataSpace
from accountant.directed import sqrt_up
from accountant.errors import InvalidArgument, SearchTooLarge
from accountant.fiber import (
    AnyInvariant,
    Fiber,
    FiberSize,
    conforming_fiber,
    histogram_from_table,
    integer_point,
)
from accountant.invariants import Counting, Linear, Margins, NoInvariant, Total
from accountant.record_multisets import RecordOffsets, RowBits, dedupe_rows
from accountant.semiadjacent_results import SemiAdjacentResult
from accountant.sensitivity import (
    SensitivitySpace,
    exact_rank,
    table_moves,
    table_space,
    table_three_cycles,
)

#: Methods accepted by :func:`semi_sensitivity_search`.
METHODS = ("auto", "enumeration", "closed-form", "fiber-pairs")

#: Default largest number of candidate pairs ``(P, N)`` with equal hash examined.
DEFAULT_PAIR_LIMIT = 500_000

#: Default largest number of record multisets (all levels together) hashed.
DEFAULT_MULTISET_LIMIT = 1_000_000

#: Default largest fiber enumerated for the realisability test (else integer programs).
DEFAULT_FIBER_LIMIT = 200_000

_MATRIX_TYPES = (NoInvariant, Total, Margins, Linear, Counting)

Query = NDArray[np.integer[Any]] | Sequence[Sequence[int]] | Total | Margins | Linear | Counting
"""A linear query ``Q h``: an integer matrix over cells, or a count statistic whose
``.matrix(space)`` is used (e.g. ``Margins((("A",),))`` for a one-way margin)."""

Vector = tuple[int, ...]


# ----------------------------------------------------------------------------- results


@dataclass(frozen=True)
class SensitivitySearchResult:
    """An exact Semi-DP sensitivity space with how it was obtained (Cho & Awan 2024, Sec. 4).

    Examples
    --------
    >>> from accountant.invariants import Margins
    >>> space = DataSpace.of(("A", 2), ("B", 2))
    >>> r = semi_sensitivity_search(space, Margins((("A",), ("B",))), 3, table=(2, 1, 1, 0))
    >>> r.space.vectors                                      # reference T-S1
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
            raise InvalidArgument(
                f"u={v} has no witness: it is 0, undecided, or not in the sensitivity space."
            )
        return h, tuple(x - y for x, y in zip(h, v))


@dataclass(frozen=True)
class NaiveSpaces:
    r"""The naive spaces of Cho & Awan 2024, Prop. 24, for the histogram or a linear query.

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


# ------------------------------------------------------------------------ candidates


def _multiset_count(k: int, radius: int) -> int:
    return sum(math.comb(k + s - 1, s) for s in range(1, radius + 1))


@dataclass
class _Level:
    combos: NDArray[np.int64]  # (M, s) cells of each multiset, nondecreasing
    image: NDArray[np.int64]  # (M, rows) exact A-image
    order: NDArray[np.int64]  # positions sorted by hash
    starts: NDArray[np.int64]  # runs of equal hash (in sorted positions)
    lens: NDArray[np.int64]


def _levels(a: NDArray[np.int64], k: int, radius: int) -> list[_Level]:
    """Multisets of ``s = 1..radius`` cells, hashed through ``A`` and grouped by hash."""
    cellkey = RecordOffsets(a, DEFAULT_MULTISET_LIMIT).cellkey  # linear 64-bit hash of A e_c
    out: list[_Level] = []
    at = a.T.astype(np.int64)  # (k, rows)
    for s in range(1, radius + 1):
        combos = np.array(list(itertools.combinations_with_replacement(range(k), s)),
                          dtype=np.int64).reshape(-1, s)
        keys = cellkey[combos].sum(axis=1)  # wraps modulo 2**64: fine for a hash
        image = at[combos].sum(axis=1)  # (M, rows), exact
        order = np.argsort(keys, kind="stable").astype(np.int64)
        sk = keys[order]
        cuts = np.flatnonzero(np.diff(sk) != 0) + 1
        starts = np.concatenate([[0], cuts]).astype(np.int64)
        ends = np.concatenate([cuts, [sk.shape[0]]]).astype(np.int64)
        out.append(_Level(combos, image, order, starts, ends - starts))
    return out


def _pair_count(levels: list[_Level]) -> int:
    return sum(int((lv.lens * (lv.lens - 1) // 2).sum()) for lv in levels)


def _run_pairs(starts: NDArray[np.int64], lens: NDArray[np.int64], chunk: int
               ) -> Iterator[tuple[NDArray[np.int64], NDArray[np.int64]]]:
    """Index pairs ``i < j`` inside each run of equal hashes, in chunks of about ``chunk``."""
    for g in np.unique(lens[lens >= 2]).tolist():
        ti, tj = np.triu_indices(int(g), 1)
        ti = ti.astype(np.int64)
        tj = tj.astype(np.int64)
        st = starts[lens == g]
        p = ti.shape[0]
        if p <= chunk:
            per = max(1, chunk // p)
            for b in range(0, st.shape[0], per):
                s = st[b : b + per]
                yield (s[:, None] + ti[None, :]).ravel(), (s[:, None] + tj[None, :]).ravel()
        else:
            for s0 in st.tolist():
                for b in range(0, p, chunk):
                    yield s0 + ti[b : b + chunk], s0 + tj[b : b + chunk]


def _dense(combos: NDArray[np.int64], k: int) -> NDArray[np.int64]:
    m, s = combos.shape
    out = np.zeros((m, k), dtype=np.int64)
    np.add.at(out, (np.repeat(np.arange(m), s), combos.reshape(-1)), 1)
    return out


def kernel_moves(
    a: NDArray[np.int64] | Sequence[Sequence[int]],
    cells: int,
    radius: int,
    *,
    limit: int = DEFAULT_PAIR_LIMIT,
    multiset_limit: int = DEFAULT_MULTISET_LIMIT,
    time_limit: float = 60.0,
    what: str = "",
) -> tuple[NDArray[np.int64], int]:
    r"""All nonzero ``u`` with ``A u = 0``, ``sum(u) = 0``, ``|u+|_1 <= radius`` (one of each ``+-u``).

    Meet in the middle over multisets ``P = u^+``, ``N = u^-`` of equal size
    ``s <= radius`` with disjoint supports and ``A P = A N`` (module docstring,
    step 1). The returned ``u`` is ``P - N`` for the hash-sorted pair ``(P, N)``.

    Parameters
    ----------
    a:
        Integer matrix ``A`` (``rows x cells``; zero rows for no invariant).
    cells:
        Number of cells ``k``.
    radius:
        The adjacency radius ``a`` (largest ``|u+|_1``).
    limit:
        Largest number of equal-hash pairs to examine (counted before pairing).
    multiset_limit:
        Largest number of multisets to hash (counted before hashing).
    time_limit:
        Seconds before giving up with :class:`~accountant.errors.InvalidArgument`.
    what:
        Description used in error messages.

    Returns
    -------
    u, pairs
        ``(m, cells)`` integer array and the number of pairs examined.

    Raises
    ------
    SearchTooLarge
        Too many multisets or pairs (the message names the count and the limit).

    Examples
    --------
    >>> u, _ = kernel_moves([[1, 1, 0, 0], [0, 0, 1, 1], [1, 0, 1, 0], [0, 1, 0, 1]], 4, 3)
    >>> sorted(map(tuple, np.abs(u).tolist()))               # the 2x2 move, one sign
    [(1, 1, 1, 1)]
    """
    amat = np.asarray(a, dtype=np.int64).reshape(-1, cells)
    check_int("cells", cells, minimum=1)
    check_int("radius", radius, minimum=0)
    check_int("limit", limit, minimum=1)
    check_int("multiset_limit", multiset_limit, minimum=1)
    check_positive("time_limit", time_limit)
    deadline = time.monotonic() + time_limit
    label = what or f"enumerating A u = 0 with |u+|_1 <= {radius} over {cells} cells"
    msets = _multiset_count(cells, radius)
    if msets > multiset_limit:
        raise SearchTooLarge(
            f"{label} (multisets of <= {radius} records)", msets, multiset_limit,
            hint="Raise `multiset_limit` if memory allows (about 8*(radius + rows) bytes "
            "per multiset), or use a closed form.",
        )
    if radius == 0:
        return np.zeros((0, cells), dtype=np.int64), 0
    levels = _levels(amat, cells, radius)
    pairs = _pair_count(levels)
    if pairs > limit:
        raise SearchTooLarge(
            f"{label} (multiset pairs with equal A-image)", pairs, limit,
            hint="Raise `limit`, or use a closed form.",
        )
    chunk = max(1_000, 4_000_000 // max(1, cells))
    found: list[NDArray[np.int64]] = []
    for lv in levels:
        for ii, jj in _run_pairs(lv.starts, lv.lens, chunk):
            if time.monotonic() > deadline:
                raise InvalidArgument(
                    f"time_limit={time_limit} s ran out while {label}; raise time_limit."
                )
            pi = lv.order[ii]
            ni = lv.order[jj]
            cp = lv.combos[pi]
            cn = lv.combos[ni]
            overlap = (cp[:, :, None] == cn[:, None, :]).any(axis=(1, 2))
            same = (lv.image[pi] == lv.image[ni]).all(axis=1)  # exact re-check of the hash
            keep = ~overlap & same
            if keep.any():
                found.append(_dense(cp[keep], cells) - _dense(cn[keep], cells))
    if not found:
        return np.zeros((0, cells), dtype=np.int64), pairs
    u = np.vstack(found)
    if (u @ amat.T != 0).any() or (u.sum(axis=1) != 0).any():  # pragma: no cover - invariant
        raise AssertionError("internal error: a candidate is not in ker A")
    return u, pairs


# --------------------------------------------------------------------- realisability


_FIRST_BIT = np.unpackbits(np.arange(256, dtype=np.uint8)[:, None], axis=1).argmax(axis=1)


def _covering_rows(rows: NDArray[np.int64], lowers: NDArray[np.int64]) -> NDArray[np.int64]:
    """For each lower bound ``L``: index of a row ``h >= L`` of ``rows``, or ``-1``."""
    q = lowers.shape[0]
    out = np.full(q, -1, dtype=np.int64)
    if q == 0 or rows.shape[0] == 0:
        return out
    bits = RowBits(rows)
    vmax = int(lowers.max())
    stack = np.stack([np.zeros((bits.k, bits.nbytes), dtype=np.uint8)]
                     + [bits.bits(v) for v in range(1, vmax + 1)])
    supp = (lowers > 0).sum(axis=1)
    for s in np.unique(supp).tolist():
        idx = np.flatnonzero(supp == s)
        if s == 0:
            out[idx] = 0
            continue
        grp = lowers[idx]
        cells = np.argsort(grp == 0, axis=1, kind="stable")[:, :s]
        vals = np.take_along_axis(grp, cells, axis=1)
        step = max(1, 50_000_000 // max(1, s * bits.nbytes))
        for b in range(0, idx.shape[0], step):
            both = np.bitwise_and.reduce(stack[vals[b : b + step], cells[b : b + step]], axis=1)
            nz = both != 0
            has = nz.any(axis=1)
            fb = nz.argmax(axis=1)
            byte = both[np.arange(both.shape[0]), fb]
            row = fb * 8 + _FIRST_BIT[byte]
            sel = idx[b : b + step]
            out[sel[has]] = row[has]
    return out


def _realise_by_fiber(rows: NDArray[np.int64], lowers: NDArray[np.int64]
                      ) -> tuple[NDArray[np.int8], NDArray[np.int64]]:
    idx = _covering_rows(rows, lowers)
    status = np.where(idx >= 0, 1, -1).astype(np.int8)
    wit = np.zeros_like(lowers)
    ok = idx >= 0
    wit[ok] = rows[idx[ok]]
    return status, wit


def _realise_by_ilp(fib: Fiber, lowers: NDArray[np.int64], deadline: float,
                    known: NDArray[np.int64] | None = None
                    ) -> tuple[NDArray[np.int8], NDArray[np.int64]]:
    """Status 1 feasible (witness row), -1 infeasible, 0 undecided.

    ``known`` conforming histograms (e.g. the confidential table) are tried
    first, so that only lower bounds they do not cover need an integer program.
    """
    assert fib.matrix is not None and fib.rhs is not None
    q = lowers.shape[0]
    status = np.zeros(q, dtype=np.int8)
    wit = np.zeros_like(lowers)
    upper = fib.cell_upper_bounds()
    status[(lowers > upper[None, :]).any(axis=1)] = -1
    for row, rhs in zip(fib.matrix, fib.rhs):  # h >= L, A_r >= 0  =>  A_r L <= A_r h = t_r
        if (row >= 0).all():
            status[lowers @ row > rhs] = -1
    for h in [] if known is None else list(known):
        if fib.contains(h):
            cover = (status == 0) & (lowers <= h[None, :]).all(axis=1)
            status[cover] = 1
            wit[cover] = h
    unknown = np.zeros(q, dtype=bool)
    if (status == 0).sum() > 1:
        # One program for the elementwise maximum of all open lower bounds: when the
        # fiber has a histogram that large (typical for large n), it covers them all.
        top = lowers[status == 0].max(axis=0)
        st, h = integer_point(fib.matrix, fib.rhs, top, upper,
                              time_limit=max(deadline - time.monotonic(), 1e-3))
        if st == "feasible" and h is not None:
            cover = (status == 0) & (lowers <= h[None, :]).all(axis=1)
            status[cover] = 1
            wit[cover] = h
    for i in np.argsort(-lowers.sum(axis=1), kind="stable").tolist():
        if status[i] != 0 or unknown[i]:
            continue
        rem = deadline - time.monotonic()
        if rem <= 0:
            break
        st, h = integer_point(fib.matrix, fib.rhs, lowers[i], upper, time_limit=rem)
        if st == "feasible" and h is not None:
            cover = (status == 0) & (lowers <= h[None, :]).all(axis=1)
            status[cover] = 1
            wit[cover] = h
        elif st == "infeasible":
            above = (status == 0) & (lowers >= lowers[i][None, :]).all(axis=1)
            status[above] = -1
        else:
            unknown[i] = True
    return status, wit


def _fiber_pair_differences(groups: list[NDArray[np.int64]], radius: int, limit: int,
                            deadline: float, what: str
                            ) -> tuple[NDArray[np.int64], NDArray[np.int64], int]:
    """``(u, h)`` for all pairs ``h != h'`` inside each group with ``|h - h'|_1 <= 2a``."""
    pairs = sum(g.shape[0] * (g.shape[0] - 1) // 2 for g in groups)
    if pairs > limit:
        raise SearchTooLarge(f"{what} (pairs of conforming histograms)", pairs, limit,
                             hint="Raise `limit`, or use a matrix invariant (enumeration).")
    us: list[NDArray[np.int64]] = []
    hs: list[NDArray[np.int64]] = []
    for g in groups:
        m = g.shape[0]
        step = max(1, 2_000_000 // max(1, m * g.shape[1]))
        for b in range(0, m, step):
            if time.monotonic() > deadline:
                raise InvalidArgument(f"time limit ran out while {what}; raise time_limit.")
            blk = g[b : b + step]
            d = np.abs(blk[:, None, :] - g[None, :, :]).sum(axis=2)
            i, j = np.nonzero((d <= 2 * radius) & (d > 0))
            i_abs = i + b
            keep = i_abs < j
            us.append(blk[i[keep]] - g[j[keep]])
            hs.append(blk[i[keep]])
    k = groups[0].shape[1] if groups else 0
    if not us:
        return np.zeros((0, k), dtype=np.int64), np.zeros((0, k), dtype=np.int64), pairs
    return np.vstack(us), np.vstack(hs), pairs


# --------------------------------------------------------------------------- helpers


def _query_matrix(space: DataSpace, query: Query | None) -> NDArray[np.int64] | None:
    if query is None:
        return None
    if isinstance(query, _MATRIX_TYPES):
        return np.asarray(query.matrix(space), dtype=np.int64)
    arr = np.asarray(query)
    if arr.ndim != 2 or arr.shape[1] != space.n_cells:
        raise InvalidArgument(
            f"query has shape {arr.shape}; expected (rows, {space.n_cells}) over the row-major cells."
        )
    if arr.dtype == bool or not np.issubdtype(arr.dtype, np.integer):
        raise InvalidArgument(f"query={arr.tolist()!r} must be an integer matrix.")
    return arr.astype(np.int64)


def _one_way_table(space: DataSpace, invariant: AnyInvariant) -> tuple[int, int] | None:
    """``(r, c)`` if ``invariant`` is exactly both one-way margins of a two-feature space."""
    if not isinstance(invariant, Margins) or len(space.features) != 2:
        return None
    if {tuple(m) for m in invariant.margins} == {(space.names[0],), (space.names[1],)} \
            and len(invariant.margins) == 2:
        r, c = space.shape
        if r >= 2 and c >= 2:
            return r, c
    return None


def _canonical_sign(u: NDArray[np.int64]) -> NDArray[np.int64]:
    """Flip rows so that the first nonzero entry is positive."""
    if u.shape[0] == 0:
        return u
    sign = np.sign(u[np.arange(u.shape[0]), (u != 0).argmax(axis=1)])
    out: NDArray[np.int64] = u * sign[:, None]
    return out


def _positive_sign(vectors: Sequence[Vector]) -> NDArray[np.int64]:
    """One of each ``+-u`` (first nonzero entry positive), zero dropped."""
    keep = [v for v in vectors if any(v) and next(x for x in v if x) > 0]
    if not keep:
        return np.zeros((0, len(vectors[0]) if vectors else 0), dtype=np.int64)
    return np.array(keep, dtype=np.int64)


def _fmt_t(t: Hashable) -> str:
    return str(t) if len(str(t)) <= 60 else str(t)[:57] + "..."


def _space_from_array(arr: NDArray[np.int64], label: str, *, distinct: bool = False
                      ) -> SensitivitySpace:
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
    return {"l1": space.l1, "l2": space.l2, "linf": space.linf,
            "rank": exact_rank(space.array), "dimension": space.dimension, "size": space.size}


# -------------------------------------------------------------------------- front door


def semi_sensitivity_search(
    space: DataSpace,
    invariant: AnyInvariant,
    radius: int | SemiAdjacentResult,
    *,
    table: Sequence[int] | NDArray[np.integer[Any]] | None = None,
    t: object = None,
    n: int | None = None,
    query: Query | None = None,
    method: str = "auto",
    limit: int = DEFAULT_PAIR_LIMIT,
    multiset_limit: int = DEFAULT_MULTISET_LIMIT,
    fiber_limit: int = DEFAULT_FIBER_LIMIT,
    time_limit: float = 60.0,
) -> SensitivitySearchResult:
    r"""The exact Semi-DP sensitivity space with witnesses (Cho & Awan 2024, Def. 4, Sec. 4).

    .. math::

        S_{\rm semi} = \{ q(X) - q(X') : X, X' \in D_t,\ d_H(X, X') \le a \}

    for the histogram (``query=None``) or a linear query ``Q h``; algorithm and
    proofs in the module docstring.

    Parameters
    ----------
    space, invariant:
        The data space and the published statistic (matrix or callable invariant).
    radius:
        The semi-adjacent parameter ``a``; a :class:`SemiAdjacentResult` may be
        passed, and its proven upper bound is used (a larger radius only enlarges
        the space, so this is conservative).
    table:
        The confidential histogram; gives ``t`` and ``n`` (space at the actual ``t``).
    t, n:
        The published value and number of records when no table is given. Without
        ``t`` and ``table`` the result is the **worst case over t** (union of the
        spaces of all ``t`` with ``n`` records; ``n=None`` assumes ``n >= a``).
    query:
        ``None`` (histogram), an integer matrix ``Q`` (``rows x cells``) or a
        count statistic such as ``Margins((("A",),))`` whose matrix is used.
    method:
        ``"auto"`` (enumeration; callable invariants: pairs of fiber elements;
        when enumeration is refused and the closed form applies -- a two-way
        table under both one-way margins with ``a <= 3`` -- its candidates are
        used instead and the ``note`` says so), ``"enumeration"`` (never
        switches), ``"closed-form"`` (tables only) or ``"fiber-pairs"`` (all
        pairs of conforming histograms; requires ``n``).
    limit:
        Largest number of candidate pairs (equal-hash multiset pairs, or fiber
        pairs) examined; counted before pairing.
    multiset_limit:
        Largest number of record multisets hashed; counted before hashing.
    fiber_limit:
        Largest fiber enumerated for the realisability test; above it, integer
        feasibility programs decide (the ``realised_by`` field says which).
    time_limit:
        Seconds. Integer programs still undecided when it runs out are counted
        as realisable (conservative; ``exact=False`` and listed in ``undecided``).

    Returns
    -------
    SensitivitySearchResult
        ``space.label`` says ``"exact enumeration (actual t)"`` or
        ``"(worst case over t)"`` and how realisability was decided.

    Raises
    ------
    SearchTooLarge
        Enumeration refused and no closed form applies (estimate and limit named).
    InvalidArgument
        Bad inputs, unknown method, ``t`` and radius result for different values,
        enumeration out of time.

    Examples
    --------
    >>> from accountant.invariants import Margins
    >>> space = DataSpace.of(("A", 3), ("B", 3))
    >>> r = semi_sensitivity_search(space, Margins((("A",), ("B",))), 3, n=3)
    >>> r.space.size, r.space.l1, r.space.l2_squared, r.space.rank    # reference T-S2
    (31, 6, 6, 4)
    >>> r.space.label
    'Semi-DP sensitivity space, exact enumeration (worst case over t, n=3), radius a=3'
    """
    t0 = time.monotonic()
    if method not in METHODS:
        raise InvalidArgument(f"method={method!r} must be one of {list(METHODS)}.")
    if not isinstance(space, DataSpace):
        raise InvalidArgument(f"space={space!r} must be a DataSpace.")
    if not isinstance(invariant, _MATRIX_TYPES + (CallableInvariant,)):
        raise InvalidArgument(
            f"invariant={invariant!r} must be one of NoInvariant, Total, Margins, Linear, "
            "Counting or CallableInvariant."
        )
    check_int("limit", limit, minimum=1)
    check_int("multiset_limit", multiset_limit, minimum=1)
    check_int("fiber_limit", fiber_limit, minimum=1)
    check_positive("time_limit", time_limit)
    deadline = t0 + time_limit
    notes: list[str] = []
    if isinstance(radius, SemiAdjacentResult):
        res = radius
        a = res.upper
        if not res.exact:
            notes.append(f"radius from an inexact a(t) search: its upper bound {a} is used")
    else:
        res = None
        a = check_int("radius", radius, minimum=0)
    qmat = _query_matrix(space, query)
    k = space.n_cells
    actual = table is not None or t is not None
    fib: Fiber | None = None
    if actual:
        fib = conforming_fiber(space, invariant, table=table, t=t, n=n)
        n = fib.n
        if res is not None and res.t != fib.t:
            raise InvalidArgument(
                f"the radius was computed for t={res.t!r}, but this space is for t={fib.t!r}."
            )
    else:
        if n is not None:
            n = check_int("n", n, minimum=1)
        if res is not None:
            notes.append(f"radius {a} is a(t) at t={_fmt_t(res.t)}; the union over t uses it for "
                         "every t (use sup_t a(t), e.g. Thm. 16, for a bound valid for all t)")
    table_rc = _one_way_table(space, invariant)
    if method == "closed-form" and (table_rc is None or a > 3):
        raise InvalidArgument(
            "method='closed-form' applies to a two-feature table under both one-way margins "
            f"with radius <= 3 (Cho & Awan Prop. 32 corrected); got the {invariant.describe()} "
            f"over {len(space.features)} feature(s), radius {a}."
        )
    if isinstance(invariant, CallableInvariant) and method in ("enumeration", "closed-form"):
        raise InvalidArgument(
            f"method={method!r} needs a matrix invariant; a callable invariant has no matrix "
            "(use method='fiber-pairs' or 'auto')."
        )

    # ---- candidates and realisability: arrays of (u, witness h) for one sign of each +-u
    empty = np.zeros((0, k), dtype=np.int64)
    found_u, found_h, undec = empty, empty, empty
    pairs = 0
    if isinstance(invariant, CallableInvariant) or method == "fiber-pairs":
        cand_from = realised = "fiber-pairs"
        groups, gnote = _fiber_groups(space, invariant, fib, n, fiber_limit)
        notes.append(gnote)
        u, h, pairs = _fiber_pair_differences(groups, a, limit, deadline,
                                              "pairing conforming histograms")
        if u.shape[0]:
            # one sign per +-u (first nonzero entry positive); the witness of -u is h - u
            sign = np.sign(u[np.arange(u.shape[0]), (u != 0).argmax(axis=1)])
            h = np.where(sign[:, None] > 0, h, h - u)
            u = u * sign[:, None]
            _, first, _ = dedupe_rows(u + a, 2 * a)  # entries of u lie in [-a, a]
            found_u, found_h = u[first], h[first]
        ncand = int(found_u.shape[0])
    else:
        amat = np.asarray(invariant.matrix(space), dtype=np.int64)
        cand: NDArray[np.int64] | None = None
        cand_from = "enumeration"
        if method != "closed-form":
            try:
                cand, pairs = kernel_moves(amat, k, a, limit=limit, multiset_limit=multiset_limit,
                                           time_limit=max(deadline - time.monotonic(), 1e-3),
                                           what=f"candidates for the {invariant.describe()}")
            except SearchTooLarge as exc:
                if method == "enumeration" or table_rc is None or a > 3:
                    raise
                notes.append(f"switched to the closed-form candidates: {exc}")
        if cand is None:
            assert table_rc is not None
            cand_from = "closed-form"
            cand = _positive_sign(table_space(table_rc[0], table_rc[1], a).vectors)
            notes.append("candidates: the 2x2 moves and 3-cycles (complete for a <= 3, "
                         "module docstring)")
        cand = _canonical_sign(cand)
        ncand = int(cand.shape[0])
        lowers_all = np.maximum(cand, 0)
        if fib is None:
            realised = "worst-case"
            if n is None:
                notes.append(f"n unknown: assumed n >= {a}, so every candidate is realisable")
                found_u, found_h = cand, lowers_all
            else:
                keep = lowers_all.sum(axis=1) <= n
                found_u, found_h = cand[keep], lowers_all[keep].copy()
                # pad the witness to n records in the first cell of u+ (any cell would do)
                first_cell = (found_h > 0).argmax(axis=1)
                found_h[np.arange(found_h.shape[0]), first_cell] += n - found_h.sum(axis=1)
        else:
            lowers, _, inv = dedupe_rows(lowers_all, max(a, 1))
            known = None if table is None else np.array(
                [histogram_from_table(space, table)], dtype=np.int64)
            rows: NDArray[np.int64] | None = None
            status = np.zeros(lowers.shape[0], dtype=np.int8)
            wit = np.zeros_like(lowers)
            if known is not None:  # the confidential table is a free witness
                cover = (lowers <= known[0][None, :]).all(axis=1)
                status[cover] = 1
                wit[cover] = known[0]
            if known is not None and lowers.shape[0] and (status == 1).all():
                realised = "table"
                notes.append("realisability: every candidate is covered by the given table itself")
                est: FiberSize | None = None
            else:
                est = fib.estimate_size(work_limit=fiber_limit)
            if est is not None and est.value <= fiber_limit:
                try:
                    rows = fib.enumerate(limit=fiber_limit, estimate=est)
                except SearchTooLarge:
                    rows = None
            if rows is not None:
                realised = "fiber"
                notes.append(f"realisability by the enumerated fiber ({rows.shape[0]} histograms)")
                status, wit = _realise_by_fiber(rows, lowers)
            elif est is not None:
                realised = "integer-program"
                notes.append(f"realisability by integer feasibility (fiber size {est.describe()} "
                             f"> fiber_limit {fiber_limit})")
                status, wit = _realise_by_ilp(fib, lowers, deadline, known)
            st = status[inv]
            found_u, found_h = cand[st == 1], wit[inv[st == 1]]
            undec = cand[st == 0]
            if undec.shape[0]:
                notes.append(f"{undec.shape[0]} candidate(s) undecided by the integer programs "
                             "(time limit): included, which is conservative")

    # ---- the space
    exact = undec.shape[0] == 0
    kind = "exact enumeration" if cand_from != "closed-form" else "exact (closed-form candidates)"
    if fib is not None:
        label = (f"Semi-DP sensitivity space, {kind} (actual t={_fmt_t(fib.t)}, n={n}), "
                 f"radius a={a}")
    else:
        nn = f"n={n}" if n is not None else f"n unknown, assumed >= {a}"
        label = f"Semi-DP sensitivity space, {kind} (worst case over t, {nn}), radius a={a}"
    label += {"fiber": "; realisability by the enumerated fiber",
              "integer-program": "; realisability by integer programming",
              "table": "; realisability witnessed by the given table"}.get(realised, "")
    if not exact:
        label += f"; NOT EXACT: {undec.shape[0]} undecided vector pair(s) included (conservative)"
    cell = _space_from_array(np.vstack([found_u, undec]), label, distinct=True)
    out_space = cell
    if qmat is not None:
        out_space = _space_from_array(
            np.vstack([found_u, undec]) @ qmat.T,
            label + f"; image under the linear query ({qmat.shape[0]} x {k})")
    witnesses = dict(zip(map(tuple, found_u.tolist()), map(tuple, found_h.tolist())))
    undecided = tuple(map(tuple, undec.tolist()))
    return SensitivitySearchResult(
        space=out_space, cell_space=cell, radius=a, exact=exact, actual_t=actual,
        candidates_from=cand_from, realised_by=realised, witnesses=witnesses,
        t=fib.t if fib is not None else None, n=n, candidates=ncand, pairs_examined=pairs,
        undecided=undecided, note="; ".join(x for x in notes if x),
        elapsed=time.monotonic() - t0,
    )


def _fiber_groups(space: DataSpace, invariant: AnyInvariant, fib: Fiber | None, n: int | None,
                  fiber_limit: int) -> tuple[list[NDArray[np.int64]], str]:
    """Conforming histograms grouped by invariant value (one group at the actual ``t``)."""
    if fib is not None:
        rows = fib.enumerate(limit=fiber_limit)
        return [rows], f"all pairs of the {rows.shape[0]} conforming histograms"
    if n is None:
        raise InvalidArgument(
            "the worst case over t by pairs of histograms needs n (the number of records)."
        )
    allh = conforming_fiber(space, NoInvariant(), t=(), n=n).enumerate(limit=fiber_limit)
    if isinstance(invariant, CallableInvariant):
        keys: list[Hashable] = [invariant.value(row) for row in allh.tolist()]
    else:
        amat = np.asarray(invariant.matrix(space), dtype=np.int64)
        keys = [tuple(r) for r in (allh @ amat.T).tolist()]
    idx: dict[Hashable, list[int]] = {}
    for i, key in enumerate(keys):
        idx.setdefault(key, []).append(i)
    groups = [allh[np.array(v, dtype=np.int64)] for v in idx.values()]
    return groups, (f"all pairs within the {len(groups)} fibers of the {allh.shape[0]} "
                    f"histograms with n={n} records")


def semi_sensitivity_space(
    space: DataSpace,
    invariant: AnyInvariant,
    radius: int | SemiAdjacentResult,
    *,
    table: Sequence[int] | NDArray[np.integer[Any]] | None = None,
    t: object = None,
    n: int | None = None,
    query: Query | None = None,
    method: str = "auto",
    limit: int = DEFAULT_PAIR_LIMIT,
    multiset_limit: int = DEFAULT_MULTISET_LIMIT,
    fiber_limit: int = DEFAULT_FIBER_LIMIT,
    time_limit: float = 60.0,
) -> SensitivitySpace:
    r"""The Semi-DP sensitivity space :math:`S^{D_t, A_a}` (Cho & Awan 2024, Def. 4, Sec. 4).

    Same parameters as :func:`semi_sensitivity_search`, which also returns the
    witnesses and the method used; this returns only the space.

    Examples
    --------
    >>> from accountant.invariants import Margins
    >>> space = DataSpace.of(("A", 2), ("B", 3))
    >>> s = semi_sensitivity_space(space, Margins((("A",), ("B",))), 3,
    ...                            table=[[1, 1, 0], [1, 0, 1]])
    >>> s.size, s.l1, s.l2, s.linf                           # reference T-S2b
    (7, 4, 2.0, 1)
    >>> s.label
    'Semi-DP sensitivity space, exact enumeration (actual t=(2, 2, 2, 1, 1), n=4), radius a=3; realisability by the enumerated fiber'
    """
    return semi_sensitivity_search(
        space, invariant, radius, table=table, t=t, n=n, query=query, method=method,
        limit=limit, multiset_limit=multiset_limit, fiber_limit=fiber_limit,
        time_limit=time_limit,
    ).space


# ------------------------------------------------------------------------ naive spaces


def naive_spaces(
    space: DataSpace,
    radius: int,
    query: Query | None = None,
    *,
    n: int | None = None,
    limit: int = DEFAULT_PAIR_LIMIT,
    multiset_limit: int = DEFAULT_MULTISET_LIMIT,
) -> NaiveSpaces:
    r"""The naive spaces :math:`S^{\mathcal D,A_1}`, :math:`a\cdot S^{\mathcal D,A_1}`, :math:`S^{\mathcal D,A_a}` (Cho & Awan 2024, Prop. 24).

    No invariant, replace-one adjacency, datasets of ``n`` records (``n=None``:
    assumed ``>= a``).

    Parameters
    ----------
    space:
        The data space (the histogram has ``space.n_cells`` cells).
    radius:
        ``a``.
    query:
        ``None`` (histogram) or a linear query, as for :func:`semi_sensitivity_search`.
    n:
        Number of records; distances above ``n`` do not occur, so ``A_a`` is
        ``A_{min(a, n)}``.
    limit, multiset_limit:
        Budgets of the enumeration of :math:`S^{\mathcal D,A_a}` (see :func:`kernel_moves`).

    Returns
    -------
    NaiveSpaces

    Notes
    -----
    :math:`S^{\mathcal D,A_{a'}} = \{u : \mathbf 1^\top u = 0,\ \|u^+\|_1 \le a'\}`
    (``a' = min(a, n)``); every such ``u`` is a sum of ``a'`` vectors of
    :math:`S^{\mathcal D,A_1}` (pair the records of ``u^+`` with those of ``u^-``,
    pad with 0), so :math:`\mathrm{conv}\,S^{\mathcal D,A_{a'}}\subseteq a'\,\mathrm{conv}\,S^{\mathcal D,A_1}`
    (Prop. 24), and :math:`a'(e_i - e_j)\in S^{\mathcal D,A_{a'}}` gives equality.
    Hence for the histogram and for every linear query the two naive
    alternatives have **equal** :math:`K`-norm sensitivities when ``n >= a``
    (the sets differ).

    Examples
    --------
    >>> ns = naive_spaces(DataSpace.of(("A", 2), ("B", 2)), 3)      # reference T-S3
    >>> ns.one_step.l1, round(ns.one_step.l2, 6), ns.one_step.linf
    (2, 1.414214, 1)
    >>> ns.inflated["l1"], round(ns.inflated["l2"], 6), ns.inflated["linf"]
    (6, 4.242641, 3)
    >>> ns.a_step.l1, ns.a_step.l2_squared, ns.a_step.linf
    (6, 18, 3)
    """
    a = check_int("radius", radius, minimum=1)
    if n is not None:
        n = check_int("n", n, minimum=1)
    eff = a if n is None else min(a, n)
    k = space.n_cells
    qmat = _query_matrix(space, query)
    ii, jj = np.nonzero(~np.eye(k, dtype=bool))
    e1 = np.zeros((ii.shape[0], k), dtype=np.int64)
    e1[np.arange(ii.shape[0]), ii] = 1
    e1[np.arange(ii.shape[0]), jj] = -1  # e_i - e_j: one record changes cell
    qtxt = "" if qmat is None else f"; image under the linear query ({qmat.shape[0]} x {k})"
    s1 = _space_from_array(e1 if qmat is None else e1 @ qmat.T,
                           "S^{D,A_1}: histogram, replace-one, no invariant "
                           "(Cho & Awan Prop. 24)" + qtxt)
    notes = [f"S^{{D,A_1}}: enumerated exactly ({s1.size} vectors)",
             f"a*S^{{D,A_1}}: norms of S^{{D,A_1}} times a={a} (group privacy, Sec. 4 (i))"]
    s1_rank = exact_rank(s1.array)
    inflated = _inflated_norms(s1, a, s1_rank)
    sa: SensitivitySpace | None = None
    label = (f"S^{{D,A_{eff}}}: histogram, replace-one, no invariant, d_H <= {eff} "
             "(Cho & Awan Prop. 24)" + qtxt)
    try:
        u, _ = kernel_moves(np.zeros((0, k), dtype=np.int64), k, eff, limit=limit,
                            multiset_limit=multiset_limit, what="enumerating S^{D,A_a}")
        sa = _space_from_array(u if qmat is None else u @ qmat.T, label)
        sa_norms = space_norms(sa)
        notes.append(f"S^{{D,A_a}}: enumerated exactly ({sa.size} vectors)")
    except SearchTooLarge as exc:
        sa_norms = {**_inflated_norms(s1, eff, s1_rank), "size": -1}
        notes.append(f"S^{{D,A_a}}: not enumerated ({exc}); norms exact from "
                     f"conv S^{{D,A_{eff}}} = {eff} conv S^{{D,A_1}} (Notes); size -1 = not counted")
    if n is not None and n < a:
        notes.append(f"n={n} < a={a}: d_H <= n always, so A_a = A_{n}")
    return NaiveSpaces(s1, inflated, sa, sa_norms, a, tuple(notes))


# --------------------------------------------------------------- closed-form comparison


def _inflated_norms(s: SensitivitySpace, a: int, rank: int) -> dict[str, float | int]:
    """Norms of ``a * S`` as :func:`accountant.sensitivity.group_inflated` (rank given)."""
    return {"l1": a * s.l1, "l2": sqrt_up(Fraction(a * a * s.l2_squared)),  # rounded up
            "linf": a * s.linf, "rank": rank, "dimension": s.dimension}


def _norm_text(s: SensitivitySpace, key: str) -> str:
    if key == "l2":
        sq = s.l2_squared
        r = math.isqrt(sq)
        return str(r) if r * r == sq else f"sqrt({sq}) = {math.sqrt(sq):.6f}"
    return str({"l1": s.l1, "linf": s.linf}[key])


def compare_with_closed_form(
    exact: SensitivitySpace | SensitivitySearchResult,
    closed: SensitivitySpace | None = None,
    *,
    table_shape: tuple[int, int] | None = None,
    radius: int | None = None,
) -> ClosedFormComparison:
    r"""State where a published closed form disagrees with the exact space (Cho & Awan 2024, Prop. 32).

    Parameters
    ----------
    exact:
        The exact space (or a search result; its cell-level space is used).
    closed:
        The closed form. Default: Prop. 32 as printed,
        ``table_space(r, c, radius, paper_exact=True)`` (moves only).
    table_shape:
        ``(r, c)`` for the default closed form, and to classify missing vectors
        as 2x2 moves or 3-cycles.
    radius:
        Radius for the default closed form (default: the search result's
        radius, else 3).

    Returns
    -------
    ClosedFormComparison
        Missing vectors (the closed form is unsafe for those pairs), extra
        vectors (conservative), norm differences, and whether the span (hence
        the projector of Prop. 26) agrees.

    Raises
    ------
    InvalidArgument
        No closed form and no ``table_shape``; different dimensions.

    Examples
    --------
    >>> from accountant.invariants import Margins
    >>> space = DataSpace.of(("A", 3), ("B", 3))
    >>> r = semi_sensitivity_search(space, Margins((("A",), ("B",))), 3, n=3)
    >>> cmp = compare_with_closed_form(r, table_shape=(3, 3))
    >>> cmp.agrees, len(cmp.missing), len(cmp.extra)
    (False, 12, 0)
    >>> print(cmp.lines[1])
    The closed form misses 12 of the 31 vectors of the exact space: 12 3-cycle(s), e.g. (1, 0, -1, 0, -1, 1, -1, 1, 0). A mechanism calibrated to the closed form does not cover pairs of conforming datasets differing by these.
    """
    if isinstance(exact, SensitivitySearchResult):
        a_default = exact.radius
        ex = exact.cell_space if closed is None else exact.space
    else:
        a_default = 3
        ex = exact
    if closed is None:
        if table_shape is None:
            raise InvalidArgument(
                "compare_with_closed_form needs either `closed` or `table_shape=(r, c)` "
                "(for Cho & Awan Prop. 32 as printed)."
            )
        r, c = table_shape
        closed = table_space(r, c, a_default if radius is None else radius, paper_exact=True)
    if closed.dimension != ex.dimension:
        raise InvalidArgument(
            f"the closed form has dimension {closed.dimension}, the exact space {ex.dimension}."
        )
    es, cs = set(ex.vectors), set(closed.vectors)
    missing = tuple(sorted(es - cs))
    extra = tuple(sorted(cs - es))
    kinds: dict[str, int] = {}
    if table_shape is not None and table_shape[0] * table_shape[1] == ex.dimension:
        mv = set(table_moves(*table_shape))
        cy = set(table_three_cycles(*table_shape))
        for v in missing:
            kind = "2x2 move" if v in mv else "3-cycle" if v in cy else "other vector"
            kinds[kind] = kinds.get(kind, 0) + 1
    lines = [f"closed form: {closed.label}; exact: {ex.label}."]
    if not missing and not extra:
        lines.append(f"The closed form equals the exact space ({ex.size} vectors).")
    if missing:
        what = ", ".join(f"{v} {k}(s)" for k, v in kinds.items())
        lines.append(
            f"The closed form misses {len(missing)} of the {ex.size} vectors of the exact space"
            + (f": {what}" if what else "") + f", e.g. {missing[-1]}. A mechanism calibrated to "
            "the closed form does not cover pairs of conforming datasets differing by these."
        )
    if extra:
        lines.append(
            f"The closed form contains {len(extra)} vector(s) not realisable here, e.g. "
            f"{extra[-1]} (conservative, not tight)."
        )
    en, cn = space_norms(ex), space_norms(closed)
    for key in ("l1", "l2", "linf"):
        e_v, c_v = _norm_text(ex, key), _norm_text(closed, key)
        if key == "l2":
            cmp_ = (ex.l2_squared > closed.l2_squared) - (ex.l2_squared < closed.l2_squared)
            ratio = math.sqrt(Fraction(ex.l2_squared, max(closed.l2_squared, 1)))
        else:
            ev, cv = int(en[key]), int(cn[key])
            cmp_ = (ev > cv) - (ev < cv)
            ratio = ev / cv if cv else math.inf
        if cmp_ == 0:
            lines.append(f"{key} sensitivity: {e_v} in both.")
        elif cmp_ > 0:
            lines.append(f"{key} sensitivity: exact {e_v} vs closed form {c_v} -- the closed form "
                         f"UNDERSTATES it (factor {ratio:.6f}).")
        else:
            lines.append(f"{key} sensitivity: exact {e_v} vs closed form {c_v} -- the closed form "
                         f"overstates it (conservative; factor {ratio:.6f}).")
    union = exact_rank(np.vstack([ex.array, closed.array]))
    if en["rank"] == cn["rank"] == union:
        lines.append(f"span(S) agrees (rank {en['rank']}): the projector of Prop. 26 is unchanged.")
    else:
        lines.append(f"span(S) differs: rank {en['rank']} (exact) vs {cn['rank']} (closed form), "
                     f"{union} together.")
    return ClosedFormComparison(
        agrees=not missing and not extra, missing=missing, extra=extra, lines=tuple(lines),
        exact_norms=en, closed_norms=cn, exact_label=ex.label, closed_label=closed.label,
    )


def l2_exact_text(space: SensitivitySpace) -> str:
    """``l2`` as an exact expression, e.g. ``'sqrt(6)'`` (for reports)."""
    return _norm_text(space, "l2").split(" = ")[0]


__all__ = [
    "DEFAULT_FIBER_LIMIT",
    "DEFAULT_MULTISET_LIMIT",
    "DEFAULT_PAIR_LIMIT",
    "METHODS",
    "ClosedFormComparison",
    "NaiveSpaces",
    "Query",
    "SensitivitySearchResult",
    "compare_with_closed_form",
    "exact_rank",
    "kernel_moves",
    "l2_exact_text",
    "naive_spaces",
    "semi_sensitivity_search",
    "semi_sensitivity_space",
    "space_norms",
]
