"""Exact privacy profile of the 1-D discrete Gaussian (CKS20 Thm. 7;
docs/reference/subspace-integer-postprocessing.md §3.5, target T-S2)."""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import mpmath
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from semidp.accountant.core.errors import InvalidArgument, SearchTooLarge
from semidp.accountant.guarantees.conversions import zcdp_to_delta
from semidp.accountant.guarantees.definitions import ZCDP
from semidp.accountant.profiles.discrete_gaussian_dp import (
    discrete_gaussian_delta,
    discrete_gaussian_delta_lower,
    discrete_gaussian_epsilon,
)
from semidp.accountant.profiles.gaussian import gdp_delta

MPB = mpmath.MPContext()
MPB.dps = 60


def brute_force_delta(eps: float, sigma2: Fraction, sens: int) -> mpmath.mpf:
    """Independent method: sum the privacy-loss distribution over the support.

    delta(eps) = sum_y (P(y) - e^eps Q(y))_+ with P = N_Z(0, s2), Q = N_Z(sens, s2);
    no floors, no tails, no symmetry; the support is cut at |y| <= 40 sigma + sens,
    where the neglected mass is below exp(-800).
    """
    s2 = MPB.mpf(sigma2.numerator) / sigma2.denominator
    m = int(40 * math.sqrt(float(sigma2))) + sens + 40
    w = {y: MPB.exp(-(MPB.mpf(y) ** 2) / (2 * s2)) for y in range(-m - sens, m + 1)}
    z = MPB.fsum(w[y] for y in range(-m, m + 1))
    e = MPB.exp(MPB.mpf(eps))
    return MPB.fsum(max(MPB.mpf(0), w[y] - e * w[y - sens]) for y in range(-m, m + 1)) / z


# --------------------------------------------------------------------------- goldens


@pytest.mark.parametrize(
    ("sigma2", "published", "continuous"),
    [(1, 0.141351, 0.126937), (4, 0.00724878, 0.00682959)],
    ids=["T-S2-sigma2=1", "T-S2-sigma2=4"],
)
def test_t_s2_golden(sigma2: int, published: float, continuous: float) -> None:
    """T-S2 (reference §6, [V] values with 6 significant digits): eps = 1, Delta = 1."""
    up_ = discrete_gaussian_delta(1.0, sigma2)
    lo_ = discrete_gaussian_delta_lower(1.0, sigma2)
    half_unit = 0.5 * 10 ** (math.floor(math.log10(published)) - 5)  # printed precision
    assert lo_ <= up_ <= lo_ * (1 + 1e-14)  # bracket is tight
    assert abs(up_ - published) <= half_unit
    # Balle-Wang continuous profile with mu = Delta / sigma: matches the printed value,
    # and the discrete profile is larger at equal sigma (discrete variance < sigma^2).
    cont = gdp_delta(1.0 / math.sqrt(sigma2), 1.0)
    assert abs(cont - continuous) <= 0.5 * 10 ** (math.floor(math.log10(continuous)) - 5)
    assert lo_ > cont


def test_t_s2_closed_form_by_hand() -> None:
    """sigma2 = 1, eps = 1: floors give a = 1, b = 2; delta = T(1) - e T(2) with a 60-digit sum."""
    w = [mpmath.exp(-(mpmath.mpf(x) ** 2) / 2) for x in range(60)]
    z = w[0] + 2 * mpmath.fsum(w[1:])
    expected = mpmath.fsum(w[1:]) / z - mpmath.e * mpmath.fsum(w[2:]) / z
    assert discrete_gaussian_delta_lower(1.0, 1) <= expected <= discrete_gaussian_delta(1.0, 1)


# --------------------------------------------------------------------------- independent method


@pytest.mark.parametrize(
    ("eps", "sigma2", "sens"),
    [
        (1.0, Fraction(1), 1),
        (1.0, Fraction(4), 1),
        (0.5, Fraction(1), 1),
        (0.0, Fraction(2), 1),
        (2.3, Fraction(1, 3), 1),
        (1.0, Fraction(9), 2),
        (0.7, Fraction(25, 2), 3),
        (3.0, Fraction(4), 5),
        (-0.5, Fraction(1), 1),
        (0.25, Fraction(100), 1),
    ],
)
def test_against_brute_force_privacy_loss_sum(eps: float, sigma2: Fraction, sens: int) -> None:
    """Floors + tails (the module) vs. direct summation of (P - e^eps Q)_+ (this test)."""
    truth = brute_force_delta(eps, sigma2, sens)
    hi = discrete_gaussian_delta(eps, sigma2, sens)
    lo = discrete_gaussian_delta_lower(eps, sigma2, sens)
    assert MPB.mpf(lo) <= truth * (1 + MPB.mpf(10) ** -35) + MPB.mpf(10) ** -300
    assert truth <= MPB.mpf(hi)
    assert MPB.mpf(hi) <= truth * (1 + MPB.mpf(10) ** -14) + MPB.mpf(10) ** -300


@settings(max_examples=25, deadline=None)
@given(eps=st.floats(0.0, 6.0), num=st.integers(1, 60), den=st.integers(1, 6), sens=st.integers(1, 4))
def test_property_bracket_contains_brute_force(eps: float, num: int, den: int, sens: int) -> None:
    s2 = Fraction(num, den)
    truth = brute_force_delta(eps, s2, sens)
    assert MPB.mpf(discrete_gaussian_delta_lower(eps, s2, sens)) <= truth * (1 + MPB.mpf(10) ** -35)
    assert truth <= MPB.mpf(discrete_gaussian_delta(eps, s2, sens))


