"""The closed-form optimal K-norm ball of a 2 x c table (type-A root polytope) against qhull and Monte Carlo.

Facts checked (Cho & Awan 2024, Prop. 7, Prop. 30, Alg. 2, Thm. 31; module notes of
``accountant.geometry.root_polytope``): the sensitivity space of a 2 x c table under both
margins is {0} and (v, -v), v = e_j - e_k (reference T-S2b for 2 x 3); conv(S) has
2^c - 2 facets, volume 2^((c-1)/2) sqrt(c) C(2c-2, c-1) / (c-1)! in orthonormal
coordinates, gauge ||x||_1 / 4 on span(S); for U uniform on K, ||U||_K^(c-1) ~ U(0, 1);
K-norm noise Y = R U, R ~ Gamma(s + 1, eps), has ||Y||_K ~ Gamma(s, eps) and, in the
first-row cells v, density prop. to exp(-eps ||v||_1 / 2) on {sum v = 0}: i.i.d.
Laplace(2 / eps) conditioned on a zero sum, which gives an independent Monte Carlo
(importance sampling) for E||noise||_2.

Statistical tests are seeded (house style R12) with a false-alarm budget
``TEST_FAILURE_RATE`` per assertion; each "twin" shows a test has power against the
bug it is there to catch.
"""

from __future__ import annotations

import itertools
import math
import time
from collections.abc import Callable
from fractions import Fraction
from functools import cache

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.typing import NDArray
from scipy import stats

from semidp.accountant.core.errors import InvalidArgument
from semidp.accountant.data.invariants import Margins
from semidp.accountant.geometry.knorm import KNormBall
from semidp.accountant.geometry.knorm_certificates import GaugeCertificate, exact_gauge
from semidp.accountant.geometry.root_polytope import (
    METHOD,
    RootPolytopeBall,
    facet_size_weights,
    helmert_basis,
    root_polytope_log_volume,
    two_row_moves,
)
from semidp.accountant.guarantees.definitions import PureDP
from semidp.accountant.guarantees.relations import Replace, SemiAdjacent
from semidp.accountant.sensitivity.spaces import SensitivitySpace, histogram_space, table_space
from semidp.mechanisms.knorm import KNormMechanism, uniform_in_ball

TEST_FAILURE_RATE = 1e-3
MARGINS = SemiAdjacent(Replace(), Margins((("row",), ("col",))), 3)


@cache
def hull(c: int) -> KNormBall:
    return KNormBall.from_space(table_space(2, c), relation=MARGINS)


def zero_sum_rows(rng: np.random.Generator, n: int, c: int) -> NDArray[np.float64]:
    v = rng.normal(size=(n, c))
    return np.asarray(v - v.mean(axis=1, keepdims=True), dtype=np.float64)


# --------------------------------------------------------------------------- the space


@pytest.mark.parametrize("c", range(2, 9))
def test_two_row_space_is_the_moves_set_without_three_cycles(c: int) -> None:
    """table_space(2, c) at radius 2 and 3 is {0} and (v, -v), v = e_j - e_k: c(c-1) + 1 vectors, rank c - 1."""
    want = two_row_moves(c)
    for radius in (2, 3):
        sp = table_space(2, c, radius=radius)
        assert set(sp.vectors) == want
    assert len(want) == c * (c - 1) + 1
    assert table_space(2, c).rank == c - 1  # reference T-S4: (r-1)(c-1)
    if c == 3:
        assert table_space(2, 3).size == 7  # reference T-S2b


def test_basis_is_orthonormal_and_matches_t_s5_for_2x2() -> None:
    for c in (2, 5, 50):
        b = RootPolytopeBall.for_table(c)
        assert b.basis.shape == (2 * c, c - 1)
        assert np.allclose(b.basis.T @ b.basis, np.eye(c - 1), atol=1e-13)
        assert np.allclose(helmert_basis(c).sum(axis=0), 0.0, atol=1e-13)
        # span: every move lies in it, and the projector has trace c - 1 (reference T-S4)
        assert np.allclose(np.trace(b.basis @ b.basis.T), c - 1)
    q = RootPolytopeBall.for_table(2).basis[:, 0]
    assert np.allclose(q, 0.5 * np.array([1, -1, -1, 1]), atol=1e-15)  # reference T-S5


