"""Exact integers wherever a proof or a sensitivity depends on them (issue 21, Step 17.1).

Properties: scaling an integer invariant row by any factor up to 2**120 leaves a(t), its exactness
and the verdict of a claim unchanged (the loader divides each row by its gcd); scaling a linear
query by an integer k scales its sensitivities by k (l2 squared by k**2), or is refused naming the
entry, never a wrong value. The CLI cases live in tests/hostile/test_overflow.py.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from semidp.accountant.core.errors import InvalidArgument, InvalidSpec
from semidp.accountant.data.dataspace import DataSpace
from semidp.accountant.data.exact_matrices import (
    QUERY_ENTRY_LIMIT,
    ROW_VALUE_LIMIT,
    exact_image,
    exact_int,
    invariant_int64,
    primitive_row,
    query_int64,
)
from semidp.accountant.data.invariants import Linear, Total
from semidp.accountant.sensitivity.search import semi_sensitivity_search
from semidp.accountant.sensitivity.spaces import SensitivitySpace
from semidp.verify.load import loads
from semidp.verify.runner import audit
from semidp.verify.spec_values import invariant_of


def _spec(matrix: str, *, table: str = "[2, 2, 2]", claim: str = "15.5", query: str = "") -> str:
    q = f'[query]\nkind = "linear"\nmatrix = {query}\n' if query else '[query]\nkind = "histogram"\n'
    return f"""
