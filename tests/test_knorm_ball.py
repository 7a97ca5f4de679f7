"""K-norm balls conv(S) of table sensitivity spaces (Cho & Awan 2024, Lemma 29, Prop. 30, Thm. 31).

Targets: ``docs/reference/semi-dp.md`` §9 T-S6 (K-norm of a 3-cycle w.r.t. conv(moves)
is 2) and the containment order of Thm. 31 against scaled l1/l2/linf balls.
Each float quantity is cross-checked by an independent route (facets vs cvxpy LP
vs exact rational LP certificates; qhull volume vs halfspace-intersection volume).
"""

from __future__ import annotations

import math
from fractions import Fraction
from functools import cache

import numpy as np
import pytest

from semidp.accountant.core.budget import Budget
from semidp.accountant.core.errors import InvalidArgument, SearchOutOfTime, SearchTooLarge
from semidp.accountant.core.outcome import Bounds, Refuted, Verified
from semidp.accountant.geometry.containing_ball import containing_ball
from semidp.accountant.geometry.knorm import KNormBall
from semidp.accountant.geometry.knorm_certificates import GaugeCertificate, certified_span, exact_gauge
from semidp.accountant.geometry.lp_balls import compare_lp_balls
from semidp.accountant.geometry.table_symmetry import TableSymmetry
from semidp.accountant.sensitivity.spaces import SensitivitySpace, table_moves, table_space, table_three_cycles


@cache
def ball(r: int, c: int, paper_exact: bool) -> KNormBall:
    return KNormBall.from_space(table_space(r, c, paper_exact=paper_exact))


# Exact volumes: 24.75 = 99/4 and 47.25 = 189/4 (acceptance 11/64 and 21/64 of the
# 144-volume cube of reference T-S7); the 3x3 hull with 3-cycles is the linf section.
@pytest.mark.parametrize(
    ("r", "c", "paper_exact", "n_vertices", "n_facets", "volume"),
    [
        (2, 2, False, 2, 2, 4.0),
        (2, 3, False, 6, 6, None),
        (3, 3, True, 18, 30, 24.75),
        (3, 3, False, 30, 18, 47.25),
        (3, 4, True, 36, 114, None),
        (3, 4, False, 84, 42, None),
    ],
)
def test_hull_structure(
    r: int, c: int, paper_exact: bool, n_vertices: int, n_facets: int, volume: float | None
) -> None:
    k = ball(r, c, paper_exact)
    s = (r - 1) * (c - 1)
    assert k.dimension == s and k.ambient_dimension == r * c
    assert len(k.vertices) == n_vertices == len(k.space.vectors) - 1  # every nonzero element is extreme
    assert len(k.facets) == n_facets
    assert np.allclose(k.basis.T @ k.basis, np.eye(s), atol=1e-12)
    assert k.space.rank == s  # exact rank agrees with the certificate
    if volume is not None:
        assert k.volume == pytest.approx(volume, rel=1e-12)
    assert k.fan_volumes.sum() == pytest.approx(k.volume, rel=1e-12)
    assert np.all(np.abs(k.gauge(k.vertices) - 1) < 1e-9)


def test_two_by_two_interval() -> None:
    k = ball(2, 2, False)
    assert k.dimension == 1 and k.method.startswith("interval")
    assert sorted(k.vertices[:, 0].round(12).tolist()) == [-2.0, 2.0]  # |Q^T (1,-1,-1,1)| = 2
    assert k.gauge(np.array([[1.0], [-3.0]])).tolist() == pytest.approx([0.5, 1.5])


