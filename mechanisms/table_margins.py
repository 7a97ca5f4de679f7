"""The margins of a 2x2 table that the Semi-DP UMPU odds-ratio test conditions on [CA24, Sec. 5.3, Thm.
37], and confidence intervals of the test.
"""

from __future__ import annotations

import numbers
from collections.abc import Iterable
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike

from semidp.accountant.core.errors import InvalidArgument
from semidp.accountant.data.invariants import Margins
from semidp.accountant.guarantees.relations import Replace, SemiAdjacent
from semidp.mechanisms.fnch import FisherNoncentralHypergeometric

#: Semi-adjacency radius of a 2x2 table with invariant one-way margins [CA24, Sec. 5; T-A3..T-A5].
SEMI_ADJACENT_RADIUS = 3


@dataclass(frozen=True, slots=True)
class TableMargins:
    r"""The invariant one-way margins of a :math:`2\times2` table.

    Examples
    --------
    >>> t = TableMargins.from_table([[3, 2], [1, 4]])
    >>> t.rows, t.cols, t.support()
    ((5, 5), (4, 6), (0, 4))
    >>> t.relation.radius
    3
    """

    rows: tuple[int, int]
    """Row totals :math:`(n_{1\\cdot}, n_{2\\cdot})`."""
    cols: tuple[int, int]
    """Column totals :math:`(n_{\\cdot1}, n_{\\cdot2})`; must add up to the same total."""
    features: tuple[str, str] = ("A", "B")
    """Names of the row and column features (used in the invariant of the relation)."""

    def __post_init__(self) -> None:
        def ints(name: str, v: object) -> tuple[int, int]:
            if isinstance(v, (str, bytes)) or not isinstance(v, Iterable):
                raise InvalidArgument(f"{name}={v!r} must be a pair of counts.")
            items = tuple(v)
            if len(items) != 2:
                raise InvalidArgument(f"{name}={v!r} must be a pair of counts.")
            out: list[int] = []
            for i, x in enumerate(items):
                if isinstance(x, (bool, np.bool_)) or not isinstance(x, numbers.Integral) or x < 0:
                    raise InvalidArgument(f"{name}[{i}]={x!r} must be a non-negative integer.")
                out.append(int(x))
            return out[0], out[1]

        r = ints("rows", self.rows)
        c = ints("cols", self.cols)
        if sum(r) != sum(c):
            raise InvalidArgument(f"rows {r} and cols {c} must have the same total (got {sum(r)} and {sum(c)}).")
        if sum(r) == 0:
            raise InvalidArgument("the table is empty (all margins are 0).")
        if len(self.features) != 2 or len(set(self.features)) != 2:
            raise InvalidArgument(f"features={self.features!r} must be two distinct names.")
        object.__setattr__(self, "rows", r)
        object.__setattr__(self, "cols", c)
        object.__setattr__(self, "features", (str(self.features[0]), str(self.features[1])))

    @classmethod
    def from_table(cls, table: ArrayLike, features: tuple[str, str] = ("A", "B")) -> TableMargins:
        """Margins of a confidential 2x2 table of non-negative integer counts."""
        t = np.asarray(table)
        if t.shape != (2, 2) or t.dtype.kind not in "iu" and not (t.dtype.kind == "f" and np.all(t == np.floor(t))):
            raise InvalidArgument(f"table={table!r} must be a 2x2 array of integer counts.")
        if np.any(t < 0):
            raise InvalidArgument(f"table={table!r} has negative counts.")
        ti = t.astype(np.int64)
        return cls((int(ti[0].sum()), int(ti[1].sum())), (int(ti[:, 0].sum()), int(ti[:, 1].sum())), features)

    @property
    def total(self) -> int:
        """Number of records ``n``."""
        return self.rows[0] + self.rows[1]

    def support(self) -> tuple[int, int]:
        r"""``(L, U)`` of :math:`X_{11}` given the margins."""
        return max(0, self.cols[0] - self.rows[1]), min(self.rows[0], self.cols[0])

    def null(self, theta: float) -> FisherNoncentralHypergeometric:
        r"""The conditional law of :math:`X_{11}` at odds ratio ``theta``."""
        return FisherNoncentralHypergeometric(self.rows[0], self.rows[1], self.cols[0], theta)

    @property
    def invariant(self) -> Margins:
        """The invariant: both one-way margins."""
        return Margins(((self.features[0],), (self.features[1],)))

    @property
    def relation(self) -> SemiAdjacent:
        r"""``SemiAdjacent(Replace(), margins, 3)``: the relation :math:`(\mathcal D_t, A_3)`."""
        return SemiAdjacent(Replace(), self.invariant, SEMI_ADJACENT_RADIUS)


class ConfidenceInterval(NamedTuple):
    """A confidence interval for the odds ratio (scipy style)."""

    low: float
    high: float
