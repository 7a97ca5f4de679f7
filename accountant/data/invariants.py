"""Invariants: statistics of the confidential data that are published exactly.

Each invariant is a frozen description (house style R2) that can be turned into
its integer matrix over histogram cells (:meth:`matrix`), so that
``T(X) = A h(X)`` for the row-major histogram ``h``. All the count invariants
of Cho & Awan 2024 (Sec. 3.4), Gao et al. 2022 and Dharangutte et al. 2023
are of this form.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Union

import numpy as np
from numpy.typing import NDArray

from semidp.accountant.core.errors import InvalidArgument
from semidp.accountant.data.dataspace import DataSpace
from semidp.accountant.data.exact_matrices import invariant_int64


@dataclass(frozen=True, slots=True)
class NoInvariant:
    """Nothing is published exactly; ``D_t = D``."""

    kind = "none"

    def matrix(self, space: DataSpace) -> NDArray[np.int64]:
        """The empty ``0 x cells`` matrix."""
        return np.zeros((0, space.n_cells), dtype=np.int64)

    def describe(self) -> str:
        return "no invariant"


@dataclass(frozen=True, slots=True)
class Total:
    """The total number of records ``n`` is published exactly."""

    kind = "total"

    def matrix(self, space: DataSpace) -> NDArray[np.int64]:
        """One row of ones."""
        return np.ones((1, space.n_cells), dtype=np.int64)

    def describe(self) -> str:
        return "total count"


@dataclass(frozen=True, slots=True)
class Margins:
    """Margins (counts over feature subsets) published exactly.

    ``Margins((("state",),))`` publishes state totals; ``(("A",), ("B",))`` the
    one-way margins of a two-way table; a set with several features is a joint
    margin.
    """

    margins: tuple[tuple[str, ...], ...]
    """Each entry a set of feature names whose joint counts are published."""
    kind = "margins"

    def __post_init__(self) -> None:
        if not self.margins:
            raise InvalidArgument("Margins needs at least one margin (a list of feature names).")
        for m in self.margins:
            if not m or len(set(m)) != len(m):
                raise InvalidArgument(f"margin {list(m)!r} must be a non-empty list of distinct feature names.")

    def check(self, space: DataSpace) -> None:
        """Raise unless every named feature exists in ``space``."""
        for m in self.margins:
            for name in m:
                space.index(name)

    def matrix(self, space: DataSpace) -> NDArray[np.int64]:
        """Stacked indicator rows, one per level combination of each margin."""
        self.check(space)
        rows = []
        cells = np.arange(space.n_cells)
        coords = np.array(np.unravel_index(cells, space.shape))  # (p, cells)
        for m in self.margins:
            idx = [space.index(n) for n in m]
            sub_shape = tuple(space.shape[i] for i in idx)
            key = np.ravel_multi_index(tuple(coords[i] for i in idx), sub_shape)
            block = np.zeros((int(np.prod(sub_shape)), space.n_cells), dtype=np.int64)
            block[key, cells] = 1
            rows.append(block)
        return np.vstack(rows)

    def describe(self) -> str:
        return "margins " + ", ".join("(" + " x ".join(m) + ")" for m in self.margins)


@dataclass(frozen=True, slots=True)
class Linear:
    """A general integer linear invariant ``T(X) = A h(X)`` over histogram cells."""

    matrix_rows: tuple[tuple[int, ...], ...]
    """The rows of ``A`` (each of length ``cells``), integers. The spec loader divides each row by the gcd
    of its entries (:func:`accountant.data.exact_matrices.primitive_row`: the same constraint)."""
    kind = "linear"

    def matrix(self, space: DataSpace) -> NDArray[np.int64]:
        """``A`` as int64, its rows as given; refused (:class:`InvalidArgument` naming ``invariant.matrix[r][c]``)
        unless every entry is an integer and each row's absolute sum is at most 2**53
        (:data:`accountant.data.exact_matrices.ROW_VALUE_LIMIT`; the searches also check it times ``n``)."""
        return invariant_int64("invariant.matrix", self.matrix_rows, space.n_cells)

    def describe(self) -> str:
        return f"linear invariant ({len(self.matrix_rows)} rows)"


@dataclass(frozen=True, slots=True)
class Counting:
    """Counts over cell subsets published exactly (Dharangutte et al. 2023, Sec. 3)."""

    sets: tuple[tuple[int, ...], ...]
    """Each entry a tuple of cell indices whose total count is published."""
    kind = "counting"

    def matrix(self, space: DataSpace) -> NDArray[np.int64]:
        a = np.zeros((len(self.sets), space.n_cells), dtype=np.int64)
        for r, s in enumerate(self.sets):
            for c in s:
                if not (0 <= c < space.n_cells):
                    raise InvalidArgument(f"counting set {r} has cell {c}; cells are 0..{space.n_cells - 1}.")
                a[r, c] = 1
        return a

    def describe(self) -> str:
        return f"counting invariant ({len(self.sets)} sets)"


Invariant = Union[NoInvariant, Total, Margins, Linear, Counting]
