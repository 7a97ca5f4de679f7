r"""Interpreters of a :class:`~accountant.releases.model.Release`: typed accounting values, one function each.

Each interpreter reads the release and reuses the accountant's results; none adds math of its own:

* :func:`part_guarantee` -- a part's guarantee on one relation, from its noise law and its shift there
  (Gaussian :math:`\mu=\Delta_2/\sigma` [DRS22, Thm. 2.7]; Laplace and discrete Laplace
  :math:`\varepsilon=\Delta_1/b` [DR14, Thm. 3.6]; discrete Gaussian :math:`\rho=\Delta_2^2/2\sigma^2`
  [CKS20, Thm. 14]), or the guarantee it is known by;
* :func:`zcdp_sum` -- the composed release as zCDP, exact up to upward rounding [BS16, Lemma 2.3];
* :func:`pld_parts` -- the parts as PLD parts of their dominating pairs [KOV15, Thm. 2.4], for the PLD
  bracket of :func:`accountant.pld.engine.compose_plds` (lower and upper ends certified);
  :func:`pld_counted_parts` the same with repeat counts (a worst pair stated per coordinate,
  :attr:`~accountant.releases.model.Shift.coordinates`, gives one part per moving coordinate);
* :func:`zcdp_exact` -- the zCDP sum in exact rationals (what a zCDP design scales);
* :func:`semi_dp_grouping` -- the Semi-DP guarantee under the invariant at a radius [CA24, Prop. 15, 21]:
  at a(t)'s proven upper bound it may verify, at its proven lower bound refute;
* :func:`plain_dp` -- what holds for the joint release with the invariant on :math:`(\mathcal D, A_1)`;
* :func:`statistical_audit` -- a black box: a lower bound only, so a claim is refuted or unknown, never verified;
* :func:`pld_bracket` -- a measurement workload (:class:`~accountant.releases.measurements.MeasurementRelease`) at
  its worst pair: exact rho [BS16, Lemma 2.3] and the certified PLD bracket of
  :func:`accountant.workloads.accounting.workload_bracket`, refined on finer grids within a budget;
* :func:`account` -- the advertised and effective guarantees of a release in a framework, from the above.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction

from semidp.accountant.combinatorics.semiadjacent import SemiAdjacentParameter
from semidp.accountant.core.budget import Budget
from semidp.accountant.core.directed import down_exact, sqrt_up, up_exact
from semidp.accountant.core.errors import InvalidArgument, UnsupportedRelease
from semidp.accountant.core.outcome import Outcome, Refuted, Unknown
from semidp.accountant.data.dataspace import DataSpace
from semidp.accountant.guarantees.composition import compose, compose_as_zcdp, compose_recorded, compose_tradeoffs
from semidp.accountant.guarantees.conversion_routes import AnyGuarantee
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
from semidp.accountant.guarantees.relations import IntegerSubspace, Relation, SemiAdjacent, Subspace
from semidp.accountant.guarantees.semidp import Prop21Result, joint_release_dp, semi_dp, semi_dp_composition
from semidp.accountant.pld.engine import MAX_POINTS
from semidp.accountant.pld.parts import (
    ApproxDPPart,
    DiscreteGaussianPart,
    DiscreteLaplacePart,
    GaussianPart,
    LaplacePart,
    PLDPart,
)
from semidp.accountant.pld.refine import RefinedInterval, refine_many
from semidp.accountant.releases.measurements import MeasurementRelease
from semidp.accountant.releases.model import (
    DiscreteGaussianNoise,
    DiscreteLaplaceNoise,
    GaussianNoise,
    KnownGuarantee,
    LaplaceNoise,
    Part,
    PluginLaw,
    Release,
    Shift,
)
from semidp.accountant.workloads.accounting import (
    GAUSSIAN_NOISES,
    WORKLOAD_POINTS,
    SetAsideBracket,
    WorkloadBracket,
    workload_bracket,
    workload_parts,
    workload_rho,
)


def part_guarantee(part: Part, relation: Relation) -> Guarantee | None:
    """The part's guarantee on ``relation`` (rounded up), or ``None`` when the part states nothing there.

    A noise law needs the query's shift on ``relation``; a part known by a guarantee answers only on that
    guarantee's relation (grouping to another relation is :func:`semi_dp_grouping`'s business).
    """
    law = part.law
    if isinstance(law, KnownGuarantee):
        return law.guarantee if law.guarantee.relation == relation else None
    s = part.shift(relation)
    if s is None:
        return None
    if isinstance(law, GaussianNoise):  # mu = Delta_2 / sigma [DRS22, Thm. 2.7]
        return GDP(up_exact(Fraction(sqrt_up(Fraction(s.l2_squared))) / Fraction(law.sigma)), relation)
    if isinstance(law, LaplaceNoise):  # eps = Delta_1 / b [DR14, Thm. 3.6]
        return PureDP(up_exact(Fraction(s.l1) / Fraction(law.b)), relation)
    if isinstance(law, DiscreteLaplaceNoise):  # eps = Delta_1 / t (integer query) [CKS20, Sec. 2]
        return PureDP(up_exact(Fraction(s.l1) / law.t), relation)
    if isinstance(law, DiscreteGaussianNoise):  # rho = Delta_2^2 / (2 sigma^2) [CKS20, Thm. 14]
        return ZCDP(up_exact(Fraction(s.l2_squared) / (2 * law.sigma2)), relation)
    interpret = _LAWS.get(type(law))
    if interpret is None:
        raise UnsupportedRelease(
            f"part {part.label!r}: no interpreter is registered for the noise law {type(law).__name__} "
            "(accountant.releases.accounting.register_law)."
        )
    return interpret(law, s)


LawInterpreter = Callable[[PluginLaw, Shift], Guarantee]
"""``(law, shift) -> guarantee on shift.relation``: a plugin law's privacy map (cite its result)."""
_LAWS: dict[type[PluginLaw], LawInterpreter] = {}


