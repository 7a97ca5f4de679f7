r"""Full-dimensional Gaussian and Laplace noise calibrated to a Semi-DP sensitivity space, and projected Laplace.

Cho & Awan (2024) calibrate additive mechanisms on the relation
:math:`(\mathcal D_t, A_{a(t)})` whose sensitivity space is a finite set
:math:`S\subset\mathbb Z^d` (Def. 23). Prop. 7 there (the K-norm mechanism for a
ball containing S) and the classical Gaussian and Laplace mechanisms then give:

* :class:`SemiGaussianMechanism`: :math:`h(X)+\sigma\xi`, :math:`\xi\sim N(0,I_d)`,
  :math:`\sigma=\Delta_2(S)/\mu`: :math:`\mu`-GDP on the relation (Dong, Roth & Su
  2022, Thm. 2.7, for the sensitivity :math:`\Delta_2(S)=\max_{u\in S}\|u\|_2`).
  Noise in all d cells: the release does **not** keep the invariant (it is
  published separately; Semi-DP covers the pair because the invariant is
  constant on :math:`\mathcal D_t`).
* :class:`SemiLaplaceMechanism`: :math:`h(X)+e`, :math:`e_i\sim\mathrm{Lap}(b)`
  i.i.d., :math:`b=\Delta_1(S)/\varepsilon`: :math:`\varepsilon`-DP on the relation
  (Dwork et al. 2006; :math:`\Delta_1(S)=\max_{u\in S}\|u\|_1`). With
  ``projected=True``: :math:`h(X)+QQ^\top e`, :math:`Q` an orthonormal basis of
  span(S) — the release keeps the invariant, and it is still
  :math:`\varepsilon`-DP on the relation: for a pair with :math:`x-x'=u\in S`,
  :math:`(I-QQ^\top)x=(I-QQ^\top)x'=:c`, and both releases are the same map
  :math:`w\mapsto QQ^\top w+c` applied to the unprojected releases, so the
  pairwise inequality survives (post-processing, pair by pair).

These are the baselines a K-norm design is compared with (Cho & Awan §5.2
compare against the *group-privacy* inflated versions; calibrating to
:math:`\Delta_p(S)` directly is never worse, since
:math:`\Delta_p(S)\le a(t)\Delta_p(A_1)`). Projected Laplace is also the exact,
cheap mechanism that keeps the invariant when the optimal K-norm hull is out of
reach: :math:`\mathbb E\|QQ^\top e\|_2^2=2b^2s` (s = dim span S).

Rounding (house style R6): :math:`\sigma` and :math:`b` are rounded up, the
privacy maps recompute the guarantee from them rounded up.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction as Q

import numpy as np
from numpy.typing import ArrayLike, NDArray

from semidp.accountant.core.arguments import check_int, check_positive
from semidp.accountant.core.directed import sqrt_up, up_exact
from semidp.accountant.core.errors import InvalidArgument
from semidp.accountant.geometry.knorm_certificates import certified_span
from semidp.accountant.guarantees.definitions import GDP, PureDP
from semidp.accountant.guarantees.relations import Relation, check_same_relation
from semidp.accountant.sensitivity.spaces import SensitivitySpace
from semidp.mechanisms.projected_gaussian import expected_chi

FloatArray = NDArray[np.float64]


def _release(value: ArrayLike, noise: FloatArray, size: int | None) -> FloatArray:
    """``value + noise`` with the shape conventions of
    :meth:`~mechanisms.projected_gaussian.ProjectedGaussianMechanism.sample`."""
    v = np.asarray(value, dtype=np.float64)
    d = noise.shape[1]
    if v.size != d:
        raise InvalidArgument(f"value has {v.size} entries; the sensitivity space has dimension {d}.")
    out = v.reshape(1, d) + noise
    return out.reshape(v.shape) if size is None else out.reshape((noise.shape[0], *v.shape))


def _draws(size: int | None) -> int:
    return 1 if size is None else check_int("size", size, minimum=0)


@dataclass(frozen=True, eq=False)
class SemiGaussianMechanism:
    r"""Gaussian noise :math:`\sigma\xi` in all d cells, :math:`\sigma=\Delta_2(S)/\mu` (Dong, Roth & Su 2022, Thm. 2.7).

    :math:`\mu`-GDP on the relation whose sensitivity space is S (Cho & Awan
    2024, Def. 23). Does not keep the invariant; compare
    :class:`~mechanisms.projected_gaussian.ProjectedGaussianMechanism` (Alg. 1),
    which has the same :math:`\sigma` but noise only in span(S).

    >>> from semidp.accountant.guarantees.relations import Replace
    >>> from semidp.accountant.sensitivity.spaces import table_space
    >>> m = SemiGaussianMechanism.for_gdp(table_space(2, 2), 1.0, Replace())
    >>> m.sigma, m.dimension
    (2.0, 4)
    """

    sigma: float
    """Noise standard deviation per cell (> 0)."""
    sensitivity: float
    r"""Upper bound on :math:`\Delta_2(S)` (rounded up)."""
    dimension: int
    """Number of cells d (all get noise)."""
    relation: Relation
    """The relation on which S is the sensitivity space."""

    def __post_init__(self) -> None:
        check_positive("sigma", self.sigma)
        check_positive("sensitivity", self.sensitivity)
        check_int("dimension", self.dimension, minimum=1)

    @classmethod
    def for_gdp(cls, space: SensitivitySpace, mu: float, relation: Relation) -> SemiGaussianMechanism:
        r""":math:`\sigma=\Delta_2(S)/\mu`, both rounded up (more noise)."""
        check_positive("mu", mu)
        if space.size == 0 or space.l2_squared == 0:
            raise InvalidArgument("the sensitivity space is {0}: nothing to privatise; release h(X) directly.")
        delta2 = sqrt_up(Q(space.l2_squared))
        return cls(up_exact(Q(delta2) / Q(mu)), delta2, space.dimension, relation)

    def privacy_map(self, relation: Relation) -> GDP:
        r""":math:`\Delta_2/\sigma`-GDP (rounded up) on ``relation``, which must be the mechanism's."""
        check_same_relation(self.relation, relation)
        return GDP(up_exact(Q(self.sensitivity) / Q(self.sigma)), relation)

    def expected_l2_norm(self) -> float:
        r""":math:`\mathbb E\|\sigma\xi\|_2=\sigma\,\mathbb E\chi_d`."""
        return self.sigma * expected_chi(self.dimension)

    def expected_squared_error(self) -> float:
        r""":math:`d\sigma^2`."""
        return self.dimension * self.sigma**2

    def sample(self, value: ArrayLike, *, rng: np.random.Generator, size: int | None = None) -> FloatArray:
        """``value + sigma xi``; ``size`` draws stack along a new first axis."""
        noise = self.sigma * rng.standard_normal((_draws(size), self.dimension))
        return _release(value, noise, size)


