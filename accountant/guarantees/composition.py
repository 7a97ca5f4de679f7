r"""Composition of guarantees, including mixes of definitions.

* :func:`compose` -- same definition, same relation: folds ``.compose``
  (closed forms: epsilons add, :math:`\mu`'s add in quadrature, rhos add).
* :func:`compose_tradeoffs` -- any mix of ``GDP``, ``PureDP``, ``ApproxDP`` and
  ``TradeOff``: the tensor product :math:`\bigotimes_i f_i` [DRS22, Thm. 3.2]
  computed numerically and conservatively through privacy-loss distributions
  (:mod:`accountant.pld.grid`); all Gaussian parts are combined exactly.
* :func:`compose_as_zcdp` -- any mix of ``PureDP``, ``GDP`` and ``ZCDP``,
  converted to zCDP and added [BS16, Prop. 1.4, Lemma 2.3].
* :func:`compose_recorded` -- basic composition of all-pure or all-approximate
  parts that keeps the parts (:class:`ComposedPureDP`, :class:`ComposedApproxDP`):
  the report then also gives :math:`\sum_i\varepsilon_i^2/2`-zCDP and, for
  identical parts, the optimal composition :func:`homogeneous_epsilon` [KOV15, Thm. 3.3].
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from fractions import Fraction as Q
from typing import Iterable, Sequence

import mpmath

from semidp.accountant.core.arguments import check_in_interval, check_int
from semidp.accountant.core.directed import MP, sqrt_up, up, up_exact
from semidp.accountant.core.errors import InvalidArgument, UnsupportedRelease
from semidp.accountant.guarantees.conversions import gdp_to_zcdp, pure_dp_to_zcdp
from semidp.accountant.guarantees.definitions import GDP, ZCDP, ApproxDP, Guarantee, PureDP, TradeOff
from semidp.accountant.guarantees.relations import Relation, check_same_relation


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
        slower); ``None`` uses :mod:`accountant.pld.grid`'s default.
    """
    from semidp.accountant.pld.grid import compose as pld_compose
    from semidp.accountant.profiles.tradeoff import TradeoffCurve

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


#: Most identical parts :func:`homogeneous_epsilon` sums the binomial for (one 50-digit term per part).
HOMOGENEOUS_MAX_PARTS = 100_000

#: Absolute slack added to every 50-digit evaluation of the homogeneous profile (far above its rounding error).
_PROFILE_SLACK = MP.mpf(10) ** -40


@dataclass(frozen=True, slots=True)
class ComposedPureDP(PureDP):
    r"""The basic composition :math:`\sum_i\varepsilon_i`-DP of pure parts, remembering the parts.

    It *is* that :class:`PureDP` guarantee; the parts give tighter statements the sum alone does not:
    :math:`\sum_i\varepsilon_i^2/2`-zCDP [BS16, Prop. 1.4, Lemma 2.3] and, for identical parts, the optimal
    composition's :math:`(\varepsilon,\delta)` [KOV15, Thm. 3.3] (:mod:`accountant.guarantees.conversion_routes`).
    """

    parts: tuple[PureDP, ...] = ()
    """The composed parts (same relation)."""


@dataclass(frozen=True, slots=True)
class ComposedApproxDP(ApproxDP):
    r"""The basic composition :math:`(\sum_i\varepsilon_i, \sum_i\delta_i)`-DP, remembering the parts.

    For identical parts the optimal composition [KOV15, Thm. 3.3] gives a tighter :math:`\varepsilon` at every
    :math:`\delta \ge 1-(1-\delta_0)^k` (:func:`homogeneous_epsilon`).
    """

    parts: tuple[ApproxDP, ...] = ()
    """The composed parts (same relation)."""


def compose_recorded(parts: Sequence[PureDP] | Sequence[ApproxDP]) -> ComposedPureDP | ComposedApproxDP:
    """Basic composition of parts all pure or all approximate DP (:func:`compose`), keeping the parts."""
    gs = _nonempty(parts)
    closed = compose(gs)
    if isinstance(closed, PureDP) and all(type(g) is PureDP for g in gs):
        return ComposedPureDP(closed.epsilon, closed.relation, tuple(gs))  # type: ignore[arg-type]
    if isinstance(closed, ApproxDP) and all(type(g) is ApproxDP for g in gs):
        return ComposedApproxDP(closed.epsilon, closed.delta, closed.relation, tuple(gs))  # type: ignore[arg-type]
    raise InvalidArgument("compose_recorded takes parts that are all PureDP or all ApproxDP")


def identical_part(g: ComposedPureDP | ComposedApproxDP) -> PureDP | ApproxDP | None:
    """The common part when all parts are equal (same epsilon, delta and relation), else ``None``."""
    if not g.parts or any(p != g.parts[0] for p in g.parts[1:]):
        return None
    return g.parts[0]


