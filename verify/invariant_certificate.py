r"""Exact certificates that a built mechanism's noise lies in :math:`\ker A` (the invariant is preserved).

A mechanism keeps the invariant :math:`Ax` when every noise vector it can add
lies in :math:`\ker A`. The draws' check (``invariant-preserved``) measures the
floating-point deviation of actual releases; the check here (``invariant-certified``)
proves the *law* of the noise is supported in :math:`\ker A`, in exact integer or
rational arithmetic, by one of four methods:

* ``integer-generators`` -- the noise lies in :math:`\operatorname{span}(S)`
  (projected Gaussian and Laplace [CA24, Alg. 1], the K-norm ball :math:`\operatorname{conv}(S)`
  [CA24, Alg. 2], whose vertices are elements of S): :math:`As=0` for every
  :math:`s\in S` in integers, so :math:`\operatorname{span}(S)\subseteq\ker A`;
* ``rational-projector`` -- the noise is :math:`Pz` (Gao, Gong & Yu's projected
  mechanisms [GGY22, Def. 3.1]): the orthogonal projector onto :math:`\ker A`, built
  in exact rationals, satisfies :math:`P=P^\top`, :math:`P^2=P`, :math:`AP=0` and
  :math:`\operatorname{tr}P=d-\operatorname{rank}A`;
* ``kronecker-structure`` -- for an :math:`r\times c` table under both one-way
  margins whose S is not listed (:mod:`accountant.geometry.table_space_norms`): the noise
  lies in :math:`\operatorname{span}(C_r\otimes C_c)`, :math:`C_n` with columns
  :math:`e_i-e_{i+1}` (so :math:`\mathbf 1^\top C_n=0`); every row of A is checked
  to be :math:`e_i^\top\otimes\mathbf 1^\top` or :math:`\mathbf 1^\top\otimes e_j^\top`, and then
  :math:`(e_i^\top\otimes\mathbf 1^\top)(C_r\otimes C_c)=(e_i^\top C_r)\otimes(\mathbf 1^\top C_c)=0`
  (likewise for columns) -- without forming a :math:`rc\times rc` matrix;
* ``lattice-basis`` -- integer noise :math:`Cz` (:mod:`verify.kinds.lattice`): :math:`AC=0` in integers.

The float basis a sampler multiplies by is an approximation of the certified
subspace; its deviation :math:`\max|AQ|` is reported as rounding, not as part of the proof.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import sympy
from numpy.typing import NDArray

from semidp.accountant.core.outcome import Outcome, Refuted, Unknown, Verified
from semidp.accountant.geometry.table_space_norms import TableSpaceNorms
from semidp.accountant.sensitivity.spaces import SensitivitySpace

#: Largest number of cells for which the exact rational projector is formed (it has cells^2 entries).
PROJECTOR_CELL_LIMIT = 400


def _int_rows(a_mat: NDArray[np.int64] | Sequence[Sequence[int]]) -> list[list[int]]:
    return [[int(v) for v in row] for row in np.asarray(a_mat).tolist()]


def _float_note(a_mat: NDArray[np.int64], basis: NDArray[np.float64] | None) -> str:
    if basis is None or basis.size == 0 or np.asarray(a_mat).shape[0] == 0:
        return ""
    dev = float(np.abs(np.asarray(a_mat, dtype=np.float64) @ basis).max())
    return f"; the sampler's float basis Q has max |A Q| = {dev:.3g} (rounding, not part of the proof)"


def certify_generators(
    a_mat: NDArray[np.int64], vectors: Sequence[Sequence[int]], basis: NDArray[np.float64] | None = None
) -> Outcome:
    """``integer-generators``: every generator ``s`` of the noise subspace has ``A s = 0`` in exact integers."""
    rows = _int_rows(a_mat)
    for v in vectors:
        for i, row in enumerate(rows):
            if sum(c * x for c, x in zip(row, v) if c and x) != 0:
                return Refuted(f"integer-generators: generator {list(v)} has (A s)_{i} != 0: the noise leaves ker A")
    return Verified(
        f"certified (integer-generators): A s = 0 exactly for all {len(vectors)} vectors s of S, so the noise "
        f"support span(S) lies in ker A ({len(rows)} invariant rows, integer arithmetic){_float_note(a_mat, basis)}"
    )


def certify_projector(a_mat: NDArray[np.int64], basis: NDArray[np.float64] | None = None) -> Outcome:
    """``rational-projector``: the exact orthogonal projector onto ker A is symmetric, idempotent, A P = 0."""
    a = sympy.Matrix(_int_rows(a_mat))
    d = int(np.asarray(a_mat).shape[1])
    if d > PROJECTOR_CELL_LIMIT:
        return Unknown(f"rational-projector not formed ({d} cells > {PROJECTOR_CELL_LIMIT})")
    _, pivots = a.T.rref()  # independent rows of A
    r = a.extract(list(pivots), list(range(d))) if pivots else sympy.zeros(0, d)
    p = sympy.eye(d) if r.rows == 0 else sympy.eye(d) - r.T * (r * r.T).inv() * r
    checks = {
        "P = P^T": p == p.T,
        "P^2 = P": p * p == p,
        "A P = 0": (a * p).is_zero_matrix if a.rows else True,
        f"tr P = d - rank A = {d - len(pivots)}": p.trace() == d - len(pivots),
    }
    failed = [k for k, ok in checks.items() if not ok]
    if failed:
        return Refuted(f"rational-projector: {', '.join(failed)} fails")
    return Verified(
        f"certified (rational-projector): the orthogonal projector P onto ker A ({d} x {d}, exact rationals) has "
        f"{'; '.join(checks)}{_float_note(a_mat, basis)}"
    )


def certify_kronecker(
    a_mat: NDArray[np.int64], rows: int, cols: int, basis: NDArray[np.float64] | None = None
) -> Outcome:
    """``kronecker-structure``: noise in span(C_r (x) C_c) and every row of A a one-way margin (module docstring)."""
    a = np.asarray(a_mat)
    if a.shape[1] != rows * cols:
        return Refuted(f"kronecker-structure: A has {a.shape[1]} columns, not {rows} x {cols} = {rows * cols}")
    kinds = {"row": 0, "column": 0}
    for i in range(a.shape[0]):
        nz = np.flatnonzero(a[i])
        cells = sorted(int(j) for j in nz)
        if any(int(a[i, j]) != 1 for j in nz):
            return Unknown(f"kronecker-structure: row {i} of A is not a 0/1 margin row")
        if cells and cells == list(range(cells[0], cells[0] + cols)) and cells[0] % cols == 0:
            kinds["row"] += 1  # e_i^T (x) 1^T
        elif cells and cells == list(range(cells[0], rows * cols, cols)) and cells[0] < cols:
            kinds["column"] += 1  # 1^T (x) e_j^T
        else:
            return Unknown(f"kronecker-structure: row {i} of A is neither a row nor a column margin")
    # 1^T C_n = 0 for C_n = [e_i - e_{i+1}]: each column sums to 1 - 1 = 0, exactly.
    return Verified(
        f"certified (kronecker-structure): the noise lies in span(C_{rows} (x) C_{cols}), C_n = [e_i - e_(i+1)] "
        f"with 1^T C_n = 0; A's {kinds['row']} rows e_i^T (x) 1^T and {kinds['column']} rows 1^T (x) e_j^T each "
        f"give (e^T C) (x) (1^T C) = 0, so A (C_{rows} (x) C_{cols}) = 0 exactly (no {rows * cols}^2 matrix "
        f"formed){_float_note(a, basis)}"
    )


def certify_lattice_basis(a_mat: NDArray[np.int64], basis: Sequence[Sequence[int]]) -> Outcome:
    """``lattice-basis``: integer noise C z with A C = 0 in integers (columns of ``basis`` are C's columns)."""
    cols = [list(map(int, c)) for c in np.asarray(basis).T.tolist()]
    out = certify_generators(a_mat, cols)
    if isinstance(out, Verified):
        return Verified(
            f"certified (lattice-basis): A C = 0 exactly for the {len(cols)} integer basis columns of the noise "
            "lattice C Z^k, so every integer noise vector lies in ker A"
        )
    return out


def certify_noise_support(
    a_mat: NDArray[np.int64],
    *,
    projector: bool,
    space: SensitivitySpace | None,
    norms: TableSpaceNorms | None,
    basis: NDArray[np.float64] | None = None,
) -> Outcome:
    """The certificate for a calibrated mechanism: the projector (GGY's subspace-DP mechanisms), else the
    generators S, else the Kronecker structure of the closed-form span."""
    if projector:
        return certify_projector(a_mat, basis)
    if space is not None:
        return certify_generators(a_mat, space.vectors, basis)
    if norms is not None:
        return certify_kronecker(a_mat, norms.rows, norms.cols, basis)
    return Unknown("no exact description of the noise subspace was available to certify")


__all__ = [
    "PROJECTOR_CELL_LIMIT",
    "certify_noise_support",
    "certify_generators",
    "certify_kronecker",
    "certify_lattice_basis",
    "certify_projector",
]
