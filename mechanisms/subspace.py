r"""Subspace-DP mechanisms for a linear query under a linear invariant (Gao, Gong & Yu, AAAI-22).

Setting (``docs/reference/subspace-integer-postprocessing.md`` §2, GGY numbering "AAAI/full"):
a linear query :math:`A(x)=\mathcal A\,h(x)\in\mathbb R^n` of the histogram
:math:`h`, and an invariant matrix :math:`C\in\mathbb R^{n_c\times n}` acting on the
*query output*: the release :math:`\mathcal M(x)` must satisfy
:math:`C\mathcal M(x)=CA(x)` with probability one (Def 2.2/2). For the histogram
query (:math:`\mathcal A=I`) this :math:`C` is ``invariant.matrix(space)``.

With :math:`\mathcal N=\ker C`, :math:`\mathcal R=\operatorname{row}(C)` and the orthogonal
projector :math:`\Pi_{\mathcal N}`:

* :class:`ProjectedGaussian` (Cor 3.5/14): :math:`A(x)+\Pi_{\mathcal N}e`,
  :math:`e\sim N(0,(c_{\varepsilon,\delta}\Delta_2(A))^2I_n)`;
* :class:`ExtendedGaussian` (Alg 1, Cor 3.6/15): :math:`A(x)+Q_{\mathcal N}e_{\mathcal N}`,
  :math:`e_{\mathcal N}\sim N(0,(c_{\varepsilon,\delta}\Delta_2(Q_{\mathcal N}^\top A))^2I_{n-r})`;
* :class:`ProjectedLaplace` (Cor 3.8/17): :math:`A(x)+\Pi_{\mathcal N}e`,
  :math:`e\sim\mathrm{Lap}(\Delta_1(A)/\varepsilon)^n`;
* :class:`ExtendedLaplace` (Cor 3.9/18): :math:`A(x)+Q_{\mathcal N}w`,
  :math:`w\sim\mathrm{Lap}(\Delta_1(Q_{\mathcal N}^\top A)/\varepsilon)^{n-r}`.

**What the privacy maps mean.** Each ``privacy_map`` returns an
:class:`~accountant.guarantees.definitions.ApproxDP` / :class:`~accountant.guarantees.definitions.PureDP`
carrying the *base* relation (``Replace`` = GGY's bounded DP, Def 2.1/1, or
``AddRemove``), but the statement is **induced subspace DP w.r.t. C**
(Def 2.6/6): the mechanism satisfies the invariant and its projection
:math:`\Pi_{\mathcal N}\mathcal M` is :math:`(\varepsilon,\delta)`-DP on that relation
(:math:`\mathcal N`-subspace DP, Def 2.5/5). It is **not** DP of the joint release:
the components in :math:`\mathcal R` are published exactly, and no
invariant-respecting mechanism is :math:`(\varepsilon,\delta)`-DP with :math:`\delta<1`
in general (Ex. 2.4/4). Projection: Thm 3.1/10; extension: Thm 3.3/12.

**The Gaussian constant** is GGY's :math:`c_{\varepsilon,\delta}=\varepsilon^{-1}(1+\sqrt{1+\ln(1/\delta)})`
(Lemma 3.4/13, after Dwork et al. 2006a), valid only for
:math:`\varepsilon,\delta\in(0,1)`; :func:`c_eps_delta` refuses other values. It is
kept separate from the analytic Gaussian calibration in :mod:`mechanisms.gaussian`.

Numerics: the subspaces come from an SVD of C with rank tolerance
:math:`\tau=10^{-10}\sigma_1` (reference §1, *not* ``pinv``'s default cutoff). The
sensitivities are computed in floating point from the enumerated sensitivity
vectors (Replace: :math:`\mathcal A(e_a-e_b)`; AddRemove: :math:`\pm\mathcal Ae_a`; a
relation of distance k multiplies them by k, a triangle-inequality upper bound)
and padded up by a relative budget of ``1e-10``; the constants and scales are
rounded up (house style R6). Samplers are for research and auditing; they are
not hardened against floating-point side channels.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from functools import cached_property
from typing import ClassVar, Self

import numpy as np
from numpy.typing import ArrayLike, NDArray

from semidp.accountant.core.arguments import check_finite_real, check_in_interval, check_int, check_positive
from semidp.accountant.core.directed import MP, pad_up, up
from semidp.accountant.core.errors import InvalidArgument
from semidp.accountant.data.dataspace import DataSpace
from semidp.accountant.data.invariants import Invariant
from semidp.accountant.guarantees.definitions import ApproxDP, PureDP
from semidp.accountant.guarantees.relations import AddRemove, Relation, Replace, Subspace, check_same_relation

FloatArray = NDArray[np.float64]

#: Relative rank tolerance for the SVD of C (reference §1).
RANK_TOL = 1e-10
#: Relative error budget added to float-computed sensitivities.
SENSITIVITY_PAD = 1e-10


def c_eps_delta(epsilon: float, delta: float) -> float:
    r"""GGY's Gaussian constant :math:`c_{\varepsilon,\delta}=\varepsilon^{-1}(1+\sqrt{1+\ln(1/\delta)})`, rounded up.

    Lemma 3.4/13 (after Dwork et al. 2006a): :math:`N(0,(c_{\varepsilon,\delta}\Delta_2)^2I)`
    noise gives :math:`(\varepsilon,\delta)`-DP **only for** :math:`\varepsilon\in(0,1)`,
    :math:`\delta\in(0,1)`; anything else raises :class:`InvalidArgument`.

    >>> round(c_eps_delta(0.5, 1e-6), 6), round(c_eps_delta(0.192, 1e-5), 6)   # T-G1
    (9.698184, 23.63209)
    """
    eps = check_finite_real("epsilon", epsilon)
    if not 0.0 < eps < 1.0:
        raise InvalidArgument(
            f"epsilon={epsilon!r} must satisfy 0 < epsilon < 1: GGY's constant c_eps_delta "
            "(Lemma 3.4/13, after Dwork et al. 2006a) is proved only for epsilon < 1. "
            "For epsilon >= 1 use the analytic Gaussian calibration (mechanisms.gaussian)."
        )
    d = check_in_interval("delta", delta, 0.0, 1.0, lo_open=True, hi_open=True)
    e, dd = MP.mpf(eps), MP.mpf(d)
    return up((1 + MP.sqrt(1 + MP.log(1 / dd))) / e)


def _as_matrix(name: str, value: ArrayLike) -> FloatArray:
    m = np.asarray(value, dtype=np.float64)
    if m.ndim != 2:
        raise InvalidArgument(f"{name} must be a 2-D matrix; got shape {m.shape}.")
    if not np.all(np.isfinite(m)):
        raise InvalidArgument(f"{name} has non-finite entries.")
    return m


@dataclass(frozen=True, eq=False)
class InvariantSubspace:
    r""":math:`\mathcal N=\ker C` and :math:`\mathcal R=\operatorname{row}C` of an invariant matrix C (``n_c x n``).

    >>> s = InvariantSubspace.of(np.ones((1, 4)))
    >>> s.rank, s.null_dimension
    (1, 3)
    >>> bool(np.allclose(s.project(np.array([1.0, 2.0, 3.0, 6.0])), [-2, -1, 0, 3]))
    True
    """

    constraint: FloatArray
    """C, ``(n_c, n)``; a zero-row C means no invariant."""
    row_basis: FloatArray
    r"""``(n, r)`` orthonormal basis :math:`Q_{\mathcal R}` of row(C)."""

    @classmethod
    def of(cls, constraint: ArrayLike) -> InvariantSubspace:
        """Build from C (rank-deficient C allowed: only its row space matters, GGY fn. 1)."""
        c = _as_matrix("invariant matrix C", constraint)
        n = c.shape[1]
        if n < 1:
            raise InvalidArgument("invariant matrix C must have at least one column (query dimension n >= 1).")
        if c.shape[0] == 0 or not np.any(c):
            return cls(c, np.zeros((n, 0)))
        _, sv, vt = np.linalg.svd(c, full_matrices=False)
        r = int(np.sum(sv > RANK_TOL * sv[0]))
        if r >= n:
            raise InvalidArgument(
                f"invariant matrix C has rank {r} = n = {n}: ker C = {{0}}, so the invariant fixes the whole "
                "query and there is no subspace to protect (GGY Def 2.2/2 needs rank < n)."
            )
        return cls(c, np.ascontiguousarray(vt[:r].T))

    @classmethod
    def for_histogram(cls, invariant: Invariant, space: DataSpace) -> InvariantSubspace:
        """C = ``invariant.matrix(space)``, for the histogram query (T = C h)."""
        return cls.of(invariant.matrix(space))

    @property
    def dimension(self) -> int:
        """n, the query dimension."""
        return int(self.constraint.shape[1])

    @property
    def rank(self) -> int:
        """r = rank C."""
        return int(self.row_basis.shape[1])

    @property
    def null_dimension(self) -> int:
        """n - r = dim ker C."""
        return self.dimension - self.rank

    @cached_property
    def null_basis(self) -> FloatArray:
        r"""``(n, n-r)`` orthonormal :math:`Q_{\mathcal N}`: the last right singular vectors of ``numpy.linalg.svd(C)``."""
        n = self.dimension
        if self.rank == 0:
            return np.eye(n)
        _, _, vt = np.linalg.svd(self.constraint, full_matrices=True)
        return np.ascontiguousarray(vt[self.rank :].T)

    def project(self, z: ArrayLike) -> FloatArray:
        r""":math:`\Pi_{\mathcal N}z=z-Q_{\mathcal R}Q_{\mathcal R}^\top z` along the last axis."""
        v = np.asarray(z, dtype=np.float64)
        if v.shape[-1] != self.dimension:
            raise InvalidArgument(f"vector has last dimension {v.shape[-1]}; expected n = {self.dimension}.")
        q = self.row_basis
        out: FloatArray = v - (v @ q) @ q.T
        return out

    def projector_diagonal(self) -> FloatArray:
        r""":math:`\operatorname{diag}\Pi_{\mathcal N}=1-\sum_k (Q_{\mathcal R})_{ik}^2`."""
        d: FloatArray = 1.0 - np.sum(self.row_basis**2, axis=1)
        return d

    def projector(self) -> FloatArray:
        r""":math:`\Pi_{\mathcal N}` as a dense ``n x n`` matrix."""
        p: FloatArray = np.eye(self.dimension) - self.row_basis @ self.row_basis.T
        return p


def query_sensitivity(query: ArrayLike, relation: Relation, p: float) -> float:
    r""":math:`\Delta_p` of the linear query ``query`` (``m x d``, acting on histograms of ``d`` cells), padded up.

    Replace(k): :math:`k\max_{a<b}\|\mathcal A(e_a-e_b)\|_p` (GGY's bounded DP);
    AddRemove(k): :math:`k\max_a\|\mathcal Ae_a\|_p`. ``p`` is 1 or 2.

    >>> round(query_sensitivity(np.eye(5), Replace(), 1), 6), round(query_sensitivity(np.eye(5), Replace(), 2), 6)
    (2.0, 1.414214)
    """
    a = _as_matrix("query matrix", query)
    if p not in (1, 2):
        raise InvalidArgument(f"p={p!r} must be 1 or 2.")
    d = a.shape[1]
    if isinstance(relation, Replace):
        if d < 2:
            raise InvalidArgument(f"the histogram has d={d} cell(s); replace-one neighbours need d >= 2.")
        best = 0.0
        for i in range(d - 1):
            diff = a[:, i : i + 1] - a[:, i + 1 :]
            best = max(best, float(np.max(np.linalg.norm(diff, ord=p, axis=0))) if diff.size else 0.0)
        k = relation.distance
    elif isinstance(relation, AddRemove):
        if d < 1:
            raise InvalidArgument("the histogram needs at least one cell.")
        best = float(np.max(np.linalg.norm(a, ord=p, axis=0))) if a.shape[0] else 0.0
        k = relation.distance
    else:
        raise InvalidArgument(
            f"relation={relation!r} is not supported: GGY's subspace DP is stated for bounded (Replace) "
            "neighbours; AddRemove is also accepted."
        )
    return pad_up(k * best, rel=SENSITIVITY_PAD)


def check_query_value(value: ArrayLike, n: int) -> FloatArray:
    """The query value as a float vector of length ``n`` (else :class:`InvalidArgument`)."""
    v = np.asarray(value, dtype=np.float64)
    if v.ndim != 1 or v.size != n:
        raise InvalidArgument(f"value has shape {v.shape}; expected the query value, shape ({n},).")
    if not np.all(np.isfinite(v)):
        raise InvalidArgument("value has non-finite entries.")
    return v


def draw_count(size: int | None) -> int:
    """Rows to draw for a ``size`` argument (``None``: one draw, returned without the leading axis)."""
    return 1 if size is None else check_int("size", size, minimum=0)


def shape_draws(out: FloatArray, size: int | None) -> FloatArray:
    """``out`` (rows of draws) shaped for ``size``: one row when ``size`` is ``None``."""
    return out[0] if size is None else out


#: A kernel sensitivity below this fraction of the full-query one is rounding noise (treated as 0).
ZERO_SENSITIVITY_TOL = 1e-9


def require_noise_dimension(sensitivity: float, full: float, what: str) -> None:
    """Refuse a query that does not move in ker C (its subspace sensitivity is numerically 0)."""
    if sensitivity <= ZERO_SENSITIVITY_TOL * full:
        raise InvalidArgument(
            f"{what}={sensitivity!r} (vs {full!r} for the whole query): the query does not move in ker C "
            "under this relation, so there is nothing to privatise in the subspace; release A(x) directly."
        )


def _subspace_relation(base: Relation, sub: InvariantSubspace) -> Subspace:
    """The relation value of an induced subspace-DP statement w.r.t. ``sub.constraint``."""
    if not isinstance(base, (Replace, AddRemove)):
        raise InvalidArgument(f"subspace DP is stated on Replace or AddRemove; got {base!r}.")
    return Subspace(base, tuple(tuple(float(x) for x in row) for row in sub.constraint))


def _calibration_inputs(
    constraint: ArrayLike, query: ArrayLike | None, relation: Relation | None, p: int, extended: bool
) -> tuple[InvariantSubspace, float, Relation]:
    r"""Subspace, sensitivity and base relation for a calibration ([GGY22, Cor. 3.2/11] and 3.6/15).

    The projection framework uses :math:`\Delta_p(A)`; the extension framework
    :math:`\Delta_p(Q_{\mathcal N}^\top A)`. Refuses when nothing moves inside ker C.
    """
    rel = relation if relation is not None else Replace()
    sub = InvariantSubspace.of(constraint)
    a = np.eye(sub.dimension) if query is None else query_in_subspace(sub, query)
    full = query_sensitivity(a, rel, p)
    s = query_sensitivity(sub.null_basis.T @ a, rel, p) if extended else full
    require_noise_dimension(s, full, f"Delta_{p}(Q_N^T A)" if extended else f"Delta_{p}(A)")
    return sub, s, rel


class SubspaceApproxDP:
    """The (ε, δ) privacy map shared by every subspace Gaussian [GGY22, Def. 2.6/6]; not a dataclass.

    Subclasses declare the fields ``subspace``, ``epsilon``, ``delta`` and ``relation``.
    """

    subspace: InvariantSubspace
    epsilon: float
    delta: float
    relation: Relation

    def privacy_map(self, relation: Relation) -> ApproxDP:
        r"""(ε, δ) **induced subspace DP w.r.t. C** [GGY22, Def. 2.6/6] on ``relation`` (the base relation).

        Not DP of the joint release: the row(C) components are exact.
        """
        check_same_relation(self.relation, relation)
        return ApproxDP(self.epsilon, self.delta, _subspace_relation(self.relation, self.subspace))

    def check(self, relation: Relation, target: ApproxDP) -> bool:
        """True if the (subspace) guarantee implies ``target`` (read as subspace DP w.r.t. the same C)."""
        g = self.privacy_map(relation)
        return g.dominates(dataclasses.replace(target, relation=g.relation))


@dataclass(frozen=True, eq=False)
class _GaussianBase(SubspaceApproxDP):
    subspace: InvariantSubspace
    epsilon: float
    delta: float
    sigma: float
    """Per-coordinate noise standard deviation before projection/extension."""
    sensitivity: float
    """The L2 sensitivity the calibration used (Delta_2(A), or Delta_2(Q_N^T A) for the extension)."""
    relation: Relation

    def __post_init__(self) -> None:
        check_positive("sensitivity", self.sensitivity)
        check_positive("sigma", self.sigma)
        need = up(MP.mpf(c_eps_delta(self.epsilon, self.delta)) * MP.mpf(self.sensitivity))
        if self.sigma < need:
            raise InvalidArgument(
                f"sigma={self.sigma!r} is below c_eps_delta * sensitivity = {need!r} needed for "
                f"(epsilon, delta)=({self.epsilon!r}, {self.delta!r})."
            )

    def covariance(self) -> FloatArray:
        r""":math:`\sigma^2\Pi_{\mathcal N}` (both frameworks)."""
        return self.sigma**2 * self.subspace.projector()

    def expected_squared_error(self) -> float:
        r""":math:`\mathbb E\|\mathcal M(x)-A(x)\|_2^2=(n-r)\sigma^2`."""
        return self.subspace.null_dimension * self.sigma**2

    #: Extension framework (sensitivity of Q_N^T A) rather than projection (of A).
    _extended: ClassVar[bool] = False

    @classmethod
    def calibrate(
        cls,
        constraint: ArrayLike,
        epsilon: float,
        delta: float,
        *,
        query: ArrayLike | None = None,
        relation: Relation | None = None,
    ) -> Self:
        r"""C (on the query output), target (ε, δ), query matrix (default: identity = histogram), base relation
        (default Replace); the L2 sensitivity is of A (projection) or of :math:`Q_{\mathcal N}^\top A` (extension)."""
        sub, s, rel = _calibration_inputs(constraint, query, relation, 2, extended=cls._extended)
        c = c_eps_delta(epsilon, delta)
        return cls(sub, epsilon, delta, up(MP.mpf(c) * MP.mpf(s)), s, rel)


@dataclass(frozen=True, eq=False)
class ProjectedGaussian(_GaussianBase):
    r"""Projected Gaussian [GGY22, Cor. 3.5/14]: :math:`A(x)+\Pi_{\mathcal N}e`.

    :math:`e\sim N(0,\sigma^2I_n)`, :math:`\sigma=c_{\varepsilon,\delta}\Delta_2(A)`.

    ``privacy_map`` gives (ε, δ) induced subspace DP w.r.t. C on the base relation
    (Thm 3.1/10), not DP of the joint release.

    >>> m = ProjectedGaussian.calibrate(np.ones((1, 3)), 0.5, 1e-6)
    >>> round(m.sigma, 6)                       # c(0.5, 1e-6) * sqrt(2)
    13.715304
    >>> y = m.sample(np.array([1.0, 2.0, 3.0]), rng=np.random.default_rng(0))
    >>> bool(abs(y.sum() - 6.0) < 1e-9)
    True
    """

    def sample(self, value: ArrayLike, *, rng: np.random.Generator, size: int | None = None) -> FloatArray:
        """``value + Pi_N e``; ``value`` is the query value A(x) (shape ``(n,)``); ``size`` draws stack on a new first axis."""
        v = check_query_value(value, self.subspace.dimension)
        e = self.sigma * rng.standard_normal((draw_count(size), v.size))
        return shape_draws(v + self.subspace.project(e), size)


@dataclass(frozen=True, eq=False)
class ExtendedGaussian(_GaussianBase):
    r"""Extended Gaussian [GGY22, Alg. 1, Cor. 3.6/15]: :math:`A(x)+Q_{\mathcal N}e_{\mathcal N}`.

    :math:`\sigma=c_{\varepsilon,\delta}\Delta_2(Q_{\mathcal N}^\top A)`.

    ``privacy_map`` gives (ε, δ) induced subspace DP w.r.t. C on the base relation
    (Thm 3.3/12), not DP of the joint release. Error never exceeds the projected one.

    >>> m = ExtendedGaussian.calibrate(np.ones((1, 3)), 0.5, 1e-6)
    >>> round(m.sigma, 6)                       # Delta_2(Q_N^T I) = sqrt(2) too
    13.715304
    """

    _extended: ClassVar[bool] = True

    def sample(self, value: ArrayLike, *, rng: np.random.Generator, size: int | None = None) -> FloatArray:
        """``value + Q_N e_N`` (see :meth:`ProjectedGaussian.sample`)."""
        v = check_query_value(value, self.subspace.dimension)
        q = self.subspace.null_basis
        e = self.sigma * rng.standard_normal((draw_count(size), q.shape[1]))
        return shape_draws(v + e @ q.T, size)


@dataclass(frozen=True, eq=False)
class _LaplaceBase:
    subspace: InvariantSubspace
    epsilon: float
    scale: float
    """Laplace scale b per coordinate before projection/extension."""
    sensitivity: float
    """The L1 sensitivity the calibration used."""
    relation: Relation

    def __post_init__(self) -> None:
        check_positive("epsilon", self.epsilon)
        check_positive("sensitivity", self.sensitivity)
        check_positive("scale", self.scale)
        need = up(MP.mpf(self.sensitivity) / MP.mpf(self.epsilon))
        if self.scale < need:
            raise InvalidArgument(
                f"scale={self.scale!r} is below sensitivity/epsilon = {need!r} needed for epsilon={self.epsilon!r}."
            )

    def privacy_map(self, relation: Relation) -> PureDP:
        r"""ε **induced subspace DP w.r.t. C** [GGY22, Def. 2.6/6] on ``relation`` (the base relation); not DP of the joint release."""
        check_same_relation(self.relation, relation)
        return PureDP(self.epsilon, _subspace_relation(self.relation, self.subspace))

    def check(self, relation: Relation, target: PureDP) -> bool:
        """True if the (subspace) guarantee implies ``target`` (read as subspace DP w.r.t. the same C)."""
        g = self.privacy_map(relation)
        return g.dominates(dataclasses.replace(target, relation=g.relation))

    def covariance(self) -> FloatArray:
        r""":math:`2b^2\Pi_{\mathcal N}` (both frameworks)."""
        return 2.0 * self.scale**2 * self.subspace.projector()

    def marginal_variances(self) -> FloatArray:
        r""":math:`2b^2\operatorname{diag}\Pi_{\mathcal N}` (e.g. :math:`2b^2(1-1/n)` for a total, T-G4)."""
        return 2.0 * self.scale**2 * self.subspace.projector_diagonal()

    def expected_squared_error(self) -> float:
        r""":math:`2(n-r)b^2`."""
        return 2.0 * self.subspace.null_dimension * self.scale**2

    #: Extension framework (sensitivity of Q_N^T A) rather than projection (of A).
    _extended: ClassVar[bool] = False

    @classmethod
    def calibrate(
        cls, constraint: ArrayLike, epsilon: float, *, query: ArrayLike | None = None, relation: Relation | None = None
    ) -> Self:
        r"""C (on the query output), target ε, query matrix (default identity), base relation (default Replace);
        the L1 sensitivity is of A (projection) or of :math:`Q_{\mathcal N}^\top A` (extension)."""
        check_positive("epsilon", epsilon)
        sub, s, rel = _calibration_inputs(constraint, query, relation, 1, extended=cls._extended)
        return cls(sub, epsilon, up(MP.mpf(s) / MP.mpf(epsilon)), s, rel)


@dataclass(frozen=True, eq=False)
class ProjectedLaplace(_LaplaceBase):
    r"""Projected Laplace [GGY22, Cor. 3.8/17]: :math:`A(x)+\Pi_{\mathcal N}e`, :math:`e\sim\mathrm{Lap}(b)^n`, :math:`b=\Delta_1(A)/\varepsilon`.

    ``privacy_map`` gives ε induced subspace DP w.r.t. C on the base relation.

    >>> m = ProjectedLaplace.calibrate(np.ones((1, 4)), 0.5)
    >>> m.privacy_map(Replace()).epsilon, round(m.scale, 6)
    (0.5, 4.0)
    """

    def sample(self, value: ArrayLike, *, rng: np.random.Generator, size: int | None = None) -> FloatArray:
        """``value + Pi_N e`` (see :meth:`ProjectedGaussian.sample`)."""
        v = check_query_value(value, self.subspace.dimension)
        e = rng.laplace(0.0, self.scale, (draw_count(size), v.size))
        return shape_draws(v + self.subspace.project(e), size)


@dataclass(frozen=True, eq=False)
class ExtendedLaplace(_LaplaceBase):
    r"""Extended Laplace [GGY22, Cor. 3.9/18]: :math:`A(x)+Q_{\mathcal N}w`.

    :math:`w\sim\mathrm{Lap}(b)^{n-r}`, :math:`b=\Delta_1(Q_{\mathcal N}^\top A)/\varepsilon`.

    :math:`\Delta_1(Q_{\mathcal N}^\top A)` depends on the basis (``numpy.linalg.svd``'s) and
    can exceed :math:`\Delta_1(A)` (T-G5): compare :meth:`expected_squared_error` with
    :class:`ProjectedLaplace` before choosing.
    """

    _extended: ClassVar[bool] = True

    def sample(self, value: ArrayLike, *, rng: np.random.Generator, size: int | None = None) -> FloatArray:
        """``value + Q_N w`` (see :meth:`ProjectedGaussian.sample`)."""
        v = check_query_value(value, self.subspace.dimension)
        q = self.subspace.null_basis
        w = rng.laplace(0.0, self.scale, (draw_count(size), q.shape[1]))
        return shape_draws(v + w @ q.T, size)


def query_in_subspace(sub: InvariantSubspace, query: ArrayLike) -> FloatArray:
    """The query matrix checked against the subspace dimension."""
    a = _as_matrix("query matrix", query)
    if a.shape[0] != sub.dimension:
        raise InvalidArgument(
            f"query matrix has {a.shape[0]} rows; the invariant matrix C has {sub.dimension} columns (they must match)."
        )
    return a


__all__ = [
    "ExtendedGaussian",
    "ExtendedLaplace",
    "InvariantSubspace",
    "ProjectedGaussian",
    "ProjectedLaplace",
    "c_eps_delta",
    "query_sensitivity",
]
