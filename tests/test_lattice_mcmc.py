"""Lattice MCMC for the generalized Laplace / Gaussian mechanisms (DGGY 2023;
docs/reference/subspace-integer-postprocessing.md §3.3-3.5, §6).

Targets: T-I5 (d = 2 exact law), T-I6 (d = 3 exact moments, recomputed here by
enumeration), T-I7 (4x4 table), T-I10 (double geometric). Distribution tests
are seeded (house style R12); chi-square tests pass at p > 1e-4 and each has a
"wrong law" twin that the same test rejects. The lattice bases are fixed, since
the chains' mixing depends on them: the single total's e_j - e_{j+1} and the
table basic moves with anchor (0, 0) (``accountant.lattice.kernel.basic_move_basis``;
both certified in ``tests/test_lattice.py``).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from fractions import Fraction

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.typing import NDArray

from semidp.accountant.core.budget import Budget
from semidp.accountant.core.errors import InvalidArgument
from semidp.accountant.lattice.kernel import (
    basic_move_basis,
    kernel_lattice_basis,
    table_margins_matrix,
    total_matrix,
)
from semidp.mechanisms.discrete import discrete_gaussian_pmf, double_geometric_pmf
from semidp.mechanisms.lattice_mcmc import (
    BudgetExhausted,
    LatticeGaussianTarget,
    LatticeLaplaceTarget,
    LatticeSampler,
    double_geometric_float,
    release_histogram,
)
from semidp.mechanisms.lattice_privacy import (
    approximate_sampler_delta,
    gaussian_zcdp_rho,
    laplace_pair_epsilon,
    per_person_distance,
    per_person_epsilon,
)
from tests.chi_square import P_PASS, chi2_pvalue, dg_pmf

# --------------------------------------------------------------------------- bases and pmfs


def total_basis(d: int) -> NDArray[np.int64]:
    """Columns e_j - e_{j+1}, j = 0..d-2: the library's closed form for the single total."""
    return kernel_lattice_basis(total_matrix(d), method="block").matrix


# --------------------------------------------------------------------------- T-I10


@pytest.mark.parametrize(
    ("log_a", "variance", "p0"),
    [(-1.0, 1.841347, 0.462117), (-1.5, 0.739421, 0.635149), (-2.5, 0.194845, 0.848284)],
)
def test_ti10_double_geometric(log_a: float, variance: float, p0: float) -> None:
    """T-I10: DG(a) variance 2a/(1-a)^2 and P[0] = (1-a)/(1+a) (6 printed digits), and the float sampler's fit."""
    a = math.exp(log_a)
    assert 2 * a / (1 - a) ** 2 == pytest.approx(variance, abs=5e-7)
    assert (1 - a) / (1 + a) == pytest.approx(p0, abs=5e-7)
    x = double_geometric_float(a, 200_000, rng=np.random.default_rng(10))
    assert chi2_pvalue(x, dg_pmf(a)) > P_PASS
    assert chi2_pvalue(x, dg_pmf(math.exp(1.15 * log_a))) < P_PASS  # a 15%-wrong rate is rejected
    # the float sampler's law agrees with the exact module's pmf formula
    xs = np.arange(-5, 6, dtype=np.int64)
    assert np.allclose(dg_pmf(a)(xs), double_geometric_pmf(xs, Fraction(a)), rtol=1e-12)


def test_float_dg_is_symmetric_with_mean_zero() -> None:
    x = double_geometric_float(math.exp(-1), 400_000, rng=np.random.default_rng(11))
    assert abs(float(x.mean())) < 5 * math.sqrt(1.841347 / x.size)
    assert abs(int(np.sum(x > 0)) - int(np.sum(x < 0))) < 5 * math.sqrt(x.size)


# --------------------------------------------------------------------------- T-I5 (d = 2)


