r"""Exact Z3 certificates for the semi-adjacent parameter [CA24, Def. 13].

Independent of the searches in :mod:`accountant.combinatorics.semiadjacent_search` (which use
networkx-style enumeration and HiGHS in floating point), this module proves
:math:`a(t) = v` in exact integer arithmetic with Z3:

**Upper bound** :math:`a(t)\le r`. With :math:`G_x=\{h-e_x: h\in F, h_x\ge1\}`
(the other records when one holds :math:`x`), the least distance from
:math:`g\in G_x` to :math:`G_{x'}` is :math:`1+\min k` over *moves*
:math:`(P,N)`, multisets of :math:`k` cells with
:math:`A(P-N)=A(e_x-e_{x'})` and :math:`N\le g` (Lemmas 1-2 of
``accountant/combinatorics/semiadjacent_search.md``). So :math:`a(t)\le r` iff for every pair
:math:`x\ne x'` of cells in :math:`X_t` no :math:`g\in G_x` avoids every move of
size :math:`\le r-1`. Only the minimal :math:`N` matter; Z3 decides the
existential integer problem "some conforming :math:`g` has :math:`g\not\ge N`
for every minimal :math:`N`". *unsat* for every pair proves the bound; a model
is a counterexample dataset.

**Lower bound** :math:`a(t)\ge d` from a witness :math:`(h,x,x')`: Z3 proves no
conforming :math:`h'` with :math:`h'_{x'}\ge1` lies within distance
:math:`d-1` (:math:`[x\ne x']+\tfrac12\lVert(h-e_x)-(h'-e_{x'})\rVert_1`).

Outcomes map to ``Verified`` (unsat), ``Refuted`` (sat, with the model) and
``Unknown`` (Z3 ``unknown``, a timeout, or more moves than the budget); an
``Unknown`` never prints as success (house style R9).
"""

from __future__ import annotations

import itertools
from typing import Sequence

import numpy as np
import z3
from numpy.typing import NDArray

from semidp.accountant.core.budget import Budget
from semidp.accountant.core.outcome import Outcome, Refuted, Unknown, Verified
from semidp.accountant.data.dataspace import DataSpace
from semidp.accountant.data.exact_matrices import check_rows_with_n
from semidp.accountant.data.invariants import Invariant

#: Largest number of candidate move pairs enumerated per cell pair before giving up (Unknown).
MOVE_BUDGET = 2_000_000


def _exact_system(
    space: DataSpace, invariant: Invariant, table: Sequence[int]
) -> tuple[NDArray[np.int64], list[int], int]:
    """``A`` (int64, checked within the exact range for ``n`` records), ``t = A h`` in Python ints, and ``n``.

    Z3 receives the rows and ``t`` as Python ints: the numbers the report states (the loader's gcd-reduced
    rows), never values that went through a wrapping int64 product."""
    h = [int(v) for v in table]
    n = sum(h)
    a = invariant.matrix(space)
    check_rows_with_n("invariant.matrix", a, n)
    t = [sum(c * v for c, v in zip(row, h) if c and v) for row in a.tolist()]
    return a, t, n


def _fiber_constraints(a: NDArray[np.int64], t: Sequence[int], n: int, h: list[z3.ArithRef]) -> list[z3.BoolRef]:
    cons = [v >= 0 for v in h] + [z3.Sum(h) == n]
    for row, tv in zip(a.tolist(), list(t)):
        terms = [c * v for c, v in zip(row, h) if c != 0]
        cons.append((z3.Sum(terms) if terms else z3.IntVal(0)) == tv)
    return cons


def _solver(timeout_ms: int) -> z3.Solver:
    s = z3.Solver()
    s.set("timeout", timeout_ms)
    return s


def support(
    space: DataSpace, invariant: Invariant, table: Sequence[int], *, timeout_ms: int = 10_000
) -> list[int] | None:
    """Cells held by some record of some conforming dataset (:math:`X_t`), decided by Z3; None if unknown."""
    a, t, n = _exact_system(space, invariant, table)
    h0 = [int(v) for v in table]
    out = []
    for c in range(space.n_cells):
        if h0[c] > 0:
            out.append(c)
            continue
        h = [z3.Int(f"h{i}") for i in range(space.n_cells)]
        s = _solver(timeout_ms)
        s.add(*_fiber_constraints(a, t, n, h), h[c] >= 1)
        res = s.check()
        if res == z3.unknown:
            return None
        if res == z3.sat:
            out.append(c)
    return out


def _multisets(cells: int, k: int) -> list[tuple[int, ...]]:
    return list(itertools.combinations_with_replacement(range(cells), k))


def _minimal_move_supports(a: NDArray[np.int64], x: int, x2: int, max_size: int) -> list[dict[int, int]] | None:
    """Minimal N (as cell -> count) over moves (P, N), |P| = |N| <= max_size, A(P - N) = A(e_x - e_x2)."""
    d = a.shape[1]
    target = a[:, x] - a[:, x2]
    found: list[dict[int, int]] = []
    for k in range(max_size + 1):
        sets = _multisets(d, k)
        if len(sets) ** 2 > MOVE_BUDGET:
            return None
        by_key: dict[bytes, list[tuple[int, ...]]] = {}
        for p in sets:
            key = (a[:, list(p)].sum(axis=1) if p else np.zeros(a.shape[0], dtype=np.int64)) - target
            by_key.setdefault(key.astype(np.int64).tobytes(), []).append(p)
        for nset in sets:
            key = a[:, list(nset)].sum(axis=1) if nset else np.zeros(a.shape[0], dtype=np.int64)
            if key.astype(np.int64).tobytes() in by_key:
                counts: dict[int, int] = {}
                for c in nset:
                    counts[c] = counts.get(c, 0) + 1
                if not any(all(counts.get(c, 0) >= m for c, m in f.items()) for f in found):
                    found.append(counts)
    return found


