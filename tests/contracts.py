"""Abstract contract tests (house style R11): every guarantee class must pass these.

A concrete test class subclasses :class:`GuaranteeContract` and provides
``make(param, relation)`` and ``param(g)`` (the scalar the algebra acts on) and
``exact_compose(a, b)`` / ``exact_group(a, k)`` as exact ``Fraction`` formulas.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from semidp.accountant import AddRemove, InvalidArgument, RelationMismatch, Replace

params = st.floats(0.0, 50.0, allow_subnormal=False)

# The same property methods run in several subclasses (one per guarantee class),
# which is what the differing_executors health check flags; each subclass is an
# independent test, so the check does not apply.
contract = settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.differing_executors])


class GuaranteeContract:
    cls: Any

    def make(self, x: float, relation: Any = None) -> Any:
        raise NotImplementedError

    def param(self, g: Any) -> float:
        raise NotImplementedError

    def exact_compose(self, a: Fraction, b: Fraction) -> Fraction:
        raise NotImplementedError

    def exact_group(self, a: Fraction, k: int) -> Fraction:
        raise NotImplementedError

    # ---- properties

    @contract
    @given(params)
    def test_group_one_is_identity(self, x: float) -> None:
        g = self.make(x)
        assert g.group(1) == g

    @contract
    @given(params, params)
    def test_compose_commutative_and_never_below_exact(self, x: float, y: float) -> None:
        a, b = self.make(x), self.make(y)
        ab, ba = a.compose(b), b.compose(a)
        assert ab == ba
        assert Fraction(self.param(ab)) >= self.exact_compose(Fraction(x), Fraction(y))

    @contract
    @given(params, params, params)
    def test_compose_associative_up_to_outward_rounding(self, x: float, y: float, z: float) -> None:
        a, b, c = self.make(x), self.make(y), self.make(z)
        left = self.param(a.compose(b).compose(c))
        right = self.param(a.compose(b.compose(c)))
        exact = self.exact_compose(self.exact_compose(Fraction(x), Fraction(y)), Fraction(z))
        for v in (left, right):
            assert Fraction(v) >= exact
            assert Fraction(v) <= exact * (1 + Fraction(1, 10**14)) + Fraction(1, 10**300)

    @contract
    @given(params, params)
    def test_compose_is_monotone(self, x: float, y: float) -> None:
        a, b = self.make(x), self.make(y)
        assert b.dominates(a.compose(b))
        assert a.dominates(a.compose(b))

    @contract
    @given(params, st.integers(1, 12))
    def test_group_matches_exact_formula(self, x: float, k: int) -> None:
        g = self.make(x).group(k)
        exact = self.exact_group(Fraction(x), k)
        assert Fraction(self.param(g)) >= exact
        assert Fraction(self.param(g)) <= exact * (1 + Fraction(1, 10**14)) + Fraction(1, 10**300)
        assert g.relation == Replace(k)

    @contract
    @given(params, params, params)
    def test_dominates_is_a_partial_order(self, x: float, y: float, z: float) -> None:
        a, b, c = self.make(x), self.make(y), self.make(z)
        assert a.dominates(a)
        if a.dominates(b) and b.dominates(a):
            assert self.param(a) == self.param(b)
        if a.dominates(b) and b.dominates(c):
            assert a.dominates(c)

    def test_different_relations_refuse_to_compose(self) -> None:
        with pytest.raises(RelationMismatch) as err:
            self.make(1.0).compose(self.make(1.0, AddRemove()))
        assert err.value.left == Replace() and err.value.right == AddRemove()
        assert not self.make(1.0).dominates(self.make(1.0, AddRemove()))

    @pytest.mark.parametrize("bad", [-1.0, float("nan"), float("inf"), "1", True])
    def test_invalid_parameter_raises(self, bad: Any) -> None:
        with pytest.raises(InvalidArgument):
            self.make(bad)

    def test_repr_round_trips(self) -> None:
        import semidp.accountant as accountant

        g = self.make(1.25, Replace(2))
        assert eval(repr(g), vars(accountant)) == g  # noqa: S307 - our own repr

    def test_group_rejects_non_positive_k(self) -> None:
        with pytest.raises(InvalidArgument):
            self.make(1.0).group(0)


class MechanismContract:
    """Every mechanism and private test satisfies :class:`mechanisms.protocol.Mechanism` (house style R4, R11).

    Subclasses provide :meth:`make` (the mechanism, the relation it holds on, a value to release at) and
    :attr:`other_relation` (a relation it does not hold on).
    """

    def make(self) -> tuple[Any, Any, Any]:
        raise NotImplementedError

    other_relation: Any = None

    def test_is_a_mechanism(self) -> None:
        from semidp.mechanisms.protocol import Mechanism

        mech, _, _ = self.make()
        assert isinstance(mech, Mechanism)

    def test_privacy_map_is_on_the_given_relation(self) -> None:
        from semidp.accountant.core.errors import RelationMismatch

        mech, relation, _ = self.make()
        got = mech.privacy_map(relation).relation
        assert got == relation or getattr(got, "base", None) == relation  # subspace DP: induced on relation
        if self.other_relation is not None:
            with pytest.raises(RelationMismatch):
                mech.privacy_map(self.other_relation)

    def test_sample_is_reproducible_and_shaped(self) -> None:
        import numpy as np

        mech, _, value = self.make()
        one = np.asarray(mech.sample(value, rng=np.random.default_rng(7)))
        again = np.asarray(mech.sample(value, rng=np.random.default_rng(7)))
        assert np.array_equal(one, again)
        three = np.asarray(mech.sample(value, rng=np.random.default_rng(7), size=3))
        assert three.shape == (3, *one.shape)
        other = np.asarray(mech.sample(value, rng=np.random.default_rng(8), size=3))
        assert not np.array_equal(three, other)

    def test_rng_is_keyword_only_and_required(self) -> None:
        import numpy as np

        mech, _, value = self.make()
        with pytest.raises(TypeError):
            mech.sample(value, np.random.default_rng(0))
        with pytest.raises(TypeError):
            mech.sample(value)
