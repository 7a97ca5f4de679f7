"""The closed-form norms of a table's sensitivity space agree with the listed space
(docs/reference/semi-dp.md T-S2, T-S5)."""

from __future__ import annotations

import numpy as np
import pytest
import sympy

from semidp.accountant.core.errors import InvalidArgument
from semidp.accountant.geometry.table_space_norms import TableSpaceNorms, helmert_basis
from semidp.accountant.sensitivity.spaces import table_space


@pytest.mark.parametrize("r,c", [(2, 2), (2, 5), (3, 3), (3, 4), (4, 4), (3, 6)])
@pytest.mark.parametrize("a", [0, 1, 2, 3])
def test_norms_agree_with_the_listed_space(r: int, c: int, a: int) -> None:
    listed, norms = table_space(r, c, a), TableSpaceNorms(r, c, a)
    assert (norms.size, norms.l1, norms.l2_squared, norms.linf, norms.rank) == (
        listed.size,
        listed.l1,
        listed.l2_squared,
        listed.linf,
        listed.rank,
    )
    assert norms.l2 == listed.l2
    q = norms.orthonormal_basis()
    assert q.shape == (r * c, listed.rank)
    if listed.rank:
        exact = listed.projector_exact()
        assert sympy.Matrix(norms.projector_exact()) == exact
        assert np.allclose(q @ q.T, np.array(exact.evalf(20), dtype=np.float64), atol=1e-12)
        assert np.allclose(q.T @ q, np.eye(listed.rank), atol=1e-12)


def test_reference_sizes() -> None:
    # T-S2: 3x3 at radius 3 has 31 vectors (18 moves, 12 three-cycles, 0), l2 = sqrt(6) (Prop 32 prints 2)
    assert TableSpaceNorms(3, 3, 3).size == 31
    assert TableSpaceNorms(12, 12, 3).size == 589_513  # the one that table_space refuses to list
    assert TableSpaceNorms(12, 12, 3).rank == 121


def test_a_wrong_count_is_caught() -> None:
    # the twin without the 3-cycles (Prop 32 as printed) disagrees with the listed space at radius 3
    assert TableSpaceNorms(3, 3, 2).l2_squared != table_space(3, 3, 3).l2_squared


def test_helmert_is_orthonormal_and_centred() -> None:
    for n in (2, 3, 7, 12):
        h = helmert_basis(n)
        assert np.allclose(h.T @ h, np.eye(n - 1)) and np.allclose(h.sum(axis=0), 0)


def test_bad_input_names_the_argument() -> None:
    with pytest.raises(InvalidArgument, match="radius"):
        TableSpaceNorms(3, 3, 4)
    with pytest.raises(InvalidArgument, match="rows"):
        TableSpaceNorms(1, 3, 2)
