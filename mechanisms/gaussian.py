r"""The Gaussian mechanism with an explicit privacy map (house style R4).

:math:`M(X)=\phi(X)+\sigma Z`, :math:`Z\sim N(0,I_d)`, is
:math:`\mu`-GDP with :math:`\mu=\Delta_2/\sigma` on the relation for which
:math:`\Delta_2` is the L2 sensitivity ([CA24, Prop. 6]; [DRS22, Thm. 2.7]).

Samplers here are for research and auditing: they are **not** hardened against
floating-point side channels ([HB21]; [Mir12] on the Laplace mechanism).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction as Q

import numpy as np
from numpy.typing import ArrayLike, NDArray

from semidp.accountant.core.arguments import check_positive
from semidp.accountant.core.directed import up_exact
from semidp.accountant.guarantees.definitions import GDP
from semidp.accountant.guarantees.relations import Relation, Replace, check_same_relation
from semidp.accountant.profiles.gaussian import gdp_mu_for


@dataclass(frozen=True, slots=True)
class GaussianMechanism:
    """Add i.i.d. ``N(0, sigma^2)`` noise to a query with L2 sensitivity ``sensitivity``.

    Examples
    --------
    >>> m = GaussianMechanism.for_approx_dp(1.0, 1e-5, sensitivity=1.0)
    >>> round(m.sigma, 7)                       # analytic Gaussian [BW18]
    3.7306316
    >>> m.privacy_map(Replace()).mu <= 1 / 3.7306316 + 1e-9
    True
    >>> rng = np.random.default_rng(0)
    >>> m.sample(np.zeros(3), rng=rng).shape
    (3,)
    """

    sigma: float
    """Noise standard deviation (> 0)."""
    sensitivity: float
    """L2 sensitivity of the query on ``relation`` (> 0)."""
    relation: Relation = field(default_factory=Replace)
    """The relation on which ``sensitivity`` holds."""

    def __post_init__(self) -> None:
        check_positive("sigma", self.sigma)
        check_positive("sensitivity", self.sensitivity)

    @classmethod
    def for_gdp(cls, mu: float, sensitivity: float, relation: Relation | None = None) -> "GaussianMechanism":
        """Calibrate ``sigma = sensitivity / mu`` (rounded up: more noise)."""
        check_positive("mu", mu)
        check_positive("sensitivity", sensitivity)
        return cls(up_exact(Q(sensitivity) / Q(mu)), sensitivity, relation or Replace())

    @classmethod
    def for_approx_dp(
        cls, epsilon: float, delta: float, sensitivity: float, relation: Relation | None = None
    ) -> "GaussianMechanism":
        """Analytic calibration to ``(epsilon, delta)``-DP [BW18, Alg. 1] (sigma rounded up)."""
        check_positive("sensitivity", sensitivity)
        mu = gdp_mu_for(epsilon, delta)
        return cls(up_exact(Q(sensitivity) / Q(mu)), sensitivity, relation or Replace())

    def privacy_map(self, relation: Relation) -> GDP:
        r""":math:`\mu = \Delta_2/\sigma`-GDP (rounded up) on ``relation``, which must be the mechanism's."""
        check_same_relation(self.relation, relation)
        return GDP(up_exact(Q(self.sensitivity) / Q(self.sigma)), relation)

    def check(self, target: GDP) -> bool:
        """True if the mechanism's guarantee implies ``target`` (on the target's relation)."""
        return self.privacy_map(target.relation).dominates(target)

    def sample(self, value: ArrayLike, *, rng: np.random.Generator, size: int | None = None) -> NDArray[np.float64]:
        """Release ``value + sigma * Z``; ``size`` draws stack along a new first axis."""
        v = np.asarray(value, dtype=np.float64)
        shape = v.shape if size is None else (size, *v.shape)
        return v + self.sigma * rng.standard_normal(shape)


__all__ = ["GaussianMechanism"]
