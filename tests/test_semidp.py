"""Semi-DP transforms (Cho & Awan 2024, Props. 15, 21), the plain-DP verdict and closed-form a(t)."""

from __future__ import annotations

import pytest

from semidp.accountant import (
    GDP,
    ZCDP,
    AddRemove,
    ApproxDP,
    DataSpace,
    InvalidArgument,
    Margins,
    NoFiniteGuarantee,
    NoInvariant,
    PureDP,
    Replace,
    SemiAdjacent,
    Total,
    UnsupportedRelease,
    closed_form,
    joint_release_dp,
    semi_dp,
    semi_dp_composition,
)
from semidp.accountant.core.budget import Budget
from semidp.accountant.data.invariants import Linear

STATE = Margins((("state",),))


def test_prop15_census() -> None:
    # T-Z1: 2^2 x 2.56 = 10.24 on (D_t, A_2); Cho & Awan Sec. 6.
    g = semi_dp(ZCDP(2.56), STATE, 2)
    assert g.rho == 10.24
    assert g.relation == SemiAdjacent(Replace(), STATE, 2)


def test_prop15_gdp_and_radius_zero() -> None:
    assert semi_dp(GDP(0.5), Total(), 3).mu == 1.5  # G_mu^{o a} = G_{a mu}
    zero = semi_dp(PureDP(2.0), Total(), 0)  # D_t a singleton
    assert zero.epsilon == 0.0 and zero.relation.radius == 0
    with pytest.raises(InvalidArgument):
        semi_dp(ZCDP(1.0, Replace(2)), Total(), 2)  # needs an A_1 guarantee


def test_prop21_closed_forms_agree_for_gdp_and_zcdp() -> None:
    r = semi_dp_composition([GDP(3.0), GDP(4.0)], Total(), 2)
    assert r.semi_first.mu == r.composition_first.mu == 10.0  # a sqrt(sum mu^2)
    z = semi_dp_composition([ZCDP(1.0), ZCDP(1.56)], Total(), 2)
    assert z.semi_first.rho == z.composition_first.rho == 10.24


def test_prop21_semi_first_dominates_for_approx_dp() -> None:
    r = semi_dp_composition([ApproxDP(1.0, 1e-6), ApproxDP(0.5, 1e-6)], Total(), 3)
    assert r.semi_first.dominates(r.composition_first)
    assert r.semi_first.delta < r.composition_first.delta


def test_joint_release_plain_dp_verdicts() -> None:
    space = DataSpace.of(("state", 52), ("age", 2))
    bad = joint_release_dp(ZCDP(2.56), STATE, space)
    assert isinstance(bad, NoFiniteGuarantee) and "state" in bad.reason
    assert joint_release_dp(ZCDP(2.56), Total(), space) == ZCDP(2.56)  # n fixed
    assert isinstance(joint_release_dp(ZCDP(2.56, AddRemove()), Total(), space), NoFiniteGuarantee)
    assert joint_release_dp(PureDP(1.0, AddRemove()), NoInvariant(), space) == PureDP(1.0, AddRemove())
    # A linear invariant that ignores "age": constant under replace-one? No -- it still sees state.
    lin = Linear(tuple([tuple([1] * space.n_cells)]))
    assert joint_release_dp(GDP(1.0), lin, space) == GDP(1.0)


# ----------------------------------------------------------------- closed-form a(t)
# Targets: docs/reference/semi-dp.md §9 (T-A*), Cho & Awan Def. 13, Thm. 16.


def test_closed_form_state_partition() -> None:
    s = DataSpace.of(("state", 52), ("hhgq", 8), ("voting_age", 2))
    a = closed_form(s, STATE, Replace())
    assert (a.value, a.exact, a.method) == (2, True, "closed-form")
    assert closed_form(s, STATE, AddRemove()).value == 4  # |X sym-diff X'| = 2 d_H


@pytest.mark.parametrize(
    ("table", "expected"),
    [([3, 0], 0), ([2, 1], 2), ([1, 2], 2), ([0, 3], 0)],  # T-A1: n=3 binary, T = sum, t = 0..3
)
def test_closed_form_T_A1(table: list[int], expected: int) -> None:
    s = DataSpace.of(("x", 2))
    assert closed_form(s, Margins((("x",),)), Replace(), table=table).value == expected