# --------------------------------------------------------------------------- volume and facets vs qhull


def test_vandermonde_total_weight_exact() -> None:
    """sum_k C(c,k) C(c-2,k-1) = C(2c-2, c-1), exact integers."""
    for c in range(2, 80):
        assert sum(facet_size_weights(c)) == math.comb(2 * c - 2, c - 1)


@pytest.mark.parametrize("c", range(3, 8))
def test_volume_and_facet_count_match_qhull(c: int) -> None:
    k, r = hull(c), RootPolytopeBall.from_space(table_space(2, c))
    assert r.facet_count == k.facet_count == 2**c - 2
    assert r.volume == pytest.approx(k.volume, rel=1e-10)  # qhull, same orthonormal-coordinate measure
    # the formula as a sum of cone volumes, (sqrt 2)^(c-1) sqrt(c) / ((c-1)(k-1)!(c-k-1)!) each
    cones = sum(
        math.comb(c, j) * math.sqrt(c) / ((c - 1) * math.factorial(j - 1) * math.factorial(c - j - 1))
        for j in range(1, c)
    )
    assert r.volume == pytest.approx(2 ** ((c - 1) / 2) * cones, rel=1e-12)


@pytest.mark.parametrize("c", [4, 5, 6])
def test_every_qhull_facet_is_some_f_i_and_cone_volumes_by_size_match(c: int) -> None:
    """qhull's facets are exactly the F_I (tight vertices {e_i - e_j : i in I, j not in I}); the fan
    volumes grouped by |I| equal C(c,k) sqrt(2)^(c-1) sqrt(c) / ((c-1)(k-1)!(c-k-1)!)."""
    k = hull(c)
    verts = k.vertex_vectors[:, :c]  # first-row v = e_i - e_j
    plus, minus = verts.argmax(axis=1), verts.argmin(axis=1)
    subsets = set()
    for a in k.facets:
        tight = np.flatnonzero(k.vertices @ a > 1 - 1e-9)
        i_set = frozenset(plus[tight].tolist())
        assert {(int(p), int(m)) for p, m in zip(plus[tight], minus[tight])} == {
            (i, j) for i in i_set for j in range(c) if j not in i_set
        }
        subsets.add(i_set)
    assert len(subsets) == 2**c - 2
    by_size = np.zeros(c)
    for simplex, vol in zip(k.fan, k.fan_volumes):
        by_size[len(set(plus[simplex].tolist()))] += vol  # a full facet simplex uses every i in I
    for j in range(1, c):
        want = (
            math.comb(c, j)
            * 2 ** ((c - 1) / 2)
            * math.sqrt(c)
            / ((c - 1) * math.factorial(j - 1) * math.factorial(c - j - 1))
        )
        assert by_size[j] == pytest.approx(want, rel=1e-9)
    assert by_size.sum() / k.volume == pytest.approx(1.0, rel=1e-12)


def test_log_volume_stays_finite_for_large_c() -> None:
    assert math.isfinite(root_polytope_log_volume(5000)) and root_polytope_log_volume(5000) < 0
    lv = root_polytope_log_volume(100)
    assert RootPolytopeBall.for_table(100).volume == math.exp(lv) > 0
    assert RootPolytopeBall.for_table(300).volume == 0.0 < math.exp(-700)  # documented underflow; log is exact


# --------------------------------------------------------------------------- gauge


@pytest.mark.parametrize("c", [2, 3, 6, 13])
def test_gauge_of_s_is_at_most_one_and_exactly_one_on_every_nonzero_element(c: int) -> None:
    b = RootPolytopeBall.for_table(c)
    for u in b.space.vectors:
        assert b.exact_gauge(u) == (Fraction(1) if any(u) else Fraction(0))
    g = b.gauge(b.coordinates(b.space.array))
    assert np.all(g <= 1 + 1e-12)
    assert np.allclose(g[np.any(b.space.array != 0, axis=1)], 1.0, rtol=0, atol=1e-12)
    assert b.sensitivity(b.space.array) == pytest.approx(1.0, abs=1e-12)


