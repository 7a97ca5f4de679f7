"""Integer kernel lattice bases (DGGY23 Prop 8;
docs/reference/subspace-integer-postprocessing.md §3.2-3.3, targets T-I1, T-I2, T-I4, T-I9, T-I11)."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
import sympy
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from sympy.matrices.normalforms import invariant_factors
from sympy.polys.matrices import DomainMatrix

from semidp.accountant.core.errors import InvalidArgument, SearchTooLarge, VerificationError
from semidp.accountant.data.dataspace import DataSpace
from semidp.accountant.data.invariants import Counting, Margins, NoInvariant, Total
from semidp.accountant.lattice.kernel import (
    MAX_CELLS_BLOCK,
    MAX_CELLS_EXACT,
    MAX_CELLS_SNF,
    MAX_LLL_DIMENSION,
    LatticeBasis,
    basic_move_basis,
    basis_for,
    basis_from_columns,
    certify,
    counting_matrix,
    kernel_lattice_basis,
    table_margins_matrix,
    tail_constant,
    total_matrix,
)
from semidp.accountant.lattice.split import FreeSplit, search_free_split

HAS_SNF = hasattr(sympy.matrices.normalforms, "smith_normal_decomp")
METHODS = ["column-reduction", "snf"]

#: T-I9 stand-in layout (2 records per Venn region; NOT the paper's Fig. 3).
T_I9_SETS = [[0, 1, 6, 7, 8, 9, 12, 13], [2, 3, 6, 7, 10, 11, 12, 13], [4, 5, 8, 9, 10, 11, 12, 13]]


def sympy_invariant_factors(m: np.ndarray | list[list[int]]) -> tuple[int, ...]:
    """Independent saturation check: sympy's invariant factors."""
    return tuple(int(x) for x in invariant_factors(sympy.Matrix(np.asarray(m).tolist()), domain=sympy.ZZ))


def exact_det(m: np.ndarray) -> int:
    return int(sympy.Matrix(np.asarray(m, dtype=object).tolist()).det())


def same_lattice(b1: LatticeBasis, b2: LatticeBasis) -> bool:
    """Each basis's columns have integer coordinates in the other (coordinates re-checks C s = z)."""
    for x, y in ((b1, b2), (b2, b1)):
        for col in x.matrix.T:
            s = y.coordinates(col)
            assert all(isinstance(v, int) for v in s)
    return True


# --------------------------------------------------------------------------- T-I1, T-I4


@pytest.mark.parametrize("method", METHODS)
def test_t_i1_four_by_four_margins(method: str) -> None:
    """T-I1: rank 7, kernel dimension 9, det(C^T C) = 4096 = 4^3 * 4^3."""
    a = table_margins_matrix(4, 4)
    b = kernel_lattice_basis(a, method=method)  # type: ignore[arg-type]
    assert (b.rank_of_A, b.dimension, b.cells) == (7, 9, 16)
    assert b.gram_determinant == 4096 == exact_det(b.matrix.T @ b.matrix)
    assert not (a @ b.matrix).any()
    assert sympy_invariant_factors(b.matrix) == (1,) * 9  # saturated, independently
    assert b.certificate.saturation_index == 1 and b.certificate.rank_of_C == 9


def test_t_i1_snf_invariants_of_margins() -> None:
    """T-I1: the 8 margin rows have invariant factors 1^7 and 0 (one dependent row)."""
    assert sympy_invariant_factors(table_margins_matrix(4, 4)) == (1,) * 7 + (0,)
    assert sympy_invariant_factors(table_margins_matrix(4, 4, drop_redundant=True)) == (1,) * 7


def test_t_i1_basic_moves_saturated() -> None:
    a = table_margins_matrix(4, 4)
    moves = basic_move_basis(4, 4)
    b = basis_from_columns(a, moves)
    assert b.method == "given" and b.gram_determinant == 4096 and b.dimension == 9
    assert same_lattice(b, kernel_lattice_basis(a))


