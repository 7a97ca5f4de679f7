r"""The semi-adjacent parameter :math:`a(t)` [CA24, Def. 13] by proven closed forms.

Def. 13 (replace-one / Hamming metric): :math:`a(t)` is the largest, over
conforming datasets :math:`X\in\mathcal D_t`, individuals :math:`i` and
plausible target records :math:`x'`, of the smallest Hamming distance to a
conforming :math:`X'` in which individual :math:`i` holds :math:`x'`.

Closed forms implemented here (each with its argument in :func:`closed_form`'s
notes), for invariants that are margins over **pairwise disjoint** feature
sets; features in no margin are *free*. Write :math:`q` for the number of
margins (each margin set acts as one merged feature, [CA24, Rem. 17]):

* no invariant, or the total count under replace-one (``n`` is fixed anyway):
  :math:`a = 1` (``0`` if ``D_t`` is a single dataset);
* :math:`q = 1` (a partition such as state totals, or the full table):
  :math:`a = 2` if the margin has at least two non-empty levels; otherwise
  :math:`a = 1` if a free feature lets a record change, else ``0``;
* :math:`q \ge 2` (one-way margins of :math:`q` features): :math:`a \le q+1`
  (Thm. 16), reported as a **bound**.

Under add/remove adjacency with an invariant that fixes ``n`` (total, margins),
every conforming pair has equal size and :math:`|X \triangle X'| = 2\,d_H`, so
:math:`a_{\rm AR} = 2\,a_{\rm H}`; with no invariant :math:`a_{\rm AR} = 1`.

Using an upper bound of :math:`a(t)` as the radius is sound (Prop. 11: pairs at
distance ``d <= a'`` are :math:`f^{\circ d} \ge f^{\circ a'}` apart).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Sequence

import numpy as np

from semidp.accountant.core.budget import Budget, budget_argument
from semidp.accountant.core.errors import BudgetExhausted, InvalidArgument, SearchTooLarge, UnsupportedRelease
from semidp.accountant.data.dataspace import DataSpace
from semidp.accountant.data.invariants import Invariant, Margins, NoInvariant, Total
from semidp.accountant.guarantees.relations import AddRemove, BaseRelation, Replace

if TYPE_CHECKING:
    from semidp.accountant.combinatorics.semiadjacent_results import SemiAdjacentResult

Method = Literal["closed-form", "graph-search", "integer-program", "brute-force", "trivial-bound"]


@dataclass(frozen=True, slots=True)
class SemiAdjacentParameter:
    """A value of :math:`a(t)` with how it was obtained and a worst case."""

    value: int
    """The semi-adjacent parameter (or an upper bound of it when ``exact`` is false)."""
    method: Method
    """How it was obtained (report field ``semi_adjacent_parameter.method``)."""
    witness: str
    """A worst case: dataset, individual, target and the cheapest conforming completion."""
    exact: bool
    """True if ``value`` equals :math:`a(t)`; False if it is a proven upper bound."""
    scope: str
    """``"actual t"`` when computed at the given table, else ``"worst case over t"``."""
    search: "SemiAdjacentResult | None" = field(default=None, compare=False)
    """The structured search result (witness histograms), when a search was used."""
    factor: int = 1
    """``value = factor * search.upper`` (2 under add/remove: each replacement is 2 steps)."""

    @property
    def lower(self) -> int:
        """A proven lower bound of :math:`a(t)`: ``value`` when exact, the search's witnessed distance when a
        search was cut short, else 0 (a closed-form upper bound proves nothing below it)."""
        if self.exact:
            return self.value
        if self.search is not None:
            return self.factor * self.search.value
        return 0

    def bounds_text(self) -> str:
        """``a(t) = v`` when exact, else ``a(t) in [lower, upper]``."""
        return f"a(t) = {self.value}" if self.exact else f"a(t) in [{self.lower}, {self.value}]"

    def witness_data(self, space: DataSpace) -> dict[str, Any] | None:
        """The search witness as JSON-ready data (cells row-major; records as 1-based levels)."""
        if self.search is None:
            return None
        w = self.search.witness
        return {
            "dataset": list(w.dataset),
            "record": _levels(space, w.record),
            "target": _levels(space, w.target),
            "nearest": list(w.nearest),
            "distance": w.distance,
            "fiber_size": self.search.fiber_size,
            "note": self.search.note,
        }


def _disjoint_margins(space: DataSpace, inv: Margins) -> list[tuple[int, ...]]:
    inv.check(space)
    sets = [tuple(space.index(n) for n in m) for m in inv.margins]
    seen: set[int] = set()
    for idx in sets:
        if seen & set(idx):
            raise UnsupportedRelease(
                f"margins {[list(x) for x in inv.margins]} overlap (feature(s) "
                f"{sorted(space.names[i] for i in seen & set(idx))} appear twice): no closed form; "
                "use the exact search (accountant.combinatorics.semiadjacent_search)."
            )
        seen |= set(idx)
    return sets


def _nonempty_levels(table: np.ndarray, space: DataSpace, idx: tuple[int, ...]) -> int:
    arr = table.reshape(space.shape)
    other = tuple(i for i in range(len(space.shape)) if i not in idx)
    marg = arr.sum(axis=other) if other else arr
    return int(np.count_nonzero(marg))


def closed_form(
    space: DataSpace,
    invariant: Invariant,
    relation: BaseRelation,
    *,
    table: Sequence[int] | None = None,
    records: int | None = None,
) -> SemiAdjacentParameter:
    r""":math:`a(t)` by closed form ([CA24, Def. 13], Thm. 16, Remark 17).

    Parameters
    ----------
    space:
        The data space.
    invariant:
        ``NoInvariant``, ``Total`` or ``Margins`` over disjoint feature sets.
    relation:
        ``Replace()`` (Hamming, the paper's metric) or ``AddRemove()``.
    table:
        The confidential histogram (row-major); gives :math:`a(t)` at the
        actual :math:`t`. Without it the result is the worst case over
        :math:`t` (assuming at least two records unless ``records`` says less).
    records:
        Number of records ``n`` if known.

    Raises
    ------
    UnsupportedRelease
        For invariants without a closed form here (overlapping margins,
        ``linear``, ``counting``): use the exact search.

    Notes
    -----
    Lower bound 2 when the margin has two non-empty levels: an individual in
    level :math:`m` impersonating level :math:`m'` changes the margin, which a
    single replacement cannot restore. Upper bound: the individual moves
    :math:`m\to m'` and, for each margin whose value changed, one record holding
    the target's value there moves back (such a record exists because the
    target's level is non-empty in :math:`t`), changing only that margin's
    part: at most :math:`1+q` replacements (Thm. 16).

    Examples
    --------
    >>> s = DataSpace.of(("state", 52))
    >>> closed_form(s, Margins((("state",),)), Replace()).value      # [CA24, Sec. 6]
    2
    >>> closed_form(DataSpace.of(("A", 2), ("B", 2)), Margins((("A",), ("B",))), Replace()).value
    3
    """
    if not isinstance(relation, (Replace, AddRemove)) or relation.distance != 1:
        raise InvalidArgument(f"relation={relation!r} must be Replace() or AddRemove().")
    h: np.ndarray | None = None
    if table is not None:
        h = np.asarray(table, dtype=np.int64)
        if h.shape != (space.n_cells,) or np.any(h < 0):
            raise InvalidArgument(
                f"table must be {space.n_cells} non-negative counts (row-major); got shape {h.shape}."
            )
        if records is not None and int(h.sum()) != records:
            raise InvalidArgument(f"table sums to {int(h.sum())} but records = {records}.")
        records = int(h.sum())
    scope = "actual t" if h is not None else "worst case over t"
    n = records if records is not None else 2
    if isinstance(relation, AddRemove):
        return _add_remove(space, invariant, table, records, scope)

    if isinstance(invariant, (NoInvariant, Total)):
        if n == 0 or space.n_cells == 1:
            return SemiAdjacentParameter(0, "closed-form", "D_t has a single dataset: nothing to protect", True, scope)
        what = "no invariant" if isinstance(invariant, NoInvariant) else "the total n is fixed by replace-one"
        return SemiAdjacentParameter(
            1,
            "closed-form",
            f"{what}: any individual reaches any target value by one replacement",
            True,
            scope,
        )
    if isinstance(invariant, Margins):
        sets = _disjoint_margins(space, invariant)
        constrained = {i for s in sets for i in s}
        free_levels = int(np.prod([space.shape[i] for i in range(len(space.shape)) if i not in constrained]))
        q = len(sets)
        if q == 1:
            levels = int(np.prod([space.shape[i] for i in sets[0]]))
            nonempty = _nonempty_levels(h, space, sets[0]) if h is not None else min(levels, n)
            name = " x ".join(space.names[i] for i in sets[0])
            if nonempty >= 2:
                return SemiAdjacentParameter(
                    2,
                    "closed-form",
                    f"an individual with one value of {name} impersonating one with another value: the "
                    f"{name} counts change, so one record with the target value must move back "
                    "(distance 2; a single replacement cannot keep the counts)",
                    True,
                    scope,
                )
            if free_levels >= 2 and n >= 1:
                return SemiAdjacentParameter(
                    1,
                    "closed-form",
                    f"all records share one {name} level; only free features can change (distance 1)",
                    True,
                    scope,
                )
            return SemiAdjacentParameter(0, "closed-form", "D_t has a single dataset: nothing to protect", True, scope)
        if n <= 1:
            return SemiAdjacentParameter(
                0 if free_levels == 1 else 1,
                "closed-form",
                "a single record: its constrained values are fixed by the margins",
                True,
                scope,
            )
        return SemiAdjacentParameter(
            q + 1,
            "closed-form",
            f"bound of Cho & Awan Thm. 16 with {q} disjoint margins: the individual changes every "
            f"margin's value and each needs its own compensating record (<= {q + 1} replacements); "
            "the exact value may be smaller",
            False,
            scope,
        )
    raise UnsupportedRelease(
        f"no closed form for a {invariant.kind!r} invariant; use the exact search (accountant.combinatorics.semiadjacent_search)."
    )


def _add_remove(
    space: DataSpace,
    invariant: Invariant,
    table: Sequence[int] | None,
    records: int | None,
    scope: str,
) -> SemiAdjacentParameter:
    if isinstance(invariant, NoInvariant):
        return SemiAdjacentParameter(1, "closed-form", "no invariant: add or remove one record", True, scope)
    hamming = closed_form(space, invariant, Replace(), table=table, records=records)
    return SemiAdjacentParameter(
        2 * hamming.value,
        "closed-form",
        "the invariant fixes n, so conforming datasets have equal size and each replacement is one "
        f"removal plus one addition (|X sym-diff X'| = 2 d_H); Hamming case: {hamming.witness}",
        hamming.exact,
        scope,
    )


def _levels(space: DataSpace, cell: int) -> list[int]:
    """A cell as 1-based feature levels (the papers' and specs' numbering)."""
    return [v + 1 for v in space.record(cell)]


def _describe_search(space: DataSpace, r: "SemiAdjacentResult") -> str:
    w = r.witness

    def rec(c: int) -> str:
        return "(" + ", ".join(map(str, _levels(space, c))) + ")"

    bound = "" if r.exact else f"; search budget ran out: a(t) in [{r.value}, {r.upper}], the upper end is used"
    size = f" over {r.fiber_size} conforming histograms" if r.fiber_size is not None else ""
    return (
        f"an individual with record {rec(w.record)} in the dataset with histogram {list(w.dataset)} "
        f"impersonating {rec(w.target)}: the nearest conforming dataset (histogram {list(w.nearest)}) "
        f"is at Hamming distance {w.distance}{size}{bound}"
    )


def semi_adjacent_parameter(
    space: DataSpace,
    invariant: Invariant,
    relation: BaseRelation,
    *,
    table: Sequence[int] | None = None,
    records: int | None = None,
    method: Literal["auto", "closed-form", "search"] = "auto",
    limit: int = 1_000_000,
    budget: Budget | None = None,
    **legacy: float,
) -> SemiAdjacentParameter:
    r""":math:`a(t)` by the best available method [CA24, Def. 13], labelled.

    ``"auto"``: the closed form when it is exact; otherwise, with the actual
    table, the exact search (:mod:`accountant.combinatorics.semiadjacent_search`: graph search,
    or integer programming when the fiber is larger than ``limit``); otherwise
    the closed-form upper bound. A search whose budget runs out returns its
    proven upper bound as ``value`` (``exact=False``), which is a sound radius
    (Prop. 11). Under add/remove adjacency with an invariant that fixes ``n``,
    the Hamming value is doubled (see :func:`closed_form`). ``budget`` bounds the
    search (a :class:`~semidp.accountant.core.budget.Budget`, default 60 s from the call;
    the deprecated ``time_limit=`` seconds still works for one release).

    Raises
    ------
    UnsupportedRelease
        When no method applies (e.g. a ``linear`` invariant without a table).
    """
    if method not in ("auto", "closed-form", "search"):
        raise InvalidArgument(f"method={method!r} must be 'auto', 'closed-form' or 'search'.")
    budget = budget_argument(budget, legacy, where="semi_adjacent_parameter", default=60.0)
    cf: SemiAdjacentParameter | None = None
    cf_error: UnsupportedRelease | None = None
    if method != "search":
        try:
            cf = closed_form(space, invariant, relation, table=table, records=records)
        except UnsupportedRelease as e:
            cf_error = e
        if cf is not None and (cf.exact or method == "closed-form" or table is None):
            return cf
        if method == "closed-form":
            assert cf_error is not None
            raise cf_error
    if table is None:
        raise UnsupportedRelease(
            f"a(t) for a {invariant.kind!r} invariant needs the actual table ([data] table) for the "
            "exact search" + (f" ({cf_error})" if cf_error else "") + "."
        )
    factor = 1
    if isinstance(relation, AddRemove):
        if not isinstance(invariant, (Total, Margins)):
            raise UnsupportedRelease(
                f"add/remove adjacency with a {invariant.kind!r} invariant: a(t) is computed for "
                "invariants that fix n (total, margins)."
            )
        factor = 2
    from semidp.accountant.combinatorics.semiadjacent_search import search_semi_adjacent_parameter as search

    try:
        r = search(space, invariant, table=table, method="auto", limit=limit, budget=budget)
    except (BudgetExhausted, SearchTooLarge) as e:  # degrade to a proven bound, never to an error
        if cf is not None:
            return dataclasses.replace(cf, witness=f"{cf.witness}; the exact search stopped: {e}")
        n = int(sum(table))
        return SemiAdjacentParameter(
            value=factor * n,
            method="trivial-bound",
            witness=(
                f"the exact search stopped ({e}); a(t) <= {factor * n} because two datasets of {n} records "
                f"differ in at most {n} records{' (two steps each under add/remove)' if factor == 2 else ''}"
            ),
            exact=False,
            scope="actual t",
            factor=factor,
        )
    return SemiAdjacentParameter(
        value=factor * r.upper,
        method=r.method,  # type: ignore[arg-type]
        witness=_describe_search(space, r),
        exact=r.exact,
        scope="actual t",
        search=r,
        factor=factor,
    )