@dataclass(frozen=True, eq=False)
class SemiLaplaceMechanism:
    r"""Laplace noise :math:`\mathrm{Lap}(b)^d`, :math:`b=\Delta_1(S)/\varepsilon`, optionally projected onto span(S).

    :math:`\varepsilon`-DP on the relation whose sensitivity space is S (Dwork
    et al. 2006 with :math:`\Delta_1(S)`; the projection is post-processing pair
    by pair, see the module notes). ``projected=True`` keeps the invariant.

    >>> from semidp.accountant.guarantees.relations import Replace
    >>> from semidp.accountant.sensitivity.spaces import table_space
    >>> m = SemiLaplaceMechanism.for_epsilon(table_space(2, 2), 0.5, Replace(), projected=True)
    >>> m.scale, m.noise_dimension, m.expected_squared_error()
    (8.0, 1, 128.0)
    >>> y = m.sample(np.array([3.0, 1.0, 2.0, 4.0]), rng=np.random.default_rng(0))
    >>> bool(np.isclose(y[0] + y[1], 4.0) and np.isclose(y[0] + y[2], 5.0))
    True
    """

    scale: float
    """Laplace scale b per cell (> 0)."""
    sensitivity: int
    r""":math:`\Delta_1(S)` (exact integer)."""
    basis: FloatArray
    """``(d, s)`` orthonormal basis Q of span(S)."""
    projected: bool
    r"""Project the noise onto span(S) (keeps the invariant)."""
    relation: Relation
    """The relation on which S is the sensitivity space."""

    def __post_init__(self) -> None:
        check_positive("scale", self.scale)
        check_int("sensitivity", self.sensitivity, minimum=1)

    @classmethod
    def for_epsilon(
        cls, space: SensitivitySpace, epsilon: float, relation: Relation, *, projected: bool = False
    ) -> SemiLaplaceMechanism:
        r""":math:`b=\Delta_1(S)/\varepsilon`, rounded up."""
        check_positive("epsilon", epsilon)
        if space.size == 0 or space.l1 == 0:
            raise InvalidArgument("the sensitivity space is {0}: nothing to privatise; release h(X) directly.")
        cert = certified_span(space)
        return cls.from_norms(space.l1, np.asarray(cert.orthonormal, dtype=np.float64), epsilon, relation, projected)

    @classmethod
    def from_norms(
        cls, l1: int, basis: FloatArray, epsilon: float, relation: Relation, projected: bool = False
    ) -> SemiLaplaceMechanism:
        r""":math:`b=\Delta_1/\varepsilon`, rounded up, from the exact :math:`\Delta_1` and an orthonormal basis
        of a subspace V containing S (e.g. :class:`accountant.geometry.table_space_norms.TableSpaceNorms`, when S is too
        large to list). The module notes' projection argument holds for any such V: :math:`x-x'\in S\subseteq V`
        gives :math:`(I-P_V)x=(I-P_V)x'`."""
        check_positive("epsilon", epsilon)
        check_int("l1", l1, minimum=1)
        return cls(up_exact(Q(l1) / Q(epsilon)), l1, np.asarray(basis, dtype=np.float64), bool(projected), relation)

    @property
    def dimension(self) -> int:
        """d, the number of cells."""
        return int(self.basis.shape[0])

    @property
    def noise_dimension(self) -> int:
        """Dimension of the noise: s = dim span(S) when projected, else d."""
        return int(self.basis.shape[1]) if self.projected else self.dimension

    def privacy_map(self, relation: Relation) -> PureDP:
        r""":math:`\Delta_1/b`-DP (rounded up) on ``relation``, which must be the mechanism's."""
        check_same_relation(self.relation, relation)
        return PureDP(up_exact(Q(self.sensitivity) / Q(self.scale)), relation)

    def expected_squared_error(self) -> float:
        r""":math:`2b^2\operatorname{tr}(P)`: :math:`2b^2s` projected, :math:`2b^2d` not."""
        return 2.0 * self.scale**2 * self.noise_dimension

    def sample(self, value: ArrayLike, *, rng: np.random.Generator, size: int | None = None) -> FloatArray:
        """``value + e`` or ``value + Q Q^T e``; ``size`` draws stack along a new first axis."""
        e = rng.laplace(0.0, self.scale, (_draws(size), self.dimension))
        if self.projected:
            e = (e @ self.basis) @ self.basis.T
        return _release(value, e, size)


__all__ = ["SemiGaussianMechanism", "SemiLaplaceMechanism"]