@pytest.mark.parametrize(("r", "c"), [(2, 2), (2, 3), (3, 3), (3, 4), (4, 4), (5, 2)])
def test_basic_move_basis_is_the_anchored_free_split_basis(r: int, c: int) -> None:
    """Reference §3.2 / T-I1: the anchor-(0,0) basic moves are a saturated basis, det(C^T C) = r^(c-1) c^(r-1).

    Certified exactly (A C = 0, rank, saturation) and compared with an independent
    construction: the free-coordinate split of the margins, whose free cells are i, j >= 1.
    """
    a = table_margins_matrix(r, c)
    moves = basic_move_basis(r, c)
    assert moves.dtype == np.int64 and moves.shape == (r * c, (r - 1) * (c - 1))
    b = basis_from_columns(a, moves)
    assert b.certificate.saturation_index == 1 and b.gram_determinant == r ** (c - 1) * c ** (r - 1)
    split = search_free_split(a)
    assert isinstance(split, FreeSplit) and np.array_equal(split.basis, moves)


def test_basic_move_basis_columns_and_arguments() -> None:
    """Column order i then j, cells row-major (3x3 written out); a 1-row table has no moves."""
    expected = [
        [1, -1, 0, -1, 1, 0, 0, 0, 0],
        [1, 0, -1, -1, 0, 1, 0, 0, 0],
        [1, -1, 0, 0, 0, 0, -1, 1, 0],
        [1, 0, -1, 0, 0, 0, -1, 0, 1],
    ]
    assert basic_move_basis(3, 3).T.tolist() == expected
    assert basic_move_basis(1, 4).shape == (4, 0)
    with pytest.raises(InvalidArgument):
        basic_move_basis(0, 3)


@pytest.mark.skipif(not HAS_SNF, reason="sympy < 1.14 has no smith_normal_decomp")
@pytest.mark.parametrize("drop", [False, True])
def test_t_i1_sympy_snf_basis_is_the_basic_moves(drop: bool) -> None:
    """T-I1: max |entry| of the sympy basis is 1; it consists of the anchor-(0,0) basic moves."""
    b = kernel_lattice_basis(table_margins_matrix(4, 4, drop_redundant=drop), method="snf", reduce=False)
    assert b.method == "snf" and not b.reduced
    assert int(np.abs(b.matrix).max()) == 1
    got = {tuple(int(v) for v in col) for col in b.matrix.T}
    assert got == {tuple(int(v) for v in col) for col in basic_move_basis(4, 4).T}


def test_t_i4_tail_constant() -> None:
    """T-I4: K = 4 * 2^9 * V_9 / sqrt(4096) = 32 V_9 = 105.552 (printed to 3 decimals)."""
    k = tail_constant(kernel_lattice_basis(table_margins_matrix(4, 4)))
    with mpmath.workdps(40):
        exact = 32 * mpmath.pi**4.5 / mpmath.gamma(5.5)
        assert mpmath.mpf(k) >= exact  # rounded up
        assert mpmath.mpf(k) <= exact * (1 + mpmath.mpf(10) ** -15)
    assert abs(k - 105.552) <= 5e-4
    # basis-free
    assert tail_constant(basis_from_columns(table_margins_matrix(4, 4), basic_move_basis(4, 4))) == k


# --------------------------------------------------------------------------- T-I2, T-I9


@pytest.mark.parametrize(("n", "det"), [(4, 4), (5, 5), (15, 15)], ids=["T-I2-n4", "T-I2-n5", "T-I2-n15"])
@pytest.mark.parametrize("method", ["auto", *METHODS])
def test_t_i2_single_total(n: int, det: int, method: str) -> None:
    b = kernel_lattice_basis(total_matrix(n), method=method)  # type: ignore[arg-type]
    assert b.gram_determinant == det and b.dimension == n - 1
    assert b.method == ("block" if method == "auto" else method)


@pytest.mark.parametrize(
    ("r", "c", "det"),
    [(2, 2, 4), (2, 3, 12), (3, 3, 81), (3, 4, 432), (3, 5, 2025)],
    ids=["T-I2-2x2", "T-I2-2x3", "T-I2-3x3", "T-I2-3x4", "T-I2-3x5"],
)
@pytest.mark.parametrize("method", METHODS)
def test_t_i2_tables(r: int, c: int, det: int, method: str) -> None:
    b = kernel_lattice_basis(table_margins_matrix(r, c), method=method)  # type: ignore[arg-type]
    assert b.gram_determinant == det == r ** (c - 1) * c ** (r - 1)
    assert b.dimension == (r - 1) * (c - 1)
    a_full = table_margins_matrix(r, c, drop_redundant=True)
    assert det == exact_det(a_full @ a_full.T)  # det(C^T C) = det(A A^T)