@pytest.mark.parametrize("c", [4, 5])
def test_gauge_matches_the_qhull_facets_on_random_points(c: int) -> None:
    k, r = hull(c), RootPolytopeBall.for_table(c)
    v = zero_sum_rows(np.random.default_rng(c), 2000, c) * 3
    x = np.hstack([v, -v])
    assert np.allclose(r.gauge(r.coordinates(x)), k.gauge(k.coordinates(x)), rtol=1e-12, atol=1e-14)
    # the same functional read off the coordinates: ||x||_1 / 4
    assert np.allclose(r.gauge(r.coordinates(x)), np.abs(x).sum(axis=1) / 4, rtol=1e-12)


def test_exact_gauge_matches_the_lp_certificate() -> None:
    """Closed form ||x||_1 / 4 vs accountant.geometry.knorm.exact_gauge (rational LP certificate), 2 x 4."""
    r = RootPolytopeBall.for_table(4)
    rng = np.random.default_rng(44)
    for _ in range(8):
        v = rng.integers(-3, 4, size=4)
        v[-1] = -v[:-1].sum()
        x = np.concatenate([v, -v])
        cert = exact_gauge(r.space, x)
        assert isinstance(cert, GaugeCertificate) and cert.check(r.space, x.tolist())
        assert cert.value == r.exact_gauge(x)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(-50, 50), min_size=1, max_size=11))
def test_gauge_float_equals_exact_on_integer_points(head: list[int]) -> None:
    v = [*head, -sum(head)]
    c = len(v)
    b = RootPolytopeBall.for_table(c)
    x = np.array(v + [-t for t in v])
    exact = b.exact_gauge(x)
    assert float(b.gauge(b.coordinates(x))) == pytest.approx(float(exact), rel=1e-12, abs=1e-12)


def test_exact_gauge_refuses_points_outside_the_span() -> None:
    b = RootPolytopeBall.for_table(3)
    with pytest.raises(InvalidArgument, match="not in span"):
        b.exact_gauge([1, 0, -1, -1, 0, 0])
    with pytest.raises(InvalidArgument, match="integer vector of length 6"):
        b.exact_gauge([0.5, -0.5, 0, -0.5, 0.5, 0])
    with pytest.raises(InvalidArgument, match="span"):
        b.coordinates([1, 0, 0, 0, 0, 0])


# --------------------------------------------------------------------------- uniform sampler


@pytest.mark.parametrize("c", [2, 3, 13, 50])
def test_gauge_law_of_a_uniform_point_is_beta(c: int) -> None:
    """P(||U||_K <= t) = t^(c-1): ||U||^(c-1) ~ U(0, 1); the twin with the radius exponent 1/c fails."""
    b = RootPolytopeBall.for_table(c)
    rng = np.random.default_rng(100 + c)
    g = b.gauge(b.sample_uniform(rng=rng, size=20_000))
    assert g.max() <= 1 + 1e-12
    assert stats.kstest(g ** (c - 1), "uniform").pvalue > TEST_FAILURE_RATE
    if c in (3, 13):  # twin: radius W^(1/c) instead of W^(1/(c-1)) (the shift is too small to see at c = 50)
        u = b.sample_uniform(rng=rng, size=20_000)
        wrong = b.gauge(u / b.gauge(u)[:, None] * rng.random(20_000)[:, None] ** (1 / c))
        assert stats.kstest(wrong ** (c - 1), "uniform").pvalue < 1e-6


@pytest.mark.parametrize("c", [4, 7])
def test_facet_size_law_chi_square(c: int) -> None:
    """|I| = number of positive cells of a uniform point ~ C(c,k) C(c-2,k-1) / C(2c-2,c-1); the
    'uniform over facets' weighting C(c,k) / (2^c - 2) is rejected by the same test."""
    b = RootPolytopeBall.for_table(c)
    v = b.sample_cells(rng=np.random.default_rng(7 * c), size=20_000)
    k = (v > 0).sum(axis=1)
    obs = np.array([np.sum(k == j) for j in range(1, c)])
    assert obs.sum() == v.shape[0]
    w = np.array(facet_size_weights(c), dtype=float)
    assert stats.chisquare(obs, obs.sum() * w / w.sum()).pvalue > TEST_FAILURE_RATE
    bad = np.array([math.comb(c, j) for j in range(1, c)], dtype=float)
    assert stats.chisquare(obs, obs.sum() * bad / bad.sum()).pvalue < 1e-6


