r"""Semi-DP transforms: what a DP guarantee becomes once an invariant is published.

Cho & Awan 2024 ("Formal Privacy Guarantees with Invariant Statistics",
arXiv:2410.17468v1):

* :func:`semi_dp` -- Prop. 15: if :math:`M` is :math:`f`-DP on
  :math:`(\mathcal D, A_1)`, the joint release :math:`(T(X), M(X))` is
  :math:`f^{\circ a(t)}`-DP on :math:`(\mathcal D_t, A_{a(t)})`.
* :func:`semi_dp_composition` -- Prop. 21: Semi-DP first
  (:math:`\bigotimes_i f_i^{\circ a}`) and composition first
  (:math:`(\bigotimes_i f_i)^{\circ a}`), both reported; the first is never
  weaker (Lemma 41, [AD22, Prop. A.7]).
* :func:`joint_release_dp` -- the plain-DP verdict: a joint release whose
  invariant differs between some adjacent datasets satisfies no finite
  (epsilon, delta < 1)-DP guarantee.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from semidp.accountant.core.arguments import check_int
from semidp.accountant.core.errors import InvalidArgument
from semidp.accountant.data.dataspace import DataSpace
from semidp.accountant.data.invariants import Invariant
from semidp.accountant.guarantees.composition import compose, compose_recorded, compose_tradeoffs
from semidp.accountant.guarantees.definitions import GDP, RDP, ZCDP, ApproxDP, Guarantee, PureDP, TradeOff
from semidp.accountant.guarantees.relations import AddRemove, Relation, Replace, SemiAdjacent


def _perfect(g: Guarantee) -> Guarantee:
    """The same definition at its zero-loss value (no pair can be told apart)."""
    if isinstance(g, PureDP):
        return dataclasses.replace(g, epsilon=0.0)
    if isinstance(g, ApproxDP):
        return dataclasses.replace(g, epsilon=0.0, delta=0.0)
    if isinstance(g, GDP):
        return dataclasses.replace(g, mu=0.0)
    if isinstance(g, ZCDP):
        return dataclasses.replace(g, rho=0.0)
    if isinstance(g, RDP):
        return dataclasses.replace(g, epsilons=tuple(0.0 for _ in g.orders))
    from semidp.accountant.profiles.tradeoff import TradeoffCurve

    return dataclasses.replace(g, curve=TradeoffCurve.identity())


def semi_dp(g: Guarantee, invariant: Invariant, radius: int) -> Guarantee:
    r"""[CA24, Prop. 15]: the Semi-DP guarantee of a DP mechanism released with an invariant.

    Parameters
    ----------
    g:
        The mechanism's guarantee on :math:`(\mathcal D, A_1)`; its relation
        must be ``Replace()`` or ``AddRemove()`` (distance 1).
    invariant:
        What is published exactly.
    radius:
        The semi-adjacent parameter :math:`a(t)` (Def. 13), or any upper bound
        of it (a larger radius gives a valid, weaker statement: Prop. 11).

    Returns
    -------
    Guarantee
        ``g.group(radius)`` under ``SemiAdjacent(g.relation, invariant, radius)``.
        For ``radius = 0`` (``D_t`` a single dataset) the zero-loss guarantee.

    Examples
    --------
    >>> from semidp.accountant.data.invariants import Margins
    >>> semi_dp(ZCDP(2.56), Margins((("state",),)), 2).rho    # [CA24, Sec. 6]
    10.24
    """
    k = check_int("radius", radius, minimum=0)
    base = g.relation
    if not isinstance(base, (Replace, AddRemove)) or base.distance != 1:
        raise InvalidArgument(
            f"semi_dp needs a guarantee on adjacent datasets (Replace() or AddRemove()); got {base!r}."
        )
    rel = SemiAdjacent(base, invariant, k)
    if k == 0:
        return dataclasses.replace(_perfect(g), relation=rel)
    return dataclasses.replace(g.group(k), relation=rel)


@dataclass(frozen=True, slots=True)
class Prop21Result:
    """Both Semi-DP guarantees of a composition [CA24, Prop. 21]."""

    semi_first: Guarantee
    r""":math:`\bigotimes_i f_i^{\circ a}`: group each part, then compose (never weaker)."""
    composition_first: Guarantee
    r""":math:`(\bigotimes_i f_i)^{\circ a}`: compose, then group."""


def semi_dp_composition(parts: Sequence[Guarantee], invariant: Invariant, radius: int) -> Prop21Result:
    r"""[CA24, Prop. 21]: Semi-DP of :math:`(T, M_1, \dots, M_k)`, both orders.

    Parts of one closed-form definition compose in closed form; mixes of
    ``GDP``/``PureDP``/``ApproxDP``/``TradeOff`` compose numerically
    (:func:`accountant.guarantees.composition.compose_tradeoffs`).

    Examples
    --------
    >>> from semidp.accountant.data.invariants import Total
    >>> r = semi_dp_composition([GDP(3.0), GDP(4.0)], Total(), 2)
    >>> r.semi_first.mu, r.composition_first.mu      # equal for GDP: a*sqrt(sum mu^2)
    (10.0, 10.0)
    """
    if not parts:
        raise InvalidArgument("semi_dp_composition needs at least one part.")
    same_kind = len({type(p) for p in parts}) == 1 and not isinstance(parts[0], TradeOff)

    def combine(gs: Sequence[Guarantee]) -> Guarantee:
        kinds = {type(g) for g in gs}
        if kinds == {PureDP} or kinds == {ApproxDP}:  # keep the parts: zCDP sum, optimal composition [KOV15]
            return compose_recorded(gs)  # type: ignore[arg-type]
        return compose(gs) if same_kind else compose_tradeoffs(gs)  # type: ignore[arg-type]

    first = combine([semi_dp(p, invariant, radius) for p in parts])
    second = semi_dp(combine(parts), invariant, radius)
    return Prop21Result(semi_first=first, composition_first=second)


@dataclass(frozen=True, slots=True)
class NoFiniteGuarantee:
    """The joint release satisfies no (epsilon, delta)-DP with delta < 1 (epsilon is infinite)."""

    reason: str
    """Why: names an adjacent pair whose invariant values differ."""
    relation: Relation
    """The relation under which the verdict holds."""


def joint_release_dp(g: Guarantee, invariant: Invariant, space: DataSpace) -> Guarantee | NoFiniteGuarantee:
    r"""Plain-DP guarantee of the joint release :math:`(T(X), M(X))` on :math:`(\mathcal D, A_1)`.

    If :math:`T` takes the same value on every adjacent pair, publishing it
    reveals nothing and the joint release keeps ``g``. Otherwise some adjacent
    :math:`X, X'` have :math:`T(X)\neq T(X')`: the two output distributions are
    mutually singular, the tradeoff function is 0 and no
    :math:`(\varepsilon,\delta)` with :math:`\delta<1` holds (Cho & Awan 2024,
    Sec. 3, discussion of Def. 10).

    For ``T(X) = A h(X)``: under replace-one the adjacent differences of
    histograms are :math:`e_a - e_b`, so :math:`T` is constant on adjacent pairs
    iff all columns of ``A`` are equal; under add/remove they are :math:`\pm e_a`,
    so iff ``A = 0``.
    """
    a = invariant.matrix(space)
    rel = g.relation
    if isinstance(rel, Replace):
        differs = np.nonzero(np.any(a != a[:, :1], axis=0))[0] if a.size else np.array([], int)
        if differs.size:
            c = int(differs[0])
            return NoFiniteGuarantee(
                f"replacing a record in cell {space.record(0)} by one in cell {space.record(c)} "
                f"changes the published {invariant.describe()}, so the adjacent datasets are "
                "told apart with certainty",
                rel,
            )
    elif isinstance(rel, AddRemove):
        nz = np.nonzero(np.any(a != 0, axis=0))[0] if a.size else np.array([], int)
        if nz.size:
            c = int(nz[0])
            return NoFiniteGuarantee(
                f"adding a record in cell {space.record(c)} changes the published "
                f"{invariant.describe()}, so the adjacent datasets are told apart with certainty",
                rel,
            )
    else:
        raise InvalidArgument(f"joint_release_dp needs Replace() or AddRemove(); got {rel!r}.")
    return g