def register_law(law: type[PluginLaw], interpret: LawInterpreter) -> None:
    """Register the interpreter of a :class:`~accountant.releases.model.PluginLaw` (refused if one is registered)."""
    if not (isinstance(law, type) and issubclass(law, PluginLaw)):
        raise InvalidArgument(f"register_law: {law!r} is not a PluginLaw subclass.")
    if law in _LAWS:
        raise InvalidArgument(f"register_law: {law.__name__} already has an interpreter.")
    _LAWS[law] = interpret


def unregister_law(law: type[PluginLaw]) -> None:
    """Forget a plugin law's interpreter (tests)."""
    _LAWS.pop(law, None)


def _required(part: Part, relation: Relation) -> Guarantee:
    """:func:`part_guarantee`, or :class:`InvalidArgument` naming the part and the relation."""
    g = part_guarantee(part, relation)
    if g is None:
        raise InvalidArgument(f"part {part.label!r} states no guarantee and no shift on {relation.describe()}.")
    return g


def composed_guarantee(parts: Sequence[Guarantee]) -> Guarantee:
    """Guarantees of released parts on one relation, composed: closed form if one definition (pure or
    approximate DP keep their parts, for the zCDP sum and the optimal composition of identical parts [KOV15]),
    else numerical f-DP (pure/approx/GDP [DRS22, Thm. 3.2]) or zCDP (pure/GDP/zCDP [BS16, Lemma 2.3])."""
    if not parts:
        raise InvalidArgument("composed_guarantee needs at least one part.")
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


def base_guarantees(release: Release) -> list[Guarantee]:
    """Every part's guarantee on the release's base relation (each part must state one)."""
    return [_required(p, release.base) for p in _parts(release)]


def advertised(release: Release) -> Guarantee:
    """The advertised guarantee: the publisher's (or the calibration target), else the parts composed on base."""
    if release.black_box is not None:
        return release.black_box.claim
    return release.advertised if release.advertised is not None else composed_guarantee(base_guarantees(release))


def zcdp_sum(release: Release, relation: Relation | None = None) -> ZCDP | None:
    """The parts on ``relation`` (default: base) as one zCDP guarantee [BS16, Prop. 1.4, Lemma 2.3], rounded up;
    ``None`` when a part has no zCDP form (approximate DP with delta > 0, f-DP, RDP)."""
    rel = release.base if relation is None else relation
    gs = [_required(p, rel) for p in _parts(release)]
    if not all(isinstance(g, (PureDP, GDP, ZCDP)) for g in gs):
        return None
    return compose_as_zcdp(gs)  # type: ignore[arg-type]


def pld_parts(release: Release, relation: Relation | None = None) -> list[PLDPart] | None:
    """The parts on ``relation`` (default: base) as PLD parts of their dominating pairs [KOV15, Thm. 2.4]
    (Gaussian and Laplace noise by their own laws), for :func:`accountant.pld.engine.compose_plds`; ``None``
    when a part has no single dominating pair here (zCDP, RDP, f-DP, discrete laws of a vector query).
    :func:`pld_counted_parts` with each ``(part, count)`` written out ``count`` times."""
    counted = pld_counted_parts(release, relation)
    return None if counted is None else [part for part, n in counted for _ in range(n)]


