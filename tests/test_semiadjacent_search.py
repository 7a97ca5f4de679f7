"""Exact semi-adjacent parameter a(t) by search, with witnesses.

Cho & Awan 2024 (arXiv 2410.17468v1), Def 13 / Thm 16; targets from
docs/reference/semi-dp.md Sec. 9 (T-A1 ... T-A10). Three independent methods
(brute force over ordered datasets, graph search over histograms, integer
programming) must agree, and every witness is re-checked by verify.witness.
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

from semidp.accountant.combinatorics.fiber import (
    conforming_fiber,
    count_datasets,
    histogram_of_records,
)
from semidp.accountant.combinatorics.semiadjacent_brute_force import semiadjacent_by_brute_force
from semidp.accountant.combinatorics.semiadjacent_graph import semiadjacent_by_graph_search
from semidp.accountant.combinatorics.semiadjacent_ilp import semiadjacent_by_integer_program
from semidp.accountant.combinatorics.semiadjacent_results import SemiAdjacentResult, Witness, replacement_distance
from semidp.accountant.combinatorics.semiadjacent_search import (
    dataset_semiadjacent_distance,
    search_semi_adjacent_parameter,
)
from semidp.accountant.core.budget import Budget
from semidp.accountant.core.errors import InvalidArgument, SearchTooLarge
from semidp.accountant.data.callable_invariant import CallableInvariant
from semidp.accountant.data.dataspace import DataSpace
from semidp.accountant.data.invariants import Counting, Linear, Margins, NoInvariant, Total
from semidp.verify.witness import check_result, check_witness

METHODS = ("brute-force", "graph-search", "integer-program")
FAST = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def one_way(space: DataSpace) -> Margins:
    return Margins(tuple((name,) for name in space.names))


def hist1(space: DataSpace, records: Sequence[Sequence[int]]) -> tuple[int, ...]:
    """Histogram from 1-based records, as printed in the paper / reference."""
    return histogram_of_records(space, [space.cell_index([v - 1 for v in r]) for r in records])


S1 = DataSpace.of(("x", 2))
S22 = DataSpace.of(("A", 2), ("B", 2))
S222 = DataSpace.of(("A", 2), ("B", 2), ("C", 2))
S3 = DataSpace.of(("v", 3))

# reference Sec. 9 "Semi-adjacent parameter" table: (id, space, invariant, records, #D_t, a(t))
TARGETS = [
    ("T-A2", S22, one_way(S22), [(1, 1), (1, 2), (2, 1), (2, 2)], 36, 2),
    ("T-A3", S22, one_way(S22), [(1, 1), (1, 1), (1, 2), (2, 1)], 16, 3),
    ("T-A4", S22, one_way(S22), [(1, 1), (1, 2), (2, 1)], 9, 3),
    ("T-A5", S22, one_way(S22), [(1, 1), (1, 1), (1, 2), (2, 1), (2, 2)], 100, 3),
    ("T-A6", S22, one_way(S22), [(1, 1)] * 3 + [(1, 2)], 4, 2),
    ("T-A7", S222, one_way(S222), [(1, 1, 1), (2, 1, 1), (1, 2, 1), (1, 1, 2)], 64, 4),
    ("T-A8", S222, one_way(S222), [(1, 1, 1), (1, 2, 2), (2, 1, 2), (2, 2, 1)], 216, 3),
    ("T-A9", S222, one_way(S222), [(1, 1, 1), (2, 2, 2)], 8, 2),
    ("T-A10", S3, Margins((("v",),)), [(1,), (1,), (2,), (3,)], 12, 2),
]


# ------------------------------------------------------------------ reproduction targets


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("case", [pytest.param(c, id=c[0]) for c in TARGETS])
def test_reference_targets_T_A2_to_T_A10(case: tuple[Any, ...], method: str) -> None:
    """reference Sec. 9 T-A2..T-A10 (Cho & Awan 2024, Def 13; Thm 16 for T-A7 = p + 1)."""
    _, space, inv, records, n_datasets, a = case
    table = hist1(space, records)
    res = search_semi_adjacent_parameter(space, inv, table=table, method=method)
    assert res.exact and res.value == a and res.upper == a
    assert res.method == method
    if method != "integer-program":
        assert res.n_datasets == n_datasets  # #D_t counts ordered datasets
    chk = check_result(space, inv, res, table=table)
    assert chk.passed, chk.reason


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("t,n_datasets,a", [(0, 1, 0), (1, 3, 2), (2, 3, 2), (3, 1, 0)])
def test_reference_target_T_A1(method: str, t: int, n_datasets: int, a: int) -> None:
    """reference Sec. 9 T-A1: n = 3 binary records, T = sum x_i (Cho & Awan 2024, Example 3)."""
    inv = Linear(((0, 1),))  # sum of x_i over cells {0, 1} = count of records equal to 1
    res = search_semi_adjacent_parameter(S1, inv, t=(t,), n=3, method=method)
    assert (res.value, res.exact) == (a, True)
    if method != "integer-program":
        assert res.n_datasets == n_datasets
    assert check_result(S1, inv, res).passed


def test_T_A7_reaches_thm16_bound_and_witness_matches_paper_story() -> None:
    """T-A7: a = p + 1 = 4 (Cho & Awan 2024, Thm 16): every feature needs its own fix."""
    table = hist1(S222, [(1, 1, 1), (2, 1, 1), (1, 2, 1), (1, 1, 2)])
    res = semiadjacent_by_graph_search(S222, one_way(S222), table=table)
    w = res.witness
    rx, ry = S222.record(w.record), S222.record(w.target)
    assert all(a != b for a, b in zip(rx, ry))  # the individual changes all three features
    assert w.distance == 4


def test_value_depends_on_t_only() -> None:
    """Def 13 is a sup over all of D_t: two tables with the same margins give the same a(t)."""
    inv = one_way(S22)
    t1 = (2, 1, 1, 1)  # T-A5
    t2 = (1, 2, 2, 0)  # same margins (3, 2 / 3, 2); cell (2,2) empty
    r1 = search_semi_adjacent_parameter(S22, inv, table=t1)
    r2 = search_semi_adjacent_parameter(S22, inv, table=t2)
    assert r1.t == r2.t and r1.value == r2.value == 3
    # ... while the per-dataset quantity differs and is only a lower bound.
    d1 = dataset_semiadjacent_distance(S22, inv, t1)
    d2 = dataset_semiadjacent_distance(S22, inv, t2)
    assert (d1.value, d2.value) == (2, 3)
    assert d1.value <= r1.value


# -------------------------------------------------------------------- Lemma 1 (formula)


def _min_over_orderings(h: Sequence[int], x: int, h2: Sequence[int], x2: int, order: list[int]) -> int:
    """Brute force: X fixed (ordering `order`, individual 0 holds x), all X' with X'_0 = x2."""
    X = [x] + order
    rest = list(h2)
    rest[x2] -= 1
    items = [c for c, m in enumerate(rest) for _ in range(m)]
    best = len(X) + 1
    for perm in set(itertools.permutations(items)):
        Y = [x2, *perm]
        best = min(best, sum(a != b for a, b in zip(X, Y)))
    return best


@st.composite
def _hist_pair(draw: st.DrawFn) -> tuple[list[int], int, list[int], int, list[int]]:
    k = draw(st.integers(1, 4))
    n = draw(st.integers(1, 5))
    cells = st.integers(0, k - 1)
    X = draw(st.lists(cells, min_size=n, max_size=n))
    Y = draw(st.lists(cells, min_size=n, max_size=n))
    h = [X.count(c) for c in range(k)]
    h2 = [Y.count(c) for c in range(k)]
    x, x2 = X[0], Y[0]
    return h, x, h2, x2, X[1:]


@FAST
@given(_hist_pair())
def test_lemma1_formula_matches_brute_force_over_orderings(case: tuple[Any, ...]) -> None:
    """min d_H over orderings = [x != x'] + |(h - e_x) - (h' - e_x')|_1 / 2 (note, Lemma 1)."""
    h, x, h2, x2, order = case
    assert replacement_distance(h, x, h2, x2) == _min_over_orderings(h, x, h2, x2, order)


@FAST
@given(_hist_pair())
def test_lemma1_case_form(case: tuple[Any, ...]) -> None:
    """Case form: |h - h'|_1 / 2 + 2 - [h_x > h'_x] - [h'_x' > h_x'] when x != x'."""
    h, x, h2, x2, _ = case
    d = replacement_distance(h, x, h2, x2)
    half = sum(abs(a - b) for a, b in zip(h, h2)) // 2
    if x == x2:
        assert d == half
    else:
        assert d == half + 2 - int(h[x] > h2[x]) - int(h2[x2] > h[x2])


def test_lemma1_swap_costs_two_not_zero() -> None:
    """h' = h with x != x' is a swap (distance 2), not |h - h'|_1 / 2 = 0."""
    assert replacement_distance((1, 1), 0, (1, 1), 1) == 2
    with pytest.raises(InvalidArgument):
        replacement_distance((1, 1), 0, (2, 0), 1)  # h' has no record at the target


# --------------------------------------------------- random instances: methods agree


@st.composite
def _instance(draw: st.DrawFn, callable_ok: bool = True) -> tuple[DataSpace, Any, tuple[int, ...]]:
    p = draw(st.integers(1, 3))
    levels = [draw(st.integers(2, 3)) for _ in range(p)]
    if math.prod(levels) > 8:
        levels = [2] * p
    space = DataSpace.of(*[(f"F{j}", lv) for j, lv in enumerate(levels)])
    k = space.n_cells
    max_n = max(1, min(5, int(math.log(1500) / math.log(k))))
    n = draw(st.integers(1, max_n))
    recs = draw(st.lists(st.integers(0, k - 1), min_size=n, max_size=n))
    table = histogram_of_records(space, recs)
    kinds = ["none", "total", "margins", "counting", "linear"] + (["callable"] if callable_ok else [])
    kind = draw(st.sampled_from(kinds))
    inv: Any
    if kind == "none":
        inv = NoInvariant()
    elif kind == "total":
        inv = Total()
    elif kind == "margins":
        subsets = [s for r in range(1, p + 1) for s in itertools.combinations(space.names, r)]
        chosen = draw(st.lists(st.sampled_from(subsets), min_size=1, max_size=3, unique=True))
        inv = Margins(tuple(chosen))
    elif kind == "counting":
        sets = draw(
            st.lists(st.lists(st.integers(0, k - 1), min_size=1, max_size=k, unique=True), min_size=1, max_size=3)
        )
        inv = Counting(tuple(tuple(s) for s in sets))
    elif kind == "linear":
        rows = draw(st.lists(st.lists(st.integers(-1, 2), min_size=k, max_size=k), min_size=1, max_size=2))
        inv = Linear(tuple(tuple(r) for r in rows))
    else:
        which = draw(st.sampled_from(["max", "empty", "parity"]))
        fn = {"max": lambda h: max(h), "empty": lambda h: sum(1 for v in h if v == 0), "parity": lambda h: h[0] % 2}[
            which
        ]
        inv = CallableInvariant(fn, name=which)
    return space, inv, table


@FAST
@given(_instance())
def test_methods_agree_with_brute_force_on_random_instances(inst: tuple[Any, ...]) -> None:
    """Graph search (and integer programming) = brute force over ordered datasets (Def 13)."""
    space, inv, table = inst
    brute = semiadjacent_by_brute_force(space, inv, table=table)
    graph = semiadjacent_by_graph_search(space, inv, table=table)
    assert brute.exact and graph.exact
    assert graph.value == brute.value
    assert graph.n_datasets == brute.n_datasets
    assert graph.fiber_size == brute.fiber_size
    for res in (brute, graph):
        chk = check_result(space, inv, res, table=table)
        assert chk.passed, chk.reason
    if not isinstance(inv, CallableInvariant):
        ilp = semiadjacent_by_integer_program(space, inv, table=table)
        assert ilp.exact and ilp.value == brute.value
        assert check_result(space, inv, ilp, table=table).passed
    # the per-dataset quantity never exceeds a(t)
    assert dataset_semiadjacent_distance(space, inv, table).value <= brute.value


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(2, 3), st.integers(6, 25), st.integers(0, 10**6))
def test_graph_search_and_integer_program_agree_on_medium_instances(p: int, n: int, seed: int) -> None:
    """Beyond brute force: the two histogram methods agree (one-way margins, p binary features)."""
    space = DataSpace.of(*[(f"F{j}", 2) for j in range(p)])
    rng = np.random.default_rng(seed)
    probs = rng.dirichlet(np.ones(space.n_cells) * 0.5)
    table = tuple(int(v) for v in rng.multinomial(n, probs))
    inv = one_way(space)
    g = semiadjacent_by_graph_search(space, inv, table=table)
    i = semiadjacent_by_integer_program(space, inv, table=table)
    assert g.exact and i.exact and g.value == i.value
    assert check_witness(space, inv, i.witness, t=i.t, n=i.n, optimality_limit=20_000).passed


