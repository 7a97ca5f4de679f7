r"""MVEE-based Gaussian mechanisms for a linear query under an invariant (Gao, Gong & Yu, AAAI-22, §3.3, Alg 3).

Reference ``docs/reference/subspace-integer-postprocessing.md`` §2.5 ([GGY22, Cor. 3.10/19], Thm 3.11/20,
Alg 2/3, after Nikolov, Talwar & Zhang 2013 = NTZ13). For a linear query :math:`A`
(``n x d`` on histograms) and an invariant :math:`C` on the query output, with
:math:`\mathcal N=\ker C`, orthonormal basis :math:`Q_{\mathcal N}` (``n x m``,
:math:`m=n-\operatorname{rank}C`) and the sensitivity vectors projected to
:math:`\mathcal N`-coordinates,

.. math::

    K_{\mathcal N}=\operatorname{conv}\{\pm Q_{\mathcal N}^\top A(h-h') : h\sim h'\}
    \quad(\text{Replace: }h-h'=e_a-e_b;\ \text{AddRemove: }\pm e_a),

two mechanisms release :math:`A(x)+Q_{\mathcal N}\,c\,Sw`, :math:`w\sim N(0,I_m)`,
:math:`c=c_{\varepsilon,\delta}` (Lemma 3.4/13), for a square invertible :math:`S` whose
*whitened sensitivity* :math:`\Delta_S=\max_{v\in K_{\mathcal N}}\|S^{-1}v\|_2` is
certified :math:`\le1`:

* :class:`EllipsoidGaussian` -- :math:`S=F`, the minimum-volume enclosing ellipsoid
  :math:`E=FB_2^m\supseteq K_{\mathcal N}` (:mod:`mechanisms.mvee`): **step 1 of GGY
  Alg 3 used on its own**;
* :class:`SubspaceCorrelatedGaussian` -- the full [GGY22, Alg. 3] (NTZ13's correlated
  Gaussian on :math:`A_{\mathcal N}=Q_{\mathcal N}^\top A`, extended):
  :math:`S=\sqrt k\,[r_1U_1,\dots,r_\ell U_\ell]` from the recursive base decomposition
  (:mod:`mechanisms.ntz_decomposition`), :math:`k=\lceil1+\log_2m\rceil`.

**Privacy** [D, whitening]. :math:`S^{-1}Q_{\mathcal N}^\top Ah+cw` is the Gaussian
mechanism with :math:`\ell_2`-sensitivity :math:`\Delta_S\le1` and noise :math:`c`, hence
:math:`(\varepsilon,\delta)`-DP for :math:`\varepsilon,\delta\in(0,1)` (Lemma 3.4/13);
multiplying by :math:`Q_{\mathcal N}S` is post-processing, and adding
:math:`\Pi_{\mathcal R}Ah` gives :math:`(\varepsilon,\delta)`-induced subspace DP w.r.t. C
(extension framework, Thm 3.3/12), since
:math:`Q_{\mathcal N}Q_{\mathcal N}^\top Ah+\Pi_{\mathcal R}Ah=Ah`. A relation of distance k
scales the sensitivity vectors by k (triangle inequality). :math:`\Delta_S` is
certified on the float :math:`S` that the sampler uses (residual-based bound, padded
up; :func:`mechanisms.mvee.certified_max_mahalanobis`); the sensitivity vectors and
:math:`Q_{\mathcal N}S` are float computations, as everywhere in :mod:`mechanisms.subspace`.

**Errors** [D]. Ellipsoid: :math:`c^2\operatorname{tr}FF^\top`; at the exact MVEE
:math:`FF^\top=mW(u^*)` for optimal design weights :math:`u^*`, so it never exceeds
:class:`~mechanisms.subspace.ExtendedGaussian`'s :math:`mc^2\max_j\|v_j\|^2` (up to the
solver's certified ``log_det_gap``). Alg 3: :math:`kc^2\sum_in_ir_i^2`; since
:math:`\sum_ir_i^2\ge\|v\|^2` for every :math:`v` and :math:`\sum_in_ir_i^2\le m\max_j\|v_j\|^2`,
it lies between :math:`k/m` and :math:`k` times ExtendedGaussian's. Neither of the two
dominates the other: the factor :math:`k` makes Alg 3 worse on small symmetric sets
(``C = 1^T``: the MVEE is a ball), while Alg 3 wins when the MVEE's volume is
spread over many long but nearly parallel directions (``tests/test_correlated_gaussian.py``
has both). Only Alg 3 carries the :math:`O(\log^2(n-n_c)\log(1/\delta))` near-optimality
ratio of Thm 3.11/20 (for small ε and δ small w.r.t. ε; not re-proved here).

The guarantee is :math:`(\varepsilon,\delta)` **induced subspace DP w.r.t. C**
(Def 2.6/6), carried as :class:`~accountant.guarantees.definitions.ApproxDP` with the
:class:`~accountant.guarantees.relations.Subspace` relation; not DP of the joint release.
Samplers are for research and auditing, not hardened against floating-point
side channels.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from typing import ClassVar, Literal, Self, TypeVar

import numpy as np
from numpy.typing import ArrayLike, NDArray

from semidp.accountant.core.arguments import check_positive
from semidp.accountant.core.directed import MP, up
from semidp.accountant.core.errors import InvalidArgument, SearchTooLarge
from semidp.accountant.guarantees.relations import AddRemove, Relation, Replace
from semidp.mechanisms.mvee import MAX_WORK, EnclosingEllipsoid, mvee, mvee_khachiyan
from semidp.mechanisms.ntz_decomposition import BaseDecomposition, DecompositionPiece, base_decomposition
from semidp.mechanisms.subspace import (
    ZERO_SENSITIVITY_TOL,
    InvariantSubspace,
    SubspaceApproxDP,
    c_eps_delta,
    check_query_value,
    draw_count,
    query_in_subspace,
    require_noise_dimension,
    shape_draws,
)

FloatArray = NDArray[np.float64]
_T = TypeVar("_T")

#: Refusal limit on the number of enumerated sensitivity vectors.
MAX_SENSITIVITY_VECTORS = 2_000_000


def subspace_sensitivity_vectors(
    subspace: InvariantSubspace, query: ArrayLike | None = None, relation: Relation | None = None
) -> FloatArray:
    r"""Rows :math:`k\,Q_{\mathcal N}^\top A(h-h')` spanning :math:`K_{\mathcal N}` (GGY §3.3; reference §1 "Sensitivity").

    Replace(k): :math:`k\,Q_{\mathcal N}^\top A(e_a-e_b)`, :math:`a<b` (GGY's bounded DP);
    AddRemove(k): :math:`k\,Q_{\mathcal N}^\top Ae_a`. Only one of each :math:`\pm` pair is
    listed; vectors of norm :math:`\le` ``ZERO_SENSITIVITY_TOL`` times the largest
    full-query difference are dropped as rounding noise (they do not move in
    :math:`\ker C`).

    Returns
    -------
    numpy.ndarray
        ``(p, m)`` with :math:`m=\dim\ker C`; ``p`` may be 0.
    """
    rel = relation if relation is not None else Replace()
    a = np.eye(subspace.dimension) if query is None else query_in_subspace(subspace, query)
    d = a.shape[1]
    if isinstance(rel, Replace):
        if d < 2:
            raise InvalidArgument(f"the histogram has d={d} cell(s); replace-one neighbours need d >= 2.")
        count = d * (d - 1) // 2
        if count > MAX_SENSITIVITY_VECTORS:
            raise SearchTooLarge("replace-one sensitivity vectors e_a - e_b", count, MAX_SENSITIVITY_VECTORS)
        i, j = np.triu_indices(d, 1)
        full = (a[:, i] - a[:, j]).T
    elif isinstance(rel, AddRemove):
        full = a.T
    else:
        raise InvalidArgument(
            f"relation={rel!r} is not supported: GGY's subspace DP is stated for bounded (Replace) "
            "neighbours; AddRemove is also accepted."
        )
    scale = float(rel.distance)
    proj = scale * (full @ subspace.null_basis)
    top = scale * float(np.max(np.linalg.norm(full, axis=1))) if full.size else 0.0
    keep = np.linalg.norm(proj, axis=1) > ZERO_SENSITIVITY_TOL * top
    out: FloatArray = np.ascontiguousarray(proj[keep])
    return out


def _calibration_setup(
    constraint: ArrayLike,
    epsilon: float,
    delta: float,
    query: ArrayLike | None,
    relation: Relation | None,
    method: str,
) -> tuple[InvariantSubspace, FloatArray, float, Relation]:
    """Checked (subspace, sensitivity vectors, c_eps_delta, relation) shared by both calibrations."""
    if method not in ("cvxpy", "khachiyan"):
        raise InvalidArgument(f"method={method!r} must be 'cvxpy' or 'khachiyan'.")
    rel = relation if relation is not None else Replace()
    sigma = c_eps_delta(epsilon, delta)
    sub = InvariantSubspace.of(constraint)
    vectors = subspace_sensitivity_vectors(sub, query, rel)
    if vectors.shape[0] == 0:
        require_noise_dimension(0.0, 1.0, "the largest projected sensitivity vector Q_N^T A(h - h')")
    return sub, vectors, sigma, rel


def _spanning(sub: InvariantSubspace, build: Callable[[], _T]) -> _T:
    """Run an MVEE-based ``build``, rephrasing a flat sensitivity set as 'do not span ker C'."""
    try:
        return build()
    except SearchTooLarge:
        raise
    except InvalidArgument as err:
        if "span a subspace of rank" in str(err):
            raise InvalidArgument(
                f"the query's sensitivity vectors do not span ker C (dim {sub.null_dimension}): {err} "
                "Directions of ker C that no neighbouring pair moves could be added to the invariant C."
            ) from err
        raise


@dataclass(frozen=True, eq=False)
class _WhitenedGaussian(SubspaceApproxDP):
    r"""Shared part of the mechanisms :math:`A(x)+Q_{\mathcal N}\,\sigma Sw` (module docstring).

    A subclass adds the field holding its whitening :math:`S` and the base ``relation``
    (in that order), and provides :attr:`_factor` (:math:`S`), :attr:`sensitivity`,
    :meth:`_fit` and ``expected_squared_error``.
    """

    subspace: InvariantSubspace
    epsilon: float
    delta: float
    sigma: float
    """c_eps_delta (rounded up): the standard deviation of each coordinate of the white noise (e, or every w_i)."""

    _factor_name: ClassVar[str]
    """The whitening field's name in error messages."""
    _sensitivity_name: ClassVar[str]
    """The sensitivity's name in error messages."""

    def __post_init__(self) -> None:
        check_positive("sigma", self.sigma)
        m = self.subspace.null_dimension
        dimension = int(self._factor.shape[0])
        if dimension != m:
            raise InvalidArgument(
                f"the {self._factor_name} has dimension {dimension}; dim ker C = {m} (they must match)."
            )
        need = up(MP.mpf(c_eps_delta(self.epsilon, self.delta)) * MP.mpf(self.sensitivity))
        if self.sigma < need:
            raise InvalidArgument(
                f"sigma={self.sigma!r} is below c_eps_delta * {self._sensitivity_name} = {need!r} needed for "
                f"(epsilon, delta)=({self.epsilon!r}, {self.delta!r})."
            )

    @classmethod
    def calibrate(
        cls,
        constraint: ArrayLike,
        epsilon: float,
        delta: float,
        *,
        query: ArrayLike | None = None,
        relation: Relation | None = None,
        method: Literal["cvxpy", "khachiyan"] = "cvxpy",
        solver: str | None = None,
        max_work: float = MAX_WORK,
    ) -> Self:
        r"""Fit the whitening :math:`S` and calibrate to (ε, δ) with ε, δ in (0, 1) (Lemma 3.4/13).

        :class:`EllipsoidGaussian` fits the MVEE (:math:`S=F`);
        :class:`SubspaceCorrelatedGaussian` runs [GGY22, Alg. 3] steps 1–4
        (:func:`~mechanisms.ntz_decomposition.base_decomposition`).

        Parameters
        ----------
        constraint
            C (``n_c x n``, on the query output).
        epsilon, delta
            Target; :func:`~mechanisms.subspace.c_eps_delta` refuses ε ≥ 1.
        query
            ``n x d`` query matrix (default identity = histogram query).
        relation
            Base relation (default ``Replace()``, GGY's bounded DP).
        method
            ``"cvxpy"`` (:func:`~mechanisms.mvee.mvee`) or ``"khachiyan"``
            (:func:`~mechanisms.mvee.mvee_khachiyan`, for larger point sets); Alg 3 uses it
            for the MVEE at every recursion level.
        solver, max_work
            Passed to :func:`~mechanisms.mvee.mvee` (cvxpy route only).

        Raises
        ------
        InvalidArgument
            Bad ε/δ/C/query; nothing moves in ker C; the sensitivity vectors do not
            span ker C (names the rank: the MVEE would be flat).
        SearchTooLarge
            Too many sensitivity vectors for the chosen route.
        VerificationError
            Alg 3 only: the certified whitened sensitivity exceeded 1 (a bug, not an input error).
        """
        sub, vectors, sigma, rel = _calibration_setup(constraint, epsilon, delta, query, relation, method)
        fitted = _spanning(sub, lambda: cls._fit(vectors, method, solver, max_work))
        new: Callable[..., Self] = cls  # the subclass's fields: (subspace, epsilon, delta, sigma, <fitted>, relation)
        return new(sub, epsilon, delta, sigma, fitted, rel)

    @classmethod
    def _fit(
        cls, vectors: FloatArray, method: Literal["cvxpy", "khachiyan"], solver: str | None, max_work: float
    ) -> object:
        """The whitening object fitted to the sensitivity vectors (the subclass's field after ``sigma``)."""
        raise NotImplementedError  # pragma: no cover - both subclasses override it

    @property
    def _factor(self) -> FloatArray:
        r""":math:`S` (``m x m``): the noise in :math:`\ker C` coordinates is :math:`\sigma Sw`."""
        raise NotImplementedError  # pragma: no cover - both subclasses override it

    @property
    def sensitivity(self) -> float:
        r"""Certified whitened sensitivity :math:`\max_j\|S^{-1}v_j\|_2\le1`."""
        raise NotImplementedError  # pragma: no cover - both subclasses override it

    @cached_property
    def noise_map(self) -> FloatArray:
        r""":math:`Q_{\mathcal N}S` (``n x m``): the noise is ``sigma * noise_map @ w``."""
        out: FloatArray = np.ascontiguousarray(self.subspace.null_basis @ self._factor)
        return out

    def covariance(self) -> FloatArray:
        r""":math:`\sigma^2Q_{\mathcal N}SS^\top Q_{\mathcal N}^\top` (``n x n``, rank m)."""
        q = self.noise_map
        out: FloatArray = self.sigma**2 * (q @ q.T)
        return out

    def marginal_variances(self) -> FloatArray:
        r"""Diagonal of :meth:`covariance`."""
        out: FloatArray = self.sigma**2 * np.sum(self.noise_map**2, axis=1)
        return out

    def sample(self, value: ArrayLike, *, rng: np.random.Generator, size: int | None = None) -> FloatArray:
        """``value + Q_N S (sigma w)``; ``value`` is the query value A(x) (shape ``(n,)``); ``size`` draws stack on a new first axis.

        Additive: the noise is drawn from ``rng`` alone, independently of ``value``.
        """
        v = check_query_value(value, self.subspace.dimension)
        q = self.noise_map
        e = self.sigma * rng.standard_normal((draw_count(size), q.shape[1]))
        return shape_draws(v + e @ q.T, size)


@dataclass(frozen=True, eq=False)
class EllipsoidGaussian(_WhitenedGaussian):
    r"""MVEE-whitened subspace Gaussian: **step 1 of GGY AAAI-22 Alg 3 used on its own** (reference §2.5).

    Releases :math:`A(x)+Q_{\mathcal N}Fe`, :math:`e\sim N(0,\sigma^2I_m)`,
    :math:`\sigma=c_{\varepsilon,\delta}`, where :math:`FB_2^m` is the MVEE of the
    sensitivity set in :math:`\ker C` coordinates. Privacy (whitening): the
    Mahalanobis sensitivity :math:`\Delta_F=\max_{h\sim h'}\|F^{-1}Q_{\mathcal N}^\top A(h-h')\|_2\le1`
    is certified (containment in the MVEE), so :math:`F^{-1}Q_{\mathcal N}^\top Ah+e` is
    :math:`(\varepsilon,\delta)`-DP (Lemma 3.4/13); :math:`Q_{\mathcal N}F\cdot` is
    post-processing and the extension (Thm 3.3/12) gives induced subspace DP. It
    skips Alg 3's decomposition (steps 2–5: no :math:`\sqrt k` factor), so the
    near-optimality ratio of Thm 3.11/20 is **not** claimed for it; its error
    :math:`c^2\operatorname{tr}FF^\top` never exceeds ExtendedGaussian's (module
    docstring). ``privacy_map`` gives (ε, δ) induced subspace DP w.r.t. C on the base
    relation, not DP of the joint release. The full algorithm is
    :class:`SubspaceCorrelatedGaussian`.

    >>> m = EllipsoidGaussian.calibrate(np.ones((1, 4)), 0.5, 1e-6, relation=AddRemove())
    >>> bool(np.allclose(m.shape, np.sqrt(3 / 4) * np.eye(3), atol=1e-5))   # symmetric: a ball
    True
    >>> y = m.sample(np.array([1.0, 2.0, 3.0, 4.0]), rng=np.random.default_rng(0))
    >>> bool(abs(y.sum() - 10.0) < 1e-9)
    True
    """

    ellipsoid: EnclosingEllipsoid
    r"""The MVEE :math:`FB_2^m` of the projected sensitivity vectors (certified enclosing)."""
    relation: Relation
    """The base relation (Replace or AddRemove) the sensitivity vectors were built for."""

    _factor_name: ClassVar[str] = "ellipsoid"
    _sensitivity_name: ClassVar[str] = "Mahalanobis sensitivity"

    @classmethod
    def _fit(
        cls, vectors: FloatArray, method: Literal["cvxpy", "khachiyan"], solver: str | None, max_work: float
    ) -> EnclosingEllipsoid:
        """The MVEE of the sensitivity vectors ([GGY22, Alg. 3] step 1)."""
        if method == "cvxpy":
            return mvee(vectors, solver=solver, max_work=max_work)
        return mvee_khachiyan(vectors)

    @property
    def shape(self) -> FloatArray:
        r"""F (``m x m``): the noise in :math:`\ker C` coordinates is :math:`Fe`."""
        return self.ellipsoid.shape

    @property
    def sensitivity(self) -> float:
        r"""Certified Mahalanobis sensitivity :math:`\Delta_F=\max_j\|F^{-1}v_j\|_2\le1`."""
        return self.ellipsoid.max_mahalanobis

    @property
    def _factor(self) -> FloatArray:
        """S = F."""
        return self.ellipsoid.shape

    def expected_squared_error(self) -> float:
        r""":math:`\mathbb E\|\mathcal M(x)-A(x)\|_2^2=\sigma^2\operatorname{tr}(FF^\top)` (exact; :math:`Q_{\mathcal N}` orthonormal)."""
        return float(self.sigma**2 * np.sum(self.shape**2))


@dataclass(frozen=True, eq=False)
class SubspaceCorrelatedGaussian(_WhitenedGaussian):
    r"""Subspace correlated Gaussian, the full GGY AAAI-22 Alg 3 (NTZ13 on :math:`Q_{\mathcal N}^\top A`; Cor 3.10/19, Thm 3.11/20).

    Steps (reference §2.5): (1) MVEE :math:`E=FB_2^m` of the sensitivity set of
    :math:`A_{\mathcal N}=Q_{\mathcal N}^\top A` (for replace-one the sensitivity vectors
    are the differences :math:`A_{\mathcal N}(e_a-e_b)`, :func:`subspace_sensitivity_vectors`);
    (2) left singular vectors of :math:`F`, decreasing; (3) recursive base
    decomposition: the small-singular-value half is a piece, recurse on the large half
    :math:`V` with the MVEE of :math:`V^\top v_j` recomputed, map back by :math:`V`;
    (4) :math:`r_i=\max_j\|U_i^\top v_j\|_2` (rounded up) over the *sensitivity vectors*
    (GGY write the columns :math:`a_j`, which is the add/remove set; taking the
    sensitivity vectors makes replace-one correct), :math:`w_i\sim N(0,c^2I_{n_i})`;
    (5) release :math:`A(x)+Q_{\mathcal N}\sqrt k\sum_ir_iU_iw_i`, :math:`k=\lceil1+\log_2m\rceil`
    even when fewer pieces arise (conservative). Steps 1–4 are
    :func:`~mechanisms.ntz_decomposition.base_decomposition`.

    **Privacy.** The noise covariance in :math:`\ker C` coordinates is
    :math:`c^2k\sum_ir_i^2U_iU_i^\top=c^2SS^\top`, :math:`S=\sqrt k\,[r_1U_1,\dots,r_\ell U_\ell]`.
    The pieces are orthonormal, mutually orthogonal and span :math:`\mathbb R^m`, so for
    every sensitivity vector :math:`v`

    .. math:: \|S^{-1}v\|_2^2=\sum_{i=1}^{\ell}\frac{\|U_i^\top v\|_2^2}{k\,r_i^2}\le\frac{\ell}{k}\le1 .

    Hence :math:`S^{-1}A_{\mathcal N}h+cw` is the Gaussian mechanism with
    :math:`\ell_2`-sensitivity :math:`\le1` and noise :math:`c_{\varepsilon,\delta}`, so
    :math:`(\varepsilon,\delta)`-DP (Lemma 3.4/13, ε, δ in (0, 1)); multiplying by
    :math:`Q_{\mathcal N}S` is post-processing, and adding :math:`\Pi_{\mathcal R}Ah` gives
    :math:`(\varepsilon,\delta)` induced subspace DP w.r.t. C (Thm 3.3/12). The bound
    :math:`\max_j\|S^{-1}v_j\|_2\le1` is re-checked at construction on the float
    :math:`S` with a certified upper bound (``VerificationError`` otherwise).
    ``privacy_map`` gives (ε, δ) induced subspace DP w.r.t. C on the base relation,
    not DP of the joint release.

    **Error** (exact): :math:`\mathbb E\|\mathcal M(x)-A(x)\|_2^2=kc^2\sum_in_ir_i^2`.

    >>> m = SubspaceCorrelatedGaussian.calibrate(np.ones((1, 4)), 0.5, 1e-6, relation=AddRemove())
    >>> m.k, [u.shape[1] for u, r in m.pieces], m.sensitivity <= 1.0    # m = 3: k = ceil(1 + log2 3)
    (3, [2, 1], True)
    >>> y = m.sample(np.array([1.0, 2.0, 3.0, 4.0]), rng=np.random.default_rng(0))
    >>> bool(abs(y.sum() - 10.0) < 1e-9)
    True
    """

    decomposition: BaseDecomposition
    r"""Steps 1–4 on the sensitivity vectors in :math:`\ker C` coordinates (validated and certified)."""
    relation: Relation
    """The base relation (Replace or AddRemove) the sensitivity vectors were built for."""

    _factor_name: ClassVar[str] = "decomposition"
    _sensitivity_name: ClassVar[str] = "whitened sensitivity"

    @classmethod
    def _fit(
        cls, vectors: FloatArray, method: Literal["cvxpy", "khachiyan"], solver: str | None, max_work: float
    ) -> BaseDecomposition:
        """[GGY22, Alg. 3] steps 1–4 on the sensitivity vectors; the MVEE ``method`` at every recursion level."""
        return base_decomposition(vectors, method=method, solver=solver, max_work=max_work)

    @property
    def k(self) -> int:
        r""":math:`k=\lceil1+\log_2m\rceil`, :math:`m=\dim\ker C`."""
        return self.decomposition.k

    @property
    def pieces(self) -> tuple[DecompositionPiece, ...]:
        r"""The pieces :math:`(U_i, r_i)` in :math:`\ker C` coordinates (the noise in :math:`\mathbb R^n` uses :math:`Q_{\mathcal N}U_i`)."""
        return self.decomposition.pieces

    @property
    def sensitivity(self) -> float:
        r"""Certified whitened sensitivity :math:`\max_j\|S^{-1}v_j\|_2\le1`."""
        return self.decomposition.mahalanobis_sensitivity

    @property
    def _factor(self) -> FloatArray:
        r""":math:`S=\sqrt k\,[r_1U_1,\dots,r_\ell U_\ell]`."""
        return self.decomposition.noise_factor

    def expected_squared_error(self) -> float:
        r""":math:`\mathbb E\|\mathcal M(x)-A(x)\|_2^2=k\sigma^2\sum_in_ir_i^2` (exact; the pieces and :math:`Q_{\mathcal N}` are orthonormal)."""
        return float(self.k * self.sigma**2 * self.decomposition.weighted_radius_sum)


__all__ = ["EllipsoidGaussian", "SubspaceCorrelatedGaussian", "subspace_sensitivity_vectors"]
