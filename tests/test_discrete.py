"""Exact discrete samplers (Canonne, Kamath & Steinke 2020, Alg. 1-3;
docs/reference/subspace-integer-postprocessing.md §3.5, §6 T-S1..T-S4).

Statistical tests are seeded (house style R12); goodness of fit is a chi-square
test against the exact pmf with tails pooled so every expected count is >= 5,
passing at p > 1e-4. Each fit test has a "wrong pmf" twin (scale / ratio /
sigma^2 off by 20%) that the same test must reject, showing it has power.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from fractions import Fraction

import numpy as np
import pytest
from numpy.typing import NDArray
from scipy import optimize, stats

from semidp.accountant.core.errors import InvalidArgument
from semidp.mechanisms.discrete import (
    bernoulli_exp,
    discrete_gaussian,
    discrete_gaussian_array,
    discrete_gaussian_normaliser,
    discrete_gaussian_pmf,
    discrete_gaussian_variance,
    discrete_laplace,
    discrete_laplace_array,
    discrete_laplace_pmf,
    double_geometric,
    double_geometric_pmf,
)
from tests.chi_square import P_PASS, chi2_pvalue


def scalar_draws(f: Callable[[np.random.Generator], int], n: int, seed: int) -> NDArray[np.int64]:
    rng = np.random.default_rng(seed)
    return np.array([f(rng) for _ in range(n)], dtype=np.int64)


# --------------------------------------------------------------------------- T-S targets


@pytest.mark.parametrize(
    ("sigma2", "norm", "var"),
    [
        (Fraction(1, 4), 1.27134152219, 0.215012675088),
        (Fraction(1, 2), 1.77263720483, 0.498979130833),
        (1, 2.50662828804, 0.999999788768),
        (2, 3.54490770181, 2.0),
    ],
)
def test_ts1_normaliser_and_variance(sigma2: Fraction | int, norm: float, var: float) -> None:
    """T-S1: N_Z(0, sigma^2) normaliser and variance (to 1e-10 given 12 printed digits)."""
    assert discrete_gaussian_normaliser(sigma2) == pytest.approx(norm, abs=1e-10)
    assert discrete_gaussian_variance(sigma2) == pytest.approx(var, abs=1e-11)
    assert discrete_gaussian_variance(sigma2) < float(sigma2)


def _exact_delta(sigma2: int, eps: float, sens: int = 1) -> float:
    xs = np.arange(-200, 201, dtype=np.int64)
    pmf = discrete_gaussian_pmf(xs, sigma2)

    def tail(k: int) -> float:
        return float(np.sum(pmf[xs >= k]))

    a = math.floor(eps * sigma2 / sens - sens / 2) + 1
    b = math.floor(eps * sigma2 / sens + sens / 2) + 1
    return tail(a) - math.exp(eps) * tail(b)


@pytest.mark.parametrize(("sigma2", "delta"), [(1, 0.141351), (4, 0.00724878)])
def test_ts2_exact_delta(sigma2: int, delta: float) -> None:
    """T-S2: exact 1-D delta(eps=1), sensitivity 1, from the sampler's pmf."""
    assert _exact_delta(sigma2, 1.0) == pytest.approx(delta, rel=1e-5)


def test_ts3_zcdp_conversion() -> None:
    """T-S3: CKS zCDP -> (eps, delta): rho = 0.5, delta = 1e-6 gives eps = 5.221534."""
    rho, target = 0.5, 1e-6

    def log_delta(eps: float) -> float:
        def f(alpha: float) -> float:
            return (alpha - 1) * (alpha * rho - eps) - math.log(alpha - 1) + alpha * math.log(1 - 1 / alpha)

        res = optimize.minimize_scalar(f, bounds=(1.0 + 1e-9, 1e4), method="bounded", options={"xatol": 1e-12})
        return float(res.fun)

    eps = optimize.brentq(lambda e: log_delta(e) - math.log(target), 0.1, 20.0, xtol=1e-10)
    assert eps == pytest.approx(5.221534, abs=2e-6)


