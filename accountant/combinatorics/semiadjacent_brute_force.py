r"""a(t) by brute force over ordered datasets, the independent check of the faster searches [CA24, Def. 13].

Enumerates every ordered dataset of :math:`\mathcal D_t` up to a size limit and every
replacement; tests compare it with the graph search and the integer program.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

from semidp.accountant.combinatorics.fiber import (
    AnyInvariant,
)
from semidp.accountant.combinatorics.semiadjacent_results import (
    DEFAULT_BRUTE_LIMIT,
    SemiAdjacentResult,
    Witness,
    check_budget,
    make_fiber,
)
from semidp.accountant.core.budget import Budget, budget_argument
from semidp.accountant.core.errors import InvalidArgument, SearchTooLarge
from semidp.accountant.data.callable_invariant import CallableInvariant
from semidp.accountant.data.dataspace import DataSpace


def semiadjacent_by_brute_force(
    space: DataSpace,
    invariant: AnyInvariant,
    *,
    table: Sequence[int] | NDArray[np.integer] | None = None,
    t: object = None,
    n: int | None = None,
    limit: int = DEFAULT_BRUTE_LIMIT,
    budget: Budget | None = None,
    **legacy: float,
) -> SemiAdjacentResult:
    r"""a(t) from Def. 13 literally, over ordered datasets [CA24, Def. 13].

    Enumerates all ``k**n`` ordered datasets, keeps those with ``T(X) = t``
    (computed from the records), forms the per-individual sets ``X_{t,i}``,
    and evaluates ``max_X max_i max_{x' in X_{t,i}} min_{X': X'_i = x'} d_H(X, X')``
    with all pairwise Hamming distances. Independent of the histogram reduction;
    for tiny cases only.

    Parameters
    ----------
    space, invariant, table, t, n:
        As for :func:`~accountant.combinatorics.semiadjacent_graph.semiadjacent_by_graph_search`.
    limit:
        Largest number ``k**n`` of ordered datasets to enumerate (checked first).
    budget:
        The wall-clock :class:`~semidp.accountant.core.budget.Budget` (default 60 s; the deprecated ``time_limit=``
        seconds still works for one release); checked between individuals (individual 0 always completes,
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
    >>> from semidp.accountant.data.invariants import Total
    >>> space = DataSpace.of(("x", 2),)
    >>> from semidp.accountant.data.invariants import Linear
    >>> r = semiadjacent_by_brute_force(space, Linear(((0, 1),)), t=(1,), n=3)  # T = sum x_i
    >>> r.value, r.n_datasets                                # docs/reference/semi-dp.md §9, T-A1
    (2, 3)
    """
    t0 = time.monotonic()
    check_budget(limit)
    budget = budget_argument(budget, legacy, where="semiadjacent_by_brute_force", default=60.0)
    fib = make_fiber(space, invariant, table, t, n)
    k, nn = fib.n_cells, fib.n
    size = k**nn
    if size > limit:
        raise SearchTooLarge(
            f"brute force over ordered datasets ({k} cells, n={nn})",
            size,
            limit,
            hint="Use method='graph-search' (histograms) or 'integer-program'.",
        )
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
        raise InvalidArgument(f"No dataset with n={nn} records has invariant value t={fib.t!r}; D_t is empty.")
    if m * m * nn > 400_000_000:
        raise SearchTooLarge("brute force distance matrix over D_t", m * m * nn, 400_000_000)
    dist = np.zeros((m, m), dtype=np.int64)
    for i in range(nn):
        dist += data[:, i][:, None] != data[:, i][None, :]
    best = -1
    wit: tuple[int, int, int, int] | None = None  # (row X, i, value, row X')
    complete = True
    for i in range(nn):
        if i > 0 and budget.expired:  # individual 0 always runs: a witness exists
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
        dataset=tuple(int(c) for c in hists[keep][j]),
        record=X[i],
        target=v,
        nearest=tuple(int(c) for c in hists[keep][j2]),
        distance=best,
        individual=i,
        ordered_dataset=X,
        ordered_nearest=X2,
    )
    fsize = int(np.unique(hists[keep], axis=0).shape[0])
    upper = best if complete else nn
    note = "" if complete else "time budget ran out; value is a lower bound, upper is n"
    return SemiAdjacentResult(best, upper, complete, "brute-force", w, fsize, m, fib.t, nn, note, time.monotonic() - t0)
