r"""Every conversion route of each guarantee type, dispatched by type in one place (house style R16).

A report expresses a guarantee in every form it converts to: its own
parameters (:func:`native_forms`), :math:`(\varepsilon,\delta)` at each
requested :math:`\delta` by every applicable method (:func:`epsilon_delta`), a
tradeoff lower bound (:func:`to_tradeoff`) and its privacy profile
:math:`\delta(\varepsilon)` (:func:`delta_at`). Each is a
:func:`functools.singledispatch` function over the guarantee classes of
:mod:`accountant.guarantees.definitions` and :class:`~accountant.guarantees.semidp.NoFiniteGuarantee`;
a new guarantee class registers its routes here and nowhere else.

Every value is conservative (house style R6): epsilons and deltas are upper
bounds, tradeoff curves lower bounds. The conversions themselves live in
:mod:`accountant.guarantees.conversions`, which cites the results used.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import singledispatch
from typing import Any

from semidp.accountant.guarantees import conversions as conv
from semidp.accountant.guarantees.composition import (
    ComposedApproxDP,
    ComposedPureDP,
    compose_as_zcdp,
    homogeneous_epsilon,
    identical_part,
)
from semidp.accountant.guarantees.definitions import GDP, RDP, ZCDP, ApproxDP, Guarantee, PureDP, TradeOff
from semidp.accountant.guarantees.semidp import NoFiniteGuarantee

AnyGuarantee = Guarantee | NoFiniteGuarantee
"""A guarantee, or the statement that no finite one holds."""


@dataclass(frozen=True, slots=True)
class EpsilonDelta:
    r"""One labelled :math:`(\varepsilon,\delta)` statement: ``epsilon`` is an upper bound at ``delta``.

    ``epsilon`` is ``None`` when the route gives no finite value; ``method``
    names the conversion (``bun-steinke``, ``canonne-kamath-steinke``,
    ``balle-wang``, ``f-dp-profile``, ``mironov``, ``none``).
    """

    delta: float
    epsilon: float | None
    method: str

    def to_json(self) -> dict[str, Any]:
        """The contract's ``{"delta", "epsilon", "method"}`` object."""
        return {"delta": self.delta, "epsilon": self.epsilon, "method": self.method}


@singledispatch
def epsilon_delta(g: AnyGuarantee, delta: float) -> list[EpsilonDelta]:
    r"""Every :math:`(\varepsilon,\delta)` route of ``g`` at ``delta``, each labelled with its method.

    zCDP: [BS16, Prop. 1.3] and [CKS20, Prop. 12]; GDP: the exact profile
    [BW18, Thm. 8] / [DRS22, Cor. 2.13]; pure/approximate DP: the exact profile of
    :math:`f_{\varepsilon,\delta}` [KOV15]; RDP: [Mir17, Prop. 3] and [CKS20, Prop. 12];
    f-DP: the profile of the piecewise-linear lower bound [DRS22, Prop. 2.12].
    """
    raise TypeError(f"no (epsilon, delta) route for {type(g).__name__}")


@epsilon_delta.register
def _(g: NoFiniteGuarantee, delta: float) -> list[EpsilonDelta]:
    return [EpsilonDelta(delta, None, "none")]


@epsilon_delta.register
def _(g: ZCDP, delta: float) -> list[EpsilonDelta]:
    return [EpsilonDelta(delta, conv.zcdp_to_approx_dp(g, delta, m).epsilon, m) for m in conv.ZCDP_METHODS]


@epsilon_delta.register
def _(g: GDP, delta: float) -> list[EpsilonDelta]:
    return [EpsilonDelta(delta, conv.gdp_to_approx_dp(g, delta).epsilon, "balle-wang")]


@epsilon_delta.register(PureDP)
@epsilon_delta.register(ApproxDP)
def _(g: PureDP | ApproxDP, delta: float) -> list[EpsilonDelta]:
    r = conv.approx_dp_to_approx_dp(g, delta)
    return [EpsilonDelta(delta, None if r is None else r.epsilon, "f-dp-profile")]


@epsilon_delta.register(ComposedPureDP)
@epsilon_delta.register(ComposedApproxDP)
def _(g: ComposedPureDP | ComposedApproxDP, delta: float) -> list[EpsilonDelta]:
    # The sum's profile, or for identical parts the optimal composition's if smaller [KOV15, Thm. 3.3]: the
    # exact profile of f_{eps0,delta0}^{(x)k}, hence also labelled f-dp-profile.
    r = conv.approx_dp_to_approx_dp(g, delta)
    eps = None if r is None else r.epsilon
    part = identical_part(g)
    if part is not None:
        kov = homogeneous_epsilon(part, len(g.parts), delta)
        if kov is not None:
            eps = kov if eps is None else min(eps, kov)
    return [EpsilonDelta(delta, eps, "f-dp-profile")]


