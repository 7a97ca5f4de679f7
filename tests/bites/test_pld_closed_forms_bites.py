"""Fast bites for :mod:`semidp.accountant.pld.closed_forms`: each end of the closed-form brackets against the exact
profile at 60 digits (the Gaussian's mu-GDP profile [DRS22, Cor. 2.13], the Laplace profile [KJH20, Sec. 6]), with
mu or D given a different value at each end so a swapped end, a dropped term or a flipped clamp crosses the
reference. Issue Step 16 (mutation testing).
"""

from __future__ import annotations

import dataclasses
import math

import mpmath
import pytest

from semidp.accountant.core.errors import InvalidArgument
from semidp.accountant.pld.closed_forms import GaussianBracket, LaplaceBracket, PLDInterval, gaussian_bracket
from semidp.accountant.pld.parts import GaussianPart, LaplacePart

REF = mpmath.MPContext()
REF.dps = 60


def gdp_delta_ref(mu: float, eps: float) -> mpmath.mpf:
    """delta(eps) of mu-GDP: Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2), at 60 digits."""
    m, e = REF.mpf(mu), REF.mpf(eps)
    return REF.ncdf(-e / m + m / 2) - REF.exp(e) * REF.ncdf(-e / m - m / 2)


def gdp_epsilon_ref(mu: float, delta: float) -> mpmath.mpf:
    """The eps >= 0 with gdp_delta_ref(mu, eps) = delta (0 if delta(0) <= delta), by bisection at 60 digits."""
    if gdp_delta_ref(mu, 0.0) <= delta:
        return REF.mpf(0)
    lo, hi = REF.mpf(0), REF.mpf(1)
    while gdp_delta_ref(mu, hi) > delta:
        hi *= 2
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if gdp_delta_ref(mu, mid) > delta else (lo, mid)
    return hi


def laplace_delta_ref(d: float, eps: float) -> mpmath.mpf:
    """The Laplace profile with D = d: 1 - e^eps below -D, 1 - e^{(eps - D)/2} on [-D, D], 0 above."""
    e, dd = REF.mpf(eps), REF.mpf(d)
    if e <= -dd:
        return -REF.expm1(e)
    return -REF.expm1((e - dd) / 2) if e < dd else REF.mpf(0)


def close_below(got: float, ref: mpmath.mpf, rel: float) -> bool:
    return bool(got <= ref and got >= ref * (1 - rel))


def close_above(got: float, ref: mpmath.mpf, rel: float) -> bool:
    return bool(got >= ref and got <= ref * (1 + rel))


def test_interval_width() -> None:
    assert PLDInterval(0.25, 1.0).width == 0.75
    assert PLDInterval(0.0, math.inf).width == math.inf
    assert PLDInterval(0.25, 1.0).lower == 0.25 and PLDInterval(0.25, 1.0).upper == 1.0


@pytest.mark.parametrize("eps", [-1.5, 0.0, 0.4, 1.7, 4.0])
def test_gaussian_bracket_delta_ends_use_their_own_mu(eps: float) -> None:
    b = GaussianBracket(0.9, 1.1, 3)
    lo, hi = b.delta(eps)
    assert close_below(lo, gdp_delta_ref(0.9, eps), 1e-9), (lo, gdp_delta_ref(0.9, eps))
    assert close_above(hi, gdp_delta_ref(1.1, eps), 1e-9), (hi, gdp_delta_ref(1.1, eps))


@pytest.mark.parametrize("delta", [1e-9, 1e-5, 1e-2, 0.2])
def test_gaussian_bracket_epsilon_ends_use_their_own_mu(delta: float) -> None:
    # the lower end searches down from the upper end's epsilon with doubling steps: tight when the two mu are close
    # (as sqrt_down / sqrt_up make them), certified but loose for a wide pair (0.9, 1.1)
    for mu_lo, mu_hi, slack in ((0.9, 1.1, 0.5), (1.0 - 1e-6, 1.0 + 1e-6, 1e-5)):
        lo, hi = GaussianBracket(mu_lo, mu_hi, 3).epsilon(delta)
        ref_lo, ref_hi = gdp_epsilon_ref(mu_lo, delta), gdp_epsilon_ref(mu_hi, delta)
        assert close_below(lo, ref_lo, slack), (lo, ref_lo)
        assert close_above(hi, ref_hi, 1e-8), (hi, ref_hi)


