r"""a(t) by integer programming (HiGHS) with lazy cut generation, for fibers too large to enumerate.

A master problem over the dataset, the individual and the target, and an inner
minimum-distance integer program; cuts are added until the master's optimum is
realised, or stopped as soon as the best value reaches the structural upper
bound [CA24, Thm. 16].
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

from semidp.accountant.combinatorics.fiber import (
    AnyInvariant,
    Fiber,
    solve_milp,
)
from semidp.accountant.combinatorics.record_multisets import RecordOffsets, dedupe_rows
from semidp.accountant.combinatorics.semiadjacent_results import (
    SemiAdjacentResult,
    Witness,
    make_fiber,
    pair_bound_fn,
    replacement_distance,
    zero_result,
)
from semidp.accountant.core.arguments import check_int
from semidp.accountant.core.budget import Budget, budget_argument
from semidp.accountant.core.errors import BudgetExhausted, InvalidArgument, VerificationError
from semidp.accountant.core.progress import Progress
from semidp.accountant.data.dataspace import DataSpace

WITNESS_FLOOR = 10.0
"""Seconds the integer-program search may give its one witness after the budget ran out (none would be a
worse answer: BudgetExhausted); the only place a search overruns its :class:`Budget`, by at most this."""


def inner_min_ilp(
    a: NDArray[np.int64],
    b_other: NDArray[np.int64],
    g: NDArray[np.int64],
    ub: NDArray[np.int64],
    budget: Budget,
) -> tuple[str, NDArray[np.int64] | None, int]:
    """min |g - g'|_1 / 2 over integer g' >= 0, A g' = b_other, within ``budget``. Returns (status, g', dist).

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
    res = solve_milp(
        c=c,
        integrality=integ,
        bounds=Bounds(lb, ubv),
        constraints=[LinearConstraint(aeq, beq, beq)],
        options={"time_limit": max(budget.remaining(), 1e-3), "mip_rel_gap": 0.0, "presolve": True},
    )
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


class IlpMaster:
    """Is there ``g in G_x`` and a target ``y`` with ``min_{g' in G_y} |g - g'|_1 / 2 >= m``?

    Variables: ``g`` (integer, ``A g = b_x``, ``0 <= g <= U``), indicators
    ``y[c, v]`` (``v = 0..m-2``) with ``y[c, v] = 1 => g_c <= v``, and a one-hot
    choice ``z[j]`` of the target. A cut for target ``j`` and removed records
    ``N`` (``|N| <= m - 1``) says "if target ``j`` is chosen, ``g`` does not
    contain ``N``": ``sum_{c in N} y[c, N_c - 1] >= z[j]``. It is valid because
    ``g >= N`` would put ``g + P - N`` in ``G_y`` within distance ``|N| < m``.
    """

    def __init__(
        self, a: NDArray[np.int64], b_x: NDArray[np.int64], ub: NDArray[np.int64], m: int, n_targets: int
    ) -> None:
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

    def solve(self, budget: Budget) -> tuple[str, NDArray[np.int64] | None, int]:
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
        res = solve_milp(
            c=np.zeros(nv),
            integrality=np.ones(nv),
            bounds=Bounds(lb, ubv),
            constraints=cons,
            options={"time_limit": max(budget.remaining(), 1e-3), "presolve": True},
        )
        if res.status == 2:
            return "infeasible", None, -1
        if res.x is None:
            return "unknown", None, -1
        g = np.rint(res.x[:k]).astype(np.int64)
        z = np.rint(res.x[oz:]).astype(np.int64)
        if not (np.array_equal(self.a @ g, self.b) and (g >= 0).all() and (g <= self.ub).all() and int(z.sum()) == 1):
            return "unknown", None, -1
        return "feasible", g, int(z.argmax())


def semiadjacent_by_integer_program(
    space: DataSpace,
    invariant: AnyInvariant,
    *,
    table: Sequence[int] | NDArray[np.integer] | None = None,
    t: object = None,
    n: int | None = None,
    budget: Budget | None = None,
    max_cuts: int = 5000,
    level_limit: int = 200_000,
    **legacy: float,
) -> SemiAdjacentResult:
    r"""a(t) by integer programming, without enumerating the fiber [CA24, Def. 13, Thm. 16].

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
        As for :func:`~accountant.combinatorics.semiadjacent_graph.semiadjacent_by_graph_search` (matrix invariants only).
    budget:
        The wall-clock :class:`~semidp.accountant.core.budget.Budget` (default 60 s; the deprecated ``time_limit=``
        seconds still works for one release); when it runs out the result has ``exact=False``, ``value`` a
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
    >>> from semidp.accountant.data.invariants import Margins
    >>> space = DataSpace.of(("A", 2), ("B", 2), ("C", 2))
    >>> inv = Margins((("A",), ("B",), ("C",)))
    >>> r = semiadjacent_by_integer_program(space, inv, table=(1, 1, 1, 0, 1, 0, 0, 0))
    >>> r.value, r.exact                                     # docs/reference/semi-dp.md §9, T-A7
    (4, True)
    """
    t0 = time.monotonic()
    budget = budget_argument(budget, legacy, where="semiadjacent_by_integer_program", default=60.0)
    check_int("max_cuts", max_cuts, minimum=1)
    check_int("level_limit", level_limit, minimum=0)
    fib = make_fiber(space, invariant, table, t, n)
    if fib.matrix is None or fib.rhs is None:
        raise InvalidArgument(
            f"The integer-programming search needs a matrix invariant; {fib.invariant.describe()} "
            "has none. Use method='graph-search' (small spaces) instead."
        )
    return ilp_search(fib, table, t0, budget, max_cuts, level_limit, note="")


