"""Independent evidence for the semi-adjacent parameter a(t) reported by an audit.

A search result's witness is re-checked from scratch (:mod:`verify.witness`) and,
up to :data:`Z3_CELL_LIMIT` cells, a(t) is proved exactly by Z3
(:mod:`verify.z3_semiadjacent`); a closed form is cross-checked by graph search
over the fiber up to :data:`CROSS_CHECK_LIMIT` conforming histograms [CA24, Def. 13].
"""

from __future__ import annotations

from semidp.accountant.combinatorics.semiadjacent import SemiAdjacentParameter
from semidp.accountant.combinatorics.semiadjacent_graph import semiadjacent_by_graph_search
from semidp.accountant.core.budget import Budget
from semidp.accountant.core.errors import SearchTooLarge, ToolkitError
from semidp.accountant.core.outcome import Outcome, Refuted, Unknown, Verified
from semidp.accountant.data.callable_invariant import CallableInvariant
from semidp.accountant.data.dataspace import DataSpace
from semidp.accountant.data.invariants import Invariant
from semidp.accountant.guarantees.relations import AddRemove, BaseRelation
from semidp.verify.witness import check_result
from semidp.verify.z3_semiadjacent import certify_value

#: Largest fiber (conforming histograms) on which a closed form is cross-checked by search.
CROSS_CHECK_LIMIT = 100_000

#: Up to this many cells Z3 proves a(t) without a time limit of its own (each solve has a timeout).
Z3_CELL_LIMIT = 16

#: Beyond Z3_CELL_LIMIT, Z3 is tried on tables up to this many cells within a share of the remaining budget.
Z3_LARGE_CELL_LIMIT = 400

#: Most seconds the search cross-check of a closed-form a(t) takes.
CROSS_CHECK_SECONDS = 10.0
#: Share of the remaining budget Z3 may use on a table beyond Z3_CELL_LIMIT cells.
Z3_BUDGET_SHARE = 0.5


def z3_proof(
    space: DataSpace,
    inv: Invariant,
    table: list[int] | None,
    a: SemiAdjacentParameter,
    budget: Budget | None = None,
) -> Outcome:
    """Z3's exact proof of a search result's a(t) at the table (unknown when not attempted or out of time, with
    why). Beyond :data:`Z3_CELL_LIMIT` cells it runs within :data:`Z3_BUDGET_SHARE` of what remains of
    ``budget`` (and is not attempted without a bounded one)."""
    if a.search is None or table is None or not a.exact or isinstance(inv, CallableInvariant):
        return Unknown("not attempted (needs an exact search result at the actual table)")
    limit: Budget | None = None
    if space.n_cells > Z3_CELL_LIMIT:
        if space.n_cells > Z3_LARGE_CELL_LIMIT or budget is None or not budget.bounded:
            return Unknown(f"not attempted ({space.n_cells} cells > {Z3_LARGE_CELL_LIMIT}, or no time budget)")
        limit = budget.split(Z3_BUDGET_SHARE)
    w = a.search.witness
    return certify_value(space, inv, table, a.search.value, w.dataset, w.record, w.target, budget=limit)


def check_semi_adjacent(
    space: DataSpace,
    inv: Invariant,
    rel: BaseRelation,
    a: SemiAdjacentParameter,
    table: list[int] | None,
    budget: Budget | None = None,
) -> Outcome:
    """Independent evidence for a(t): re-check a search witness, or cross-check a closed form by search
    (within ``budget``, default :data:`CROSS_CHECK_SECONDS` from now; the cross-check at most that long)."""
    budget = Budget.of(CROSS_CHECK_SECONDS) if budget is None else budget
    head = f"a(t) = {a.value} by {a.method} ({'exact' if a.exact else 'upper bound'}, {a.scope})"
    if a.search is not None:
        chk = check_result(space, inv, a.search, table=table)
        if not chk.passed:
            return Refuted(f"BUG: {head}, but the witness check failed: {chk.reason}")
        proof = z3_proof(space, inv, table, a, budget)
        if isinstance(proof, Refuted):
            return Refuted(f"BUG: {head}, but z3 disagrees: {proof.counterexample}")
        z3_note = (
            f"certified (z3, exact integers): {proof.certificate}"
            if isinstance(proof, Verified)
            else f"UNVERIFIED by an independent method: the value rests on {a.method} alone (z3: {proof.reason})"
        )
        return Verified(f"{head}; witness re-checked from scratch ({chk.reason}); {z3_note}")
    if a.method == "trivial-bound":
        return Verified(f"{head}: {a.witness}")
    if table is None or a.method != "closed-form":
        return Verified(f"{head}; no table given, so the closed form is not cross-checked by search")
    try:
        r = semiadjacent_by_graph_search(
            space,
            inv,
            table=table,
            limit=CROSS_CHECK_LIMIT,
            budget=budget.child(CROSS_CHECK_SECONDS),
        )
    except SearchTooLarge as e:  # the summary: the hint names Python arguments
        return Verified(f"{head}; not cross-checked by search ({e.summary})")
    except ToolkitError as e:
        return Verified(f"{head}; not cross-checked by search ({e})")
    hamming = r.value * (2 if isinstance(rel, AddRemove) else 1)
    if r.exact and hamming != a.value and a.exact:
        return Refuted(f"BUG: closed form gives {a.value} but graph search gives {hamming}")
    if r.exact and hamming > a.value:
        return Refuted(f"BUG: closed-form bound {a.value} is below the exact value {hamming}")
    return Verified(
        f"{head}; graph search over {r.fiber_size} conforming histograms gives "
        f"{hamming}{' (the closed form is an upper bound)' if hamming < a.value else ''}"
    )


__all__ = [
    "CROSS_CHECK_LIMIT",
    "Z3_BUDGET_SHARE",
    "Z3_CELL_LIMIT",
    "Z3_LARGE_CELL_LIMIT",
    "check_semi_adjacent",
    "z3_proof",
]
