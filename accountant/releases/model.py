r"""A release described as data: what was published, by which noise, and how far the query moves.

The idea of ``dp_accounting``'s ``DpEvent`` (a mechanism described as a value that accountants
interpret), extended by the invariant published exactly next to the noisy parts [CA24]. A
:class:`Release` holds

* its :class:`Part`\ s: each a query answered with a noise law (:class:`GaussianNoise`
  :math:`\sigma`, :class:`LaplaceNoise` :math:`b`, :class:`DiscreteGaussianNoise`
  :math:`\sigma^2`, :class:`DiscreteLaplaceNoise` :math:`t`) or known only by a guarantee
  (:class:`KnownGuarantee`: a published :math:`(\varepsilon_0,\delta_0)`, a zCDP :math:`\rho`, a
  calibrated mechanism's privacy map on the semi-adjacent relation), and the query's
  :class:`Shift` on the worst pair of each relation it was measured under (the base relation,
  ``SemiAdjacent`` at a(t)); or
* a :class:`BlackBox`: code whose output law nobody states. It has no guarantee; only a
  statistical audit bounds it from below, so a claim on it may be refuted and never verified.

Nothing here computes a guarantee: :mod:`accountant.releases.accounting` interprets a release
(zCDP sum, PLD bracket, Semi-DP grouping under the invariant, statistical audit). Units: noise
scales in the query's units; shifts are norms of a difference of query answers (counts).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Union

from semidp.accountant.core.directed import down_exact
from semidp.accountant.core.errors import InvalidArgument
from semidp.accountant.data.invariants import Invariant
from semidp.accountant.guarantees.definitions import Guarantee
from semidp.accountant.guarantees.relations import BaseRelation, IntegerSubspace, Relation, SemiAdjacent, Subspace


def _positive(name: str, value: float | Fraction) -> None:
    """Refuse a scale that is not a finite number > 0 (names the field)."""
    if not (isinstance(value, (int, float, Fraction)) and math.isfinite(float(value)) and value > 0):
        raise InvalidArgument(f"{name} must be a finite number > 0, got {value!r}.")


@dataclass(frozen=True, slots=True)
class GaussianNoise:
    r"""i.i.d. :math:`N(0,\sigma^2)` added to every coordinate of the query [DR14, Thm. A.1]."""

    sigma: float
    """Standard deviation (query units, > 0)."""
    variance: Fraction | None = None
    r"""The exact variance :math:`\sigma^2` when the publisher states one (e.g. a workload's ``1/rho``); ``sigma``
    is then at most its square root (:meth:`of_variance`: rounded down, toward less noise), and the exact zCDP
    (:func:`accountant.releases.accounting.zcdp_exact`) and a design's scaling read the variance."""

    def __post_init__(self) -> None:
        _positive("GaussianNoise.sigma", self.sigma)
        if self.variance is not None:
            _positive("GaussianNoise.variance", self.variance)
            if Fraction(self.sigma) ** 2 > self.variance:
                raise InvalidArgument(
                    f"GaussianNoise.sigma = {self.sigma!r} exceeds the square root of variance = {self.variance} "
                    "(the float must not claim more noise than the exact law)."
                )

    @classmethod
    def of_variance(cls, variance: Fraction) -> GaussianNoise:
        """The law of exact ``variance`` (> 0): ``sigma`` is its square root rounded down (less noise:
        conservative), as :func:`accountant.workloads.accounting.workload_parts` rounds it."""
        _positive("GaussianNoise.variance", variance)
        return cls(math.nextafter(math.sqrt(down_exact(Fraction(variance))), 0.0), Fraction(variance))


@dataclass(frozen=True, slots=True)
class LaplaceNoise:
    r"""i.i.d. :math:`\mathrm{Lap}(b)` added to every coordinate of the query [DR14, Thm. 3.6]."""

    b: float
    """Scale (query units, > 0)."""

    def __post_init__(self) -> None:
        _positive("LaplaceNoise.b", self.b)


@dataclass(frozen=True, slots=True)
class DiscreteGaussianNoise:
    r"""i.i.d. discrete Gaussian :math:`N_{\mathbb Z}(0,\sigma^2)` on an integer query [CKS20, Def. 1]."""

    sigma2: Fraction
    """Variance parameter :math:`\\sigma^2` (exact, > 0)."""

    def __post_init__(self) -> None:
        _positive("DiscreteGaussianNoise.sigma2", self.sigma2)


@dataclass(frozen=True, slots=True)
class DiscreteLaplaceNoise:
    r"""i.i.d. discrete Laplace :math:`\Pr[X=x]\propto e^{-|x|/t}` on an integer query [CKS20, Sec. 2]."""

    t: Fraction
    """Scale (exact, > 0)."""

    def __post_init__(self) -> None:
        _positive("DiscreteLaplaceNoise.t", self.t)


@dataclass(frozen=True, slots=True)
class KnownGuarantee:
    """A part known only by a guarantee (a published one, or a mechanism's privacy map), on its relation."""

    guarantee: Guarantee
    covers: str = ""
    """For a guarantee on semi-adjacent pairs at a fixed radius R (not at the table's a(t)): the result that proves
    a(t) <= R wherever the invariant allows it (reported; [CA24, Thm. 37] for the odds-ratio test); the runner then checks
    a(t) <= R, and the guarantee holds on every smaller radius (A_r is a subset of A_R [CA24, Def. 14])."""
    pure_only: str = ""
    r"""For a mechanism's privacy map that is attained in its pure :math:`\varepsilon` but not along the
    :math:`(\varepsilon, \delta)` profile of the guarantee's extreme pair: why (``""``: attained, or a
    published guarantee judged as stated). Laplace-type noise calibrated to :math:`\varepsilon`-DP has privacy
    losses up to :math:`\varepsilon` on its worst pair, so no smaller pure epsilon holds, but its
    :math:`\delta(\varepsilon')` lies below randomized response's [KOV15, Thm. 2.4 attains it]; such a
    guarantee refutes a pure claim only (:func:`accountant.releases.accounting.profile_not_attained`)."""


#: The reason :attr:`KnownGuarantee.pure_only` / :attr:`PluginLaw.pure_only` give for Laplace-type noise.
PURE_ONLY_NOISE = (
    "its noise attains the pure epsilon of its guarantee, not the (epsilon, delta) profile of that guarantee's extreme "
    "pair (randomized response or the four-point mechanism)"
)


class PluginLaw:
    """Base of a noise law defined outside semidp (a frozen dataclass subclassing it): its interpreter is
    registered with :func:`accountant.releases.accounting.register_law` (a kind plus its law is one module)."""

    __slots__ = ()

    @property
    def upper_bound_only(self) -> bool:
        """Whether the guarantee its interpreter gives is an upper bound only (e.g. draws within a bounded TV
        distance of the law, charged as delta'): such a guarantee may verify a claim but never refutes one."""
        return False

    @property
    def pure_only(self) -> str:
        """Why the guarantee its interpreter gives is attained in its pure epsilon only, not along the (epsilon,
        delta) profile of that guarantee's extreme pair (as :attr:`KnownGuarantee.pure_only`); ``""``: attained."""
        return ""


NoiseLaw = Union[GaussianNoise, LaplaceNoise, DiscreteGaussianNoise, DiscreteLaplaceNoise, KnownGuarantee, PluginLaw]
"""How a part's answer is randomised, or the guarantee it is known by."""


@dataclass(frozen=True, slots=True)
class Shift:
    r"""The query's shift on the worst pair of ``relation``: :math:`\max\|q(x)-q(x')\|` in l1 and l2.

    ``exact`` is ``False`` when the norms are upper bounds only (e.g. a closed-form superset of
    the sensitivity space); an interpreter then accounts from the bound (sound) and says so.

    ``coordinates`` states the worst pair itself: the absolute shift of each coordinate that moves, e.g.
    ``(1, 1)`` for a histogram under replace-one (one record leaves a cell and enters another), ``(2, 2)`` for
    a workload measurement at a(t) = 2 (:mod:`accountant.workloads.accounting`), ``()`` for a query the pairs
    do not move. Stating it claims that this one pair is the worst for every measure (its privacy-loss
    distribution dominates every pair's), so a PLD interpreter composes one part per coordinate (the noise is
    independent per coordinate [KOV15, Thm. 2.4]); ``None`` (default) states the norms only. The norms must be
    those of the coordinates.
    """

    relation: Relation
    l1: float
    """Largest l1 norm of a shift (counts, >= 0)."""
    l2_squared: float
    """Largest squared l2 norm of a shift (counts^2, >= 0; squared so integer spaces stay exact)."""
    exact: bool = True
    coordinates: tuple[float, ...] | None = None
    """Absolute shifts of the worst pair's moving coordinates (counts, each > 0), or ``None`` (not stated)."""

    def __post_init__(self) -> None:
        for name, v in (("Shift.l1", self.l1), ("Shift.l2_squared", self.l2_squared)):
            if not (isinstance(v, (int, float)) and math.isfinite(v) and v >= 0):
                raise InvalidArgument(f"{name} must be a finite number >= 0, got {v!r}.")
        if self.coordinates is None:
            return
        if not isinstance(self.coordinates, tuple) or not all(
            isinstance(c, (int, float)) and not isinstance(c, bool) and math.isfinite(c) and c > 0
            for c in self.coordinates
        ):
            raise InvalidArgument(
                f"Shift.coordinates must be a tuple of finite numbers > 0 (the moving coordinates), "
                f"got {self.coordinates!r}."
            )
        l1 = sum((Fraction(c) for c in self.coordinates), Fraction(0))
        l2sq = sum((Fraction(c) ** 2 for c in self.coordinates), Fraction(0))
        if l1 != Fraction(self.l1) or l2sq != Fraction(self.l2_squared):
            raise InvalidArgument(
                f"Shift.coordinates {self.coordinates!r} have l1 = {l1} and l2_squared = {l2sq}, not the shift's "
                f"l1 = {self.l1!r} and l2_squared = {self.l2_squared!r}."
            )

    @classmethod
    def of_coordinates(cls, relation: Relation, coordinates: tuple[float, ...], *, exact: bool = True) -> Shift:
        """The shift of the worst pair whose moving coordinates shift by ``coordinates`` (norms computed)."""
        c = tuple(coordinates)
        l1 = sum((Fraction(x) for x in c), Fraction(0))
        l2sq = sum((Fraction(x) ** 2 for x in c), Fraction(0))
        return cls(relation, float(l1), float(l2sq), exact, c)

    @property
    def l2(self) -> float:
        """Largest l2 norm of a shift."""
        return math.sqrt(self.l2_squared)


@dataclass(frozen=True, slots=True)
class Part:
    """One released query: its noise law (or the guarantee it is known by) and its shifts per relation."""

    law: NoiseLaw
    shifts: tuple[Shift, ...] = ()
    label: str = ""
    """What the part is (reported; e.g. ``"component 2"``)."""

    def __post_init__(self) -> None:
        if not isinstance(self.law, KnownGuarantee) and not self.shifts:
            raise InvalidArgument(f"Part {self.label!r}: a noise law needs the query's shift on some relation.")
        rels = [s.relation for s in self.shifts]
        if len(set(map(repr, rels))) != len(rels):
            raise InvalidArgument(f"Part {self.label!r}: one shift per relation, got {len(rels)} for fewer relations.")

    def shift(self, relation: Relation) -> Shift | None:
        """The shift on ``relation``, if the part states it."""
        return next((s for s in self.shifts if s.relation == relation), None)


@dataclass(frozen=True, slots=True)
class BlackBox:
    """Code whose output law is not stated (``mechanism.kind = "implementation"``).

    It has no guarantee: ``claim`` is what the spec claims for it, reported as a claim; only a
    statistical audit bounds its privacy loss from below.
    """

    claim: Guarantee
    code: str
    """The audited callable (``module:function``), reported."""


@dataclass(frozen=True, slots=True)
class Release:
    """What was published: noisy parts (or a black box) next to the exact ``invariant`` [CA24, Sec. 3].

    ``advertised`` is the publisher's stated guarantee or the calibration target, reported as
    given; ``None`` means the composition of the parts on ``base``.
    """

    base: BaseRelation
    invariant: Invariant
    parts: tuple[Part, ...] = ()
    black_box: BlackBox | None = None
    advertised: Guarantee | None = None

    def __post_init__(self) -> None:
        if (self.black_box is None) == (not self.parts):
            raise InvalidArgument("Release: give its parts or a black box, exactly one of them.")
        for p in self.parts:
            for rel in [s.relation for s in p.shifts] + (
                [p.law.guarantee.relation] if isinstance(p.law, KnownGuarantee) else []
            ):
                if not _on(rel, self.base, self.invariant):
                    raise InvalidArgument(
                        f"Release: part {p.label!r} is stated on {rel.describe()}, not on the release's base "
                        f"relation {self.base.describe()}, its semi-adjacent relation under the invariant, subspace DP on it "
                        "or integer subspace DP."
                    )

    @property
    def is_black_box(self) -> bool:
        """Only a statistical audit can bound it (no guarantee)."""
        return self.black_box is not None


def _on(rel: Relation, base: BaseRelation, invariant: Invariant) -> bool:
    """``rel`` is ``base``, ``SemiAdjacent(base, invariant, r)`` for some radius r, subspace DP on ``base``, or
    equivalent histograms under counting totals (:class:`IntegerSubspace`, [DGGY23, Def. 2])."""
    if isinstance(rel, SemiAdjacent):
        return rel.base == base and rel.invariant == invariant
    if isinstance(rel, Subspace):  # [GGY22]: the invariant's row space published exactly, on base pairs
        return rel.base == base
    if isinstance(rel, IntegerSubspace):  # [DGGY23]: histograms with the same counting totals, by their norm
        return True
    return rel == base


__all__ = [
    "BlackBox",
    "DiscreteGaussianNoise",
    "DiscreteLaplaceNoise",
    "GaussianNoise",
    "KnownGuarantee",
    "PURE_ONLY_NOISE",
    "LaplaceNoise",
    "NoiseLaw",
    "PluginLaw",
    "Part",
    "Release",
    "Shift",
]
