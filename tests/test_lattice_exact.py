"""Exact lattice samplers from free coordinates (DGGY 2023 Def 9 / Def 13;
docs/reference/subspace-integer-postprocessing.md §3.2-3.5).

Targets: T-I5 (d = 2 exact law), T-I6 (d = 3 exact moments, recomputed here by
enumeration), T-I7 (4x4 table; here against exact values computed by FFT convolution,
snippet below), the 102-cell total at eps = 0.192 (acceptance = P(S_d = 0)/P(DG = 0),
computed here by quadrature). Distribution tests are seeded (house style R12): each
chi-square passes at p > P_PASS and has a "wrong law" twin that the same test rejects;
moments are compared within 5 standard errors.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from fractions import Fraction

import numpy as np
import pytest
import sympy
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from numpy.typing import NDArray
from scipy import integrate, stats

from semidp.accountant.core.budget import Budget
from semidp.accountant.core.errors import InvalidArgument, SearchTooLarge, UnsupportedRelease
from semidp.accountant.lattice.kernel import counting_matrix, table_margins_matrix, total_matrix
from semidp.mechanisms.discrete import discrete_gaussian_pmf
from semidp.mechanisms.lattice_exact import (
    ExactLatticeGaussian,
    ExactLatticeLaplace,
    ExactLatticeSampler,
    FreeSplit,
    NoFreeSplit,
    free_coordinates,
    search_free_split,
)
from semidp.mechanisms.lattice_mcmc import BudgetExhausted
from tests.chi_square import P_PASS, Pmf, dg_pmf

#: A 6 x 7 0/1 counting matrix whose kernel lattice is Z (2,-2,-3,-3,-2,4,3): no cell is a
#: +-1 coordinate, so no free-coordinate split exists (found by random search, proved below).
NO_SPLIT_01 = [
    [1, 0, 0, 1, 1, 0, 1],
    [1, 1, 1, 0, 0, 0, 1],
    [0, 1, 1, 0, 1, 1, 1],
    [0, 1, 0, 1, 1, 1, 1],
    [0, 0, 1, 0, 0, 0, 1],
    [1, 0, 1, 1, 0, 1, 0],
]


# --------------------------------------------------------------------------- helpers


def chi2_pvalue(observed: NDArray[np.float64], probs: NDArray[np.float64]) -> float:
    """Chi-square p-value of bin counts against bin probabilities (the last bin pools the rest)."""
    n = observed.sum()
    e = n * probs
    assert np.all(e >= 5.0), "bins too thin for the chi-square approximation"
    return float(stats.chi2.sf(np.sum((observed - e) ** 2 / e), observed.size - 1))


def chi2_1d(draws: NDArray[np.int64], pmf: Pmf) -> float:
    """Chi-square of integer draws against a symmetric pmf: bins -m..m (expected >= 5) plus two tails."""
    n = draws.size

    def tail(m: int) -> float:  # P[|X| > m]
        return 1.0 - float(pmf(np.arange(-m, m + 1)).sum())

    m = 0
    while n * float(pmf(np.array([m + 1]))[0]) >= 5.0 and n * tail(m + 1) >= 10.0:
        m += 1
    xs = np.arange(-m, m + 1)
    obs = np.array([np.sum(draws == x) for x in xs] + [np.sum(draws < -m), np.sum(draws > m)], float)
    return chi2_pvalue(obs, np.concatenate([pmf(xs), [tail(m) / 2, tail(m) / 2]]))


def chi2_2d(
    uv: NDArray[np.int64],
    weight: Callable[[NDArray[np.int64], NDArray[np.int64]], NDArray[np.float64]],
    box: int,
    enum: int = 60,
) -> float:
    """Chi-square of 2-D integer draws against weights enumerated on |u|,|v| <= enum; bins |u|,|v| <= box + rest."""
    r = np.arange(-enum, enum + 1)
    u, v = np.meshgrid(r, r, indexing="ij")
    w = weight(u, v)
    w /= w.sum()
    inner = (np.abs(u) <= box) & (np.abs(v) <= box)
    probs = np.concatenate([w[inner], [w[~inner].sum()]])
    keys = {(int(a), int(b)): i for i, (a, b) in enumerate(zip(u[inner], v[inner]))}
    obs = np.zeros(probs.size)
    for a, b in uv.tolist():
        obs[keys.get((a, b), probs.size - 1)] += 1
    return chi2_pvalue(obs, probs)


def brute_force_split_exists(a: list[list[int]]) -> bool:
    """Some r-subset D of cells has |det A_(R,D)| = gcd of the maximal minors of A_R (sympy dets)."""
    m = sympy.Matrix(a)
    rows: list[int] = []
    for i in range(m.rows):
        if sympy.Matrix([a[j] for j in rows + [i]]).rank() > len(rows):
            rows.append(i)
    if not rows:
        return True
    ar = sympy.Matrix([a[i] for i in rows])
    minors = [
        abs(int(ar.extract(list(range(len(rows))), list(c)).det()))
        for c in itertools.combinations(range(m.cols), len(rows))
    ]
    g = math.gcd(*minors)
    return g in minors


def check_split(a: object, s: FreeSplit) -> None:
    """Independent re-check: A [I; M] = 0 in integers, and complete() on random z_F stays in the kernel."""
    arr = np.asarray(a, dtype=np.int64).reshape(-1, s.cells)
    assert not np.any(arr @ s.basis)
    assert sorted(s.free + s.dependent) == list(range(s.cells))
    zf = np.random.default_rng(0).integers(-50, 51, size=(20, len(s.free)))
    z = s.complete(zf)
    assert not np.any(z @ arr.T) and np.array_equal(z[:, list(s.free)], zf)


# --------------------------------------------------------------------------- splits


def test_splits_of_counting_matrices() -> None:
    """Total -> one dependent cell; block totals -> one per block; r x c margins -> r + c - 1 cells (anchor row + column)."""
    s = free_coordinates(total_matrix(5))
    assert s is not None and len(s.dependent) == 1 and s.exact == ((-1, -1, -1, -1),)
    blocks = counting_matrix([[0, 1, 2], [3, 4], [5, 6, 7, 8]], 10)  # cell 9 unconstrained
    s = free_coordinates(blocks)
    assert s is not None and s.dependent == (0, 3, 5) and 9 in s.free
    check_split(blocks, s)
    for r, c in [(2, 2), (3, 4), (4, 4), (10, 12)]:
        a = table_margins_matrix(r, c)  # all r + c rows (one dependent)
        s = free_coordinates(a)
        assert s is not None and len(s.dependent) == r + c - 1 and len(s.rows) == r + c - 1
        assert s.nodes == r + c - 1  # greedy, no backtracking (TU)
        assert int(np.abs(s.matrix).max()) == 1
        assert s.certificate.saturation_index == 1 and s.certificate.rank_of_C == (r - 1) * (c - 1)
        check_split(a, s)
    s = free_coordinates(table_margins_matrix(4, 4))
    assert s is not None and s.dependent == (0, 1, 2, 3, 4, 8, 12)  # anchor row 0 + column 0


def test_non_unimodular_rows_and_trivial_lattices() -> None:
    """|det A_(R,D)| = g (gcd of maximal minors) is the criterion, not |det| = 1."""
    s = free_coordinates([[2, 4]])  # Lambda = Z (-2, 1)
    assert s is not None and s.minor_gcd == 2 and s.dependent == (0,) and s.exact == ((-2,),)
    s = free_coordinates([[2, 1, 1]])  # has a split: z_1 = -2 z_0 - z_2
    assert s is not None and s.dependent == (1,) and s.exact == ((-2, -1),)
    check_split([[2, 1, 1]], s)
    s = free_coordinates([[1, 1, 0], [0, 1, 1], [1, 0, 1]])  # det 2, full rank: Lambda = {0}
    assert s is not None and s.free == () and s.minor_gcd == 2
    z = ExactLatticeLaplace([[1, 1, 0], [0, 1, 1], [1, 0, 1]], 1).sample(4, rng=np.random.default_rng(0))
    assert z.shape == (4, 3) and not np.any(z)
    s = free_coordinates(np.zeros((0, 3), dtype=np.int64))  # no constraint
    assert s is not None and s.free == (0, 1, 2) and s.dependent == ()


@pytest.mark.parametrize("a", [[[3, -2]], NO_SPLIT_01])
def test_no_split_is_reported_with_a_reason(a: list[list[int]]) -> None:
    """A genuine counterexample: the search is exhaustive and brute force over all subsets agrees."""
    assert free_coordinates(a) is None
    res = search_free_split(a)
    assert isinstance(res, NoFreeSplit) and res.exhaustive and "lattice_mcmc" in res.reason
    assert not brute_force_split_exists(a)
    with pytest.raises(UnsupportedRelease, match="no free-coordinate split"):
        ExactLatticeLaplace(a, 1)
    budget = search_free_split(NO_SPLIT_01, max_nodes=5)
    assert isinstance(budget, NoFreeSplit) and not budget.exhaustive and "max_nodes=5" in budget.reason


@settings(max_examples=60, deadline=None)
@given(k=st.integers(1, 3), d=st.integers(2, 5), data=st.data())
def test_search_agrees_with_brute_force(k: int, d: int, data: st.DataObject) -> None:
    """Property: a split is found iff some r cells have |det A_(R,D)| = g; every split found is valid."""
    a = data.draw(st.lists(st.lists(st.integers(-3, 3), min_size=d, max_size=d), min_size=k, max_size=k))
    res = search_free_split(a)
    assert isinstance(res, FreeSplit) == brute_force_split_exists(a)
    if isinstance(res, FreeSplit):
        check_split(a, res)
    else:
        assert res.exhaustive


# --------------------------------------------------------------------------- T-I5, T-I6 (l1)


def test_ti5_two_cells_exact_law() -> None:
    """T-I5: d = 2 total, eps = 1/4: z = (t, -t), t ~ DG(e^-0.5): Var 7.83540, P[0] 0.24492 (chi-square)."""
    a = math.exp(-0.5)
    assert 2 * a / (1 - a) ** 2 == pytest.approx(7.83540, abs=5e-5)
    assert (1 - a) / (1 + a) == pytest.approx(0.24492, abs=5e-6)
    run = ExactLatticeLaplace([[1, 1]], 0.25).run(20_000, rng=np.random.default_rng(5), progress=False)
    z = run.noise
    assert z.dtype == np.int64 and np.all(z.sum(axis=1) == 0)
    t = z[:, 0]
    assert chi2_1d(t, dg_pmf(a)) > P_PASS
    assert chi2_1d(t, dg_pmf(math.exp(-0.5 * 1.1))) < P_PASS  # eps 10% too large is rejected
    # acceptance = P[DG(e^-1/4) pair sums to 0] / P[DG = 0] = Z(e^-1/2) / Z(e^-1/4), Z(b) = (1+b)/(1-b)
    b = math.exp(-0.25)
    acc = ((1 + a) / (1 - a)) / ((1 + b) / (1 - b))
    assert abs(run.acceptance_rate - acc) < 5 * math.sqrt(acc * (1 - acc) / run.proposals)
    t2 = t.astype(float) ** 2
    assert abs(float(t2.mean()) - 7.83540) < 5 * float(t2.std()) / math.sqrt(t.size)


def three_cell_weight(eps: float) -> Callable[[NDArray[np.int64], NDArray[np.int64]], NDArray[np.float64]]:
    return lambda u, v: np.exp(-eps * (np.abs(u) + np.abs(v) + np.abs(u + v)))


def test_ti6_three_cells_l1() -> None:
    """T-I6: d = 3 total, eps = 1/4: E|z1| 2.61092, Var z1 13.16557, E||z||_1 7.83276, P[z=0] 0.040806."""
    golden = {"abs_z1": 2.61092, "var_z1": 13.16557, "norm": 7.83276, "p0": 0.040806}
    r = np.arange(-250, 251)
    u, v = np.meshgrid(r, r, indexing="ij")
    w = three_cell_weight(0.25)(u, v)
    w /= w.sum()
    exact = {
        "abs_z1": float((w * np.abs(u)).sum()),
        "var_z1": float((w * u * u).sum()),
        "norm": float((w * (np.abs(u) + np.abs(v) + np.abs(u + v))).sum()),
        "p0": float(w[250, 250]),
    }
    for key, val in golden.items():
        assert exact[key] == pytest.approx(val, rel=2e-5), key
    z = ExactLatticeLaplace(total_matrix(3), Fraction(1, 4)).sample(20_000, rng=np.random.default_rng(7))
    assert np.all(z.sum(axis=1) == 0)
    zf = z.astype(float)
    sample = {
        "abs_z1": np.abs(zf[:, 0]),
        "var_z1": zf[:, 0] ** 2,
        "norm": np.abs(zf).sum(1),
        "p0": np.all(z == 0, axis=1).astype(float),
    }
    for key, x in sample.items():
        assert abs(float(x.mean()) - exact[key]) < 5 * float(x.std()) / math.sqrt(x.size), key
    assert chi2_2d(z[:, :2], three_cell_weight(0.25), box=4) > P_PASS
    assert chi2_2d(z[:, :2], three_cell_weight(0.275), box=4) < P_PASS  # eps 10% off is rejected


def test_no_constraint_is_product_double_geometric() -> None:
    """r = 0: every cell free, nothing to reject: i.i.d. DG(e^-eps) (DGGY §3.3 remark)."""
    run = ExactLatticeLaplace(np.zeros((0, 3), dtype=np.int64), 1).run(
        10_000, rng=np.random.default_rng(3), progress=False
    )
    assert run.acceptance_rate == 1.0 and run.proposals == run.accepted >= 10_000
    assert chi2_1d(run.noise[:, 1], dg_pmf(math.exp(-1))) > P_PASS


# --------------------------------------------------------------------------- Gaussian


def test_gaussian_two_by_two_table() -> None:
    """2x2 margins: z = t (1,-1,-1,1), ||z||^2 = 4 t^2, so t ~ N_Z(0, sigma^2/4) = N_Z(0, 9/4) for sigma = 3 (CKS20 pmf)."""
    z = ExactLatticeGaussian(table_margins_matrix(2, 2), 3).sample(20_000, rng=np.random.default_rng(6))
    t = z[:, 0]
    assert np.array_equal(z, t[:, None] * np.array([[1, -1, -1, 1]]))
    assert chi2_1d(t, lambda x: discrete_gaussian_pmf(x, Fraction(9, 4))) > P_PASS
    assert chi2_1d(t, lambda x: discrete_gaussian_pmf(x, Fraction(9, 4) * Fraction(6, 5))) < P_PASS


def test_gaussian_three_cell_total_vs_enumeration() -> None:
    """Total over 3 cells, sigma^2 = 5/2: chi-square against brute-force enumeration of the 2-D lattice."""
    smp = ExactLatticeGaussian.from_sigma2(total_matrix(3), Fraction(5, 2))
    assert smp.sigma2 == Fraction(5, 2) and smp.sigma_lower**2 <= 2.5
    z = smp.sample(20_000, rng=np.random.default_rng(9))
    assert np.all(z.sum(axis=1) == 0)

    def weight(s2: float) -> Callable[[NDArray[np.int64], NDArray[np.int64]], NDArray[np.float64]]:
        return lambda u, v: np.exp(-(u * u + v * v + (u + v) ** 2) / (2 * s2))

    assert chi2_2d(z[:, :2], weight(2.5), box=2, enum=30) > P_PASS
    assert chi2_2d(z[:, :2], weight(3.0), box=2, enum=30) < P_PASS


# --------------------------------------------------------------------------- T-I7 and the census total


# Exact 4x4 values (eps = 1/4) by FFT convolution, converged to all digits shown for K = 40, 56, 64:
#   w(v) = exp(-eps ||(v1, v2, v3, -v1-v2-v3)||_1) on |v_j| <= K (one table row with sum 0);
#   Z_Lambda = (w*w*w*w)(0); acceptance = Z_Lambda / Z_1^9, Z_1 = (1+a)/(1-a), a = e^-eps;
#   E|z_11| = sum_v |v1| w(v) (w*w*w)(-v) / Z_Lambda, and E||z||_1 = 16 E|z_11| (cells exchangeable).
FOUR_BY_FOUR = {"acceptance": 1.0359025e-3, "norm": 35.016764, "mean_sq": 8.815984}


def test_ti7_four_by_four_l1() -> None:
    """T-I7: 4x4 margins, eps = 1/4: every margin kept exactly; E||z||_1 = 35.0168 (MCMC reference 35.07 +- 0.04)."""
    run = ExactLatticeLaplace(table_margins_matrix(4, 4), 0.25).run(1000, rng=np.random.default_rng(8), progress=False)
    z = run.noise
    assert z.shape == (1000, 16) and not np.any(z @ table_margins_matrix(4, 4).T)
    nrm = np.abs(z).sum(axis=1).astype(float)
    se = float(nrm.std()) / math.sqrt(nrm.size)
    assert abs(float(nrm.mean()) - FOUR_BY_FOUR["norm"]) < 5 * se
    assert abs(float(nrm.mean()) - 35.07) < 5 * se + 0.04  # T-I7 (MC)
    sq = (z.astype(float) ** 2).mean(axis=1)
    assert abs(float(sq.mean()) - FOUR_BY_FOUR["mean_sq"]) < 5 * float(sq.std()) / math.sqrt(sq.size)
    acc = FOUR_BY_FOUR["acceptance"]
    assert abs(run.acceptance_rate - acc) < 5 * math.sqrt(acc / run.proposals)
    assert run.accepted >= 1000 and run.seconds > 0


def single_total_acceptance(d: int, eps: float) -> float:
    """P(sum of d i.i.d. DG(e^-eps) = 0) / P(DG = 0), by quadrature of the characteristic function."""
    a = math.exp(-eps)

    def phi_d(t: float) -> float:
        return float(((1 - a) ** 2 / (1 - 2 * a * math.cos(t) + a * a)) ** d)

    p0 = float(integrate.quad(phi_d, 0.0, math.pi, limit=200)[0]) / math.pi
    return p0 * (1 + a) / (1 - a)


def test_census_total_102_cells() -> None:
    """102-cell total, eps = 0.192 (read as 24/125): acceptance = P(S_102 = 0)/P(DG = 0) = 0.0563294."""
    acc = single_total_acceptance(102, 24 / 125)
    assert acc == pytest.approx(0.0563294, abs=1e-7)
    smp = ExactLatticeLaplace(total_matrix(102), 0.192)
    assert smp.epsilon == Fraction(24, 125) and smp.epsilon_upper >= 0.192
    run = smp.run(2000, rng=np.random.default_rng(11), progress=False)
    assert np.all(run.noise.sum(axis=1) == 0)
    assert abs(run.acceptance_rate - acc) < 5 * math.sqrt(acc * (1 - acc) / run.proposals)


# --------------------------------------------------------------------------- property: invariants kept


@settings(max_examples=30, deadline=None)
@given(
    k=st.integers(1, 3),
    d=st.integers(2, 6),
    data=st.data(),
    eps=st.sampled_from([Fraction(1, 2), Fraction(1), Fraction(2)]),
    gauss=st.booleans(),
    seed=st.integers(0, 2**32 - 1),
)
def test_every_draw_keeps_the_invariants(
    k: int, d: int, data: st.DataObject, eps: Fraction, gauss: bool, seed: int
) -> None:
    """Property: for random 0/1 counting matrices with a split, A z = 0 exactly on every draw."""
    a = np.array(
        data.draw(st.lists(st.lists(st.integers(0, 1), min_size=d, max_size=d), min_size=k, max_size=k)), dtype=np.int64
    )
    assume(free_coordinates(a) is not None)
    smp = ExactLatticeGaussian(a, 1 / eps) if gauss else ExactLatticeLaplace(a, eps)
    z = smp.sample(25, rng=np.random.default_rng(seed))
    assert z.shape == (25, d) and z.dtype == np.int64 and not np.any(z @ a.T)


# --------------------------------------------------------------------------- refusals and API


def test_l2_laplace_is_refused() -> None:
    with pytest.raises(UnsupportedRelease, match="not separable.*lattice_mcmc"):
        ExactLatticeLaplace(total_matrix(3), 0.25, "l2")
    with pytest.raises(InvalidArgument):
        ExactLatticeLaplace(total_matrix(3), 0.25, "linf")


def test_budget_refusals_name_both_numbers() -> None:
    smp = ExactLatticeLaplace(table_margins_matrix(4, 4), 0.25)
    with pytest.raises(SearchTooLarge, match=r"expected proposals for n=10000 .* exceeds the limit 5e\+04") as e:
        smp.sample(10_000, rng=np.random.default_rng(0), max_proposals=50_000)
    # the pilot (4 accepts of 4096) refuses on the 99.9% upper confidence bound of the rate:
    # "at least" ~ 2.8e6 proposals; the true expectation is 10^4 / 1.0359e-3 ~ 9.7e6
    assert 1e6 < e.value.size < 9.7e6 and e.value.limit == 50_000 and "at least" in str(e.value)
    with pytest.raises(BudgetExhausted, match="time budget"):
        smp.sample(10, rng=np.random.default_rng(0), budget=Budget.of(0.0))
    with pytest.raises(BudgetExhausted, match="max_proposals=100"):
        smp.sample(1, rng=np.random.default_rng(0), max_proposals=100)  # pilot can't refuse yet


def test_factory_parameters_and_diagnostics() -> None:
    """ExactLatticeSampler(A, epsilon=...) / (A, sigma=...) dispatch; floats become exact rationals on the safe side."""
    lap = ExactLatticeSampler(total_matrix(3), epsilon=0.25, norm="l1")
    gau = ExactLatticeSampler(total_matrix(3), sigma=2.5)
    assert isinstance(lap, ExactLatticeLaplace) and lap.epsilon == Fraction(1, 4)
    assert isinstance(gau, ExactLatticeGaussian) and gau.sigma2 == Fraction(25, 4) and gau.sigma_lower == 2.5
    # a float without a short decimal: epsilon rounded down, sigma^2 rounded up, both within 2^-29 relative
    third = ExactLatticeLaplace(total_matrix(3), 1 / 3)
    assert third.epsilon <= Fraction(1 / 3) and Fraction(1 / 3) - third.epsilon < Fraction(1, 2**29)
    assert third.epsilon_upper <= 1 / 3
    root = ExactLatticeGaussian(total_matrix(3), math.sqrt(10))
    assert root.sigma2 >= Fraction(math.sqrt(10)) ** 2 and root.sigma2 - 10 < Fraction(1, 2**20)
    assert root.sigma_lower >= math.sqrt(10) and Fraction(root.sigma_lower) ** 2 <= root.sigma2  # more noise
    assert lap.diagnostics()["proposals"] == 0 and lap.diagnostics()["acceptance_rate"] is None
    run = lap.run(100, rng=np.random.default_rng(4), progress=False)
    diag = lap.diagnostics()
    assert diag["epsilon"] == "1/4" and diag["draws"] == 100 and diag["proposals"] == run.proposals
    assert diag["acceptance_rate"] == pytest.approx(run.acceptance_rate) and diag["dependent_cells"] == [0]
    assert repr(lap) == "ExactLatticeLaplace(<1x3>, epsilon=Fraction(1, 4))"


def test_reproducible_and_exact_accept_fallback() -> None:
    smp = ExactLatticeLaplace(total_matrix(4), Fraction(1, 3))
    z1 = smp.sample(50, rng=np.random.default_rng(1))
    assert np.array_equal(z1, smp.sample(50, rng=np.random.default_rng(1)))
    # energies whose k * num overflows int64 take the exact Python-int path: Bern(e^{-huge}) = 0
    k = np.array([0, 2**61, 2**62], dtype=np.int64)
    out = smp._accept(k, np.random.default_rng(2))
    assert out.tolist() == [True, False, False]


@pytest.mark.parametrize(
    "make",
    [
        lambda: ExactLatticeLaplace(total_matrix(3), 0),
        lambda: ExactLatticeLaplace(total_matrix(3), -0.5),
        lambda: ExactLatticeLaplace(total_matrix(3), float("nan")),
        lambda: ExactLatticeLaplace(total_matrix(3), True),
        lambda: ExactLatticeLaplace(total_matrix(3), Fraction(1, 2**31)),  # explicit rational out of range
        lambda: ExactLatticeSampler(total_matrix(3)),  # neither epsilon nor sigma
        lambda: ExactLatticeSampler(total_matrix(3), epsilon=1, sigma=1),
        lambda: ExactLatticeSampler(total_matrix(3), sigma=1, norm="l2"),
        lambda: ExactLatticeLaplace([[0.5, 1.0]], 1),  # non-integer A
        lambda: ExactLatticeGaussian(total_matrix(3), Fraction(0)),
        lambda: ExactLatticeLaplace(total_matrix(3), 1).sample(2, rng=0),  # type: ignore[arg-type]
        lambda: ExactLatticeLaplace(total_matrix(3), 1).sample(-1, rng=np.random.default_rng(0)),
        lambda: search_free_split(total_matrix(3), max_nodes=0),
    ],
)
def test_invalid_arguments(make: Callable[[], object]) -> None:
    with pytest.raises(InvalidArgument):
        make()


def test_too_many_cells_is_refused() -> None:
    with pytest.raises(SearchTooLarge, match="free-coordinate split"):
        search_free_split(total_matrix(501))