# --------------------------------------------------------------- closed-form facts


@FAST
@given(st.integers(2, 4), st.data())
def test_partition_single_feature_is_2_or_0(levels: int, data: st.DataObject) -> None:
    """Margins [[f]] on a one-feature space (full histogram published): a = 2 if >= 2
    non-empty levels else 0 (reference Sec. 9 T-A10; Cho & Awan 2024, Remark 17)."""
    space = DataSpace.of(("f", levels))
    n = data.draw(st.integers(1, 12))
    table = data.draw(st.lists(st.integers(0, n), min_size=levels, max_size=levels).filter(lambda v: sum(v) > 0))
    res = search_semi_adjacent_parameter(space, Margins((("f",),)), table=table)
    assert res.value == (2 if sum(1 for v in table if v) >= 2 else 0)
    assert check_result(space, Margins((("f",),)), res, table=table).passed


@pytest.mark.parametrize(
    "table,expected",
    [
        ((2, 1, 0, 1, 0, 0), 2),  # two non-empty states: a move across states needs a compensating move
        ((2, 1, 1, 0, 0, 0), 1),  # one non-empty state: records move freely between its ages
        ((0, 0, 0, 1, 1, 1), 1),
    ],
)
def test_partition_state_totals_with_other_features(table: tuple[int, ...], expected: int) -> None:
    """State totals (a partition by one feature of several): 2 if >= 2 non-empty states,
    else 1 when the state has >= 2 cells (other features unconstrained)."""
    space = DataSpace.of(("state", 2), ("age", 3))
    inv = Margins((("state",),))
    for method in METHODS:
        assert search_semi_adjacent_parameter(space, inv, table=table, method=method).value == expected


