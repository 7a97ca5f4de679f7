r"""The exact semi-adjacent parameter a(t) by search, with witnesses (Cho & Awan 2024, Def. 13).

Definition (Hamming metric, datasets of ``n`` ordered individuals):

.. math::

    a(t) = \sup_{X \in D_t} \max_{i \in [n]} \sup_{x' \in \mathcal X_{t,i}}
           \min\{ d_H(X, X') : X' \in D_t,\ X'_i = x' \}.

It depends on ``t`` only: the supremum runs over **all** conforming datasets,
not just the confidential one. For a permutation-invariant invariant (every
count, margin or linear invariant of the histogram, and every
:class:`~accountant.callable_invariant.CallableInvariant`) it reduces to
histograms (proof in ``accountant/semiadjacent_search.md``, Lemmas 1-2):

.. math::

    a(t) = \max_{h \in F_t,\ x \in \mathrm{supp}\,h,\ x' \in \mathcal X_t}
           \ \min_{h' \in F_t,\ h'_{x'} \ge 1}
           \ [x \ne x'] + \tfrac12 \| (h - e_x) - (h' - e_{x'}) \|_1
         = 1 + \max_{x \ne x'} \max_{g \in G_x} \min_{g' \in G_{x'}} \tfrac12\|g - g'\|_1

(when ``|X_t| >= 2``; otherwise ``a(t) = 0``), where ``G_x = {h - e_x : h in F_t, h_x >= 1}``
are "the other ``n - 1`` records" when the individual holds ``x``. So a(t) is one
plus the largest directed Hausdorff distance between reduced fibers in the
record-move metric.

Three independent methods:

``"brute-force"`` (:func:`semiadjacent_by_brute_force`)
    Def. 13 literally, over all ``k**n`` ordered datasets. Tiny cases only;
    the reference the others are tested against.
``"graph-search"`` (:func:`semiadjacent_by_graph_search`)
    Enumerates the conforming histograms (refusing above a size limit
    estimated before enumerating) and, for every pair ``x != x'``, searches
    breadth-first outwards from every ``g in G_x`` in the record-move graph:
    level ``r`` holds the offsets ``delta = P - N`` (``P, N`` multisets of ``r``
    records) with ``A delta = A (e_x - e_x')``; ``g + delta`` is conforming iff
    ``g >= N``, so a level is tested for all of ``G_x`` at once.
``"integer-program"`` (:func:`semiadjacent_by_integer_program`)
    No enumeration: the inner minimum is an integer program (HiGHS via
    :func:`scipy.optimize.milp`), and the outer maximum is decided pair by pair
    ("is there ``g in G_x`` at distance ``>= m`` from ``G_x'``?") by a master
    integer program with one disjunctive cut per offset found too close
    (lazy cut generation), stopped as soon as the structural upper bound
    (Cho & Awan 2024, Thm. 16: ``p + 1`` for one-way margins of ``p`` features)
    is reached.

Every result carries a :class:`Witness` (dataset, record, target, nearest
conforming dataset, distance) that :mod:`verify.witness` re-checks from scratch.
"""

from __future__ import annotations

import itertools
import math
import time
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from accountant.progress import Progress
from accountant.arguments import check_int, check_positive
from accountant.callable_invariant import CallableInvariant
from accountant.dataspace import DataSpace
from accountant.errors import InvalidArgument, SearchTooLarge, VerificationError
from accountant.fiber import (
    DEFAULT_LIMIT,
    AnyInvariant,
    Fiber,
    FiberSize,
    conforming_fiber,
    count_datasets,
    solve_milp,
)
from accountant.invariants import Counting, Margins, NoInvariant, Total

#: The methods accepted by :func:`semiadjacent_parameter`.
METHODS = ("auto", "graph-search", "integer-program", "brute-force")

#: Default largest number of ordered datasets brute force enumerates.
DEFAULT_BRUTE_LIMIT = 200_000

#: Largest number of record multisets one breadth-first level may hold.
DEFAULT_LEVEL_LIMIT = 2_000_000

#: Number of conforming histograms up to which ``|D_t|`` (ordered) is counted.
_COUNT_DATASETS_LIMIT = 200_000



# ----------------------------------------------------------------------------- results


@dataclass(frozen=True, slots=True)
class Witness:
    """Where the maximum of Def. 13 is attained (Cho & Awan 2024, Def. 13).

    Individual ``i`` holds record ``record`` in a dataset with histogram
    ``dataset``; the cheapest conforming dataset in which ``i`` holds
    ``target`` has histogram ``nearest`` and is at Hamming distance
    ``distance``. :meth:`ordered` builds ordered datasets realising it.

    Examples
    --------
    >>> w = Witness(dataset=(1, 1, 1, 1), record=0, target=3, nearest=(1, 1, 1, 1), distance=2)
    >>> X, X2, i = w.ordered()
    >>> X, X2, i
    ((0, 1, 2, 3), (3, 1, 2, 0), 0)
    """

    dataset: tuple[int, ...]
    """Histogram ``h`` of the dataset ``X``."""
    record: int
    """Cell ``x = X_i`` of the individual."""
    target: int
    """Cell ``x'`` the individual is moved to (``x'`` in ``X_t``)."""
    nearest: tuple[int, ...]
    """Histogram ``h'`` of the nearest conforming ``X'`` with ``X'_i = x'``."""
    distance: int
    """``min d_H(X, X')``; equals the reported value for the maximising witness."""
    individual: int | None = None
    """Position ``i`` when the search worked on ordered datasets (brute force)."""
    ordered_dataset: tuple[int, ...] | None = None
    """The ordered dataset ``X`` (cells), when the search produced one."""
    ordered_nearest: tuple[int, ...] | None = None
    """The ordered dataset ``X'`` (cells), when the search produced one."""

    def ordered(self) -> tuple[tuple[int, ...], tuple[int, ...], int]:
        """Ordered datasets ``(X, X', i)`` with ``X_i = record``, ``X'_i = target`` and
        ``d_H(X, X') = distance``-realising alignment (Lemma 1 of the note).

        If the search stored ordered datasets they are returned; otherwise
        individual ``0`` holds ``record``, the common part of
        ``h - e_record`` and ``h' - e_target`` is aligned position by position,
        and the leftovers are paired arbitrarily.
        """
        if (
            self.ordered_dataset is not None
            and self.ordered_nearest is not None
            and self.individual is not None
        ):
            return self.ordered_dataset, self.ordered_nearest, self.individual
        g = list(self.dataset)
        g2 = list(self.nearest)
        g[self.record] -= 1
        g2[self.target] -= 1
        if min(g) < 0 or min(g2) < 0:
            raise InvalidArgument(
                "witness histograms do not contain the record / target "
                f"(record {self.record} in {self.dataset}, target {self.target} in {self.nearest})."
            )
        common = [min(a, b) for a, b in zip(g, g2)]
        left = [a - c for a, c in zip(g, common)]
        right = [b - c for b, c in zip(g2, common)]
        xs = [self.record]
        ys = [self.target]
        for c, m in enumerate(common):
            xs += [c] * m
            ys += [c] * m
        xs += [c for c, m in enumerate(left) for _ in range(m)]
        ys += [c for c, m in enumerate(right) for _ in range(m)]
        return tuple(xs), tuple(ys), 0