class _HomogeneousProfile:
    r"""The exact privacy profile of :math:`k`-fold :math:`(\varepsilon_0,\delta_0)`-DP [KOV15, Thm. 3.3].

    The dominating pair of one part is randomized response with a :math:`\delta_0` atom; its :math:`k`-fold
    product has privacy loss :math:`(k-2j)\varepsilon_0` with probability
    :math:`P_j=\binom kj p^{k-j}(1-p)^j`, :math:`p=e^{\varepsilon_0}/(1+e^{\varepsilon_0})`, so
    :math:`\delta(\varepsilon)=1-(1-\delta_0)^k\,(1-\sum_{(k-2j)\varepsilon_0>\varepsilon}
    P_j(1-e^{\varepsilon-(k-2j)\varepsilon_0}))`. Evaluated at 50 digits from prefix sums
    :math:`A_m=\sum_{j<m}P_j`, :math:`B_m=\sum_{j<m}P_je^{-(k-2j)\varepsilon_0}` (all terms positive).
    """

    def __init__(self, eps0: float, delta0: float, k: int) -> None:
        self.eps0, self.k = MP.mpf(eps0), k
        e = MP.exp(self.eps0)
        p, q = e / (1 + e), 1 / (1 + e)
        self.keep = (1 - MP.mpf(delta0)) ** k
        self.a: list[mpmath.mpf] = [MP.mpf(0)]
        self.b: list[mpmath.mpf] = [MP.mpf(0)]
        pj, decay, step = p**k, MP.exp(-k * self.eps0), q / p
        for j in range((k + 1) // 2):  # losses (k - 2j) eps0 > 0 only; the rest never count
            if k - 2 * j <= 0:
                break
            self.a.append(self.a[-1] + pj)
            self.b.append(self.b[-1] + pj * decay)
            # P_{j+1} = P_j (k - j)/(j + 1) (q/p), all factors positive (relative error ~ k 1e-50)
            pj, decay = pj * (k - j) / (j + 1) * step, decay * e * e

    def delta_upper(self, eps: mpmath.mpf) -> mpmath.mpf:
        """An upper bound on :math:`\\delta(\\varepsilon)` (``eps >= 0``): the 50-digit value plus a slack."""
        last = len(self.a) - 1  # m = how many j have loss (k - 2j) eps0 > eps: a guess, then exact steps
        m = last if self.eps0 == 0 else max(0, min(last, int(MP.ceil((self.k - eps / self.eps0) / 2))))
        while m > 0 and (self.k - 2 * (m - 1)) * self.eps0 <= eps:
            m -= 1
        while m < last and (self.k - 2 * m) * self.eps0 > eps:
            m += 1
        rr = self.a[m] - MP.exp(eps) * self.b[m]
        return 1 - self.keep * (1 - rr) + _PROFILE_SLACK


def homogeneous_epsilon(part: PureDP | ApproxDP, k: int, delta: float) -> float | None:
    r"""Optimal :math:`\varepsilon` at ``delta`` of ``k`` identical ``part`` guarantees, rounded up [KOV15, Thm. 3.3].

    The smallest float :math:`\varepsilon` whose upper-bounded profile :math:`\delta(\varepsilon)`
    (:class:`_HomogeneousProfile`) is ``<= delta``, found by bisection; ``None`` when no finite epsilon holds
    (``delta`` below :math:`1-(1-\delta_0)^k`) or ``k`` exceeds :data:`HOMOGENEOUS_MAX_PARTS`. Units: nats.

    Examples
    --------
    >>> round(homogeneous_epsilon(PureDP(1.0), 365, 1e-7), 3)   # 365 days of epsilon = 1 (sum: 365)
    250.954
    """
    check_int("k", k, minimum=1)
    check_in_interval("delta", delta, 0.0, 1.0)
    if k > HOMOGENEOUS_MAX_PARTS:
        return None
    delta0 = part.delta if isinstance(part, ApproxDP) else 0.0
    prof = _HomogeneousProfile(part.epsilon, delta0, k)
    target = MP.mpf(delta)
    if prof.delta_upper(MP.mpf(0)) <= target:
        return 0.0
    hi = k * MP.mpf(part.epsilon)  # delta(k eps0) = 1 - (1 - delta0)^k exactly
    if prof.delta_upper(hi) > target:
        return None
    lo = MP.mpf(0)  # invariant: delta_upper(lo) > target >= delta_upper(hi)
    while hi - lo > MP.mpf(2) ** -60 * max(hi, 1):
        mid = (lo + hi) / 2
        if prof.delta_upper(mid) <= target:
            hi = mid
        else:
            lo = mid
    return min(up_exact(k * Q(part.epsilon)), up(hi))  # the profile decreases: any eps >= hi holds
