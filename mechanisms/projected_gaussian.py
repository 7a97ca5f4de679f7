r"""The Semi-DP Gaussian mechanism in the span of a sensitivity space [CA24, Alg. 1].

:math:`M(X)=h(X)+\sigma\,Q\xi`, :math:`\xi\sim N(0,I_s)`, where :math:`Q` is an
orthonormal basis (``d x s``) of :math:`V=\operatorname{span}(S)` and
:math:`\sigma=\Delta_2/\mu`, :math:`\Delta_2=\max_{u\in S}\|u\|_2`. It is
:math:`\mu`-GDP on the relation whose sensitivity space is :math:`S` (Prop. 28;
with :math:`S=S_{\rm semi}` at radius a(t), on :math:`(D_t, A_{a(t)})`). The
noise lies in :math:`V\subseteq\ker A`, so every draw keeps the invariant
:math:`Ax` (to float rounding). :math:`\|\sigma Q\xi\|_2=\sigma\chi_s`, so
:math:`\mathbb E\|{\rm noise}\|_2=\sigma\sqrt2\,\Gamma(\frac{s+1}2)/\Gamma(\frac s2)`
(``docs/reference/semi-dp.md`` T-G1).

Samplers here are for research and auditing: they are **not** hardened against
floating-point side channels ([HB21]; [Mir12]).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction as Q

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.special import gammaln

from semidp.accountant.core.arguments import check_int, check_positive
from semidp.accountant.core.directed import sqrt_up, up_exact
from semidp.accountant.core.errors import InvalidArgument
from semidp.accountant.geometry.knorm_certificates import certified_span
from semidp.accountant.geometry.span_coordinates import SpanCoordinates
from semidp.accountant.guarantees.definitions import GDP
from semidp.accountant.guarantees.relations import Relation, check_same_relation
from semidp.accountant.sensitivity.spaces import SensitivitySpace

FloatArray = NDArray[np.float64]


def expected_chi(s: int) -> float:
    r""":math:`\mathbb E\chi_s=\sqrt2\,\Gamma(\frac{s+1}2)/\Gamma(\frac s2)`.

    >>> round(expected_chi(1), 9) == round(math.sqrt(2 / math.pi), 9)
    True
    """
    check_int("s", s, minimum=1)
    return math.sqrt(2.0) * math.exp(float(gammaln((s + 1) / 2) - gammaln(s / 2)))


@dataclass(frozen=True, eq=False)
class ProjectedGaussianMechanism(SpanCoordinates):
    r"""Gaussian noise :math:`\sigma Q\xi` in span(S) [CA24, Alg. 1].

    Examples
    --------
    >>> from semidp.accountant.guarantees.relations import Replace
    >>> from semidp.accountant.sensitivity.spaces import table_space
    >>> m = ProjectedGaussianMechanism.for_gdp(table_space(2, 2), 1.0, Replace())
    >>> m.dimension, m.sensitivity, m.privacy_map(Replace()).mu <= 1.0
    (1, 2.0, True)
    >>> y = m.sample(np.array([3.0, 1.0, 2.0, 4.0]), rng=np.random.default_rng(0))
    >>> bool(np.isclose(y[0] + y[1], 4.0) and np.isclose(y[0] + y[2], 5.0))
    True
    """

    basis: FloatArray
    """``(d, s)`` orthonormal columns spanning S."""
    sigma: float
    """Noise scale per basis direction (> 0)."""
    sensitivity: float
    r"""Upper bound on :math:`\Delta_2=\max_{u\in S}\|u\|_2` (rounded up)."""
    relation: Relation
    """The relation on which S is the sensitivity space."""

    def __post_init__(self) -> None:
        check_positive("sigma", self.sigma)
        check_positive("sensitivity", self.sensitivity)

    @classmethod
    def for_gdp(cls, space: SensitivitySpace, mu: float, relation: Relation) -> ProjectedGaussianMechanism:
        r"""Calibrate :math:`\sigma=\Delta_2/\mu` (both rounded up: more noise) on span(``space``)."""
        check_positive("mu", mu)
        cert = certified_span(space)
        delta2 = sqrt_up(Q(space.l2_squared))
        return cls(np.asarray(cert.orthonormal, dtype=np.float64), up_exact(Q(delta2) / Q(mu)), delta2, relation)

    def privacy_map(self, relation: Relation) -> GDP:
        r""":math:`\mu=\Delta_2/\sigma`-GDP (rounded up) on ``relation``, which must be the mechanism's."""
        check_same_relation(self.relation, relation)
        return GDP(up_exact(Q(self.sensitivity) / Q(self.sigma)), relation)

    def check(self, relation: Relation, target: GDP) -> bool:
        """True if the mechanism's guarantee implies ``target``."""
        return self.privacy_map(relation).dominates(target)

    def expected_l2_norm(self) -> float:
        r""":math:`\mathbb E\|\sigma Q\xi\|_2=\sigma\,\mathbb E\chi_s` (T-G1)."""
        return self.sigma * expected_chi(self.dimension)

    def sample(self, value: ArrayLike, *, rng: np.random.Generator, size: int | None = None) -> FloatArray:
        """Release ``value + sigma Q xi`` (same shape as ``value``; ``size`` draws stack along a new first axis).

        ``value`` has ``d`` entries (any shape, flattened row-major).
        """
        v = np.asarray(value, dtype=np.float64)
        d = self.ambient_dimension
        if v.size != d:
            raise InvalidArgument(f"value has {v.size} entries; the sensitivity space has dimension {d}.")
        n = 1 if size is None else check_int("size", size, minimum=0)
        noise = self.sigma * (rng.standard_normal((n, self.dimension)) @ self.basis.T)
        out = v.reshape(1, d) + noise
        return out.reshape(v.shape) if size is None else out.reshape((n, *v.shape))


__all__ = ["ProjectedGaussianMechanism", "expected_chi"]