@pytest.mark.parametrize(
    ("norm", "a", "variance", "p0"),
    [
        ("l1", math.exp(-0.5), 7.83540, 0.24492),
        ("l2", math.exp(-0.25 * math.sqrt(2)), 15.83437, 0.17496),
    ],
)
def test_ti5_two_cells_exact_law(norm: str, a: float, variance: float, p0: float) -> None:
    """T-I5: d = 2, total fixed, eps = 0.25: z = (t, -t), t ~ DG(e^{-2 eps}) (l1) or DG(e^{-sqrt2 eps}) (l2)."""
    assert 2 * a / (1 - a) ** 2 == pytest.approx(variance, abs=5e-5)
    assert (1 - a) / (1 + a) == pytest.approx(p0, abs=5e-6)
    target = LatticeLaplaceTarget(np.array([[1], [-1]]), 0.25, norm)  # type: ignore[arg-type]
    # burn-in: the coupling bound (L = 50, 400 pairs) is 0 at t = 100 (l1) and 0.0125 at t = 300 (l2)
    burn = 300 if norm == "l1" else 1000
    z = LatticeSampler(target).sample(20_000, burn_in=burn, rng=np.random.default_rng(5), progress=False)
    assert np.all(z.sum(axis=1) == 0)
    t = z[:, 0]
    assert chi2_pvalue(t, dg_pmf(a)) > P_PASS
    wrong = math.exp(1.2 * math.log(a))  # epsilon 20% too large
    assert chi2_pvalue(t, dg_pmf(wrong)) < P_PASS


def test_gaussian_target_two_cells_is_discrete_gaussian() -> None:
    """d = 2: z = (t, -t) with P[t] ~ exp(-2t^2/(2 sigma^2)), i.e. N_Z(0, sigma^2/2) (CKS20 pmf)."""
    sigma = 3.0
    z = LatticeSampler(LatticeGaussianTarget(np.array([[1], [-1]]), sigma)).sample(
        20_000, burn_in=300, rng=np.random.default_rng(6), progress=False
    )
    t = z[:, 0]
    assert chi2_pvalue(t, lambda x: discrete_gaussian_pmf(x, Fraction(9, 2))) > P_PASS
    assert chi2_pvalue(t, lambda x: discrete_gaussian_pmf(x, Fraction(9, 2) * Fraction(6, 5))) < P_PASS


# --------------------------------------------------------------------------- T-I6 (d = 3)


def exact_three_cells(norm: str, eps: float = 0.25, box: int = 250) -> dict[str, float]:
    """Exact moments for d = 3, total fixed: z = (u, v, -u-v), weights exp(-eps ||z||), by enumeration."""
    u, v = np.meshgrid(np.arange(-box, box + 1), np.arange(-box, box + 1), indexing="ij")
    z = np.stack([u, v, -u - v], axis=-1).astype(float)
    nrm = np.abs(z).sum(-1) if norm == "l1" else np.sqrt((z * z).sum(-1))
    w = np.exp(-eps * nrm)
    w /= w.sum()
    return {
        "abs_z1": float((w * np.abs(u)).sum()),
        "var_z1": float((w * u * u).sum()),
        "norm": float((w * nrm).sum()),
        "p0": float(w[box, box]),
    }