def pld_counted_parts(release: Release, relation: Relation | None = None) -> list[tuple[PLDPart, int]] | None:
    r""":func:`pld_parts` as ``(PLD part, count)`` pairs, one group per release part in order.

    A shift that states its worst pair (:attr:`~accountant.releases.model.Shift.coordinates`) under a noise law
    gives one PLD part per moving coordinate (independent noise per coordinate [KOV15, Thm. 2.4]), equal shifts
    grouped in the order first seen, none for ``()``: for a release of :func:`accountant.releases.workload.workload_release`
    these are exactly :func:`accountant.workloads.accounting.workload_parts`. A Laplace or discrete Laplace law
    whose l1 is a bound only (:attr:`~accountant.releases.model.Shift.exact` false, no coordinates) gives the
    dominating pair of its pure DP :math:`\varepsilon = \Delta_1/b` rounded up [DR14, Thm. 3.6]. A Laplace law whose
    exact l1 states no worst pair gives ``LaplacePart(b, l1)``, which dominates every shift of that l1 norm
    (``docs/reference/laplace-l1-dominance.md``); its lower end bounds the release only if a worst pair moves one
    coordinate. Units: the laws' scales and the shifts in the query's units.
    """
    rel = release.base if relation is None else relation
    out: list[tuple[PLDPart, int]] = []
    for p in _parts(release):
        s = p.shift(rel)
        own = None if s is None else _stated_pair(p, s)
        if own is not None:
            out.extend(own)
            continue
        if isinstance(p.law, GaussianNoise) and s is not None and s.l2_squared > 0:
            out.append((GaussianPart(sigma=p.law.sigma, sensitivity=sqrt_up(Fraction(s.l2_squared))), 1))
            continue
        if isinstance(p.law, LaplaceNoise) and s is not None and s.l1 > 0:
            out.append((LaplacePart(b=p.law.b, sensitivity=s.l1), 1))
            continue
        g = part_guarantee(p, rel)
        d = None if g is None else dominating_part(g)
        if d is None:
            return None
        out.append((d, 1))
    return out


def _stated_pair(part: Part, s: Shift) -> list[tuple[PLDPart, int]] | None:
    """The PLD parts of a worst pair stated per coordinate, or of a Laplace law's l1 bound; ``None`` otherwise."""
    law = part.law
    laplace_scale = (
        law.b if isinstance(law, LaplaceNoise) else down_exact(law.t) if isinstance(law, DiscreteLaplaceNoise) else None
    )
    if s.coordinates is None:
        if laplace_scale is None or s.exact or s.l1 == 0:
            return None
        return [(ApproxDPPart(math.nextafter(s.l1 / laplace_scale, math.inf), 0.0), 1)]
    counts: dict[float, int] = {}
    for c in s.coordinates:
        counts[c] = counts.get(c, 0) + 1
    if isinstance(law, GaussianNoise):
        return [(GaussianPart(law.sigma, float(c)), n) for c, n in counts.items()]
    if isinstance(law, LaplaceNoise):
        return [(LaplacePart(law.b, float(c)), n) for c, n in counts.items()]
    if isinstance(law, (DiscreteGaussianNoise, DiscreteLaplaceNoise)):
        if not all(float(c).is_integer() for c in counts):
            raise InvalidArgument(
                f"part {part.label!r}: a discrete law shifts by integers, got coordinates {s.coordinates!r}."
            )
        if isinstance(law, DiscreteGaussianNoise):
            return [(DiscreteGaussianPart(down_exact(law.sigma2), int(c)), n) for c, n in counts.items()]
        return [(DiscreteLaplacePart(down_exact(law.t), int(c)), n) for c, n in counts.items()]
    return None  # a law known by its guarantee or a plugin law: by its guarantee


def zcdp_exact(release: Release, relation: Relation | None = None) -> Fraction | None:
    r"""The parts on ``relation`` (default: base) as one zCDP :math:`\rho` in exact rationals (nats), or ``None``
    when a part has none (approximate DP with delta > 0, f-DP, RDP, a plugin law, no shift there).

    Per part: Gaussian :math:`\Delta_2^2/(2\sigma^2)` (the exact ``variance`` when stated, else the float
    ``sigma``'s) and discrete Gaussian :math:`\Delta_2^2/(2\sigma^2)` [CKS20, Prop. 5]; Laplace kinds
    :math:`(\Delta_1/b)^2/2` [BS16, Prop. 1.4]; known pure DP, GDP and zCDP by [BS16, Prop. 1.4], [BW18] exactly;
    summed [BS16, Lemma 2.3]. For a release of :func:`accountant.releases.workload.workload_release` with
    Gaussian kinds or discrete Laplace noise this is :func:`accountant.workloads.accounting.workload_rho`
    (Laplace: ``b`` is a float rounded down, so at least it).
    """
    rel = release.base if relation is None else relation
    total = Fraction(0)
    for p in _parts(release):
        law = p.law
        if isinstance(law, KnownGuarantee):
            g = law.guarantee
            if g.relation != rel:
                return None
            if isinstance(g, ZCDP):
                total += Fraction(g.rho)
            elif isinstance(g, PureDP):
                total += Fraction(g.epsilon) ** 2 / 2
            elif isinstance(g, GDP):
                total += Fraction(g.mu) ** 2 / 2
            else:
                return None
            continue
        s = p.shift(rel)
        if s is None:
            return None
        if isinstance(law, GaussianNoise):
            var = law.variance if law.variance is not None else Fraction(law.sigma) ** 2
            total += Fraction(s.l2_squared) / (2 * var)
        elif isinstance(law, DiscreteGaussianNoise):
            total += Fraction(s.l2_squared) / (2 * law.sigma2)
        elif isinstance(law, LaplaceNoise):
            total += (Fraction(s.l1) / Fraction(law.b)) ** 2 / 2
        elif isinstance(law, DiscreteLaplaceNoise):
            total += (Fraction(s.l1) / law.t) ** 2 / 2
        else:
            return None
    return total


