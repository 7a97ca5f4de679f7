"""Neighbouring relations as first-class values (house style R2).

A guarantee always says *which* pairs of datasets it protects:

* :class:`Replace` -- bounded DP: datasets of the same size ``n`` at Hamming
  distance ``<= distance`` (replace-one when ``distance = 1``);
* :class:`AddRemove` -- unbounded DP: multisets at symmetric-difference
  distance ``<= distance``;
* :class:`Subspace` -- [GGY22, Def. 2.6]: induced subspace DP
  w.r.t. a linear invariant (not DP of the joint release);
* :class:`SemiAdjacent` -- [CA24, Def. 12]: pairs of
  invariant-conforming datasets ``X, X' in D_t`` at distance ``<= radius``
  under ``base``; ``radius`` is the semi-adjacent parameter ``a(t)`` (Def. 13)
  or a multiple of it after group privacy.

``group(k)`` returns the relation of the group-privacy statement of size ``k``
(distance multiplied by ``k``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Union

from semidp.accountant.core.arguments import check_int
from semidp.accountant.core.errors import InvalidArgument, RelationMismatch
from semidp.accountant.data.invariants import Invariant


@dataclass(frozen=True, slots=True)
class Replace:
    """Replace-one (bounded) adjacency, grown to Hamming distance ``distance``."""

    distance: int = 1
    """Largest Hamming distance covered (1 = ordinary replace-one)."""

    def __post_init__(self) -> None:
        check_int("distance", self.distance, minimum=1)

    def group(self, k: int) -> "Replace":
        """Pairs at distance ``<= k * distance``."""
        check_int("k", k, minimum=1)
        return Replace(self.distance * k)

    @property
    def spec_name(self) -> str:
        return "replace-one"

    def describe(self) -> str:
        return "replace-one" if self.distance == 1 else f"replace, Hamming distance <= {self.distance}"


@dataclass(frozen=True, slots=True)
class AddRemove:
    """Add/remove-one (unbounded) adjacency, grown to distance ``distance``."""

    distance: int = 1
    """Largest symmetric-difference distance covered."""

    def __post_init__(self) -> None:
        check_int("distance", self.distance, minimum=1)

    def group(self, k: int) -> "AddRemove":
        """Pairs at distance ``<= k * distance``."""
        check_int("k", k, minimum=1)
        return AddRemove(self.distance * k)

    @property
    def spec_name(self) -> str:
        return "add-remove"

    def describe(self) -> str:
        return "add-remove" if self.distance == 1 else f"add-remove, distance <= {self.distance}"


BaseRelation = Union[Replace, AddRemove]


@dataclass(frozen=True, slots=True)
class SemiAdjacent:
    """Invariant-conforming datasets at ``base`` distance ``<= radius`` [CA24, Def. 12].

    ``radius = 0`` means ``D_t`` is a single dataset: no pair is protected, and
    none needs to be.
    """

    base: BaseRelation
    """The metric on datasets (its ``distance`` must be 1)."""
    invariant: Invariant
    """What is published exactly."""
    radius: int
    """Distance bound inside ``D_t`` (the semi-adjacent parameter a(t), or k*a(t))."""

    def __post_init__(self) -> None:
        check_int("radius", self.radius, minimum=0)
        if self.base.distance != 1:
            raise RelationMismatch(self.base, Replace(), what="use as a semi-adjacency base")

    def group(self, k: int) -> "SemiAdjacent":
        """Pairs in ``D_t`` at distance ``<= k * radius``."""
        check_int("k", k, minimum=1)
        return SemiAdjacent(self.base, self.invariant, self.radius * k)

    @property
    def spec_name(self) -> str:
        return "semi-adjacent"

    def describe(self) -> str:
        return (
            f"semi-adjacent: {self.base.spec_name} datasets sharing the {self.invariant.describe()}, "
            f"distance <= {self.radius}"
        )


@dataclass(frozen=True, slots=True)
class Subspace:
    """Induced subspace DP w.r.t. a linear invariant ``C`` ([GGY22, Def. 2.6]).

    The guarantee holds for the release projected onto ``ker C`` on the pairs of
    ``base``; the components in ``row C`` are published exactly, so it is **not**
    DP of the joint release. A distinct relation value, so guarantees under it
    never compose or compare with ordinary DP guarantees by accident.
    """

    base: BaseRelation
    """The neighbouring relation of the underlying subspace-DP statement."""
    constraint: tuple[tuple[float, ...], ...]
    """The rows of ``C`` (on the query output)."""

    def group(self, k: int) -> "Subspace":
        """The same subspace statement on pairs at ``k`` times the base distance."""
        check_int("k", k, minimum=1)
        return Subspace(self.base.group(k), self.constraint)

    @property
    def spec_name(self) -> str:
        return "subspace"

    def describe(self) -> str:
        return f"induced subspace DP w.r.t. a {len(self.constraint)}-row linear invariant, on {self.base.describe()}"


@dataclass(frozen=True, slots=True)
class IntegerSubspace:
    r"""Equivalent datasets under counting invariants, at ``norm`` distance ``<= distance`` (DGGY 2023, Def 2).

    Dharangutte, Gao, Gong & Yu state :math:`(\varepsilon,\delta)`-DP *on* :math:`\equiv_{\mathcal A}`
    in smooth form: for :math:`x\equiv x'` the loss scales with :math:`\|x-x'\|`
    (:math:`\ell_1` or :math:`\ell_2`, the norm of the mechanism). A guarantee on this
    relation with ``distance = 1`` is their per-unit-norm :math:`\varepsilon`; one person
    moving between two cells is at :math:`\ell_1` distance 2 (:math:`\ell_2`: :math:`\sqrt2`).
    A distinct relation value: such guarantees never compose or compare with DP
    on datasets by accident.
    """

    norm: str
    """``"l1"`` or ``"l2"``: the norm on histograms."""
    constraint: tuple[tuple[int, ...], ...]
    """The rows of the integer invariant matrix A (equivalence: same A x)."""
    distance: float = 1.0
    """Norm distance bound between the equivalent histograms."""

    def __post_init__(self) -> None:
        if self.norm not in ("l1", "l2"):
            raise InvalidArgument(f"norm={self.norm!r}: expected 'l1' or 'l2'.")
        if not self.distance > 0:
            raise InvalidArgument(f"distance={self.distance!r}: expected > 0.")

    def group(self, k: int) -> "IntegerSubspace":
        """Equivalent pairs at ``k`` times the distance."""
        check_int("k", k, minimum=1)
        return IntegerSubspace(self.norm, self.constraint, self.distance * k)

    @property
    def spec_name(self) -> str:
        return "integer-subspace"

    def describe(self) -> str:
        return (
            f"integer subspace DP: histograms with the same {len(self.constraint)} counting totals, "
            f"{self.norm} distance <= {self.distance:g}"
        )


Relation = Union[Replace, AddRemove, SemiAdjacent, Subspace, IntegerSubspace]


def check_same_relation(left: Relation, right: Relation) -> None:
    """Raise :class:`RelationMismatch` naming both relations unless they are equal."""
    if left != right:
        raise RelationMismatch(left, right)
