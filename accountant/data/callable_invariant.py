"""An invariant given as an arbitrary Python function of the histogram (small spaces only).

The count invariants of :mod:`accountant.data.invariants` are linear maps of the
row-major histogram and have a matrix. Some published statistics are not
linear (a maximum, a median, "is cell 3 empty?"). :class:`CallableInvariant`
wraps any function of the histogram; because it sees only the histogram it is
permutation-invariant, which is what the histogram reduction of Cho & Awan
2024, Def. 13 needs (see ``accountant/combinatorics/semiadjacent_search.md``). Nothing about
the function is known to the searches, so its fiber is found by enumerating
every histogram with ``n`` records and is refused above a size limit.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass

import numpy as np

from semidp.accountant.core.errors import InvalidArgument


def freeze_value(value: object) -> Hashable:
    """Return a hashable, comparable form of an invariant value.

    numpy arrays and lists become (nested) tuples of Python scalars; numpy
    scalars become Python scalars; anything else must already be hashable.

    Examples
    --------
    >>> freeze_value(np.array([1, 2]))
    (1, 2)
    >>> freeze_value([[1], [2, 3]])
    ((1,), (2, 3))
    """
    if isinstance(value, np.ndarray):
        return freeze_value(value.tolist())
    if isinstance(value, np.generic):
        return freeze_value(value.item())
    if isinstance(value, (list, tuple)):
        return tuple(freeze_value(v) for v in value)
    try:
        hash(value)
    except TypeError:
        raise InvalidArgument(
            f"invariant value {value!r} of type {type(value).__name__} is not hashable; "
            "return a number, a tuple or a numpy array."
        ) from None
    return value


@dataclass(frozen=True, slots=True)
class CallableInvariant:
    """A statistic ``T(X) = func(h(X))`` of the histogram, published exactly.

    Examples
    --------
    >>> inv = CallableInvariant(lambda h: max(h), name="largest cell")
    >>> inv.value((3, 1, 0))
    3
    >>> inv.describe()
    "callable invariant 'largest cell'"
    """

    func: Callable[[tuple[int, ...]], object]
    """Maps the row-major histogram (a tuple of ints) to the published value."""
    name: str = "callable"
    """Human-readable name used in reports and errors."""
    kind = "callable"

    def __post_init__(self) -> None:
        if not callable(self.func):
            raise InvalidArgument(f"CallableInvariant func={self.func!r} must be callable.")
        if not isinstance(self.name, str) or not self.name:
            raise InvalidArgument(f"CallableInvariant name={self.name!r} must be a non-empty string.")

    def value(self, histogram: Sequence[int]) -> Hashable:
        """The published value for ``histogram`` (made hashable by :func:`freeze_value`)."""
        return freeze_value(self.func(tuple(int(c) for c in histogram)))

    def describe(self) -> str:
        """One-line description for reports."""
        return f"callable invariant {self.name!r}"