def _ms_left(budget: Budget, timeout_ms: int) -> int:
    """The solver timeout: ``timeout_ms``, cut to what is left of ``budget`` (at least 1 ms)."""
    left = budget.remaining()
    return timeout_ms if left == float("inf") else max(1, min(timeout_ms, int(left * 1000)))


def certify_upper_bound(
    space: DataSpace,
    invariant: Invariant,
    table: Sequence[int],
    r: int,
    *,
    timeout_ms: int = 20_000,
    budget: Budget | None = None,
) -> Outcome:
    """Prove :math:`a(t) \\le r` exactly with Z3 (see the module docstring); ``Unknown`` once ``budget``
    (default unlimited) expires."""
    budget = Budget.unlimited() if budget is None else budget
    a, t, n = _exact_system(space, invariant, table)
    xt = support(space, invariant, table, timeout_ms=_ms_left(budget, timeout_ms))
    if xt is None:
        return Unknown("z3 could not decide which cells are plausible (timeout)")
    if len(xt) <= 1:
        return Verified("X_t has at most one cell: a(t) = 0")
    if r < 1:
        return Refuted(f"a(t) >= 1 since X_t has {len(xt)} cells")
    pairs, total = 0, len(xt) * (len(xt) - 1)
    for x, x2 in itertools.permutations(xt, 2):
        if budget.expired:
            return Unknown(f"z3 ran out of time after {pairs} of {total} ordered cell pairs")
        moves = _minimal_move_supports(a, x, x2, r - 1)
        if moves is None:
            return Unknown(f"more than {MOVE_BUDGET} candidate moves of size <= {r - 1}")
        g = [z3.Int(f"g{i}") for i in range(space.n_cells)]
        s = _solver(_ms_left(budget, timeout_ms))
        # g + e_x is conforming: A(g + e_x) = t, sum g = n - 1, g >= 0
        s.add(*_fiber_constraints(a, [tv - int(c) for tv, c in zip(t, a[:, x].tolist())], n - 1, g))
        for m in moves:
            s.add(z3.Or(*[g[c] < cnt for c, cnt in m.items()]) if m else z3.BoolVal(False))
        res = s.check()
        if res == z3.unknown:
            return Unknown(f"z3 returned unknown for cells ({x}, {x2}): {s.reason_unknown()}")
        if res == z3.sat:
            model = s.model()
            gv = [model.eval(v, model_completion=True).as_long() for v in g]
            gv[x] += 1
            return Refuted(
                f"a(t) > {r}: in the conforming dataset with histogram {gv}, an individual in cell {x} "
                f"needs more than {r} replacements to hold cell {x2}"
            )
        pairs += 1
    return Verified(f"z3: a(t) <= {r} proved for all {pairs} ordered cell pairs of X_t (unsat each)")


def certify_lower_bound(
    space: DataSpace,
    invariant: Invariant,
    dataset: Sequence[int],
    record: int,
    target: int,
    distance: int,
    *,
    timeout_ms: int = 20_000,
) -> Outcome:
    """Prove that the witness needs ``distance`` replacements: no conforming completion is closer."""
    a, t, n = _exact_system(space, invariant, dataset)
    h0 = [int(v) for v in dataset]
    if h0[record] < 1:
        return Refuted(f"the witness dataset holds no record in cell {record}")
    if distance <= 0:
        return Verified("distance 0 needs no proof")
    g = [v - (1 if c == record else 0) for c, v in enumerate(h0)]
    h2 = [z3.Int(f"k{i}") for i in range(space.n_cells)]
    s = _solver(timeout_ms)
    s.add(*_fiber_constraints(a, t, n, h2), h2[target] >= 1)
    g2 = [h2[c] - (1 if c == target else 0) for c in range(space.n_cells)]
    absdiff = [z3.If(gc - v >= 0, gc - v, v - gc) for gc, v in zip(g, g2)]
    same = 0 if record != target else 1
    # distance <= distance - 1  <=>  (1 - same) + sum|.| / 2 <= distance - 1
    s.add(z3.Sum(absdiff) <= 2 * (distance - 1 - (1 - same)))
    res = s.check()
    if res == z3.unknown:
        return Unknown(f"z3 returned unknown: {s.reason_unknown()}")
    if res == z3.sat:
        m = s.model()
        return Refuted(
            f"a closer conforming dataset exists: histogram {[m.eval(v, model_completion=True).as_long() for v in h2]}"
        )
    return Verified(f"z3: no conforming dataset within {distance - 1} replacements (unsat)")


def certify_value(
    space: DataSpace,
    invariant: Invariant,
    table: Sequence[int],
    value: int,
    dataset: Sequence[int],
    record: int,
    target: int,
    *,
    timeout_ms: int = 20_000,
    budget: Budget | None = None,
) -> Outcome:
    """:math:`a(t) = v` exactly: the witness proves :math:`\\ge v`, the move argument :math:`\\le v`
    (within ``budget`` in all, default unlimited: then ``Unknown`` with how far it got)."""
    budget = Budget.unlimited() if budget is None else budget
    low = certify_lower_bound(space, invariant, dataset, record, target, value, timeout_ms=_ms_left(budget, timeout_ms))
    if not isinstance(low, Verified):
        return low
    up = certify_upper_bound(space, invariant, table, value, timeout_ms=timeout_ms, budget=budget)
    if not isinstance(up, Verified):
        return up
    return Verified(f"a(t) = {value} proved exactly by z3 ({low.certificate}; {up.certificate})")
