"""Projection post-processing (P) and (P+) [ZVF21]: closed forms, sort-and-threshold, hierarchies, general A.

Targets and formulas: ``docs/reference/subspace-integer-postprocessing.md`` §4.1. The independent check for
(P+) is cvxpy (Clarabel); every check here also rejects a wrong twin (a threshold off by one).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from numpy.typing import NDArray

from semidp.accountant.core.errors import InvalidArgument
from semidp.mechanisms.nonneg_projection import project_nonneg, project_nonneg_cvxpy
from semidp.mechanisms.projection import AffineConstraint, HierarchicalTotals, project_simplex

F = NDArray[np.float64]
Simplex = Callable[[F, float], F]


def _simplex_off_by_one(x: F, b: float) -> F:
    """Wrong twin: the sort-and-threshold with rho one too large (tau from the (rho+1)-prefix)."""
    u = -np.sort(-x, axis=-1)
    css = np.cumsum(u, axis=-1) - b
    j = np.arange(1, x.shape[-1] + 1)
    rho = np.minimum(np.sum(u * j > css, axis=-1) + 1, x.shape[-1])
    tau = np.take_along_axis(css, (rho - 1)[..., None], axis=-1)[..., 0] / rho
    out: F = np.maximum(x - tau[..., None], 0.0)
    return out


def _kkt_violation(x: F, b: float, v: F) -> float:
    """Largest violation of the simplex-projection KKT conditions (independent of sorting).

    v >= 0, sum v = b, and v = max(x - tau, 0) with tau = (sum_{v_i>0} x_i - b)/|{v_i > 0}|.
    """
    if np.any(v < 0):
        return float(-v.min())
    supp = v > 1e-12 * max(1.0, b)
    if not supp.any():
        return abs(b) + float(np.abs(v).max())
    tau = (x[supp].sum() - b) / supp.sum()
    return max(abs(float(v.sum()) - b), float(np.max(np.abs(v - np.maximum(x - tau, 0.0)))))


def _cvxpy_simplex(x: F, b: float) -> F | None:
    """cvxpy's answer, or None when the solver does not report ``optimal`` (house style R9)."""
    res = project_nonneg_cvxpy(AffineConstraint.of(np.ones((1, x.size)), [b]), x[None, :])
    return res.solution[0] if res.all_optimal else None


# --------------------------------------------------------------------------- (P)


def test_P_total_closed_form_and_exact_map() -> None:
    c = AffineConstraint.total(7, 70.0)
    assert c.exact and c.pinv_map.shape == (7, 1)
    assert np.all(c.pinv_map == 1 / 7)  # exact rational 1/7, rounded once
    x = np.arange(7.0) * 3 - 4
    np.testing.assert_allclose(c.project(x), x - (x.sum() - 70.0) / 7, rtol=0, atol=1e-12)
    assert float(c.residual(c.project(x))) <= 1e-12


def test_P_float_path_agrees_with_exact_path() -> None:
    rng = np.random.default_rng(3)
    a = rng.integers(-2, 3, (4, 9)).astype(float)
    x = rng.integers(0, 9, 9).astype(float)
    exact = AffineConstraint.of(a, a @ x)
    flt = AffineConstraint.of(a + 1e-300, a @ x)  # non-integer entries force the SVD path
    assert exact.exact and not flt.exact
    noisy = x + rng.laplace(0, 3, (50, 9))
    np.testing.assert_allclose(exact.project(noisy), flt.project(noisy), atol=1e-9)
    assert float(np.max(exact.residual(exact.project(noisy)))) <= 1e-9


def test_P_rank_deficient_rows_and_inconsistent_rhs() -> None:
    a = np.array([[1.0, 1, 0, 0], [0, 0, 1, 1], [1, 1, 1, 1]])  # third row = sum of the first two
    c = AffineConstraint.of(a, [3.0, 4.0, 7.0])
    assert c.rows == (0, 1)
    v = c.project(np.array([1.0, 1.0, 1.0, 1.0]))
    np.testing.assert_allclose(v, [1.5, 1.5, 2.0, 2.0])
    with pytest.raises(InvalidArgument, match="rhs is not in the range"):
        AffineConstraint.of(a, [3.0, 4.0, 8.0])
    with pytest.raises(InvalidArgument, match="rhs has shape"):
        AffineConstraint.of(a, [3.0, 4.0])


