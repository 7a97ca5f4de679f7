"""Bias and variance of projection post-processing [ZVF21]: targets T-Z1 ... T-Z5.

Targets: ``docs/reference/subspace-integer-postprocessing.md`` §6 "ZVF" and §7 item 2. Monte Carlo tests are
seeded; their tolerances come from the estimate's own confidence interval at level
``1 - TEST_FAILURE_RATE`` (Bonferroni over cells where several are checked), widened by half a
unit of the reference's printed digits and by the reference's own Monte Carlo error (2M draws).
Each statistical check also rejects a wrong twin.
"""

from __future__ import annotations

import math
from fractions import Fraction

import mpmath
import numpy as np
import pytest
from numpy.typing import NDArray

from semidp.accountant.core.errors import InvalidArgument
from semidp.mechanisms.nonneg_projection import project_nonneg
from semidp.mechanisms.postprocess_noise import (
    DoubleGeometricNoise,
    GaussianNoise,
    LaplaceNoise,
    double_geometric_l1_ball_probability,
    double_geometric_l1_tail,
    l1_ball_counts,
    l1_lattice_points,
    laplace_l1_ball_probability,
    laplace_l1_tail,
)
from semidp.mechanisms.projection import AffineConstraint, project_simplex
from semidp.mechanisms.projection_bias import (
    BiasEstimate,
    bias_bound,
    max_deviation_lp,
    max_deviation_total,
    monte_carlo_bias,
    sum_projection_variance,
)

F = NDArray[np.float64]
#: Suite-wide failure rate of one seeded Monte Carlo assertion (house style R12).
TEST_FAILURE_RATE = 1e-4
#: Draws per Monte Carlo estimate here (a fraction of a second each for n <= 4).
DRAWS = 400_000
#: The reference's T-Z5 draws (``docs/reference/subspace-integer-postprocessing.md`` §6).
REFERENCE_DRAWS = 2_000_000


def _total_pplus(b: float):  # type: ignore[no-untyped-def]
    return lambda d: project_simplex(d, b)


def _total_p(b: float, n: int):  # type: ignore[no-untyped-def]
    return lambda d: d - (d.sum(axis=-1, keepdims=True) - b) / n


def _mc(x: F, post, noise, draws: int = DRAWS, seed: int = 0) -> BiasEstimate:  # type: ignore[no-untyped-def]
    level = 1 - TEST_FAILURE_RATE / x.size
    return monte_carlo_bias(x, post, noise, draws, rng=np.random.default_rng(seed), level=level)


def _reference_slack(est: BiasEstimate, printed: float) -> F:
    """Half a printed unit plus the reference's own CI half-width (its 2M draws, our standard error)."""
    half_width = est.bias_high - est.bias
    return printed / 2 + half_width * math.sqrt(est.draws / REFERENCE_DRAWS)


def _contains(est: BiasEstimate, ref: F, slack: F) -> bool:
    return bool(np.all((est.bias_low - slack <= ref) & (ref <= est.bias_high + slack)))


# --------------------------------------------------------------------------- T-Z1 (Thm 5)


def test_T_Z1_sum_projection_variance_exact() -> None:
    az = sum_projection_variance(LaplaceNoise(10.0), 15)
    tx = sum_projection_variance(LaplaceNoise(10.0), 254)
    assert round(az, 4) == 186.6667 and round(tx, 4) == 199.2126  # 2 lambda^2 (1 - 1/n), printed digits
    assert round(tx / az, 5) == 1.06721
    assert az == 200.0 * 14 / 15  # exact expression


@pytest.mark.parametrize("n", [15, 254])
def test_T_Z1_sum_projection_variance_monte_carlo(n: int) -> None:
    x = np.full(n, 1000.0)
    draws = 200_000 if n == 15 else 20_000
    est = _mc(x, _total_p(x.sum(), n), LaplaceNoise(10.0), draws, seed=n)
    assert est.contains_variance(sum_projection_variance(LaplaceNoise(10.0), n))
    assert est.contains_bias(0.0)  # [ZVF21, Thm. 3]: (P) is unbiased
    if n == 15:  # wrong twin: the variance without the (1 - 1/n) factor is rejected
        assert not est.contains_variance(2 * 10.0**2)


def test_thm5_holds_for_double_geometric_noise() -> None:
    noise = DoubleGeometricNoise(5)
    x = np.full(15, 50.0)
    est = _mc(x, _total_p(x.sum(), 15), noise, 100_000, seed=3)
    assert est.contains_variance(sum_projection_variance(noise, 15))
    assert not est.contains_variance(noise.variance)  # twin: no (1 - 1/n)