def dominating_part(g: Guarantee) -> PLDPart | None:
    """The PLD part of the worst-case mechanism of ``g`` [KOV15, Thm. 2.4], [DRS22, Thm. 2.7]; ``None`` when ``g``
    has no single dominating pair (zCDP, RDP) or is already a curve (f-DP)."""
    if isinstance(g, GDP):
        return GaussianPart(sigma=1.0, sensitivity=g.mu) if g.mu > 0 else ApproxDPPart(0.0, 0.0)
    if isinstance(g, PureDP):
        return ApproxDPPart(g.epsilon, 0.0)
    if isinstance(g, ApproxDP):
        return ApproxDPPart(g.epsilon, g.delta)
    return None


def covering_radius(release: Release) -> int | None:
    """R of a release of one part known on ``SemiAdjacent(base, invariant, R)`` by a result that covers every
    a(t) <= R (:attr:`~accountant.releases.model.KnownGuarantee.covers`); ``None`` otherwise."""
    if release.black_box is not None or len(release.parts) != 1:
        return None
    law = release.parts[0].law
    rel = law.guarantee.relation if isinstance(law, KnownGuarantee) else None
    if not (isinstance(law, KnownGuarantee) and law.covers and isinstance(rel, SemiAdjacent)):
        return None
    return rel.radius if rel.base == release.base and rel.invariant == release.invariant else None


def states_base(release: Release) -> bool:
    """Every part states a guarantee (or a shift) on the release's base relation."""
    return release.black_box is None and all(part_guarantee(p, release.base) is not None for p in release.parts)


@dataclass(frozen=True)
class SemiDPAccount:
    """The Semi-DP guarantee of a release at one radius of a(t) [CA24, Prop. 15; Prop. 21 when composed]."""

    guarantee: Guarantee
    """What holds (for a composed release: each part grouped, then composed, the tighter order)."""
    prop21: Prop21Result | None = None
    """Both orders of a composed release (``None`` for one part)."""


def semi_dp_grouping(release: Release, radius: int, *, covering: bool = True) -> SemiDPAccount | None:
    """The Semi-DP guarantee under the invariant at ``radius`` (an upper bound of a(t) verifies, a proven lower
    bound refutes) [CA24, Prop. 11, 15, 21]; ``None`` when a part is stated on the semi-adjacent relation at
    another radius only (a calibrated mechanism: its privacy map is not regrouped).

    With ``covering``, one part known on semi-adjacent pairs at a radius R >= ``radius``
    (:attr:`~accountant.releases.model.KnownGuarantee.covers`) gives its guarantee as it is: A_radius is a subset
    of A_R [CA24, Def. 14], so it holds (an upper bound, not tight at a smaller radius: ``covering=False`` for a
    refutation's lower end)."""
    semi = SemiAdjacent(release.base, release.invariant, radius)
    parts = _parts(release)
    cover = covering_radius(release)
    if cover is not None:
        law = parts[0].law
        assert isinstance(law, KnownGuarantee)
        return SemiDPAccount(law.guarantee) if cover == radius or (covering and cover > radius) else None
    own = [part_guarantee(p, semi) for p in parts]
    if all(g is not None for g in own) and len(parts) == 1:
        return SemiDPAccount(own[0])  # type: ignore[arg-type]
    if any(part_guarantee(p, release.base) is None for p in parts):
        return None
    base = base_guarantees(release)
    if _single(release):
        return SemiDPAccount(semi_dp(base[0], release.invariant, radius))
    both = semi_dp_composition(base, release.invariant, radius)
    return SemiDPAccount(both.semi_first, both)


