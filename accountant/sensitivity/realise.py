r"""Which candidate difference vectors are realised by conforming datasets: by the fiber or by an integer program.

A candidate u belongs to the sensitivity space S when some histogram of the
fiber keeps both x and x + u non-negative [CA24, Def. 4]; decided by covering
rows of the enumerated fiber or by a HiGHS feasibility program within the time
budget.
"""

from __future__ import annotations

from collections.abc import Hashable

import numpy as np
from numpy.typing import NDArray

from semidp.accountant.combinatorics.fiber import (
    AnyInvariant,
    Fiber,
    conforming_fiber,
    integer_point,
)
from semidp.accountant.combinatorics.record_multisets import RowBits
from semidp.accountant.core.budget import Budget
from semidp.accountant.core.errors import BudgetExhausted, InvalidArgument, SearchTooLarge
from semidp.accountant.data.callable_invariant import CallableInvariant
from semidp.accountant.data.dataspace import DataSpace
from semidp.accountant.data.invariants import NoInvariant

FIRST_BIT = np.unpackbits(np.arange(256, dtype=np.uint8)[:, None], axis=1).argmax(axis=1)


def covering_rows(rows: NDArray[np.int64], lowers: NDArray[np.int64]) -> NDArray[np.int64]:
    """For each lower bound ``L``: index of a row ``h >= L`` of ``rows``, or ``-1``."""
    q = lowers.shape[0]
    out = np.full(q, -1, dtype=np.int64)
    if q == 0 or rows.shape[0] == 0:
        return out
    bits = RowBits(rows)
    vmax = int(lowers.max())
    stack = np.stack([np.zeros((bits.k, bits.nbytes), dtype=np.uint8)] + [bits.bits(v) for v in range(1, vmax + 1)])
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
            row = fb * 8 + FIRST_BIT[byte]
            sel = idx[b : b + step]
            out[sel[has]] = row[has]
    return out


def realise_by_fiber(rows: NDArray[np.int64], lowers: NDArray[np.int64]) -> tuple[NDArray[np.int8], NDArray[np.int64]]:
    idx = covering_rows(rows, lowers)
    status = np.where(idx >= 0, 1, -1).astype(np.int8)
    wit = np.zeros_like(lowers)
    ok = idx >= 0
    wit[ok] = rows[idx[ok]]
    return status, wit


def realise_by_ilp(
    fib: Fiber, lowers: NDArray[np.int64], budget: Budget, known: NDArray[np.int64] | None = None
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
        st, h = integer_point(fib.matrix, fib.rhs, top, upper, budget=budget)
        if st == "feasible" and h is not None:
            cover = (status == 0) & (lowers <= h[None, :]).all(axis=1)
            status[cover] = 1
            wit[cover] = h
    for i in np.argsort(-lowers.sum(axis=1), kind="stable").tolist():
        if status[i] != 0 or unknown[i]:
            continue
        if budget.expired:
            break
        st, h = integer_point(fib.matrix, fib.rhs, lowers[i], upper, budget=budget)
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


def fiber_pair_differences(
    groups: list[NDArray[np.int64]], radius: int, limit: int, budget: Budget, what: str
) -> tuple[NDArray[np.int64], NDArray[np.int64], int]:
    """``(u, h)`` for all pairs ``h != h'`` inside each group with ``|h - h'|_1 <= 2a``."""
    pairs = sum(g.shape[0] * (g.shape[0] - 1) // 2 for g in groups)
    if pairs > limit:
        raise SearchTooLarge(
            f"{what} (pairs of conforming histograms)",
            pairs,
            limit,
            hint="Raise `limit`, or use a matrix invariant (enumeration).",
        )
    us: list[NDArray[np.int64]] = []
    hs: list[NDArray[np.int64]] = []
    for g in groups:
        m = g.shape[0]
        step = max(1, 2_000_000 // max(1, m * g.shape[1]))
        for b in range(0, m, step):
            if budget.expired:
                raise BudgetExhausted(f"--time-limit ran out while {what}", b)
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


def fiber_groups(
    space: DataSpace, invariant: AnyInvariant, fib: Fiber | None, n: int | None, fiber_limit: int
) -> tuple[list[NDArray[np.int64]], str]:
    """Conforming histograms grouped by invariant value (one group at the actual ``t``)."""
    if fib is not None:
        rows = fib.enumerate(limit=fiber_limit)
        return [rows], f"all pairs of the {rows.shape[0]} conforming histograms"
    if n is None:
        raise InvalidArgument("the worst case over t by pairs of histograms needs n (the number of records).")
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
    return groups, (f"all pairs within the {len(groups)} fibers of the {allh.shape[0]} histograms with n={n} records")