@pytest.mark.parametrize(
    ("norm", "golden"),
    [
        ("l1", {"abs_z1": 2.61092, "var_z1": 13.16557, "norm": 7.83276, "p0": 0.040806}),
        ("l2", {"abs_z1": 4.13667, "var_z1": 31.95919, "norm": 7.98475, "p0": 0.017207}),
    ],
)
def test_ti6_three_cells(norm: str, golden: dict[str, float]) -> None:
    """T-I6: d = 3, eps = 0.25. Enumeration reproduces the goldens; sampler moments within 5 standard errors."""
    exact = exact_three_cells(norm)
    for key, val in golden.items():
        assert exact[key] == pytest.approx(val, rel=2e-5), key
    target = LatticeLaplaceTarget(total_basis(3), 0.25, norm)  # type: ignore[arg-type]
    # l2 with a wider proposal than the default (a = e^-0.75) to mix faster; the coupling bound
    # (L = 100, 400 pairs) is 0 at t = 300 for both settings, so burn-in 600 is ample.
    ratio = None if norm == "l1" else math.exp(-0.75)
    z = LatticeSampler(target, ratio).sample(20_000, burn_in=600, rng=np.random.default_rng(7), progress=False)
    assert np.all(z.sum(axis=1) == 0)
    zf = z.astype(float)
    nrm = np.abs(zf).sum(1) if norm == "l1" else np.sqrt((zf * zf).sum(1))
    stats_ = {
        "abs_z1": np.abs(zf[:, 0]),
        "var_z1": zf[:, 0] ** 2,
        "norm": nrm,
        "p0": np.all(z == 0, axis=1).astype(float),
    }
    for key, sample in stats_.items():
        se = float(sample.std()) / math.sqrt(sample.size)
        assert abs(float(sample.mean()) - exact[key]) < 5 * se, key
    # power: the l1 and l2 laws differ by far more than 5 standard errors in E|z1|
    other = exact_three_cells("l2" if norm == "l1" else "l1")["abs_z1"]
    assert abs(float(stats_["abs_z1"].mean()) - other) > 5 * float(stats_["abs_z1"].std()) / math.sqrt(z.shape[0])


# --------------------------------------------------------------------------- T-I7 (4x4)


def test_ti7_four_by_four_l1() -> None:
    """T-I7: 4x4 margins, l1, eps = 0.25, a = e^-1: E||z||_1 ~ 35.07, mean z_ij^2 ~ 8.85, acceptance ~ 0.33.

    Small sample (200 chains, 4000 sweeps burn-in, 50 records thinned by 20),
    so the tolerances are loose (about 4 standard errors); every draw keeps all
    8 margins exactly.
    """
    c = basic_move_basis(4, 4)
    smp = LatticeSampler(LatticeLaplaceTarget(c, 0.25), ratio=math.exp(-1))
    rng = np.random.default_rng(8)
    run = smp.run(smp.initial_states(200, rng=rng), 5000, rng=rng, burn_in=4000, thin=20, progress=False)
    z = run.draws.reshape(-1, 16)
    assert z.shape == (50 * 200, 16)
    assert not np.any(z @ table_margins_matrix(4, 4).T)
    assert np.array_equal(run.noise, run.states @ c.T)
    assert abs(float(np.abs(z).sum(1).mean()) - 35.07) < 1.5
    assert abs(float((z.astype(float) ** 2).mean()) - 8.85) < 0.8
    assert abs(run.acceptance_rate - 0.33) < 0.02


@settings(max_examples=25, deadline=None)
@given(
    shape=st.sampled_from([(1, 3), (1, 6), (2, 2), (2, 3), (3, 3), (3, 4)]),
    eps=st.floats(0.05, 3.0),
    kind=st.sampled_from(["l1", "l2", "gauss"]),
    seed=st.integers(0, 2**32 - 1),
)
def test_every_draw_keeps_the_invariants(shape: tuple[int, int], eps: float, kind: str, seed: int) -> None:
    """Property: A z = 0 exactly for every recorded draw, and z = C s for the final states."""
    r, c = shape
    if r == 1:
        cb, a = total_basis(c), np.ones((1, c), dtype=np.int64)
    else:
        cb, a = basic_move_basis(r, c), table_margins_matrix(r, c)
    target = (
        LatticeGaussianTarget(cb, 1.0 / eps) if kind == "gauss" else LatticeLaplaceTarget(cb, eps, kind)  # type: ignore[arg-type]
    )
    smp = LatticeSampler(target)
    rng = np.random.default_rng(seed)
    run = smp.run(smp.initial_states(7, rng=rng), 60, rng=rng, thin=3, progress=False)
    assert run.draws.shape == (20, 7, r * c)
    assert not np.any(run.draws @ a.T)
    assert np.array_equal(run.noise, run.states @ cb.T)


