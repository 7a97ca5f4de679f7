"""Fast bites for :mod:`semidp.accountant.pld.refine` (mutation testing, issue Step 16).

A scripted ``compose`` hands out fake brackets with prescribed intervals, so the loop's decisions are checked
exactly: which grids are tried (4x the points each time), when it stops (width met, target decided, grid cap,
budget, the engine's size limit), and that the answer is the intersection of every grid's interval (each
contains the truth, so only the intersection may be returned: never one grid's optimistic lower end alone).
"""

from __future__ import annotations

import math

import pytest

from semidp.accountant.core.budget import Budget
from semidp.accountant.core.errors import InvalidArgument
from semidp.accountant.pld import refine as pld_refine
from semidp.accountant.pld.closed_forms import GaussianBracket, PLDInterval
from semidp.accountant.pld.parts import GaussianPart
from semidp.accountant.pld.refine import RefinedInterval, refine, refine_bracket, refine_many


class FakeBracket:
    """A bracket whose ``delta`` and ``epsilon`` both return ``iv`` (``delta`` scaled by 2, to tell them apart)."""

    def __init__(self, iv: PLDInterval) -> None:
        self.iv = iv

    def delta(self, epsilon: float) -> PLDInterval:
        return PLDInterval(2 * self.iv.lower, 2 * self.iv.upper)

    def epsilon(self, delta: float) -> PLDInterval:
        return self.iv


class Script:
    """``compose(points)``: the next scripted interval (or exception); records the points asked for."""

    def __init__(self, *steps: PLDInterval | Exception) -> None:
        self.steps = list(steps)
        self.asked: list[int | None] = []

    def __call__(self, points: int | None) -> FakeBracket:
        self.asked.append(points)
        step = self.steps[len(self.asked) - 1]
        if isinstance(step, Exception):
            raise step
        return FakeBracket(step)


def eps_query(b: pld_refine.Bracket) -> PLDInterval:
    return b.epsilon(1e-6)


def test_relative_width_and_undecided() -> None:
    rw, und = pld_refine._relative_width, pld_refine._undecided
    assert rw(PLDInterval(0.0, 0.0)) == 0.0 and rw(PLDInterval(0.5, math.inf)) == math.inf
    assert rw(PLDInterval(0.5, 2.0)) == 0.75 and rw(PLDInterval(3.0, 2.0)) == 0.0 and rw(PLDInterval(0.0, 2.0)) == 1.0
    iv = PLDInterval(1.0, 2.0)
    assert und(iv, 1.0) and und(iv, 1.5) and not und(iv, 2.0) and not und(iv, 0.5) and not und(iv, None)


def test_refines_on_4x_grids_and_returns_the_intersection() -> None:
    # first grid (1.0, 2.0): width 0.5; then (1.5, 2.5) and (1.2, 1.501): the intersection (1.5, 1.501) has
    # width 6.7e-4 <= 1e-3, although no single grid's interval does
    script = Script(PLDInterval(1.0, 2.0), PLDInterval(1.5, 2.5), PLDInterval(1.2, 1.501), PLDInterval(1.0, 1.0))
    r = refine(script, eps_query, first_points=100, max_points=10**6)
    assert script.asked == [None, 400, 1600]
    assert r.interval == (1.5, 1.501) and r.points == 1600 and r.reached and r.stopped_by == ""
    assert r.rel_width == pytest.approx(0.001 / 1.501, rel=1e-12) and r.shortfall() is None
    assert r.target_width == pld_refine.DEFAULT_REL_WIDTH


def test_stops_at_the_grid_cap_and_says_so() -> None:
    script = Script(PLDInterval(1.0, 2.0), PLDInterval(1.5, 2.0), PLDInterval(1.6, 1.9))
    r = refine(script, eps_query, first_points=100, max_points=1600)
    assert script.asked == [None, 400, 1600]  # 6400 > 1600: the cap
    assert r.interval == (1.6, 1.9) and not r.reached and r.stopped_by == "grid cap" and r.points == 1600
    assert r.shortfall() == "bracket width 0.16 > 0.001: grid cap"
    assert refine(Script(PLDInterval(1.0, 2.0)), eps_query, first_points=100, max_points=399).points is None


def test_the_engines_size_limit_stops_as_grid_cap() -> None:
    script = Script(PLDInterval(1.0, 2.0), InvalidArgument("too many points"))
    r = refine(script, eps_query, first_points=100, max_points=10**6)
    assert r.interval == (1.0, 2.0) and r.stopped_by == "grid cap" and not r.reached and r.points is None