# --------------------------------------------------------------------------- T-Z2 / T-Z3 / T-Z3b (Lemma 2)

T_Z2 = [
    ((1, 1, 1), 0.6321205588),
    ((2, 1, 1), 0.2642411177),
    ((3, 2, 1), 0.3233235838),
    ((5, 10, 2), 0.5595067149),
    ((10, 20, 2), 0.5420702855),
    ((33, 348, 5), 0.9999996242),
]


@pytest.mark.parametrize(("args", "value"), T_Z2)
def test_T_Z2_laplace_l1_ball(args: tuple[int, int, int], value: float) -> None:
    n, r, lam = args
    assert round(laplace_l1_ball_probability(n, r, lam), 10) == value
    assert laplace_l1_ball_probability(n, r, lam) + laplace_l1_tail(n, r, lam) == pytest.approx(1.0, abs=1e-15)
    # the Gamma(n, lambda) cdf form (|eta_i| ~ Exp(mean lambda))
    with mpmath.workdps(30):
        assert float(mpmath.gammainc(n, 0, mpmath.mpf(r) / lam, regularized=True)) == pytest.approx(value, abs=1e-10)


def _dg_tail_brute(n: int, r: int, a: Fraction, k: int = 200) -> float:
    """Pr(|eta|_1 > r) for DG(a)^n by convolving the pmf of |eta_i| (truncated at k: mass a^k, negligible)."""
    c = float((1 - a) / (1 + a))
    af = float(a)
    abs_pmf = np.array([c] + [2 * c * af**j for j in range(1, k)])
    dist = np.array([1.0])
    for _ in range(n):
        dist = np.convolve(dist, abs_pmf)[:k]
    return 1.0 - float(dist[: r + 1].sum())


T_Z3 = [
    ((1, 3, Fraction(1, 2)), 0.0833333333),
    ((2, 3, Fraction(1, 2)), 0.2777777778),
    ((3, 5, Fraction(7, 10)), 0.6700221901),
]


@pytest.mark.parametrize(("args", "value"), T_Z3)
def test_T_Z3_double_geometric_tail(args: tuple[int, int, Fraction], value: float) -> None:
    n, r, a = args
    ours = double_geometric_l1_tail(n, r, a)
    assert round(ours, 10) == value
    assert ours == pytest.approx(_dg_tail_brute(n, r, a), abs=1e-12)
    assert double_geometric_l1_tail(n, r, float(a)) == pytest.approx(ours, rel=1e-14)  # mpmath path
    assert double_geometric_l1_ball_probability(n, r, a) == pytest.approx(1 - ours, abs=1e-16)


def test_T_Z3_fourth_case_irrational_ratio() -> None:
    ours = double_geometric_l1_tail(4, 10, mpmath.exp(mpmath.mpf(-0.5)))
    assert round(ours, 10) == 0.2153796336
    c = math.exp(-0.5)
    abs_pmf = np.array([(1 - c) / (1 + c)] + [2 * (1 - c) / (1 + c) * c**j for j in range(1, 300)])
    dist = np.array([1.0])
    for _ in range(4):
        dist = np.convolve(dist, abs_pmf)[:300]
    assert ours == pytest.approx(1 - dist[:11].sum(), abs=1e-12)


def test_lemma2_twin_with_one_term_too_many_is_rejected() -> None:
    """Summing i = 0..n (one term too many) misses the brute-force value."""
    n, r, a = 3, 5, Fraction(7, 10)
    q = (1 - a) / (1 + a)
    twin = float(2 * a ** (r + 1) / (1 + a) * sum(l1_lattice_points(i, r) * q**i for i in range(n + 1)))
    assert abs(twin - _dg_tail_brute(n, r, a)) > 1e-3


def test_T_Z3b_h_table() -> None:
    expected = [[1, 1, 1, 1, 1], [1, 3, 5, 7, 9], [1, 5, 13, 25, 41], [1, 7, 25, 63, 129], [1, 9, 41, 129, 321]]
    assert l1_ball_counts(4, 4) == expected  # ZVF's recursion
    assert [[l1_lattice_points(i, r) for r in range(5)] for i in range(5)] == expected  # closed form [D]
    big = l1_ball_counts(12, 30)
    assert all(big[i][r] == l1_lattice_points(i, r) for i in range(13) for r in range(31))


# --------------------------------------------------------------------------- T-Z4 (New Mexico) and §7 item 2

NM_TOTAL, NM_COUNTIES, NM_RM, NM_LAMBDA = 7_289_112, 33, 348, 5


