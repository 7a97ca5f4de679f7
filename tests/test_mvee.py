"""Minimum-volume enclosing ellipsoid of ±points (GGY AAAI-22 Alg 2/3 step 1).

Targets cite ``docs/reference/subspace-integer-postprocessing.md`` §6 (T-G6). The cvxpy route
is cross-checked against Khachiyan's iteration (an independent method) and
against closed forms for the symmetric cases.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from numpy.typing import NDArray

from semidp.accountant.core.errors import InvalidArgument, SearchTooLarge
from semidp.mechanisms.mvee import EnclosingEllipsoid, mvee, mvee_khachiyan

F = NDArray[np.float64]

STRETCHED = np.array([[3.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 0.5], [3.0, 1.0, 0.5]])
"""Columns of diag(3, 1, 0.5) [I 1] (T-G6), one per row."""


def _null_basis_total(n: int) -> F:
    q: F = np.linalg.svd(np.ones((1, n)))[2][1:].T
    return q


def _both(points: F) -> list[EnclosingEllipsoid]:
    return [mvee(points), mvee_khachiyan(points)]


def _certified_inside(e: EnclosingEllipsoid, points: F) -> None:
    assert e.max_mahalanobis <= 1.0
    assert e.contains(points)
    # and independently of the module's own bound: plain solve, with a margin far above rounding
    w = np.linalg.solve(e.shape, points.T)
    assert float(np.max(np.linalg.norm(w, axis=0))) <= 1.0 + 1e-12


# ---------------------------------------------------------------- T-G6


def test_T_G6_total_invariant_ball() -> None:
    # C = 1^T, n = 6, points Q_N^T e_j (rows of Q_N): by permutation symmetry the MVEE is a ball,
    # F = sqrt((n - 1)/n) I (closed form: all points have norm sqrt(5/6) and the design u = 1/6 is optimal).
    n = 6
    q = _null_basis_total(n)
    closed = math.sqrt((n - 1) / n)
    assert closed == pytest.approx(0.912871, abs=1e-6)
    for e, atol in zip(_both(q), (1e-5, 1e-8)):
        assert np.allclose(e.singular_values, 0.912871, atol=1e-5)
        assert np.allclose(e.shape, closed * np.eye(n - 1), atol=atol)
        _certified_inside(e, q)
        assert np.all(e.mahalanobis(q) >= 1.0 - 1e-5)  # every point on the boundary
        assert e.log_det_gap >= 0.0 and e.log_det_gap < 1e-6
        assert e.log_det_lower_bound <= (n - 1) * math.log(closed) <= e.log_det


def test_T_G6_stretched_cross_polytope() -> None:
    # Closed form: the uniform design u = 1/4 satisfies the Kiefer-Wolfowitz optimality condition
    # g_j = v_j^T W^{-1} v_j = k = 3 for every point, so F = (3 W)^{1/2}, W = sum_j v_j v_j^T / 4.
    w = STRETCHED.T @ STRETCHED / 4
    g = np.einsum("ij,jk,ik->i", STRETCHED, np.linalg.inv(w), STRETCHED)
    assert np.allclose(g, 3.0, atol=1e-12)
    sv_closed = np.sqrt(np.linalg.eigvalsh(3 * w))[::-1]
    assert np.allclose(sv_closed, [3.7429, 1.0607, 0.4908], atol=5e-5)  # T-G6 as printed
    for e, atol in zip(_both(STRETCHED), (1e-4, 1e-8)):
        assert np.allclose(e.singular_values, sv_closed, atol=atol)
        assert np.allclose(e.singular_values, [3.7429, 1.0607, 0.4908], atol=1e-4)
        _certified_inside(e, STRETCHED)
        assert np.all(e.mahalanobis(STRETCHED) >= 1.0 - 1e-5)  # all points on the boundary
        assert float(np.sum(e.singular_values**2)) == pytest.approx(0.75 * float(np.sum(STRETCHED**2)), rel=1e-4)


def test_cvxpy_and_khachiyan_agree_and_certify_each_other() -> None:
    rng = np.random.default_rng(4)
    pts = rng.standard_normal((40, 4)) @ np.diag([5.0, 2.0, 1.0, 0.1])
    a, b = mvee(pts), mvee_khachiyan(pts)
    for e in (a, b):
        _certified_inside(e, pts)
    # each route's lower bound is valid for the other's (enclosing) ellipsoid
    assert b.log_det_lower_bound <= a.log_det and a.log_det_lower_bound <= b.log_det
    assert abs(a.log_det - b.log_det) < 1e-5
    assert a.log_det_gap < 1e-5 and b.log_det_gap < 1e-5
    assert np.max(np.abs(a.shape - b.shape)) < 1e-2 * float(b.singular_values[0])
    assert a.method == "cvxpy:CLARABEL" and a.status == "optimal" and a.iterations is None
    assert b.method == "khachiyan" and b.status == "converged" and (b.iterations or 0) > 0
    assert a.rescale == pytest.approx(1.0, abs=1e-4) and b.rescale == pytest.approx(1.0, abs=1e-4)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(k=st.integers(1, 4), extra=st.integers(0, 6), seed=st.integers(0, 2**32 - 1))
def test_routes_agree_on_random_point_sets(k: int, extra: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    pts = rng.standard_normal((k + extra, k)) * rng.uniform(0.2, 5.0, size=k)
    assume(np.linalg.matrix_rank(pts) == k and np.linalg.cond(pts) < 1e6)
    a, b = mvee(pts), mvee_khachiyan(pts)
    for e in (a, b):
        _certified_inside(e, pts)
        # Kiefer-Wolfowitz bound: no enclosing ellipsoid beats it, e.g. the ball of radius max ||v||
        assert e.log_det_lower_bound <= k * math.log(float(np.max(np.linalg.norm(pts, axis=1)))) + 1e-9
    assert b.log_det_lower_bound <= a.log_det + 1e-12 and a.log_det_lower_bound <= b.log_det + 1e-12
    assert abs(a.log_det - b.log_det) < 1e-4


def test_containment_is_enforced_even_for_a_loose_solver() -> None:
    # SCS is a first-order solver (looser tolerances); the rescale makes the result enclosing regardless.
    e = mvee(STRETCHED, solver="SCS")
    _certified_inside(e, STRETCHED)
    assert e.method == "cvxpy:SCS" and e.status in ("optimal", "optimal_inaccurate")
    assert e.log_det_gap >= 0.0 and e.log_det_gap < 1e-3
    # a point just outside is detected
    far = e.shape @ np.array([1.0, 0.0, 0.0]) * (1 + 1e-6)
    assert not e.contains(far) and e.contains(far / (1 + 2e-6))


def test_one_dimensional_and_signs() -> None:
    pts = np.array([[2.0], [-3.0], [1.0]])
    for e in _both(pts):
        assert e.shape.shape == (1, 1) and e.shape[0, 0] == pytest.approx(3.0, rel=1e-8)
        _certified_inside(e, pts)
    # passing both v and -v changes nothing
    a, b = mvee_khachiyan(STRETCHED), mvee_khachiyan(np.vstack([STRETCHED, -STRETCHED]))
    assert np.allclose(a.shape, b.shape, atol=1e-7)


# ---------------------------------------------------------------- errors


def test_refuses_points_that_do_not_span() -> None:
    flat = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [1.0, 1.0, 0.0]])
    for f in (mvee, mvee_khachiyan):
        with pytest.raises(InvalidArgument, match=r"rank 2 < k = 3"):
            f(flat)
    with pytest.raises(InvalidArgument, match=r"rank 0 < k = 2"):
        mvee(np.zeros((3, 2)))


def test_bad_inputs_and_size_refusal() -> None:
    with pytest.raises(InvalidArgument, match="non-finite"):
        mvee(np.array([[1.0, np.nan], [0.0, 1.0]]))
    with pytest.raises(InvalidArgument, match="2-D"):
        mvee(np.ones(3))
    with pytest.raises(InvalidArgument, match="shape"):
        mvee(np.zeros((0, 3)))
    with pytest.raises(SearchTooLarge, match="khachiyan"):
        mvee(np.eye(5), max_work=100)
    with pytest.raises(InvalidArgument, match="max_iterations=1"):
        mvee_khachiyan(np.random.default_rng(0).standard_normal((30, 4)), max_iterations=1)
    with pytest.raises(InvalidArgument, match="tol="):
        mvee_khachiyan(STRETCHED, tol=0.0)
    e = mvee_khachiyan(STRETCHED)
    with pytest.raises(InvalidArgument, match="dimension 2"):
        e.mahalanobis(np.ones((1, 2)))