@pytest.mark.parametrize("inv", [NoInvariant(), Total()])
@pytest.mark.parametrize("n", [1, 2, 5, 30])
def test_no_invariant_is_1(inv: NoInvariant | Total, n: int) -> None:
    """No invariant (or only n): a(t) = 1 for >= 2 cells and n >= 1 (reference Sec. 3.1)."""
    space = DataSpace.of(("A", 2), ("B", 3))
    res = search_semi_adjacent_parameter(space, inv, t=(n,) if isinstance(inv, Total) else (), n=n)
    assert res.value == 1 and res.exact
    one_cell = DataSpace.of(("A", 1))
    assert search_semi_adjacent_parameter(one_cell, inv, t=(n,) if isinstance(inv, Total) else (), n=n).value == 0


@FAST
@given(st.data())
def test_full_table_margin_is_2_or_0(data: st.DataObject) -> None:
    """Joint margin of all features (the table itself): a = 2 or 0 (Cho & Awan 2024, Remark 17)."""
    space = DataSpace.of(("A", 2), ("B", 3))
    table = data.draw(st.lists(st.integers(0, 4), min_size=6, max_size=6).filter(lambda v: sum(v) > 0))
    res = search_semi_adjacent_parameter(space, Margins((("A", "B"),)), table=table)
    assert res.value == (2 if sum(1 for v in table if v) >= 2 else 0)


