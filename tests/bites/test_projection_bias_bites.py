"""Fast guards of the projection bias bounds (mechanisms/projection_bias.py): the Monte Carlo moments and their
intervals on a fixed noise sequence, ZVF's C' (closed form and LP) and the bound's upward padding.

Issue Step 16: flipping any single comparison, moment term or padding fails a test here (judged by
``python benchmarks/mutation.py mechanisms/projection_bias.py``). Oracles are numpy's moments of the same draws
and the closed forms of [ZVF21, Thm. 4, Thm. 5].
"""

from __future__ import annotations

import math
from fractions import Fraction
from statistics import NormalDist

import mpmath
import numpy as np
import pytest

from semidp.accountant.core.errors import InvalidArgument
from semidp.mechanisms.postprocess_noise import DoubleGeometricNoise, GaussianNoise, LaplaceNoise
from semidp.mechanisms.projection import AffineConstraint
from semidp.mechanisms.projection_bias import (
    LP_PAD,
    BiasEstimate,
    bias_bound,
    max_deviation_lp,
    max_deviation_total,
    monte_carlo_bias,
    sum_projection_variance,
)

E = np.array(
    [[1.0, -2.0], [4.0, 0.5], [-1.0, 3.0], [9.0, -0.25], [0.0, 1.0], [2.0, 7.0], [-3.0, 0.0]], dtype=np.float64
)


class _Replay:
    """A noise law that returns the rows of ``E`` in order (the estimate is then a closed form of ``E``)."""

    def __init__(self, rows: np.ndarray) -> None:
        self.rows, self.at = rows, 0

    def sample(self, shape: tuple[int, int], *, rng: np.random.Generator) -> np.ndarray:
        m = shape[0]
        out = self.rows[self.at : self.at + m]
        self.at += m
        assert out.shape == shape
        return out


def _estimate(level: float, batch: int, post: object = None) -> BiasEstimate:
    x = np.array([5.0, 10.0])
    f = post if post is not None else (lambda d: d)
    return monte_carlo_bias(x, f, _Replay(E), len(E), rng=np.random.default_rng(0), level=level, batch=batch)  # type: ignore[arg-type]


@pytest.mark.parametrize("batch", [1, 3, 7, 100])
def test_monte_carlo_moments_and_intervals_are_those_of_the_draws(batch: int) -> None:
    est = _estimate(0.9, batch)
    n = len(E)
    mean = E.mean(axis=0)
    var = E.var(axis=0, ddof=1)
    m2 = E.var(axis=0)
    m4 = ((E - mean) ** 4).mean(axis=0)
    z = NormalDist().inv_cdf(0.95)
    se_mean = np.sqrt(var / n)
    se_var = np.sqrt((m4 - m2**2) / n)
    np.testing.assert_allclose(est.bias, mean, rtol=1e-12)
    np.testing.assert_allclose(est.variance, var, rtol=1e-12)
    np.testing.assert_allclose(est.bias_low, mean - z * se_mean, rtol=1e-12)
    np.testing.assert_allclose(est.bias_high, mean + z * se_mean, rtol=1e-12)
    np.testing.assert_allclose(est.variance_low, var - z * se_var, rtol=1e-12)
    np.testing.assert_allclose(est.variance_high, var + z * se_var, rtol=1e-12)
    assert est.draws == n and est.level == 0.9 and isinstance(est.level, float)


def test_the_error_is_postprocessed_minus_the_counts() -> None:
    est = _estimate(0.95, 3, post=lambda d: 2.0 * d)  # 2 (x + e) - x = x + 2 e
    np.testing.assert_allclose(est.bias, np.array([5.0, 10.0]) + 2.0 * E.mean(axis=0), rtol=1e-12)
    np.testing.assert_allclose(est.variance, 4.0 * E.var(axis=0, ddof=1), rtol=1e-12)


