r"""Discrete Laplace (double geometric) noise in every cell, calibrated to a Semi-DP sensitivity space.

:class:`SemiDiscreteLaplaceMechanism`: :math:`h(X)+k`, :math:`k_i\sim\mathrm{Lap}_{\mathbb Z}(t)` i.i.d.
(:math:`\Pr[k_i=j]\propto e^{-|j|/t}`, the two-sided geometric law with ratio :math:`a=e^{-1/t}`),
sampled **exactly** by :func:`mechanisms.discrete.discrete_laplace_array` ([CKS20], Alg. 2,
vectorised). The geometric mechanism of Ghosh, Roughgarden & Sundararajan (2009, "Universally
utility-maximizing privacy mechanisms") in every cell; on the relation whose sensitivity space is
a finite :math:`S\subset\mathbb Z^d` it is :math:`\Delta_1(S)/t`-DP. Proof (one line): for
:math:`x-x'=u\in S` and any release :math:`y`,
:math:`\Pr[y\mid x]/\Pr[y\mid x']=\prod_ie^{(|y_i-x'_i|-|y_i-x_i|)/t}\le e^{\|u\|_1/t}\le e^{\Delta_1(S)/t}`.
The integer sensitivity is what makes the releases' supports agree ([CKS20], Sec. 2, discrete Laplace).

Rounding (house style R6): :math:`t` is an exact rational; the privacy map returns
:math:`\Delta_1(S)/t` rounded up. Samplers are for research and auditing (not hardened against
timing side channels).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
from numpy.typing import ArrayLike, NDArray

from semidp.accountant.core.arguments import check_int
from semidp.accountant.core.directed import up_exact
from semidp.accountant.core.errors import InvalidArgument
from semidp.accountant.guarantees.definitions import PureDP
from semidp.accountant.guarantees.relations import Relation, check_same_relation
from semidp.accountant.sensitivity.spaces import SensitivitySpace
from semidp.mechanisms.discrete import discrete_laplace_array

FloatArray = NDArray[np.float64]

#: The vectorised exact sampler needs the scale's numerator and denominator below this.
MAX_SCALE_PART = 2**31


@dataclass(frozen=True, eq=False)
class SemiDiscreteLaplaceMechanism:
    r""":math:`\mathrm{Lap}_{\mathbb Z}(t)^d` noise in every cell; :math:`\Delta_1(S)/t`-DP (module docstring).

    >>> from semidp.accountant.guarantees.relations import Replace
    >>> from semidp.accountant.sensitivity.spaces import table_space
    >>> m = SemiDiscreteLaplaceMechanism.for_scale(table_space(2, 2), Fraction(8), Replace())
    >>> m.privacy_map(Replace()).epsilon, m.dimension
    (0.5, 4)
    >>> y = m.sample(np.array([3, 1, 2, 4]), rng=np.random.default_rng(0), size=3)
    >>> y.shape, bool(np.all(y == np.round(y)))
    ((3, 4), True)
    """

    scale: Fraction
    """t > 0, exact rational."""
    sensitivity: int
    r""":math:`\Delta_1(S)` (exact integer)."""
    dimension: int
    """Number of cells d (all get noise)."""
    relation: Relation
    """The relation on which S is the sensitivity space."""

    def __post_init__(self) -> None:
        if not isinstance(self.scale, Fraction) or not self.scale > 0:
            raise InvalidArgument(f"scale={self.scale!r} must be a positive fractions.Fraction.")
        if self.scale.numerator >= MAX_SCALE_PART or self.scale.denominator >= MAX_SCALE_PART:
            raise InvalidArgument(f"scale={self.scale}: numerator and denominator must be < 2**31 (exact sampler).")
        check_int("sensitivity", self.sensitivity, minimum=1)
        check_int("dimension", self.dimension, minimum=1)

    @classmethod
    def for_scale(cls, space: SensitivitySpace, scale: Fraction, relation: Relation) -> SemiDiscreteLaplaceMechanism:
        """Noise of scale ``t = scale``; the guarantee is computed from it (:meth:`privacy_map`)."""
        if space.size == 0 or space.l1 == 0:
            raise InvalidArgument("the sensitivity space is {0}: nothing to privatise; release h(X) directly.")
        return cls(Fraction(scale), int(space.l1), space.dimension, relation)

    @classmethod
    def for_epsilon(
        cls, space: SensitivitySpace, epsilon: Fraction, relation: Relation
    ) -> SemiDiscreteLaplaceMechanism:
        r""":math:`t=\Delta_1(S)/\varepsilon` exactly (a rational), so the guarantee is exactly :math:`\varepsilon`."""
        if not Fraction(epsilon) > 0:
            raise InvalidArgument(f"epsilon={epsilon!r} must be > 0.")
        return cls.for_scale(space, Fraction(space.l1) / Fraction(epsilon), relation)

    @property
    def ratio(self) -> float:
        r""":math:`a=e^{-1/t}` (rounded to nearest)."""
        return math.exp(-1.0 / float(self.scale))

    def privacy_map(self, relation: Relation) -> PureDP:
        r""":math:`\Delta_1(S)/t`-DP (rounded up) on ``relation``, which must be the mechanism's."""
        check_same_relation(self.relation, relation)
        return PureDP(up_exact(Fraction(self.sensitivity) / self.scale), relation)

    def variance(self) -> float:
        r"""Per-cell variance :math:`2a/(1-a)^2`."""
        a = self.ratio
        return 2.0 * a / (1.0 - a) ** 2

    def expected_squared_error(self) -> float:
        r""":math:`\mathbb E\|k\|_2^2=2da/(1-a)^2`."""
        return self.dimension * self.variance()

    def sample(self, value: ArrayLike, *, rng: np.random.Generator, size: int | None = None) -> FloatArray:
        """``value + k`` (float64, integer-valued); ``size`` draws stack along a new first axis."""
        v = np.asarray(value, dtype=np.float64)
        if v.size != self.dimension:
            raise InvalidArgument(f"value has {v.size} entries; the sensitivity space has dimension {self.dimension}.")
        m = 1 if size is None else check_int("size", size, minimum=0)
        k = discrete_laplace_array(self.scale, m * self.dimension, rng=rng).astype(np.float64)
        out: FloatArray = v.reshape(1, -1) + k.reshape(m, self.dimension)
        return out.reshape(v.shape) if size is None else out.reshape((m, *v.shape))


__all__ = ["MAX_SCALE_PART", "SemiDiscreteLaplaceMechanism"]