@dataclass(frozen=True, slots=True)
class SemiAdjacentResult:
    """The semi-adjacent parameter with its witness (Cho & Awan 2024, Def. 13).

    When :attr:`exact` is false (a budget ran out), :attr:`value` is a
    witnessed **lower** bound and :attr:`upper` a proven upper bound; use
    :attr:`upper` wherever a conservative radius is needed.
    """

    value: int
    """a(t) when exact; otherwise the largest distance witnessed (a lower bound)."""
    upper: int
    """A proven upper bound on a(t) (equal to :attr:`value` when exact)."""
    exact: bool
    """Whether :attr:`value` is proven to be a(t)."""
    method: str
    """``"graph-search"``, ``"integer-program"`` or ``"brute-force"``."""
    witness: Witness
    """A dataset, individual record, target and nearest dataset attaining :attr:`value`."""
    fiber_size: int | None
    """Number of conforming histograms, when known exactly (``None`` otherwise)."""
    n_datasets: int | None
    """``|D_t|``: number of conforming **ordered** datasets, when counted."""
    t: Hashable
    """The invariant value."""
    n: int
    """Number of records."""
    note: str = ""
    """How the answer was obtained: method switches, budgets that ran out, bounds used."""
    elapsed: float = field(default=0.0, compare=False)
    """Wall-clock seconds spent."""


# ------------------------------------------------------------------------ the formula


def replacement_distance(
    dataset: Sequence[int] | NDArray[np.integer[Any]],
    record: int,
    nearest: Sequence[int] | NDArray[np.integer[Any]],
    target: int,
) -> int:
    r"""Least Hamming distance between orderings (Lemma 1 of ``semiadjacent_search.md``).

    For ``X`` with histogram ``h`` and ``X_i = x``, the minimum of
    ``d_H(X, X')`` over ordered ``X'`` with histogram ``h'`` and ``X'_i = x'`` is

    .. math::

        [x \ne x'] + \tfrac12 \| (h - e_x) - (h' - e_{x'}) \|_1
        = \tfrac12\|h - h'\|_1 + 2 - [h_x > h'_x] - [h'_{x'} > h_{x'}]
          \quad (x \ne x').

    Parameters
    ----------
    dataset, nearest:
        Histograms ``h`` and ``h'`` with the same total.
    record, target:
        Cells ``x`` (``h_x >= 1``) and ``x'`` (``h'_{x'} >= 1``).

    Raises
    ------
    InvalidArgument
        Different lengths or totals, or ``h_x = 0`` / ``h'_{x'} = 0``.

    Examples
    --------
    >>> replacement_distance((1, 1, 1, 1), 0, (1, 1, 1, 1), 3)  # swap with the (2,2) record
    2
    >>> replacement_distance((2, 1, 1, 0), 0, (3, 0, 0, 1), 3)  # Example 5 of the paper
    3
    """
    h = [int(v) for v in dataset]
    h2 = [int(v) for v in nearest]
    if len(h) != len(h2) or sum(h) != sum(h2):
        raise InvalidArgument(
            f"histograms {tuple(h)} and {tuple(h2)} must have the same length and total."
        )
    if not (0 <= record < len(h)) or h[record] < 1:
        raise InvalidArgument(f"record cell {record} must be a nonempty cell of {tuple(h)}.")
    if not (0 <= target < len(h2)) or h2[target] < 1:
        raise InvalidArgument(f"target cell {target} must be a nonempty cell of {tuple(h2)}.")
    h[record] -= 1
    h2[target] -= 1
    l1 = sum(abs(a - b) for a, b in zip(h, h2))
    return int(record != target) + l1 // 2


# ---------------------------------------------------------------------- upper bounds


def _pair_bound_fn(fib: Fiber) -> tuple[Callable[[int, int], int], str]:
    """Bound on ``min_{g' in G_x'} |g - g'|_1 / 2`` valid for every ``g in G_x``.

    Margins over pairwise-disjoint feature sets (one-way margins in particular):
    the number of margins on which ``x`` and ``x'`` differ (the argument of
    Cho & Awan 2024, Thm. 16: one compensating record per changed margin; a
    record with the target's margin value exists because ``x'`` is in ``X_t``).
    Total / no invariant: 0. Counting over disjoint cell sets: 0 or 1. Otherwise
    the trivial ``n - 1``.
    """
    space = fib.space
    inv = fib.invariant
    trivial = fib.n - 1
    if isinstance(inv, (NoInvariant, Total)):
        return (lambda x, y: 0), "no constraint besides n: a(t) <= 1"
    if isinstance(inv, Margins):
        sets = [tuple(space.index(f) for f in m) for m in inv.margins]
        flat = [i for s in sets for i in s]
        if len(flat) == len(set(flat)):
            recs = [space.record(c) for c in range(space.n_cells)]

            def margin_bound(x: int, y: int) -> int:
                rx, ry = recs[x], recs[y]
                return sum(1 for s in sets if any(rx[i] != ry[i] for i in s))

            return margin_bound, (
                f"Cho & Awan 2024, Thm. 16 (margins over {len(sets)} disjoint feature sets): "
                f"a(t) <= {len(sets) + 1}"
            )
    if isinstance(inv, Counting):
        members = [set(s) for s in inv.sets]
        if all(not (members[i] & members[j]) for i in range(len(members)) for j in range(i)):
            sig = [next((j for j, s in enumerate(members) if c in s), -1) for c in range(space.n_cells)]
            return (lambda x, y: int(sig[x] != sig[y])), "disjoint counting sets: a(t) <= 2"
    return (lambda x, y: trivial), f"trivial bound a(t) <= n = {fib.n}"


# ------------------------------------------------------------------ record multisets


def _splitmix64(i: int) -> int:
    z = (i + 0x9E3779B97F4A7C15) & 0xFFFFFFFFFFFFFFFF
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & 0xFFFFFFFFFFFFFFFF
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & 0xFFFFFFFFFFFFFFFF
    z = z ^ (z >> 31)
    return z - (1 << 64) if z >= (1 << 63) else z


class _Offsets:
    """Offsets ``delta = P - N`` (``|P| = |N| = r`` records) with ``A delta = b``, by level.

    Multisets are hashed through fixed pseudo-random 64-bit weights of the rows
    of ``A`` (a linear, wrapping hash), joined by sorting, and every match is
    then re-checked exactly, so a hash collision can cost time but never
    correctness.
    """

    def __init__(self, a: NDArray[np.int64], level_limit: int) -> None:
        self.a = a
        self.k = a.shape[1]
        w = np.array([_splitmix64(r + 1) for r in range(a.shape[0])], dtype=np.int64)
        self.cellkey = a.T @ w  # wraps modulo 2**64: fine for a hash
        self.level_limit = level_limit
        self._levels: dict[int, tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.int64], NDArray[np.int64]]] = {}

    def size(self, r: int) -> int:
        return math.comb(self.k + r - 1, r)

    def _level(self, r: int) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.int64], NDArray[np.int64]]:
        if r not in self._levels:
            combos = np.array(list(itertools.combinations_with_replacement(range(self.k), r)),
                              dtype=np.int64).reshape(-1, r)
            mult = np.zeros((combos.shape[0], self.k), dtype=np.int64)
            rows = np.repeat(np.arange(combos.shape[0]), r)
            np.add.at(mult, (rows, combos.reshape(-1)), 1)
            keys = mult @ self.cellkey
            order = np.argsort(keys, kind="stable")
            self._levels[r] = (mult, keys, order, keys[order])
        return self._levels[r]

    def candidates(self, r: int, x: int, y: int) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
        """All ``(N, P)`` at level ``r`` with ``A (P - N) = A (e_x - e_y)``, unique in ``N``."""
        mult, keys, order, skeys = self._level(r)
        shift = self.cellkey[x : x + 1] - self.cellkey[y : y + 1]  # array op: wraps silently
        target = keys + shift
        pos = np.searchsorted(skeys, target)
        pos_c = np.minimum(pos, skeys.shape[0] - 1)
        hit = skeys[pos_c] == target
        n_idx = np.flatnonzero(hit)
        b = self.a[:, x] - self.a[:, y]
        out_n: list[int] = []
        out_p: list[int] = []
        if n_idx.size:
            p_idx = order[pos_c[n_idx]]
            ok = ((mult[p_idx] - mult[n_idx]) @ self.a.T == b[None, :]).all(axis=1)
            out_n = n_idx[ok].tolist()
            out_p = p_idx[ok].tolist()
            # Rare: the first equal-key entry was a hash collision; scan the run.
            for ni, pi in zip(n_idx[~ok].tolist(), pos_c[n_idx[~ok]].tolist()):
                j = pi
                while j < skeys.shape[0] and skeys[j] == target[ni]:
                    cand = order[j]
                    if np.array_equal((mult[cand] - mult[ni]) @ self.a.T, b):
                        out_n.append(ni)
                        out_p.append(int(cand))
                        break
                    j += 1
        nn = mult[np.array(out_n, dtype=np.int64)]
        pp = mult[np.array(out_p, dtype=np.int64)]
        return nn.reshape(-1, self.k), pp.reshape(-1, self.k)