def plain_dp(release: Release, space: DataSpace) -> AnyGuarantee:
    """The joint release with the invariant on :math:`(\\mathcal D, A_1)`
    (:func:`accountant.guarantees.semidp.joint_release_dp` of the parts composed on base).

    A part stated only on ``SemiAdjacent(base, invariant, r)`` with ``r >= 1`` is read on base: when the
    invariant is constant on adjacent pairs (the only case with a finite guarantee), every adjacent pair is
    semi-adjacent at distance 1 <= r, so the guarantee holds there too.
    """
    gs = []
    for p in _parts(release):
        g = part_guarantee(p, release.base)
        if g is None:
            semi = [s.relation for s in p.shifts if isinstance(s.relation, SemiAdjacent) and s.relation.radius >= 1] + (
                [p.law.guarantee.relation]
                if isinstance(p.law, KnownGuarantee)
                and isinstance(p.law.guarantee.relation, SemiAdjacent)
                and p.law.guarantee.relation.radius >= 1
                else []
            )
            if not semi:
                raise InvalidArgument(f"part {p.label!r} states no guarantee on base or on a semi-adjacent relation.")
            g = with_relation(_required(p, semi[0]), release.base)
        gs.append(g)
    return joint_release_dp(gs[0] if _single(release) else composed_guarantee(gs), release.invariant, space)


@dataclass(frozen=True)
class Accounting:
    """What a release's interpreters give the report: advertised, effective, and what a refutation may use."""

    advertised: Guarantee
    effective: AnyGuarantee
    """In the framework (Semi-DP: at a(t)'s proven upper bound)."""
    effective_at_lower: AnyGuarantee | None = None
    """Semi-DP with a(t) known by bounds: at its proven lower bound (``None``: not stated, never refuted)."""
    prop21: Prop21Result | None = None
    plain: AnyGuarantee | None = None
    """The joint release on :math:`(\\mathcal D, A_1)` (``None`` for the subspace framework)."""
    advertised_is_effective: bool = False
    """A release with no advertised guarantee and no part on base (e.g. a test known on A_3 only): nothing else
    is advertised, so ``advertised`` is the effective guarantee (reported with the framework)."""


def account(release: Release, framework: str, a: SemiAdjacentParameter, space: DataSpace) -> Accounting:
    """The release's guarantees in ``framework`` (``dp``, ``semi-dp``, ``subspace-dp`` or ``integer-subspace-dp``)
    at a(t) = ``a``.

    Semi-DP uses a(t)'s proven upper bound (sound [CA24, Prop. 11]) and, when a(t) is known only by bounds,
    also its proven lower bound (for refutation). A black box has no guarantee: use :func:`statistical_audit`.
    """
    if release.black_box is not None:
        raise InvalidArgument("a black box has no guarantee to account; only statistical_audit bounds it.")
    if release.advertised is None and not states_base(release):
        return _own_only(release, framework, a)
    adv = advertised(release)
    if framework == "subspace-dp":
        parts = _parts(release)
        sub = [
            p.law.guarantee
            for p in parts
            if isinstance(p.law, KnownGuarantee) and isinstance(p.law.guarantee.relation, Subspace)
        ]
        if len(parts) != 1 or not sub:
            raise UnsupportedRelease("subspace-dp is accounted for one part known by its subspace guarantee.")
        return Accounting(adv, sub[0])
    if framework == "integer-subspace-dp":  # [DGGY23, Def. 2]: equivalent histograms, per unit of the norm
        parts = _parts(release)
        own = [part_guarantee(parts[0], s.relation) for s in parts[0].shifts if isinstance(s.relation, IntegerSubspace)]
        if len(parts) != 1 or len(own) != 1 or own[0] is None:
            raise UnsupportedRelease(
                "integer-subspace-dp is accounted for one part with its shift on one integer subspace relation."
            )
        return Accounting(adv, own[0])
    plain = plain_dp(release, space)
    if framework == "dp":
        return Accounting(adv, plain, plain=plain)
    if framework != "semi-dp":
        raise InvalidArgument(
            f"framework={framework!r}: expected 'dp', 'semi-dp', 'subspace-dp' or 'integer-subspace-dp'."
        )
    upper = semi_dp_grouping(release, a.value)
    if upper is None:
        raise UnsupportedRelease(f"the release states no Semi-DP guarantee at radius {a.value}.")
    lower = None if a.exact else semi_dp_grouping(release, a.lower, covering=False)
    return Accounting(
        adv, upper.guarantee, None if lower is None else lower.guarantee, prop21=upper.prop21, plain=plain
    )