def ilp_search(
    fib: Fiber,
    table: Sequence[int] | NDArray[np.integer] | None,
    t0: float,
    budget: Budget,
    max_cuts: int,
    level_limit: int,
    note: str,
) -> SemiAdjacentResult:
    assert fib.matrix is not None and fib.rhs is not None
    a, b = fib.matrix, fib.rhs
    method = "integer-program"
    notes = [note] if note else []

    def remaining() -> float:
        return budget.remaining()

    support_ex = fib.support(budget=Budget.of(max(budget.remaining(), 1e-3)))
    if not support_ex:
        raise InvalidArgument(
            f"No dataset with n={fib.n} records has invariant value t={fib.t!r} "
            f"({fib.invariant.describe()}); D_t is empty and a(t) is undefined."
        )
    support = sorted(support_ex)
    if len(support) == 1:
        h = np.array(support_ex[support[0]], dtype=np.int64)
        return zero_result(fib, h, method, 1, 1, "", t0)
    pair_bound, bound_note = pair_bound_fn(fib)
    b_of = {x: b - a[:, x] for x in support}
    ub_of = {x: bounds_for(a, b_of[x], fib.n - 1) for x in support}
    offsets = RecordOffsets(a, level_limit) if level_limit > 0 else None

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
        h0 = np.array(table_histogram(fib, table), dtype=np.int64)
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
            status, g2, d = inner_min_ilp(a, b_of[y], g, ub_of[y], budget)
            if g2 is not None and status == "optimal":
                consider(x, y, g, g2, d)
    if best_w is None:  # the budget ran out before any start finished: one witness anyway
        x, y = support[0], support[1]
        g = np.array(support_ex[x], dtype=np.int64)
        g[x] -= 1
        # the one witness may overrun the budget by at most WITNESS_FLOOR seconds (a Budget share never can)
        witness_budget = Budget.of(max(remaining(), WITNESS_FLOOR))
        status, g2, d = inner_min_ilp(a, b_of[y], g, ub_of[y], witness_budget)
        if g2 is None or status != "optimal":
            raise BudgetExhausted("--time-limit ran out before a single a(t) witness was found", 0)
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
            status, _, gd, gd2, d, lazy = decide_record(a, x, [y], b_of, ub_of, m, offsets, budget, max_cuts)
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
    w = Witness(tuple(int(v) for v in h), x, y, tuple(int(v) for v in h2), replacement_distance(h, x, h2, y))
    if w.distance != 1 + best:
        raise VerificationError(f"internal error: witness distance {w.distance} != 1 + {best}")
    upper = w.distance if complete else max(w.distance, 1 + unresolved_bound)
    notes.append(f"{n_decisions} master problems, {n_lazy} lazy cuts")
    notes.append(bound_note)
    return SemiAdjacentResult(
        w.distance, upper, complete, method, w, None, None, fib.t, fib.n, "; ".join(notes), time.monotonic() - t0
    )


def bounds_for(a: NDArray[np.int64], b: NDArray[np.int64], n: int) -> NDArray[np.int64]:
    from semidp.accountant.combinatorics.fiber import cell_bounds

    return np.maximum(cell_bounds(a, b, n), 0)


def table_histogram(fib: Fiber, table: Sequence[int] | NDArray[np.integer]) -> tuple[int, ...]:
    from semidp.accountant.combinatorics.fiber import histogram_from_table

    return histogram_from_table(fib.space, table)


def decide_record(
    a: NDArray[np.int64],
    x: int,
    ys: list[int],
    b_of: dict[int, NDArray[np.int64]],
    ub_of: dict[int, NDArray[np.int64]],
    m: int,
    offsets: RecordOffsets | None,
    budget: Budget,
    max_cuts: int,
) -> tuple[str, int, NDArray[np.int64] | None, NDArray[np.int64] | None, int, int]:
    """Is some ``g in G_x`` at distance ``>= m`` from some ``G_y``, ``y in ys``?

    Returns ``(status, y, g, g', d, lazy_cuts)`` with status ``"yes"`` (then
    ``d >= m`` is the exact distance of ``g`` from ``G_y``, proven by the inner
    program), ``"no"`` (master infeasible: a proof), or ``"timeout"`` /
    ``"unknown"`` / ``"cut-limit"``.
    """
    master = IlpMaster(a, b_of[x], ub_of[x], m, len(ys))
    if offsets is not None:
        for j, y in enumerate(ys):
            for r in range(1, m):
                if offsets.size(r) > offsets.level_limit:
                    break
                nset, _ = offsets.candidates(r, x, y)
                if nset.shape[0]:
                    for nvec in dedupe_rows(nset, r)[0]:
                        master.add_cut(j, nvec)
    lazy = 0
    while True:
        rem = budget.remaining()
        if rem <= 0:
            return "timeout", -1, None, None, -1, lazy
        status, g, j = master.solve(budget)
        if status == "infeasible":
            return "no", -1, None, None, -1, lazy
        if status != "feasible" or g is None:
            return "unknown", -1, None, None, -1, lazy
        y = ys[j]
        st, g2, d = inner_min_ilp(a, b_of[y], g, ub_of[y], budget)
        if g2 is None or st != "optimal":
            return "unknown", -1, None, None, -1, lazy
        if d >= m:
            return "yes", y, g, g2, d, lazy
        if not master.add_cut(j, np.maximum(g - g2, 0)):
            raise VerificationError("internal error: repeated cut in the master problem")
        lazy += 1
        if lazy > max_cuts:
            return "cut-limit", -1, None, None, -1, lazy