def _wrong_weights(c: int) -> RootPolytopeBall:
    """A biased twin: facet size drawn by facet count C(c,k) instead of by cone volume."""
    b = RootPolytopeBall.for_table(c)
    w = np.cumsum([math.comb(c, j) for j in range(1, c)]).astype(float)
    object.__setattr__(b, "facet_size_cdf", w / w[-1])
    return b


@pytest.mark.parametrize("c", [4, 5])
def test_sampler_agrees_with_the_qhull_fan_sampler(c: int) -> None:
    """Two-sample KS of a fixed projection, the largest cell and ||.||_2 (ambient) against the
    qhull-built ball's exact fan sampler; second moments agree; a wrongly weighted twin fails."""
    k, r = hull(c), RootPolytopeBall.for_table(c)
    n = 20_000
    a = uniform_in_ball(k, rng=np.random.default_rng(2), size=n) @ k.basis.T
    b = uniform_in_ball(r, rng=np.random.default_rng(3), size=n) @ r.basis.T
    bad = uniform_in_ball(_wrong_weights(c), rng=np.random.default_rng(3), size=n) @ r.basis.T
    direction = np.random.default_rng(0).normal(size=c)
    direction = np.concatenate([direction, -direction])
    stats_of: dict[str, Callable[[NDArray[np.float64]], NDArray[np.float64]]] = {
        "projection": lambda z: z @ direction,
        "max cell": lambda z: z[:, :c].max(axis=1),
        "l2": lambda z: np.linalg.norm(z, axis=1),
    }
    for name, f in stats_of.items():
        assert stats.ks_2samp(f(a), f(b)).pvalue > TEST_FAILURE_RATE, name
    for name in ("max cell", "l2"):
        assert stats.ks_2samp(stats_of[name](a), stats_of[name](bad)).pvalue < 1e-6, name
    # E[x0^2] (first cell) within 4 joint standard errors
    sa, sb = a[:, 0] ** 2, b[:, 0] ** 2
    se = math.sqrt(sa.var() / n + sb.var() / n)
    assert abs(sa.mean() - sb.mean()) < 4 * se


def test_sampler_output_is_in_the_span_and_in_the_ball() -> None:
    b = RootPolytopeBall.for_table(9)
    v = b.sample_cells(rng=np.random.default_rng(1), size=5000)
    assert np.allclose(v.sum(axis=1), 0, atol=1e-13)
    assert np.all(np.abs(v).sum(axis=1) / 2 <= 1 + 1e-12)
    u = b.sample_uniform(rng=np.random.default_rng(1), size=5000)
    assert np.allclose(b.cells(u), v, atol=1e-13)  # y = sqrt(2) H^T v, v = H y / sqrt(2)
    assert b.sample_uniform(rng=np.random.default_rng(1), size=0).shape == (0, 8)


# --------------------------------------------------------------------------- K-norm mechanism


def independent_mean_norm(c: int, eps: float, n: int, rng: np.random.Generator) -> tuple[float, float]:
    """E||noise||_2 by importance sampling: v_1..v_{c-1} i.i.d. Laplace(2/eps), v_c = -sum, weight
    = Laplace density of v_c; ||noise||_2 = sqrt(2) ||v||_2. Returns (estimate, delta-method s.e.)."""
    scale = 2.0 / eps
    head = rng.laplace(scale=scale, size=(n, c - 1))
    last = -head.sum(axis=1)
    w = np.exp(-(np.abs(last) - np.abs(last).min()) / scale)
    f = math.sqrt(2.0) * np.sqrt((head**2).sum(axis=1) + last**2)
    mu = float((w * f).sum() / w.sum())
    se = float(math.sqrt((w**2 * (f - mu) ** 2).sum()) / w.sum())
    return mu, se