def _own_only(release: Release, framework: str, a: SemiAdjacentParameter) -> Accounting:
    """A release that advertises nothing and states no part on base: its Semi-DP guarantee is all there is
    (advertised and effective alike)."""
    if framework != "semi-dp":
        raise UnsupportedRelease(
            f"the release states no guarantee on {release.base.describe()} and advertises none: it is accounted "
            "in the semi-dp framework only."
        )
    upper = semi_dp_grouping(release, a.value)
    if upper is None:
        raise UnsupportedRelease(f"the release states no Semi-DP guarantee at radius {a.value}.")
    lower = None if a.exact else semi_dp_grouping(release, a.lower, covering=False)
    return Accounting(
        upper.guarantee,
        upper.guarantee,
        None if lower is None else lower.guarantee,
        prop21=upper.prop21,
        advertised_is_effective=True,
    )


@dataclass(frozen=True)
class AuditEvidence:
    """What a statistical audit of a black box found: its decision and its epsilon lower bounds."""

    outcome: Outcome
    """The test's decision (a refutation at its confidence, or not refuted)."""
    epsilon_lower: tuple[tuple[float, float], ...] = ()
    """``(delta, epsilon lower bound)`` per reported delta (at the audit's confidence)."""


@dataclass(frozen=True)
class AuditAccount:
    """A black box's account: a statistical lower bound only, so its claim is refuted or unknown."""

    claim_outcome: Outcome
    """:class:`Refuted` (with confidence, from a proven lower bound) or :class:`Unknown`; never verified."""
    epsilon_lower: tuple[tuple[float, float], ...]
    """``(delta, epsilon lower bound)`` per reported delta (at the audit's confidence)."""


def statistical_audit(release: Release, evidence: AuditEvidence) -> AuditAccount:
    """A black box audited by a statistical test: its refutation stands, anything else is unknown [JUO20, NST21].

    The audit's decision stands only as a refutation; a :class:`Verified` one (which no lower bound can give)
    is reported as :class:`Unknown` rather than trusted.
    """
    outcome = evidence.outcome
    if release.black_box is None:
        raise InvalidArgument("statistical_audit accounts a black box; this release states its parts.")
    kept: Outcome = outcome
    if not isinstance(outcome, (Refuted, Unknown)):  # e.g. Verified: no lower bound can give it
        kept = Unknown(f"a statistical audit bounds privacy loss from below only and never verifies ({outcome})")
    return AuditAccount(kept, tuple((float(d), float(e)) for d, e in evidence.epsilon_lower))


def _single(release: Release) -> bool:
    """One part stated with its advertised guarantee: it stands alone. Parts without one compose as a
    publisher's components do (one pure or approximate DP part too is recorded, for its extra routes)."""
    return len(release.parts) == 1 and release.advertised is not None


def _parts(release: Release) -> tuple[Part, ...]:
    """The release's parts (a black box has none to account)."""
    if release.black_box is not None:
        raise InvalidArgument("a black box has no parts to account; only statistical_audit bounds it.")
    return release.parts


def _part_name(i: int, p: Part) -> str:
    """How a reason names part ``i``: its label, else its position."""
    return repr(p.label) if p.label else f"part {i}"


def upper_bound_only(release: Release) -> str | None:
    """Why the guarantee accounted for ``release`` is an upper bound only, or ``None`` when it is tight for its
    description (house rule: refute only from a proven lower bound). A part whose plugin law says so
    (:attr:`PluginLaw.upper_bound_only`, e.g. MCMC draws charged delta') or whose shift is a bound, not the exact
    sensitivity (:attr:`Shift.exact` false), makes the whole release's guarantee an upper bound."""
    for i, p in enumerate(release.parts):
        name = _part_name(i, p)
        if isinstance(p.law, PluginLaw) and p.law.upper_bound_only:
            return (
                f"{name}: its guarantee is charged for draws within a bounded TV distance of the law (an upper bound)"
            )
        loose = [s for s in p.shifts if not s.exact]
        if loose:
            return f"{name}: its shift on {loose[0].relation.describe()} is an upper bound, not the exact sensitivity"
    return None


def pairs_attained(release: Release, relation: Relation | None = None) -> bool:
    """Whether every pair :func:`pld_counted_parts` accounts ``release`` by on ``relation`` (default: base) is
    attained by a real pair of neighbouring datasets, so that the PLD bracket's lower end bounds the release's
    own profile from below (refutation, design tightness), not only the stand-in pairs'. True for a part that
    does not move, a shift that states its worst pair (:attr:`Shift.coordinates`), and Gaussian noise at an exact
    l2 shift (its privacy loss depends on the shift's l2 norm alone). False for norms that are bounds
    (:attr:`Shift.exact` false), a Laplace law at an exact l1 without its coordinates (its one-coordinate pair
    dominates every split of that l1, ``docs/reference/laplace-l1-dominance.md``, but may not occur), and a part
    accounted by a guarantee's dominating pair."""
    rel = release.base if relation is None else relation
    for p in _parts(release):
        s = p.shift(rel)
        if s is not None and s.l1 == 0 and s.l2_squared == 0:
            continue
        if s is None or not s.exact:
            return False
        if s.coordinates is None and not isinstance(p.law, GaussianNoise):
            return False
    return True


