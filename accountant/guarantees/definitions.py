r"""Privacy guarantees as frozen values with a small algebra (house style R1).

One class per definition, each carrying its neighbouring relation:

==============  ===========================================  =====================
class           definition                                   reference
==============  ===========================================  =====================
``PureDP``      :math:`\varepsilon`-DP                        [DMNS06]
``ApproxDP``    :math:`(\varepsilon,\delta)`-DP               [DKMMN06]
``GDP``         :math:`\mu`-GDP, i.e. :math:`G_\mu`-DP        [DRS22, Def. 2.6]
``ZCDP``        :math:`\rho`-zCDP                             [BS16, Def. 1.1]
``RDP``         :math:`(\alpha,\varepsilon(\alpha))`-RDP      [Mir17, Def. 4]
``TradeOff``    :math:`f`-DP (piecewise-linear lower bound)   [DRS22, Def. 2.3]
==============  ===========================================  =====================

Every value supports ``compose`` (same class, same relation; mixes go through
:mod:`accountant.guarantees.composition`), ``group(k)`` (group privacy: the guarantee for
pairs at distance ``<= k``) and ``dominates`` ("at least as private as", same
relation). Numbers that bound privacy loss are rounded **up** (house style R6).
Conversions between classes are free functions in
:mod:`accountant.guarantees.conversions`, never methods.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction as Q
from typing import TYPE_CHECKING, Union

from semidp.accountant.core.arguments import check_in_interval, check_int, check_nonnegative
from semidp.accountant.core.directed import MP, sqrt_up, up, up_exact
from semidp.accountant.core.errors import InvalidArgument, UnsupportedRelease
from semidp.accountant.guarantees.relations import Relation, Replace, check_same_relation

if TYPE_CHECKING:
    from semidp.accountant.profiles.tradeoff import TradeoffCurve


def _scaled_relation(relation: Relation, k: int) -> Relation:
    """The relation covering pairs at distance ``<= k`` (``k >= 1``)."""
    return relation.group(k)


@dataclass(frozen=True, slots=True)
class PureDP:
    r""":math:`\varepsilon`-DP with respect to ``relation``.

    Examples
    --------
    >>> PureDP(0.5).compose(PureDP(1.0))
    PureDP(epsilon=1.5, relation=Replace(distance=1))
    >>> PureDP(0.5).group(3)
    PureDP(epsilon=1.5, relation=Replace(distance=3))
    """

    epsilon: float
    """Privacy-loss bound, ``>= 0``."""
    relation: Relation = field(default_factory=Replace)
    """Pairs of datasets the guarantee covers."""

    def __post_init__(self) -> None:
        check_nonnegative("epsilon", self.epsilon)

    def compose(self, other: "PureDP") -> "PureDP":
        """Basic composition: epsilons add [DR14, Thm. 3.16]; rounded up."""
        _check_type(self, other)
        check_same_relation(self.relation, other.relation)
        return PureDP(up_exact(Q(self.epsilon) + Q(other.epsilon)), self.relation)

    def group(self, k: int) -> "PureDP":
        """Group privacy of size ``k``: ``k * epsilon`` [DR14, Thm. 2.2]."""
        check_int("k", k, minimum=1)
        return PureDP(up_exact(k * Q(self.epsilon)), _scaled_relation(self.relation, k))

    def dominates(self, other: "PureDP") -> bool:
        """True if ``self`` is at least as private as ``other`` (same relation)."""
        _check_type(self, other)
        return self.relation == other.relation and self.epsilon <= other.epsilon


@dataclass(frozen=True, slots=True)
class ApproxDP:
    r""":math:`(\varepsilon,\delta)`-DP with respect to ``relation``.

    Examples
    --------
    >>> g = ApproxDP(1.0, 1e-6).group(2)
    >>> g.epsilon, round(g.delta / 1e-6, 6)    # delta * (1 + e^1)
    (2.0, 3.718282)
    """

    epsilon: float
    """Privacy-loss bound, ``>= 0``."""
    delta: float
    """Failure probability, in ``[0, 1]``."""
    relation: Relation = field(default_factory=Replace)
    """Pairs of datasets the guarantee covers."""

    def __post_init__(self) -> None:
        check_nonnegative("epsilon", self.epsilon)
        check_in_interval("delta", self.delta, 0.0, 1.0)

    def compose(self, other: "ApproxDP") -> "ApproxDP":
        """Basic composition: epsilons and deltas add [DR14, Thm. 3.16]; rounded up.

        For tight composition use :func:`accountant.guarantees.composition.compose_tradeoffs`.
        """
        _check_type(self, other)
        check_same_relation(self.relation, other.relation)
        eps = up_exact(Q(self.epsilon) + Q(other.epsilon))
        delta = min(1.0, up_exact(Q(self.delta) + Q(other.delta)))
        return ApproxDP(eps, delta, self.relation)

    def group(self, k: int) -> "ApproxDP":
        r"""Group privacy: :math:`(k\varepsilon,\ \delta\sum_{i=0}^{k-1}e^{i\varepsilon})`.

        Chaining :math:`P_0(S)\le e^\varepsilon P_1(S)+\delta` along a path of
        ``k`` adjacent steps gives
        :math:`P_0(S)\le e^{k\varepsilon}P_k(S)+\delta\sum_{i<k}e^{i\varepsilon}`,
        which is at most the textbook :math:`k e^{(k-1)\varepsilon}\delta`
        [Vad17, Lemma 2.2]. Rounded up; delta capped at 1.
        """
        check_int("k", k, minimum=1)
        e = MP.mpf(self.epsilon)
        factor = MP.fsum(MP.exp(i * e) for i in range(k))
        delta = min(1.0, up(MP.mpf(self.delta) * factor))
        return ApproxDP(up_exact(k * Q(self.epsilon)), delta, _scaled_relation(self.relation, k))

    def dominates(self, other: "ApproxDP") -> bool:
        """True if ``self`` is at least as private in both parameters (same relation)."""
        _check_type(self, other)
        return self.relation == other.relation and self.epsilon <= other.epsilon and self.delta <= other.delta


@dataclass(frozen=True, slots=True)
class GDP:
    r""":math:`\mu`-Gaussian DP [DRS22, Def. 2.6]: :math:`G_\mu`-DP with respect to ``relation``.

    Examples
    --------
    >>> GDP(3.0).compose(GDP(4.0)).mu
    5.0
    """

    mu: float
    """Gaussian parameter, ``>= 0``."""
    relation: Relation = field(default_factory=Replace)
    """Pairs of datasets the guarantee covers."""

    def __post_init__(self) -> None:
        check_nonnegative("mu", self.mu)

    def compose(self, other: "GDP") -> "GDP":
        r""":math:`G_{\mu_1}\otimes G_{\mu_2}=G_{\sqrt{\mu_1^2+\mu_2^2}}` [DRS22, Cor. 3.3]; rounded up."""
        _check_type(self, other)
        check_same_relation(self.relation, other.relation)
        a, b = Q(self.mu), Q(other.mu)
        return GDP(sqrt_up(a * a + b * b), self.relation)

    def group(self, k: int) -> "GDP":
        r""":math:`G_\mu^{\circ k}=G_{k\mu}` [DRS22, Thm. 2.14]; [CA24, Sec. 2]."""
        check_int("k", k, minimum=1)
        return GDP(up_exact(k * Q(self.mu)), _scaled_relation(self.relation, k))

    def dominates(self, other: "GDP") -> bool:
        """True if ``self.mu <= other.mu`` under the same relation."""
        _check_type(self, other)
        return self.relation == other.relation and self.mu <= other.mu


@dataclass(frozen=True, slots=True)
class ZCDP:
    r""":math:`\rho`-zero-concentrated DP [BS16, Def. 1.1] with respect to ``relation``.

    Examples
    --------
    >>> ZCDP(2.56).group(2).rho       # [CA24, Sec. 6]: 2020 Census persons
    10.24
    """

    rho: float
    """zCDP parameter, ``>= 0``."""
    relation: Relation = field(default_factory=Replace)
    """Pairs of datasets the guarantee covers."""

    def __post_init__(self) -> None:
        check_nonnegative("rho", self.rho)

    def compose(self, other: "ZCDP") -> "ZCDP":
        """Rhos add [BS16, Lemma 2.3]; rounded up."""
        _check_type(self, other)
        check_same_relation(self.relation, other.relation)
        return ZCDP(up_exact(Q(self.rho) + Q(other.rho)), self.relation)

    def group(self, k: int) -> "ZCDP":
        """Group privacy: ``k**2 * rho`` [BS16, Prop. 1.9]; [CA24, Lemma 39]."""
        check_int("k", k, minimum=1)
        return ZCDP(up_exact(k * k * Q(self.rho)), _scaled_relation(self.relation, k))

    def dominates(self, other: "ZCDP") -> bool:
        """True if ``self.rho <= other.rho`` under the same relation."""
        _check_type(self, other)
        return self.relation == other.relation and self.rho <= other.rho


@dataclass(frozen=True, slots=True)
class RDP:
    r"""Rényi DP at finitely many orders [Mir17, Def. 4]: :math:`D_\alpha \le \varepsilon(\alpha)`.

    Examples
    --------
    >>> r = RDP((2.0, 8.0), (0.5, 2.0)).compose(RDP((2.0, 8.0), (0.5, 2.0)))
    >>> r.epsilons
    (1.0, 4.0)
    """

    orders: tuple[float, ...]
    """Rényi orders, each ``> 1``, strictly increasing."""
    epsilons: tuple[float, ...]
    """Divergence bounds at the orders, each ``>= 0``."""
    relation: Relation = field(default_factory=Replace)
    """Pairs of datasets the guarantee covers."""

    def __post_init__(self) -> None:
        orders = tuple(self.orders)
        eps = tuple(self.epsilons)
        if not orders or len(orders) != len(eps):
            raise InvalidArgument(
                f"RDP needs as many epsilons as orders (got {len(orders)} orders, {len(eps)} epsilons)."
            )
        for a in orders:
            check_in_interval("RDP order", a, 1.0, math.inf, lo_open=True, hi_open=True)
        for e in eps:
            check_nonnegative("RDP epsilon", e)
        if any(b <= a for a, b in zip(orders, orders[1:])):
            raise InvalidArgument(f"RDP orders={orders!r} must be strictly increasing.")
        object.__setattr__(self, "orders", tuple(float(a) for a in orders))
        object.__setattr__(self, "epsilons", tuple(float(e) for e in eps))

    def compose(self, other: "RDP") -> "RDP":
        """Order-wise sum at the common orders [Mir17, Prop. 1]; rounded up."""
        _check_type(self, other)
        check_same_relation(self.relation, other.relation)
        common = sorted(set(self.orders) & set(other.orders))
        if not common:
            raise InvalidArgument(
                f"RDP curves share no order: {self.orders} vs {other.orders}. Evaluate both at common orders first."
            )
        a = dict(zip(self.orders, self.epsilons))
        b = dict(zip(other.orders, other.epsilons))
        eps = tuple(up_exact(Q(a[o]) + Q(b[o])) for o in common)
        return RDP(tuple(common), eps, self.relation)

    def group(self, k: int) -> "RDP":
        """Group privacy: only ``k = 1`` is supported.

        RDP's group privacy [Mir17, Prop. 2] needs the curve at orders
        ``2^c * alpha`` and weakens ``epsilon`` by ``3^c``; a finite list of
        orders rarely supports it. Convert first (e.g. ``rdp_to_approx_dp``
        then ``group``, or express the mechanism as zCDP/GDP).
        """
        check_int("k", k, minimum=1)
        if k == 1:
            return self
        raise UnsupportedRelease(
            f"RDP.group({k}) is not supported: RDP group privacy needs orders 2^c*alpha. "
            "Convert to ApproxDP/TradeOff (accountant.guarantees.conversions) or use ZCDP/GDP, then group."
        )

    def dominates(self, other: "RDP") -> bool:
        """True if at every order of ``other`` ``self`` has that order with a bound no larger."""
        _check_type(self, other)
        mine = dict(zip(self.orders, self.epsilons))
        return self.relation == other.relation and all(
            o in mine and mine[o] <= e for o, e in zip(other.orders, other.epsilons)
        )


@dataclass(frozen=True, slots=True)
class TradeOff:
    r""":math:`f`-DP [DRS22, Def. 2.3] for a symmetric tradeoff function, stored as a lower bound.

    ``curve`` is a piecewise-linear convex function that lies **below** the
    true tradeoff function everywhere, in the standard (Dong–Roth–Su)
    convention; :meth:`paper` evaluates it in Cho & Awan's reflected convention
    (``docs/reference/semi-dp.md`` Sec. 1).
    """

    curve: "TradeoffCurve"
    """Piecewise-linear lower bound, standard convention."""
    relation: Relation = field(default_factory=Replace)
    """Pairs of datasets the guarantee covers."""

    def std(self, alpha: float) -> float:
        """Type-II error bound at type-I error ``alpha`` (Dong–Roth–Su convention)."""
        return float(self.curve.std(alpha))

    def paper(self, alpha: float) -> float:
        """Cho & Awan's convention: ``f_paper(alpha) = f_std(1 - alpha)``."""
        return float(self.curve.paper(alpha))

    def compose(self, other: "TradeOff") -> "TradeOff":
        r""":math:`f\otimes g` [DRS22, Thm. 3.2], numerically and conservatively (:mod:`accountant.pld.grid`)."""
        from semidp.accountant.pld.grid import compose as pld_compose

        _check_type(self, other)
        check_same_relation(self.relation, other.relation)
        return TradeOff(pld_compose([self.curve, other.curve]), self.relation)

    def group(self, k: int) -> "TradeOff":
        r""":math:`f^{\circ k}` (paper convention) [DRS22, Thm. 2.14]; [CA24, Sec. 2].

        Exact for the piecewise-linear lower bound, hence a lower bound of the
        true :math:`f^{\circ k}`.
        """
        check_int("k", k, minimum=1)
        return TradeOff(self.curve.group(k), _scaled_relation(self.relation, k))

    def dominates(self, other: "TradeOff") -> bool:
        """True if ``self`` lies pointwise above ``other`` (same relation)."""
        _check_type(self, other)
        return self.relation == other.relation and bool(self.curve.dominates(other.curve))


Guarantee = Union[PureDP, ApproxDP, GDP, ZCDP, RDP, TradeOff]


def _check_type(a: object, b: object) -> None:
    if not (isinstance(a, type(b)) or isinstance(b, type(a))):  # a Composed* part record is its base class
        raise InvalidArgument(
            f"Cannot combine {type(a).__name__} with {type(b).__name__} directly; "
            "convert one with accountant.guarantees.conversions or use accountant.guarantees.composition.compose_tradeoffs."
        )


def with_relation(g: Guarantee, relation: Relation) -> Guarantee:
    """Return ``g`` with its relation replaced (internal: used by the Semi-DP transforms)."""
    import dataclasses

    return dataclasses.replace(g, relation=relation)