def test_P_is_unbiased_symmetry_lemma1() -> None:
    """[ZVF21, Lemma 1]: P commutes with the reflection about x when A x = b (exactly, draw by draw)."""
    rng = np.random.default_rng(4)
    a = rng.integers(0, 3, (3, 8)).astype(float)
    x = rng.integers(0, 20, 8).astype(float)
    c = AffineConstraint.of(a, a @ x)
    noisy = x + rng.laplace(0, 4, (100, 8))
    np.testing.assert_allclose(2 * x - c.project(noisy), c.project(2 * x - noisy), atol=1e-9)


# --------------------------------------------------------------------------- (P+) one total


def test_simplex_small_cases() -> None:
    np.testing.assert_allclose(project_simplex(np.array([3.0, -1.0, 2.0]), 3.0), [2.0, 0.0, 1.0])
    np.testing.assert_allclose(project_simplex(np.array([5.0, 5.0]), 0.0), [0.0, 0.0])  # b = 0: the only point
    np.testing.assert_allclose(project_simplex(np.array([-7.0]), 4.0), [4.0])
    # per-draw totals broadcast over the leading axis
    out = project_simplex(np.array([[1.0, 1.0], [4.0, 0.0]]), np.array([4.0, 2.0]))
    np.testing.assert_allclose(out, [[2.0, 2.0], [2.0, 0.0]])


@pytest.mark.parametrize("bad", [-1.0, float("nan")])
def test_simplex_rejects_bad_total(bad: float) -> None:
    with pytest.raises(InvalidArgument, match="total="):
        project_simplex(np.ones(3), bad)


def test_simplex_rejects_non_finite_draws() -> None:
    with pytest.raises(InvalidArgument, match="noisy has non-finite"):
        project_simplex(np.array([1.0, np.inf]), 1.0)