def test_T_Z4_new_mexico_tails_and_bounds() -> None:
    c_prime = NM_TOTAL - NM_RM
    assert c_prime == 7_288_764
    lap_tail = laplace_l1_tail(NM_COUNTIES, NM_RM, NM_LAMBDA)
    assert f"{lap_tail:.4e}" == "3.7578e-07"  # = Pr[Poisson(69.6) <= 32]
    with mpmath.workdps(30):
        pois = mpmath.fsum(mpmath.exp(-69.6) * mpmath.mpf(69.6) ** i / mpmath.factorial(i) for i in range(33))
    assert lap_tail == pytest.approx(float(pois), rel=1e-12)
    counts = np.array([NM_RM] + [1000.0] * (NM_COUNTIES - 2) + [NM_TOTAL - NM_RM - 1000.0 * (NM_COUNTIES - 2)])
    assert max_deviation_total(counts) == c_prime
    lap = bias_bound(counts, LaplaceNoise(NM_LAMBDA), c_prime)
    geo = bias_bound(counts, DoubleGeometricNoise(NM_LAMBDA), c_prime)
    assert round(lap, 3) == 2.739 and lap >= c_prime * lap_tail  # rounded up
    assert f"{DoubleGeometricNoise(NM_LAMBDA).l1_tail(NM_COUNTIES, NM_RM):.4e}" == "3.2536e-07"
    assert round(geo, 3) == 2.371


def test_T_Z4b_published_new_mexico_bound_is_not_reproducible() -> None:
    """§7 item 2: the paper prints 0.29 (empirical 0.06); Thm 4 with C' = b - r_m gives 2.739 / 2.371.

    The C' that would give 0.29 is about 771,731, which matches nothing obvious; the 0.29 is
    recorded as reported only and our values are tested instead.
    """
    lap_tail = laplace_l1_tail(NM_COUNTIES, NM_RM, NM_LAMBDA)
    assert round(0.29 / lap_tail) == pytest.approx(771_731, abs=2)
    counts = np.array([NM_RM] + [1000.0] * (NM_COUNTIES - 2) + [NM_TOTAL - NM_RM - 1000.0 * (NM_COUNTIES - 2)])
    assert bias_bound(counts, LaplaceNoise(NM_LAMBDA), max_deviation_total(counts)) > 9 * 0.29


def test_lp_max_deviation_matches_closed_form_on_a_total() -> None:
    x = np.array([348.0, 1000.0, 5000.0, 20.0, 77.0])
    lp = max_deviation_lp(AffineConstraint.of(np.ones((1, 5)), [x.sum()]), x)
    assert lp.value == pytest.approx(max_deviation_total(x), abs=1e-6) and lp.cell == 3
    with pytest.raises(InvalidArgument, match="unbounded"):
        max_deviation_lp(AffineConstraint.of(np.array([[1.0, -1.0, 0.0]]), [0.0]), [1.0, 1.0, 0.0])


# --------------------------------------------------------------------------- T-Z5 (toy bias, Monte Carlo)


def test_T_Z5_bias_of_P_is_zero_and_of_Pplus_matches_reference() -> None:
    x = np.array([1.0, 1.0, 1.0, 97.0])
    noise = LaplaceNoise(5.0)
    p = _mc(x, _total_p(100.0, 4), noise, seed=1)
    assert p.contains_bias(0.0)  # bias(P) ~ 0 [ZVF21, Thm. 3]
    pplus = _mc(x, _total_pplus(100.0), noise, seed=2)
    ref = np.array([0.89, 0.89, 0.89, -2.66])
    assert _contains(pplus, ref, _reference_slack(pplus, 0.01))
    assert not pplus.contains_bias(0.0)  # P+ is biased on small counts
    bound = bias_bound(x, noise, max_deviation_total(x))
    assert round(bound, 2) == 98.99 and pplus.max_abs_bias_upper() <= bound
    # wrong twin: the off-by-one threshold is rejected by the same check
    twin = _mc(x, lambda d: _off_by_one(d, 100.0), noise, seed=2)
    assert not _contains(twin, ref, _reference_slack(twin, 0.01))


def _off_by_one(x: F, b: float) -> F:
    u = -np.sort(-x, axis=-1)
    css = np.cumsum(u, axis=-1) - b
    rho = np.minimum(np.sum(u * np.arange(1, x.shape[-1] + 1) > css, axis=-1) + 1, x.shape[-1])
    tau = np.take_along_axis(css, (rho - 1)[..., None], axis=-1)[..., 0] / rho
    out: F = np.maximum(x - tau[..., None], 0.0)
    return out