@FAST
@given(_instance(callable_ok=False))
def test_one_way_margins_thm16_bounds(inst: tuple[Any, ...]) -> None:
    """One-way margins of p features: a <= p + 1 (Thm 16); a = 0 iff |D_t| = 1; else a >= 2."""
    space, _, table = inst
    p = len(space.features)
    res = semiadjacent_by_brute_force(space, one_way(space), table=table)
    assert res.value <= p + 1
    if res.n_datasets == 1:
        assert res.value == 0
    else:
        assert res.value >= 2


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 10**6))
def test_disjoint_joint_margins_bound(seed: int) -> None:
    """Margins over q disjoint feature sets: a <= q + 1 (Thm 16's argument; note Lemma 5)."""
    space = DataSpace.of(("A", 2), ("B", 2), ("C", 2), ("D", 2))
    inv = Margins((("A", "B"), ("C",)))
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 9))
    table = rng.multinomial(n, rng.dirichlet(np.ones(16) * 0.3))
    res = semiadjacent_by_graph_search(space, inv, table=table)
    assert res.exact and res.value <= 3


# ------------------------------------------------------------ size guards and budgets


def test_graph_search_refuses_big_fiber_before_enumerating() -> None:
    space = DataSpace.of(("A", 4), ("B", 4))
    table = np.full(16, 4)
    with pytest.raises(SearchTooLarge) as err:
        semiadjacent_by_graph_search(space, one_way(space), table=table, limit=10_000)
    assert err.value.limit == 10_000 and err.value.size > 10_000
    assert "exact" in str(err.value) and "limit 10000" in str(err.value)
    assert "integer-program" in str(err.value)


