r"""Design over a :class:`~accountant.releases.model.Release`'s parameters, with the release interpreters.

The release's noise is scaled by one factor :math:`c`: every part's zCDP budget becomes :math:`c\rho`
(discrete Gaussian and Gaussian of stated variance :math:`\sigma^2\to\sigma^2/c` exactly, otherwise
:math:`\sigma\to\sigma/\sqrt c`, Laplace :math:`b\to b/\sqrt c`, rounded toward less noise: the allocation
kept, as :mod:`accountant.workloads.design` assumes). The search is :func:`accountant.workloads.design.design_scale`
on the PLD parts the interpreter :func:`accountant.releases.accounting.pld_counted_parts` gives at each :math:`c`,
on the relation the target is stated on (the base relation, or ``SemiAdjacent`` at a(t) when the parts state
their shift there); a zCDP target is exact (:func:`accountant.workloads.design.design_scale_zcdp` on
:func:`accountant.releases.accounting.zcdp_exact`). A workload's ``[design]`` (:mod:`verify.design`) is this
search over :func:`accountant.releases.workload.workload_release`. Units: epsilon and rho in nats, delta a
probability.
"""

from __future__ import annotations

import dataclasses
import math
from fractions import Fraction

from semidp.accountant.core.budget import Budget
from semidp.accountant.core.directed import sqrt_up
from semidp.accountant.core.errors import InvalidArgument
from semidp.accountant.guarantees.relations import Relation
from semidp.accountant.pld.parts import PLDPart
from semidp.accountant.releases.accounting import pairs_attained, pld_counted_parts, zcdp_exact, zcdp_sum
from semidp.accountant.releases.model import DiscreteGaussianNoise, GaussianNoise, LaplaceNoise, Part, Release
from semidp.accountant.workloads.design import ScaleDesign, design_scale, design_scale_zcdp


def _less_noise(scale: float, c: Fraction) -> float:
    """``scale / sqrt(c)`` rounded toward less noise (so a design certified on it holds for the exact one)."""
    return math.nextafter(scale / sqrt_up(c), 0.0) if c != 1 else scale


def scaled_release(release: Release, c: Fraction, *, kept: frozenset[int] = frozenset()) -> Release:
    r"""The release with every part's zCDP budget times ``c > 0``, except the parts at the indices ``kept`` (an
    allocation's measurements that move on no worst pair), which keep their noise.

    Exact where the law is: a discrete Gaussian's :math:`\sigma^2` and a Gaussian's stated ``variance`` become
    :math:`\sigma^2/c` exactly (the Gaussian's float ``sigma`` its square root rounded down); otherwise the
    float scale is divided by :math:`\sqrt c` rounded toward less noise. Never less budget than ``c`` times the
    part's: a design certified on the scaled release holds for the exact one. A part known by a guarantee, a
    discrete Laplace law (whose exact rational ``t`` a square root would leave) or a plugin law is refused by name.
    """
    if not c > 0:
        raise InvalidArgument(f"scaled_release: c = {c} must be > 0.")

    def one(p: Part) -> Part:
        if isinstance(p.law, DiscreteGaussianNoise):
            return dataclasses.replace(p, law=DiscreteGaussianNoise(p.law.sigma2 / c))
        if isinstance(p.law, GaussianNoise):
            if p.law.variance is not None:
                return dataclasses.replace(p, law=GaussianNoise.of_variance(p.law.variance / c))
            return dataclasses.replace(p, law=GaussianNoise(_less_noise(p.law.sigma, c)))
        if isinstance(p.law, LaplaceNoise):
            return dataclasses.replace(p, law=LaplaceNoise(_less_noise(p.law.b, c)))
        raise InvalidArgument(
            f"part {p.label!r}: only Gaussian, discrete Gaussian and Laplace noise scales in a design "
            f"({type(p.law).__name__} does not)."
        )

    if release.black_box is not None:
        raise InvalidArgument("a black box has no parameters to design.")
    return dataclasses.replace(release, parts=tuple(p if i in kept else one(p) for i, p in enumerate(release.parts)))


def design_release_scale(
    release: Release,
    *,
    epsilon: float | None = None,
    delta: float | None = None,
    rho: Fraction | None = None,
    relation: Relation | None = None,
    budget: Budget | None = None,
    kept: frozenset[int] = frozenset(),
) -> ScaleDesign:
    """The largest ``c`` whose :func:`scaled_release` (``kept`` parts unscaled) meets the target on ``relation``
    (default: base): an ``(epsilon, delta)`` target by the certified upper end of the PLD bracket of
    :func:`accountant.releases.accounting.pld_counted_parts` (tightness proven by the lower end,
    :func:`accountant.workloads.design.design_scale`, only where those pairs are attained,
    :func:`accountant.releases.accounting.pairs_attained`; else ``tight`` is false), or a zCDP ``rho`` exactly (:func:`zcdp_exact`, else the
    upward-rounded :func:`zcdp_sum`; ``kept`` parts must then not move on ``relation``)."""
    if rho is not None:
        return design_scale_zcdp(_rho_at_one(release, relation, kept), Fraction(rho))
    if epsilon is None or delta is None:
        raise InvalidArgument("design: give epsilon with delta, or rho.")

    def parts_at(c: Fraction) -> list[tuple[PLDPart, int]]:
        parts = pld_counted_parts(scaled_release(release, c, kept=kept), relation)
        if parts is None:
            raise InvalidArgument("design: a part states no shift on the target's relation.")
        return parts

    scaled_release(release, Fraction(1), kept=kept)  # refuse a release without scalable parts before searching
    found = design_scale(parts_at, epsilon=epsilon, delta=delta, budget=budget)
    if found.tight and not pairs_attained(release, relation):  # a stand-in pair's lower end proves nothing here
        return dataclasses.replace(found, tight=False)
    return found


def _rho_at_one(release: Release, relation: Relation | None, kept: frozenset[int]) -> Fraction:
    """The scaled parts' zCDP at ``c = 1`` (exact when the laws are); refuses a kept part that moves."""

    def rho_of(parts: tuple[Part, ...]) -> Fraction | None:
        sub = dataclasses.replace(release, parts=parts, advertised=None)
        exact = zcdp_exact(sub, relation)
        if exact is not None:
            return exact
        z = zcdp_sum(sub, relation)
        return None if z is None else Fraction(z.rho)

    if kept:
        still = tuple(p for i, p in enumerate(release.parts) if i in kept)
        if rho_of(still) != 0:
            raise InvalidArgument("design: a part kept out of the scaling moves on the target's relation.")
        release = dataclasses.replace(release, parts=tuple(p for i, p in enumerate(release.parts) if i not in kept))
    r = rho_of(release.parts)
    if r is None:
        raise InvalidArgument("design: a part has no zCDP form; give an (epsilon, delta) target.")
    return r


__all__ = ["design_release_scale", "scaled_release"]