def test_ts4_laplace_variance() -> None:
    """T-S4: Var Lap_Z(3) = 2a/(1-a)^2, a = e^{-1/3} = 17.8343; sampled variance agrees."""
    a = math.exp(-1 / 3)
    exact = 2 * a / (1 - a) ** 2
    assert exact == pytest.approx(17.8343, abs=1e-4)
    xs = np.arange(-400, 401, dtype=np.int64)
    assert float(np.sum(xs.astype(float) ** 2 * discrete_laplace_pmf(xs, 3))) == pytest.approx(exact)
    draws = discrete_laplace_array(3, 200_000, rng=np.random.default_rng(4))
    # s.e. of the sample variance ~ sqrt((m4 - var^2)/n) ~ 0.1; 5 s.e.
    assert float(np.var(draws)) == pytest.approx(exact, abs=0.6)


# --------------------------------------------------------------------------- goodness of fit


def test_bernoulli_exp_frequencies() -> None:
    cases: list[tuple[Fraction, int]] = [(Fraction(1, 3), 1), (Fraction(5, 2), 2), (Fraction(0), 3)]
    for gamma, seed in cases:
        rng = np.random.default_rng(seed)
        n = 20_000
        k = sum(bernoulli_exp(gamma, rng=rng) for _ in range(n))
        p = math.exp(-float(gamma))
        if p == 1.0:
            assert k == n
            continue
        assert stats.binomtest(k, n, p).pvalue > P_PASS
        # 20% off in gamma is rejected
        assert stats.binomtest(k, n, math.exp(-1.2 * float(gamma))).pvalue < P_PASS


LAPLACE_CASES = [(Fraction(3), 11), (Fraction(7, 4), 12), (Fraction(1, 2), 13)]


@pytest.mark.parametrize(("scale", "seed"), LAPLACE_CASES)
def test_discrete_laplace_fit(scale: Fraction, seed: int) -> None:
    draws = scalar_draws(lambda r: discrete_laplace(scale, rng=r), 20_000, seed)
    assert chi2_pvalue(draws, lambda x: discrete_laplace_pmf(x, scale)) > P_PASS
    assert chi2_pvalue(draws, lambda x: discrete_laplace_pmf(x, scale * Fraction(6, 5))) < P_PASS


@pytest.mark.parametrize(("scale", "seed"), LAPLACE_CASES)
def test_discrete_laplace_array_fit(scale: Fraction, seed: int) -> None:
    draws = discrete_laplace_array(scale, 50_000, rng=np.random.default_rng(seed), batch_size=4096)
    assert chi2_pvalue(draws, lambda x: discrete_laplace_pmf(x, scale)) > P_PASS
    assert chi2_pvalue(draws, lambda x: discrete_laplace_pmf(x, scale * Fraction(6, 5))) < P_PASS


GAUSS_CASES = [(Fraction(1, 4), 21), (Fraction(2), 22), (Fraction(25, 3), 23)]


@pytest.mark.parametrize(("sigma2", "seed"), GAUSS_CASES)
def test_discrete_gaussian_fit(sigma2: Fraction, seed: int) -> None:
    draws = scalar_draws(lambda r: discrete_gaussian(sigma2, rng=r), 15_000, seed)
    assert chi2_pvalue(draws, lambda x: discrete_gaussian_pmf(x, sigma2)) > P_PASS
    assert chi2_pvalue(draws, lambda x: discrete_gaussian_pmf(x, sigma2 * Fraction(6, 5))) < P_PASS


@pytest.mark.parametrize(("sigma2", "seed"), GAUSS_CASES)
def test_discrete_gaussian_array_fit(sigma2: Fraction, seed: int) -> None:
    draws = discrete_gaussian_array(sigma2, 50_000, rng=np.random.default_rng(seed), batch_size=5000)
    assert chi2_pvalue(draws, lambda x: discrete_gaussian_pmf(x, sigma2)) > P_PASS
    assert chi2_pvalue(draws, lambda x: discrete_gaussian_pmf(x, sigma2 * Fraction(6, 5))) < P_PASS


@pytest.mark.parametrize(("ratio", "seed"), [(Fraction(1, 2), 31), (Fraction(4, 5), 32)])
def test_double_geometric_fit(ratio: Fraction, seed: int) -> None:
    draws = scalar_draws(lambda r: double_geometric(ratio, rng=r), 20_000, seed)
    assert chi2_pvalue(draws, lambda x: double_geometric_pmf(x, ratio)) > P_PASS
    # ratio off by 20% in the "scale" -1/ln(a)
    wrong = Fraction(math.exp(math.log(float(ratio)) / 1.2)).limit_denominator(10**6)
    assert chi2_pvalue(draws, lambda x: double_geometric_pmf(x, wrong)) < P_PASS