def test_auto_switches_to_integer_program_and_says_so() -> None:
    space = DataSpace.of(("A", 4), ("B", 4))
    table = np.full(16, 4)
    res = search_semi_adjacent_parameter(space, one_way(space), table=table, limit=10_000)
    assert res.method == "integer-program" and "switched" in res.note
    assert res.exact and res.value == 3 and res.fiber_size is None
    assert check_witness(space, one_way(space), res.witness, t=res.t, n=res.n).passed


def test_brute_force_refuses_large() -> None:
    with pytest.raises(SearchTooLarge, match="ordered datasets"):
        semiadjacent_by_brute_force(S222, one_way(S222), table=(2, 2, 2, 2, 2, 2, 2, 2))


def test_callable_invariant_too_large_is_refused() -> None:
    space = DataSpace.of(("A", 6), ("B", 6))
    inv = CallableInvariant(lambda h: max(h), name="max")
    with pytest.raises(SearchTooLarge):
        search_semi_adjacent_parameter(space, inv, t=(3,), n=40, limit=1000)
    with pytest.raises(InvalidArgument, match="matrix invariant"):
        semiadjacent_by_integer_program(space, inv, t=(3,), n=4)


@pytest.mark.parametrize("method", ["graph-search", "brute-force"])
def test_time_budget_runs_out_gracefully(method: str) -> None:
    space = DataSpace.of(("A", 2), ("B", 2), ("C", 2))
    table = hist1(space, [(1, 1, 1), (2, 1, 1), (1, 2, 1), (1, 1, 2)])
    res = search_semi_adjacent_parameter(space, one_way(space), table=table, method=method, budget=Budget.of(1e-9))
    assert not res.exact and "ran out" in res.note
    assert res.value <= 4 <= res.upper  # the truth (T-A7) lies between
    assert check_witness(space, one_way(space), res.witness, t=res.t, n=res.n).passed