def test_T_S6_three_cycle_has_knorm_two() -> None:
    """T-S6: a 3-cycle has K-norm exactly 2 w.r.t. conv(moves) (3x3), certified three ways.

    This is why a mechanism calibrated to Prop. 32's set (moves only) gives only
    2*epsilon on pairs of tables that differ by a 3-cycle (reference §5 caveat).
    """
    moves = ball(3, 3, True)
    cycles = table_three_cycles(3, 3)
    assert len(cycles) == 12
    for cyc in cycles:
        g = exact_gauge(moves.space, cyc)
        assert isinstance(g, GaugeCertificate) and g.value == 2 and g.check(moves.space, cyc)
    assert 2 - 1e-12 <= moves.sensitivity(cycles) <= 2 + 1e-9  # facets
    lp = moves.gauge_lp(moves.coordinates(np.array(cycles[0], dtype=float)))  # cvxpy
    assert isinstance(lp, Bounds) and lp.lower <= 2.0 <= lp.upper and lp.upper - lp.lower < 1e-8
    # With the corrected S (moves and 3-cycles) every element has K-norm <= 1.
    full = ball(3, 3, False)
    assert full.sensitivity(full.space.array) <= 1 + 1e-9
    assert exact_gauge(full.space, cycles[0]).value == 1  # type: ignore[union-attr]


def test_exact_gauge_rejects_vectors_outside_the_span() -> None:
    sp = table_space(3, 3)
    with pytest.raises(InvalidArgument, match="not in span"):
        exact_gauge(sp, [1, 0, 0, 0, 0, 0, 0, 0, 0])
    with pytest.raises(InvalidArgument):
        exact_gauge(sp, [0.5] * 9)
    zero = exact_gauge(sp, [0] * 9)
    assert isinstance(zero, GaugeCertificate) and zero.value == 0


@pytest.mark.parametrize(("r", "c", "paper_exact"), [(3, 3, False), (3, 4, True), (2, 3, False)])
def test_facet_gauge_equals_cvxpy_lp_gauge(r: int, c: int, paper_exact: bool) -> None:
    k = ball(r, c, paper_exact)
    rng = np.random.default_rng(20240)
    pts = rng.standard_normal((8, k.dimension)) * rng.uniform(0.1, 3.0, (8, 1))
    facet = k.gauge(pts)
    for y, g in zip(pts, facet):
        b = k.gauge_lp(y)
        assert isinstance(b, Bounds), b
        assert b.lower <= b.estimate <= b.upper
        assert b.lower - 1e-9 <= g <= b.upper + 1e-9


def test_gauge_is_a_norm_on_random_points() -> None:
    k = ball(3, 4, False)
    rng = np.random.default_rng(5)
    x, y = rng.standard_normal((2, 50, k.dimension))
    assert np.all(k.gauge(x + y) <= k.gauge(x) + k.gauge(y) + 1e-12)
    assert np.allclose(k.gauge(-x), k.gauge(x)) and np.allclose(k.gauge(3 * x), 3 * k.gauge(x))
    assert bool(k.contains(np.zeros(k.dimension))) and not bool(k.contains(2 * k.vertices[0]))


def test_containment_between_balls() -> None:
    moves, full = ball(3, 3, True), ball(3, 3, False)
    for exact in (False, True):
        inside = moves.contained_in(full, exact=exact)
        assert isinstance(inside, Verified), inside
        outside = full.contained_in(moves, exact=exact)
        assert isinstance(outside, Refuted) and "2" in outside.counterexample
    assert isinstance(full.contained_in(full), Verified)
    other = ball(2, 3, False)
    with pytest.raises(InvalidArgument, match="ambient"):
        moves.contained_in(other)


def test_T31_containment_order_against_lp_balls() -> None:
    """conv(S) lies in each scaled lp ball section (Thm. 31); strictly for the moves-only 3x3 hull."""
    rows = {r.p: r for r in compare_lp_balls(ball(3, 3, True))}
    assert (rows["1"].radius, rows["2"].radius, rows["inf"].radius) == (4.0, 2.0, 1.0)
    for r in rows.values():
        assert isinstance(r.contains, Verified)
        assert r.inflation is not None and r.inflation > 1.3
        assert r.volume_ratio is not None and r.volume_ratio > 1.2
    # The linf section contains the 3-cycles, which have K-norm 2 (T-S6).
    assert rows["inf"].inflation == pytest.approx(2.0, rel=1e-9)
    # With 3-cycles, conv(S) equals the linf section of V (both volume 47.25); l1, l2 stick out.
    full = {r.p: r for r in compare_lp_balls(ball(3, 3, False))}
    assert full["inf"].volume_ratio == pytest.approx(1.0, rel=1e-9)
    assert full["inf"].inflation == pytest.approx(1.0, rel=1e-9)
    assert full["1"].volume_ratio > 3 and full["2"].volume_ratio > 3  # type: ignore[operator]
    assert full["2"].inflation == pytest.approx(2.449489742783178 * 2 / 3, rel=1e-9)