def test_t_i9_stand_in_layout() -> None:
    a = counting_matrix(T_I9_SETS, 14)
    b = kernel_lattice_basis(a)
    assert b.dimension == 11 and b.rank_of_A == 3
    assert b.gram_determinant == 256 == exact_det(a @ a.T)
    assert sympy_invariant_factors(b.matrix) == (1,) * 11
    assert same_lattice(b, kernel_lattice_basis(a, method="snf"))


# --------------------------------------------------------------------------- T-I11 and certify


@pytest.mark.parametrize(
    ("a", "index"),
    [([[1, 2, 3], [4, 5, 6]], 3), ([[2, 1, 1, 0], [0, 1, -1, 2]], 4)],
    ids=["T-I11-index3", "T-I11-index4"],
)
def test_t_i11_nullspace_pitfall(a: list[list[int]], index: int) -> None:
    """DomainMatrix.nullspace() over ZZ spans the kernel but is not a lattice basis."""
    dm = DomainMatrix([[sympy.ZZ(x) for x in row] for row in a], (len(a), len(a[0])), sympy.ZZ)
    cand = np.array(dm.nullspace().to_Matrix().tolist(), dtype=np.int64).T  # rows -> columns
    assert not (np.array(a) @ cand).any()
    assert math.prod(sympy_invariant_factors(cand)) == index  # independent index
    with pytest.raises(VerificationError, match=rf"\(iii\) saturation.*index {index}"):
        certify(a, cand)
    ours = kernel_lattice_basis(a)
    assert certify(a, ours.matrix).saturation_index == 1
    # the candidate's vectors lie in our lattice; ours are not all integer combinations of it
    for col in cand.T:
        ours.coordinates(col)
    c = sympy.Matrix(cand.tolist())
    rational = [(c.T * c).inv() * c.T * sympy.Matrix(col.tolist()) for col in ours.matrix.T]
    assert any(not x.is_integer for sol in rational for x in sol)


def test_certify_names_each_failed_check() -> None:
    a = [[1, 1, 1]]
    with pytest.raises(VerificationError, match=r"\(i\) A C = 0"):
        certify(a, [[1, 0], [0, 1], [0, -1]])
    with pytest.raises(VerificationError, match=r"\(ii\) rank"):
        certify(a, [[1], [-1], [0]])  # one column missing
    with pytest.raises(VerificationError, match=r"\(ii\) rank"):
        certify(a, [[1, 2], [-1, -2], [0, 0]])  # dependent columns
    with pytest.raises(VerificationError, match=r"\(iii\) saturation.*index 2"):
        certify(a, [[2, 0], [-2, 1], [0, -1]])
    with pytest.raises(InvalidArgument):
        certify(a, [[1, 0], [-1, 1]])  # wrong number of rows


# --------------------------------------------------------------------------- property tests


@st.composite
def integer_matrices(draw: st.DrawFn) -> list[list[int]]:
    d = draw(st.integers(1, 6))
    k = draw(st.integers(1, 4))
    rows = [draw(st.lists(st.integers(-3, 3), min_size=d, max_size=d)) for _ in range(k)]
    if draw(st.booleans()):  # add a dependent row
        c1, c2 = draw(st.integers(-2, 2)), draw(st.integers(-2, 2))
        rows.append([c1 * x + c2 * y for x, y in zip(rows[0], rows[-1])])
    return rows


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(a=integer_matrices())
def test_property_methods_agree(a: list[list[int]]) -> None:
    """Both methods give certified bases of the same lattice, of dimension d - rank A."""
    d = len(a[0])
    rank = sympy.Matrix(a).rank()
    bases = [kernel_lattice_basis(a, method=m) for m in ("column-reduction", "snf", "auto")]
    for b in bases:
        assert b.dimension == d - rank and b.rank_of_A == rank
        certify(a, b.matrix)  # re-certify from outside
        assert not (np.array(a) @ b.matrix).any()
        if b.dimension:
            assert sympy_invariant_factors(b.matrix) == (1,) * b.dimension
        assert b.gram_determinant == (exact_det(b.matrix.T @ b.matrix) if b.dimension else 1)
    assert same_lattice(bases[0], bases[1]) and same_lattice(bases[0], bases[2])
    assert len({b.gram_determinant for b in bases}) == 1


