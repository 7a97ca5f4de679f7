"""Every mechanism and private test in mechanisms/ satisfies the one protocol (mechanisms.protocol)."""

from __future__ import annotations

from typing import Any

import numpy as np

from semidp.accountant.geometry.knorm import KNormBall
from semidp.accountant.guarantees.relations import AddRemove, Replace
from semidp.accountant.sensitivity.spaces import table_space
from semidp.mechanisms.binomial_ump import BinomialUMPTest
from semidp.mechanisms.cnd import Tulap
from semidp.mechanisms.correlated_gaussian import EllipsoidGaussian
from semidp.mechanisms.gaussian import GaussianMechanism
from semidp.mechanisms.knorm import KNormMechanism
from semidp.mechanisms.projected_gaussian import ProjectedGaussianMechanism
from semidp.mechanisms.semi_additive import SemiGaussianMechanism, SemiLaplaceMechanism
from semidp.mechanisms.subspace import ExtendedGaussian, ExtendedLaplace, ProjectedGaussian, ProjectedLaplace
from semidp.mechanisms.table_margins import TableMargins
from semidp.mechanisms.umpu import SemiDPOddsRatioTest
from tests.contracts import MechanismContract

S33 = table_space(3, 3)
C = np.ones((1, 4))


class TestGaussian(MechanismContract):
    other_relation = AddRemove()

    def make(self) -> tuple[Any, Any, Any]:
        return GaussianMechanism.for_gdp(1.0, 1.0, Replace()), Replace(), np.zeros(3)


class TestProjectedGaussianMechanism(MechanismContract):
    other_relation = AddRemove()

    def make(self) -> tuple[Any, Any, Any]:
        return ProjectedGaussianMechanism.for_gdp(S33, 1.0, Replace()), Replace(), np.zeros(9)


class TestSemiGaussian(MechanismContract):
    other_relation = AddRemove()

    def make(self) -> tuple[Any, Any, Any]:
        return SemiGaussianMechanism.for_gdp(S33, 1.0, Replace()), Replace(), np.zeros(9)


class TestSemiLaplace(MechanismContract):
    other_relation = AddRemove()

    def make(self) -> tuple[Any, Any, Any]:
        return SemiLaplaceMechanism.for_epsilon(S33, 1.0, Replace(), projected=True), Replace(), np.zeros(9)


class TestKNorm(MechanismContract):
    other_relation = AddRemove()

    def make(self) -> tuple[Any, Any, Any]:
        ball = KNormBall.from_space(table_space(2, 2), relation=Replace())
        return KNormMechanism(ball, 1.0), Replace(), np.zeros(4)


class _Subspace(MechanismContract):
    other_relation = Replace()
    cls: Any = None
    args: tuple[float, ...] = ()

    def make(self) -> tuple[Any, Any, Any]:
        m = self.cls.calibrate(C, *self.args, relation=AddRemove())
        return m, m.relation, np.zeros(4)


class TestProjectedGaussian(_Subspace):
    cls, args = ProjectedGaussian, (0.5, 1e-6)


class TestExtendedGaussian(_Subspace):
    cls, args = ExtendedGaussian, (0.5, 1e-6)


class TestProjectedLaplace(_Subspace):
    cls, args = ProjectedLaplace, (0.5,)


class TestExtendedLaplace(_Subspace):
    cls, args = ExtendedLaplace, (0.5,)


class TestEllipsoidGaussian(_Subspace):
    cls, args = EllipsoidGaussian, (0.5, 1e-6)


class TestOddsRatioTest(MechanismContract):
    other_relation = Replace()

    def make(self) -> tuple[Any, Any, Any]:
        t = SemiDPOddsRatioTest(TableMargins((5, 5), (4, 6)), Tulap(1.0))
        return t, t.guarantee.relation, np.int64(3)


class TestBinomialUMPTest(MechanismContract):
    other_relation = AddRemove()

    def make(self) -> tuple[Any, Any, Any]:
        return BinomialUMPTest(30, 0.5, Tulap(1.0)), Replace(), 12
