r"""Design over a :class:`~accountant.releases.model.Release`'s parameters, with the release interpreters.

The release's noise is scaled by one factor :math:`c`: every part's zCDP budget becomes :math:`c\rho`
(Gaussian :math:`\sigma\to\sigma/\sqrt c`, Laplace :math:`b\to b/\sqrt c`: the allocation kept, as
:mod:`accountant.workloads.design` assumes). The search is :func:`accountant.workloads.design.design_scale` on the PLD parts
the interpreter :func:`accountant.releases.accounting.pld_parts` gives at each :math:`c`, on the relation the
target is stated on (the base relation, or ``SemiAdjacent`` at a(t) when the parts state their shift
there); a zCDP target is exact (:func:`accountant.workloads.design.design_scale_zcdp` on
:func:`accountant.releases.accounting.zcdp_sum`). Units: epsilon and rho in nats, delta a probability.
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
from semidp.accountant.releases.accounting import pld_parts, zcdp_sum
from semidp.accountant.releases.model import GaussianNoise, LaplaceNoise, Part, Release
from semidp.accountant.workloads.design import ScaleDesign, design_scale, design_scale_zcdp


def _less_noise(scale: float, c: Fraction) -> float:
    """``scale / sqrt(c)`` rounded toward less noise (so a design certified on it holds for the exact one)."""
    return math.nextafter(scale / sqrt_up(c), 0.0) if c != 1 else scale


def scaled_release(release: Release, c: Fraction) -> Release:
    """The release with every part's zCDP budget times ``c > 0`` (noise scales divided by sqrt(c), rounded down).

    Only parts with a continuous Gaussian or Laplace law scale; a part known by a guarantee (or with a discrete
    law, whose exact rational scale a square root would leave) is refused by name.
    """
    if not c > 0:
        raise InvalidArgument(f"scaled_release: c = {c} must be > 0.")

    def one(p: Part) -> Part:
        if isinstance(p.law, GaussianNoise):
            return dataclasses.replace(p, law=GaussianNoise(_less_noise(p.law.sigma, c)))
        if isinstance(p.law, LaplaceNoise):
            return dataclasses.replace(p, law=LaplaceNoise(_less_noise(p.law.b, c)))
        raise InvalidArgument(
            f"part {p.label!r}: only Gaussian and Laplace noise scales in a design ({type(p.law).__name__} does not)."
        )

    if release.black_box is not None:
        raise InvalidArgument("a black box has no parameters to design.")
    return dataclasses.replace(release, parts=tuple(one(p) for p in release.parts))


def design_release_scale(
    release: Release,
    *,
    epsilon: float | None = None,
    delta: float | None = None,
    rho: Fraction | None = None,
    relation: Relation | None = None,
    budget: Budget | None = None,
) -> ScaleDesign:
    """The largest ``c`` whose :func:`scaled_release` meets the target on ``relation`` (default: base): an
    ``(epsilon, delta)`` target by the certified upper end of the PLD bracket (tightness proven by the lower
    end, :func:`accountant.workloads.design.design_scale`), or a zCDP ``rho`` exactly."""
    if rho is not None:
        z = zcdp_sum(release, relation)
        if z is None:
            raise InvalidArgument("design: a part has no zCDP form; give an (epsilon, delta) target.")
        return design_scale_zcdp(Fraction(z.rho), Fraction(rho))
    if epsilon is None or delta is None:
        raise InvalidArgument("design: give epsilon with delta, or rho.")

    def parts_at(c: Fraction) -> list[tuple[PLDPart, int]]:
        parts = pld_parts(scaled_release(release, c), relation)
        if parts is None:
            raise InvalidArgument("design: a part states no shift on the target's relation.")
        return [(p, 1) for p in parts]

    scaled_release(release, Fraction(1))  # refuse a release without scalable parts before searching
    return design_scale(parts_at, epsilon=epsilon, delta=delta, budget=budget)


__all__ = ["design_release_scale", "scaled_release"]
