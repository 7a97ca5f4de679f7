r"""Results of the exact a(t) searches: the witness of Def. 13, the result value, and what the searches share.

:class:`SemiAdjacentResult` carries a witnessed lower bound ``value``, a proven
``upper`` bound (equal when ``exact``) and a :class:`Witness` that
:mod:`verify.witness` re-checks from scratch [CA24, Def. 13]. Also here: the
Hamming replacement distance between histograms, the budget check, and the
structural upper bound of a pair [CA24, Thm. 16]. The reduction to histograms
is proved in ``accountant/combinatorics/semiadjacent_search.md``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from semidp.accountant.combinatorics.fiber import (
    AnyInvariant,
    Fiber,
    conforming_fiber,
)
from semidp.accountant.core.arguments import check_int
from semidp.accountant.core.errors import InvalidArgument
from semidp.accountant.data.dataspace import DataSpace
from semidp.accountant.data.invariants import Counting, Margins, NoInvariant, Total

#: The methods accepted by :func:`search_semi_adjacent_parameter`.
METHODS = ("auto", "graph-search", "integer-program", "brute-force")


#: Default largest number of ordered datasets brute force enumerates.
DEFAULT_BRUTE_LIMIT = 200_000


#: Largest number of record multisets one breadth-first level may hold.
DEFAULT_LEVEL_LIMIT = 2_000_000


#: Number of conforming histograms up to which ``|D_t|`` (ordered) is counted.
COUNT_DATASETS_LIMIT = 200_000


@dataclass(frozen=True, slots=True)
class Witness:
    """Where the maximum of Def. 13 is attained [CA24, Def. 13].

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
        if self.ordered_dataset is not None and self.ordered_nearest is not None and self.individual is not None:
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
    """The semi-adjacent parameter with its witness [CA24, Def. 13].

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
        raise InvalidArgument(f"histograms {tuple(h)} and {tuple(h2)} must have the same length and total.")
    if not (0 <= record < len(h)) or h[record] < 1:
        raise InvalidArgument(f"record cell {record} must be a nonempty cell of {tuple(h)}.")
    if not (0 <= target < len(h2)) or h2[target] < 1:
        raise InvalidArgument(f"target cell {target} must be a nonempty cell of {tuple(h2)}.")
    h[record] -= 1
    h2[target] -= 1
    l1 = sum(abs(a - b) for a, b in zip(h, h2))
    return int(record != target) + l1 // 2


def pair_bound_fn(fib: Fiber) -> tuple[Callable[[int, int], int], str]:
    """Bound on ``min_{g' in G_x'} |g - g'|_1 / 2`` valid for every ``g in G_x``.

    Margins over pairwise-disjoint feature sets (one-way margins in particular):
    the number of margins on which ``x`` and ``x'`` differ (the argument of
    [CA24, Thm. 16]: one compensating record per changed margin; a
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
                f"Cho & Awan 2024, Thm. 16 (margins over {len(sets)} disjoint feature sets): a(t) <= {len(sets) + 1}"
            )
    if isinstance(inv, Counting):
        members = [set(s) for s in inv.sets]
        if all(not (members[i] & members[j]) for i in range(len(members)) for j in range(i)):
            sig = [next((j for j, s in enumerate(members) if c in s), -1) for c in range(space.n_cells)]
            return (lambda x, y: int(sig[x] != sig[y])), "disjoint counting sets: a(t) <= 2"
    return (lambda x, y: trivial), f"trivial bound a(t) <= n = {fib.n}"


def make_fiber(
    space: DataSpace,
    invariant: AnyInvariant,
    table: Sequence[int] | NDArray[np.integer] | None,
    t: object,
    n: int | None,
) -> Fiber:
    return conforming_fiber(space, invariant, table=table, t=t, n=n)


def check_budget(limit: int) -> None:
    check_int("limit", limit, minimum=1)


def zero_result(
    fib: Fiber, h: NDArray[np.int64], method: str, fsize: int | None, ndata: int | None, note: str, t0: float
) -> SemiAdjacentResult:
    cell = int(np.flatnonzero(h)[0])
    ht = tuple(int(v) for v in h)
    w = Witness(ht, cell, cell, ht, 0)
    return SemiAdjacentResult(
        0,
        0,
        True,
        method,
        w,
        fsize,
        ndata,
        fib.t,
        fib.n,
        note or "X_t has a single record value: every record is identical (|D_t| = 1), nothing to protect.",
        time.monotonic() - t0,
    )
