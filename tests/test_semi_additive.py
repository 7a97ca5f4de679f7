"""Gaussian and Laplace noise calibrated to a Semi-DP sensitivity space (mechanisms.semi_additive)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from semidp.accountant.core.errors import InvalidArgument, RelationMismatch
from semidp.accountant.guarantees.relations import AddRemove, Replace
from semidp.accountant.sensitivity.spaces import SensitivitySpace, table_space
from semidp.mechanisms.semi_additive import SemiGaussianMechanism, SemiLaplaceMechanism

S33 = table_space(3, 3)


def test_calibration_uses_the_exact_sensitivities() -> None:
    # table_space(3, 3): moves and 3-cycles, Delta_1 = 6, Delta_2 = sqrt 6 (docs/reference/semi-dp.md §5)
    g = SemiGaussianMechanism.for_gdp(S33, 0.5, Replace())
    assert g.sensitivity == pytest.approx(math.sqrt(6), rel=1e-15) and g.sensitivity >= math.sqrt(6)
    assert g.sigma >= 2 * math.sqrt(6) and g.privacy_map(Replace()).mu >= 0.5
    assert g.privacy_map(Replace()).mu == pytest.approx(0.5, rel=1e-14)
    lap = SemiLaplaceMechanism.for_epsilon(S33, 0.5, Replace(), projected=True)
    assert lap.sensitivity == S33.l1 == 6 and lap.scale == 12.0 and lap.privacy_map(Replace()).epsilon == 0.5
    assert lap.noise_dimension == 4 and lap.dimension == 9


def test_rounding_is_conservative() -> None:
    lap = SemiLaplaceMechanism.for_epsilon(S33, 0.3, Replace())
    assert lap.scale >= 6 / 0.3 and lap.privacy_map(Replace()).epsilon >= 0.3
    g = SemiGaussianMechanism.for_gdp(S33, 0.3, Replace())
    assert g.sigma >= math.sqrt(6) / 0.3 and g.privacy_map(Replace()).mu >= 0.3


def test_relation_is_checked() -> None:
    with pytest.raises(RelationMismatch):
        SemiLaplaceMechanism.for_epsilon(S33, 1.0, Replace()).privacy_map(AddRemove())


def test_zero_space_and_bad_epsilon_are_refused() -> None:
    zero = SensitivitySpace.from_vectors([(0, 0)], "zero")
    with pytest.raises(InvalidArgument, match="nothing to privatise"):
        SemiLaplaceMechanism.for_epsilon(zero, 1.0, Replace())
    with pytest.raises(InvalidArgument, match="epsilon"):
        SemiLaplaceMechanism.for_epsilon(S33, -1.0, Replace())
    with pytest.raises(InvalidArgument, match="value has 4 entries"):
        SemiGaussianMechanism.for_gdp(S33, 1.0, Replace()).sample(np.zeros(4), rng=np.random.default_rng(0))


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), r=st.integers(2, 4), c=st.integers(2, 4))
def test_projected_laplace_keeps_margins_on_every_draw(seed: int, r: int, c: int) -> None:
    m = SemiLaplaceMechanism.for_epsilon(table_space(r, c), 0.7, Replace(), projected=True)
    x = np.arange(r * c, dtype=float)
    y = m.sample(x, rng=np.random.default_rng(seed), size=20).reshape(20, r, c)
    xt = x.reshape(r, c)
    assert np.abs(y.sum(axis=2) - xt.sum(axis=1)).max() < 1e-9
    assert np.abs(y.sum(axis=1) - xt.sum(axis=0)).max() < 1e-9


def test_unprojected_laplace_marginals_are_laplace() -> None:
    """KS test of each cell's noise against Lap(b) (fixed seed)."""
    m = SemiLaplaceMechanism.for_epsilon(S33, 1.0, Replace())
    noise = m.sample(np.zeros(9), rng=np.random.default_rng(2024), size=4000)
    p = stats.kstest(noise[:, 4], stats.laplace(scale=m.scale).cdf).pvalue
    assert p > 1e-3


def test_gaussian_expected_norm_matches_simulation() -> None:
    g = SemiGaussianMechanism.for_gdp(S33, 1.0, Replace())
    noise = g.sample(np.zeros(9), rng=np.random.default_rng(3), size=20000)
    norms = np.linalg.norm(noise, axis=1)
    assert norms.mean() == pytest.approx(g.expected_l2_norm(), abs=5 * norms.std() / math.sqrt(len(norms)))
    assert g.expected_squared_error() == pytest.approx(9 * g.sigma**2)