@pytest.mark.parametrize("c", [13, 50])
def test_mechanism_keeps_margins_and_matches_independent_monte_carlo(c: int) -> None:
    eps = 0.8
    ball = RootPolytopeBall.for_table(c, relation=MARGINS)
    mech = KNormMechanism(ball, epsilon=eps)
    assert mech.optimal and mech.dimension == c - 1 and ball.method == METHOD
    assert mech.privacy_map(MARGINS) == PureDP(eps, MARGINS)
    rng = np.random.default_rng(2024 + c)
    x = rng.integers(0, 20, size=(2, c)).astype(float)
    n = 40_000
    y = mech.sample(x, rng=rng, size=n)
    assert y.shape == (n, 2, c)
    assert np.allclose(y.sum(axis=1), x.sum(axis=0), rtol=0, atol=1e-9)  # column margins
    assert np.allclose(y.sum(axis=2), x.sum(axis=1), rtol=0, atol=1e-9)  # row margins
    norms = np.linalg.norm((y - x).reshape(n, -1), axis=1)
    mu, se = independent_mean_norm(c, eps, 200_000, np.random.default_rng(99 + c))
    z = (norms.mean() - mu) / math.hypot(se, norms.std() / math.sqrt(n))
    assert abs(z) < 4.0
    # twin: the authors' Gamma shape s (docs/reference/semi-dp.md §10 item 2) is far off
    u = uniform_in_ball(ball, rng=rng, size=n)
    buggy = rng.gamma(shape=c - 1, scale=1 / eps, size=n) * np.linalg.norm(u, axis=1)
    zb = (buggy.mean() - mu) / math.hypot(se, buggy.std() / math.sqrt(n))
    assert abs(zb) > 10
    # radial law ||Y||_K ~ Gamma(s, eps)
    g = ball.gauge(mech.sample_coordinates(rng=rng, size=10_000))
    assert stats.kstest(g, stats.gamma(a=c - 1, scale=1 / eps).cdf).pvalue > TEST_FAILURE_RATE


def test_mechanism_mean_norm_matches_the_qhull_ball() -> None:
    """expected_l2_norm_mc intervals of the two optimal balls of 2 x 5 overlap."""
    k = KNormMechanism(hull(5), 1.0).expected_l2_norm_mc(rng=np.random.default_rng(5), draws=40_000)
    r = KNormMechanism(RootPolytopeBall.for_table(5), 1.0).expected_l2_norm_mc(
        rng=np.random.default_rng(6), draws=40_000
    )
    assert r.lower <= k.upper and k.lower <= r.upper


def test_setup_is_cheap_and_the_space_is_lazy() -> None:
    t = time.perf_counter()
    b = RootPolytopeBall.for_table(400)
    assert time.perf_counter() - t < 0.5
    assert "space" not in b.__dict__
    assert b.dimension == 399 and b.ambient_dimension == 800 and b.facet_count == 2**400 - 2


# --------------------------------------------------------------------------- refusals


@pytest.mark.parametrize(
    ("space", "why"),
    [
        (table_space(3, 3), "length 9"),
        (table_space(3, 4), "not of the form"),
        (table_space(4, 2), "not of the form"),  # a c x 2 table, not transposed
        (histogram_space(4), "not of the form"),
        (table_space(2, 4, radius=1), "c\\(c - 1\\) \\+ 1 = 13"),
        (SensitivitySpace.from_vectors([[2 * t for t in u] for u in table_space(2, 3).vectors], "2S"), "not e_j - e_k"),
        (
            SensitivitySpace.from_vectors(
                [u for u in table_space(2, 4).vectors if abs(u[0] - u[1]) != 2], "missing the moves in columns 0, 1"
            ),
            "missing",
        ),
        (SensitivitySpace.from_vectors([*table_space(2, 3).vectors, (1, 1, -2, -1, -1, 2)], "extra"), "not e_j - e_k"),
    ],
    ids=["3x3", "3x4", "4x2", "histogram", "radius-1", "inflated", "missing", "extra"],
)
def test_refuses_spaces_that_are_not_the_2xc_moves_set(space: SensitivitySpace, why: str) -> None:
    with pytest.raises(InvalidArgument, match=why):
        RootPolytopeBall.from_space(space)


def test_bad_arguments_are_refused() -> None:
    with pytest.raises(InvalidArgument, match="c=1"):
        RootPolytopeBall.for_table(1)
    with pytest.raises(InvalidArgument, match="size"):
        RootPolytopeBall.for_table(3).sample_uniform(rng=np.random.default_rng(0), size=-1)


def test_from_space_keeps_the_callers_space_and_relation() -> None:
    sp = table_space(2, 6)
    b = RootPolytopeBall.from_space(sp, relation=MARGINS)
    assert b.space is sp and b.relation == MARGINS
    assert set(RootPolytopeBall.for_table(6).space.vectors) == set(sp.vectors)
    assert set(itertools.chain.from_iterable(sp.vectors)) == {-1, 0, 1}