def test_size_guard_refuses_four_by_four_with_cycles_quickly() -> None:
    """Refused from the size estimate, before the fan is built (the refusal's record, not the clock)."""
    with pytest.raises(SearchTooLarge, match="containing_ball") as fan:
        KNormBall.from_space(table_space(4, 4))  # ~1.06 M fan simplices: refused
    assert fan.value.size > fan.value.limit and not isinstance(fan.value, SearchOutOfTime)
    with pytest.raises(SearchTooLarge) as bigger:
        KNormBall.from_space(table_space(4, 5, paper_exact=True))
    assert bigger.value.size > bigger.value.limit and not isinstance(bigger.value, SearchOutOfTime)


def test_rank_zero_and_bad_inputs() -> None:
    with pytest.raises(InvalidArgument, match="rank 0"):
        KNormBall.from_space(SensitivitySpace.from_vectors([[0, 0]], "zero"))
    k = ball(3, 3, True)
    with pytest.raises(InvalidArgument):
        k.gauge(np.zeros(3))
    with pytest.raises(InvalidArgument, match="span"):
        k.coordinates(np.eye(9)[0])


def test_certified_span_and_cube_precondition() -> None:
    sp = table_space(3, 3)
    cert = certified_span(sp)
    assert cert.rank == 4 and cert.gram_det == 81 and cert.max_coordinate == 1
    # Authors' basis (reference T-S7, printed column-major): contains moves and 3-cycles.
    printed = [
        (1, -1, 0, -1, 1, 0, 0, 0, 0),
        (1, -1, 0, 0, 0, 0, -1, 1, 0),
        (1, 0, -1, -1, 0, 1, 0, 0, 0),
        (1, 0, -1, 0, 0, 0, -1, 0, 1),
    ]
    authors = np.array([np.reshape(v, (3, 3), order="F").reshape(-1) for v in printed]).T
    assert certified_span(sp, basis=authors).max_coordinate == 1
    # A basis of S in which some element has a coordinate 2.
    moves = np.array(table_moves(3, 3))
    rng = np.random.default_rng(3)
    worst = Fraction(0)
    for _ in range(200):
        b = moves[rng.choice(len(moves), 4, replace=False)].T
        try:
            worst = certified_span(sp, basis=b).max_coordinate
        except InvalidArgument:
            continue
        if worst > 1:
            break
    assert worst > 1
    with pytest.raises(InvalidArgument):
        certified_span(sp, basis=np.ones((9, 3), dtype=np.int64))


@pytest.mark.parametrize("kind", ["basis-cube", "box", "l2-ball"])
def test_containing_ball_contains_S_and_states_its_loss(kind: str) -> None:
    sp = table_space(3, 3)
    opt = ball(3, 3, False)
    L = containing_ball(sp, kind=kind, optimum=opt)  # type: ignore[arg-type]
    assert "NON-OPTIMAL" in L.label and L.kind == kind
    y = L.coordinates(sp.array.astype(float))
    assert L.sensitivity <= 1.0 and L.gauge(y).max() <= L.sensitivity * (1 + 1e-12)  # float gauge via T^-1
    assert L.loss.volume_ratio_upper >= L.volume / opt.volume * (1 - 1e-9) >= 1
    assert L.loss.norm_ratio_upper >= 1
    # without the optimum, the bounds use a cross-polytope inside K and are weaker
    L2 = containing_ball(sp, kind=L.kind)
    assert L2.loss.volume_ratio_upper >= L.loss.volume_ratio_upper
    assert L2.loss.optimal_volume_lower <= opt.volume