@settings(max_examples=40, deadline=None)
@given(data=st.data(), k=st.integers(1, 4), d=st.integers(2, 8))
def test_property_gram_equals_det_aat_for_saturated_full_rank(data: st.DataObject, k: int, d: int) -> None:
    """Reference §3.2: det(C^T C) = det(A A^T) for saturated full-row-rank 0/1 A; in general
    det(A A^T) / g^2 with g the product of A's invariant factors."""
    a = np.array(
        data.draw(st.lists(st.lists(st.integers(0, 1), min_size=d, max_size=d), min_size=k, max_size=k)), dtype=np.int64
    )
    assume(sympy.Matrix(a.tolist()).rank() == k)
    g = math.prod(sympy_invariant_factors(a))
    b = kernel_lattice_basis(a)
    assert b.gram_determinant * g * g == exact_det(a @ a.T)
    if g == 1:
        assert b.gram_determinant == exact_det(a @ a.T)


@settings(max_examples=40, deadline=None)
@given(a=integer_matrices(), data=st.data())
def test_property_coordinates_round_trip(a: list[list[int]], data: st.DataObject) -> None:
    b = kernel_lattice_basis(a)
    s = data.draw(st.lists(st.integers(-50, 50), min_size=b.dimension, max_size=b.dimension))
    z = b.matrix @ np.array(s, dtype=np.int64).reshape(b.dimension)
    assert b.coordinates(z) == tuple(s)
    off = data.draw(st.integers(0, b.cells - 1))
    z2 = z.copy()
    z2[off] += 1
    if (np.array(a) @ z2).any():
        with pytest.raises(InvalidArgument, match="not in the lattice"):
            b.coordinates(z2)


# --------------------------------------------------------------------------- block closed form


def test_single_total_hundred_counties_closed_form() -> None:
    """T-G4 sizes (IL 102 counties, TX 254): consecutive differences, certified."""
    for n in (102, 254):
        b = kernel_lattice_basis(total_matrix(n))
        assert b.method == "block" and b.dimension == n - 1 and b.gram_determinant == n
        m = b.matrix
        assert all(m[j, j] == 1 and m[j + 1, j] == -1 and np.abs(m[:, j]).sum() == 2 for j in range(n - 1))
    assert kernel_lattice_basis(total_matrix(40), method="column-reduction").gram_determinant == 40


def test_block_totals_partition_and_free_cells() -> None:
    """State totals: blocks {0,1,2}, {3,4}, {5}; cell 6 unconstrained; duplicate and scaled rows."""
    a = counting_matrix([[0, 1, 2], [3, 4], [5], [3, 4]], 7)
    a = np.vstack([a, 2 * a[:1]])
    b = kernel_lattice_basis(a)
    assert b.method == "block" and b.rank_of_A == 3 and b.dimension == 4
    assert b.gram_determinant == 3 * 2 * 1 * 1
    assert same_lattice(b, kernel_lattice_basis(a, method="column-reduction"))
    assert b.coordinates([1, 1, -2, 5, -5, 0, 7]) == (1, 2, 5, 7)
    with pytest.raises(InvalidArgument, match="block"):
        kernel_lattice_basis(table_margins_matrix(2, 2), method="block")


def test_no_constraint_and_full_rank() -> None:
    free = kernel_lattice_basis(np.zeros((0, 3), dtype=np.int64))
    assert free.dimension == 3 and free.gram_determinant == 1
    assert (free.matrix == np.eye(3, dtype=np.int64)).all()
    full = kernel_lattice_basis(np.array([[1, 2], [3, 4]]))
    assert full.dimension == 0 and full.matrix.shape == (2, 0) and full.gram_determinant == 1
    assert full.coordinates([0, 0]) == ()
    with pytest.raises(InvalidArgument):
        full.coordinates([1, 0])


# --------------------------------------------------------------------------- fallbacks, guards, inputs


def test_snf_fallback_recorded(monkeypatch: pytest.MonkeyPatch) -> None:
    if HAS_SNF:
        monkeypatch.delattr(sympy.matrices.normalforms, "smith_normal_decomp")
    b = kernel_lattice_basis(table_margins_matrix(3, 3), method="snf")
    assert b.method == "column-reduction" and "smith_normal_decomp" in b.note and b.gram_determinant == 81


