"""Exact certificates that a mechanism's noise lies in ker A, each checked against an independent computation."""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from semidp.accountant.core.outcome import Refuted, Unknown, Verified
from semidp.accountant.data.dataspace import DataSpace
from semidp.accountant.data.invariants import Margins
from semidp.accountant.geometry.table_space_norms import TableSpaceNorms
from semidp.accountant.sensitivity.spaces import table_space
from semidp.verify.invariant_certificate import (
    certify_generators,
    certify_kronecker,
    certify_lattice_basis,
    certify_projector,
)


def _margins(rows: int, cols: int) -> np.ndarray:
    a = np.zeros((rows + cols, rows * cols), dtype=np.int64)
    for i in range(rows):
        a[i, i * cols : (i + 1) * cols] = 1
    for j in range(cols):
        a[rows + j, j::cols] = 1
    return a


def test_generators_of_the_table_space_are_certified_and_a_bad_one_is_refuted() -> None:
    a = _margins(3, 3)
    vecs = table_space(3, 3, 3).vectors
    out = certify_generators(a, vecs)
    assert isinstance(out, Verified) and "certified (integer-generators)" in out.certificate
    assert str(len(vecs)) in out.certificate
    bad = [*vecs, (1, -1, 0, 0, 0, 0, 0, 0, 1)]  # keeps row 0's margin, breaks column 0's
    assert isinstance(certify_generators(a, bad), Refuted)


def test_rational_projector_matches_the_closed_form_projector() -> None:
    """Independent route: TableSpaceNorms' C_r (x) C_c is the projector onto ker A for both one-way margins."""
    a = _margins(3, 4)
    out = certify_projector(a)
    assert isinstance(out, Verified) and "tr P = d - rank A = 6" in out.certificate
    p = TableSpaceNorms(3, 4, 3).projector_exact()
    ap = [[sum(Fraction(int(a[i, k])) * p[k][j] for k in range(12)) for j in range(12)] for i in range(a.shape[0])]
    assert all(v == 0 for row in ap for v in row)
    assert sum(p[i][i] for i in range(12)) == 6


def test_projector_of_a_general_invariant() -> None:
    a = np.array([[1, 1, 0, 0], [0, 0, 1, 1], [1, 0, 1, 0], [0, 1, 0, 1]], dtype=np.int64)  # rank 3
    out = certify_projector(a)
    assert isinstance(out, Verified) and "tr P = d - rank A = 1" in out.certificate


def test_kronecker_structure_without_a_dense_matrix() -> None:
    out = certify_kronecker(_margins(200, 300), 200, 300)
    assert isinstance(out, Verified) and "200 rows e_i^T (x) 1^T and 300 rows 1^T (x) e_j^T" in out.certificate
    a = _margins(3, 3)
    a[0, 4] = 1  # no longer a one-way margin row
    assert isinstance(certify_kronecker(a, 3, 3), Unknown)
    assert isinstance(certify_kronecker(_margins(3, 3), 3, 4), Refuted)


def test_kronecker_agrees_with_the_orthonormal_basis() -> None:
    basis = TableSpaceNorms(4, 5, 3).orthonormal_basis()
    out = certify_kronecker(_margins(4, 5), 4, 5, basis)
    assert isinstance(out, Verified) and "max |A Q|" in out.certificate
    assert float(np.abs(_margins(4, 5) @ basis).max()) < 1e-12


def test_lattice_basis_certificate() -> None:
    a = np.array([[1, 1, 1]], dtype=np.int64)
    c = [[1, 0], [-1, 1], [0, -1]]  # d x m, columns e_0 - e_1, e_1 - e_2
    assert isinstance(certify_lattice_basis(a, c), Verified)
    assert isinstance(certify_lattice_basis(a, [[1, 0], [0, 1], [0, -1]]), Refuted)


def test_margins_invariant_matrix_is_the_kronecker_form() -> None:
    from semidp.accountant.data.dataspace import Feature

    space = DataSpace((Feature("r", 3), Feature("c", 4)))
    a = Margins((("r",), ("c",))).matrix(space)
    assert isinstance(certify_kronecker(a, 3, 4), Verified)