def profile_not_attained(release: Release) -> str | None:
    r"""Why ``release``'s accounted guarantee is attained in its pure :math:`\varepsilon` only, or ``None``: a
    part known by a mechanism's privacy map that its noise does not attain along the
    :math:`(\varepsilon,\delta)` profile (:attr:`KnownGuarantee.pure_only`, e.g. Laplace noise calibrated to
    pure DP, or a plugin law's :attr:`PluginLaw.pure_only`). A claim with :math:`\delta > 0` (or of another
    form) is then not refuted from that guarantee's extreme pair (house rule: refute only from a proven lower
    bound); a pure claim still is."""
    for i, p in enumerate(release.parts):
        if isinstance(p.law, (KnownGuarantee, PluginLaw)) and p.law.pure_only:
            name = _part_name(i, p)
            return f"{name}: {p.law.pure_only}"
    return None


@dataclass(frozen=True)
class BracketAccount:
    """A measurement release accounted at its worst pair on one relation: exact rho and the certified PLD bracket.

    The bracket is composed on :data:`~accountant.workloads.accounting.WORKLOAD_POINTS` grid points and refined
    (:func:`accountant.pld.refine.refine_many`, finer grids of the same measurements) to the relative width
    :data:`~accountant.pld.refine.DEFAULT_REL_WIDTH` where the budget allows (:meth:`evaluated`), and further for a
    claim until it is decided (:meth:`decide_at`). Units: rho in nats (zCDP), epsilon in nats.
    """

    rho: Fraction
    """Exact zCDP of the worst pair, summed over the parts [BS16, Lemma 2.3]."""
    pld: WorkloadBracket | None
    """The certified bracket (``None``: no part changes on the worst pair, or :attr:`pld_unavailable`)."""
    pld_unavailable: str | None = None
    """Why the PLD could not be composed (an extreme noise scale, or the budget), or ``None``; the zCDP stands."""
    set_aside_lines: tuple[int, ...] = ()
    """File lines of the measurements bounded through their (eps0, delta0) guarantee (:class:`SetAsideBracket`)."""
    release: MeasurementRelease | None = None
    """The release, to compose finer grids (``None``: no refinement)."""
    semi_radius: int | None = None
    """The radius of the semi-adjacent relation accounted, or ``None`` for the base relation (advertised)."""
    tight: bool = True
    """Every part states its exact shift on the relation (:attr:`~accountant.releases.model.Shift.exact`), so the
    bracket's lower end is a proven lower bound of the release's epsilon; ``False``: some part is accounted by the
    dominating pair of a bound (Laplace kinds at a(t) = 2: :math:`(4/b, 0)`-DP), so the lower end bounds that pair
    only and refutes nothing."""
    refined: dict[float, RefinedInterval] = field(default_factory=dict, compare=False, repr=False)
    """Epsilon at each delta after :meth:`evaluated`'s refinement."""
    finer: dict[int, tuple[WorkloadBracket, float]] = field(default_factory=dict, compare=False, repr=False)
    """The finest grid composed so far, by grid-points target, with the seconds it took (one entry at most, to
    bound memory; :meth:`decide_at` goes on from where :meth:`evaluated` stopped)."""

    def _compose(self, points: int | None) -> WorkloadBracket:
        if self.pld is None:  # pragma: no cover - callers check
            raise TypeError("no PLD to refine")
        if points is None:
            return next(iter(self.finer.values()))[0] if self.finer else self.pld
        if self.release is None:  # pragma: no cover - refine_many stops at the first grid without the release
            raise TypeError("no release to compose a finer grid of")
        t0 = time.monotonic()
        r = self.release
        b = workload_bracket(list(r.measurements), r.noise, semi_radius=self.semi_radius, points=points)
        if b is None:  # pragma: no cover - the same measurements changed at the first grid
            raise TypeError("workload_bracket returned None on a finer grid")
        self.finer.clear()
        self.finer[points] = (b, time.monotonic() - t0)
        return b

    def _refine(
        self, deltas: Sequence[float], targets: Sequence[float | None], budget: Budget
    ) -> list[RefinedInterval]:
        queries = [(lambda b, d=d: b.epsilon(d)) for d in deltas]
        cap = MAX_POINTS if self.release is not None else WORKLOAD_POINTS  # without the release: the first grid
        start, seconds = next(((p, s) for p, (_, s) in self.finer.items()), (WORKLOAD_POINTS, None))
        out = refine_many(
            self._compose,
            queries,
            targets,
            first_points=start,
            first_seconds=seconds,
            max_points=cap,
            budget=budget,
        )
        return [r if r.points is not None or start == WORKLOAD_POINTS else r._replace(points=start) for r in out]

    def evaluated(self, deltas: Sequence[float], budget: Budget | None = None) -> BracketAccount:
        """``self``, with the PLD's epsilon at every delta computed now and refined to
        :data:`~accountant.pld.refine.DEFAULT_REL_WIDTH` within ``budget`` (default unlimited: the engine's grid
        cap bounds it)."""
        if self.pld is not None and deltas:
            for d, r in zip(deltas, self._refine(deltas, [None] * len(deltas), budget or Budget.unlimited())):
                self.refined[d] = r
        return self

    def decide_at(self, delta: float, claimed: float, budget: Budget) -> RefinedInterval:
        """Epsilon at ``delta``, refined until ``claimed`` lies outside the bracket (decided), the width is met,
        or the grid cap or ``budget`` stops it."""
        if self.pld is None:  # pragma: no cover - callers check
            raise TypeError("no PLD to refine")
        return self._refine([delta], [claimed], budget)[0]