def test_closed_form_T_A10_and_bounds() -> None:
    assert closed_form(DataSpace.of(("v", 3)), Margins((("v",),)), Replace(), table=[2, 1, 1]).value == 2
    s2 = DataSpace.of(("A", 2), ("B", 2))
    one_way = Margins((("A",), ("B",)))
    # T-A3 (a = 3 = p + 1): the bound is attained.
    a3 = closed_form(s2, one_way, Replace(), table=[2, 1, 1, 0])
    assert (a3.value, a3.exact) == (3, False)
    # T-A6 (true a = 2): the closed form is an upper bound, labelled so.
    assert closed_form(s2, one_way, Replace(), table=[3, 1, 0, 0]).value >= 2
    s3 = DataSpace.of(("A", 2), ("B", 2), ("C", 2))
    assert closed_form(s3, Margins((("A",), ("B",), ("C",))), Replace()).value == 4  # T-A7: p + 1
    # Full-table margin and free features.
    assert closed_form(s2, Margins((("A", "B"),)), Replace()).value == 2
    assert closed_form(s2, Margins((("A",),)), Replace(), table=[2, 1, 0, 0]).value == 1  # only B free
    assert closed_form(s2, NoInvariant(), Replace()).value == 1
    assert closed_form(s2, Total(), Replace()).value == 1
    assert closed_form(DataSpace.of(("x", 1)), NoInvariant(), Replace()).value == 0


def test_closed_form_refuses_what_it_cannot_prove() -> None:
    s = DataSpace.of(("A", 2), ("B", 2), ("C", 2))
    with pytest.raises(UnsupportedRelease, match="overlap"):
        closed_form(s, Margins((("A", "B"), ("B", "C"))), Replace())
    with pytest.raises(UnsupportedRelease, match="exact search"):
        closed_form(s, Linear(((1,) * 8,)), Replace())
    with pytest.raises(InvalidArgument, match="8 non-negative counts"):
        closed_form(s, Total(), Replace(), table=[1, 2])


# ----------------------------------------------------------------- dispatcher (closed form / search)


def test_dispatcher_uses_search_when_the_closed_form_is_only_a_bound() -> None:
    from semidp.accountant.combinatorics.semiadjacent import semi_adjacent_parameter

    s3 = DataSpace.of(("A", 2), ("B", 2), ("C", 2))
    inv = Margins((("A",), ("B",), ("C",)))
    t_a8 = [1, 0, 0, 1, 0, 1, 1, 0]  # T-A8: records (1,1,1),(1,2,2),(2,1,2),(2,2,1) -> a = 3
    r = semi_adjacent_parameter(s3, inv, Replace(), table=t_a8)
    assert (r.value, r.exact, r.scope) == (3, True, "actual t") and r.method == "graph-search"
    assert r.witness_data(s3)["distance"] == 3
    assert semi_adjacent_parameter(s3, inv, AddRemove(), table=t_a8).value == 6  # 2 x Hamming
    # Without a table: the Thm. 16 bound, labelled.
    b = semi_adjacent_parameter(s3, inv, Replace())
    assert (b.value, b.exact, b.scope) == (4, False, "worst case over t")
    # Closed form when exact (no search needed).
    assert semi_adjacent_parameter(DataSpace.of(("s", 5)), Margins((("s",),)), Replace()).method == "closed-form"
    with pytest.raises(UnsupportedRelease, match="needs the actual table"):
        semi_adjacent_parameter(s3, Linear(((1,) * 8,)), Replace())
    lin = semi_adjacent_parameter(s3, Linear(((1, 1, 1, 1, 0, 0, 0, 0),)), Replace(), table=t_a8)
    assert lin.value == 2 and lin.exact  # a partition of cells by A: same as the A margin


# ----------------------------------------------------------------- closed forms vs exact search
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402


@st.composite
def _instances(draw: st.DrawFn) -> tuple[DataSpace, object, list[int]]:
    p = draw(st.integers(1, 3))
    levels = [draw(st.integers(1, 3)) for _ in range(p)]
    space = DataSpace.of(*[(f"f{i}", k) for i, k in enumerate(levels)])
    n = draw(st.integers(1, 5))
    cells = draw(st.lists(st.integers(0, space.n_cells - 1), min_size=n, max_size=n))
    table = [cells.count(c) for c in range(space.n_cells)]
    names = list(space.names)
    kind = draw(st.sampled_from(["none", "total", "one-way", "partition", "joint"]))
    if kind == "none":
        inv: object = NoInvariant()
    elif kind == "total":
        inv = Total()
    elif kind == "one-way":
        inv = Margins(tuple((f,) for f in names))
    elif kind == "partition":
        inv = Margins(((names[0],),))
    else:
        inv = Margins((tuple(names),))
    return space, inv, table


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_instances())
def test_closed_forms_agree_with_exact_search(inst: tuple[DataSpace, object, list[int]]) -> None:
    """Cho & Awan Def. 13: every closed form is exact where it says so and an upper bound elsewhere."""
    from semidp.accountant.combinatorics.semiadjacent_search import search_semi_adjacent_parameter as search

    space, inv, table = inst
    cf = closed_form(space, inv, Replace(), table=table)  # type: ignore[arg-type]
    exact = search(space, inv, table=table, method="graph-search", budget=Budget.of(20.0))  # type: ignore[arg-type]
    assert exact.exact
    if cf.exact:
        assert cf.value == exact.value, (space, inv, table)
    else:
        assert cf.value >= exact.value, (space, inv, table)
