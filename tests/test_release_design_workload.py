"""A measurement workload as a Release (accountant.releases.workload, Step 14.1): per-coordinate shifts give
exactly the PLD parts and the zCDP of accountant.workloads.accounting, on the census files and at random."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from semidp.accountant.core.errors import InvalidArgument
from semidp.accountant.data.invariants import Margins, Total
from semidp.accountant.guarantees.relations import Replace, SemiAdjacent
from semidp.accountant.pld.parts import ApproxDPPart, DiscreteGaussianPart, GaussianPart, LaplacePart
from semidp.accountant.releases.accounting import (
    pld_counted_parts,
    pld_parts,
    upper_bound_only,
    zcdp_exact,
    zcdp_sum,
)
from semidp.accountant.releases.model import DiscreteGaussianNoise, GaussianNoise, LaplaceNoise, Part, Release, Shift
from semidp.accountant.releases.workload import workload_relation, workload_release
from semidp.accountant.workloads.accounting import NOISES, WorkloadMeasurement, workload_parts, workload_rho
from semidp.verify.kinds.published import PublishedSpec
from semidp.verify.load import load
from semidp.verify.workload_spec import read_measurements

R = Replace()
STATE = Margins((("state",),))
SPECS = Path(__file__).resolve().parent.parent / "specs"
RADII = (None, 0, 1, 2)


def _census(name: str) -> tuple[list[WorkloadMeasurement], str]:
    spec = load(SPECS / name)
    m = spec.mechanism
    assert isinstance(m, PublishedSpec) and m.measurements is not None and m.noise is not None
    noise: str = m.noise
    ms, probs = read_measurements(spec, m.measurements, noise)
    assert not probs
    return [x.accountant_value() for x in ms], noise


def _same(ms: list[WorkloadMeasurement], noise: str, radius: int | None) -> None:
    rel = workload_release(ms, noise, radius, invariant=STATE)
    on = workload_relation(rel, radius)
    assert pld_counted_parts(rel, on) == workload_parts(ms, noise, semi_radius=radius)
    rho = zcdp_exact(rel, on)
    assert rho is not None
    want = workload_rho(ms, noise, semi_radius=radius)
    if noise == "laplace":  # b is a float rounded down: at least the exact rho, within rounding
        assert want <= rho <= want * (1 + Fraction(1, 10**12))
    else:
        assert rho == want


@pytest.mark.parametrize(
    "name",
    [
        "census-2020-pl94-persons-us.toml",
        "census-2020-pl94-units-us.toml",
        "census-2020-dhc-persons-us.toml",
        "census-2020-dhc-units-pr.toml",
    ],
)
def test_census_files_give_the_workload_parts(name: str) -> None:
    """Every shipped census measurement file, every radius: the same parts and the same exact rho; some of its
    measurements are fixed by the invariant, so a(t) = 1 and 2 drop them as workload_parts does."""
    ms, noise = _census(name)
    assert noise == "discrete-gaussian" and len(ms) > 5
    for r in RADII:
        _same(ms, noise, r)
    for other in NOISES:  # the same scales read as another noise's parameter
        for r in RADII:
            _same(ms, other, r)
    at2 = pld_counted_parts(workload_release(ms, noise, 2, invariant=STATE), SemiAdjacent(R, STATE, 2))
    assert at2 is not None and all(
        isinstance(p, DiscreteGaussianPart) and p.sensitivity == 2 and n == 2 for p, n in at2
    )


_scales = st.fractions(min_value=Fraction(1, 1000), max_value=Fraction(10**6), max_denominator=10**6)
_measurements = st.lists(
    st.builds(WorkloadMeasurement, st.text(max_size=3), _scales.filter(lambda x: x > 0), st.booleans()),
    min_size=1,
    max_size=6,
)


@settings(max_examples=60, deadline=None)
@given(_measurements, st.sampled_from(NOISES), st.sampled_from(RADII))
def test_any_workload_gives_the_workload_parts(ms: list[WorkloadMeasurement], noise: str, radius: int | None) -> None:
    _same(ms, noise, radius)


def test_coordinates_state_the_worst_pair() -> None:
    """(1, 1) on base: two Gaussian parts of shift 1, grouped; () moves nothing; the norms must match."""
    s = Shift.of_coordinates(R, (1, 1))
    assert (s.l1, s.l2_squared, s.coordinates) == (2.0, 2.0, (1, 1))
    rel = Release(
        R, Total(), (Part(GaussianNoise(2.0), (s,)), Part(LaplaceNoise(3.0), (Shift.of_coordinates(R, (2, 1)),)))
    )
    assert pld_counted_parts(rel) == [
        (GaussianPart(2.0, 1.0), 2),
        (LaplacePart(3.0, 2.0), 1),
        (LaplacePart(3.0, 1.0), 1),
    ]
    assert pld_parts(rel) == [
        GaussianPart(2.0, 1.0),
        GaussianPart(2.0, 1.0),
        LaplacePart(3.0, 2.0),
        LaplacePart(3.0, 1.0),
    ]
    # without coordinates the vector query is one Gaussian of the l2 norm (the old reading), same profile
    plain = Release(R, Total(), (Part(GaussianNoise(2.0), (Shift(R, 2.0, 2.0),)),))
    p = pld_parts(plain)
    assert p is not None and len(p) == 1 and isinstance(p[0], GaussianPart) and p[0].sensitivity >= 2**0.5
    none = Release(R, Total(), (Part(GaussianNoise(2.0), (Shift.of_coordinates(R, ()),)),))
    assert pld_counted_parts(none) == [] and zcdp_exact(none) == 0
    with pytest.raises(InvalidArgument, match="l1 = 2 and l2_squared = 2"):
        Shift(R, 2.0, 4.0, coordinates=(1, 1))
    with pytest.raises(InvalidArgument, match="Shift.coordinates must be"):
        Shift(R, 0.0, 0.0, coordinates=(0,))
    dg = Release(R, Total(), (Part(DiscreteGaussianNoise(Fraction(4)), (Shift.of_coordinates(R, (0.5, 0.5)),)),))
    with pytest.raises(InvalidArgument, match="discrete law shifts by integers"):
        pld_counted_parts(dg)


def test_gaussian_variance_is_exact_and_never_claims_more_noise() -> None:
    law = GaussianNoise.of_variance(Fraction(1, 3))
    assert law.variance == Fraction(1, 3) and Fraction(law.sigma) ** 2 <= Fraction(1, 3)
    with pytest.raises(InvalidArgument, match="exceeds the square root of variance"):
        GaussianNoise(1.0, Fraction(1, 2))
    rel = Release(R, Total(), (Part(law, (Shift.of_coordinates(R, (1, 1)),)),))
    assert zcdp_exact(rel) == 3  # 2 / (2 * 1/3)
    z = zcdp_sum(rel)
    assert z is not None and 3 <= z.rho <= 3 * (1 + 1e-12)  # the float route, rounded up


def test_laplace_at_radius_two_is_an_upper_bound() -> None:
    """Laplace kinds at a(t) = 2: the (4/b, 0)-DP dominating pair, labelled an upper bound (never refutes)."""
    ms = [WorkloadMeasurement("m", Fraction(2))]
    rel = workload_release(ms, "laplace", 2, invariant=STATE)
    parts = pld_counted_parts(rel, SemiAdjacent(R, STATE, 2))
    assert parts is not None and len(parts) == 1 and isinstance(parts[0][0], ApproxDPPart)
    assert parts[0][0].epsilon >= 2.0 and parts[0][1] == 1
    assert upper_bound_only(rel) is not None
    assert upper_bound_only(workload_release(ms, "discrete-gaussian", 2, invariant=STATE)) is None


def test_builder_refuses_what_the_analysis_does_not_cover() -> None:
    ms = [WorkloadMeasurement("m", Fraction(2))]
    with pytest.raises(InvalidArgument, match="covers a\\(t\\) <= 2"):
        workload_release(ms, "gaussian", 3, invariant=STATE)
    with pytest.raises(InvalidArgument, match="noise='normal'"):
        workload_release(ms, "normal", None, invariant=STATE)
    with pytest.raises(InvalidArgument, match="no measurement"):
        workload_release([], "gaussian", None, invariant=STATE)