vectors = st.integers(2, 12).flatmap(
    lambda n: st.lists(st.floats(-100, 100, allow_nan=False), min_size=n, max_size=n).map(np.array)
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(x=vectors, b=st.floats(0.0, 200.0))
def test_simplex_matches_cvxpy_and_kkt(x: F, b: float) -> None:
    v = project_simplex(x, b)
    assert np.all(v >= 0)
    assert _kkt_violation(x, b, v) <= 1e-9 * (1 + b + float(np.abs(x).max()))
    ref = _cvxpy_simplex(x, b)
    if ref is not None:  # an inaccurate solve is no reference; the KKT check above still applies
        assert float(np.max(np.abs(v - ref))) <= 1e-5 * (1 + b + float(np.abs(x).max()))


def test_batched_simplex_equals_row_by_row() -> None:
    rng = np.random.default_rng(5)
    x = rng.normal(0, 10, (300, 17))
    batched = project_simplex(x, 50.0)
    rows = np.stack([project_simplex(r, 50.0) for r in x])
    assert np.array_equal(batched, rows)
    np.testing.assert_allclose(batched.sum(axis=1), 50.0, rtol=1e-12)


def test_off_by_one_twin_is_rejected() -> None:
    """The same KKT and cvxpy checks that pass the real threshold fail the off-by-one twin."""
    rng = np.random.default_rng(6)
    bad_kkt, bad_cvx = 0, 0
    for _ in range(20):
        x = rng.normal(0, 10, 8)
        b = 20.0
        ours = project_simplex(x, b)
        twin = _simplex_off_by_one(x, b)
        ref = _cvxpy_simplex(x, b)
        assert ref is not None
        assert _kkt_violation(x, b, ours) <= 1e-9 * 200 and np.max(np.abs(ours - ref)) <= 1e-4
        bad_kkt += _kkt_violation(x, b, twin) > 1e-9 * 200
        bad_cvx += float(np.max(np.abs(twin - ref))) > 1e-4
    assert bad_kkt >= 15 and bad_cvx >= 15


# --------------------------------------------------------------------------- hierarchy


def _census_like(rng: np.random.Generator) -> tuple[list[NDArray[np.int64]], F]:
    """30 blocks in 6 counties (sizes 1..9) in 2 states in 1 nation, counts 0..30."""
    county = np.repeat(np.arange(6), [1, 3, 9, 5, 7, 5])
    state = np.array([0, 0, 0, 1, 1, 1])[county]
    nation = np.zeros(30, dtype=np.int64)
    return [nation, state, county], rng.integers(0, 30, 30).astype(float)


def test_hierarchy_matches_general_A_and_cvxpy() -> None:
    rng = np.random.default_rng(7)
    labels, x = _census_like(rng)
    h = HierarchicalTotals.from_counts(labels, x)
    c = h.constraint()
    noisy = x + rng.laplace(0, 6, (40, 30))
    # (P): per-group mean shift == the stacked affine projection
    np.testing.assert_allclose(h.project(noisy), c.project(noisy), atol=1e-9)
    # (P+): per-group simplex == batched ADMM on the stacked A == one cvxpy solve per draw
    ours = h.project_nonneg(noisy)
    assert np.all(ours >= 0) and float(np.max(c.residual(ours))) <= 1e-9
    admm = project_nonneg(c, noisy, tol=1e-10)
    assert admm.all_converged
    np.testing.assert_allclose(ours, admm.solution, atol=1e-5)
    ref = project_nonneg_cvxpy(c, noisy[:10])
    assert ref.all_optimal
    np.testing.assert_allclose(ours[:10], ref.solution, atol=1e-4)
    # the single county of one block is fixed at its total
    assert np.all(ours[:, 0] == x[0])


def test_hierarchy_with_one_level_is_the_simplex() -> None:
    rng = np.random.default_rng(8)
    x = rng.normal(5, 10, (100, 12))
    h = HierarchicalTotals.of([np.zeros(12, dtype=np.int64)], [[40.0]])
    np.testing.assert_allclose(h.project_nonneg(x), project_simplex(x, 40.0), atol=1e-12)


def test_hierarchy_rejects_crossed_or_inconsistent_levels() -> None:
    rows = np.array([0, 0, 1, 1])
    cols = np.array([0, 1, 0, 1])
    with pytest.raises(InvalidArgument, match="does not refine"):
        HierarchicalTotals.of([rows, cols], [[3.0, 4.0], [5.0, 2.0]])
    with pytest.raises(InvalidArgument, match="inconsistent"):
        HierarchicalTotals.of([np.zeros(4, dtype=np.int64), rows], [[10.0], [3.0, 4.0]])
    with pytest.raises(InvalidArgument, match="labels\\[0\\] must use every group label"):
        HierarchicalTotals.of([np.array([0, 2, 2])], [[1.0, 1.0, 1.0]])
    with pytest.raises(InvalidArgument, match="totals\\[0\\] must be finite and >= 0"):
        HierarchicalTotals.of([np.zeros(2, dtype=np.int64)], [[-1.0]])


def test_hierarchy_max_deviation_equals_lp() -> None:
    from semidp.mechanisms.projection_bias import max_deviation_lp

    rng = np.random.default_rng(9)
    labels, x = _census_like(rng)
    h = HierarchicalTotals.from_counts(labels, x)
    lp = max_deviation_lp(h.constraint(), x)
    assert lp.value == pytest.approx(h.max_deviation(x), abs=1e-6)
    assert lp.upper >= lp.value


# --------------------------------------------------------------------------- general A


def _general_problem(seed: int, m: int = 4, n: int = 15) -> tuple[AffineConstraint, F]:
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 3, (m, n)).astype(float)
    a[0] = 1.0  # a total: keeps {A v = b, v >= 0} bounded
    x = rng.integers(0, 12, n).astype(float)
    return AffineConstraint.of(a, a @ x), x


@pytest.mark.parametrize("seed", [10, 11, 12])
def test_batched_admm_matches_cvxpy(seed: int) -> None:
    c, x = _general_problem(seed)
    noisy = x + np.random.default_rng(seed).laplace(0, 5, (60, x.size))
    res = project_nonneg(c, noisy, tol=1e-10)
    assert res.all_converged
    assert np.all(res.solution >= 0)
    scale = np.maximum(1.0, np.abs(noisy).max(axis=1))
    assert np.all(res.kkt_residual <= 1e-10 * scale)
    assert float(np.max(c.residual(res.solution))) <= 1e-8
    ref = project_nonneg_cvxpy(c, noisy[:20])
    assert ref.all_optimal
    np.testing.assert_allclose(res.solution[:20], ref.solution, atol=1e-4)


def test_admm_reports_non_convergence_honestly() -> None:
    c, x = _general_problem(13)
    noisy = x + np.random.default_rng(13).laplace(0, 5, (5, x.size))
    res = project_nonneg(c, noisy, tol=1e-14, max_iter=10)
    assert not res.all_converged
    assert np.all(res.iterations == 10)


def test_admm_rejects_bad_arguments() -> None:
    c, x = _general_problem(14)
    with pytest.raises(InvalidArgument, match="relaxation"):
        project_nonneg(c, x, relaxation=2.0)
    with pytest.raises(InvalidArgument, match="tol"):
        project_nonneg(c, x, tol=0.0)
    with pytest.raises(InvalidArgument, match="noisy has shape"):
        project_nonneg(c, x[:-1])