def test_monte_carlo_refusals() -> None:
    x = np.array([1.0, 2.0])
    rng = np.random.default_rng(0)
    with pytest.raises(InvalidArgument, match="shape"):
        monte_carlo_bias(x, lambda d: d[:1], LaplaceNoise(1.0), 4, rng=rng)
    with pytest.raises(InvalidArgument, match="draws"):
        monte_carlo_bias(x, lambda d: d, LaplaceNoise(1.0), 1, rng=rng)
    with pytest.raises(InvalidArgument, match="batch"):
        monte_carlo_bias(x, lambda d: d, LaplaceNoise(1.0), 4, rng=rng, batch=0)
    for level in (0.0, 1.0):
        with pytest.raises(InvalidArgument, match="level"):
            monte_carlo_bias(x, lambda d: d, LaplaceNoise(1.0), 4, rng=rng, level=level)
    with pytest.raises(InvalidArgument, match="counts"):
        monte_carlo_bias(np.zeros((2, 2)), lambda d: d, LaplaceNoise(1.0), 4, rng=rng)
    with pytest.raises(InvalidArgument, match="counts"):
        monte_carlo_bias(np.zeros(0), lambda d: d, LaplaceNoise(1.0), 4, rng=rng)
    est = monte_carlo_bias(x, lambda d: d, LaplaceNoise(1.0), 2, rng=rng, batch=1)
    assert est.draws == 2


def _fixed(bias: list[float], lo: list[float], hi: list[float]) -> BiasEstimate:
    a = np.asarray
    return BiasEstimate(a(bias), a(lo), a(hi), a(bias), a(lo), a(hi), 10, 0.95)


def test_interval_membership_is_inclusive_and_widened_by_the_slack() -> None:
    est = _fixed([0.0, 1.0], [-1.0, 0.5], [1.0, 2.0])
    for contains in (est.contains_bias, est.contains_variance):
        assert contains([-1.0, 0.5]) and contains([1.0, 2.0]) and contains(0.75)
        assert not contains([-1.5, 1.0]) and not contains([0.0, 2.5]) and not contains(1.5)
        assert contains([-1.5, 2.5], slack=0.5) and not contains([-1.5, 2.5], slack=0.49)
        assert isinstance(contains(0.75), bool)


def test_max_abs_bias_upper_is_the_largest_end_in_absolute_value() -> None:
    assert _fixed([0.0, 0.0], [-3.0, -0.5], [1.0, 2.0]).max_abs_bias_upper() == 3.0
    assert _fixed([0.0, 0.0], [-1.0, 0.5], [1.0, 2.5]).max_abs_bias_upper() == 2.5


def test_sum_projection_variance() -> None:
    assert sum_projection_variance(LaplaceNoise(10.0), 4) == 200.0 * (1.0 - 1.0 / 4)
    assert sum_projection_variance(GaussianNoise(2.0), 1) == 0.0
    with pytest.raises(InvalidArgument, match="n"):
        sum_projection_variance(LaplaceNoise(1.0), 0)


def test_max_deviation_total() -> None:
    assert max_deviation_total([2.0, 3.0, 5.0]) == 8.0  # b - r_m
    assert max_deviation_total([2.0, 3.0, 5.0], total=20.0) == 18.0
    assert max_deviation_total([9.0, 1.0], total=10.0) == 9.0
    assert max_deviation_total([0.0, 0.0]) == 0.0
    with pytest.raises(InvalidArgument, match="n >= 2"):
        max_deviation_total([4.0])
    with pytest.raises(InvalidArgument, match="non-negative"):
        max_deviation_total([4.0, -1e-9])
    with pytest.raises(InvalidArgument, match="total"):
        max_deviation_total([4.0, 1.0], total=-1.0)


def test_max_deviation_lp_is_the_worst_cell_padded_up() -> None:
    c = AffineConstraint.of(np.ones((1, 3)), [10.0])
    d = max_deviation_lp(c, [2.0, 3.0, 5.0])
    assert d.value == pytest.approx(8.0, abs=1e-9) and d.cell == 0
    assert d.upper == math.nextafter(d.value + abs(d.value) * LP_PAD + LP_PAD, math.inf)
    assert LP_PAD == 1e-6
    # the largest deviation downwards: x far above what the constraint allows in cell 2
    low = max_deviation_lp(c, [0.0, 0.0, 30.0])
    assert low.value == pytest.approx(30.0, abs=1e-9) and low.cell == 2
    # two totals: v0 + v1 = 4 and v1 + v2 = 6; v1 ranges over [0, 4], v0 over [0, 4], v2 over [2, 6]
    two = AffineConstraint.of(np.array([[1.0, 1.0, 0.0], [0.0, 1.0, 1.0]]), [4.0, 6.0])
    d2 = max_deviation_lp(two, [1.0, 1.0, 5.0])
    assert d2.value == pytest.approx(3.0, abs=1e-9) and d2.cell in (0, 1, 2)
    assert d2.cell == 0  # the first cell attaining the maximum