def test_containing_ball_beyond_the_hull() -> None:
    """Where the hull is refused (4x4 with 3-cycles), the fallback still gives an exact ball."""
    sp = table_space(4, 4)
    L = containing_ball(sp)
    assert L.dimension == 9 and L.kind == "l2-ball"  # smallest volume of the three here
    assert L.gauge(L.coordinates(sp.array.astype(float))).max() <= 1.0
    assert math.isfinite(L.loss.norm_ratio_upper) and L.loss.norm_ratio_upper < 5
    with pytest.raises(InvalidArgument):
        containing_ball(sp, kind="sphere")  # type: ignore[arg-type]


# --------------------------------------------------------------------------- symmetric build


@cache
def sym_ball(r: int, c: int, paper_exact: bool) -> KNormBall:
    return KNormBall.from_space(table_space(r, c, paper_exact=paper_exact), symmetry=TableSymmetry(r, c))


@pytest.mark.parametrize(
    ("r", "c", "paper_exact"), [(2, 3, False), (3, 3, True), (3, 3, False), (3, 4, True), (3, 4, False)]
)
def test_symmetric_build_equals_qhull(r: int, c: int, paper_exact: bool) -> None:
    """Adjacency decomposition up to symmetry finds exactly qhull's facets and volume."""
    a, b = sym_ball(r, c, paper_exact), ball(r, c, paper_exact)
    assert np.allclose(a.basis, b.basis)  # same coordinates
    assert a.facet_count == len(a.facets) == len(b.facets)
    fa = np.unique(np.round(a.facets, 8), axis=0)
    fb = np.unique(np.round(b.facets, 8), axis=0)
    assert np.array_equal(fa, fb)
    assert a.volume == pytest.approx(b.volume, rel=1e-10)
    assert len(a.fan) < len(b.fan)  # representatives only


def test_symmetric_build_four_by_four_and_four_by_five() -> None:
    """4x4 moves: 866 facets, volume 12.0014109347 (qhull, 2.5-5 s); 4x5 moves: 15 690 facets (cdd count)."""
    k = sym_ball(4, 4, True)
    assert k.facet_count == 866 and len(k.facet_orbit_sizes) == 7
    assert k.volume == pytest.approx(12.001410934744, rel=1e-9)  # golden from a direct qhull run
    k45 = sym_ball(4, 5, True)
    assert k45.facet_count == 15690 and k45.dimension == 12


def test_symmetric_build_four_by_four_with_cycles_is_complete() -> None:
    """4x4 with 3-cycles (refused by direct qhull): facets complete, fan covers K."""
    k = sym_ball(4, 4, False)
    assert (k.facet_count, len(k.facet_orbit_sizes)) == (3818, 9)
    assert k.volume == pytest.approx(188.6024691358, rel=1e-9)
    assert k.sensitivity(k.space.array) <= 1 + 1e-9
    # Random objectives over the polar hit facets: each must be one we have.
    rng = np.random.default_rng(81)
    from scipy.optimize import linprog

    keys = {tuple(r) for r in np.round(k.facets, 7).tolist()}
    for cvec in rng.standard_normal((40, k.dimension)):
        res = linprog(-cvec, A_ub=k.vertices, b_ub=np.ones(len(k.vertices)), bounds=(None, None), method="highs-ds")
        assert res.status == 0 and tuple(np.round(res.x, 7).tolist()) in keys
    # Facet gauge equals the independent LP gauge on random points.
    for y in rng.standard_normal((4, k.dimension)):
        b = k.gauge_lp(y)
        assert isinstance(b, Bounds) and b.lower - 1e-9 <= float(k.gauge(y)) <= b.upper + 1e-9


def _polled_budget(fresh_polls: int) -> tuple[Budget, list[int]]:
    """A budget (no deadline) whose ``expired`` answers False ``fresh_polls`` times, then True; and its poll log.

    It makes the moment the budget runs out a point in the search rather than a time on the clock: where the search
    stops no longer depends on the machine's speed.
    """
    polls: list[int] = []

    class _Polled(Budget):
        @property
        def expired(self) -> bool:
            polls.append(len(polls))
            return len(polls) > fresh_polls

    return _Polled(math.inf), polls


