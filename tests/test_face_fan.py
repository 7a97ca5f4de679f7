"""Recursive pulling fan of conv(S) up to symmetry (accountant.geometry.face_fan), against independent methods.

The recursive path (forced by a tiny ``work_limit``) must give the same ball as
qhull on all of S (no symmetry) and as the one-level fan, and the sampler built
on it must be uniform on K: the same distribution of the facet orbit hit and of
the gauge as draws from the one-level fan, and ||Y||_K ~ Beta(s, 1).
"""

from __future__ import annotations

import itertools
import math
from functools import cache

import numpy as np
import pytest
from scipy import stats
from scipy.spatial import ConvexHull

from semidp.accountant.core.errors import VerificationError
from semidp.accountant.geometry.knorm import KNormBall
from semidp.accountant.geometry.knorm_verify import verify_knorm_ball
from semidp.accountant.geometry.table_symmetry import TableSymmetry
from semidp.accountant.sensitivity.spaces import table_space
from semidp.mechanisms.knorm import uniform_in_ball

#: (r, c, paper_exact): paper_exact=True is the moves only (Prop. 32 as printed), False adds the 3-cycles
CASES = [(3, 4, False), (4, 4, True), (4, 4, False), (3, 5, False)]
#: work_limit forcing recursion (at every face for 3x4; 4x4 with 3-cycles: four levels, ~3 s)
WORK = {(3, 4, False): 10.0, (4, 4, True): 1e2, (4, 4, False): 1e3, (3, 5, False): 1e2}
#: qhull on all 264 points of the 4x4 space with 3-cycles, no symmetry (89 s on 2 cores, 2026-11-22)
PLAIN_4X4 = 188.60246913522695


@cache
def _balls(r: int, c: int, paper_exact: bool) -> tuple[KNormBall, KNormBall]:
    sp = table_space(r, c, paper_exact=paper_exact)
    one = KNormBall.from_space(sp, symmetry=TableSymmetry(r, c))
    deep = KNormBall.from_space(sp, symmetry=TableSymmetry(r, c), work_limit=WORK[r, c, paper_exact])
    return one, deep


@pytest.mark.parametrize(("r", "c", "paper_exact"), CASES)
def test_recursive_fan_volume_matches_qhull_and_one_level(r: int, c: int, paper_exact: bool) -> None:
    one, deep = _balls(r, c, paper_exact)
    plain = PLAIN_4X4 if (r, c, paper_exact) == (4, 4, False) else ConvexHull(one.vertices).volume  # qhull on all of S
    assert deep.volume == pytest.approx(plain, rel=1e-9)
    assert one.volume == pytest.approx(plain, rel=1e-9)
    assert sorted(deep.facet_orbit_sizes) == sorted(one.facet_orbit_sizes)
    assert np.allclose(np.sort(deep.facets, axis=0), np.sort(one.facets, axis=0))
    # the recursion really ran: simplices with a centroid per level (more than one centroid)
    m = len(deep.vertices)
    assert int((deep.fan >= m).sum(axis=1).max()) >= 3


def test_known_volumes_reference() -> None:
    # 3x3 with 3-cycles: 189/4 (tests/test_knorm_ball.py, exact), via the recursive path
    k = KNormBall.from_space(table_space(3, 3), symmetry=TableSymmetry(3, 3), work_limit=2.0)
    assert k.volume == pytest.approx(189 / 4, rel=1e-12)


def _orbit_of_hit(ball: KNormBall, y: np.ndarray, ref: KNormBall) -> tuple[np.ndarray, np.ndarray]:
    """Facet orbit (numbered as in ``ref``) of the facet with the largest gauge, and the ratio of the
    two largest gauges."""
    label = {
        r.tobytes(): i
        for i, r in zip(
            np.repeat(np.arange(len(ref.facet_orbit_sizes)), ref.facet_orbit_sizes), np.round(ref.facets, 7) + 0.0
        )
    }
    orbit = np.array([label[r.tobytes()] for r in np.round(ball.facets, 7) + 0.0])
    g = y @ ball.facets.T
    top2 = np.argsort(g, axis=1)[:, -2:]
    rows = np.arange(len(y))
    return orbit[top2[:, 1]], g[rows, top2[:, 0]] / g[rows, top2[:, 1]]


@pytest.mark.parametrize(("r", "c", "paper_exact"), CASES)
def test_recursive_fan_sampler_is_uniform(r: int, c: int, paper_exact: bool) -> None:
    one, deep = _balls(r, c, paper_exact)
    n = 20_000
    a = uniform_in_ball(one, rng=np.random.default_rng(1), size=n)
    b = uniform_in_ball(deep, rng=np.random.default_rng(2), size=n)
    s = deep.dimension
    # ||Y||_K of a uniform point has CDF t^s
    assert stats.kstest(deep.gauge(b) ** s, "uniform").pvalue > 1e-3
    oa, ra = _orbit_of_hit(one, a, one)
    ob, rb = _orbit_of_hit(deep, b, one)
    k = len(one.facet_orbit_sizes)
    table = np.array([np.bincount(oa, minlength=k), np.bincount(ob, minlength=k)])
    table = table[:, table.sum(axis=0) > 0]
    if table.shape[1] > 1:
        assert stats.chi2_contingency(table).pvalue > 1e-3  # facet orbits hit in the same proportions
    assert stats.ks_2samp(ra, rb).pvalue > 1e-3  # position within the facet cones


