"""Privacy guarantees and what can be done with them: definitions, relations, conversions, composition.

* :mod:`~semidp.accountant.guarantees.definitions` -- the guarantee types (:class:`PureDP`, :class:`ApproxDP`,
  :class:`GDP`, :class:`ZCDP`, :class:`RDP`, :class:`TradeOff`), frozen values with their relation;
* :mod:`~semidp.accountant.guarantees.relations` -- neighbouring relations as values (house style R2);
* :mod:`~semidp.accountant.guarantees.conversions` (``<from>_to_<to>``) and
  :mod:`~semidp.accountant.guarantees.conversion_routes` (every route of each type);
* :mod:`~semidp.accountant.guarantees.composition` -- composition, mixes of definitions included;
* :mod:`~semidp.accountant.guarantees.semidp` -- what a DP guarantee becomes once an invariant is published
  [CA24, Prop. 15, Prop. 21];
* :mod:`~semidp.accountant.guarantees.claim_certificate` -- rigorous enclosures of privacy profiles.

Layers: imports :mod:`~semidp.accountant.core`, :mod:`~semidp.accountant.data`,
:mod:`~semidp.accountant.profiles` and :mod:`~semidp.accountant.pld`. The guarantee types are re-exported
here (``semidp.accountant.guarantees`` was their module before the subpackages).
"""

from semidp.accountant.guarantees.definitions import (
    GDP,
    RDP,
    ZCDP,
    ApproxDP,
    Guarantee,
    PureDP,
    TradeOff,
    with_relation,
)

__all__ = ["GDP", "RDP", "ZCDP", "ApproxDP", "Guarantee", "PureDP", "TradeOff", "with_relation"]