def _stale_deadline_budget() -> Budget:
    """A budget whose deadline has passed but whose ``expired`` poll says False: only a check of the deadline
    itself (the recursive face triangulation's) can stop the search."""

    class _Stale(Budget):
        @property
        def expired(self) -> bool:
            return False

    return _Stale(0.0)


def test_symmetric_build_budgets_refuse_quickly() -> None:
    """Each refusal is decided by the search's own record (what was found, the budget's limit), never by the clock:
    an expired budget, one that runs out after two polls, and a stale deadline seen only by the recursive
    triangulation all refuse at the first check after they ran out; the size and orbit guards refuse before any
    time is spent."""
    with pytest.raises(SearchTooLarge, match=r"facet orbits of conv\(S\) \(found 1 so far\).*Time budget") as spent:
        KNormBall.from_space(table_space(4, 5), symmetry=TableSymmetry(4, 5), budget=Budget.of(0.0))
    assert spent.value.limit == 0 <= spent.value.size  # the record: no time was given, and the refusal says so
    assert "stopped after" in str(spent.value) and "its time budget of 0 s spent" in str(spent.value)
    budget, polls = _polled_budget(2)  # runs out after the first facet orbit and its first ridge
    with pytest.raises(SearchTooLarge, match=r"facet orbits of conv\(S\) \(found 2 so far\).*Time budget"):
        KNormBall.from_space(table_space(4, 4), symmetry=TableSymmetry(4, 4), budget=budget)
    assert len(polls) == 3  # stopped at the first poll after it ran out, not one step later
    with pytest.raises(
        SearchOutOfTime, match=r"recursive triangulation of conv\(S\).*stopped after.*Time budget"
    ) as rec:
        KNormBall.from_space(table_space(4, 5), symmetry=TableSymmetry(4, 5), budget=_stale_deadline_budget())
    assert "faces triangulated recursively" in str(rec.value)  # ~35 s unbudgeted
    with pytest.raises(SearchTooLarge, match="hull of a face") as size:  # s = 16: no recursion, refused at once
        KNormBall.from_space(table_space(5, 5), symmetry=TableSymmetry(5, 5))
    assert size.value.size > size.value.limit == 1e8
    with pytest.raises(SearchTooLarge, match="orbits") as orbits:
        KNormBall.from_space(table_space(4, 4), symmetry=TableSymmetry(4, 4), orbit_limit=3)
    assert (orbits.value.size, orbits.value.limit) == (4, 3)  # refused at the first orbit beyond the limit
    with pytest.raises(SearchTooLarge, match="Time"):
        KNormBall.from_space(table_space(4, 4), symmetry=TableSymmetry(4, 4), budget=Budget.of(0.0))
    with pytest.raises(SearchTooLarge, match="Time"), pytest.warns(DeprecationWarning, match="time_limit"):
        KNormBall.from_space(table_space(4, 4), symmetry=TableSymmetry(4, 4), time_limit=0.0)  # one release more
    with pytest.raises(InvalidArgument, match="invariant"):
        KNormBall.from_space(
            SensitivitySpace.from_vectors([[1, -1, 0, 0]], "not symmetric"), symmetry=TableSymmetry(2, 2)
        )


def test_table_symmetry_canonical_form_and_orbits() -> None:
    g = TableSymmetry(3, 4)
    assert g.order == 3 * 2 * 24 * 2 and not g.transposes
    rng = np.random.default_rng(9)
    for _ in range(20):
        m = rng.integers(-2, 3, size=(3, 4))
        key, stab = g.canonical(m)
        orb = g.orbit(m)
        assert len(orb) * stab == g.order  # orbit-stabiliser
        img = -m[rng.permutation(3)][:, rng.permutation(4)]
        assert g.canonical(img)[0] == key
    sq = TableSymmetry(3, 3)
    m = rng.integers(-2, 3, size=(3, 3))
    assert sq.canonical(m.T)[0] == sq.canonical(m)[0] and sq.order == 144
