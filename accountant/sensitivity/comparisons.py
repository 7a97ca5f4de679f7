r"""The exact Semi-DP sensitivity space against the naive spaces (Prop. 24) and the printed closed form (Prop. 32).

:func:`naive_spaces` gives S(D, A_1) and its group inflation, the spaces a
mechanism would be calibrated to without the invariant [CA24, Prop. 24];
:func:`compare_with_closed_form` states where Prop. 32 as printed misses vectors
of the exact space (the 3-cycles of a table under one-way margins).
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from semidp.accountant.core.arguments import check_int
from semidp.accountant.core.directed import sqrt_up
from semidp.accountant.core.errors import InvalidArgument, SearchTooLarge
from semidp.accountant.data.dataspace import DataSpace
from semidp.accountant.data.exact_matrices import exact_image
from semidp.accountant.sensitivity.kernel_moves import kernel_moves
from semidp.accountant.sensitivity.results import (
    DEFAULT_MULTISET_LIMIT,
    DEFAULT_PAIR_LIMIT,
    ClosedFormComparison,
    NaiveSpaces,
    Query,
    SensitivitySearchResult,
    query_matrix,
    space_from_array,
    space_norms,
)
from semidp.accountant.sensitivity.spaces import (
    SensitivitySpace,
    exact_rank,
    table_moves,
    table_space,
    table_three_cycles,
)


def naive_spaces(
    space: DataSpace,
    radius: int,
    query: Query | None = None,
    *,
    n: int | None = None,
    limit: int = DEFAULT_PAIR_LIMIT,
    multiset_limit: int = DEFAULT_MULTISET_LIMIT,
) -> NaiveSpaces:
    r"""The naive spaces :math:`S^{\mathcal D,A_1}`, :math:`a\cdot S^{\mathcal D,A_1}`, :math:`S^{\mathcal D,A_a}` [CA24, Prop. 24].

    No invariant, replace-one adjacency, datasets of ``n`` records (``n=None``:
    assumed ``>= a``).

    Parameters
    ----------
    space:
        The data space (the histogram has ``space.n_cells`` cells).
    radius:
        ``a``.
    query:
        ``None`` (histogram) or a linear query, as for :func:`~accountant.sensitivity.search.semi_sensitivity_search`.
    n:
        Number of records; distances above ``n`` do not occur, so ``A_a`` is
        ``A_{min(a, n)}``.
    limit, multiset_limit:
        Budgets of the enumeration of :math:`S^{\mathcal D,A_a}` (see :func:`kernel_moves`).

    Returns
    -------
    NaiveSpaces

    Notes
    -----
    :math:`S^{\mathcal D,A_{a'}} = \{u : \mathbf 1^\top u = 0,\ \|u^+\|_1 \le a'\}`
    (``a' = min(a, n)``); every such ``u`` is a sum of ``a'`` vectors of
    :math:`S^{\mathcal D,A_1}` (pair the records of ``u^+`` with those of ``u^-``,
    pad with 0), so :math:`\mathrm{conv}\,S^{\mathcal D,A_{a'}}\subseteq a'\,\mathrm{conv}\,S^{\mathcal D,A_1}`
    (Prop. 24), and :math:`a'(e_i - e_j)\in S^{\mathcal D,A_{a'}}` gives equality.
    Hence for the histogram and for every linear query the two naive
    alternatives have **equal** :math:`K`-norm sensitivities when ``n >= a``
    (the sets differ).

    Examples
    --------
    >>> ns = naive_spaces(DataSpace.of(("A", 2), ("B", 2)), 3)      # docs/reference/semi-dp.md T-S3
    >>> ns.one_step.l1, round(ns.one_step.l2, 6), ns.one_step.linf
    (2, 1.414214, 1)
    >>> ns.inflated["l1"], round(ns.inflated["l2"], 6), ns.inflated["linf"]
    (6, 4.242641, 3)
    >>> ns.a_step.l1, ns.a_step.l2_squared, ns.a_step.linf
    (6, 18, 3)
    """
    a = check_int("radius", radius, minimum=1)
    if n is not None:
        n = check_int("n", n, minimum=1)
    eff = a if n is None else min(a, n)
    k = space.n_cells
    qmat = query_matrix(space, query)
    ii, jj = np.nonzero(~np.eye(k, dtype=bool))
    e1 = np.zeros((ii.shape[0], k), dtype=np.int64)
    e1[np.arange(ii.shape[0]), ii] = 1
    e1[np.arange(ii.shape[0]), jj] = -1  # e_i - e_j: one record changes cell
    qtxt = "" if qmat is None else f"; image under the linear query ({qmat.shape[0]} x {k})"
    s1 = space_from_array(
        e1 if qmat is None else exact_image(e1, qmat),
        "S^{D,A_1}: histogram, replace-one, no invariant (Cho & Awan Prop. 24)" + qtxt,
    )
    notes = [
        f"S^{{D,A_1}}: enumerated exactly ({s1.size} vectors)",
        f"a*S^{{D,A_1}}: norms of S^{{D,A_1}} times a={a} (group privacy, Sec. 4 (i))",
    ]
    s1_rank = exact_rank(s1.array)
    inflated = inflated_norms(s1, a, s1_rank)
    sa: SensitivitySpace | None = None
    label = f"S^{{D,A_{eff}}}: histogram, replace-one, no invariant, d_H <= {eff} (Cho & Awan Prop. 24)" + qtxt
    try:
        u, _ = kernel_moves(
            np.zeros((0, k), dtype=np.int64),
            k,
            eff,
            limit=limit,
            multiset_limit=multiset_limit,
            what="enumerating S^{D,A_a}",
        )
        sa = space_from_array(u if qmat is None else exact_image(u, qmat), label)
        sa_norms = space_norms(sa)
        notes.append(f"S^{{D,A_a}}: enumerated exactly ({sa.size} vectors)")
    except SearchTooLarge as exc:
        sa_norms = {**inflated_norms(s1, eff, s1_rank), "size": -1}
        notes.append(
            f"S^{{D,A_a}}: not enumerated ({exc}); norms exact from "
            f"conv S^{{D,A_{eff}}} = {eff} conv S^{{D,A_1}} (Notes); size -1 = not counted"
        )
    if n is not None and n < a:
        notes.append(f"n={n} < a={a}: d_H <= n always, so A_a = A_{n}")
    return NaiveSpaces(s1, inflated, sa, sa_norms, a, tuple(notes))


def inflated_norms(s: SensitivitySpace, a: int, rank: int) -> dict[str, float | int]:
    """Norms of ``a * S`` as :func:`accountant.sensitivity.spaces.group_inflated` (rank given)."""
    return {
        "l1": a * s.l1,
        "l2": sqrt_up(Fraction(a * a * s.l2_squared)),  # rounded up
        "linf": a * s.linf,
        "rank": rank,
        "dimension": s.dimension,
    }


def norm_text(s: SensitivitySpace, key: str) -> str:
    if key == "l2":
        sq = s.l2_squared
        r = math.isqrt(sq)
        return str(r) if r * r == sq else f"sqrt({sq}) = {math.sqrt(sq):.6f}"
    return str({"l1": s.l1, "linf": s.linf}[key])


def compare_with_closed_form(
    exact: SensitivitySpace | SensitivitySearchResult,
    closed: SensitivitySpace | None = None,
    *,
    table_shape: tuple[int, int] | None = None,
    radius: int | None = None,
) -> ClosedFormComparison:
    r"""State where a published closed form disagrees with the exact space [CA24, Prop. 32].

    Parameters
    ----------
    exact:
        The exact space (or a search result; its cell-level space is used).
    closed:
        The closed form. Default: Prop. 32 as printed,
        ``table_space(r, c, radius, paper_exact=True)`` (moves only).
    table_shape:
        ``(r, c)`` for the default closed form, and to classify missing vectors
        as 2x2 moves or 3-cycles.
    radius:
        Radius for the default closed form (default: the search result's
        radius, else 3).

    Returns
    -------
    ClosedFormComparison
        Missing vectors (the closed form is unsafe for those pairs), extra
        vectors (conservative), norm differences, and whether the span (hence
        the projector of Prop. 26) agrees.

    Raises
    ------
    InvalidArgument
        No closed form and no ``table_shape``; different dimensions.

    Examples
    --------
    >>> from semidp.accountant.data.invariants import Margins
    >>> space = DataSpace.of(("A", 3), ("B", 3))
    >>> from semidp.accountant.sensitivity.search import semi_sensitivity_search
    >>> r = semi_sensitivity_search(space, Margins((("A",), ("B",))), 3, n=3)
    >>> cmp = compare_with_closed_form(r, table_shape=(3, 3))
    >>> cmp.agrees, len(cmp.missing), len(cmp.extra)
    (False, 12, 0)
    >>> print(cmp.lines[1][:78])
    The closed form misses 12 of the 31 vectors of the exact space: 12 3-cycle(s),
    """
    if isinstance(exact, SensitivitySearchResult):
        a_default = exact.radius
        ex = exact.cell_space if closed is None else exact.space
    else:
        a_default = 3
        ex = exact
    if closed is None:
        if table_shape is None:
            raise InvalidArgument(
                "compare_with_closed_form needs either `closed` or `table_shape=(r, c)` "
                "(for Cho & Awan Prop. 32 as printed)."
            )
        r, c = table_shape
        closed = table_space(r, c, a_default if radius is None else radius, paper_exact=True)
    if closed.dimension != ex.dimension:
        raise InvalidArgument(f"the closed form has dimension {closed.dimension}, the exact space {ex.dimension}.")
    es, cs = set(ex.vectors), set(closed.vectors)
    missing = tuple(sorted(es - cs))
    extra = tuple(sorted(cs - es))
    kinds: dict[str, int] = {}
    if table_shape is not None and table_shape[0] * table_shape[1] == ex.dimension:
        mv = set(table_moves(*table_shape))
        cy = set(table_three_cycles(*table_shape))
        for v in missing:
            kind = "2x2 move" if v in mv else "3-cycle" if v in cy else "other vector"
            kinds[kind] = kinds.get(kind, 0) + 1
    lines = [f"closed form: {closed.label}; exact: {ex.label}."]
    if not missing and not extra:
        lines.append(f"The closed form equals the exact space ({ex.size} vectors).")
    if missing:
        what = ", ".join(f"{v} {k}(s)" for k, v in kinds.items())
        lines.append(
            f"The closed form misses {len(missing)} of the {ex.size} vectors of the exact space"
            + (f": {what}" if what else "")
            + f", e.g. {missing[-1]}. A mechanism calibrated to "
            "the closed form does not cover pairs of conforming datasets differing by these."
        )
    if extra:
        lines.append(
            f"The closed form contains {len(extra)} vector(s) not realisable here, e.g. "
            f"{extra[-1]} (conservative, not tight)."
        )
    en, cn = space_norms(ex), space_norms(closed)
    for key in ("l1", "l2", "linf"):
        e_v, c_v = norm_text(ex, key), norm_text(closed, key)
        if key == "l2":
            cmp_ = (ex.l2_squared > closed.l2_squared) - (ex.l2_squared < closed.l2_squared)
            ratio = math.sqrt(Fraction(ex.l2_squared, max(closed.l2_squared, 1)))
        else:
            ev, cv = int(en[key]), int(cn[key])
            cmp_ = (ev > cv) - (ev < cv)
            ratio = ev / cv if cv else math.inf
        if cmp_ == 0:
            lines.append(f"{key} sensitivity: {e_v} in both.")
        elif cmp_ > 0:
            lines.append(
                f"{key} sensitivity: exact {e_v} vs closed form {c_v} -- the closed form "
                f"UNDERSTATES it (factor {ratio:.6f})."
            )
        else:
            lines.append(
                f"{key} sensitivity: exact {e_v} vs closed form {c_v} -- the closed form "
                f"overstates it (conservative; factor {ratio:.6f})."
            )
    union = exact_rank(np.vstack([ex.array, closed.array]))
    if en["rank"] == cn["rank"] == union:
        lines.append(f"span(S) agrees (rank {en['rank']}): the projector of Prop. 26 is unchanged.")
    else:
        lines.append(f"span(S) differs: rank {en['rank']} (exact) vs {cn['rank']} (closed form), {union} together.")
    return ClosedFormComparison(
        agrees=not missing and not extra,
        missing=missing,
        extra=extra,
        lines=tuple(lines),
        exact_norms=en,
        closed_norms=cn,
        exact_label=ex.label,
        closed_label=closed.label,
    )


def l2_exact_text(space: SensitivitySpace) -> str:
    """``l2`` as an exact expression, e.g. ``'sqrt(6)'`` (for reports)."""
    return norm_text(space, "l2").split(" = ")[0]