def test_wrong_multiplicity_is_detected_by_the_uniformity_test() -> None:
    # the test above can fail: double the weight of the simplices of one facet orbit
    one, deep = _balls(4, 4, True)
    mult = deep.fan_multiplicity.copy()
    m = len(deep.vertices)
    # a facet's centroid is registered before its faces' centroids: the least centroid of a row names its facet
    facet_of = np.where(deep.fan >= m, deep.fan, np.iinfo(np.intp).max).min(axis=1)
    sel = facet_of == facet_of[0]
    mult[sel] *= 3
    bad = KNormBall._assemble(
        deep.space,
        deep.basis,
        deep.vertices,
        deep.vertex_vectors,
        deep.facets,
        deep.fan_points,
        deep.fan,
        deep.fan_volumes,
        mult,
        None,
        deep.method,
        deep.symmetry,
        deep.facet_orbit_sizes,
    )
    a = uniform_in_ball(one, rng=np.random.default_rng(3), size=20_000)
    b = uniform_in_ball(bad, rng=np.random.default_rng(4), size=20_000)
    oa, ra = _orbit_of_hit(one, a, one)
    ob, rb = _orbit_of_hit(bad, b, one)
    k = len(one.facet_orbit_sizes)
    table = np.array([np.bincount(oa, minlength=k), np.bincount(ob, minlength=k)])
    table = table[:, table.sum(axis=0) > 0]
    assert min(stats.chi2_contingency(table).pvalue, stats.ks_2samp(ra, rb).pvalue) < 1e-6
    assert m > 0


def test_recursive_fan_is_not_cached_but_one_level_is() -> None:
    one, deep = _balls(3, 4, False)
    verify_knorm_ball(one)
    with pytest.raises(VerificationError, match="centroid"):
        verify_knorm_ball(deep)


def test_chain_key_orbits_and_stabilisers_by_brute_force() -> None:
    g = TableSymmetry(3, 3)
    rng = np.random.default_rng(5)
    elements = [
        (p, q, t, sg)
        for p in itertools.permutations(range(3))
        for q in itertools.permutations(range(3))
        for t in (False, True)
        for sg in (1, -1)
    ]
    assert len(elements) == g.order

    def act(e: tuple, st: np.ndarray) -> np.ndarray:
        p, q, t, sg = e
        out = st[:, list(p)][:, :, list(q)]
        return sg * (out.transpose(0, 2, 1) if t else out)

    for _ in range(25):
        st = rng.integers(-1, 2, size=(2, 3, 3))
        if rng.random() < 0.5:
            st[:, :, 1] = st[:, :, 0]  # a non-trivial stabiliser
        key, stab = g.chain_key(st)
        images = {act(e, st).tobytes() for e in elements}
        assert len(images) * stab == g.order  # orbit-stabiliser
        for e in elements[::7]:
            assert g.chain_key(act(e, st))[0] == key  # invariant on the orbit
        other = st.copy()
        other[1] = st[0]
        if other.tobytes() not in images:
            assert g.chain_key(other)[0] != key or {act(e, other).tobytes() for e in elements} == images
    assert math.factorial(3) ** 2 * 4 == g.order


@pytest.mark.parametrize(("r", "c"), [(3, 3), (4, 5), (3, 7)])
def test_canonical_element_maps_orbit_mates(r: int, c: int) -> None:
    g = TableSymmetry(r, c)
    rng = np.random.default_rng(r * 10 + c)
    for _ in range(50):
        a = rng.integers(-2, 3, size=(2, r, c))
        b = a[:, rng.permutation(r)][:, :, rng.permutation(c)] * (-1) ** int(rng.integers(2))
        if r == c and rng.random() < 0.5:
            b = b.transpose(0, 2, 1)
        ka, ea = g.canonical_element(a)
        kb, eb = g.canonical_element(b)
        assert ka == kb == g.chain_key(a)[0]
        assert np.array_equal(g.apply_inverse(eb, g.apply(ea, a)), b)  # the element the leaf memo uses
        assert np.array_equal(g.apply_inverse(ea, g.apply(ea, a)), a)


@pytest.mark.slow
def test_s12_tables_with_three_cycles_are_optimal_and_sampled_exactly() -> None:
    """The Step 3 sizes that needed the recursion: 3x7 and 4x5 with 3-cycles (s = 12; ~4 s and ~17 s)."""
    for r, c, facets, volume in [(3, 7, 378, 70.0644318182), (4, 5, 130_530, 145.863699943)]:
        k = KNormBall.from_space(table_space(r, c), symmetry=TableSymmetry(r, c))
        assert k.dimension == 12 and k.facet_count == facets and k.fan_levels >= 2
        assert k.volume == pytest.approx(volume, rel=1e-9)  # the same under other work limits
        y = uniform_in_ball(k, rng=np.random.default_rng(r * c), size=20_000)
        g = k.gauge(y)
        assert float(g.max()) <= 1 + 1e-9
        assert stats.kstest(g**12, "uniform").pvalue > 1e-3


def test_chained_volumes_are_checked_against_determinants() -> None:
    from semidp.accountant.geometry.face_fan import check_volumes, simplex_volumes

    one, deep = _balls(3, 4, False)
    vols = simplex_volumes(deep.fan_points, deep.fan)
    check_volumes(deep.fan_points, deep.fan, vols)  # consistent: passes
    bad = vols.copy()
    bad[len(bad) // 2] *= 1.001
    with pytest.raises(VerificationError, match="determinants"):
        check_volumes(deep.fan_points, deep.fan, bad)
    assert deep.fan_volumes == pytest.approx(vols, rel=1e-9)  # the stored volumes are the chained ones
