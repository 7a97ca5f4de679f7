"""Planted bugs the projection statistic reads poorly, with their correct twins (verify.audit_classifier and the
likelihood ratios of verify.audit_pairs): a data-dependent noise scale (tests/test_audit_peers.py), and one bug
per noise family of Step 12 item 4 (tests/test_audit_families.py): a discrete Gaussian with sigma^2 too small,
a K-norm sampler with the wrong ball, a clamp that leaks, P+ on an under-noised base.

Audited through ``tests.planted_bugs.spec_text`` with ``callable = "tests.planted_audit_bugs:<name>"`` (DP
framework, replace-one, the 3 x 3 test table; the pairs move one record out of cell 0).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from fractions import Fraction

import numpy as np
from numpy.typing import ArrayLike, NDArray

from semidp.accountant.data.dataspace import DataSpace
from semidp.accountant.data.invariants import Margins
from semidp.accountant.geometry.knorm import KNormBall
from semidp.accountant.geometry.knorm_cache import cached_knorm_ball
from semidp.accountant.sensitivity.search import semi_sensitivity_search
from semidp.mechanisms.discrete import discrete_gaussian_array
from semidp.mechanisms.examples import projected_gaussian
from semidp.mechanisms.knorm import uniform_in_ball
from semidp.mechanisms.nonneg_projection import project_nonneg
from semidp.mechanisms.projection import AffineConstraint

FloatArray = NDArray[np.float64]
SQRT6 = math.sqrt(6.0)
SIGMA = math.sqrt(2.0)  # 1-GDP for a replace-one histogram (l2 sensitivity sqrt 2)


def _gaussian(h: ArrayLike, rng: np.random.Generator, sigma: float, size: int | None) -> FloatArray:
    x = np.asarray(h, dtype=np.float64).reshape(-1)
    n = 1 if size is None else size
    out = x[None, :] + sigma * rng.standard_normal((n, x.size))
    return out[0] if size is None else out


def scale_from_data(h: ArrayLike, rng: np.random.Generator, size: int | None = None) -> FloatArray:
    """Bug: 20 % more noise when some cell holds 2 or more records (the scale leaks the data: a variance test
    reads it in every cell, the projection on x' - x only through the tails of two)."""
    big = int(np.max(np.asarray(h))) >= 2
    return _gaussian(h, rng, SIGMA * (1.2 if big else 1.0), size)


def scale_fixed(h: ArrayLike, rng: np.random.Generator, size: int | None = None) -> FloatArray:
    """Correct twin: the same noise whatever the data (1-GDP)."""
    return _gaussian(h, rng, SIGMA, size)


# ------------------------------------------------------------------ noise families the projection reads weakly
# Item 4 of Step 12: for lattice (discrete Gaussian), K-norm, clamped and post-processed (P+) releases, a planted
# bug and its correct twin each (audited in tests/test_audit_families.py, spec text from tests.planted_bugs).

#: The 3 x 3 test table (a(t) = 3 under both one-way margins; tests.planted_bugs.TABLE).
TABLE = (1, 1, 0, 0, 0, 1, 1, 0, 0)
#: Replace-one DP histogram: l1 and squared l2 sensitivity 2.
LAPLACE_SCALE = 2.0  # 1-DP
CLAMP = 4.0  # the leaky clamp's bound on the noise: 2 Laplace scales


def _batch(draw: Callable[[int], FloatArray], size: int | None) -> FloatArray:
    out = draw(1 if size is None else size)
    return out[0] if size is None else out


def discrete_gaussian_exact(h: ArrayLike, rng: np.random.Generator, size: int | None = None) -> NDArray[np.int64]:
    """Correct: integer histogram + N_Z(0, 2) per cell: 0.5-zCDP under replace-one (rho = 2 / (2 sigma^2)) [CKS20]."""
    x = np.asarray(h, dtype=np.int64).reshape(-1)
    n = 1 if size is None else size
    out = x[None, :] + discrete_gaussian_array(2, n * x.size, rng=rng).reshape(n, x.size)
    return out[0] if size is None else out


def discrete_gaussian_small(h: ArrayLike, rng: np.random.Generator, size: int | None = None) -> NDArray[np.int64]:
    """Bug: sigma^2 = 1/2 instead of 2 (the add-remove sensitivity and sigma mixed up): 2-zCDP, not 0.5-zCDP."""
    x = np.asarray(h, dtype=np.int64).reshape(-1)
    n = 1 if size is None else size
    out = x[None, :] + discrete_gaussian_array(Fraction(1, 2), n * x.size, rng=rng).reshape(n, x.size)
    return out[0] if size is None else out


def laplace_clamped_output(h: ArrayLike, rng: np.random.Generator, size: int | None = None) -> FloatArray:
    """Correct: 1-DP Laplace histogram, each noisy count clamped to [-CLAMP, total + CLAMP] (post-processing)."""
    x = np.asarray(h, dtype=np.float64).reshape(-1)
    hi = float(x.sum()) + CLAMP
    return _batch(lambda n: np.clip(x[None, :] + rng.laplace(0.0, LAPLACE_SCALE, (n, x.size)), -CLAMP, hi), size)


def laplace_clamped_noise(h: ArrayLike, rng: np.random.Generator, size: int | None = None) -> FloatArray:
    """Bug: the noise is clamped to [-CLAMP, CLAMP] before it is added: every release lies within CLAMP of the
    data, and the clamp's atoms at x +- CLAMP tell x from x' (no epsilon is private)."""
    x = np.asarray(h, dtype=np.float64).reshape(-1)
    return _batch(lambda n: x[None, :] + np.clip(rng.laplace(0.0, LAPLACE_SCALE, (n, x.size)), -CLAMP, CLAMP), size)


@functools.lru_cache(maxsize=2)
def _ball_at(radius: int) -> KNormBall:
    """K = conv(S) of the test table's Semi-DP sensitivity space at semi-adjacent radius ``radius``."""
    space = DataSpace.of(("A", 3), ("B", 3))
    res = semi_sensitivity_search(space, Margins((("A",), ("B",))), radius, table=TABLE)
    ball, _ = cached_knorm_ball(res.cell_space)
    return ball


def _knorm_with(h: ArrayLike, rng: np.random.Generator, ball: KNormBall, size: int | None) -> FloatArray:
    x = np.asarray(h, dtype=np.float64).reshape(-1)
    n = 1 if size is None else size
    r = rng.gamma(shape=ball.dimension + 1, scale=1.0, size=n)  # epsilon = 1 [CA24, Prop. 7]
    out = x[None, :] + (r[:, None] * uniform_in_ball(ball, rng=rng, size=n)) @ ball.basis.T
    return out[0] if size is None else out


def knorm_wrong_ball(h: ArrayLike, rng: np.random.Generator, size: int | None = None) -> FloatArray:
    """Bug: the K-norm ball built at radius 2 (2 x 2 swaps only) instead of a(t) = 3: a 3-cycle has K-norm 2 in
    that ball, so the pairs that differ by one are only 2-DP."""
    return _knorm_with(h, rng, _ball_at(2), size)


def knorm_right_ball(h: ArrayLike, rng: np.random.Generator, size: int | None = None) -> FloatArray:
    """Correct twin: the same sampler with K = conv(S) at a(t) = 3 (1-DP Semi-DP)."""
    return _knorm_with(h, rng, _ball_at(3), size)


@functools.lru_cache(maxsize=1)
def _margins_matrix() -> NDArray[np.float64]:
    a = np.zeros((6, 9))
    for i in range(3):
        a[i, 3 * i : 3 * i + 3] = 1.0  # row totals
        a[3 + i, i::3] = 1.0  # column totals
    return a


def _pplus(h: ArrayLike, rng: np.random.Generator, sigma: float, size: int | None) -> FloatArray:
    """(P+) [ZVF21]: the projected Gaussian with scale ``sigma`` mapped to the nearest non-negative table with the
    same margins (batched ADMM, :func:`semidp.mechanisms.nonneg_projection.project_nonneg`)."""
    a = _margins_matrix()
    x = np.asarray(h, dtype=np.float64).reshape(-1)
    base = projected_gaussian(h, rng, sigma, shape=(3, 3), size=1 if size is None else size)
    out = project_nonneg(AffineConstraint.of(a, a @ x), base).solution
    return np.asarray(out[0] if size is None else out, dtype=np.float64)


def pplus_exact(h: ArrayLike, rng: np.random.Generator, size: int | None = None) -> FloatArray:
    """Correct: P+ of the 1-GDP projected Gaussian (sigma = sqrt 6; post-processing keeps 1-GDP Semi-DP)."""
    return _pplus(h, rng, SQRT6, size)


def pplus_under_noised(h: ArrayLike, rng: np.random.Generator, size: int | None = None) -> FloatArray:
    """Bug: P+ of a projected Gaussian with sigma = sqrt 6 / 2 (2-GDP base; the projection does not repair it)."""
    return _pplus(h, rng, SQRT6 / 2, size)