@pytest.mark.parametrize(
    ("x", "ref", "bound"),
    [((2.0, 5.0, 10.0, 83.0), (1.21, 0.20, -0.56, -0.85), 97.92), ((20.0, 30.0, 50.0), (0.0, 0.0, 0.0), 19.05)],
)
def test_T_Z5_other_toys(x: tuple[float, ...], ref: tuple[float, ...], bound: float) -> None:
    xs = np.array(x)
    est = _mc(xs, _total_pplus(100.0), LaplaceNoise(5.0), seed=4)
    assert _contains(est, np.array(ref), _reference_slack(est, 0.01))
    ours = bias_bound(xs, LaplaceNoise(5.0), max_deviation_total(xs))
    assert round(ours, 2) == bound and est.max_abs_bias_upper() <= ours


def test_T_Z5_bias_shrinks_as_smallest_count_grows() -> None:
    """[ZVF21, Thm. 4 / Fig. 4]: shifting the small counts up separates the bias CIs monotonically."""
    ests = []
    for s in (0.0, 2.0, 5.0, 10.0):
        x = np.array([1.0 + s, 1.0 + s, 1.0 + s, 97.0])
        ests.append(_mc(x, _total_pplus(x.sum()), LaplaceNoise(5.0), seed=int(5 + s)))
    for small, large in zip(ests, ests[1:]):
        assert large.bias_high[0] < small.bias_low[0] and large.bias_low[3] > small.bias_high[3]
    x = np.array([21.0, 21.0, 21.0, 97.0])
    far = _mc(x, _total_pplus(x.sum()), LaplaceNoise(5.0), seed=99)
    assert far.contains_bias(0.0)


def test_gaussian_noise_P_unbiased_Pplus_biased() -> None:
    x = np.array([1.0, 2.0, 3.0, 94.0])
    p = _mc(x, _total_p(100.0, 4), GaussianNoise(5.0), 200_000, seed=7)
    assert p.contains_bias(0.0) and p.contains_variance(25.0 * 3 / 4)
    pplus = _mc(x, _total_pplus(100.0), GaussianNoise(5.0), 200_000, seed=8)
    assert not pplus.contains_bias(0.0)
    with pytest.raises(InvalidArgument, match="Lemma 2"):
        bias_bound(x, GaussianNoise(5.0), 99.0)  # type: ignore[arg-type]


def test_double_geometric_bias_within_bound() -> None:
    x = np.array([3.0, 4.0, 6.0, 87.0])
    noise = DoubleGeometricNoise(3)
    est = _mc(x, _total_pplus(100.0), noise, 200_000, seed=9)
    bound = bias_bound(x, noise, max_deviation_total(x))
    assert 0 < est.max_abs_bias_upper() <= bound
    assert not est.contains_bias(0.0)


def test_general_A_bias_within_lp_bound() -> None:
    """Thm 4 with C' from 2n LPs, bias of the batched ADMM (P+) estimated by Monte Carlo."""
    a = np.array([[1.0, 1, 1, 1, 1, 1], [1, 1, 1, 0, 0, 0], [1, 0, 0, 1, 0, 0]])
    x = np.array([2.0, 3.0, 30.0, 4.0, 25.0, 36.0])
    c = AffineConstraint.of(a, a @ x)
    lp = max_deviation_lp(c, x)
    est = _mc(x, lambda d: project_nonneg(c, d, tol=1e-9).solution, LaplaceNoise(3.0), 20_000, seed=10)
    bound = bias_bound(x, LaplaceNoise(3.0), lp.upper)
    assert est.max_abs_bias_upper() <= bound
    p = _mc(x, c.project, LaplaceNoise(3.0), 20_000, seed=11)
    assert p.contains_bias(0.0)


def test_monte_carlo_rejects_bad_arguments() -> None:
    x = np.ones(3)
    with pytest.raises(InvalidArgument, match="draws"):
        monte_carlo_bias(x, _total_p(3.0, 3), LaplaceNoise(1.0), 1, rng=np.random.default_rng(0))
    with pytest.raises(InvalidArgument, match="level"):
        monte_carlo_bias(x, _total_p(3.0, 3), LaplaceNoise(1.0), 10, rng=np.random.default_rng(0), level=1.0)
    with pytest.raises(InvalidArgument, match="rng"):
        monte_carlo_bias(x, _total_p(3.0, 3), LaplaceNoise(1.0), 10, rng=None)  # type: ignore[arg-type]
    with pytest.raises(InvalidArgument, match="scale"):
        LaplaceNoise(0.0)
    with pytest.raises(InvalidArgument, match="scale"):
        DoubleGeometricNoise(0.5)  # type: ignore[arg-type]
