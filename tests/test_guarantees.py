"""The guarantee algebra: contract tests per class, plus class-specific facts."""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import mpmath
import pytest

from semidp.accountant import (
    GDP,
    RDP,
    ZCDP,
    ApproxDP,
    InvalidArgument,
    PureDP,
    Replace,
    UnsupportedRelease,
    compose,
    compose_as_zcdp,
)
from tests.contracts import GuaranteeContract


class TestPureDP(GuaranteeContract):
    def make(self, x: float, relation: Any = None) -> PureDP:
        return PureDP(x, relation or Replace())

    def param(self, g: PureDP) -> float:
        return g.epsilon

    def exact_compose(self, a: Fraction, b: Fraction) -> Fraction:
        return a + b

    def exact_group(self, a: Fraction, k: int) -> Fraction:
        return k * a


class TestZCDP(GuaranteeContract):
    def make(self, x: float, relation: Any = None) -> ZCDP:
        return ZCDP(x, relation or Replace())

    def param(self, g: ZCDP) -> float:
        return g.rho

    def exact_compose(self, a: Fraction, b: Fraction) -> Fraction:
        return a + b  # [BS16, Lemma 2.3]

    def exact_group(self, a: Fraction, k: int) -> Fraction:
        return k * k * a  # [BS16, Prop. 1.9]; Cho & Awan Lemma 39


class TestGDP(GuaranteeContract):
    def make(self, x: float, relation: Any = None) -> GDP:
        return GDP(x, relation or Replace())

    def param(self, g: GDP) -> float:
        return g.mu

    def exact_compose(self, a: Fraction, b: Fraction) -> Fraction:
        # sqrt is irrational: the exact value's square must not exceed ours' square.
        return _sqrt_floor(a * a + b * b)

    def exact_group(self, a: Fraction, k: int) -> Fraction:
        return k * a  # [DRS22, Thm. 2.14]


def _sqrt_floor(x: Fraction) -> Fraction:
    """A rational just below sqrt(x) (so 'ours >= exact' is a valid one-sided check)."""
    with mpmath.workdps(60):
        r = mpmath.sqrt(mpmath.mpf(x.numerator) / x.denominator)
        return Fraction(str(mpmath.nstr(r * (1 - mpmath.mpf(10) ** -40), 55)))


def test_gdp_compose_exact_when_representable() -> None:
    assert GDP(3.0).compose(GDP(4.0)).mu == 5.0  # [DRS22, Cor. 3.3]


def test_approx_group_uses_geometric_sum() -> None:
    # (eps, delta) -> (k eps, delta * sum_{i<k} e^{i eps}); below the textbook k e^{(k-1)eps} delta [Vad17]
    g = ApproxDP(0.5, 1e-6).group(3)
    assert g.epsilon == 1.5
    exact = 1e-6 * (1 + math.exp(0.5) + math.exp(1.0))
    assert exact <= g.delta <= exact * (1 + 1e-14)
    assert g.delta <= 3 * math.exp(1.0) * 1e-6
    assert ApproxDP(1.0, 0.4).group(5).delta == 1.0  # capped at 1


def test_approx_compose_basic() -> None:
    g = ApproxDP(1.0, 1e-6).compose(ApproxDP(0.5, 2e-6))
    assert g.epsilon == 1.5 and g.delta >= 3e-6 and g.delta <= 3e-6 * (1 + 1e-15)
    with pytest.raises(InvalidArgument):
        ApproxDP(1.0, 1.5)


def test_rdp_compose_and_group() -> None:
    r = RDP((2.0, 4.0), (0.25, 0.5)).compose(RDP((2.0, 3.0, 4.0), (0.5, 0.6, 1.0)))
    assert r.orders == (2.0, 4.0) and r.epsilons == (0.75, 1.5)
    assert r.group(1) is r
    with pytest.raises(UnsupportedRelease, match="2\\^c"):
        r.group(2)
    with pytest.raises(InvalidArgument):
        RDP((2.0, 1.5), (1.0, 1.0))  # orders must increase
    with pytest.raises(InvalidArgument):
        RDP((1.0,), (1.0,))  # order must be > 1
    with pytest.raises(InvalidArgument):
        RDP((2.0,), (1.0,)).compose(RDP((3.0,), (1.0,)))


def test_cannot_mix_types_without_conversion() -> None:
    with pytest.raises(InvalidArgument, match="convert"):
        ZCDP(1.0).compose(GDP(1.0))  # type: ignore[arg-type]
    assert compose_as_zcdp([ZCDP(1.0), GDP(2.0), PureDP(1.0)]).rho == 3.5
    with pytest.raises(UnsupportedRelease):
        compose_as_zcdp([ApproxDP(1.0, 1e-6)])  # type: ignore[list-item]
    assert compose([ZCDP(1.0), ZCDP(1.56)]).rho == 2.56
    with pytest.raises(InvalidArgument):
        compose([])


def test_integer_subspace_relation_is_distinct_and_groups_by_distance() -> None:
    """DGGY Def 2: a per-unit-norm statement on equivalent histograms; never composes with DP on datasets."""
    from semidp.accountant.core.errors import InvalidArgument, RelationMismatch
    from semidp.accountant.guarantees.relations import IntegerSubspace

    rel = IntegerSubspace("l1", ((1, 1, 0), (0, 1, 1)))
    assert rel.group(2).distance == 2.0 and rel.spec_name == "integer-subspace"
    assert "l1 distance <= 1" in rel.describe()
    with pytest.raises(RelationMismatch):
        PureDP(1.0, rel).compose(PureDP(1.0, Replace()))
    with pytest.raises(InvalidArgument, match="norm"):
        IntegerSubspace("linf", ((1,),))


def test_search_too_large_formats_sizes_beyond_the_float_range() -> None:
    """Regression: a fiber of 10^400 histograms made the refusal itself crash (OverflowError)."""
    from semidp.accountant.core.errors import SearchTooLarge

    assert "estimated size 1.000e+400 exceeds the limit 1e+06" in str(SearchTooLarge("fiber", 10**400, 1e6))
    assert "estimated size 1.234e+04" in str(SearchTooLarge("fiber", 12345, 1e6))


def test_fiber_size_descriptions_stay_short() -> None:
    """Regression: a 503-digit fiber bound was printed in full in the a(t) cross-check message."""
    from semidp.accountant.combinatorics.fiber import FiberSize

    assert FiberSize(10**503 + 7, False, "partition-bound").describe() == "1.000e+503 (upper bound, partition-bound)"
    assert FiberSize(36, True, "dynamic-programming").describe() == "36 (exact, dynamic-programming)"