def test_integer_program_on_large_table_is_fast_and_exact() -> None:
    """4 x 4 table, n = 100 (about 5e9 conforming histograms): a(t) = 3 by integer programming."""
    space = DataSpace.of(("A", 4), ("B", 4))
    rng = np.random.default_rng(7)
    table = rng.multinomial(100, np.ones(16) / 16)
    res = semiadjacent_by_integer_program(space, one_way(space), table=table, budget=Budget.of(30))
    assert res.exact and res.value == 3
    assert check_witness(space, one_way(space), res.witness, t=res.t, n=res.n).passed


def test_integer_program_proves_value_below_thm16_bound() -> None:
    """3 binary features, balanced margins: a(t) = 3 < p + 1 = 4, proven by search."""
    space = DataSpace.of(("A", 2), ("B", 2), ("C", 2))
    table = (7, 6, 6, 6, 6, 6, 6, 7)
    g = semiadjacent_by_graph_search(space, one_way(space), table=table)
    i = semiadjacent_by_integer_program(space, one_way(space), table=table)
    assert g.value == i.value == 3 and g.exact and i.exact and i.upper == 3


# ----------------------------------------------------------------------------- fibers


@FAST
@given(_instance(callable_ok=False))
def test_fiber_count_enumeration_and_bound_agree_with_brute_force(inst: tuple[Any, ...]) -> None:
    space, inv, table = inst
    fib = conforming_fiber(space, inv, table=table)
    rows = fib.enumerate()
    k, n = space.n_cells, fib.n
    a = np.asarray(inv.matrix(space))
    brute = [
        h
        for h in itertools.product(range(n + 1), repeat=k)
        if sum(h) == n and tuple(int(v) for v in a @ np.array(h)) == fib.t
    ]
    assert sorted(map(tuple, rows.tolist())) == sorted(brute)
    est = fib.estimate_size()
    assert est.exact and est.value == len(brute)
    assert fib.estimate_size(work_limit=1).value >= len(brute)  # the bound is an upper bound
    assert all(fib.contains(h) for h in brute)
    assert count_datasets(rows, n) == sum(math.factorial(n) // math.prod(math.factorial(v) for v in h) for h in brute)


def test_fiber_support_by_integer_feasibility() -> None:
    space = DataSpace.of(("A", 2), ("B", 3))
    fib = conforming_fiber(space, one_way(space), table=(2, 0, 0, 0, 0, 1))
    assert sorted(fib.support()) == sorted({c for h in fib.enumerate().tolist() for c in range(6) if h[c]})


def test_witness_ordered_realises_distance() -> None:
    w = Witness((2, 1, 1, 0), 0, 3, (3, 0, 0, 1), 3)
    X, Y, i = w.ordered()
    assert X[i] == 0 and Y[i] == 3
    assert histogram_of_records(S22, X) == w.dataset and histogram_of_records(S22, Y) == w.nearest
    assert sum(a != b for a, b in zip(X, Y)) == 3


# ---------------------------------------------------------------- verifier rejects


@pytest.mark.parametrize(
    "tamper,reason",
    [
        ({"distance": 2}, "stated distance"),
        ({"nearest": (2, 1, 1, 0), "target": 3}, "no record in target"),
        ({"nearest": (3, 0, 1, 0)}, "invariant value"),
        ({"record": 3}, "holds no record"),
        ({"dataset": (2, 1, 1, 1)}, "records, expected"),
    ],
)
def test_verifier_rejects_tampered_witness(tamper: dict[str, Any], reason: str) -> None:
    good: dict[str, Any] = {"dataset": (2, 1, 1, 0), "record": 0, "target": 3, "nearest": (3, 0, 0, 1), "distance": 3}
    assert check_witness(S22, one_way(S22), Witness(**good), t=(3, 1, 3, 1), n=4).passed
    chk = check_witness(S22, one_way(S22), Witness(**{**good, **tamper}), t=(3, 1, 3, 1), n=4)
    assert not chk.passed and reason in chk.reason


def test_verifier_rejects_non_optimal_nearest() -> None:
    # T-A5 margins (3, 2 / 3, 2): individual at (1,1) -> (1,1)... use x -> x' = (2,2) from (2,1,1,1):
    # the table itself holds (2,2), so a swap (distance 2) beats (3,0,0,2) at distance 3.
    w = Witness((2, 1, 1, 1), 0, 3, (3, 0, 0, 2), 3)
    chk = check_witness(S22, one_way(S22), w, t=(3, 2, 3, 2), n=5)
    assert not chk.passed and "not the nearest" in chk.reason


def test_verifier_rejects_wrong_value_claim() -> None:
    table = hist1(S22, [(1, 1), (1, 1), (1, 2), (2, 1), (2, 2)])
    res = search_semi_adjacent_parameter(S22, one_way(S22), table=table)
    w2 = Witness((2, 1, 1, 1), 0, 3, (2, 1, 1, 1), 2)  # a valid witness of a smaller distance
    fake = SemiAdjacentResult(2, 2, True, "graph-search", w2, res.fiber_size, res.n_datasets, res.t, res.n)
    assert check_witness(S22, one_way(S22), w2, t=res.t, n=res.n).passed
    chk = check_result(S22, one_way(S22), fake, table=table)
    assert not chk.passed and "recomputed a(t) = 3" in chk.reason


# ------------------------------------------------------------------- input validation


@pytest.mark.parametrize(
    "kwargs,match",
    [
        ({"table": (1, 1, 1)}, "shape"),
        ({"table": (1, -1, 1, 1)}, "negative"),
        ({"table": (0.5, 1, 1, 1)}, "integer"),
        ({"table": (0, 0, 0, 0)}, "no records"),
        ({"t": (1, 1, 1, 1)}, "n .the number of records. is required"),
        ({"t": (1, 1, 1), "n": 2}, "has 3 entries"),
        ({"table": (1, 1, 1, 1), "n": 3}, "disagrees"),
        ({"table": (1, 1, 1, 1), "t": (2, 2, 2, 1)}, "disagrees"),
        ({"t": (3, 0, 3, 0), "n": 2}, "D_t is empty"),
        ({"table": (1, 1, 1, 1), "method": "magic"}, "method"),
        ({"table": (1, 1, 1, 1), "time_limit": 0}, "time_limit"),
    ],
)
def test_bad_inputs_raise_invalid_argument(kwargs: dict[str, Any], match: str) -> None:
    with pytest.raises(InvalidArgument, match=match):
        search_semi_adjacent_parameter(S22, one_way(S22), **kwargs)


def test_deprecated_time_limit_keyword_still_works_for_one_release() -> None:
    """Issue 23 item 5: ``time_limit=`` seconds becomes ``budget=``; the old keyword warns and still bounds the search."""
    space = DataSpace.of(("A", 2), ("B", 2), ("C", 2))
    table = hist1(space, [(1, 1, 1), (2, 1, 1), (1, 2, 1), (1, 1, 2)])
    with pytest.warns(DeprecationWarning, match="time_limit"):
        old = search_semi_adjacent_parameter(space, one_way(space), table=table, method="graph-search", time_limit=1e-9)
    assert not old.exact and "ran out" in old.note  # the old keyword's seconds reached the search
    with pytest.warns(DeprecationWarning, match="time_limit"):
        assert semiadjacent_by_integer_program(S22, one_way(S22), table=(1, 1, 1, 1), time_limit=30).value == 2
    with pytest.raises(InvalidArgument, match="not both"):
        search_semi_adjacent_parameter(S22, one_way(S22), table=(1, 1, 1, 1), budget=Budget.of(5), time_limit=5)
    with pytest.raises(TypeError, match="time_limt"):
        dataset_semiadjacent_distance(S22, one_way(S22), (1, 1, 1, 1), time_limt=5)


def test_bad_invariant_type() -> None:
    with pytest.raises(InvalidArgument, match="invariant"):
        search_semi_adjacent_parameter(S22, "margins", table=(1, 1, 1, 1))  # type: ignore[arg-type]