version = 1
name = "exact"
[data]
features = [{{ name = "A", levels = 3 }}]
adjacency = "replace-one"
table = {table}
[invariant]
kind = "linear"
matrix = {matrix}
{q}
[mechanism]
kind = "published"
guarantee = {{ zcdp = 1.0 }}
[claim]
framework = "semi-dp"
guarantee = {{ zcdp = {claim} }}
"""


def _toml_rows(rows: list[list[int]]) -> str:
    return "[" + ", ".join("[" + ", ".join(str(v) for v in r) + "]" for r in rows) + "]"


def test_primitive_row_is_the_same_constraint() -> None:
    assert primitive_row((0, -(2**63), 2**62)) == (0, -2, 1)
    assert primitive_row((0, 0, 0)) == (0, 0, 0)
    assert primitive_row((6, -9, 3)) == (2, -3, 1)


def test_the_probe_invariant_gives_a_of_t_4_and_refutes_the_claim() -> None:
    """[[0, -2**63, 2**62]] is [[0, -2, 1]]: a(t) = 4, so 1-zCDP is 16-zCDP semi-DP and 15.5 fails."""
    for m in ("[[0, -2, 1]]", f"[[0, {-(2**63)}, {2**62}]]", f"[[0, {-(2**121)}, {2**120}]]"):
        rep = audit(loads(_spec(m)))
        j = rep.report
        assert j["semi_adjacent_parameter"]["value"] == 4, m
        assert j["semi_adjacent_parameter"]["exact"] is True
        assert rep.verdict == "fails", m


@settings(max_examples=12, deadline=None)
@given(
    base=st.lists(st.integers(-3, 3), min_size=3, max_size=3).filter(any),
    factor=st.builds(lambda m, e: m << e, st.integers(1, 1023), st.integers(0, 110)),  # 1 .. < 2**120, every magnitude
    sign=st.sampled_from([1, -1]),
    table=st.lists(st.integers(0, 3), min_size=3, max_size=3).filter(lambda t: 1 <= sum(t) <= 6),
)
def test_scaling_an_invariant_row_leaves_a_of_t_and_the_verdict(
    base: list[int], factor: int, sign: int, table: list[int]
) -> None:
    k = sign * factor
    t = "[" + ", ".join(map(str, table)) + "]"
    ref = audit(loads(_spec(_toml_rows([base]), table=t, claim="3.9")))
    scaled = audit(loads(_spec(_toml_rows([[k * v for v in base]]), table=t, claim="3.9")))
    a, b = ref.report["semi_adjacent_parameter"], scaled.report["semi_adjacent_parameter"]
    assert (b["value"], b["lower"], b["exact"]) == (a["value"], a["lower"], a["exact"])
    assert scaled.verdict == ref.verdict
    assert invariant_of(loads(_spec(_toml_rows([[k * v for v in base]]), table=t))).matrix(
        DataSpace.of(("A", 3))
    ).tolist() == [[sign * v for v in primitive_row(base)]]


def test_an_invariant_row_beyond_the_range_is_refused_naming_the_entry() -> None:
    with pytest.raises(InvalidSpec, match=r"invariant\.matrix\[0\]\[2\]: is 9223372036854775807"):
        loads(_spec(f"[[0, -3, {2**63 - 1}]]"))
    # the same row is fine with few records when it fits: ||row||_1 * n <= 2**53
    loads(_spec(f"[[0, 1, {ROW_VALUE_LIMIT // 6 - 1}]]", table="[2, 2, 2]"))
    with pytest.raises(InvalidSpec, match=r"invariant\.matrix\[0\]\[2\].*times n = 6"):
        loads(_spec(f"[[0, 1, {ROW_VALUE_LIMIT // 6}]]", table="[2, 2, 2]"))


def test_linear_matrix_and_searches_refuse_beyond_the_range() -> None:
    space = DataSpace.of(("A", 3))
    with pytest.raises(InvalidArgument, match=r"invariant\.matrix\[0\]\[1\]"):
        Linear(((0, -(2**63), 2**62),)).matrix(space)
    big = Linear(((0, 1, 2**50),))
    assert big.matrix(space).tolist() == [[0, 1, 2**50]]
    with pytest.raises(InvalidArgument, match=r"invariant\.matrix\[0\]\[2\].*times n = 16"):
        semi_sensitivity_search(space, big, 2, table=[8, 8, 0])


@pytest.mark.parametrize(
    ("value", "ok"),
    [
        (3, 3),
        (np.int64(-4), -4),
        (Fraction(8, 2), 4),
        (4.0, 4),
        (float(2**53), 2**53),
        (float(2**53) * 2, None),
        (0.5, None),
        (Fraction(1, 2), None),
        (float("inf"), None),
        (float("nan"), None),
        (1e308, None),
        (True, None),
        ("3", None),
    ],
)
def test_exact_int_accepts_integers_only(value: object, ok: int | None) -> None:
    if ok is None:
        with pytest.raises(InvalidArgument, match=r"m\[0\]\[1\]"):
            exact_int("m[0][1]", value)
    else:
        assert exact_int("m[0][1]", value) == ok and type(exact_int("m[0][1]", value)) is int


def test_query_matrix_is_never_cast_silently() -> None:
    for bad in ([[4_000_000_000, 0, 0]], [[float("inf"), 0, 0]], [[1e308, 0, 0]], [[2**64, 0, 0]]):
        with pytest.raises(InvalidArgument, match=r"q\[0\]\[0\]"):
            query_int64("q", bad, 3)
    assert query_int64("q", [[QUERY_ENTRY_LIMIT, -QUERY_ENTRY_LIMIT, 0]], 3).tolist() == [
        [QUERY_ENTRY_LIMIT, -QUERY_ENTRY_LIMIT, 0]
    ]
    with pytest.raises(InvalidArgument, match="query has shape"):
        semi_sensitivity_search(DataSpace.of(("A", 3)), Total(), 1, n=2, query=[[1, 2]])


def test_exact_image_refuses_what_int64_cannot_hold() -> None:
    u = np.array([[2**31, -(2**31)]], dtype=np.int64)
    q = np.array([[2**30, 0]], dtype=np.int64)
    with pytest.raises(InvalidArgument, match="exact int64 range"):
        exact_image(u, q)
    assert exact_image(u, np.array([[2**29, 0]], dtype=np.int64)).tolist() == [[2**60]]
    assert invariant_int64("a", [[1, 2]], 2).dtype == np.int64


def test_sensitivity_norms_are_exact_for_large_vectors() -> None:
    v = (2**40, 2**40, -(2**40))
    s = SensitivitySpace.from_vectors([v], "big")
    assert s.linf == 2**40 and s.l1 == 3 * 2**40
    assert s.l2_squared == 3 * 2**80  # int64 would wrap: (2**40)**2 = 2**80


@settings(max_examples=25, deadline=None)
@given(
    rows=st.lists(st.lists(st.integers(-3, 3), min_size=3, max_size=3), min_size=1, max_size=2).filter(
        lambda r: any(any(x) for x in r)
    ),
    k=st.one_of(st.integers(1, 1000), st.integers(1, 2**40)),
)
def test_scaling_a_query_scales_its_sensitivity_or_is_refused(rows: list[list[int]], k: int) -> None:
    space = DataSpace.of(("A", 3))
    ref = semi_sensitivity_search(space, Total(), 2, table=[1, 1, 1], query=rows).space
    scaled_rows = [[k * v for v in r] for r in rows]
    beyond = k * max(abs(v) for r in rows for v in r) > QUERY_ENTRY_LIMIT
    if beyond:
        with pytest.raises(InvalidArgument, match=r"query\[\d\]\[\d\]"):
            semi_sensitivity_search(space, Total(), 2, table=[1, 1, 1], query=scaled_rows)
        return
    s = semi_sensitivity_search(space, Total(), 2, table=[1, 1, 1], query=scaled_rows).space
    assert (s.l1, s.linf, s.l2_squared) == (k * ref.l1, k * ref.linf, k * k * ref.l2_squared)
    assert s.l2 >= k * ref.l2 * (1 - 2**-50)  # rounded up, never below the exact k * l2


@settings(max_examples=6, deadline=None)
@given(k=st.one_of(st.integers(2, 2**20), st.integers(2**31, 2**70)))
def test_scaling_a_spec_query_scales_the_report_or_exits_2_naming_the_entry(k: int) -> None:
    base = [[1, 0, 0], [0, 1, 0]]
    scaled = _toml_rows([[k * v for v in r] for r in base])
    if k > QUERY_ENTRY_LIMIT:
        with pytest.raises(InvalidSpec, match=r"query\.matrix\[0\]\[0\]: is "):
            loads(_spec("[[1, 1, 1]]", query=scaled))
        return
    ref = audit(loads(_spec("[[1, 1, 1]]", query=_toml_rows(base)))).report["sensitivity"]
    got = audit(loads(_spec("[[1, 1, 1]]", query=scaled))).report["sensitivity"]
    assert (got["l1"], got["linf"], got["exact"]) == (k * ref["l1"], k * ref["linf"], True)