def pld_bracket(
    release: MeasurementRelease, semi_radius: int | None = None, *, skip: str | None = None
) -> BracketAccount:
    """The measurement release at its worst pair: on the base relation (``semi_radius=None``: the advertised
    replace-one pair) or semi-adjacent at ``semi_radius`` in {1, 2} (the query-level worst pair), as exact rho and
    the certified PLD bracket [KOV15, Thm. 2.4]. The release's parts on that relation (:func:`pld_counted_parts`)
    must be the PLD parts of its exact measurements (else :class:`~accountant.core.errors.InvalidArgument`);
    :func:`accountant.workloads.accounting.workload_bracket` then composes them from the exact scales (setting
    aside measurements whose noise lies too far from the others' for one loss grid).

    A noise scale so extreme that even that fails leaves the PLD out, saying why and naming the extreme lines; the
    exact rho and its conversions still stand. ``skip``: leave the PLD out for this reason (a time budget).
    """
    values = list(release.measurements)
    noise = release.noise
    relation = release.base if semi_radius is None else SemiAdjacent(release.base, release.invariant, semi_radius)
    if release.parts and pld_counted_parts(release, relation) != workload_parts(values, noise, semi_radius=semi_radius):
        raise InvalidArgument(
            f"the release's parts on {relation.describe()} are not the PLD parts of its measurements (a release built "
            "other than by accountant.releases.measurements.measurement_release?)."
        )
    rho = workload_rho(values, noise, semi_radius=semi_radius)
    if skip is not None:
        return BracketAccount(rho, None, skip)
    try:
        bracket = workload_bracket(values, noise, semi_radius=semi_radius)
    except InvalidArgument as e:
        lo = min(range(len(values)), key=lambda i: values[i].scale)
        hi = max(range(len(values)), key=lambda i: values[i].scale)
        what = "sigma^2" if noise in GAUSSIAN_NOISES else "scale"
        cause = str(e).split(";")[0].rstrip(".")  # the engine's advice about the grid is not the user's to take
        reason = (
            f"{cause}: noise {what} from {float(values[lo].scale):.4g} (line {release.lines[lo]}) to "
            f"{float(values[hi].scale):.4g} (line {release.lines[hi]}) is too wide a range for one loss grid; the "
            "zCDP values are upper bounds"
        )
        return BracketAccount(rho, None, reason)
    lines = tuple(release.lines[i] for i in bracket.set_aside) if isinstance(bracket, SetAsideBracket) else ()
    tight = pairs_attained(release, relation)
    return BracketAccount(rho, bracket, set_aside_lines=lines, release=release, semi_radius=semi_radius, tight=tight)


__all__ = [
    "BracketAccount",
    "pld_bracket",
    "upper_bound_only",
    "profile_not_attained",
    "pairs_attained",
    "Accounting",
    "AuditAccount",
    "AuditEvidence",
    "SemiDPAccount",
    "account",
    "advertised",
    "base_guarantees",
    "composed_guarantee",
    "covering_radius",
    "states_base",
    "dominating_part",
    "LawInterpreter",
    "part_guarantee",
    "pld_counted_parts",
    "pld_parts",
    "plain_dp",
    "register_law",
    "unregister_law",
    "semi_dp_grouping",
    "statistical_audit",
    "zcdp_exact",
    "zcdp_sum",
]
