r"""a(t) by breadth-first graph search over the fiber of conforming histograms [CA24, Def. 13].

For each histogram of :math:`\mathcal D_t`, each record and each target level,
the nearest conforming dataset is found by a search over record multisets;
the maximum over all is a(t). Exact within its size and time budget; past it,
the witnessed value and a proven upper bound are returned.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from semidp.accountant.combinatorics.fiber import (
    DEFAULT_LIMIT,
    AnyInvariant,
    Fiber,
    FiberSize,
    count_datasets,
)
from semidp.accountant.combinatorics.record_multisets import RecordOffsets, RowBits, dedupe_rows
from semidp.accountant.combinatorics.semiadjacent_results import (
    COUNT_DATASETS_LIMIT,
    DEFAULT_LEVEL_LIMIT,
    SemiAdjacentResult,
    Witness,
    check_budget,
    make_fiber,
    pair_bound_fn,
    replacement_distance,
    zero_result,
)
from semidp.accountant.core.arguments import check_int
from semidp.accountant.core.budget import Budget, budget_argument
from semidp.accountant.core.errors import InvalidArgument, VerificationError
from semidp.accountant.core.progress import Progress
from semidp.accountant.data.dataspace import DataSpace


@dataclass
class PairOutcome:
    dist: int  # exact directed Hausdorff distance (or lower bound if not complete)
    complete: bool
    g_index: int  # row of G_x attaining dist
    g_near: NDArray[np.int64]  # nearest point of G_x' to that row


def pair_search(
    bits: RowBits,
    gy: NDArray[np.int64],
    x: int,
    y: int,
    offsets: RecordOffsets | None,
    budget: Budget,
) -> PairOutcome:
    """Directed Hausdorff distance max_{g in G_x} min_{g' in G_y} |g - g'|_1 / 2, level by level.

    Breadth-first in the record-move graph from all of ``G_x`` at once: rows
    still unresolved after level ``r - 1`` are at distance ``>= r``; a row
    resolved at level ``r`` is at distance exactly ``r`` and the offset found
    gives its nearest point. ``dist = -1`` means nothing was resolved before
    the deadline.
    """
    gx = bits.gx
    if offsets is None:
        return pair_direct(gx, gy, np.arange(gx.shape[0], dtype=np.int64), budget)
    a = offsets.a
    if np.array_equal(a[:, x], a[:, y]):
        return PairOutcome(0, True, 0, gx[0].copy())  # G_x = G_y
    unres = bits.all_rows()
    out = PairOutcome(-1, False, 0, gx[0].copy())
    r = 0
    while unres.any():
        r += 1
        if offsets.size(r) > offsets.level_limit:
            rows = np.flatnonzero(np.unpackbits(unres)[: bits.m]).astype(np.int64)
            direct = pair_direct(gx, gy, rows, budget)
            return direct if direct.dist >= 0 else out
        if budget.expired:
            return out
        nset, pset = offsets.candidates(r, x, y)
        if nset.shape[0] == 0:
            continue
        nset, first_n, _ = dedupe_rows(nset, r)
        pset = pset[first_n]
        resolved = bits.covered(nset) & unres
        j = bits.first_row(resolved)
        if j >= 0:
            g = gx[j]
            nidx = int(np.flatnonzero((nset <= g[None, :]).all(axis=1))[0])
            out = PairOutcome(r, False, j, g - nset[nidx] + pset[nidx])
        unres &= ~resolved
    out.complete = True
    return out


def pair_direct(gx: NDArray[np.int64], gy: NDArray[np.int64], rows: NDArray[np.int64], budget: Budget) -> PairOutcome:
    """Exact nearest points by direct L1 distances (callable invariants; wide levels)."""
    best = -1
    best_g = int(rows[0])
    best_near = gx[0]
    chunk = max(1, 20_000_000 // max(1, gy.shape[0] * gx.shape[1]))
    for s in range(0, rows.shape[0], chunk):
        if budget.expired:
            return PairOutcome(best, False, best_g, best_near.copy())
        idx = rows[s : s + chunk]
        d = np.abs(gx[idx][:, None, :] - gy[None, :, :]).sum(axis=2)
        mins = d.min(axis=1)
        j = int(mins.argmax())
        if mins[j] // 2 > best:
            best = int(mins[j] // 2)
            best_g = int(idx[j])
            best_near = gy[int(d[j].argmin())]
    return PairOutcome(best, True, best_g, best_near.copy())


def semiadjacent_by_graph_search(
    space: DataSpace,
    invariant: AnyInvariant,
    *,
    table: Sequence[int] | NDArray[np.integer] | None = None,
    t: object = None,
    n: int | None = None,
    limit: int = DEFAULT_LIMIT,
    budget: Budget | None = None,
    level_limit: int = DEFAULT_LEVEL_LIMIT,
    **legacy: float,
) -> SemiAdjacentResult:
    r"""a(t) by enumerating conforming histograms and searching outward [CA24, Def. 13].

    Uses the histogram reduction (Lemmas 1-2 of ``semiadjacent_search.md``):
    ``a(t) = 1 + max_{x != x'} max_{g in G_x} min_{g' in G_x'} |g - g'|_1 / 2``.
    For each ordered pair ``(x, x')`` (most promising first by the structural
    bound, skipped once the bound cannot beat the current best), every
    ``g in G_x`` is expanded breadth-first in the record-move graph: level ``r``
    consists of the offsets ``P - N`` moving ``r`` records that map ``G_x`` into
    ``G_x'``'s affine space; ``g`` is resolved at the first level with an
    offset whose removed records ``N`` it contains. For callable invariants
    the nearest point is found by direct distances instead.

    Parameters
    ----------
    space, invariant:
        The data space and the published statistic.
    table:
        The confidential histogram (gives ``t`` and ``n``). a(t) is still the
        maximum over **all** conforming datasets, not just this one.
    t, n:
        The published value and number of records, when no table is given.
    limit:
        Largest number of conforming histograms to enumerate; the fiber size is
        estimated first and the search refused above it.
    budget:
        The wall-clock :class:`~semidp.accountant.core.budget.Budget` (default 60 s; the deprecated ``time_limit=``
        seconds still works for one release); when it runs out the result has ``exact=False`` and says so.
    level_limit:
        Largest number of record multisets one search level may hold before
        falling back to direct distances.

    Returns
    -------
    SemiAdjacentResult
        ``method="graph-search"``.

    Raises
    ------
    SearchTooLarge
        If the estimated fiber size exceeds ``limit`` (message gives both).
    InvalidArgument
        Bad inputs, or no dataset conforms to ``t``.

    Examples
    --------
    >>> from semidp.accountant.data.invariants import Margins
    >>> space = DataSpace.of(("A", 2), ("B", 2))
    >>> r = semiadjacent_by_graph_search(space, Margins((("A",), ("B",))), table=(2, 1, 1, 0))
    >>> r.value, r.exact, r.fiber_size, r.n_datasets      # docs/reference/semi-dp.md §9, T-A3
    (3, True, 2, 16)
    """
    t0 = time.monotonic()
    check_budget(limit)
    budget = budget_argument(budget, legacy, where="semiadjacent_by_graph_search", default=60.0)
    check_int("level_limit", level_limit, minimum=1)
    fib = make_fiber(space, invariant, table, t, n)
    est = fib.estimate_size(budget=budget)  # an expired budget gives up counting: the bound decides the limit
    fibrows = fib.enumerate(limit=limit, estimate=est)
    return graph_search_on(fib, fibrows, est, budget, t0, level_limit, note="")


def graph_search_on(
    fib: Fiber,
    fibrows: NDArray[np.int64],
    est: FiberSize,
    budget: Budget,
    t0: float,
    level_limit: int,
    note: str,
) -> SemiAdjacentResult:
    if fibrows.shape[0] == 0:
        raise InvalidArgument(
            f"No dataset with n={fib.n} records has invariant value t={fib.t!r} "
            f"({fib.invariant.describe()}); D_t is empty and a(t) is undefined."
        )
    fsize = int(fibrows.shape[0])
    ndata = count_datasets(fibrows, fib.n) if fsize <= COUNT_DATASETS_LIMIT else None
    support = [int(c) for c in np.flatnonzero(fibrows.any(axis=0))]
    method = "graph-search"
    notes = [note] if note else []
    notes.append(f"fiber: {fsize} conforming histograms (estimate before enumerating: {est.describe()})")
    if len(support) <= 1:
        return zero_result(fib, fibrows[0], method, fsize, ndata, "", t0)
    small: NDArray[Any] = fibrows.astype(np.int16 if fib.n < 2**15 else np.int32)
    gcache: dict[int, NDArray[Any]] = {}

    def gset(x: int) -> NDArray[Any]:
        """G_x = {h - e_x : h conforming, h_x >= 1} (the other n - 1 records), cached."""
        if x not in gcache:
            if len(gcache) >= 4:
                gcache.pop(next(iter(gcache)))
            rows = small[small[:, x] >= 1]
            rows[:, x] -= 1
            gcache[x] = rows
        return gcache[x]

    pair_bound, bound_note = pair_bound_fn(fib)
    offsets = RecordOffsets(fib.matrix, level_limit) if fib.matrix is not None else None
    pairs = [(x, y) for x in support for y in support if x != y]
    pairs.sort(key=lambda p: (-pair_bound(*p), p))
    best = -1
    best_w: tuple[int, int, NDArray[np.int64], NDArray[np.int64]] | None = None
    complete = True
    unchecked_bound = -1
    bits_cache: dict[int, RowBits] = {}
    progress = Progress("a(t) graph search, record pairs", len(pairs))
    for idx, (x, y) in enumerate(pairs):
        progress.update(idx, f"a(t) >= {best + 1}")
        if pair_bound(x, y) <= best:
            continue
        if budget.expired:
            complete = False
            unchecked_bound = max(pair_bound(*p) for p in pairs[idx:])
            notes.append(f"time budget ran out after {idx} of {len(pairs)} record pairs")
            break
        if x not in bits_cache:
            if sum(b.nbytes * b.k * len(b._bits) for b in bits_cache.values()) > 64_000_000:
                bits_cache.clear()
            bits_cache[x] = RowBits(gset(x))
        gy = gset(y) if offsets is None else bits_cache[x].gx[:0]
        out = pair_search(bits_cache[x], gy, x, y, offsets, budget)
        if not out.complete:
            complete = False
            unchecked_bound = max(pair_bound(*p) for p in pairs[idx:])
            notes.append(f"time budget ran out inside record pair ({x}, {y})")
        if out.dist > best:
            best = out.dist
            best_w = (x, y, bits_cache[x].gx[out.g_index].astype(np.int64), out.g_near.astype(np.int64))
        if not out.complete:
            break
    progress.close()
    if best_w is None:  # the budget ran out before any pair was resolved
        x, y = pairs[0]
        g = gset(x)[0].astype(np.int64)
        near = pair_direct(gset(x), gset(y), np.zeros(1, dtype=np.int64), Budget.unlimited())
        best = near.dist
        best_w = (x, y, g, near.g_near.astype(np.int64))
    x, y, g, g2 = best_w
    h = g.copy()
    h[x] += 1
    h2 = g2.copy()
    h2[y] += 1
    w = Witness(tuple(int(v) for v in h), x, y, tuple(int(v) for v in h2), replacement_distance(h, x, h2, y))
    value = w.distance
    if value != 1 + best:
        raise VerificationError(f"internal error: witness distance {value} != 1 + {best}")
    upper = value if complete else max(value, 1 + unchecked_bound)
    notes.append(bound_note)
    return SemiAdjacentResult(
        value, upper, complete, method, w, fsize, ndata, fib.t, fib.n, "; ".join(notes), time.monotonic() - t0
    )
