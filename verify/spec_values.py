"""Spec sections as :mod:`accountant` values: the data space, relation, invariant and guarantees (R3).

Describe first, then account: these functions turn the loaded spec into the
values the accountant works on, and nothing else.
"""

from __future__ import annotations

from semidp.accountant.core.errors import UnsupportedRelease
from semidp.accountant.data.dataspace import DataSpace, Feature
from semidp.accountant.data.exact_matrices import primitive_row
from semidp.accountant.data.invariants import Counting, Invariant, Linear, Margins, NoInvariant, Total
from semidp.accountant.guarantees.composition import compose, compose_as_zcdp, compose_recorded, compose_tradeoffs
from semidp.accountant.guarantees.definitions import GDP, RDP, ZCDP, ApproxDP, Guarantee, PureDP, TradeOff
from semidp.accountant.guarantees.relations import AddRemove, BaseRelation, Relation, Replace
from semidp.verify.spec import GuaranteeSpec, Spec


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


def guarantee_of(g: GuaranteeSpec, relation: Relation) -> Guarantee:
    """A spec guarantee table as a guarantee value (floats; exact values stay in the spec)."""
    if g.zcdp is not None:
        return ZCDP(float(g.zcdp), relation)
    if g.mu is not None:
        return GDP(float(g.mu), relation)
    if g.rdp is not None:
        return RDP((float(g.rdp.alpha),), (float(g.rdp.epsilon),), relation)
    if g.epsilon is None:
        raise UnsupportedRelease("a guarantee table needs one of epsilon, mu, zcdp, rdp")
    if g.delta is None or g.delta == 0:
        return PureDP(float(g.epsilon), relation)
    return ApproxDP(float(g.epsilon), float(g.delta), relation)


def compose_parts(parts: list[Guarantee]) -> Guarantee:
    """The advertised guarantee of several released parts: closed form if one definition (all pure or all
    approximate DP keep their parts, for the zCDP sum and the optimal composition of identical parts), else
    numerical f-DP (pure/approx/GDP) or zCDP (pure/GDP/zCDP) composition."""
    kinds = {type(p) for p in parts}
    if kinds == {PureDP} or kinds == {ApproxDP}:
        return compose_recorded(parts)  # type: ignore[arg-type]
    if len(kinds) == 1 and RDP not in kinds:
        return compose(parts)
    if kinds <= {PureDP, ApproxDP, GDP, TradeOff}:
        return compose_tradeoffs(parts)  # type: ignore[arg-type]
    if kinds <= {PureDP, GDP, ZCDP}:
        return compose_as_zcdp(parts)  # type: ignore[arg-type]
    raise UnsupportedRelease(
        f"cannot compose components of kinds {sorted(k.__name__ for k in kinds)}: mix pure/approx/GDP "
        "(f-DP composition) or pure/GDP/zCDP (zCDP composition)."
    )


def guarantee_spec_json(g: GuaranteeSpec) -> dict[str, object]:
    """A spec guarantee table as the report's JSON (floats)."""
    out: dict[str, object] = {}
    for k in ("epsilon", "delta", "mu", "zcdp"):
        v = getattr(g, k)
        if v is not None:
            out[k] = float(v)
    if g.rdp is not None:
        out["rdp"] = {"alpha": float(g.rdp.alpha), "epsilon": float(g.rdp.epsilon)}
    return out


__all__ = ["compose_parts", "guarantee_of", "guarantee_spec_json", "invariant_of", "relation_of", "space_of"]
