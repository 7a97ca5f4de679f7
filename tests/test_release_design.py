"""Design over a Release's parameters with the release interpreters (accountant.releases.design, Step 14.1)."""

from __future__ import annotations

import math
from fractions import Fraction

import pytest

from semidp.accountant.core.errors import InvalidArgument
from semidp.accountant.data.invariants import Margins, Total
from semidp.accountant.guarantees.definitions import PureDP
from semidp.accountant.guarantees.relations import Replace, SemiAdjacent
from semidp.accountant.pld.parts import PLDPart
from semidp.accountant.profiles.gaussian import gdp_mu_for
from semidp.accountant.releases.accounting import part_guarantee, zcdp_exact, zcdp_sum
from semidp.accountant.releases.design import design_release_scale, scaled_release
from semidp.accountant.releases.model import (
    DiscreteGaussianNoise,
    DiscreteLaplaceNoise,
    GaussianNoise,
    KnownGuarantee,
    LaplaceNoise,
    Part,
    Release,
    Shift,
)
from semidp.accountant.releases.workload import workload_relation, workload_release
from semidp.accountant.workloads.accounting import WorkloadMeasurement, workload_parts, workload_rho
from semidp.accountant.workloads.design import design_scale
from semidp.verify.design import scaled

R = Replace()
STATE = Margins((("state",),))


def test_gaussian_design_matches_the_closed_form() -> None:
    """One Gaussian part (sigma 1, l2 shift 1): the largest c has sqrt(c) = the mu of (1, 1e-6) [BW18, Thm. 8],
    within the design tolerance, and is proven tight."""
    rel = Release(R, Total(), (Part(GaussianNoise(1.0), (Shift(R, 1.0, 1.0),)),))
    d = design_release_scale(rel, epsilon=1.0, delta=1e-6)
    assert d.met and d.tight and d.scale is not None
    mu = gdp_mu_for(1.0, 1e-6)
    assert math.sqrt(d.scale) <= mu * (1 + 1e-9) and math.sqrt(d.scale * (1 + 2 * d.rel_tol)) > mu
    assert d.achieved is not None and d.achieved.upper <= 1.0


def test_semi_dp_design_uses_the_shift_at_a_t() -> None:
    """The same part stated at a(t) = 2 with a shift twice as large: the designed budget is a quarter."""
    semi = SemiAdjacent(R, STATE, 2)
    part = Part(GaussianNoise(1.0), (Shift(R, 1.0, 1.0), Shift(semi, 2.0, 4.0)))
    rel = Release(R, STATE, (part,))
    base = design_release_scale(rel, rho=Fraction(1, 2))
    at_a = design_release_scale(rel, rho=Fraction(1, 2), relation=semi)
    assert base.scale == 1 and at_a.scale == Fraction(1, 4)  # rho = c l2^2 / (2 sigma^2), exact
    z0 = zcdp_sum(rel, semi)
    assert z0 is not None and z0.rho * at_a.scale == 0.5  # the exact design: rho(c) = c rho(1)
    z = zcdp_sum(scaled_release(rel, Fraction(1, 4)), semi)  # the noise rounded toward less noise: a few ulps over
    assert z is not None and 0.5 <= z.rho <= 0.5 * (1 + 1e-12)


def test_scaling_rounds_toward_less_noise_and_refuses_what_does_not_scale() -> None:
    part = Part(LaplaceNoise(2.0), (Shift(R, 1.0, 1.0),))
    s = scaled_release(Release(R, Total(), (part,)), Fraction(3))
    law = s.parts[0].law
    assert isinstance(law, LaplaceNoise) and law.b <= 2.0 / math.sqrt(3)
    g = part_guarantee(s.parts[0], R)
    assert isinstance(g, PureDP) and g.epsilon >= math.sqrt(3) / 2
    known = Release(R, Total(), (Part(KnownGuarantee(PureDP(1.0, R))),))
    with pytest.raises(InvalidArgument, match="only Gaussian, discrete Gaussian and Laplace noise scales"):
        design_release_scale(known, epsilon=1.0, delta=1e-6)
    with pytest.raises(InvalidArgument, match="c = 0 must be > 0"):
        scaled_release(Release(R, Total(), (part,)), Fraction(0))


