r"""Composition of guarantees, including mixes of definitions.

* :func:`compose` -- same definition, same relation: folds ``.compose``
  (closed forms: epsilons add, :math:`\mu`'s add in quadrature, rhos add).
* :func:`compose_tradeoffs` -- any mix of ``GDP``, ``PureDP``, ``ApproxDP`` and
  ``TradeOff``: the tensor product :math:`\bigotimes_i f_i` [DRS22, Thm. 3.2]
  computed numerically and conservatively through privacy-loss distributions
  (:mod:`accountant.pld`); all Gaussian parts are combined exactly.
* :func:`compose_as_zcdp` -- any mix of ``PureDP``, ``GDP`` and ``ZCDP``,
  converted to zCDP and added [BS16, Prop. 1.4, Lemma 2.3].
"""

from __future__ import annotations

import functools
from fractions import Fraction as Q
from typing import Iterable, Sequence

from semidp.accountant.conversions import gdp_to_zcdp, pure_dp_to_zcdp
from semidp.accountant.directed import sqrt_up, up_exact
from semidp.accountant.errors import InvalidArgument, UnsupportedRelease
from semidp.accountant.guarantees import GDP, ZCDP, ApproxDP, Guarantee, PureDP, TradeOff
from semidp.accountant.relations import Relation, check_same_relation


def _nonempty(gs: Iterable[Guarantee]) -> list[Guarantee]:
    out = list(gs)
    if not out:
        raise InvalidArgument("Nothing to compose: pass at least one guarantee.")
    for g in out[1:]:
        check_same_relation(out[0].relation, g.relation)
    return out


def compose(guarantees: Iterable[Guarantee]) -> Guarantee:
    """Compose guarantees of one definition under one relation (closed forms).

    Examples
    --------
    >>> compose([ZCDP(1.0), ZCDP(1.56)]).rho
    2.56
    """
    gs = _nonempty(guarantees)
    return functools.reduce(lambda a, b: a.compose(b), gs)  # type: ignore[arg-type]


def compose_as_zcdp(guarantees: Iterable[PureDP | GDP | ZCDP]) -> ZCDP:
    """Convert every part to zCDP and add the rhos [BS16, Prop. 1.4, Lemma 2.3]; rounded up."""
    gs = _nonempty(guarantees)
    rhos = []
    for g in gs:
        if isinstance(g, ZCDP):
            rhos.append(g.rho)
        elif isinstance(g, GDP):
            rhos.append(gdp_to_zcdp(g).rho)
        elif isinstance(g, PureDP):
            rhos.append(pure_dp_to_zcdp(g).rho)
        else:
            raise UnsupportedRelease(
                f"{type(g).__name__} has no zCDP conversion (approximate DP with delta > 0 does not "
                "imply any zCDP bound); use compose_tradeoffs instead."
            )
    return ZCDP(up_exact(sum((Q(r) for r in rhos), Q(0))), gs[0].relation)


def compose_tradeoffs(
    guarantees: Sequence[GDP | PureDP | ApproxDP | TradeOff], *, grid: float | None = None
) -> TradeOff:
    r"""Tight composition :math:`\bigotimes_i f_i` of f-DP guarantees, numerically and conservatively.

    The result is a piecewise-linear tradeoff function that lies below the
    true :math:`\bigotimes_i f_i` everywhere [DRS22, Thm. 3.2]. GDP parts are
    combined exactly (:math:`G_{\sqrt{\sum\mu_i^2}}`); pure and approximate DP
    parts enter as their exact :math:`f_{\varepsilon,\delta}` [KOV15].

    Parameters
    ----------
    guarantees:
        Parts, all under the same relation.
    grid:
        Privacy-loss grid spacing of the discretisation (smaller: tighter and
        slower); ``None`` uses :mod:`accountant.pld`'s default.
    """
    from semidp.accountant.pld import compose as pld_compose
    from semidp.accountant.tradeoff import TradeoffCurve

    gs = _nonempty(guarantees)
    relation: Relation = gs[0].relation
    mus: list[float] = []
    curves: list[TradeoffCurve] = []
    for g in gs:
        if isinstance(g, GDP):
            mus.append(g.mu)
        elif isinstance(g, (PureDP, ApproxDP)):
            delta = g.delta if isinstance(g, ApproxDP) else 0.0
            curves.append(TradeoffCurve.from_approx_dp(g.epsilon, delta))
        elif isinstance(g, TradeOff):
            curves.append(g.curve)
        else:
            raise UnsupportedRelease(
                f"compose_tradeoffs cannot take {type(g).__name__}; convert it to ApproxDP or "
                "TradeOff first (zCDP/RDP do not determine a tradeoff function)."
            )
    mu = sqrt_up(sum((Q(m) ** 2 for m in mus), Q(0))) if mus else 0.0
    if not curves:
        return TradeOff(TradeoffCurve.from_gdp(mu), relation)
    return TradeOff(pld_compose(curves, gaussian_mu=mu, grid=grid), relation)