class _RowBits:
    """Bitsets over the rows of ``G_x``: ``bits(v)[c]`` marks the rows with ``g_c >= v``.

    ``N <= g`` (the offset removing the records ``N`` is available in ``g``) is
    the AND of at most ``|N|`` such bitsets, so a whole search level is a few
    word-parallel ANDs/ORs per offset instead of a row-by-offset comparison.
    """

    def __init__(self, gx: NDArray[np.int64]) -> None:
        self.gx = gx
        self.m = gx.shape[0]
        self.k = gx.shape[1]
        self.nbytes = (self.m + 7) // 8
        self._bits: dict[int, NDArray[np.uint8]] = {}
        self._stack = np.zeros((1, self.k, self.nbytes), dtype=np.uint8)

    def bits(self, v: int) -> NDArray[np.uint8]:
        if v not in self._bits:
            self._bits[v] = np.packbits(self.gx.T >= v, axis=1).reshape(self.k, self.nbytes)
        return self._bits[v]

    def all_rows(self) -> NDArray[np.uint8]:
        return np.packbits(np.ones(self.m, dtype=bool)).reshape(self.nbytes)

    def covered(self, nset: NDArray[np.int64]) -> NDArray[np.uint8]:
        """Bitset of rows ``g`` with ``N <= g`` for some row ``N`` of ``nset``."""
        out = np.zeros(self.nbytes, dtype=np.uint8)
        if nset.shape[0] == 0:
            return out
        vmax = int(nset.max())
        if self._stack.shape[0] <= vmax:  # layer v holds bits(v); layer 0 is unused
            self._stack = np.stack([np.zeros((self.k, self.nbytes), dtype=np.uint8)]
                                   + [self.bits(v) for v in range(1, vmax + 1)])
        stack = self._stack
        supp = (nset > 0).sum(axis=1)
        for s in np.unique(supp).tolist():
            grp = nset[supp == s]
            cells = np.argsort(grp == 0, axis=1, kind="stable")[:, :s]  # the s nonzero cells
            vals = np.take_along_axis(grp, cells, axis=1)
            chunk = max(1, 50_000_000 // max(1, s * self.nbytes))
            for i in range(0, grp.shape[0], chunk):
                acc = stack[vals[i : i + chunk], cells[i : i + chunk]]  # (c, s, nbytes)
                both = np.bitwise_and.reduce(acc, axis=1)
                out |= np.bitwise_or.reduce(both, axis=0)
        return out

    def first_row(self, mask: NDArray[np.uint8]) -> int:
        """Index of the first row set in ``mask`` (or -1)."""
        nz = np.flatnonzero(mask)
        if nz.size == 0:
            return -1
        byte = int(nz[0])
        bitpos = int(np.flatnonzero(np.unpackbits(mask[byte : byte + 1]))[0])
        return byte * 8 + bitpos


def _dedupe_rows(x: NDArray[np.int64], cap: int) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.int64]]:
    """Unique rows of ``x`` (entries in ``0..cap``): (unique, first index, inverse)."""
    k = x.shape[1]
    base = cap + 1
    if base ** k < 2**62:
        keys = x @ (base ** np.arange(k - 1, -1, -1, dtype=np.int64))
        _, first, inv = np.unique(keys, return_index=True, return_inverse=True)
    else:
        _, first, inv = np.unique(x, axis=0, return_index=True, return_inverse=True)
    return x[first], first, inv.reshape(-1)


@dataclass
class _PairOutcome:
    dist: int  # exact directed Hausdorff distance (or lower bound if not complete)
    complete: bool
    g_index: int  # row of G_x attaining dist
    g_near: NDArray[np.int64]  # nearest point of G_x' to that row


def _pair_search(
    bits: _RowBits,
    gy: NDArray[np.int64],
    x: int,
    y: int,
    offsets: _Offsets | None,
    deadline: float,
) -> _PairOutcome:
    """Directed Hausdorff distance max_{g in G_x} min_{g' in G_y} |g - g'|_1 / 2, level by level.

    Breadth-first in the record-move graph from all of ``G_x`` at once: rows
    still unresolved after level ``r - 1`` are at distance ``>= r``; a row
    resolved at level ``r`` is at distance exactly ``r`` and the offset found
    gives its nearest point. ``dist = -1`` means nothing was resolved before
    the deadline.
    """
    gx = bits.gx
    if offsets is None:
        return _pair_direct(gx, gy, np.arange(gx.shape[0], dtype=np.int64), deadline)
    a = offsets.a
    if np.array_equal(a[:, x], a[:, y]):
        return _PairOutcome(0, True, 0, gx[0].copy())  # G_x = G_y
    unres = bits.all_rows()
    out = _PairOutcome(-1, False, 0, gx[0].copy())
    r = 0
    while unres.any():
        r += 1
        if offsets.size(r) > offsets.level_limit:
            rows = np.flatnonzero(np.unpackbits(unres)[: bits.m]).astype(np.int64)
            direct = _pair_direct(gx, gy, rows, deadline)
            return direct if direct.dist >= 0 else out
        if time.monotonic() > deadline:
            return out
        nset, pset = offsets.candidates(r, x, y)
        if nset.shape[0] == 0:
            continue
        nset, first_n, _ = _dedupe_rows(nset, r)
        pset = pset[first_n]
        resolved = bits.covered(nset) & unres
        j = bits.first_row(resolved)
        if j >= 0:
            g = gx[j]
            nidx = int(np.flatnonzero((nset <= g[None, :]).all(axis=1))[0])
            out = _PairOutcome(r, False, j, g - nset[nidx] + pset[nidx])
        unres &= ~resolved
    out.complete = True
    return out