def test_exact_laws_scale_exactly_and_kept_parts_keep_their_noise() -> None:
    """Discrete Gaussian sigma^2 and a stated Gaussian variance become sigma^2 / c exactly; ``kept`` parts stay."""
    parts = (
        Part(DiscreteGaussianNoise(Fraction(7, 3)), (Shift.of_coordinates(R, (1, 1)),), label="dg"),
        Part(GaussianNoise.of_variance(Fraction(5, 2)), (Shift.of_coordinates(R, (1, 1)),), label="g"),
        Part(DiscreteGaussianNoise(Fraction(2)), (Shift.of_coordinates(R, (1, 1)),), label="kept"),
    )
    s = scaled_release(Release(R, Total(), parts), Fraction(3, 2), kept=frozenset({2}))
    dg, g, kept = (p.law for p in s.parts)
    assert dg == DiscreteGaussianNoise(Fraction(14, 9))
    assert (
        isinstance(g, GaussianNoise) and g.variance == Fraction(5, 3) and g == GaussianNoise.of_variance(Fraction(5, 3))
    )
    assert kept == DiscreteGaussianNoise(Fraction(2))
    assert zcdp_exact(s) == Fraction(9, 14) + Fraction(3, 5) + Fraction(1, 2)
    with pytest.raises(InvalidArgument, match="DiscreteLaplaceNoise does not"):
        scaled_release(
            Release(R, Total(), (Part(DiscreteLaplaceNoise(Fraction(2)), (Shift(R, 1.0, 1.0),)),)), Fraction(2)
        )


@pytest.mark.parametrize(("noise", "radius"), [("discrete-gaussian", 2), ("gaussian", 1), ("discrete-gaussian", None)])
def test_workload_release_design_is_the_workload_design(noise: str, radius: int | None) -> None:
    """The design over workload_release's parameters is the search over workload_parts, probe for probe (the
    same c, the same certified brackets): what keeps the shipped design reports byte-identical."""
    ms = [
        WorkloadMeasurement("a", Fraction(3, 2)),
        WorkloadMeasurement("b", Fraction(5), fixed=True),
        WorkloadMeasurement("c", Fraction(9, 4)),
    ]
    kept = frozenset({1}) if radius is not None else frozenset()
    release = workload_release(ms, noise, radius, invariant=STATE)
    on = workload_relation(release, radius)
    got = design_release_scale(release, epsilon=4.0, delta=1e-6, relation=on, kept=kept)

    def parts_at(c: Fraction) -> list[tuple[PLDPart, int]]:
        return workload_parts(scaled(ms, c, kept), noise, semi_radius=radius)

    want = design_scale(parts_at, epsilon=4.0, delta=1e-6)
    assert got.scale is not None and got.scale == want.scale and got.tight == want.tight
    assert [(p.scale, p.bracket) for p in got.probes] == [(p.scale, p.bracket) for p in want.probes]
    exact = design_release_scale(release, rho=Fraction(1, 2), relation=on, kept=kept)
    assert exact.scale == Fraction(1, 2) / workload_rho(ms, noise, semi_radius=radius)


def test_a_kept_part_that_moves_is_refused_in_a_zcdp_design() -> None:
    """The zCDP design is c times the scaled parts' rho: a kept part that moves would be left out of it."""
    ms = [WorkloadMeasurement("a", Fraction(3, 2)), WorkloadMeasurement("b", Fraction(5))]
    release = workload_release(ms, "discrete-gaussian", None, invariant=STATE)
    with pytest.raises(InvalidArgument, match="kept out of the scaling moves"):
        design_release_scale(release, rho=Fraction(1), kept=frozenset({1}))
