"""Coupled lattice MCMC and L-lag TV bounds (BJV 2019 Alg. 1, Thm 2.5; DGGY 2023 Alg. 2-3;
docs/reference/subspace-integer-postprocessing.md §3.5, T-I8).

The coupled kernel's marginals are tested against the *exact* one-step MH
kernel, enumerated here for a 2-dimensional lattice (d = 3, total fixed), by
seeded chi-square tests (p > 1e-4) with a wrong-kernel twin that must be
rejected. Meeting-time runs use fixed seeds; the full 200-pair T-I8 runs are
marked slow (the benchmark ``benchmarks/lattice.py`` also runs them).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.typing import NDArray
from scipy import stats

from semidp.accountant.core.errors import InvalidArgument
from semidp.accountant.lattice.kernel import basic_move_basis
from semidp.mechanisms.coupling import (
    CoupledKernel,
    MeetingTimes,
    choose_burn_in,
    meeting_times,
    tv_bound,
    tv_bound_curve,
)
from semidp.mechanisms.lattice_mcmc import BudgetExhausted, LatticeLaplaceTarget, LatticeSampler
from tests.chi_square import P_PASS

C3 = np.array([[1, 0], [-1, 1], [0, -1]], dtype=np.int64)  # d = 3 total: e_j - e_{j+1}


def four_by_four() -> LatticeSampler:
    """T-I7/T-I8: 4x4 margins (basic moves, anchor (0, 0)), l1, eps = 0.25, a = e^-1."""
    return LatticeSampler(LatticeLaplaceTarget(basic_move_basis(4, 4), 0.25), ratio=math.exp(-1))


# --------------------------------------------------------------------------- exact one-step kernel


def exact_kernel(s: tuple[int, int], eps: float, a: float, box: int = 40) -> dict[tuple[int, int], float]:
    """P(s -> s') of the MH kernel (DG(a) increments, l1 target on C3), enumerated over |e_j| <= box."""
    e1, e2 = np.meshgrid(np.arange(-box, box + 1), np.arange(-box, box + 1), indexing="ij")
    q = ((1 - a) / (1 + a)) ** 2 * a ** (np.abs(e1) + np.abs(e2))
    z0 = np.abs(C3 @ np.array(s)).sum()
    zs = np.abs(C3[:, 0, None, None] * (s[0] + e1) + C3[:, 1, None, None] * (s[1] + e2)).sum(0)
    acc = np.minimum(1.0, np.exp(-eps * (zs - z0)))
    p = q * acc
    out: dict[tuple[int, int], float] = {}
    for i, j in zip(*np.nonzero(p > 1e-15)):
        out[(s[0] + int(e1[i, j]), s[1] + int(e2[i, j]))] = float(p[i, j])
    out[s] = 1.0 - float(p.sum()) + float(p[box, box])  # e = 0, plus every rejected proposal
    return out


def kernel_pvalue(draws: NDArray[np.int64], pmf: dict[tuple[int, int], float]) -> float:
    """Chi-square p-value of 2-D integer draws against a pmf (bins with expected < 5 pooled)."""
    n = draws.shape[0]
    keys = [k for k, v in pmf.items() if n * v >= 5]
    index = {k: i for i, k in enumerate(keys)}
    obs = np.zeros(len(keys) + 1)
    for row in map(tuple, draws.tolist()):
        obs[index.get(row, len(keys))] += 1
    exp_ = np.array([n * pmf[k] for k in keys] + [n * (1.0 - sum(pmf[k] for k in keys))])
    if exp_[-1] < 1e-9:
        exp_, obs = exp_[:-1], obs[:-1]
    return float(stats.chi2.sf(np.sum((obs - exp_) ** 2 / exp_), obs.size - 1))


@pytest.mark.parametrize(
    ("coupling", "s_y"),
    [("hybrid", (15, -12)), ("hybrid", (2, -1)), ("maximal", (15, -12)), ("maximal", (1, 0))],
    ids=["hybrid-far(CRN)", "hybrid-close(maximal)", "maximal-far", "maximal-close"],
)
def test_coupled_marginals_are_the_mh_kernel(coupling: str, s_y: tuple[int, int]) -> None:
    """Each coordinate chain of the coupled kernel makes one exact MH step (BJV19 §2; module docstring)."""
    eps, a, n = 0.25, math.exp(-1), 40_000
    kernel = CoupledKernel(LatticeSampler(LatticeLaplaceTarget(C3, eps), ratio=a), coupling)  # type: ignore[arg-type]
    assert kernel.threshold == 9  # ceil(6 * proposal s.d.) at a = e^-1
    s_x = (0, 0)
    x, y = kernel.step(np.tile(s_x, (n, 1)), np.tile(s_y, (n, 1)), rng=np.random.default_rng(21))
    assert kernel_pvalue(x, exact_kernel(s_x, eps, a)) > P_PASS
    assert kernel_pvalue(y, exact_kernel(s_y, eps, a)) > P_PASS
    assert kernel_pvalue(y, exact_kernel(s_y, 0.5, a)) < P_PASS  # power: the eps = 0.5 kernel is rejected
    met = float(np.mean(np.all(x == y, axis=1)))
    if max(abs(s_y[0]), abs(s_y[1])) <= 2:
        assert met > 0.05  # the maximal coupling makes close chains meet (8% at (2, -1))
    else:
        assert met < 0.01  # far apart: (almost) never equal after one step


@pytest.mark.parametrize("coupling", ["hybrid", "maximal", "crn"])
def test_faithful(coupling: str) -> None:
    """Equal states stay equal forever (here: 200 steps for 50 pairs on the 4x4 table)."""
    kernel = CoupledKernel(four_by_four(), coupling)  # type: ignore[arg-type]
    rng = np.random.default_rng(4)
    x = kernel.sampler.initial_states(50, rng=rng)
    y = x.copy()
    moved = np.zeros(50, dtype=bool)
    x0 = x.copy()
    for _ in range(200):
        x, y = kernel.step(x, y, rng=rng)
        assert np.array_equal(x, y)
        moved |= np.any(x != x0, axis=1)
    assert moved.all()


def test_meeting_times_4x4_hybrid_and_tv_bound() -> None:
    """Meeting times are finite for 4x4 (hybrid); T-I8 in small: 40 pairs, L = 2000."""
    mt = meeting_times(four_by_four(), lag=2000, pairs=40, rng=np.random.default_rng(8), progress=False)
    assert mt.censored == 0 and mt.pairs == 40 and np.all(mt.tau > 2000)
    ts = np.arange(0, int(mt.tau.max()) + 10, 97)
    curve = tv_bound_curve(mt, ts)
    assert np.all(np.diff(curve) <= 0) and curve[-1] == 0.0
    assert tv_bound(mt, 2000).estimate >= 0.1  # not yet converged at 2000 (reference: 0.37)
    assert tv_bound(mt, 10_000).estimate <= 0.1  # converged near 1e4 (reference: 0.005)


def test_tv_bound_formula() -> None:
    """BJV19 Thm 2.5 estimator by hand: tau = (5, 12), L = 3."""
    mt = MeetingTimes(np.array([5, 12]), np.array([True, True]), 3, "hybrid", 0, 0.0)
    assert tv_bound(mt, 0).estimate == 2.0  # ceil(2/3) = 1, ceil(9/3) = 3
    assert tv_bound(mt, 5).estimate == 1.0  # 0, ceil(4/3) = 2
    assert tv_bound(mt, 9).estimate == 0.0
    assert tv_bound_curve(mt, np.array([0, 5, 9])).tolist() == [2.0, 1.0, 0.0]


@settings(max_examples=50, deadline=None)
@given(
    taus=st.lists(st.integers(1, 5000), min_size=1, max_size=30),
    lag=st.integers(1, 600),
)
def test_tv_curve_is_non_increasing(taus: list[int], lag: int) -> None:
    tau = np.array(taus) + lag  # meeting times exceed L
    mt = MeetingTimes(tau, np.ones(tau.size, dtype=bool), lag, "hybrid", 0, 0.0)
    curve = tv_bound_curve(mt, np.arange(0, 6000, 37))
    assert np.all(np.diff(curve) <= 0) and np.all(curve >= 0)
    bd = tv_bound(mt, 100)
    assert bd.estimate <= bd.upper <= max(bd.b, 1)


@pytest.mark.parametrize("k", [0, 3, 20])
def test_upper_is_at_least_clopper_pearson(k: int) -> None:
    """With 0/1 terms the KL-Hoeffding bound is a valid (looser) Clopper-Pearson-type bound."""
    lag, n = 10, 200
    tau = np.array([lag + 15] * k + [lag + 5] * (n - k))  # term 1 for k pairs, 0 otherwise, at t = 10
    mt = MeetingTimes(tau, np.ones(n, dtype=bool), lag, "hybrid", 0, 0.0)
    bd = tv_bound(mt, 10, confidence=0.95)
    assert bd.estimate == k / n and bd.b == 1
    cp = 1.0 - 0.05 ** (1 / n) if k == 0 else float(stats.beta.ppf(0.95, k + 1, n - k))
    assert bd.upper >= cp * (1 - 1e-9)
    if k == 0:
        assert bd.upper == pytest.approx(cp, rel=1e-6)


def test_choose_burn_in() -> None:
    rng = np.random.default_rng(3)
    tau = rng.integers(60, 3000, size=400)
    mt = MeetingTimes(tau, np.ones(400, dtype=bool), 50, "hybrid", 0, 0.0)
    b = choose_burn_in(mt, 0.05, criterion="estimate")
    assert b.bound.estimate <= 0.05 < tv_bound(mt, b.t - 1).estimate
    u = choose_burn_in(mt, 0.05)  # the default is the confidence-adjusted bound
    assert u.criterion == "upper" and u.bound.upper <= 0.05 and u.t >= b.t
    with pytest.raises(InvalidArgument, match="pairs"):
        choose_burn_in(mt, 1e-3)  # 400 pairs cannot show 1e-3 at 95%
    with pytest.raises(InvalidArgument):
        choose_burn_in(mt, 0.0)


def test_budget_and_censoring() -> None:
    smp = four_by_four()
    with pytest.raises(BudgetExhausted, match="had not met"):
        meeting_times(smp, lag=5, pairs=10, rng=np.random.default_rng(0), max_iterations=6, progress=False)
    mt = meeting_times(
        smp,
        lag=5,
        pairs=10,
        rng=np.random.default_rng(0),
        max_iterations=6,
        censor=True,
        progress=False,
    )
    assert mt.censored > 0
    with pytest.raises(InvalidArgument, match="censored"):
        tv_bound(mt, 0)
    with pytest.raises(InvalidArgument):
        CoupledKernel(smp, "independent")  # type: ignore[arg-type]


@pytest.mark.slow
def test_ti8_full_l1() -> None:
    """T-I8: 4x4 l1, 200 pairs, L = 2000 (reference, maximal coupling: 0.370 / 0.065 / 0.005 at 2000 / 5000 / 1e4)."""
    mt = meeting_times(four_by_four(), lag=2000, pairs=200, rng=np.random.default_rng(18), progress=False)
    assert 0.1 <= tv_bound(mt, 2000).estimate <= 1.0
    assert tv_bound(mt, 10_000).estimate <= 0.05
    assert choose_burn_in(mt, 0.01, criterion="estimate").t <= 20_000


@pytest.mark.slow
def test_ti8b_full_l2() -> None:
    """T-I8b: 4x4 l2 (a = e^-1.5), 200 pairs, L = 2000 (reference: 1.815 / 0.125 / 0.000 at 2e4 / 5e4 / 1e5)."""
    smp = LatticeSampler(LatticeLaplaceTarget(basic_move_basis(4, 4), 0.25, "l2"), ratio=math.exp(-1.5))
    mt = meeting_times(smp, lag=2000, pairs=200, rng=np.random.default_rng(19), progress=False)
    assert tv_bound(mt, 5000).estimate >= 0.5
    assert tv_bound(mt, 100_000).estimate <= 0.05
