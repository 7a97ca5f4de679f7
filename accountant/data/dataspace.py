"""Finite data spaces: a product of named categorical features.

A record is one level per feature; a dataset of ``n`` records is summarised by
its histogram over the product of levels, in **row-major** order (the last
feature varies fastest), which is the cell order used everywhere in semidp
(specs, reports, samples files). Levels are 0-based in code; specs and the
papers count from 1.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

from semidp.accountant.core.arguments import check_int
from semidp.accountant.core.errors import InvalidArgument


@dataclass(frozen=True, slots=True)
class Feature:
    """One categorical feature of a record."""

    name: str
    """Feature name, unique within a data space."""
    levels: int
    """Number of levels (``>= 1``)."""

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise InvalidArgument(f"Feature name={self.name!r} must be a non-empty string.")
        check_int(f"levels of feature {self.name!r}", self.levels, minimum=1)


@dataclass(frozen=True, slots=True)
class DataSpace:
    """The data universe ``X = V_1 x ... x V_p`` of records [CA24, Sec. 3.4].

    Examples
    --------
    >>> s = DataSpace.of(("A", 2), ("B", 3))
    >>> s.n_cells, s.shape
    (6, (2, 3))
    >>> s.cell_index((1, 2))
    5
    >>> s.record(5)
    (1, 2)
    """

    features: tuple[Feature, ...]
    """The features, in the order that defines row-major cell order."""

    def __post_init__(self) -> None:
        if not self.features:
            raise InvalidArgument("A data space needs at least one feature.")
        names = [f.name for f in self.features]
        dup = sorted({n for n in names if names.count(n) > 1})
        if dup:
            raise InvalidArgument(f"Feature names must be unique; repeated: {dup}.")

    @classmethod
    def of(cls, *features: tuple[str, int]) -> "DataSpace":
        """Build from ``(name, levels)`` pairs."""
        return cls(tuple(Feature(n, k) for n, k in features))

    @property
    def shape(self) -> tuple[int, ...]:
        """Levels per feature."""
        return tuple(f.levels for f in self.features)

    @property
    def n_cells(self) -> int:
        """Number of cells (records types) ``prod_j K_j``."""
        return math.prod(self.shape)

    @property
    def names(self) -> tuple[str, ...]:
        """Feature names in order."""
        return tuple(f.name for f in self.features)

    def index(self, name: str) -> int:
        """Position of the feature called ``name`` (error lists the known names)."""
        try:
            return self.names.index(name)
        except ValueError:
            raise InvalidArgument(f"Unknown feature {name!r}; the data space has {list(self.names)}.") from None

    def cell_index(self, record: Sequence[int]) -> int:
        """Row-major index of a record given as 0-based levels."""
        if len(record) != len(self.features):
            raise InvalidArgument(f"record={tuple(record)!r} has {len(record)} values; expected {len(self.features)}.")
        idx = 0
        for value, f in zip(record, self.features):
            if not (0 <= int(value) < f.levels):
                raise InvalidArgument(f"record value {value!r} for feature {f.name!r} must be in [0, {f.levels}).")
            idx = idx * f.levels + int(value)
        return idx

    def record(self, cell: int) -> tuple[int, ...]:
        """Inverse of :meth:`cell_index`."""
        if not (0 <= cell < self.n_cells):
            raise InvalidArgument(f"cell={cell!r} must be in [0, {self.n_cells}).")
        out = []
        for f in reversed(self.features):
            cell, r = divmod(cell, f.levels)
            out.append(r)
        return tuple(reversed(out))