def test_gaussian_bracket_epsilon_is_zero_when_delta_at_zero_is_met() -> None:
    # delta(0) = 2 Phi(mu/2) - 1 = 0.38 (mu = 1) <= 0.5: epsilon 0 at both ends, not below 0 nor clamped up to 1
    b = GaussianBracket(0.95, 1.0, 1)
    assert b.epsilon(0.5) == (0.0, 0.0)
    lo, hi = b.epsilon(0.3)  # delta(0) > 0.3 at both ends: a small positive epsilon
    assert 0.0 < lo <= hi < 0.5
    assert close_above(hi, gdp_epsilon_ref(1.0, 0.3), 1e-8) and lo <= gdp_epsilon_ref(0.95, 0.3)


@pytest.mark.parametrize("bracket", [GaussianBracket(0.9, 1.1, 3), LaplaceBracket(0.9, 1.1)])
def test_closed_form_arguments_are_checked(bracket: GaussianBracket | LaplaceBracket) -> None:
    for eps in (-1e6, 1e6):
        lo, hi = bracket.delta(eps)
        assert 0.0 <= lo <= hi <= 1.0
    for eps in (-1e6 - 0.5, 1e6 + 0.5, math.nan):
        with pytest.raises(InvalidArgument, match="epsilon"):
            bracket.delta(eps)
    assert bracket.epsilon(1.0) == (0.0, 0.0)
    for d in (0.0, -0.1, 1.5):
        with pytest.raises(InvalidArgument, match="delta"):
            bracket.epsilon(d)
    with pytest.raises(dataclasses.FrozenInstanceError):
        bracket.count = 2  # type: ignore[misc]


@pytest.mark.parametrize("eps", [-3.0, -1.1, -1.0, -0.9, -0.5, 0.0, 0.7, 0.9, 1.0, 1.05, 1.1, 2.0])
def test_laplace_bracket_delta_ends_use_their_own_d(eps: float) -> None:
    b = LaplaceBracket(0.9, 1.1)
    lo, hi = b.delta(eps)
    ref_lo, ref_hi = laplace_delta_ref(0.9, eps), laplace_delta_ref(1.1, eps)
    assert lo <= ref_lo and (ref_lo == 0 or lo >= ref_lo * (1 - 1e-15)), (lo, ref_lo)
    assert hi >= ref_hi and hi <= ref_hi * (1 + 1e-15), (hi, ref_hi)
    assert b.count == 1


@pytest.mark.parametrize("delta", [1e-9, 1e-3, 0.3, 0.55, 0.99])
def test_laplace_bracket_epsilon_ends_use_their_own_d(delta: float) -> None:
    b = LaplaceBracket(0.9, 1.1)
    lo, hi = b.epsilon(delta)
    ref_lo = max(REF.mpf(0), REF.mpf(0.9) + 2 * REF.log1p(-REF.mpf(delta)))
    ref_hi = max(REF.mpf(0), REF.mpf(1.1) + 2 * REF.log1p(-REF.mpf(delta)))
    assert lo <= ref_lo and (ref_lo == 0 or lo >= ref_lo * (1 - 1e-15)), (lo, ref_lo)
    assert hi >= ref_hi and hi <= ref_hi * (1 + 1e-15), (hi, ref_hi)
    assert (lo == 0.0) == (ref_lo == 0) and (hi == 0.0) == (ref_hi == 0)


def test_gaussian_bracket_of_parts() -> None:
    # mu^2 = 3 (1/2)^2 + 2 (1/2)^2 = 5/4 exactly; mu rounded outward by at most an ulp; count 5
    b = gaussian_bracket([(GaussianPart(2.0, 1.0), 3), (GaussianPart(1.0, 0.5), 2)])
    assert b is not None and b.count == 5
    assert b.mu_lower <= math.sqrt(1.25) <= b.mu_upper and b.mu_upper - b.mu_lower <= 2 * math.ulp(1.118)
    assert REF.mpf(b.mu_lower) <= REF.sqrt(REF.mpf(5) / 4) <= REF.mpf(b.mu_upper)
    assert gaussian_bracket([(GaussianPart(2.0, 1.0), 3), (LaplacePart(1.0), 1)]) is None
    assert gaussian_bracket([(LaplacePart(1.0), 1)]) is None