# --------------------------------------------------------------------------- API details


def test_log_density_vectorised() -> None:
    c = basic_move_basis(3, 3)
    s = np.random.default_rng(0).integers(-5, 6, size=(10, 4))
    z = s @ c.T
    l1 = LatticeLaplaceTarget(c, 0.3).log_density(s)
    l2 = LatticeLaplaceTarget(c, 0.3, "l2").log_density(s)
    g = LatticeGaussianTarget(c, 2.0).log_density(s)
    assert np.allclose(l1, -0.3 * np.abs(z).sum(1))
    assert np.allclose(l2, -0.3 * np.sqrt((z * z).sum(1)))
    assert np.allclose(g, -(z * z).sum(1) / 8.0)


def test_default_ratio_rule() -> None:
    """a = e^-1 (l1) and e^-1.5 (l2) at eps = 0.25 (DGGY's tuning), scaling with the target width."""
    c = total_basis(3)
    assert LatticeSampler(LatticeLaplaceTarget(c, 0.25)).ratio[0] == pytest.approx(math.exp(-1))
    assert LatticeSampler(LatticeLaplaceTarget(c, 0.25, "l2")).ratio[0] == pytest.approx(math.exp(-1.5))
    assert LatticeSampler(LatticeLaplaceTarget(c, 0.5)).ratio[0] == pytest.approx(math.exp(-2))
    assert LatticeSampler(LatticeGaussianTarget(c, 4.0)).ratio[0] == pytest.approx(math.exp(-1.5))
    assert (
        LatticeSampler(LatticeLaplaceTarget(c, 0.192), ratio=math.exp(-2.5)).ratio.tolist()
        == [pytest.approx(math.exp(-2.5))] * 2
    )


def test_thinning_and_recording_are_consistent() -> None:
    """Recording does not consume randomness: thin = 5 keeps every 5th state of the thin = 1 run."""
    smp = LatticeSampler(LatticeLaplaceTarget(basic_move_basis(3, 3), 0.5))
    s0 = smp.initial_states(4, rng=np.random.default_rng(1))
    r1 = smp.run(s0, 2100, rng=np.random.default_rng(2), thin=1, progress=False)
    r5 = smp.run(s0, 2100, rng=np.random.default_rng(2), burn_in=100, thin=5, progress=False)
    assert np.array_equal(r5.draws, r1.draws[104::5])
    assert np.array_equal(r1.draws[-1], r1.noise)
    assert np.array_equal(r1.states, r5.states)
    assert r1.iterations == 2100 and not r1.stopped_early


def test_time_budget() -> None:
    smp = LatticeSampler(LatticeLaplaceTarget(total_basis(3), 0.25))
    rng = np.random.default_rng(0)
    run = smp.run(smp.initial_states(2, rng=rng), 10**6, rng=rng, budget=Budget.of(0.0), progress=False)
    assert run.stopped_early and run.iterations == 0 and run.draws.shape[0] == 0
    with pytest.raises(BudgetExhausted, match="time budget"):
        smp.sample(3, burn_in=10**6, rng=rng, budget=Budget.of(0.0), progress=False)
    # the deprecated keyword (one release): warns, and its seconds still stop the chain
    with pytest.warns(DeprecationWarning, match="time_budget"):
        old = smp.run(smp.initial_states(2, rng=rng), 10**6, rng=rng, time_budget=0.0, progress=False)
    assert old.stopped_early and old.iterations == 0
    with pytest.warns(DeprecationWarning, match="time_budget"):
        unlimited = smp.run(smp.initial_states(2, rng=rng), 5, rng=rng, time_budget=None, progress=False)
    assert not unlimited.stopped_early and unlimited.iterations == 5


