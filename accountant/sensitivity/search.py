r"""Exact Semi-DP sensitivity spaces by enumeration [CA24, Def. 4, Sec. 4].

The Semi-DP sensitivity space of a query ``q`` of the histogram is the
sensitivity space (Def. 4) of the conforming datasets under the adjacency
:math:`A_{a(t)}` (Sec. 4):

.. math::

    S_{\rm semi} = \{ q(X) - q(X') : X, X' \in D_t,\ d_H(X, X') \le a \}.

Reduction to histograms
-----------------------
For a dataset ``X`` with histogram ``h`` and any histogram ``h'`` with the same
total, the least Hamming distance to a dataset with histogram ``h'`` is
:math:`\tfrac12\|h - h'\|_1` (Lemma 1 of ``semiadjacent_search.md`` without the
individual constraint), and it is attained. So, with
:math:`F = \{h \ge 0 : A h = t,\ \mathbf 1^\top h = n\}`,

.. math::

    S^{\rm cells} = \{ h - h' : h, h' \in F,\ \tfrac12 \|h - h'\|_1 \le a \}
      = \{ u \in \mathbb Z^k : A u = 0,\ \mathbf 1^\top u = 0,\ \|u^+\|_1 \le a,\
           \exists h \in F,\ h \ge u^+ \},

because ``h - u`` is then in ``F`` (same ``A``-value and total, and
``h - u = (h - u^+) + u^- \ge 0``); the condition depends on ``u^+`` only and
holds for ``u`` iff it holds for ``-u`` (witness ``h - u``). A linear query
``Q h`` has :math:`S = Q S^{\rm cells}`.

Algorithm
---------
1. **Candidates** (meet in the middle): every nonzero ``u`` above is
   ``P - N`` for the multisets ``P = u^+``, ``N = u^-`` of ``s = \|u^+\|_1 \le a``
   records with disjoint supports and ``A P = A N``. Level by level
   (``s = 1..a``) all multisets are hashed through ``A`` (the linear 64-bit hash
   of :class:`accountant.combinatorics.record_multisets.RecordOffsets`), equal hashes are
   paired, and every pair is re-checked exactly (disjoint supports and
   ``A(P - N) = 0`` in integers), so a hash collision can cost time, never
   correctness, and each ``u`` is produced exactly once (as ``(u^+, u^-)``).
   The number of multisets and then the exact number of pairs are computed
   **before** pairing and the search is refused above the limits
   (:class:`~accountant.core.errors.SearchTooLarge`, naming the estimate and the limit).
2. **Realisability** at the actual ``t``: "is there ``h \in F`` with
   ``h \ge u^+``?" -- by the enumerated fiber (bitsets of
   :class:`accountant.combinatorics.record_multisets.RowBits`) when its size, estimated
   before enumerating, is at most ``fiber_limit``; otherwise by integer
   feasibility (HiGHS, :func:`accountant.combinatorics.fiber.integer_point`), where every
   feasible ``h`` found certifies all candidates below it and every
   infeasible lower bound refutes all candidates above it.
   **Worst case over t** (no ``t``): ``u`` is realisable for some ``t`` iff
   ``n \ge \|u^+\|_1`` (take ``h = u^+`` plus ``n - \|u^+\|_1`` records
   anywhere; necessity: ``n = \sum h \ge \sum u^+``); with ``n`` unknown it is
   assumed ``\ge a`` and the label says so.

Every vector comes with a witness ``h`` (``h`` and ``h - u`` conforming) that
the tests re-check independently; completeness is the enumeration of step 1.

Closed form (fallback)
----------------------
An ``r x c`` table under both one-way margins with ``a <= 3``: the nonzero
``u`` are exactly the :math:`2\times2` moves and the 3-cycles
(:func:`accountant.sensitivity.spaces.table_space`, Notes: an integer
margin-preserving ``u`` with :math:`\|u\|_1\le 6` has entries in
:math:`\{0,\pm1\}` -- an entry :math:`\pm2` forces :math:`\|u\|_1\ge 8` -- and
its support is an alternating cycle of length 4 or 6 in the row-column
bipartite graph). When enumeration is refused, these are used as the
candidates and realisability is still decided exactly; the result says so.

References
----------
[CA24] Cho & Awan, "Formal Privacy Guarantees with Invariant Statistics",
       arXiv:2410.17468v1: Def. 4 (sensitivity space, after Awan & Slavković
       2021), Sec. 4 (Semi-DP sensitivity space, Prop. 24 naive spaces,
       Prop. 25 rank deficiency), Prop. 32 (tables; incomplete for
       :math:`\min(r, c) \ge 3`, ``docs/reference/semi-dp.md`` §5 caveat).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from semidp.accountant.combinatorics.fiber import (
    AnyInvariant,
    Fiber,
    FiberSize,
    conforming_fiber,
    histogram_from_table,
)
from semidp.accountant.combinatorics.record_multisets import dedupe_rows
from semidp.accountant.combinatorics.semiadjacent_results import SemiAdjacentResult
from semidp.accountant.core.arguments import check_int
from semidp.accountant.core.budget import Budget, budget_argument
from semidp.accountant.core.errors import InvalidArgument, SearchTooLarge
from semidp.accountant.data.callable_invariant import CallableInvariant
from semidp.accountant.data.dataspace import DataSpace
from semidp.accountant.data.exact_matrices import check_rows_with_n, exact_image
from semidp.accountant.sensitivity.kernel_moves import (
    kernel_moves,
)
from semidp.accountant.sensitivity.realise import (
    fiber_groups,
    fiber_pair_differences,
    realise_by_fiber,
    realise_by_ilp,
)
from semidp.accountant.sensitivity.results import (
    DEFAULT_FIBER_LIMIT,
    DEFAULT_MULTISET_LIMIT,
    DEFAULT_PAIR_LIMIT,
    MATRIX_INVARIANTS,
    METHODS,
    Query,
    SensitivitySearchResult,
    canonical_sign,
    format_t,
    one_way_table,
    positive_sign,
    query_matrix,
    space_from_array,
)
from semidp.accountant.sensitivity.spaces import (
    SensitivitySpace,
    table_space,
)


def semi_sensitivity_search(
    space: DataSpace,
    invariant: AnyInvariant,
    radius: int | SemiAdjacentResult,
    *,
    table: Sequence[int] | NDArray[np.integer[Any]] | None = None,
    t: object = None,
    n: int | None = None,
    query: Query | None = None,
    method: str = "auto",
    limit: int = DEFAULT_PAIR_LIMIT,
    multiset_limit: int = DEFAULT_MULTISET_LIMIT,
    fiber_limit: int = DEFAULT_FIBER_LIMIT,
    budget: Budget | None = None,
    **legacy: float,
) -> SensitivitySearchResult:
    r"""The exact Semi-DP sensitivity space with witnesses [CA24, Def. 4, Sec. 4].

    .. math::

        S_{\rm semi} = \{ q(X) - q(X') : X, X' \in D_t,\ d_H(X, X') \le a \}

    for the histogram (``query=None``) or a linear query ``Q h``; algorithm and
    proofs in the module docstring.

    Parameters
    ----------
    space, invariant:
        The data space and the published statistic (matrix or callable invariant).
    radius:
        The semi-adjacent parameter ``a``; a :class:`SemiAdjacentResult` may be
        passed, and its proven upper bound is used (a larger radius only enlarges
        the space, so this is conservative).
    table:
        The confidential histogram; gives ``t`` and ``n`` (space at the actual ``t``).
    t, n:
        The published value and number of records when no table is given. Without
        ``t`` and ``table`` the result is the **worst case over t** (union of the
        spaces of all ``t`` with ``n`` records; ``n=None`` assumes ``n >= a``).
    query:
        ``None`` (histogram), an integer matrix ``Q`` (``rows x cells``) or a
        count statistic such as ``Margins((("A",),))`` whose matrix is used.
    method:
        ``"auto"`` (enumeration; callable invariants: pairs of fiber elements;
        when enumeration is refused and the closed form applies -- a two-way
        table under both one-way margins with ``a <= 3`` -- its candidates are
        used instead and the ``note`` says so), ``"enumeration"`` (never
        switches), ``"closed-form"`` (tables only) or ``"fiber-pairs"`` (all
        pairs of conforming histograms; requires ``n``).
    limit:
        Largest number of candidate pairs (equal-hash multiset pairs, or fiber
        pairs) examined; counted before pairing.
    multiset_limit:
        Largest number of record multisets hashed; counted before hashing.
    fiber_limit:
        Largest fiber enumerated for the realisability test; above it, integer
        feasibility programs decide (the ``realised_by`` field says which).
    budget:
        The wall-clock :class:`~semidp.accountant.core.budget.Budget` (default 60 s from the call; the deprecated
        ``time_limit=`` seconds still works for one release). Integer programs still undecided when it runs out are counted
        as realisable (conservative; ``exact=False`` and listed in ``undecided``).

    Returns
    -------
    SensitivitySearchResult
        ``space.label`` says ``"exact enumeration (actual t)"`` or
        ``"(worst case over t)"`` and how realisability was decided.

    Raises
    ------
    SearchTooLarge
        Enumeration refused and no closed form applies (estimate and limit named).
    InvalidArgument
        Bad inputs, unknown method, ``t`` and radius result for different values,
        enumeration out of time.

    Examples
    --------
    >>> from semidp.accountant.data.invariants import Margins
    >>> space = DataSpace.of(("A", 3), ("B", 3))
    >>> r = semi_sensitivity_search(space, Margins((("A",), ("B",))), 3, n=3)
    >>> r.space.size, r.space.l1, r.space.l2_squared, r.space.rank    # reference T-S2
    (31, 6, 6, 4)
    >>> r.space.label
    'Semi-DP sensitivity space, exact enumeration (worst case over t, n=3), radius a=3'
    """
    t0 = time.monotonic()
    if method not in METHODS:
        raise InvalidArgument(f"method={method!r} must be one of {list(METHODS)}.")
    if not isinstance(space, DataSpace):
        raise InvalidArgument(f"space={space!r} must be a DataSpace.")
    if not isinstance(invariant, MATRIX_INVARIANTS + (CallableInvariant,)):
        raise InvalidArgument(
            f"invariant={invariant!r} must be one of NoInvariant, Total, Margins, Linear, "
            "Counting or CallableInvariant."
        )
    check_int("limit", limit, minimum=1)
    check_int("multiset_limit", multiset_limit, minimum=1)
    check_int("fiber_limit", fiber_limit, minimum=1)
    budget = budget_argument(budget, legacy, where="semi_sensitivity_search", default=60.0)
    notes: list[str] = []
    if isinstance(radius, SemiAdjacentResult):
        res = radius
        a = res.upper
        if not res.exact:
            notes.append(f"radius from an inexact a(t) search: its upper bound {a} is used")
    else:
        res = None
        a = check_int("radius", radius, minimum=0)
    qmat = query_matrix(space, query)
    k = space.n_cells
    actual = table is not None or t is not None
    fib: Fiber | None = None
    if actual:
        fib = conforming_fiber(space, invariant, table=table, t=t, n=n)
        n = fib.n
        if res is not None and res.t != fib.t:
            raise InvalidArgument(f"the radius was computed for t={res.t!r}, but this space is for t={fib.t!r}.")
    else:
        if n is not None:
            n = check_int("n", n, minimum=1)
        if res is not None:
            notes.append(
                f"radius {a} is a(t) at t={format_t(res.t)}; the union over t uses it for "
                "every t (use sup_t a(t), e.g. Thm. 16, for a bound valid for all t)"
            )
    table_rc = one_way_table(space, invariant)
    if method == "closed-form" and (table_rc is None or a > 3):
        raise InvalidArgument(
            "method='closed-form' applies to a two-feature table under both one-way margins "
            f"with radius <= 3 (Cho & Awan Prop. 32 corrected); got the {invariant.describe()} "
            f"over {len(space.features)} feature(s), radius {a}."
        )
    if isinstance(invariant, CallableInvariant) and method in ("enumeration", "closed-form"):
        raise InvalidArgument(
            f"method={method!r} needs a matrix invariant; a callable invariant has no matrix "
            "(use method='fiber-pairs' or 'auto')."
        )

    # ---- candidates and realisability: arrays of (u, witness h) for one sign of each +-u
    empty = np.zeros((0, k), dtype=np.int64)
    found_u, found_h, undec = empty, empty, empty
    pairs = 0
    if isinstance(invariant, CallableInvariant) or method == "fiber-pairs":
        cand_from = realised = "fiber-pairs"
        groups, gnote = fiber_groups(space, invariant, fib, n, fiber_limit)
        notes.append(gnote)
        u, h, pairs = fiber_pair_differences(groups, a, limit, budget, "pairing conforming histograms")
        if u.shape[0]:
            # one sign per +-u (first nonzero entry positive); the witness of -u is h - u
            sign = np.sign(u[np.arange(u.shape[0]), (u != 0).argmax(axis=1)])
            h = np.where(sign[:, None] > 0, h, h - u)
            u = u * sign[:, None]
            _, first, _ = dedupe_rows(u + a, 2 * a)  # entries of u lie in [-a, a]
            found_u, found_h = u[first], h[first]
        ncand = int(found_u.shape[0])
    else:
        amat = np.asarray(invariant.matrix(space), dtype=np.int64)
        check_rows_with_n("invariant.matrix", amat, max(a, 1))  # sums of up to a columns stay exact
        cand: NDArray[np.int64] | None = None
        cand_from = "enumeration"
        if method != "closed-form":
            try:
                cand, pairs = kernel_moves(
                    amat,
                    k,
                    a,
                    limit=limit,
                    multiset_limit=multiset_limit,
                    budget=budget,
                    what=f"candidates for the {invariant.describe()}",
                )
            except SearchTooLarge as exc:
                if method == "enumeration" or table_rc is None or a > 3:
                    raise
                notes.append(f"switched to the closed-form candidates: {exc}")
        if cand is None:
            assert table_rc is not None
            cand_from = "closed-form"
            cand = positive_sign(table_space(table_rc[0], table_rc[1], a).vectors)
            notes.append("candidates: the 2x2 moves and 3-cycles (complete for a <= 3, module docstring)")
        cand = canonical_sign(cand)
        ncand = int(cand.shape[0])
        lowers_all = np.maximum(cand, 0)
        if fib is None:
            realised = "worst-case"
            if n is None:
                notes.append(f"n unknown: assumed n >= {a}, so every candidate is realisable")
                found_u, found_h = cand, lowers_all
            else:
                keep = lowers_all.sum(axis=1) <= n
                found_u, found_h = cand[keep], lowers_all[keep].copy()
                # pad the witness to n records in the first cell of u+ (any cell would do)
                first_cell = (found_h > 0).argmax(axis=1)
                found_h[np.arange(found_h.shape[0]), first_cell] += n - found_h.sum(axis=1)
        else:
            lowers, _, inv = dedupe_rows(lowers_all, max(a, 1))
            known = None if table is None else np.array([histogram_from_table(space, table)], dtype=np.int64)
            rows: NDArray[np.int64] | None = None
            status = np.zeros(lowers.shape[0], dtype=np.int8)
            wit = np.zeros_like(lowers)
            if known is not None:  # the confidential table is a free witness
                cover = (lowers <= known[0][None, :]).all(axis=1)
                status[cover] = 1
                wit[cover] = known[0]
            if known is not None and lowers.shape[0] and (status == 1).all():
                realised = "table"
                notes.append("realisability: every candidate is covered by the given table itself")
                est: FiberSize | None = None
            else:
                est = fib.estimate_size(work_limit=fiber_limit)
            if est is not None and est.value <= fiber_limit:
                try:
                    rows = fib.enumerate(limit=fiber_limit, estimate=est)
                except SearchTooLarge:
                    rows = None
            if rows is not None:
                realised = "fiber"
                notes.append(f"realisability by the enumerated fiber ({rows.shape[0]} histograms)")
                status, wit = realise_by_fiber(rows, lowers)
            elif est is not None:
                realised = "integer-program"
                notes.append(
                    f"realisability by integer feasibility (fiber size {est.describe()} > fiber_limit {fiber_limit})"
                )
                status, wit = realise_by_ilp(fib, lowers, budget, known)
            st = status[inv]
            found_u, found_h = cand[st == 1], wit[inv[st == 1]]
            undec = cand[st == 0]
            if undec.shape[0]:
                notes.append(
                    f"{undec.shape[0]} candidate(s) undecided by the integer programs "
                    "(time limit): included, which is conservative"
                )

    # ---- the space
    exact = undec.shape[0] == 0
    kind = "exact enumeration" if cand_from != "closed-form" else "exact (closed-form candidates)"
    if fib is not None:
        label = f"Semi-DP sensitivity space, {kind} (actual t={format_t(fib.t)}, n={n}), radius a={a}"
    else:
        nn = f"n={n}" if n is not None else f"n unknown, assumed >= {a}"
        label = f"Semi-DP sensitivity space, {kind} (worst case over t, {nn}), radius a={a}"
    label += {
        "fiber": "; realisability by the enumerated fiber",
        "integer-program": "; realisability by integer programming",
        "table": "; realisability witnessed by the given table",
    }.get(realised, "")
    if not exact:
        label += f"; NOT EXACT: {undec.shape[0]} undecided vector pair(s) included (conservative)"
    cell = space_from_array(np.vstack([found_u, undec]), label, distinct=True)
    out_space = cell
    if qmat is not None:
        out_space = space_from_array(
            exact_image(np.vstack([found_u, undec]), qmat),
            label + f"; image under the linear query ({qmat.shape[0]} x {k})",
        )
    witnesses = dict(zip(map(tuple, found_u.tolist()), map(tuple, found_h.tolist())))
    undecided = tuple(map(tuple, undec.tolist()))
    return SensitivitySearchResult(
        space=out_space,
        cell_space=cell,
        radius=a,
        exact=exact,
        actual_t=actual,
        candidates_from=cand_from,
        realised_by=realised,
        witnesses=witnesses,
        t=fib.t if fib is not None else None,
        n=n,
        candidates=ncand,
        pairs_examined=pairs,
        undecided=undecided,
        note="; ".join(x for x in notes if x),
        elapsed=time.monotonic() - t0,
    )


def semi_sensitivity_space(
    space: DataSpace,
    invariant: AnyInvariant,
    radius: int | SemiAdjacentResult,
    *,
    table: Sequence[int] | NDArray[np.integer[Any]] | None = None,
    t: object = None,
    n: int | None = None,
    query: Query | None = None,
    method: str = "auto",
    limit: int = DEFAULT_PAIR_LIMIT,
    multiset_limit: int = DEFAULT_MULTISET_LIMIT,
    fiber_limit: int = DEFAULT_FIBER_LIMIT,
    budget: Budget | None = None,
    **legacy: float,
) -> SensitivitySpace:
    r"""The Semi-DP sensitivity space :math:`S^{D_t, A_a}` [CA24, Def. 4, Sec. 4].

    Same parameters as :func:`semi_sensitivity_search`, which also returns the
    witnesses and the method used; this returns only the space.

    Examples
    --------
    >>> from semidp.accountant.data.invariants import Margins
    >>> space = DataSpace.of(("A", 2), ("B", 3))
    >>> s = semi_sensitivity_space(space, Margins((("A",), ("B",))), 3,
    ...                            table=[[1, 1, 0], [1, 0, 1]])
    >>> s.size, s.l1, s.l2, s.linf                           # reference T-S2b
    (7, 4, 2.0, 1)
    >>> s.label
    'Semi-DP sensitivity space, exact enumeration (actual t=(2, 2, 2, 1, 1), n=4), radius a=3; realisability by the enumerated fiber'
    """
    return semi_sensitivity_search(
        space,
        invariant,
        radius,
        table=table,
        t=t,
        n=n,
        query=query,
        method=method,
        limit=limit,
        multiset_limit=multiset_limit,
        fiber_limit=fiber_limit,
        budget=budget_argument(budget, legacy, where="semi_sensitivity_space", default=60.0),
    ).space


__all__ = ["semi_sensitivity_search", "semi_sensitivity_space"]
