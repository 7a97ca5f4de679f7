r"""The exact semi-adjacent parameter a(t) by search, with witnesses [CA24, Def. 13].

Definition (Hamming metric, datasets of ``n`` ordered individuals):

.. math::

    a(t) = \sup_{X \in D_t} \max_{i \in [n]} \sup_{x' \in \mathcal X_{t,i}}
           \min\{ d_H(X, X') : X' \in D_t,\ X'_i = x' \}.

It depends on ``t`` only: the supremum runs over **all** conforming datasets,
not just the confidential one. For a permutation-invariant invariant (every
count, margin or linear invariant of the histogram, and every
:class:`~accountant.data.callable_invariant.CallableInvariant`) it reduces to
histograms (proof in ``accountant/combinatorics/semiadjacent_search.md``, Lemmas 1-2):

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

``"brute-force"`` (:func:`~accountant.combinatorics.semiadjacent_brute_force.semiadjacent_by_brute_force`)
    Def. 13 literally, over all ``k**n`` ordered datasets. Tiny cases only;
    the reference the others are tested against.
``"graph-search"`` (:func:`~accountant.combinatorics.semiadjacent_graph.semiadjacent_by_graph_search`)
    Enumerates the conforming histograms (refusing above a size limit
    estimated before enumerating) and, for every pair ``x != x'``, searches
    breadth-first outwards from every ``g in G_x`` in the record-move graph:
    level ``r`` holds the offsets ``delta = P - N`` (``P, N`` multisets of ``r``
    records) with ``A delta = A (e_x - e_x')``; ``g + delta`` is conforming iff
    ``g >= N``, so a level is tested for all of ``G_x`` at once.
``"integer-program"`` (:func:`~accountant.combinatorics.semiadjacent_ilp.semiadjacent_by_integer_program`)
    No enumeration: the inner minimum is an integer program (HiGHS via
    :func:`scipy.optimize.milp`), and the outer maximum is decided pair by pair
    ("is there ``g in G_x`` at distance ``>= m`` from ``G_x'``?") by a master
    integer program with one disjunctive cut per offset found too close
    (lazy cut generation), stopped as soon as the structural upper bound
    ([CA24, Thm. 16]: ``p + 1`` for one-way margins of ``p`` features)
    is reached.

Every result carries a :class:`~accountant.combinatorics.semiadjacent_results.Witness` (dataset, record, target, nearest
conforming dataset, distance) that :mod:`verify.witness` re-checks from scratch.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

from semidp.accountant.combinatorics.fiber import (
    DEFAULT_LIMIT,
    AnyInvariant,
)
from semidp.accountant.combinatorics.semiadjacent_brute_force import semiadjacent_by_brute_force
from semidp.accountant.combinatorics.semiadjacent_graph import (
    graph_search_on,
    semiadjacent_by_graph_search,
)
from semidp.accountant.combinatorics.semiadjacent_ilp import (
    bounds_for,
    ilp_search,
    inner_min_ilp,
    semiadjacent_by_integer_program,
    table_histogram,
)
from semidp.accountant.combinatorics.semiadjacent_results import (
    DEFAULT_LEVEL_LIMIT,
    METHODS,
    SemiAdjacentResult,
    Witness,
    check_budget,
    make_fiber,
)
from semidp.accountant.core.budget import Budget, budget_argument
from semidp.accountant.core.errors import InvalidArgument, SearchTooLarge, VerificationError
from semidp.accountant.data.dataspace import DataSpace


def search_semi_adjacent_parameter(
    space: DataSpace,
    invariant: AnyInvariant,
    *,
    table: Sequence[int] | NDArray[np.integer] | None = None,
    t: object = None,
    n: int | None = None,
    method: str = "auto",
    limit: int = DEFAULT_LIMIT,
    budget: Budget | None = None,
    **legacy: float,
) -> SemiAdjacentResult:
    r"""The exact semi-adjacent parameter a(t) with a witness [CA24, Def. 13].

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
    budget:
        The wall-clock :class:`~semidp.accountant.core.budget.Budget` before the search stops and reports
        ``exact=False`` (default 60 s from the call; the deprecated ``time_limit=`` seconds still works for one
        release).

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
    >>> from semidp.accountant.data.invariants import Margins
    >>> space = DataSpace.of(("A", 2), ("B", 2))
    >>> r = search_semi_adjacent_parameter(space, Margins((("A",), ("B",))), table=[[1, 1], [1, 1]])
    >>> r.value, r.method, r.n_datasets                      # docs/reference/semi-dp.md §9, T-A2
    (2, 'graph-search', 36)
    """
    if method not in METHODS:
        raise InvalidArgument(f"method={method!r} must be one of {list(METHODS)}.")
    check_budget(limit)
    budget = budget_argument(budget, legacy, where="search_semi_adjacent_parameter", default=60.0)
    if method == "brute-force":
        return semiadjacent_by_brute_force(space, invariant, table=table, t=t, n=n, limit=limit, budget=budget)
    if method == "graph-search":
        return semiadjacent_by_graph_search(space, invariant, table=table, t=t, n=n, limit=limit, budget=budget)
    if method == "integer-program":
        return semiadjacent_by_integer_program(space, invariant, table=table, t=t, n=n, budget=budget)
    t0 = time.monotonic()
    fib = make_fiber(space, invariant, table, t, n)
    est = fib.estimate_size(budget=budget.split(0.25))  # counting is work too: a quarter of the budget at most
    if est.value <= limit:
        rows = fib.enumerate(limit=limit, estimate=est)
        return graph_search_on(fib, rows, est, budget, t0, DEFAULT_LEVEL_LIMIT, note="")
    if fib.matrix is None:
        raise SearchTooLarge(
            f"a(t) for the {fib.invariant.describe()} needs enumeration (estimate {est.describe()})",
            est.value,
            limit,
            hint="Callable invariants are for small spaces; use a matrix invariant.",
        )
    note = f"switched from graph search to integer programming: fiber size {est.describe()} exceeds limit {limit}"
    return ilp_search(fib, table, t0, budget, 5000, 200_000, note=note)


def dataset_semiadjacent_distance(
    space: DataSpace,
    invariant: AnyInvariant,
    table: Sequence[int] | NDArray[np.integer],
    *,
    limit: int = DEFAULT_LIMIT,
    budget: Budget | None = None,
    **legacy: float,
) -> SemiAdjacentResult:
    r"""Per-dataset quantity of the given table -- **not** a(t) ([CA24, Def. 13], inner part).

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
    budget:
        The wall-clock :class:`~semidp.accountant.core.budget.Budget` of the integer-programming route (default 60 s;
        the deprecated ``time_limit=`` seconds still works for one release).

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
    >>> from semidp.accountant.data.invariants import Margins
    >>> space = DataSpace.of(("A", 2), ("B", 2))
    >>> inv = Margins((("A",), ("B",)))
    >>> dataset_semiadjacent_distance(space, inv, (1, 1, 1, 1)).value
    2
    >>> search_semi_adjacent_parameter(space, inv, table=(1, 1, 1, 1)).value   # a(t) is the same here
    2
    """
    t0 = time.monotonic()
    check_budget(limit)
    budget = budget_argument(budget, legacy, where="dataset_semiadjacent_distance", default=60.0)
    fib = make_fiber(space, invariant, table, None, None)
    h = np.array(table_histogram(fib, table), dtype=np.int64)
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
                    best_w = Witness(tuple(int(v) for v in h), int(x), int(y), tuple(int(v) for v in h2), val)
        fsize: int | None = int(rows.shape[0])
    else:
        assert fib.matrix is not None and fib.rhs is not None
        a, b = fib.matrix, fib.rhs
        support = sorted(fib.support(budget=budget))
        method = "integer-program"
        fsize = None
        for x in np.flatnonzero(h).tolist():
            g = h.copy()
            g[x] -= 1
            for y in support:
                if budget.expired:
                    complete = False
                    break
                by = b - a[:, y]
                st, g2, d = inner_min_ilp(a, by, g, bounds_for(a, by, fib.n - 1), budget)
                if g2 is None or st != "optimal":
                    complete = False
                    continue
                val = int(x != y) + d
                if val > best:
                    h2 = g2.copy()
                    h2[y] += 1
                    best = val
                    best_w = Witness(tuple(int(v) for v in h), int(x), int(y), tuple(int(v) for v in h2), val)
    if best_w is None:
        raise VerificationError("no witness found for the given table")
    note = "per-dataset quantity of the given table (a lower bound on a(t), not a(t))"
    if not complete:
        note += "; budget ran out, value is a lower bound"
    return SemiAdjacentResult(
        best,
        best if complete else fib.n,
        complete,
        method,
        best_w,
        fsize,
        None,
        fib.t,
        fib.n,
        note,
        time.monotonic() - t0,
    )