def test_lll_unavailable_keeps_unreduced(monkeypatch: pytest.MonkeyPatch) -> None:
    a = [[3, 5, 7, 11]]
    monkeypatch.delattr(DomainMatrix, "lll")
    b = kernel_lattice_basis(a, method="column-reduction", reduce=True)
    assert not b.reduced and "lll" in b.note
    certify(a, b.matrix)


def test_lll_reduction_applied_and_same_lattice() -> None:
    a = [[3, 5, 7, 11], [2, -1, 4, 9]]
    raw = kernel_lattice_basis(a, method="column-reduction", reduce=False)
    red = kernel_lattice_basis(a, method="column-reduction", reduce=True)
    assert red.reduced and not raw.reduced and red.note == ""
    assert same_lattice(raw, red) and raw.gram_determinant == red.gram_determinant
    assert max(np.abs(red.matrix).sum(axis=0)) <= max(np.abs(raw.matrix).sum(axis=0))


def test_size_guards() -> None:
    with pytest.raises(SearchTooLarge) as e1:
        kernel_lattice_basis(total_matrix(MAX_CELLS_BLOCK + 1))
    assert e1.value.size == MAX_CELLS_BLOCK + 1 and e1.value.limit == MAX_CELLS_BLOCK
    cols = MAX_CELLS_EXACT // 2 + 1
    with pytest.raises(SearchTooLarge, match="exact kernel lattice basis"):
        kernel_lattice_basis(table_margins_matrix(2, cols))
    with pytest.raises(SearchTooLarge, match="LLL"):
        kernel_lattice_basis(table_margins_matrix(12, 12), reduce=True)  # m = 121
    b = kernel_lattice_basis(table_margins_matrix(12, 12))  # 'auto': entries are +-1
    assert b.dimension == 121 > MAX_LLL_DIMENSION and b.gram_determinant == 12**22
    if HAS_SNF:
        with pytest.raises(SearchTooLarge, match="Smith normal form"):
            kernel_lattice_basis(table_margins_matrix(MAX_CELLS_SNF // 10 + 1, 10), method="snf")
    # a 1-D kernel spanned by (2^70 + 3, -(2^70 + 1)): no int64 basis exists at all
    with pytest.raises(SearchTooLarge, match="int64"):
        kernel_lattice_basis([[2**70 + 1, 2**70 + 3]])
    assert certify([[2**70 + 1, 2**70 + 3]], [[2**70 + 3], [-(2**70 + 1)]]).saturation_index == 1


@pytest.mark.parametrize(
    "bad",
    [[[1, 0.5]], [[1, float("nan")]], [["a", 1]], [[1, 2], [3]], [1, 2, 3], [], "abc", np.array([[0.5, 1.0]])],
)
def test_invalid_matrices(bad: object) -> None:
    with pytest.raises(InvalidArgument):
        kernel_lattice_basis(bad)


def test_integral_floats_and_arguments() -> None:
    assert kernel_lattice_basis(np.ones((1, 3))).gram_determinant == 3
    with pytest.raises(InvalidArgument):
        kernel_lattice_basis([[1, 1]], method="qr")  # type: ignore[arg-type]
    with pytest.raises(InvalidArgument):
        kernel_lattice_basis([[1, 1]], reduce="yes")  # type: ignore[arg-type]
    with pytest.raises(InvalidArgument):
        counting_matrix([[0, 3]], 3)
    with pytest.raises(InvalidArgument):
        counting_matrix([[0, 0]], 3)
    assert table_margins_matrix(2, 3, drop_redundant=True).shape == (4, 6)


def test_basis_is_read_only_and_exact() -> None:
    b = kernel_lattice_basis(table_margins_matrix(3, 3))
    assert not b.matrix.flags.writeable and b.matrix.dtype == np.int64
    assert b.matrix.tolist() == [list(r) for r in b.exact]
    assert b == kernel_lattice_basis(table_margins_matrix(3, 3))


# --------------------------------------------------------------------------- invariants adapter


def test_basis_for_invariants() -> None:
    space = DataSpace.of(("A", 4), ("B", 4))
    margins = basis_for(Margins((("A",), ("B",))), space)
    assert margins.gram_determinant == 4096 and margins.dimension == 9
    assert basis_for(Total(), space).method == "block"
    assert basis_for(NoInvariant(), space).dimension == 16
    counting = basis_for(Counting(tuple(tuple(s) for s in T_I9_SETS)), DataSpace.of(("record", 14)))
    assert counting.gram_determinant == 256