def test_budget_expects_the_next_grid_to_take_4x_the_last() -> None:
    # the first grid "took" 10 s (first_seconds): the next is expected to take 40 s
    for seconds, refined in ((35.0, False), (45.0, True)):
        script = Script(PLDInterval(1.0, 2.0), PLDInterval(1.5, 1.5005))
        (r,) = refine_many(script, [eps_query], [None], first_points=100, budget=Budget.of(seconds), first_seconds=10.0)
        assert (script.asked == [None, 400]) == refined
        assert r.stopped_by == ("" if refined else "budget") and r.reached == refined


def test_an_undecided_target_keeps_refining_after_the_width_is_met() -> None:
    # width 1e-4 met at once, but the claimed 1.00005 lies in [lower, upper): refine until it is decided
    script = Script(PLDInterval(1.0, 1.0001), PLDInterval(1.00001, 1.00004), PLDInterval(0.0, 9.0))
    r = refine(script, eps_query, rel_width=1e-3, first_points=100, max_points=10**6, target=1.00005)
    assert script.asked == [None, 400] and r.interval == (1.00001, 1.00004) and r.reached and r.stopped_by == ""
    # still undecided at the cap: reached (width) but stopped_by says why it is short of deciding
    script = Script(PLDInterval(1.0, 1.0001), PLDInterval(1.00001, 1.00009))
    r = refine(script, eps_query, rel_width=1e-3, first_points=100, max_points=400, target=1.00005)
    assert r.reached and r.stopped_by == "grid cap"
    # a target at the upper end is decided (verified): no refinement
    script = Script(PLDInterval(1.0, 1.0001))
    r = refine(script, eps_query, rel_width=1e-3, first_points=100, target=1.0001)
    assert script.asked == [None] and r.stopped_by == ""


def test_several_queries_share_each_grid() -> None:
    script = Script(PLDInterval(1.0, 2.0), PLDInterval(1.5, 1.5001))
    a, b = refine_many(script, [eps_query, lambda br: br.delta(0.5)], [None, None], first_points=100)
    assert script.asked == [None, 400]
    assert a.interval == (1.5, 1.5001) and b.interval == (3.0, 3.0002) and a.reached and b.reached
    with pytest.raises(InvalidArgument, match="2 queries but 1 targets"):
        refine_many(script, [eps_query, eps_query], [None])
    for bad in (0.0, 1.5, -0.1):
        with pytest.raises(InvalidArgument, match="rel_width"):
            refine_many(script, [eps_query], [None], rel_width=bad)
        with pytest.raises(InvalidArgument, match="rel_width"):
            refine_bracket([GaussianPart(1.0)], delta=1e-6, rel_width=bad)
    assert refine(Script(PLDInterval(1.0, 2.0)), eps_query, rel_width=1.0).reached


def test_closed_forms_are_not_refined() -> None:
    calls: list[int | None] = []

    def compose(points: int | None) -> GaussianBracket:
        calls.append(points)
        return GaussianBracket(1.0, 1.0 + 1e-3, 1)  # wider than the asked 1e-6, but a closed form

    r = refine(compose, eps_query, rel_width=1e-6)
    assert calls == [None] and r.points is None and not r.reached and r.stopped_by == ""


def test_refine_bracket_queries_the_asked_side() -> None:
    g = GaussianBracket(1.0, 1.0, 1)
    r = refine_bracket([GaussianPart(1.0)], epsilon=0.5)
    assert r.interval == g.delta(0.5) and r.reached
    r = refine_bracket([(GaussianPart(1.0), 1)], delta=1e-3)
    assert r.interval == g.epsilon(1e-3)
    for kwargs in ({}, {"epsilon": 0.5, "delta": 1e-3}):
        with pytest.raises(InvalidArgument, match="exactly one"):
            refine_bracket([GaussianPart(1.0)], **kwargs)  # type: ignore[arg-type]
    assert isinstance(r, RefinedInterval)


def test_a_width_met_exactly_counts_as_reached() -> None:
    # (0.5, 1.0) has relative width exactly 0.5: reached at rel_width 0.5, nothing refined, and no stop reason even
    # when another query sharing the grids stopped at the cap
    script = Script(PLDInterval(1.0, 2.0))
    exact, wide = refine_many(
        script, [lambda b: PLDInterval(0.5, 1.0), eps_query], [None, None], rel_width=0.5, max_points=10**6
    )
    assert exact.reached and exact.stopped_by == "" and exact.rel_width == 0.5
    r = refine(Script(PLDInterval(0.5, 1.0)), eps_query, rel_width=0.5)
    assert r.reached and r.stopped_by == "" and r.points is None
    script = Script(PLDInterval(1.0, 3.0))
    exact, wide = refine_many(
        script,
        [lambda b: PLDInterval(0.5, 1.0), eps_query],
        [None, None],
        rel_width=0.5,
        first_points=100,
        max_points=399,
    )
    assert not wide.reached and wide.stopped_by == "grid cap"
    assert exact.reached and exact.stopped_by == ""
