"""Fast guards of the workload accounting (accountant/workloads/accounting.py): the worst pair's parts, its exact zCDP, the
conservative rounding of noise parameters, and the set-aside bracket's ends.

Issue Step 16: flipping any single rounding, shift, count or bracket end fails a test here (judged by
``python benchmarks/mutation.py accountant/workloads/accounting.py``). Exact values are closed forms of the module docstring
(zCDP ``||v||^2 / (2 sigma^2)`` [CKS20, Prop. 5]; Laplace ``(||v||_1 / b)^2 / 2`` [BS16, Prop. 1.4]); brackets are
checked against the Gaussian mechanism's exact profile [BW18, Thm. 8] on a small grid.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import NamedTuple

import pytest
from scipy.stats import norm

from semidp.accountant.core.directed import up_exact
from semidp.accountant.core.errors import InvalidArgument
from semidp.accountant.pld.engine import PLDBracket, PLDInterval
from semidp.accountant.pld.parts import (
    ApproxDPPart,
    DiscreteGaussianPart,
    DiscreteLaplacePart,
    GaussianPart,
    LaplacePart,
)
from semidp.accountant.workloads.accounting import (
    GAUSSIAN_NOISES,
    MAX_SET_ASIDE,
    NOISES,
    SET_ASIDE_DELTA,
    WORKLOAD_POINTS,
    SetAsideBracket,
    WorkloadMeasurement,
    measurement_rho,
    workload_bracket,
    workload_parts,
    workload_pld,
    workload_rho,
)

TENTH = Fraction(1, 10)  # float(0.1) lies above 1/10: rounded down it is the float below
DOWN_TENTH = math.nextafter(0.1, 0.0)
THIRD = Fraction(1, 3)  # float(1/3) lies below 1/3: kept
POINTS = 2**11


def _m(scale: Fraction | int, fixed: bool = False) -> WorkloadMeasurement:
    return WorkloadMeasurement("m", Fraction(scale), fixed)


def _spy_compose(monkeypatch: pytest.MonkeyPatch) -> list[list[object]]:
    """Record the parts of every PLD composition the workload asks for (composed on the small test grid)."""
    from semidp.accountant.pld import engine as pld_engine
    from semidp.accountant.workloads import accounting as workload

    seen: list[list[object]] = []
    compose = pld_engine.compose_plds

    def spy(parts: list[object], **kw: object) -> object:
        seen.append(parts)
        return compose(parts, points=POINTS)  # type: ignore[arg-type]

    monkeypatch.setattr(workload, "compose_plds", spy)
    return seen


def test_constants() -> None:
    assert NOISES == ("discrete-gaussian", "gaussian", "discrete-laplace", "laplace")
    assert GAUSSIAN_NOISES == ("discrete-gaussian", "gaussian")
    assert (WORKLOAD_POINTS, SET_ASIDE_DELTA, MAX_SET_ASIDE) == (2**17, 1e-20, 8)
    m = WorkloadMeasurement("m", Fraction(3))
    assert m.fixed is False and not hasattr(m, "__dict__")  # slots
    with pytest.raises(AttributeError):
        m.fixed = True  # type: ignore[misc]  # frozen


# --- exact zCDP -----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("noise", GAUSSIAN_NOISES)
def test_measurement_rho_gaussian(noise: str) -> None:
    assert measurement_rho(_m(4), noise, 2) == Fraction(1, 4)
    assert measurement_rho(_m(4), noise, 8) == Fraction(1)
    assert measurement_rho(_m(4), noise, 0) == 0


@pytest.mark.parametrize("noise", ["laplace", "discrete-laplace"])
def test_measurement_rho_laplace(noise: str) -> None:
    assert measurement_rho(_m(3), noise, 2) == Fraction(2, 9)  # (2/3)^2 / 2
    assert measurement_rho(_m(3), noise, 8) == Fraction(8, 9)  # (4/3)^2 / 2
    assert measurement_rho(_m(3), noise, 0) == 0


def test_workload_rho_sums_the_worst_pair() -> None:
    ms = [_m(4), _m(2, fixed=True), _m(8)]
    assert workload_rho(ms, "gaussian") == Fraction(1, 4) + Fraction(1, 2) + Fraction(1, 8)
    assert workload_rho(ms, "gaussian", semi_radius=1) == Fraction(1, 4) + Fraction(1, 8)
    assert workload_rho(ms, "gaussian", semi_radius=2) == Fraction(1) + Fraction(1, 2)
    assert workload_rho(ms, "laplace", semi_radius=2) == Fraction(8, 16) + Fraction(8, 64)
    assert workload_rho(ms, "gaussian", semi_radius=0) == 0
    assert workload_rho([_m(2, fixed=True)], "gaussian", semi_radius=2) == 0


# --- the parts of the worst pair, with noise parameters rounded down ---------------------------------------------


def test_advertised_parts_two_cells_of_shift_one_even_when_fixed() -> None:
    assert workload_parts([_m(TENTH), _m(THIRD, fixed=True)], "discrete-gaussian") == [
        (DiscreteGaussianPart(DOWN_TENTH, 1), 2),
        (DiscreteGaussianPart(1 / 3, 1), 2),
    ]
    assert workload_parts([_m(TENTH)], "laplace") == [(LaplacePart(DOWN_TENTH, 1.0), 2)]
    assert workload_parts([_m(TENTH)], "discrete-laplace") == [(DiscreteLaplacePart(DOWN_TENTH, 1), 2)]


def test_gaussian_sigma_is_the_rounded_down_root_of_the_rounded_down_variance() -> None:
    ((part, count),) = workload_parts([_m(4)], "gaussian")
    assert count == 2 and part == GaussianPart(math.nextafter(2.0, 0.0), 1.0)
    ((part, _),) = workload_parts([_m(TENTH)], "gaussian")
    assert isinstance(part, GaussianPart) and part.sigma == math.nextafter(math.sqrt(DOWN_TENTH), 0.0)


def test_semi_radius_one_drops_fixed_measurements() -> None:
    ms = [_m(4), _m(9, fixed=True)]
    assert workload_parts(ms, "discrete-gaussian", semi_radius=1) == [(DiscreteGaussianPart(4.0, 1), 2)]
    assert workload_parts(ms, "discrete-gaussian", semi_radius=0) == []


def test_semi_radius_two_is_shift_two_or_the_dominating_pair() -> None:
    ms = [_m(4), _m(9, fixed=True)]
    assert workload_parts(ms, "discrete-gaussian", semi_radius=2) == [(DiscreteGaussianPart(4.0, 2), 2)]
    assert workload_parts(ms, "gaussian", semi_radius=2) == [(GaussianPart(math.nextafter(2.0, 0.0), 2.0), 2)]
    assert workload_parts([_m(TENTH)], "laplace", semi_radius=2) == [
        (ApproxDPPart(math.nextafter(4.0 / DOWN_TENTH, math.inf), 0.0), 1)
    ]
    assert workload_parts([_m(3)], "discrete-laplace", semi_radius=2) == [
        (ApproxDPPart(math.nextafter(4.0 / 3.0, math.inf), 0.0), 1)
    ]


def test_refusals() -> None:
    with pytest.raises(InvalidArgument, match="noise='normal'"):
        workload_parts([_m(4)], "normal")
    with pytest.raises(InvalidArgument, match="semi_radius=3"):
        workload_parts([_m(4)], "gaussian", semi_radius=3)
    with pytest.raises(InvalidArgument, match="semi_radius=-1"):
        workload_parts([_m(4)], "gaussian", semi_radius=-1)
    with pytest.raises(InvalidArgument, match="semi_radius=3"):
        workload_parts([_m(4, fixed=True)], "gaussian", semi_radius=3)


# --- the composed bracket -------------------------------------------------------------------------------------


def _gaussian_delta(mu: float, eps: float) -> float:
    """Exact profile of mu-GDP [BW18, Thm. 8]."""
    return float(norm.cdf(-eps / mu + mu / 2) - math.exp(eps) * norm.cdf(-eps / mu - mu / 2))


def test_workload_pld_brackets_the_exact_gaussian_profile() -> None:
    ms = [_m(4), _m(16)]  # two cells of shift 1 each: ||v||^2 = 2/4 + 2/16 -> mu = sqrt(0.625)
    b = workload_pld(ms, "gaussian", points=POINTS)
    assert isinstance(b, PLDBracket)
    mu = math.sqrt(2 / 4 + 2 / 16)
    for eps in (0.1, 1.0):
        lo, up = b.delta(eps)
        assert lo <= _gaussian_delta(mu, eps) <= up and up - lo < 0.01
    assert workload_pld([_m(4, fixed=True)], "gaussian", semi_radius=1, points=POINTS) is None
    semi = workload_pld(ms, "gaussian", semi_radius=2, points=POINTS)  # shift 2 in two cells: mu doubles
    assert semi is not None
    lo, up = semi.delta(1.0)
    assert lo <= _gaussian_delta(2 * mu, 1.0) <= up


class _Fixed(NamedTuple):
    """A stand-in bracket with fixed answers (the set-aside bracket only reads its ends)."""

    lo: float
    up: float
    count: int = 3

    def delta(self, epsilon: float) -> PLDInterval:
        return PLDInterval(self.lo, self.up)

    def epsilon(self, delta: float) -> PLDInterval:
        return PLDInterval(self.lo + 1.0, self.up + 1.0)


def test_set_aside_bracket_takes_the_lower_end_from_the_kept_and_the_upper_from_the_dominated() -> None:
    b = SetAsideBracket(_Fixed(0.1, 0.2), _Fixed(0.15, 0.4, count=5), (1,))  # type: ignore[arg-type]
    assert b.count == 5
    with pytest.raises(AttributeError):
        b.set_aside = ()  # type: ignore[misc]  # frozen
    assert b.delta(1.0) == PLDInterval(0.1, 0.4)
    assert b.epsilon(1e-6) == PLDInterval(1.1, 1.4)
    crossed = SetAsideBracket(_Fixed(0.5, 0.6), _Fixed(0.0, 0.3), (0,))  # type: ignore[arg-type]
    assert crossed.delta(1.0) == PLDInterval(0.3, 0.3) and crossed.epsilon(1e-6) == PLDInterval(1.3, 1.3)
    empty = SetAsideBracket(None, _Fixed(0.15, 0.4), (0,))  # type: ignore[arg-type]
    assert empty.delta(1.0) == PLDInterval(0.0, 0.4) and empty.epsilon(1e-6) == PLDInterval(0.0, 1.4)


def _refuse_more_than(monkeypatch: pytest.MonkeyPatch, most: int, alone: set[Fraction] = frozenset()) -> None:  # type: ignore[assignment]
    from semidp.accountant.workloads import accounting as workload

    original = workload.workload_pld

    def limited(values: list[WorkloadMeasurement], *args: object, **kw: object) -> object:
        if len(values) > most or any(v.scale in alone for v in values):
            raise InvalidArgument("stand-in: too many grid points")
        kw["points"] = POINTS
        return original(values, *args, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(workload, "workload_pld", limited)


def test_workload_bracket_without_trouble_is_the_plain_bracket() -> None:
    b = workload_bracket([_m(4)], "gaussian", points=POINTS)
    assert isinstance(b, PLDBracket)


def test_set_aside_the_farthest_from_the_median_and_bound_it_by_its_guarantee(monkeypatch: pytest.MonkeyPatch) -> None:
    from semidp.accountant.pld import engine as pld_engine
    from semidp.accountant.workloads import accounting as workload

    ms = [_m(4), _m(9), _m(100), _m(5)]
    seen: list[list[object]] = []
    compose = pld_engine.compose_plds

    def spy(parts: list[object], **kw: object) -> object:
        seen.append(parts)
        return compose(parts, points=POINTS)  # type: ignore[arg-type]

    monkeypatch.setattr(workload, "compose_plds", spy)
    _refuse_more_than(monkeypatch, 3)
    b = workload_bracket(ms, "gaussian", points=POINTS)
    assert isinstance(b, SetAsideBracket) and b.set_aside == (2,)
    assert b.kept is not None and b.count == 7  # three measurements of two cells, and one dominating pair
    rho = up_exact(Fraction(2, 2) / 100)
    eps0 = rho + 2 * math.sqrt(rho * -math.log(1e-20))
    pair = ApproxDPPart(math.nextafter(eps0 * (1 + 1e-12), math.inf), 1e-20)
    assert seen[-1][-1] == (pair, 1)
    assert len(seen[-1]) == 4
    lo, up = b.epsilon(1e-6)
    assert 0 < lo < up


def test_set_aside_at_semi_radius_two_uses_the_shift_eight_shape(monkeypatch: pytest.MonkeyPatch) -> None:
    seen = _spy_compose(monkeypatch)
    _refuse_more_than(monkeypatch, 3)
    ms = [_m(4), _m(1000, fixed=True), _m(5), _m(7)]  # the fixed one cannot change: never set aside
    b = workload_bracket(ms, "laplace", semi_radius=2, points=POINTS)
    assert isinstance(b, SetAsideBracket) and b.set_aside == (3,)  # 7 lies farther from the median 5 than 4
    assert seen[-1][-1] == (ApproxDPPart(up_exact(Fraction(4, 7)), 0.0), 1)
    g = workload_bracket(ms, "gaussian", semi_radius=2, points=POINTS)
    assert isinstance(g, SetAsideBracket) and g.set_aside == (3,)
    rho = up_exact(Fraction(8, 2) / 7)
    eps0 = rho + 2 * math.sqrt(rho * -math.log(1e-20))
    assert seen[-1][-1] == (ApproxDPPart(math.nextafter(eps0 * (1 + 1e-12), math.inf), 1e-20), 1)


def test_set_aside_advertised_at_a_custom_delta(monkeypatch: pytest.MonkeyPatch) -> None:
    seen = _spy_compose(monkeypatch)
    _refuse_more_than(monkeypatch, 1)
    b = workload_bracket([_m(3, fixed=True), _m(5)], "discrete-laplace", points=POINTS, delta0=1e-9)
    assert isinstance(b, SetAsideBracket) and b.set_aside == (0,)  # advertised: the fixed one changes too
    assert seen[-1][-1] == (ApproxDPPart(up_exact(Fraction(2, 3)), 0.0), 1)


def test_measurements_too_wide_alone_are_set_aside_first(monkeypatch: pytest.MonkeyPatch) -> None:
    _refuse_more_than(monkeypatch, 5, alone={Fraction(7), Fraction(8)})
    ms = [_m(7), _m(4), _m(8), _m(4), _m(1000)]
    b = workload_bracket(ms, "discrete-gaussian", points=POINTS)
    assert isinstance(b, SetAsideBracket) and b.set_aside == (0, 2)  # alone: not the farthest (1000)


def test_nothing_helps_raises_the_first_error(monkeypatch: pytest.MonkeyPatch) -> None:
    from semidp.accountant.workloads import accounting as workload

    calls: list[int] = []

    def at_most_three(values: list[WorkloadMeasurement], *args: object, **kw: object) -> object:
        calls.append(len(values))
        if len(values) > 3:
            raise InvalidArgument(f"stand-in {len(calls)}")
        return None

    monkeypatch.setattr(workload, "workload_pld", at_most_three)
    with pytest.raises(InvalidArgument, match="^stand-in 1$"):
        workload_bracket([_m(2 + i) for i in range(12)], "gaussian", points=POINTS)
    # the whole, then each alone, then 1, 2, ..., MAX_SET_ASIDE set aside: 9 would be needed
    assert calls == [12] + [1] * 12 + [11, 10, 9, 8, 7, 6, 5, 4]


def test_up_to_max_set_aside_are_set_aside(monkeypatch: pytest.MonkeyPatch) -> None:
    _refuse_more_than(monkeypatch, 3)
    ms = [_m(2**i) for i in range(11)]  # median 2^5; the farthest are 2^10, 2^0, 2^9, 2^1, ...
    b = workload_bracket(ms, "discrete-gaussian", points=POINTS)
    assert isinstance(b, SetAsideBracket) and b.set_aside == (0, 1, 2, 3, 7, 8, 9, 10)


def test_every_measurement_too_wide_alone_is_set_aside(monkeypatch: pytest.MonkeyPatch) -> None:
    _refuse_more_than(monkeypatch, 20, alone={Fraction(2**i) for i in range(10)})
    ms = [_m(2**i) for i in range(10)]
    b = workload_bracket(ms, "discrete-gaussian", points=POINTS)
    assert isinstance(b, SetAsideBracket) and b.set_aside == tuple(range(10)) and b.kept is None


def test_the_median_is_taken_over_the_measurements_not_set_aside_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    _refuse_more_than(monkeypatch, 2, alone={Fraction(1000)})
    # the rest's median is 2: 100 lies farthest from it (from 1000, the one set aside alone, 1 would)
    b = workload_bracket([_m(1000), _m(1), _m(2), _m(100)], "discrete-gaussian", points=POINTS)
    assert isinstance(b, SetAsideBracket) and b.set_aside == (0, 3)