def test_discrete_gaussian_variance_matches_series() -> None:
    sigma2 = Fraction(9, 2)
    draws = discrete_gaussian_array(sigma2, 200_000, rng=np.random.default_rng(41))
    exact = discrete_gaussian_variance(sigma2)
    se = exact * math.sqrt(2 / draws.size)
    assert abs(float(np.var(draws)) - exact) < 5 * se
    assert abs(float(np.mean(draws))) < 5 * math.sqrt(exact / draws.size)


def test_symmetry() -> None:
    """P(X = k) = P(X = -k): sign test on the nonzero draws of each sampler."""
    rng = np.random.default_rng(51)
    samples = [
        discrete_gaussian_array(3, 100_000, rng=rng),
        discrete_laplace_array(Fraction(5, 2), 100_000, rng=rng),
        scalar_draws(lambda r: double_geometric(Fraction(2, 3), rng=r), 20_000, 52),
        scalar_draws(lambda r: discrete_gaussian(Fraction(3, 2), rng=r), 10_000, 53),
    ]
    for d in samples:
        nz = d[d != 0]
        assert stats.binomtest(int(np.sum(nz > 0)), nz.size, 0.5).pvalue > P_PASS
        for k in (1, 2):
            a, b = int(np.sum(d == k)), int(np.sum(d == -k))
            assert stats.binomtest(a, a + b, 0.5).pvalue > P_PASS


def test_large_rationals_scalar() -> None:
    """Scalar path is exact beyond int64 (uniform draws on big denominators)."""
    rng = np.random.default_rng(61)
    big = Fraction(10**30 + 1, 10**29)  # ~10
    xs = [discrete_gaussian(big, rng=rng) for _ in range(200)]
    assert all(isinstance(x, int) for x in xs)
    with pytest.raises(InvalidArgument, match="sigma2"):
        discrete_gaussian_array(big, 10, rng=rng)


# --------------------------------------------------------------------------- API contract


def test_reproducible_from_seed() -> None:
    def run(seed: int) -> list[int]:
        rng = np.random.default_rng(seed)
        return (
            [discrete_gaussian(Fraction(7, 3), rng=rng) for _ in range(50)]
            + [discrete_laplace(2, rng=rng) for _ in range(50)]
            + [double_geometric(Fraction(1, 3), rng=rng) for _ in range(50)]
            + list(discrete_gaussian_array(5, 100, rng=rng, batch_size=64))
            + list(discrete_laplace_array(2, 100, rng=rng))
        )

    assert run(7) == run(7)
    assert run(7) != run(8)


def test_rng_required() -> None:
    with pytest.raises(TypeError):
        discrete_gaussian(1)  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        discrete_laplace(1, np.random.default_rng(0))  # type: ignore[call-arg]
    with pytest.raises(InvalidArgument, match="rng"):
        discrete_laplace(1, rng=np.random.RandomState(0))  # type: ignore[arg-type]
    with pytest.raises(InvalidArgument, match="rng"):
        discrete_gaussian_array(1, 5, rng=None)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("call", "text"),
    [
        (lambda r: discrete_gaussian(0, rng=r), "sigma2=0"),
        (lambda r: discrete_gaussian(Fraction(-1, 2), rng=r), "sigma2=Fraction(-1, 2)"),
        (lambda r: discrete_gaussian(1.5, rng=r), "sigma2=1.5"),  # type: ignore[arg-type]
        (lambda r: discrete_laplace(-3, rng=r), "scale=-3"),
        (lambda r: discrete_laplace(True, rng=r), "scale=True"),
        (lambda r: double_geometric(1, rng=r), "ratio=1"),
        (lambda r: double_geometric(Fraction(3, 2), rng=r), "ratio=Fraction(3, 2)"),
        (lambda r: double_geometric(0, rng=r), "ratio=0"),
        (lambda r: bernoulli_exp(-1, rng=r), "gamma=-1"),
        (lambda r: discrete_laplace_array(1, -2, rng=r), "size=-2"),
        (lambda r: discrete_gaussian_array(1, 5, rng=r, batch_size=0), "batch_size=0"),
        (lambda r: discrete_laplace_array(Fraction(2**40, 3), 5, rng=r), "scale="),
    ],
)
def test_bad_parameters(call: Callable[[np.random.Generator], object], text: str) -> None:
    with pytest.raises(InvalidArgument, match=text.replace("(", r"\(").replace(")", r"\)")):
        call(np.random.default_rng(0))
