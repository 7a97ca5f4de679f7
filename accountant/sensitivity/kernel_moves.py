r"""Candidate difference vectors of the Semi-DP sensitivity space: multisets of at most a(t) record moves.

Every semi-adjacent pair at radius r differs by a vector that is a sum of at most
r record moves in the kernel of the invariant [CA24, Def. 4, Prop. 32];
:func:`kernel_moves` enumerates those sums level by level, vectorised, within a
stated size limit.
"""

from __future__ import annotations

import itertools
import math
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from semidp.accountant.combinatorics.record_multisets import RecordOffsets
from semidp.accountant.core.arguments import check_int
from semidp.accountant.core.budget import Budget
from semidp.accountant.core.errors import BudgetExhausted, SearchTooLarge
from semidp.accountant.sensitivity.results import DEFAULT_MULTISET_LIMIT, DEFAULT_PAIR_LIMIT


def multiset_count(k: int, radius: int) -> int:
    return sum(math.comb(k + s - 1, s) for s in range(1, radius + 1))


@dataclass
class MultisetLevel:
    combos: NDArray[np.int64]  # (M, s) cells of each multiset, nondecreasing
    image: NDArray[np.int64]  # (M, rows) exact A-image
    order: NDArray[np.int64]  # positions sorted by hash
    starts: NDArray[np.int64]  # runs of equal hash (in sorted positions)
    lens: NDArray[np.int64]


def multiset_levels(a: NDArray[np.int64], k: int, radius: int) -> list[MultisetLevel]:
    """Multisets of ``s = 1..radius`` cells, hashed through ``A`` and grouped by hash."""
    cellkey = RecordOffsets(a, DEFAULT_MULTISET_LIMIT).cellkey  # linear 64-bit hash of A e_c
    out: list[MultisetLevel] = []
    at = a.T.astype(np.int64)  # (k, rows)
    for s in range(1, radius + 1):
        combos = np.array(list(itertools.combinations_with_replacement(range(k), s)), dtype=np.int64).reshape(-1, s)
        keys = cellkey[combos].sum(axis=1)  # wraps modulo 2**64: fine for a hash
        image = at[combos].sum(axis=1)  # (M, rows), exact
        order = np.argsort(keys, kind="stable").astype(np.int64)
        sk = keys[order]
        cuts = np.flatnonzero(np.diff(sk) != 0) + 1
        starts = np.concatenate([[0], cuts]).astype(np.int64)
        ends = np.concatenate([cuts, [sk.shape[0]]]).astype(np.int64)
        out.append(MultisetLevel(combos, image, order, starts, ends - starts))
    return out


def pair_count(levels: list[MultisetLevel]) -> int:
    return sum(int((lv.lens * (lv.lens - 1) // 2).sum()) for lv in levels)


def run_pairs(
    starts: NDArray[np.int64], lens: NDArray[np.int64], chunk: int
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


def dense_counts(combos: NDArray[np.int64], k: int) -> NDArray[np.int64]:
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
    budget: Budget | None = None,
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
    budget:
        The wall-clock :class:`~semidp.accountant.core.budget.Budget` (default 60 s from the call) before giving up
        with :class:`~accountant.core.errors.BudgetExhausted`.
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
    budget = Budget.of(60.0) if budget is None else budget
    t0 = time.monotonic()
    label = what or f"enumerating A u = 0 with |u+|_1 <= {radius} over {cells} cells"
    msets = multiset_count(cells, radius)
    if msets > multiset_limit:
        raise SearchTooLarge(
            f"{label} (multisets of <= {radius} records)",
            msets,
            multiset_limit,
            hint="Raise `multiset_limit` if memory allows (about 8*(radius + rows) bytes "
            "per multiset), or use a closed form.",
        )
    if radius == 0:
        return np.zeros((0, cells), dtype=np.int64), 0
    levels = multiset_levels(amat, cells, radius)
    pairs = pair_count(levels)
    if pairs > limit:
        raise SearchTooLarge(
            f"{label} (multiset pairs with equal A-image)",
            pairs,
            limit,
            hint="Raise `limit`, or use a closed form.",
        )
    chunk = max(1_000, 4_000_000 // max(1, cells))
    found: list[NDArray[np.int64]] = []
    for lv in levels:
        for ii, jj in run_pairs(lv.starts, lv.lens, chunk):
            if budget.expired:
                spent = time.monotonic() - t0
                raise BudgetExhausted(f"--time-limit ran out after {spent:.3g} s while {label}", len(found))
            pi = lv.order[ii]
            ni = lv.order[jj]
            cp = lv.combos[pi]
            cn = lv.combos[ni]
            overlap = (cp[:, :, None] == cn[:, None, :]).any(axis=(1, 2))
            same = (lv.image[pi] == lv.image[ni]).all(axis=1)  # exact re-check of the hash
            keep = ~overlap & same
            if keep.any():
                found.append(dense_counts(cp[keep], cells) - dense_counts(cn[keep], cells))
    if not found:
        return np.zeros((0, cells), dtype=np.int64), pairs
    u = np.vstack(found)
    if (u @ amat.T != 0).any() or (u.sum(axis=1) != 0).any():  # pragma: no cover - invariant
        raise AssertionError("internal error: a candidate is not in ker A")
    return u, pairs
