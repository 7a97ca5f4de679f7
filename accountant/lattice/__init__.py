"""Integer kernel lattices of counting invariants [DGGY23, Prop. 8] and the exact integer matrices under them.

* :mod:`~semidp.accountant.lattice.kernel` -- kernel lattice bases (closed-form blocks, Smith normal form,
  column reduction) with exact certificates, and the tail constant;
* :mod:`~semidp.accountant.lattice.split` -- free / dependent cell splits of a kernel lattice;
* :mod:`~semidp.accountant.lattice.integer_matrix` -- exact integer matrix routines (Python ints).

Layers: imports :mod:`~semidp.accountant.core` and :mod:`~semidp.accountant.data` only. The names of
:mod:`~semidp.accountant.lattice.kernel` are re-exported here (``semidp.accountant.lattice`` was that module
before the subpackages).
"""

from semidp.accountant.lattice.kernel import (
    GRAM_DIRECT_LIMIT,
    MAX_CELLS_BLOCK,
    MAX_CELLS_EXACT,
    MAX_CELLS_SNF,
    MAX_LLL_DIMENSION,
    LatticeBasis,
    LatticeCertificate,
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

__all__ = [
    "GRAM_DIRECT_LIMIT",
    "MAX_CELLS_BLOCK",
    "MAX_CELLS_EXACT",
    "MAX_CELLS_SNF",
    "MAX_LLL_DIMENSION",
    "LatticeBasis",
    "LatticeCertificate",
    "basic_move_basis",
    "basis_for",
    "basis_from_columns",
    "certify",
    "counting_matrix",
    "kernel_lattice_basis",
    "table_margins_matrix",
    "tail_constant",
    "total_matrix",
]