def test_max_deviation_lp_refusals() -> None:
    with pytest.raises(InvalidArgument, match="is unbounded in cell 0"):
        max_deviation_lp(AffineConstraint.of(np.array([[1.0, -1.0]]), [0.0]), [1.0, 1.0])
    with pytest.raises(InvalidArgument, match="failed"):
        max_deviation_lp(AffineConstraint.of(np.array([[1.0, 1.0]]), [-1.0]), [1.0, 1.0])
    with pytest.raises(InvalidArgument, match="shape"):
        max_deviation_lp(AffineConstraint.of(np.ones((1, 2)), [1.0]), [[1.0, 1.0]])


def test_bias_bound_is_c_times_the_tail_padded_up() -> None:
    noise = LaplaceNoise(5.0)
    tail = noise.l1_tail(4, 1.0)
    got = bias_bound([1.0, 1.0, 3.0, 97.0], noise, 99.0)
    exact = mpmath.mpf(99.0) * mpmath.mpf(tail)
    assert exact * (1 + mpmath.mpf(2) ** -40) <= got <= exact * (1 + 2.0**-39)  # padded up by 2^-40 relative
    assert got > 99.0 * tail
    g = DoubleGeometricNoise(Fraction(1, 2))
    gtail = g.l1_tail(3, 2.0)
    got_g = bias_bound([2.0, 7.0, 2.5], g, 10.0)
    assert mpmath.mpf(10.0) * mpmath.mpf(gtail) * (1 + mpmath.mpf(2) ** -40) <= got_g <= 10.0 * gtail * (1 + 2.0**-39)
    assert bias_bound([0.0, 5.0], noise, 0.0) == 0.0


def test_bias_bound_refusals() -> None:
    with pytest.raises(InvalidArgument, match="non-negative"):
        bias_bound([1.0, -1.0], LaplaceNoise(1.0), 1.0)
    with pytest.raises(InvalidArgument, match="Lemma 2"):
        bias_bound([1.0, 1.0], GaussianNoise(1.0), 1.0)  # type: ignore[arg-type]
    with pytest.raises(InvalidArgument, match="max_deviation"):
        bias_bound([1.0, 1.0], LaplaceNoise(1.0), -1.0)


def test_result_records_are_frozen_and_compared_by_identity() -> None:
    import dataclasses

    est = _fixed([0.0], [-1.0], [1.0])
    twin = _fixed([0.0], [-1.0], [1.0])
    assert est != twin and est == est  # eq=False: arrays are not compared element-wise
    c = AffineConstraint.of(np.ones((1, 2)), [4.0])
    d, d2 = max_deviation_lp(c, [1.0, 3.0]), max_deviation_lp(c, [1.0, 3.0])
    assert d != d2 and d == d
    with pytest.raises(dataclasses.FrozenInstanceError):
        est.draws = 3  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        d.value = 3.0  # type: ignore[misc]


def test_variance_interval_of_small_and_constant_errors() -> None:
    small = np.column_stack([E[:, 0] * 0.01, np.full(len(E), 0.5)])  # tiny spread; a constant error
    est = monte_carlo_bias(
        np.array([5.0, 10.0]),
        lambda d: d,
        _Replay(small),
        len(E),
        rng=np.random.default_rng(0),
        level=0.9,  # type: ignore[arg-type]
    )
    col = small[:, 0]
    m2, m4 = col.var(), ((col - col.mean()) ** 4).mean()
    z = NormalDist().inv_cdf(0.95)
    half = z * math.sqrt((m4 - m2**2) / len(E))
    assert half < 0.01
    assert est.variance_high[0] == pytest.approx(col.var(ddof=1) + half, rel=1e-9)
    assert est.variance_low[1] == est.variance[1] == est.variance_high[1] == pytest.approx(0.0, abs=1e-20)
    assert est.bias[1] == pytest.approx(0.5, rel=1e-12) and est.bias_low[1] == pytest.approx(0.5, rel=1e-12)