def test_rational_sigma2_uses_exact_floors() -> None:
    """sigma2 = 3/10 as a string is exactly 3/10; as a float it is its binary value.

    At eps = 5/3 (a float near it) eps * sigma2 - 1/2 = 0 exactly for the rational,
    the worst case for a floor computed in floats; both inputs must still bracket the truth.
    """
    for s2_in, s2_exact in ((("3/10"), Fraction(3, 10)), ("0.3", Fraction(3, 10)), (0.3, Fraction(0.3))):
        truth = brute_force_delta(5 / 3, s2_exact, 1)
        assert truth <= MPB.mpf(discrete_gaussian_delta(5 / 3, s2_in))
        assert MPB.mpf(discrete_gaussian_delta_lower(5 / 3, s2_in)) <= truth * (1 + MPB.mpf(10) ** -35)


# --------------------------------------------------------------------------- relations to other guarantees


@pytest.mark.parametrize("sigma2", [Fraction(1, 2), 1, 4, 25])
@pytest.mark.parametrize("eps", [0.1, 0.5, 1.0, 2.0, 4.0])
def test_exact_profile_below_zcdp_conversion(sigma2: int | Fraction, eps: float) -> None:
    """rho = Delta^2 / (2 sigma^2)-zCDP [CKS20, Thm. 4] implies a delta that can only be larger."""
    rho = 1 / (2 * float(sigma2))
    assert discrete_gaussian_delta(eps, sigma2) <= zcdp_to_delta(ZCDP(rho), eps)


def test_monotonicity() -> None:
    eps_grid = [0.0, 0.1, 0.4, 0.5, 0.9, 1.0, 1.7, 3.0]
    for s2 in (1, 4):
        vals = [discrete_gaussian_delta(e, s2) for e in eps_grid]
        assert all(a > b for a, b in itertools.pairwise(vals))  # decreasing in eps
    assert discrete_gaussian_delta(1.0, 1) > discrete_gaussian_delta(1.0, 2) > discrete_gaussian_delta(1.0, 4)
    assert discrete_gaussian_delta(1.0, 4, 1) < discrete_gaussian_delta(1.0, 4, 2) < discrete_gaussian_delta(1.0, 4, 3)


# --------------------------------------------------------------------------- epsilon


@pytest.mark.parametrize("sigma2", [1, 4, Fraction(1, 4), 100])
@pytest.mark.parametrize("delta", [1e-1, 1e-3, 1e-6, 1e-10])
def test_epsilon_round_trip(sigma2: int | Fraction, delta: float) -> None:
    eps = discrete_gaussian_epsilon(delta, sigma2)
    assert eps >= 0.0
    assert discrete_gaussian_delta(eps, sigma2) <= delta  # certified
    if eps > 0.0:  # and nearly smallest
        assert discrete_gaussian_delta_lower(eps * (1 - 1e-9) - 1e-300, sigma2) > delta


def test_epsilon_golden_reverse_and_zero() -> None:
    assert 0.99999 < discrete_gaussian_epsilon(0.141351, 1) < 1.00001  # T-S2, 6 printed digits
    back = discrete_gaussian_epsilon(discrete_gaussian_delta(1.0, 4), 4)
    assert 1.0 - 1e-9 < back <= 1.0 + 1e-9
    assert discrete_gaussian_epsilon(0.9, 4) == 0.0  # delta(0) = TV < 0.9
    assert discrete_gaussian_epsilon(1.0, 1) == 0.0


def test_discrete_versus_continuous_is_not_uniform() -> None:
    """At eps = 1 (T-S2) the discrete delta exceeds the continuous one, but not everywhere
    (the discrete profile has kinks where the floors jump): at sigma2 = 1, eps = 0.5 it is
    0.20398 vs 0.23842, and at delta = 1e-6 the discrete epsilon (4.4996) is below the
    continuous Gaussian's (4.8866). So neither may be substituted for the other."""
    from semidp.accountant.profiles.gaussian import gdp_epsilon

    assert discrete_gaussian_epsilon(1e-6, 1) < 4.5
    assert gdp_epsilon(1.0, 1e-6) > 4.88
    assert discrete_gaussian_delta(0.5, 1) < gdp_delta(1.0, 0.5)


# --------------------------------------------------------------------------- arguments


@pytest.mark.parametrize(
    "call",
    [
        lambda: discrete_gaussian_delta(float("nan"), 1),
        lambda: discrete_gaussian_delta(1.0, 0),
        lambda: discrete_gaussian_delta(1.0, -2),
        lambda: discrete_gaussian_delta(1.0, "abc"),
        lambda: discrete_gaussian_delta(1.0, True),
        lambda: discrete_gaussian_delta(1.0, 1, 0),
        lambda: discrete_gaussian_delta(1.0, 1, 1.5),  # type: ignore[arg-type]
        lambda: discrete_gaussian_epsilon(0.0, 1),
        lambda: discrete_gaussian_epsilon(1.5, 1),
        lambda: discrete_gaussian_epsilon(float("nan"), 1),
    ],
)
def test_invalid_arguments(call: object) -> None:
    with pytest.raises(InvalidArgument):
        call()  # type: ignore[operator]


def test_huge_sigma_refused() -> None:
    with pytest.raises(SearchTooLarge):
        discrete_gaussian_delta(1e-6, 10**12)