def _pair_direct(
    gx: NDArray[np.int64], gy: NDArray[np.int64], rows: NDArray[np.int64], deadline: float
) -> _PairOutcome:
    """Exact nearest points by direct L1 distances (callable invariants; wide levels)."""
    best = -1
    best_g = int(rows[0])
    best_near = gx[0]
    chunk = max(1, 20_000_000 // max(1, gy.shape[0] * gx.shape[1]))
    for s in range(0, rows.shape[0], chunk):
        if time.monotonic() > deadline:
            return _PairOutcome(best, False, best_g, best_near.copy())
        idx = rows[s : s + chunk]
        d = np.abs(gx[idx][:, None, :] - gy[None, :, :]).sum(axis=2)
        mins = d.min(axis=1)
        j = int(mins.argmax())
        if mins[j] // 2 > best:
            best = int(mins[j] // 2)
            best_g = int(idx[j])
            best_near = gy[int(d[j].argmin())]
    return _PairOutcome(best, True, best_g, best_near.copy())


# ------------------------------------------------------------------------- the methods


def _make_fiber(
    space: DataSpace,
    invariant: AnyInvariant,
    table: Sequence[int] | NDArray[np.integer] | None,
    t: object,
    n: int | None,
) -> Fiber:
    return conforming_fiber(space, invariant, table=table, t=t, n=n)


def _check_budget(limit: int, time_limit: float) -> None:
    check_int("limit", limit, minimum=1)
    check_positive("time_limit", time_limit)


def _zero_result(fib: Fiber, h: NDArray[np.int64], method: str, fsize: int | None,
                 ndata: int | None, note: str, t0: float) -> SemiAdjacentResult:
    cell = int(np.flatnonzero(h)[0])
    ht = tuple(int(v) for v in h)
    w = Witness(ht, cell, cell, ht, 0)
    return SemiAdjacentResult(0, 0, True, method, w, fsize, ndata, fib.t, fib.n,
                              note or "X_t has a single record value: every record is identical "
                              "(|D_t| = 1), nothing to protect.", time.monotonic() - t0)


def semiadjacent_by_graph_search(
    space: DataSpace,
    invariant: AnyInvariant,
    *,
    table: Sequence[int] | NDArray[np.integer] | None = None,
    t: object = None,
    n: int | None = None,
    limit: int = DEFAULT_LIMIT,
    time_limit: float = 60.0,
    level_limit: int = DEFAULT_LEVEL_LIMIT,
) -> SemiAdjacentResult:
    r"""a(t) by enumerating conforming histograms and searching outward (Cho & Awan 2024, Def. 13).

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
    time_limit:
        Seconds; when it runs out the result has ``exact=False`` and says so.
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
    >>> from accountant.invariants import Margins
    >>> space = DataSpace.of(("A", 2), ("B", 2))
    >>> r = semiadjacent_by_graph_search(space, Margins((("A",), ("B",))), table=(2, 1, 1, 0))
    >>> r.value, r.exact, r.fiber_size, r.n_datasets      # reference Sec. 9, T-A3
    (3, True, 2, 16)
    """
    t0 = time.monotonic()
    _check_budget(limit, time_limit)
    check_int("level_limit", level_limit, minimum=1)
    fib = _make_fiber(space, invariant, table, t, n)
    deadline = t0 + time_limit
    est = fib.estimate_size()
    fibrows = fib.enumerate(limit=limit, estimate=est)
    return _graph_search_on(fib, fibrows, est, deadline, t0, level_limit, note="")


def _graph_search_on(
    fib: Fiber,
    fibrows: NDArray[np.int64],
    est: FiberSize,
    deadline: float,
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
    ndata = count_datasets(fibrows, fib.n) if fsize <= _COUNT_DATASETS_LIMIT else None
    support = [int(c) for c in np.flatnonzero(fibrows.any(axis=0))]
    method = "graph-search"
    notes = [note] if note else []
    notes.append(f"fiber: {fsize} conforming histograms (estimate before enumerating: {est.describe()})")
    if len(support) <= 1:
        return _zero_result(fib, fibrows[0], method, fsize, ndata, "", t0)
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

    pair_bound, bound_note = _pair_bound_fn(fib)
    offsets = _Offsets(fib.matrix, level_limit) if fib.matrix is not None else None
    pairs = [(x, y) for x in support for y in support if x != y]
    pairs.sort(key=lambda p: (-pair_bound(*p), p))
    best = -1
    best_w: tuple[int, int, NDArray[np.int64], NDArray[np.int64]] | None = None
    complete = True
    unchecked_bound = -1
    bits_cache: dict[int, _RowBits] = {}
    progress = Progress("a(t) graph search, record pairs", len(pairs))
    for idx, (x, y) in enumerate(pairs):
        progress.update(idx, f"a(t) >= {best + 1}")
        if pair_bound(x, y) <= best:
            continue
        if time.monotonic() > deadline:
            complete = False
            unchecked_bound = max(pair_bound(*p) for p in pairs[idx:])
            notes.append(f"time budget ran out after {idx} of {len(pairs)} record pairs")
            break
        if x not in bits_cache:
            if sum(b.nbytes * b.k * len(b._bits) for b in bits_cache.values()) > 64_000_000:
                bits_cache.clear()
            bits_cache[x] = _RowBits(gset(x))
        gy = gset(y) if offsets is None else bits_cache[x].gx[:0]
        out = _pair_search(bits_cache[x], gy, x, y, offsets, deadline)
        if not out.complete:
            complete = False
            unchecked_bound = max(pair_bound(*p) for p in pairs[idx:])
            notes.append(f"time budget ran out inside record pair ({x}, {y})")
        if out.dist > best:
            best = out.dist
            best_w = (x, y, bits_cache[x].gx[out.g_index].astype(np.int64),
                      out.g_near.astype(np.int64))
        if not out.complete:
            break
    progress.close()
    if best_w is None:  # the budget ran out before any pair was resolved
        x, y = pairs[0]
        g = gset(x)[0].astype(np.int64)
        near = _pair_direct(gset(x), gset(y), np.zeros(1, dtype=np.int64), math.inf)
        best = near.dist
        best_w = (x, y, g, near.g_near.astype(np.int64))
    x, y, g, g2 = best_w
    h = g.copy()
    h[x] += 1
    h2 = g2.copy()
    h2[y] += 1
    w = Witness(tuple(int(v) for v in h), x, y, tuple(int(v) for v in h2),
                replacement_distance(h, x, h2, y))
    value = w.distance
    if value != 1 + best:
        raise VerificationError(f"internal error: witness distance {value} != 1 + {best}")
    upper = value if complete else max(value, 1 + unchecked_bound)
    notes.append(bound_note)
    return SemiAdjacentResult(value, upper, complete, method, w, fsize, ndata, fib.t, fib.n,
                              "; ".join(notes), time.monotonic() - t0)


# ------------------------------------------------------------------- integer programs


def _inner_min_ilp(
    a: NDArray[np.int64], b_other: NDArray[np.int64], g: NDArray[np.int64], ub: NDArray[np.int64],
    time_limit: float,
) -> tuple[str, NDArray[np.int64] | None, int]:
    """min |g - g'|_1 / 2 over integer g' >= 0, A g' = b_other. Returns (status, g', dist).

    ``status`` is ``"optimal"`` only when the solver's dual bound proves the
    rounded, exactly re-checked solution optimal.
    """
    from scipy.optimize import Bounds, LinearConstraint

    k = a.shape[1]
    rows = a.shape[0]
    # variables: g' (k, integer), p (k), q (k) >= 0 with g' + p - q = g
    c = np.concatenate([np.zeros(k), np.ones(2 * k)])
    aeq = np.zeros((rows + k, 3 * k))
    aeq[:rows, :k] = a
    aeq[rows:, :k] = np.eye(k)
    aeq[rows:, k : 2 * k] = np.eye(k)
    aeq[rows:, 2 * k :] = -np.eye(k)
    beq = np.concatenate([b_other, g]).astype(float)
    lb = np.zeros(3 * k)
    ubv = np.concatenate([ub.astype(float), np.full(2 * k, np.inf)])
    integ = np.concatenate([np.ones(k), np.zeros(2 * k)])
    res = solve_milp(c=c, integrality=integ, bounds=Bounds(lb, ubv),
               constraints=[LinearConstraint(aeq, beq, beq)],
               options={"time_limit": max(time_limit, 1e-3), "mip_rel_gap": 0.0, "presolve": True})
    if res.status == 2:
        return "infeasible", None, -1
    if res.x is None:
        return "unknown", None, -1
    g2 = np.rint(res.x[:k]).astype(np.int64)
    if not (np.array_equal(a @ g2, b_other) and (g2 >= 0).all()):
        return "unknown", None, -1
    l1 = int(np.abs(g - g2).sum())
    dual = getattr(res, "mip_dual_bound", None)
    if res.status == 0 and dual is not None and math.isfinite(dual):
        lower = math.ceil(dual - 1e-6)
        lower += lower % 2  # |g - g'|_1 is even (equal totals)
        if l1 <= lower:
            return "optimal", g2, l1 // 2
    return "unknown", g2, l1 // 2


class _Master:
    """Is there ``g in G_x`` and a target ``y`` with ``min_{g' in G_y} |g - g'|_1 / 2 >= m``?

    Variables: ``g`` (integer, ``A g = b_x``, ``0 <= g <= U``), indicators
    ``y[c, v]`` (``v = 0..m-2``) with ``y[c, v] = 1 => g_c <= v``, and a one-hot
    choice ``z[j]`` of the target. A cut for target ``j`` and removed records
    ``N`` (``|N| <= m - 1``) says "if target ``j`` is chosen, ``g`` does not
    contain ``N``": ``sum_{c in N} y[c, N_c - 1] >= z[j]``. It is valid because
    ``g >= N`` would put ``g + P - N`` in ``G_y`` within distance ``|N| < m``.
    """

    def __init__(self, a: NDArray[np.int64], b_x: NDArray[np.int64], ub: NDArray[np.int64],
                 m: int, n_targets: int) -> None:
        self.a = a
        self.b = b_x
        self.ub = ub
        self.m = m
        self.k = a.shape[1]
        self.levels = max(m - 1, 0)
        self.n_targets = n_targets
        self.cuts: list[tuple[int, NDArray[np.int64]]] = []
        self._seen: set[tuple[int, bytes]] = set()

    def add_cut(self, target: int, nvec: NDArray[np.int64]) -> bool:
        """For target ``target``, require ``g_c <= N_c - 1`` for some ``c``."""
        size = int(nvec.sum())
        if size > self.levels or size == 0:
            raise VerificationError(f"internal error: cut of size {size} for m={self.m}")
        key = (target, nvec.astype(np.int64).tobytes())
        if key in self._seen:
            return False
        self._seen.add(key)
        self.cuts.append((target, nvec.astype(np.int64)))
        return True

    def solve(self, time_limit: float) -> tuple[str, NDArray[np.int64] | None, int]:
        """("feasible", g, target) | ("infeasible", None, -1) | ("unknown", None, -1)."""
        from scipy.optimize import Bounds, LinearConstraint
        from scipy.sparse import coo_matrix

        k, L, J = self.k, self.levels, self.n_targets
        oy = k  # offset of y[c, v] = oy + c * L + v
        oz = k + k * L
        nv = oz + J
        cons = []
        aeq = np.zeros((self.a.shape[0], nv))
        aeq[:, :k] = self.a
        cons.append(LinearConstraint(aeq, self.b.astype(float), self.b.astype(float)))
        onehot = np.zeros((1, nv))
        onehot[0, oz:] = 1.0
        cons.append(LinearConstraint(onehot, 1.0, 1.0))
        if L:
            # y[c, v] = 1  =>  g_c <= v :   g_c + (U_c - v) y[c, v] <= U_c
            rows_i, cols_i, vals = [], [], []
            rhs = np.zeros(k * L)
            for c in range(k):
                for v in range(L):
                    row = c * L + v
                    rows_i += [row, row]
                    cols_i += [c, oy + row]
                    vals += [1.0, max(float(self.ub[c] - v), 0.0)]
                    rhs[row] = float(self.ub[c])
            link = coo_matrix((vals, (rows_i, cols_i)), shape=(k * L, nv)).tocsr()
            cons.append(LinearConstraint(link, -np.inf, rhs))
        if self.cuts:
            rows_i, cols_i, vals = [], [], []
            for i, (j, nvec) in enumerate(self.cuts):
                for c in np.flatnonzero(nvec).tolist():
                    rows_i.append(i)
                    cols_i.append(oy + c * L + int(nvec[c]) - 1)
                    vals.append(1.0)
                rows_i.append(i)
                cols_i.append(oz + j)
                vals.append(-1.0)
            cm = coo_matrix((vals, (rows_i, cols_i)), shape=(len(self.cuts), nv)).tocsr()
            cons.append(LinearConstraint(cm, 0.0, np.inf))
        lb = np.zeros(nv)
        ubv = np.concatenate([self.ub.astype(float), np.ones(k * L + J)])
        res = solve_milp(c=np.zeros(nv), integrality=np.ones(nv), bounds=Bounds(lb, ubv),
                   constraints=cons, options={"time_limit": max(time_limit, 1e-3), "presolve": True})
        if res.status == 2:
            return "infeasible", None, -1
        if res.x is None:
            return "unknown", None, -1
        g = np.rint(res.x[:k]).astype(np.int64)
        z = np.rint(res.x[oz:]).astype(np.int64)
        if not (np.array_equal(self.a @ g, self.b) and (g >= 0).all() and (g <= self.ub).all()
                and int(z.sum()) == 1):
            return "unknown", None, -1
        return "feasible", g, int(z.argmax())


def semiadjacent_by_integer_program(
    space: DataSpace,
    invariant: AnyInvariant,
    *,
    table: Sequence[int] | NDArray[np.integer] | None = None,
    t: object = None,
    n: int | None = None,
    time_limit: float = 60.0,
    max_cuts: int = 5000,
    level_limit: int = 200_000,
) -> SemiAdjacentResult:
    r"""a(t) by integer programming, without enumerating the fiber (Cho & Awan 2024, Def. 13, Thm. 16).

    1. ``X_t`` exactly: one integer feasibility problem per cell.
    2. Lower bound: if a table is given, the per-dataset quantity of the table
       (one inner integer program per record/target pair).
    3. For each pair ``x != x'`` (largest structural bound first, skipped when
       the bound cannot beat the current best) and ``m = best + 1, ...``:
       decide whether some ``g in G_x`` is at distance ``>= m`` from ``G_x'``.
       Master problem: ``g in G_x`` with indicator ``y[c, v] = 1 => g_c <= v``;
       every offset ``P - N`` of at most ``m - 1`` moved records that maps
       ``G_x`` into ``G_x'`` must be blocked (``sum_{c in N} y[c, N_c - 1] >= 1``).
       Offsets enter lazily: solve the master, compute the exact nearest point of
       its ``g`` (inner integer program, optimality proven by the dual bound), and
       if it is closer than ``m`` add that offset as a cut. Master infeasible =
       proof that the pair cannot reach ``m``. Small levels of offsets are
       pre-loaded as cuts when their number is at most ``level_limit``.
    4. Stop as soon as the best value reaches the structural upper bound (Thm. 16).

    Parameters
    ----------
    space, invariant, table, t, n:
        As for :func:`semiadjacent_by_graph_search` (matrix invariants only).
    time_limit:
        Seconds; when it runs out the result has ``exact=False``, ``value`` a
        witnessed lower bound and ``upper`` a proven upper bound.
    max_cuts:
        Largest number of lazy cuts per decision problem before giving up on it
        (reported as inexact).
    level_limit:
        Largest number of record multisets used to pre-load cuts.

    Returns
    -------
    SemiAdjacentResult
        ``method="integer-program"``; ``fiber_size`` is ``None``.

    Raises
    ------
    InvalidArgument
        Callable invariant (no matrix), bad inputs, or an empty ``D_t``.

    Examples
    --------
    >>> from accountant.invariants import Margins
    >>> space = DataSpace.of(("A", 2), ("B", 2), ("C", 2))
    >>> inv = Margins((("A",), ("B",), ("C",)))
    >>> r = semiadjacent_by_integer_program(space, inv, table=(1, 1, 1, 0, 1, 0, 0, 0))
    >>> r.value, r.exact                                     # reference Sec. 9, T-A7
    (4, True)
    """
    t0 = time.monotonic()
    check_positive("time_limit", time_limit)
    check_int("max_cuts", max_cuts, minimum=1)
    check_int("level_limit", level_limit, minimum=0)
    fib = _make_fiber(space, invariant, table, t, n)
    if fib.matrix is None or fib.rhs is None:
        raise InvalidArgument(
            f"The integer-programming search needs a matrix invariant; {fib.invariant.describe()} "
            "has none. Use method='graph-search' (small spaces) instead."
        )
    return _ilp_search(fib, table, t0, t0 + time_limit, max_cuts, level_limit, note="")


def _ilp_search(
    fib: Fiber,
    table: Sequence[int] | NDArray[np.integer] | None,
    t0: float,
    deadline: float,
    max_cuts: int,
    level_limit: int,
    note: str,
) -> SemiAdjacentResult:
    assert fib.matrix is not None and fib.rhs is not None
    a, b = fib.matrix, fib.rhs
    method = "integer-program"
    notes = [note] if note else []

    def remaining() -> float:
        return deadline - time.monotonic()

    support_ex = fib.support(time_limit=max(remaining(), 1e-3))
    if not support_ex:
        raise InvalidArgument(
            f"No dataset with n={fib.n} records has invariant value t={fib.t!r} "
            f"({fib.invariant.describe()}); D_t is empty and a(t) is undefined."
        )
    support = sorted(support_ex)
    if len(support) == 1:
        h = np.array(support_ex[support[0]], dtype=np.int64)
        return _zero_result(fib, h, method, 1, 1, "", t0)
    pair_bound, bound_note = _pair_bound_fn(fib)
    b_of = {x: b - a[:, x] for x in support}
    ub_of = {x: _bounds_for(a, b_of[x], fib.n - 1) for x in support}
    offsets = _Offsets(a, level_limit) if level_limit > 0 else None

    best = -1
    best_w: tuple[int, int, NDArray[np.int64], NDArray[np.int64]] | None = None

    def consider(x: int, y: int, g: NDArray[np.int64], g2: NDArray[np.int64], d: int) -> None:
        nonlocal best, best_w
        if d > best:
            best = d
            best_w = (x, y, g.copy(), g2.copy())

    complete = True
    # Lower bound from the given table (the per-dataset quantity), or from X_t examples.
    # With a table: all (record, target) pairs of the table. Without: for each
    # x in X_t, its example histogram against the most promising target.
    starts: list[tuple[int, NDArray[np.int64], list[int]]] = []
    if table is not None:
        h0 = np.array(_table_hist(fib, table), dtype=np.int64)
        starts = [(x, h0, support) for x in support if h0[x] >= 1]
    else:
        for x in support:
            ys = sorted((y for y in support if y != x), key=lambda y: -pair_bound(x, y))
            starts.append((x, np.array(support_ex[x], dtype=np.int64), ys[:1]))
    for x, h0, targets in starts:
        g = h0.copy()
        g[x] -= 1
        for y in targets:
            if y == x or pair_bound(x, y) <= best:
                continue
            if remaining() <= 0:
                complete = False
                break
            status, g2, d = _inner_min_ilp(a, b_of[y], g, ub_of[y], remaining())
            if g2 is not None and status == "optimal":
                consider(x, y, g, g2, d)
    if best_w is None:  # the budget ran out before any start finished: one witness anyway
        x, y = support[0], support[1]
        g = np.array(support_ex[x], dtype=np.int64)
        g[x] -= 1
        status, g2, d = _inner_min_ilp(a, b_of[y], g, ub_of[y], max(remaining(), 10.0))
        if g2 is None or status != "optimal":
            raise InvalidArgument(
                "The time budget ran out before a single witness was found; raise time_limit."
            )
        consider(x, y, g, g2, d)

    # One master problem per ordered pair (x, y): measured faster than one per x
    # with a choice of target (the one-hot disjunction slows HiGHS down a lot).
    pairs = [(x, y) for x in support for y in support if x != y]
    pairs.sort(key=lambda p: (-pair_bound(*p), p))
    unresolved_bound = -1
    n_decisions = 0
    n_lazy = 0
    progress = Progress("a(t) integer program, record pairs", len(pairs))
    for idx, (x, y) in enumerate(pairs):
        progress.update(idx, f"a(t) >= {best + 1}")
        if np.array_equal(a[:, x], a[:, y]):
            continue  # G_x = G_y: distance 0 for every g
        while complete and pair_bound(x, y) > best:
            m = best + 1
            status, _, gd, gd2, d, lazy = _decide_record(a, x, [y], b_of, ub_of, m, offsets,
                                                         deadline, max_cuts)
            n_decisions += 1
            n_lazy += lazy
            if status == "no":
                break
            if status == "yes":
                assert gd is not None and gd2 is not None
                consider(x, y, gd, gd2, d)
                continue
            complete = False
            unresolved_bound = max(pair_bound(*p) for p in pairs[idx:])
            notes.append(f"budget ran out deciding pair ({x}, {y}) at distance {m} ({status})")
        if not complete:
            break
    progress.close()
    if not complete and unresolved_bound < 0:
        unresolved_bound = max(pair_bound(*p) for p in pairs)
        notes.append("time budget ran out")
    assert best_w is not None
    x, y, g, g2 = best_w
    h = g.copy()
    h[x] += 1
    h2 = g2.copy()
    h2[y] += 1
    w = Witness(tuple(int(v) for v in h), x, y, tuple(int(v) for v in h2),
                replacement_distance(h, x, h2, y))
    if w.distance != 1 + best:
        raise VerificationError(f"internal error: witness distance {w.distance} != 1 + {best}")
    upper = w.distance if complete else max(w.distance, 1 + unresolved_bound)
    notes.append(f"{n_decisions} master problems, {n_lazy} lazy cuts")
    notes.append(bound_note)
    return SemiAdjacentResult(w.distance, upper, complete, method, w, None, None, fib.t, fib.n,
                              "; ".join(notes), time.monotonic() - t0)


def _bounds_for(a: NDArray[np.int64], b: NDArray[np.int64], n: int) -> NDArray[np.int64]:
    from accountant.fiber import _cell_bounds

    return np.maximum(_cell_bounds(a, b, n), 0)


def _table_hist(fib: Fiber, table: Sequence[int] | NDArray[np.integer]) -> tuple[int, ...]:
    from accountant.fiber import histogram_from_table

    return histogram_from_table(fib.space, table)


def _decide_record(
    a: NDArray[np.int64],
    x: int,
    ys: list[int],
    b_of: dict[int, NDArray[np.int64]],
    ub_of: dict[int, NDArray[np.int64]],
    m: int,
    offsets: _Offsets | None,
    deadline: float,
    max_cuts: int,
) -> tuple[str, int, NDArray[np.int64] | None, NDArray[np.int64] | None, int, int]:
    """Is some ``g in G_x`` at distance ``>= m`` from some ``G_y``, ``y in ys``?

    Returns ``(status, y, g, g', d, lazy_cuts)`` with status ``"yes"`` (then
    ``d >= m`` is the exact distance of ``g`` from ``G_y``, proven by the inner
    program), ``"no"`` (master infeasible: a proof), or ``"timeout"`` /
    ``"unknown"`` / ``"cut-limit"``.
    """
    master = _Master(a, b_of[x], ub_of[x], m, len(ys))
    if offsets is not None:
        for j, y in enumerate(ys):
            for r in range(1, m):
                if offsets.size(r) > offsets.level_limit:
                    break
                nset, _ = offsets.candidates(r, x, y)
                if nset.shape[0]:
                    for nvec in _dedupe_rows(nset, r)[0]:
                        master.add_cut(j, nvec)
    lazy = 0
    while True:
        rem = deadline - time.monotonic()
        if rem <= 0:
            return "timeout", -1, None, None, -1, lazy
        status, g, j = master.solve(rem)
        if status == "infeasible":
            return "no", -1, None, None, -1, lazy
        if status != "feasible" or g is None:
            return "unknown", -1, None, None, -1, lazy
        y = ys[j]
        rem = deadline - time.monotonic()
        st, g2, d = _inner_min_ilp(a, b_of[y], g, ub_of[y], max(rem, 1e-3))
        if g2 is None or st != "optimal":
            return "unknown", -1, None, None, -1, lazy
        if d >= m:
            return "yes", y, g, g2, d, lazy
        if not master.add_cut(j, np.maximum(g - g2, 0)):
            raise VerificationError("internal error: repeated cut in the master problem")
        lazy += 1
        if lazy > max_cuts:
            return "cut-limit", -1, None, None, -1, lazy


# ------------------------------------------------------------------------ brute force


def semiadjacent_by_brute_force(
    space: DataSpace,
    invariant: AnyInvariant,
    *,
    table: Sequence[int] | NDArray[np.integer] | None = None,
    t: object = None,
    n: int | None = None,
    limit: int = DEFAULT_BRUTE_LIMIT,
    time_limit: float = 60.0,
) -> SemiAdjacentResult:
    r"""a(t) from Def. 13 literally, over ordered datasets (Cho & Awan 2024, Def. 13).

    Enumerates all ``k**n`` ordered datasets, keeps those with ``T(X) = t``
    (computed from the records), forms the per-individual sets ``X_{t,i}``,
    and evaluates ``max_X max_i max_{x' in X_{t,i}} min_{X': X'_i = x'} d_H(X, X')``
    with all pairwise Hamming distances. Independent of the histogram reduction;
    for tiny cases only.

    Parameters
    ----------
    space, invariant, table, t, n:
        As for :func:`semiadjacent_by_graph_search`.
    limit:
        Largest number ``k**n`` of ordered datasets to enumerate (checked first).
    time_limit:
        Seconds; checked between individuals (individual 0 always completes,
        so a witness exists).

    Returns
    -------
    SemiAdjacentResult
        ``method="brute-force"``; the witness also carries the ordered
        datasets and the individual.

    Raises
    ------
    SearchTooLarge
        ``k**n > limit``, or too many conforming datasets for the distance matrix.
    InvalidArgument
        Bad inputs, or no dataset conforms to ``t``.

    Examples
    --------
    >>> from accountant.invariants import Total
    >>> space = DataSpace.of(("x", 2),)
    >>> from accountant.invariants import Linear
    >>> r = semiadjacent_by_brute_force(space, Linear(((0, 1),)), t=(1,), n=3)  # T = sum x_i
    >>> r.value, r.n_datasets                                # reference Sec. 9, T-A1
    (2, 3)
    """
    t0 = time.monotonic()
    _check_budget(limit, time_limit)
    fib = _make_fiber(space, invariant, table, t, n)
    k, nn = fib.n_cells, fib.n
    size = k**nn
    if size > limit:
        raise SearchTooLarge(
            f"brute force over ordered datasets ({k} cells, n={nn})", size, limit,
            hint="Use method='graph-search' (histograms) or 'integer-program'.",
        )
    deadline = t0 + time_limit
    recs = np.array(list(itertools.product(range(k), repeat=nn)), dtype=np.int64).reshape(-1, nn)
    hists = np.zeros((recs.shape[0], k), dtype=np.int64)
    for i in range(nn):
        hists[np.arange(recs.shape[0]), recs[:, i]] += 1
    if isinstance(fib.invariant, CallableInvariant):
        inv = fib.invariant
        keep = np.array([inv.value(row) == fib.t for row in hists.tolist()], dtype=bool)
    else:
        amat = np.asarray(fib.invariant.matrix(space), dtype=np.int64)
        tv = np.array(fib.t, dtype=np.int64).reshape(-1)
        keep = (hists @ amat.T == tv[None, :]).all(axis=1) if amat.shape[0] else np.ones(len(hists), bool)
    data = recs[keep]
    m = data.shape[0]
    if m == 0:
        raise InvalidArgument(
            f"No dataset with n={nn} records has invariant value t={fib.t!r}; D_t is empty."
        )
    if m * m * nn > 400_000_000:
        raise SearchTooLarge("brute force distance matrix over D_t", m * m * nn, 400_000_000)
    dist = np.zeros((m, m), dtype=np.int64)
    for i in range(nn):
        dist += data[:, i][:, None] != data[:, i][None, :]
    best = -1
    wit: tuple[int, int, int, int] | None = None  # (row X, i, value, row X')
    complete = True
    for i in range(nn):
        if i > 0 and time.monotonic() > deadline:  # individual 0 always runs: a witness exists
            complete = False
            break
        for v in np.unique(data[:, i]).tolist():  # X_{t,i}
            cols = np.flatnonzero(data[:, i] == v)
            sub = dist[:, cols]
            inner = sub.min(axis=1)
            j = int(inner.argmax())
            if inner[j] > best:
                best = int(inner[j])
                wit = (j, i, int(v), int(cols[int(sub[j].argmin())]))
    assert wit is not None
    j, i, v, j2 = wit
    X = tuple(int(c) for c in data[j])
    X2 = tuple(int(c) for c in data[j2])
    w = Witness(
        dataset=tuple(int(c) for c in hists[keep][j]), record=X[i], target=v,
        nearest=tuple(int(c) for c in hists[keep][j2]), distance=best,
        individual=i, ordered_dataset=X, ordered_nearest=X2,
    )
    fsize = int(np.unique(hists[keep], axis=0).shape[0])
    upper = best if complete else nn
    note = "" if complete else "time budget ran out; value is a lower bound, upper is n"
    return SemiAdjacentResult(best, upper, complete, "brute-force", w, fsize, m, fib.t, nn, note,
                              time.monotonic() - t0)


# ------------------------------------------------------------------------ front door


def semiadjacent_parameter(
    space: DataSpace,
    invariant: AnyInvariant,
    *,
    table: Sequence[int] | NDArray[np.integer] | None = None,
    t: object = None,
    n: int | None = None,
    method: str = "auto",
    limit: int = DEFAULT_LIMIT,
    time_limit: float = 60.0,
) -> SemiAdjacentResult:
    r"""The exact semi-adjacent parameter a(t) with a witness (Cho & Awan 2024, Def. 13).

    a(t) depends on ``t`` only: even when the confidential ``table`` is given
    it is the maximum over **all** conforming datasets. (For the quantity of
    the given table alone see :func:`dataset_semiadjacent_distance`.)

    Parameters
    ----------
    space, invariant:
        The data space and the published statistic.
    table:
        The confidential histogram (row-major or shaped like ``space.shape``).
    t, n:
        The published value and number of records, when no table is given.
    method:
        ``"auto"`` (graph search if the fiber size, estimated before
        enumerating, is at most ``limit``; otherwise integer programming, and
        the result's ``note`` says so), ``"graph-search"`` (refuses above
        ``limit``), ``"integer-program"`` or ``"brute-force"``.
    limit:
        Largest number of conforming histograms to enumerate (for brute force:
        of ordered datasets).
    time_limit:
        Seconds before the search stops and reports ``exact=False``.

    Returns
    -------
    SemiAdjacentResult

    Raises
    ------
    SearchTooLarge
        Enumeration refused (estimate and limit in the message).
    InvalidArgument
        Unknown method, bad inputs, empty ``D_t``.

    Examples
    --------
    >>> from accountant.invariants import Margins
    >>> space = DataSpace.of(("A", 2), ("B", 2))
    >>> r = semiadjacent_parameter(space, Margins((("A",), ("B",))), table=[[1, 1], [1, 1]])
    >>> r.value, r.method, r.n_datasets                      # reference Sec. 9, T-A2
    (2, 'graph-search', 36)
    """
    if method not in METHODS:
        raise InvalidArgument(f"method={method!r} must be one of {list(METHODS)}.")
    _check_budget(limit, time_limit)
    if method == "brute-force":
        return semiadjacent_by_brute_force(space, invariant, table=table, t=t, n=n,
                                           limit=limit, time_limit=time_limit)
    if method == "graph-search":
        return semiadjacent_by_graph_search(space, invariant, table=table, t=t, n=n,
                                            limit=limit, time_limit=time_limit)
    if method == "integer-program":
        return semiadjacent_by_integer_program(space, invariant, table=table, t=t, n=n,
                                               time_limit=time_limit)
    t0 = time.monotonic()
    fib = _make_fiber(space, invariant, table, t, n)
    est = fib.estimate_size()
    if est.value <= limit:
        rows = fib.enumerate(limit=limit, estimate=est)
        return _graph_search_on(fib, rows, est, t0 + time_limit, t0, DEFAULT_LEVEL_LIMIT, note="")
    if fib.matrix is None:
        raise SearchTooLarge(
            f"a(t) for the {fib.invariant.describe()} needs enumeration "
            f"(estimate {est.describe()})", est.value, limit,
            hint="Callable invariants are for small spaces; use a matrix invariant.",
        )
    note = (f"switched from graph search to integer programming: fiber size "
            f"{est.describe()} exceeds limit {limit}")
    return _ilp_search(fib, table, t0, t0 + time_limit, 5000, 200_000, note=note)


def dataset_semiadjacent_distance(
    space: DataSpace,
    invariant: AnyInvariant,
    table: Sequence[int] | NDArray[np.integer],
    *,
    limit: int = DEFAULT_LIMIT,
    time_limit: float = 60.0,
) -> SemiAdjacentResult:
    r"""Per-dataset quantity of the given table -- **not** a(t) (Cho & Awan 2024, Def. 13, inner part).

    .. math::

        a_X = \max_{i} \max_{x' \in \mathcal X_t} \min\{d_H(X, X') : X' \in D_t,\ X'_i = x'\}

    for the confidential dataset ``X`` itself. Always ``a_X <= a(t)``; a
    mechanism calibrated to ``a_X`` instead of ``a(t)`` is **not** Semi-DP
    (the supremum over ``D_t`` in Def. 13 is what makes the guarantee hold for
    every dataset the adversary cannot rule out). Useful for diagnostics and
    as a lower bound.

    Computed by direct distances over the enumerated fiber when its estimated
    size is at most ``limit``, else by one inner integer program per
    (record, target) pair.

    Parameters
    ----------
    space, invariant:
        The data space and the published statistic.
    table:
        The confidential histogram ``h(X)`` (row-major or shaped like ``space.shape``).
    limit:
        Largest fiber to enumerate before switching to integer programs.
    time_limit:
        Seconds for the integer-programming route.

    Returns
    -------
    SemiAdjacentResult
        ``value`` is ``a_X``; ``note`` says it is the per-dataset quantity.

    Raises
    ------
    InvalidArgument
        Bad inputs.

    Examples
    --------
    >>> from accountant.invariants import Margins
    >>> space = DataSpace.of(("A", 2), ("B", 2))
    >>> inv = Margins((("A",), ("B",)))
    >>> dataset_semiadjacent_distance(space, inv, (1, 1, 1, 1)).value
    2
    >>> semiadjacent_parameter(space, inv, table=(1, 1, 1, 1)).value   # a(t) is the same here
    2
    """
    t0 = time.monotonic()
    _check_budget(limit, time_limit)
    fib = _make_fiber(space, invariant, table, None, None)
    h = np.array(_table_hist(fib, table), dtype=np.int64)
    deadline = t0 + time_limit
    est = fib.estimate_size()
    best = -1
    best_w: Witness | None = None
    complete = True
    if est.value <= limit or fib.matrix is None:
        rows = fib.enumerate(limit=limit, estimate=est)
        support = [int(c) for c in np.flatnonzero(rows.any(axis=0))]
        method = "graph-search"
        for x in np.flatnonzero(h).tolist():
            g = h.copy()
            g[x] -= 1
            for y in support:
                cand = rows[rows[:, y] >= 1].copy()
                cand[:, y] -= 1
                d = np.abs(cand - g[None, :]).sum(axis=1)
                j = int(d.argmin())
                val = int(x != y) + int(d[j]) // 2
                if val > best:
                    h2 = cand[j].copy()
                    h2[y] += 1
                    best = val
                    best_w = Witness(tuple(int(v) for v in h), int(x), int(y),
                                     tuple(int(v) for v in h2), val)
        fsize: int | None = int(rows.shape[0])
    else:
        assert fib.matrix is not None and fib.rhs is not None
        a, b = fib.matrix, fib.rhs
        support = sorted(fib.support(time_limit=time_limit))
        method = "integer-program"
        fsize = None
        for x in np.flatnonzero(h).tolist():
            g = h.copy()
            g[x] -= 1
            for y in support:
                if time.monotonic() > deadline:
                    complete = False
                    break
                by = b - a[:, y]
                st, g2, d = _inner_min_ilp(a, by, g, _bounds_for(a, by, fib.n - 1),
                                          deadline - time.monotonic())
                if g2 is None or st != "optimal":
                    complete = False
                    continue
                val = int(x != y) + d
                if val > best:
                    h2 = g2.copy()
                    h2[y] += 1
                    best = val
                    best_w = Witness(tuple(int(v) for v in h), int(x), int(y),
                                     tuple(int(v) for v in h2), val)
    if best_w is None:
        raise VerificationError("no witness found for the given table")
    note = "per-dataset quantity of the given table (a lower bound on a(t), not a(t))"
    if not complete:
        note += "; budget ran out, value is a lower bound"
    return SemiAdjacentResult(best, best if complete else fib.n, complete, method, best_w, fsize,
                              None, fib.t, fib.n, note, time.monotonic() - t0)