def test_release_keeps_margins() -> None:
    x = np.array([15, 1, 3, 1, 20, 10, 10, 15, 3, 10, 10, 2, 12, 14, 7, 2])  # reference §3.6 table
    smp = LatticeSampler(LatticeLaplaceTarget(basic_move_basis(4, 4), 0.25))
    y, z = release_histogram(x, smp, burn_in=2000, rng=np.random.default_rng(3))
    a = table_margins_matrix(4, 4)
    assert np.array_equal(a @ y, a @ x) and np.array_equal(y - x, z)


@pytest.mark.parametrize(
    "make",
    [
        lambda: LatticeLaplaceTarget(np.array([[1.0], [-1.0]]), 0.25),  # float basis
        lambda: LatticeLaplaceTarget(np.array([[1, 2], [-1, -2]]), 0.25),  # dependent columns
        lambda: LatticeLaplaceTarget(np.array([[1], [-1]]), 0.0),
        lambda: LatticeLaplaceTarget(np.array([[1], [-1]]), float("nan")),
        lambda: LatticeLaplaceTarget(np.array([[1], [-1]]), 0.25, "linf"),  # type: ignore[arg-type]
        lambda: LatticeGaussianTarget(np.array([[1], [-1]]), -1.0),
        lambda: LatticeSampler(LatticeLaplaceTarget(np.array([[1], [-1]]), 0.25), ratio=1.0),
        lambda: LatticeSampler(LatticeLaplaceTarget(np.array([[1], [-1]]), 0.25), ratio=0.0),
        lambda: double_geometric_float(1.5, 3, rng=np.random.default_rng(0)),
    ],
)
def test_invalid_arguments(make: Callable[[], object]) -> None:
    with pytest.raises(InvalidArgument):
        make()


def test_int64_guard() -> None:
    """A target too wide for exact int64 energies is refused before a block runs, not silently wrapped."""
    smp = LatticeSampler(LatticeGaussianTarget(np.array([[1], [-1]]), 1e12), ratio=1 - 1e-9)
    rng = np.random.default_rng(0)
    with pytest.raises(InvalidArgument, match="int64"):
        smp.run(smp.initial_states(2, rng=rng), 10, rng=rng, progress=False)


# --------------------------------------------------------------------------- privacy numbers


def test_privacy_numbers() -> None:
    """DGGY Thm 10 per pair / per person; the approximate-sampler delta (reference §3.5); flagged zCDP rho."""
    assert laplace_pair_epsilon(0.25, 2) == 0.5
    assert per_person_epsilon(0.25, "l1") == 0.5
    pl2 = per_person_epsilon(0.25, "l2")
    assert mpmath.mpf(pl2) >= mpmath.sqrt(2) / 4 and pl2 - math.sqrt(2) / 4 < 1e-15
    assert per_person_distance("l1") == 2.0 and per_person_distance("l2") >= math.sqrt(2)
    d = approximate_sampler_delta(0.25, 2, 0.01)
    exact = (1 + mpmath.exp(mpmath.mpf(0.5))) * mpmath.mpf(0.01)
    assert mpmath.mpf(d) >= exact and d - float(exact) < 1e-15
    assert approximate_sampler_delta(0.25, 2, 0.0) == 0.0
    assert gaussian_zcdp_rho(2.0, math.sqrt(2)) >= 0.25
    assert gaussian_zcdp_rho(1.0, 3.0) == 4.5
    bad: list[Callable[[], float]] = [
        lambda: per_person_epsilon(0.25, "l3"),
        lambda: approximate_sampler_delta(0.25, 2, 1.5),
        lambda: gaussian_zcdp_rho(0.0, 1.0),
        lambda: laplace_pair_epsilon(-1.0, 1.0),
    ]
    for call in bad:
        with pytest.raises(InvalidArgument):
            call()
