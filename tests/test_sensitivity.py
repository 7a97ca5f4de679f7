"""Sensitivity spaces: docs/reference/semi-dp.md §9 T-S1..T-S5 (Cho & Awan 2024, Sec. 4-5)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import sympy

from semidp.accountant import InvalidArgument, SearchTooLarge
from semidp.accountant.sensitivity.spaces import (
    SensitivitySpace,
    group_inflated,
    histogram_space,
    table_moves,
    table_projector_kron,
    table_space,
    table_three_cycles,
)


def test_T_S1_two_by_two() -> None:
    s = table_space(2, 2)
    assert set(s.vectors) == {(0, 0, 0, 0), (1, -1, -1, 1), (-1, 1, 1, -1)}
    assert (s.l1, s.l2, s.linf) == (4, 2.0, 1)


def test_T_S2_three_by_three_with_three_cycles() -> None:
    s = table_space(3, 3)
    assert s.size == 31 == 1 + len(table_moves(3, 3)) + len(table_three_cycles(3, 3))
    assert len(table_moves(3, 3)) == 18 and len(table_three_cycles(3, 3)) == 12
    assert (s.l1, s.l2_squared, s.linf) == (6, 6, 1)
    assert s.l2 >= math.sqrt(6) and s.l2 <= math.sqrt(6) * (1 + 1e-15)
    printed = table_space(3, 3, paper_exact=True)
    assert (printed.l1, printed.l2, printed.linf) == (4, 2.0, 1)
    assert "INCOMPLETE" in printed.label
    assert printed.rank == s.rank == 4  # the span (hence P) is unchanged


def test_T_S2b_two_by_three_has_no_cycles() -> None:
    s = table_space(2, 3)
    assert s.size == 7 and (s.l1, s.l2, s.linf) == (4, 2.0, 1)


def test_T_S3_naive_spaces() -> None:
    s = histogram_space(4)
    assert (s.l1, s.l2_squared, s.linf) == (2, 2, 1)
    g = group_inflated(s, 3)
    assert (g["l1"], g["linf"]) == (6, 3)
    assert g["l2"] >= 3 * math.sqrt(2) and g["l2"] == pytest.approx(4.242641, abs=1e-6)
    # Prop. 24: S^{D,A_a} is between S_semi and a * S^{D,A_1} in every norm.
    sa = histogram_space(4, 3)
    semi = table_space(2, 2)
    assert semi.l2 <= sa.l2 <= g["l2"] and semi.l1 <= sa.l1 <= g["l1"]


@pytest.mark.parametrize(("r", "c"), [(2, 2), (2, 3), (3, 3), (3, 4), (4, 4)])
def test_T_S4_counts_rank_and_kronecker_projector(r: int, c: int) -> None:
    moves = table_moves(r, c)
    assert len(moves) == r * (r - 1) * c * (c - 1) // 2
    assert len(table_three_cycles(r, c)) == 12 * math.comb(r, 3) * math.comb(c, 3)
    s = table_space(r, c)
    assert s.rank == (r - 1) * (c - 1)
    p = s.projector_exact()
    assert p == table_projector_kron(r, c)  # exact equality, rational
    assert p.trace() == (r - 1) * (c - 1)
    assert all(p[k, k] == sympy.Rational((r - 1) * (c - 1), r * c) for k in range(r * c))
    q = s.orthonormal_basis()
    assert np.max(np.abs(q @ q.T - s.projector())) < 1e-12
    # every vector is margin-preserving (rows and columns sum to 0)
    arr = s.array.reshape(-1, r, c)
    assert not arr.sum(axis=1).any() and not arr.sum(axis=2).any()


def test_T_S5_two_by_two_projector() -> None:
    v = sympy.Matrix([1, -1, -1, 1])
    assert table_space(2, 2).projector_exact() == v * v.T / 4
    q = table_space(2, 2).orthonormal_basis()[:, 0]
    assert np.allclose(np.abs(q), 0.5)


def test_radius_below_two_is_trivial_and_queries_map() -> None:
    assert table_space(3, 3, radius=1).size == 1
    assert table_space(3, 3, radius=2).size == 19
    s = table_space(2, 2)
    row_sums = s.image([[1, 1, 0, 0], [0, 0, 1, 1]], "row sums")
    assert row_sums.size == 1  # the invariant's own query has S = {0}


def test_validation() -> None:
    with pytest.raises(InvalidArgument, match="not symmetric. Specifically"):
        SensitivitySpace(((0, 0), (1, -1)), "bad")
    with pytest.raises(InvalidArgument, match="contains 0"):
        SensitivitySpace(((1, -1), (-1, 1)), "bad")
    with pytest.raises(SearchTooLarge, match="exceeds the limit"):
        histogram_space(100, 3)


def test_refusals_found_by_the_exact_enumeration() -> None:
    # a(t) <= 3 for two-way tables: the closed form must not silently answer radius 4.
    with pytest.raises(InvalidArgument, match="radius <= 3 only"):
        table_space(3, 3, radius=4)
    # The guard counts what the loop visits, (k+1)^cells, so it refuses before running long.
    with pytest.raises(SearchTooLarge, match="k\\*sqrt\\(2\\)"):
        histogram_space(16, 3)


def test_rank_and_projector_on_a_larger_space() -> None:
    # Gram-matrix rank and projector (the per-vector sympy rank took 13 s here).
    s = table_space(5, 5)
    assert s.rank == 16 and s.projector_exact() == table_projector_kron(5, 5)  # (r-1)(c-1), exact


def test_table_space_refuses_a_huge_table_before_building_it() -> None:
    """12 x 12: 589 513 vectors of 144 cells; refused from its count (it once took minutes and 6.8 GB)."""
    from semidp.accountant.core.errors import SearchTooLarge
    from semidp.accountant.sensitivity.spaces import TABLE_SPACE_LIMIT

    with pytest.raises(SearchTooLarge, match="589513 vectors"):
        table_space(12, 12)
    assert 10 * 10 * (1 + 2 * 45 * 45 + 12 * 120 * 120) <= TABLE_SPACE_LIMIT  # 10 x 10 is still built
