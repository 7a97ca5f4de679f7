"""Exact Semi-DP sensitivity spaces by enumeration.

Cho & Awan 2024 (arXiv 2410.17468v1): Def 4 (sensitivity space), Sec. 4
(Semi-DP sensitivity space, Prop 24 naive spaces, Prop 25 rank deficiency),
Prop 32 (tables; incomplete for min(r, c) >= 3, docs/reference/semi-dp.md §5
caveat). Targets from docs/reference/semi-dp.md §9: T-S1, T-S2, T-S2b, T-S3, T-S4.

Every space is checked against brute force that does not use the module:
pairs of conforming histograms from ``Fiber.enumerate`` (and, on tiny
instances, Def 4 literally over ordered datasets with the Hamming distance).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import semidp.accountant.sensitivity.realise as realise
from semidp.accountant.combinatorics.fiber import conforming_fiber, histogram_of_records
from semidp.accountant.combinatorics.semiadjacent_search import search_semi_adjacent_parameter
from semidp.accountant.core.errors import InvalidArgument, SearchTooLarge
from semidp.accountant.data.callable_invariant import CallableInvariant
from semidp.accountant.data.dataspace import DataSpace
from semidp.accountant.data.invariants import Counting, Invariant, Linear, Margins, NoInvariant, Total
from semidp.accountant.sensitivity.comparisons import compare_with_closed_form, naive_spaces
from semidp.accountant.sensitivity.kernel_moves import kernel_moves
from semidp.accountant.sensitivity.results import DEFAULT_MULTISET_LIMIT, SensitivitySearchResult, space_norms
from semidp.accountant.sensitivity.search import semi_sensitivity_search, semi_sensitivity_space
from semidp.accountant.sensitivity.spaces import (
    SensitivitySpace,
    exact_rank,
    group_inflated,
    histogram_space,
    table_moves,
    table_space,
    table_three_cycles,
)

FAST = settings(
    max_examples=35, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large]
)

Vec = tuple[int, ...]


def one_way(space: DataSpace) -> Margins:
    return Margins(tuple((name,) for name in space.names))


def hist1(space: DataSpace, records: Sequence[Sequence[int]]) -> tuple[int, ...]:
    """Histogram from 1-based records, as printed in the reference."""
    return histogram_of_records(space, [space.cell_index([v - 1 for v in r]) for r in records])


def table(r: int, c: int) -> DataSpace:
    return DataSpace.of(("A", r), ("B", c))


S22, S23, S33 = table(2, 2), table(2, 3), table(3, 3)
S222 = DataSpace.of(("x1", 2), ("x2", 2), ("x3", 2))


# ------------------------------------------------------------- independent brute force


def pair_differences(rows: np.ndarray[Any, Any], radius: int) -> set[Vec]:
    """{h - h' : h, h' rows, |h - h'|_1 / 2 <= radius} by all pairs (Def 4 on histograms)."""
    out: set[Vec] = set()
    for h in rows.tolist():
        for h2 in rows.tolist():
            d = sum(abs(x - y) for x, y in zip(h, h2))
            if d <= 2 * radius:
                out.add(tuple(x - y for x, y in zip(h, h2)))
    return out


def brute_actual(space: DataSpace, inv: Invariant, hist: Sequence[int], radius: int) -> set[Vec]:
    rows = conforming_fiber(space, inv, table=hist).enumerate()
    return pair_differences(rows, radius)


def compositions(n: int, k: int) -> list[tuple[int, ...]]:
    """All histograms with n records over k cells (stars and bars, independent of fiber.py)."""
    out = []
    for bars in itertools.combinations(range(n + k - 1), k - 1):
        prev, h = -1, []
        for b in bars + (n + k - 1,):
            h.append(b - prev - 1)
            prev = b
        out.append(tuple(h))
    return out


def brute_worst(space: DataSpace, inv: Invariant, n: int, radius: int) -> set[Vec]:
    """Union over all t of the spaces with n records."""
    amat = np.asarray(inv.matrix(space), dtype=np.int64)
    groups: dict[Vec, list[Vec]] = {}
    for h in compositions(n, space.n_cells):
        groups.setdefault(tuple((amat @ np.array(h)).tolist()), []).append(h)
    out: set[Vec] = set()
    for g in groups.values():
        out |= pair_differences(np.array(g), radius)
    return out


def brute_ordered(space: DataSpace, inv: Invariant, hist: Sequence[int], radius: int) -> set[Vec]:
    """Def 4 literally: ordered datasets X, X' in D_t with d_H(X, X') <= a (Hamming)."""
    k, n = space.n_cells, sum(hist)
    amat = np.asarray(inv.matrix(space), dtype=np.int64)
    t = amat @ np.asarray(hist)
    data = []
    for xs in itertools.product(range(k), repeat=n):
        hx = np.bincount(np.array(xs), minlength=k)
        if np.array_equal(amat @ hx, t):
            data.append((xs, tuple(hx.tolist())))
    out: set[Vec] = set()
    for xs, h in data:
        for ys, h2 in data:
            if sum(x != y for x, y in zip(xs, ys)) <= radius:
                out.add(tuple(p - q for p, q in zip(h, h2)))
    return out


def check_witnesses(
    res: SensitivitySearchResult,
    space: DataSpace,
    inv: Invariant | CallableInvariant,
) -> None:
    """Re-check every witness from scratch: h, h' conform (same t, n), h - h' = u, |u|_1 <= 2a."""
    amat = None if isinstance(inv, CallableInvariant) else np.asarray(inv.matrix(space))
    for u in res.cell_space.vectors:
        if not any(u) or u in res.undecided or tuple(-x for x in u) in res.undecided:
            continue
        h, h2 = res.witness(u)
        assert min(h) >= 0 and min(h2) >= 0
        assert tuple(x - y for x, y in zip(h, h2)) == u
        assert sum(abs(x) for x in u) <= 2 * res.radius
        if res.n is not None:
            assert sum(h) == sum(h2) == res.n
        if res.actual_t:
            fib = conforming_fiber(space, inv, t=res.t, n=res.n)
            assert fib.contains(h) and fib.contains(h2)
        elif amat is not None:
            assert np.array_equal(amat @ np.array(h), amat @ np.array(h2))


# --------------------------------------------------------------------- reference targets


@pytest.mark.parametrize(
    "records",
    [
        [(1, 1), (1, 1), (1, 2), (2, 1)],  # T-A3, a(t) = 3
        [(1, 1), (1, 2), (2, 1)],  # T-A4, a(t) = 3
        [(1, 1), (1, 1), (1, 2), (2, 1), (2, 2)],  # T-A5, a(t) = 3
    ],
)
def test_T_S1_two_by_two_under_A3(records: list[tuple[int, int]]) -> None:
    """T-S1: S = {0, +-(1, -1, -1, 1)}, norms (4, 2, 1) (Cho & Awan Example 7, Prop 32)."""
    h = hist1(S22, records)
    a = search_semi_adjacent_parameter(S22, one_way(S22), table=h)
    assert a.value == 3
    res = semi_sensitivity_search(S22, one_way(S22), a, table=h)
    assert set(res.space.vectors) == {(0, 0, 0, 0), (1, -1, -1, 1), (-1, 1, 1, -1)}
    assert (res.space.l1, res.space.l2, res.space.linf) == (4, 2.0, 1)
    assert res.exact and res.actual_t and "exact enumeration (actual t" in res.space.label
    assert set(res.space.vectors) == brute_actual(S22, one_way(S22), h, 3)
    check_witnesses(res, S22, one_way(S22))
    worst = semi_sensitivity_space(S22, one_way(S22), 3)
    assert set(worst.vectors) == set(res.space.vectors)
    assert "worst case over t" in worst.label


@pytest.mark.parametrize("extra", [[], [(1, 1)]])
def test_T_S2_three_by_three(extra: list[tuple[int, int]]) -> None:
    """T-S2: records (1,2),(2,3),(3,1) [+ (1,1)]: a(t) = 3, |S| = 31 = 1 + 18 moves + 12 3-cycles."""
    inv = one_way(S33)
    h = hist1(S33, [(1, 2), (2, 3), (3, 1)] + extra)
    a = search_semi_adjacent_parameter(S33, inv, table=h)
    assert (a.value, a.exact) == (3, True)
    res = semi_sensitivity_search(S33, inv, a, table=h)
    s = res.space
    assert s.size == 31 and set(s.vectors) == set(table_space(3, 3).vectors)
    assert (s.l1, s.l2_squared, s.linf) == (6, 6, 1)
    assert math.sqrt(6) <= s.l2 <= math.sqrt(6) * (1 + 1e-15)  # rounded up, 2.449490
    assert exact_rank(s.array) == 4
    assert set(s.vectors) == brute_actual(S33, inv, h, 3)
    assert set(s.vectors) == brute_ordered(S33, inv, h, 3) if not extra else True
    check_witnesses(res, S33, inv)
    # Prop 32 as printed misses exactly the 12 three-cycles (reference §5 caveat, §10 item 1).
    cmp = compare_with_closed_form(res, table_shape=(3, 3))
    assert not cmp.agrees and set(cmp.missing) == set(table_three_cycles(3, 3)) and not cmp.extra
    assert (cmp.closed_norms["l1"], cmp.closed_norms["l2"], cmp.closed_norms["linf"]) == (4, 2.0, 1)
    assert (cmp.exact_norms["l1"], cmp.exact_norms["linf"]) == (6, 1)
    assert cmp.exact_norms["rank"] == cmp.closed_norms["rank"] == 4
    text = "\n".join(cmp.lines)
    assert "12 3-cycle(s)" in text and "UNDERSTATES" in text and "sqrt(6)" in text
    assert "span(S) agrees (rank 4)" in text


@pytest.mark.parametrize("extra", [[], [(2, 1)]])
def test_T_S2b_two_by_three(extra: list[tuple[int, int]]) -> None:
    """T-S2b: records (1,1),(1,2),(2,3) [+ (2,1)]: a(t) = 3, |S| = 7 (no 3-cycles with 2 rows)."""
    inv = one_way(S23)
    h = hist1(S23, [(1, 1), (1, 2), (2, 3)] + extra)
    a = search_semi_adjacent_parameter(S23, inv, table=h)
    assert a.value == 3
    res = semi_sensitivity_search(S23, inv, a, table=h)
    assert res.space.size == 7 and set(res.space.vectors) == set(table_space(2, 3).vectors)
    assert set(res.space.vectors) == brute_actual(S23, inv, h, 3)
    cmp = compare_with_closed_form(res, table_shape=(2, 3))
    assert cmp.agrees and not cmp.missing and "equals the exact space (7 vectors)" in cmp.lines[1]


def test_T_S3_naive_norms() -> None:
    """T-S3: S^{D,A_1} norms (2, sqrt 2, 1); a = 3 inflated (6, 3 sqrt 2, 3) (Prop 24)."""
    ns = naive_spaces(S22, 3)
    s1 = ns.one_step
    assert (s1.l1, s1.l2_squared, s1.linf) == (2, 2, 1)
    assert set(s1.vectors) == set(histogram_space(4, 1).vectors)
    assert ns.inflated["l1"] == 6 and ns.inflated["linf"] == 3
    assert 3 * math.sqrt(2) <= ns.inflated["l2"] == pytest.approx(4.242641, abs=1e-6)
    assert ns.inflated == group_inflated(histogram_space(4, 1), 3)
    assert ns.a_step is not None and set(ns.a_step.vectors) == set(histogram_space(4, 3).vectors)
    # conv S^{D,A_a} = a conv S^{D,A_1}: the two naive alternatives have equal norms.
    assert (ns.a_step_norms["l1"], ns.a_step_norms["l2"], ns.a_step_norms["linf"]) == (
        ns.inflated["l1"],
        ns.inflated["l2"],
        ns.inflated["linf"],
    )


@pytest.mark.parametrize(("r", "c"), [(2, 2), (2, 3), (3, 3), (3, 4), (4, 4)])
def test_T_S4_worst_case_equals_closed_form(r: int, c: int) -> None:
    """T-S4 / Prop 32 corrected: worst case over t equals table_space(r, c, a) for a = 2, 3."""
    space = table(r, c)
    for a in (2, 3):
        s = semi_sensitivity_space(space, one_way(space), a)
        assert set(s.vectors) == set(table_space(r, c, a).vectors)
    assert s.size == 1 + r * (r - 1) * c * (c - 1) // 2 + 12 * math.comb(r, 3) * math.comb(c, 3)
    assert exact_rank(s.array) == (r - 1) * (c - 1)


def test_worst_case_matches_brute_force_3x3_and_3x4() -> None:
    for space in (S33, table(3, 4)):
        inv = one_way(space)
        for n in (3, 4):
            s = semi_sensitivity_space(space, inv, 3, n=n)
            assert set(s.vectors) == brute_worst(space, inv, n, 3)
    # n = 2 records cannot form a 3-cycle (|u+|_1 = 3 > n): only the moves remain.
    s2 = semi_sensitivity_space(S33, one_way(S33), 3, n=2)
    assert set(s2.vectors) == set(table_space(3, 3, 2).vectors) == brute_worst(S33, one_way(S33), 2, 3)


# ----------------------------------------------------------------- Prop 24 and Prop 25


INSTANCES: list[tuple[str, DataSpace, Invariant, tuple[int, ...], int]] = [
    ("2x2 T-A5", S22, one_way(S22), hist1(S22, [(1, 1), (1, 1), (1, 2), (2, 1), (2, 2)]), 3),
    ("3x3 T-S2", S33, one_way(S33), hist1(S33, [(1, 2), (2, 3), (3, 1), (1, 1)]), 3),
    ("2x3 T-S2b", S23, one_way(S23), hist1(S23, [(1, 1), (1, 2), (2, 3), (2, 1)]), 3),
    ("2x2x2 T-A7", S222, one_way(S222), hist1(S222, [(1, 1, 1), (2, 1, 1), (1, 2, 1), (1, 1, 2)]), 4),
    ("2x2x2 T-A8", S222, one_way(S222), hist1(S222, [(1, 1, 1), (1, 2, 2), (2, 1, 2), (2, 2, 1)]), 3),
    ("3x3 joint", S33, Margins((("A", "B"),)), (1, 0, 2, 0, 1, 0, 0, 0, 1), 2),
    ("3 cells total", DataSpace.of(("v", 3)), Total(), (2, 1, 1), 1),
]


@pytest.mark.parametrize("case", [pytest.param(c, id=c[0]) for c in INSTANCES])
def test_prop24_inclusions_and_prop25_rank(case: tuple[str, DataSpace, Invariant, tuple[int, ...], int]) -> None:
    """Prop 24: S_semi in S^{D,A_a}, norms <= S^{D,A_a} <= a S^{D,A_1}; Prop 25: A u = 0, rank <= d - rank A."""
    _, space, inv, h, a = case
    res = semi_sensitivity_search(space, inv, a, table=h)
    semi = res.space
    assert set(semi.vectors) == brute_actual(space, inv, h, a)
    check_witnesses(res, space, inv)
    ns = naive_spaces(space, a, n=sum(h))
    assert ns.a_step is not None and set(semi.vectors) <= set(ns.a_step.vectors)
    for key in ("l1", "l2", "linf"):
        assert semi.norms()[key] <= ns.a_step_norms[key] <= ns.inflated[key]
    amat = np.asarray(inv.matrix(space))
    assert not (semi.array @ amat.T).any() and not semi.array.sum(axis=1).any()
    rank_a = int(np.linalg.matrix_rank(np.vstack([amat, np.ones(space.n_cells, dtype=np.int64)])))
    rank_s = exact_rank(semi.array)
    assert rank_s <= space.n_cells - rank_a
    assert rank_s == semi.rank  # exact_rank agrees with sympy's


def test_naive_spaces_with_query_and_large_space() -> None:
    q = Margins((("A",),)).matrix(S33)  # row margin query (3 x 9)
    ns = naive_spaces(S33, 3, query=q)
    assert set(ns.one_step.vectors) == {tuple(int(x) for x in q @ np.array(u)) for u in histogram_space(9, 1).vectors}
    assert ns.a_step is not None and (ns.a_step.l1, ns.a_step.linf) == (6, 3)
    big = naive_spaces(DataSpace.of(("A", 10), ("B", 10)), 3, multiset_limit=1000)
    assert big.a_step is None and big.a_step_norms["size"] == -1
    assert (big.a_step_norms["l1"], big.a_step_norms["linf"]) == (6, 3)
    assert big.a_step_norms["l2"] == big.inflated["l2"] >= 3 * math.sqrt(2)
    assert any("not enumerated" in x for x in big.notes)
    small_n = naive_spaces(S22, 3, n=2)
    assert small_n.a_step is not None and small_n.a_step.l1 == 4
    assert any("A_a = A_2" in x for x in small_n.notes)


# ----------------------------------------------------------------- brute-force properties


@st.composite
def instances(draw: st.DrawFn) -> tuple[DataSpace, Invariant, tuple[int, ...], int]:
    shape = draw(st.sampled_from([(2,), (3,), (4,), (2, 2), (2, 3), (3, 2), (2, 2, 2), (2, 4)]))
    space = DataSpace.of(*[(f"f{i}", s) for i, s in enumerate(shape)])
    k = space.n_cells
    kind = draw(st.sampled_from(["none", "total", "one-way", "first", "linear", "counting"]))
    inv: Invariant
    if kind == "none":
        inv = NoInvariant()
    elif kind == "total":
        inv = Total()
    elif kind == "one-way":
        inv = one_way(space)
    elif kind == "first":
        inv = Margins(((space.names[0],),))
    elif kind == "linear":
        rows = draw(st.lists(st.lists(st.integers(-1, 2), min_size=k, max_size=k), min_size=1, max_size=2))
        inv = Linear(tuple(tuple(r) for r in rows))
    else:
        sets = draw(st.lists(st.sets(st.integers(0, k - 1), min_size=1), min_size=1, max_size=2))
        inv = Counting(tuple(tuple(sorted(s)) for s in sets))
    n = draw(st.integers(1, 4))
    cells = draw(st.lists(st.integers(0, k - 1), min_size=n, max_size=n))
    radius = draw(st.integers(1, 4))
    return space, inv, histogram_of_records(space, cells), radius


@FAST
@given(instances(), st.sampled_from(["table", "t", "ilp"]))
def test_actual_t_equals_brute_force_over_fiber_pairs(
    inst: tuple[DataSpace, Invariant, tuple[int, ...], int], how: str
) -> None:
    """Exact equality with all pairs of conforming histograms (Fiber.enumerate), on every route."""
    space, inv, h, a = inst
    expect = brute_actual(space, inv, h, a)
    if how == "table":
        res = semi_sensitivity_search(space, inv, a, table=h)
    else:
        t = tuple(int(x) for x in np.asarray(inv.matrix(space)) @ np.array(h))
        res = semi_sensitivity_search(space, inv, a, t=t, n=sum(h), fiber_limit=1 if how == "ilp" else 10**5)
        fiber_size = conforming_fiber(space, inv, t=t, n=sum(h)).enumerate().shape[0]
        if res.candidates and how == "t":
            assert res.realised_by == "fiber"
        if res.candidates and how == "ilp" and fiber_size > 1:  # 1 element may be enumerated
            assert res.realised_by == "integer-program"
    assert res.exact and set(res.space.vectors) == expect
    check_witnesses(res, space, inv)


@FAST
@given(instances())
def test_worst_case_equals_union_over_t(inst: tuple[DataSpace, Invariant, tuple[int, ...], int]) -> None:
    space, inv, h, a = inst
    n = sum(h)
    res = semi_sensitivity_search(space, inv, a, n=n)
    assert set(res.space.vectors) == brute_worst(space, inv, n, a)
    assert res.realised_by == "worst-case" and not res.actual_t
    check_witnesses(res, space, inv)
    pairs = semi_sensitivity_search(space, inv, a, n=n, method="fiber-pairs")
    assert set(pairs.space.vectors) == set(res.space.vectors)


@pytest.mark.parametrize(
    ("space", "records", "a"),
    [
        (S22, [(1, 1), (1, 2), (2, 1)], 3),
        (S22, [(1, 1), (1, 1), (1, 2), (2, 1), (2, 2)], 2),
        (S23, [(1, 1), (1, 2), (2, 3), (2, 1)], 3),
        (S222, [(1, 1, 1), (2, 1, 1), (1, 2, 1), (1, 1, 2)], 4),
    ],
)
def test_histogram_reduction_against_ordered_datasets(space: DataSpace, records: list[tuple[int, ...]], a: int) -> None:
    """Def 4 over ordered datasets with d_H <= a equals the histogram computation (|h - h'|_1 / 2)."""
    inv = one_way(space)
    h = hist1(space, records)
    assert set(semi_sensitivity_space(space, inv, a, table=h).vectors) == brute_ordered(space, inv, h, a)


# ------------------------------------------------------------------------ routes agree


def test_routes_agree_on_tables() -> None:
    h = hist1(S33, [(1, 2), (2, 3), (3, 1), (1, 1), (2, 2)])
    inv = one_way(S33)
    spaces = {
        m: set(semi_sensitivity_space(S33, inv, 3, table=h, method=m).vectors)
        for m in ("enumeration", "closed-form", "fiber-pairs")
    }
    t = tuple(int(x) for x in inv.matrix(S33) @ np.array(h))
    assert t == (2, 2, 1, 2, 2, 1)
    ilp = semi_sensitivity_search(S33, inv, 3, t=t, n=5, fiber_limit=1)
    assert ilp.realised_by == "integer-program" and ilp.exact
    spaces["ilp"] = set(ilp.space.vectors)
    assert len({frozenset(v) for v in spaces.values()}) == 1
    assert spaces["ilp"] == brute_actual(S33, inv, h, 3)


def test_callable_invariant_matches_matrix_invariant() -> None:
    inv = one_way(S23)
    mat = inv.matrix(S23)
    cinv = CallableInvariant(lambda h: tuple((mat @ np.array(h)).tolist()), name="margins")
    h = hist1(S23, [(1, 1), (1, 2), (2, 3), (2, 1)])
    r = semi_sensitivity_search(S23, cinv, 3, table=h)
    assert r.candidates_from == "fiber-pairs"
    assert set(r.space.vectors) == set(semi_sensitivity_space(S23, inv, 3, table=h).vectors)
    check_witnesses(r, S23, cinv)
    worst = semi_sensitivity_space(S23, cinv, 3, n=4)
    assert set(worst.vectors) == set(semi_sensitivity_space(S23, inv, 3, n=4).vectors)
    with pytest.raises(InvalidArgument, match="needs n"):
        semi_sensitivity_space(S23, cinv, 3)
    with pytest.raises(InvalidArgument, match="callable invariant has no matrix"):
        semi_sensitivity_space(S23, cinv, 3, table=h, method="enumeration")


def test_linear_and_margin_queries_are_images() -> None:
    inv = one_way(S33)
    h = hist1(S33, [(1, 2), (2, 3), (3, 1)])
    cells = semi_sensitivity_search(S33, inv, 3, table=h)
    joint = Margins((("A", "B"),))  # identity matrix: same as the histogram
    assert set(semi_sensitivity_space(S33, inv, 3, table=h, query=joint).vectors) == set(cells.space.vectors)
    # the row margin is invariant: its sensitivity space is {0}
    assert semi_sensitivity_space(S33, inv, 3, table=h, query=Margins((("A",),))).vectors == ((0, 0, 0),)
    q = [[1, 1, 0, 0, 0, 0, 0, 0, 0], [0, 0, 0, 0, 1, 0, 0, 0, 1]]
    sq = semi_sensitivity_search(S33, inv, 3, table=h, query=q)
    assert set(sq.space.vectors) == {tuple(int(x) for x in np.array(q) @ np.array(u)) for u in cells.space.vectors}
    assert set(sq.cell_space.vectors) == set(cells.space.vectors)
    assert "image under the linear query (2 x 9)" in sq.space.label
    with pytest.raises(InvalidArgument, match="shape"):
        semi_sensitivity_space(S33, inv, 3, table=h, query=[[1, 2]])
    with pytest.raises(InvalidArgument, match="integer matrix"):
        semi_sensitivity_space(S33, inv, 3, table=h, query=np.ones((1, 9)) / 2)  # type: ignore[arg-type]


# ------------------------------------------------------------------ closed form, guards


def test_closed_form_comparison_reports_unrealisable_moves_at_actual_t() -> None:
    """A zero row margin: Prop 32's moves through that row are not realisable (extra, conservative)."""
    h = hist1(S33, [(1, 1), (1, 2), (2, 3), (2, 1)])  # row 3 empty
    res = semi_sensitivity_search(S33, one_way(S33), 3, table=h)
    assert set(res.space.vectors) == brute_actual(S33, one_way(S33), h, 3)
    cmp = compare_with_closed_form(res, table_shape=(3, 3))
    assert not cmp.missing and cmp.extra and not cmp.agrees
    assert set(res.space.vectors) < set(table_moves(3, 3)) | {(0,) * 9}
    assert any("not realisable here" in x for x in cmp.lines)
    assert any("span(S) differs" in x for x in cmp.lines)
    own = compare_with_closed_form(res.space, table_space(3, 3))
    assert own.missing == () and len(own.extra) == 31 - res.space.size
    with pytest.raises(InvalidArgument, match="table_shape"):
        compare_with_closed_form(res.space)


def test_refuses_big_instance_naming_estimate_and_limit() -> None:
    space = DataSpace.of(("A", 5), ("B", 5), ("C", 5), ("D", 5))  # 625 cells
    with pytest.raises(SearchTooLarge) as info:
        semi_sensitivity_space(space, Total(), 3)
    err = info.value
    msets = sum(math.comb(625 + s - 1, s) for s in (1, 2, 3))
    assert err.size == msets and err.limit == DEFAULT_MULTISET_LIMIT
    assert f"{msets:.4g}" in str(err) and f"{DEFAULT_MULTISET_LIMIT:.4g}" in str(err)
    with pytest.raises(SearchTooLarge, match=r"multiset pairs .* exceeds the limit 100\b"):
        semi_sensitivity_space(S222, one_way(S222), 4, limit=100)


def test_big_table_switches_to_closed_form_candidates_and_says_so() -> None:
    space = table(6, 6)
    inv = one_way(space)
    with pytest.raises(SearchTooLarge):
        semi_sensitivity_search(space, inv, 3, limit=1000, method="enumeration")
    res = semi_sensitivity_search(space, inv, 3, limit=1000)
    assert res.candidates_from == "closed-form" and "switched to the closed-form" in res.note
    assert "closed-form candidates" in res.space.label
    assert set(res.space.vectors) == set(semi_sensitivity_space(space, inv, 3).vectors)
    rng = np.random.default_rng(7)
    h = rng.multinomial(8, np.ones(36) / 36)
    a = semi_sensitivity_search(space, inv, 3, table=h, limit=1000)
    b = semi_sensitivity_search(space, inv, 3, table=h)
    assert a.candidates_from == "closed-form" and b.candidates_from == "enumeration"
    assert set(a.space.vectors) == set(b.space.vectors)
    check_witnesses(a, space, inv)
    with pytest.raises(InvalidArgument, match="closed-form"):
        semi_sensitivity_space(S222, one_way(S222), 3, method="closed-form")


def test_undecided_integer_programs_are_included_and_flagged(monkeypatch: pytest.MonkeyPatch) -> None:
    """A solver that decides nothing: every candidate is kept (conservative) and exact=False."""
    monkeypatch.setattr(realise, "integer_point", lambda *a, **k: ("unknown", None))
    res = semi_sensitivity_search(S33, one_way(S33), 3, t=(1, 1, 1, 1, 1, 1), n=3, fiber_limit=1)
    assert not res.exact and len(res.undecided) == 15 and "NOT EXACT" in res.space.label
    assert set(res.space.vectors) == set(table_space(3, 3).vectors)
    with pytest.raises(InvalidArgument, match="no witness"):
        res.witness(res.undecided[0])


def test_radius_result_and_argument_checks() -> None:
    inv = one_way(S22)
    h = hist1(S22, [(1, 1), (1, 2), (2, 1)])
    a = search_semi_adjacent_parameter(S22, inv, table=h)
    with pytest.raises(InvalidArgument, match="computed for t="):
        semi_sensitivity_space(S22, inv, a, table=(1, 1, 1, 1))
    assert semi_sensitivity_search(S22, inv, a, table=h).radius == 3
    bads: list[dict[str, Any]] = [{"method": "magic"}, {"limit": 0}, {"time_limit": 0.0}, {"fiber_limit": -1}]
    for bad in bads:
        with pytest.raises(InvalidArgument):
            semi_sensitivity_space(S22, inv, 3, **bad)
    with pytest.raises(InvalidArgument, match="radius"):
        semi_sensitivity_space(S22, inv, -1)
    zero = semi_sensitivity_search(S22, inv, 0, table=h)
    assert zero.space.vectors == ((0, 0, 0, 0),) and zero.witnesses == {}
    assert "n unknown, assumed >= 3" in semi_sensitivity_space(S22, inv, 3).label


@FAST
@given(st.integers(1, 6), st.integers(1, 5), st.data())
def test_exact_rank_matches_sympy(m: int, d: int, data: st.DataObject) -> None:
    import sympy

    rows = data.draw(st.lists(st.lists(st.integers(-3, 3), min_size=d, max_size=d), min_size=m, max_size=m))
    zero_col = data.draw(st.integers(0, d - 1))
    for r in rows[: m // 2]:
        r[zero_col] = 0
    assert exact_rank(np.array(rows)) == sympy.Matrix(rows).rank()


def test_kernel_moves_and_exact_rank_helpers() -> None:
    u, pairs = kernel_moves(np.zeros((0, 3), dtype=np.int64), 3, 2)
    assert {tuple(v) for v in u.tolist()} | {tuple(-v) for v in u} | {(0, 0, 0)} == set(histogram_space(3, 2).vectors)
    assert pairs == math.comb(3, 2) + math.comb(6, 2)
    assert exact_rank(np.zeros((0, 4), dtype=np.int64)) == 0
    big = table_space(4, 4)
    assert space_norms(big) == {**big.norms(), "rank": 9}
    s = SensitivitySpace.from_vectors([(2, -2, 0), (1, 0, -1)], "x")
    assert exact_rank(s.array) == s.rank == 2
