"""Spec sections as :mod:`accountant` values: the data space, relation, invariant and guarantees (R3).

Describe first, then account: these functions turn the loaded spec into the
values the accountant works on, and nothing else.
"""

from __future__ import annotations

import dataclasses

from semidp.accountant.core.errors import UnsupportedRelease
from semidp.accountant.data.dataspace import DataSpace, Feature
from semidp.accountant.data.exact_matrices import primitive_row
from semidp.accountant.data.invariants import Counting, Invariant, Linear, Margins, NoInvariant, Total
from semidp.accountant.guarantees.definitions import GDP, RDP, ZCDP, ApproxDP, Guarantee, PureDP
from semidp.accountant.guarantees.relations import AddRemove, BaseRelation, Relation, Replace
from semidp.accountant.releases.accounting import composed_guarantee
from semidp.verify.spec import (
    EpsilonGuarantee,
    GuaranteeForm,
    GuaranteeSpec,
    MuGuarantee,
    RdpGuarantee,
    Spec,
    ZcdpGuarantee,
)


def space_of(spec: Spec) -> DataSpace:
    """The data space of ``[data] features``."""
    return DataSpace(tuple(Feature(f.name, f.levels) for f in spec.data.features))


def relation_of(spec: Spec) -> BaseRelation:
    """``Replace()`` for ``replace-one``, ``AddRemove()`` for ``add-remove``."""
    return Replace() if spec.data.adjacency == "replace-one" else AddRemove()


def invariant_of(spec: Spec) -> Invariant:
    """The invariant of ``[invariant]`` (the loader checked that each kind has its key); the rows of a linear
    invariant divided by their gcd (the same conforming datasets)."""
    inv = spec.invariant
    if inv.kind == "none":
        return NoInvariant()
    if inv.kind == "total":
        return Total()
    if inv.kind == "margins" and inv.margins is not None:
        return Margins(tuple(tuple(m) for m in inv.margins))
    if inv.kind == "linear" and inv.matrix is not None:
        # Each row divided by the gcd of its entries: the same constraint, in the exact range the searches,
        # solvers and Z3 use (accountant.data.exact_matrices; the loader refused rows still beyond it).
        return Linear(tuple(primitive_row(r) for r in inv.matrix))
    if inv.kind == "counting" and inv.sets is not None:
        return Counting(tuple(tuple(s) for s in inv.sets))
    raise UnsupportedRelease(f"{spec.path}: invariant.kind = {inv.kind!r} lacks its key")


def guarantee_of(g: GuaranteeForm, relation: Relation) -> Guarantee:
    """A spec guarantee table (one form of :data:`~verify.spec.GuaranteeSpec`) as a guarantee value (floats;
    exact values stay in the spec)."""
    if isinstance(g, ZcdpGuarantee):
        return ZCDP(float(g.zcdp), relation)
    if isinstance(g, MuGuarantee):
        return GDP(float(g.mu), relation)
    if isinstance(g, RdpGuarantee):
        return RDP((float(g.rdp.alpha),), (float(g.rdp.epsilon),), relation)
    if not isinstance(g, EpsilonGuarantee):
        raise UnsupportedRelease(f"{type(g).__name__} is not a form of a guarantee table")
    if g.delta is None or g.delta == 0:
        return PureDP(float(g.epsilon), relation)
    return ApproxDP(float(g.epsilon), float(g.delta), relation)


def compose_parts(parts: list[Guarantee]) -> Guarantee:
    """The advertised guarantee of several released parts
    (:func:`accountant.releases.accounting.composed_guarantee`, the one definition)."""
    return composed_guarantee(parts)


def guarantee_spec_json(g: GuaranteeSpec) -> dict[str, object]:
    """A spec guarantee table as the report's JSON (floats): its form's keys."""
    if isinstance(g, RdpGuarantee):
        return {"rdp": {"alpha": float(g.rdp.alpha), "epsilon": float(g.rdp.epsilon)}}
    return {f.name: float(v) for f in dataclasses.fields(g) if (v := getattr(g, f.name)) is not None}


__all__ = ["compose_parts", "guarantee_of", "guarantee_spec_json", "invariant_of", "relation_of", "space_of"]
