"""The Gaussian mechanism: calibration, privacy map, and a seeded distribution test."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from semidp.accountant import GDP, InvalidArgument, gdp_to_approx_dp
from semidp.mechanisms import GaussianMechanism


def test_calibration_round_trip() -> None:
    m = GaussianMechanism.for_approx_dp(1.0, 1e-5, sensitivity=2.0)
    # The privacy map implies the target (epsilon never exceeds 1 at delta 1e-5).
    assert gdp_to_approx_dp(m.privacy_map(m.relation), 1e-5).epsilon <= 1.0 + 1e-12
    assert m.sigma == pytest.approx(2 * 3.7306316, rel=1e-7)  # [BW18], scales with sensitivity
    g = GaussianMechanism.for_gdp(0.5, 1.0)
    assert g.sigma == 2.0 and g.check(GDP(0.5)) and not g.check(GDP(0.49))


def test_sampler_is_seeded_normal() -> None:
    m = GaussianMechanism(sigma=3.0, sensitivity=1.0)
    a = m.sample(np.zeros(2), rng=np.random.default_rng(7), size=4000)
    b = m.sample(np.zeros(2), rng=np.random.default_rng(7), size=4000)
    assert np.array_equal(a, b)  # reproducible from the seed
    # KS against N(0, 9); the seed is fixed, the threshold generous (p > 1e-3).
    assert stats.kstest(a[:, 0], stats.norm(scale=3.0).cdf).pvalue > 1e-3
    assert stats.kstest(a[:, 0], stats.norm(scale=3.5).cdf).pvalue < 1e-3  # and it can fail


def test_rng_is_required_and_inputs_checked() -> None:
    m = GaussianMechanism(1.0, 1.0)
    with pytest.raises(TypeError):
        m.sample(np.zeros(2))  # type: ignore[call-arg]
    with pytest.raises(InvalidArgument):
        GaussianMechanism(0.0, 1.0)