@epsilon_delta.register
def _(g: RDP, delta: float) -> list[EpsilonDelta]:
    return [EpsilonDelta(delta, conv.rdp_to_approx_dp(g, delta, m).epsilon, m) for m in conv.RDP_METHODS]


@epsilon_delta.register
def _(g: TradeOff, delta: float) -> list[EpsilonDelta]:
    # The curve is a lower bound of f; its epsilon(delta) is an upper bound (None when infinite).
    r = conv.tradeoff_to_approx_dp(g, delta)
    return [EpsilonDelta(delta, None if r is None else r.epsilon, "f-dp-profile")]


@singledispatch
def native_forms(g: AnyGuarantee) -> dict[str, Any]:
    """The guarantee's own parameters and the exact forms they imply, as report keys.

    Keys: ``zcdp`` (:math:`\\rho`), ``mu``, ``epsilon``, ``delta``, ``rdp``
    (a list of ``{alpha, epsilon}``); for :class:`NoFiniteGuarantee`, ``epsilon``,
    ``zcdp`` and ``mu`` are ``None`` and ``reason`` says why. A GDP guarantee also
    gives :math:`\\rho=\\mu^2/2` [BS16, Prop. 1.6]; a pure one :math:`\\varepsilon^2/2`
    [BS16, Prop. 1.4].
    """
    raise TypeError(f"no report forms for {type(g).__name__}")


@native_forms.register
def _(g: NoFiniteGuarantee) -> dict[str, Any]:
    return {"epsilon": None, "zcdp": None, "mu": None, "reason": g.reason}


@native_forms.register
def _(g: ZCDP) -> dict[str, Any]:
    return {"zcdp": g.rho}


@native_forms.register
def _(g: GDP) -> dict[str, Any]:
    return {"mu": g.mu, "zcdp": conv.gdp_to_zcdp(g).rho}


@native_forms.register
def _(g: PureDP) -> dict[str, Any]:
    return {"epsilon": g.epsilon, "zcdp": conv.pure_dp_to_zcdp(g).rho}


@native_forms.register
def _(g: ComposedPureDP) -> dict[str, Any]:
    # Each part is eps_i^2/2-zCDP [BS16, Prop. 1.4] and zCDP adds [BS16, Lemma 2.3]: below (sum eps_i)^2/2.
    return {"epsilon": g.epsilon, "zcdp": compose_as_zcdp(g.parts).rho}


@native_forms.register
def _(g: ApproxDP) -> dict[str, Any]:
    return {"epsilon": g.epsilon, "delta": g.delta}


@native_forms.register
def _(g: RDP) -> dict[str, Any]:
    return {"rdp": [{"alpha": a, "epsilon": e} for a, e in zip(g.orders, g.epsilons)]}


@native_forms.register
def _(g: TradeOff) -> dict[str, Any]:
    return {}


@singledispatch
def to_tradeoff(g: AnyGuarantee) -> TradeOff | None:
    """A tradeoff lower bound implied by ``g`` (``None`` when no route exists, e.g. RDP or no guarantee)."""
    return None


@to_tradeoff.register
def _(g: ZCDP) -> TradeOff | None:
    return conv.zcdp_to_tradeoff(g)


@to_tradeoff.register
def _(g: GDP) -> TradeOff | None:
    return conv.gdp_to_tradeoff(g)


@to_tradeoff.register(PureDP)
@to_tradeoff.register(ApproxDP)
def _(g: PureDP | ApproxDP) -> TradeOff | None:
    return conv.approx_dp_to_tradeoff(g)


@to_tradeoff.register
def _(g: TradeOff) -> TradeOff | None:
    return g


@singledispatch
def delta_at(g: AnyGuarantee, epsilon: float) -> float | None:
    r"""An upper bound on the privacy profile :math:`\delta(\varepsilon)` of ``g`` (``None``: no route)."""
    t = to_tradeoff(g)
    return None if t is None else conv.tradeoff_to_delta(t, epsilon)


@delta_at.register
def _(g: NoFiniteGuarantee, epsilon: float) -> float | None:
    return 1.0


@delta_at.register
def _(g: ZCDP, epsilon: float) -> float | None:
    return conv.zcdp_to_delta(g, epsilon)


__all__ = ["AnyGuarantee", "EpsilonDelta", "delta_at", "epsilon_delta", "native_forms", "to_tradeoff"]
