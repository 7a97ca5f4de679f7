r"""The norms and span of a table's sensitivity space in closed form, without listing its vectors.

For an :math:`r\times c` table under both one-way margins at radius :math:`a\le3`,
:func:`accountant.sensitivity.spaces.table_space` lists S: the :math:`2\times2` moves
(:math:`a\ge2`) and the 3-cycles (:math:`a\ge3`, :math:`\min(r,c)\ge3`)
[CA24, Prop. 32, corrected in ``docs/reference/semi-dp.md`` §5]. That list grows like
:math:`r^3c^3` (589 513 vectors for 12 x 12), yet the calibration of an additive
mechanism needs only a few numbers of it, all exact here:

* :math:`\Delta_1 = \Delta_2^2 = 4` with moves only, :math:`6` with 3-cycles;
  :math:`\Delta_\infty = 1`; the size
  :math:`1 + 2\binom r2\binom c2 + 12\binom r3\binom c3`;
* span(S) is the whole kernel of the margins,
  :math:`\{X : X\mathbf 1 = 0,\ \mathbf 1^\top X = 0\}`, of dimension
  :math:`(r-1)(c-1)` (the moves already span it), with the exact projector
  :math:`C_r\otimes C_c`, :math:`C_n = I_n - \mathbf 1\mathbf 1^\top/n`, and the
  orthonormal basis :math:`H_r\otimes H_c` (Helmert columns), row-major.

The space at a given table t is a **subset** of this one (fewer pairs conform),
so a mechanism calibrated to these norms on this span is valid on
:math:`(\mathcal D_t, A_a)` -- conservative, never optimistic.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
from numpy.typing import NDArray

from semidp.accountant.core.arguments import check_int
from semidp.accountant.core.directed import sqrt_up
from semidp.accountant.core.errors import InvalidArgument


def helmert_basis(n: int) -> NDArray[np.float64]:
    r"""An ``(n, n-1)`` orthonormal basis of :math:`\mathbf 1^\perp\subset\mathbb R^n` (Helmert's columns).

    Column k (0-based) is :math:`(1,\dots,1,-(k+1),0,\dots,0)/\sqrt{(k+1)(k+2)}` with ``k + 1`` ones.

    >>> h = helmert_basis(3)
    >>> bool(np.allclose(h.T @ h, np.eye(2)) and np.allclose(h.sum(axis=0), 0))
    True
    """
    check_int("n", n, minimum=2)
    h = np.zeros((n, n - 1))
    for k in range(n - 1):
        h[: k + 1, k] = 1.0
        h[k + 1, k] = -(k + 1)
        h[:, k] /= math.sqrt((k + 1) * (k + 2))
    return h


@dataclass(frozen=True)
class TableSpaceNorms:
    r"""Exact norms and span of :func:`accountant.sensitivity.spaces.table_space` ``(rows, cols, radius)``.

    >>> t = TableSpaceNorms(3, 3, 3)                # reference T-S2: 31 vectors, l1 6, l2 sqrt 6, rank 4
    >>> t.size, t.l1, t.l2_squared, t.linf, t.rank
    (31, 6, 6, 1, 4)
    >>> TableSpaceNorms(12, 12, 3).size             # never listed
    589513
    """

    rows: int
    cols: int
    radius: int

    def __post_init__(self) -> None:
        check_int("rows", self.rows, minimum=2)
        check_int("cols", self.cols, minimum=2)
        check_int("radius", self.radius, minimum=0)
        if self.radius > 3:
            raise InvalidArgument(
                f"radius={self.radius}: under both one-way margins a(t) <= 3 [CA24, Thm. 16] and this closed "
                "form covers radius <= 3 only."
            )

    @property
    def moves(self) -> bool:
        """Whether S has the 2 x 2 moves (radius >= 2)."""
        return self.radius >= 2

    @property
    def cycles(self) -> bool:
        """Whether S has the 3-cycles (radius 3 and at least 3 rows and columns)."""
        return self.radius >= 3 and min(self.rows, self.cols) >= 3

    @property
    def dimension(self) -> int:
        """Ambient dimension ``r c``."""
        return self.rows * self.cols

    @property
    def size(self) -> int:
        """Number of vectors, 0 included."""
        r, c = self.rows, self.cols
        n = 1 + (2 * math.comb(r, 2) * math.comb(c, 2) if self.moves else 0)
        return n + (12 * math.comb(r, 3) * math.comb(c, 3) if self.cycles else 0)

    @property
    def l1(self) -> int:
        """L1 sensitivity: 6 with 3-cycles, 4 with moves, 0 otherwise."""
        return 6 if self.cycles else 4 if self.moves else 0

    @property
    def l2_squared(self) -> int:
        """Squared L2 sensitivity (a move has four entries +-1, a 3-cycle six)."""
        return self.l1

    @property
    def l2(self) -> float:
        """L2 sensitivity, rounded up."""
        return sqrt_up(Fraction(self.l2_squared))

    @property
    def linf(self) -> int:
        """L-infinity sensitivity."""
        return 1 if self.moves else 0

    @property
    def rank(self) -> int:
        """dim span(S) = (r-1)(c-1) (the moves span the margins' kernel), 0 below radius 2."""
        return (self.rows - 1) * (self.cols - 1) if self.moves else 0

    def orthonormal_basis(self) -> NDArray[np.float64]:
        r"""A ``(r c, rank)`` orthonormal basis of span(S): :math:`H_r\otimes H_c` (row-major cells)."""
        if not self.moves:
            return np.zeros((self.dimension, 0))
        return np.asarray(np.kron(helmert_basis(self.rows), helmert_basis(self.cols)), dtype=np.float64)

    def projector_exact(self) -> list[list[Fraction]]:
        r"""The projector :math:`C_r\otimes C_c` as exact rationals (row-major cells); small tables only."""
        if self.dimension > 400:
            raise InvalidArgument(f"projector_exact lists {self.dimension}^2 rationals; at most 400 cells.")

        def centring(n: int) -> list[list[Fraction]]:
            return [[Fraction(int(i == j)) - Fraction(1, n) for j in range(n)] for i in range(n)]

        cr, cc = centring(self.rows), centring(self.cols)
        c = self.cols
        d = self.dimension
        if not self.moves:
            return [[Fraction(0)] * d for _ in range(d)]
        return [[cr[i // c][j // c] * cc[i % c][j % c] for j in range(d)] for i in range(d)]

    @property
    def label(self) -> str:
        """What the norms describe, with the source."""
        what = "moves and 3-cycles" if self.cycles else "moves" if self.moves else "{0}"
        return (
            f"closed form for a {self.rows}x{self.cols} table under both one-way margins at radius "
            f"{self.radius} ({what}; {self.size} vectors, not listed) [CA24, Prop. 32, corrected]: a superset "
            "of S at the table, so the calibration is conservative"
        )


__all__ = ["TableSpaceNorms", "helmert_basis"]
