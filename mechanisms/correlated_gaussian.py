r"""Subspace correlated Gaussian mechanism for a linear query (Gao, Gong & Yu, AAAI-22, §3.3).

Reference ``subspace-integer-postprocessing.md`` §2.5 (GGY Cor 3.10/19, Thm 3.11/20,
Alg 2/3). For a linear query :math:`A` (``n x d`` on histograms) and an invariant
:math:`C` on the query output, with :math:`\mathcal N=\ker C`, orthonormal basis
:math:`Q_{\mathcal N}` (``n x m``, :math:`m=n-\operatorname{rank}C`) and the
sensitivity vectors projected to :math:`\mathcal N`-coordinates,

.. math::

    K_{\mathcal N}=\operatorname{conv}\{\pm Q_{\mathcal N}^\top A(h-h') : h\sim h'\}
    \quad(\text{Replace: }h-h'=e_a-e_b;\ \text{AddRemove: }\pm e_a),

let :math:`E=FB_2^m\supseteq K_{\mathcal N}` be its minimum-volume enclosing
ellipsoid (:mod:`mechanisms.mvee`; certified containment). The mechanism releases

.. math:: \mathcal M(x)=A(x)+Q_{\mathcal N}Fe,\qquad e\sim N(0,\sigma^2I_m),\quad\sigma=c_{\varepsilon,\delta}.

**Privacy** [D, whitening]. The Mahalanobis sensitivity
:math:`\Delta_F=\sup_{h\sim h'}\|F^{-1}Q_{\mathcal N}^\top A(h-h')\|_2\le1` (certified;
a relation of distance k scales the vectors by k, a triangle-inequality bound).
So :math:`F^{-1}Q_{\mathcal N}^\top Ah+e` is the Gaussian mechanism with
:math:`\ell_2`-sensitivity :math:`\le1` and noise :math:`c_{\varepsilon,\delta}`, hence
:math:`(\varepsilon,\delta)`-DP for :math:`\varepsilon,\delta\in(0,1)` (Lemma 3.4/13);
multiplying by :math:`F` is post-processing, and adding
:math:`\Pi_{\mathcal R}Ah` gives :math:`(\varepsilon,\delta)`-induced subspace DP w.r.t. C
(extension framework, Thm 3.3/12), since
:math:`Q_{\mathcal N}Q_{\mathcal N}^\top Ah+\Pi_{\mathcal R}Ah=Ah`.

**Scope (read before citing Thm 3.11/20).** This is step 1 of GGY's Alg 3 (the
MVEE) followed by Gaussian noise shaped by the ellipsoid. It is **not** the full
NTZ13 recursive decomposition of Alg 2/3 (steps 2–5: halving the singular
spectrum, :math:`\sqrt{k}\,r_iU_iw_i` pieces), so the
:math:`O(\log^2(n-n_c)\log(1/\delta))` near-optimality ratio of Thm 3.11/20 is not
claimed for it. What holds [D]: at the exact MVEE, :math:`FF^\top=mW(u^*)` for
optimal design weights :math:`u^*`, so
:math:`\operatorname{tr}FF^\top=m\sum_ju^*_j\|v_j\|^2\le m\max_j\|v_j\|^2`: the
error never exceeds :class:`~mechanisms.subspace.ExtendedGaussian`'s
(:math:`m c^2\Delta_2(Q_{\mathcal N}^\top A)^2`), with equality when every support
point has maximal norm (e.g. :math:`C=\mathbf 1^\top`, identity query), up to the
solver's certified ``log_det_gap``.

The guarantee is :math:`(\varepsilon,\delta)` **induced subspace DP w.r.t. C**
(Def 2.6/6), carried as :class:`~accountant.guarantees.ApproxDP` with the
:class:`~accountant.relations.Subspace` relation; not DP of the joint release.
Samplers are for research and auditing, not hardened against floating-point
side channels.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from functools import cached_property
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

from accountant.arguments import check_positive
from accountant.directed import MP, up
from accountant.errors import InvalidArgument, SearchTooLarge
from accountant.guarantees import ApproxDP
from accountant.relations import AddRemove, Relation, Replace, check_same_relation
from mechanisms.mvee import MAX_WORK, EnclosingEllipsoid, mvee, mvee_khachiyan
from mechanisms.subspace import (
    ZERO_SENSITIVITY_TOL,
    InvariantSubspace,
    _check_value,
    _draws,
    _query_for,
    _require_noise_dimension,
    _shape,
    _subspace_relation,
    c_eps_delta,
)

FloatArray = NDArray[np.float64]

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
    a = np.eye(subspace.dimension) if query is None else _query_for(subspace, query)
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


@dataclass(frozen=True, eq=False)
class SubspaceCorrelatedGaussian:
    r"""Subspace correlated Gaussian (GGY AAAI-22 Alg 3 step 1 + ellipsoid-shaped Gaussian; reference §2.5).

    Releases :math:`A(x)+Q_{\mathcal N}Fe`, :math:`e\sim N(0,\sigma^2I_m)`,
    :math:`\sigma=c_{\varepsilon,\delta}`, where :math:`FB_2^m` is the MVEE of the
    sensitivity set in :math:`\ker C` coordinates (module docstring: privacy proof,
    and why this is not the full NTZ13 recursion). ``privacy_map`` gives
    (ε, δ) induced subspace DP w.r.t. C on the base relation, not DP of the
    joint release.

    >>> m = SubspaceCorrelatedGaussian.calibrate(np.ones((1, 4)), 0.5, 1e-6, relation=AddRemove())
    >>> bool(np.allclose(m.shape, np.sqrt(3 / 4) * np.eye(3), atol=1e-5))   # symmetric: a ball
    True
    >>> y = m.sample(np.array([1.0, 2.0, 3.0, 4.0]), rng=np.random.default_rng(0))
    >>> bool(abs(y.sum() - 10.0) < 1e-9)
    True
    """

    subspace: InvariantSubspace
    epsilon: float
    delta: float
    sigma: float
    """Standard deviation of each coordinate of e (c_eps_delta, rounded up)."""
    ellipsoid: EnclosingEllipsoid
    r"""The MVEE :math:`FB_2^m` of the projected sensitivity vectors (certified enclosing)."""
    relation: Relation
    """The base relation (Replace or AddRemove) the sensitivity vectors were built for."""

    def __post_init__(self) -> None:
        check_positive("sigma", self.sigma)
        m = self.subspace.null_dimension
        if self.ellipsoid.dimension != m:
            raise InvalidArgument(
                f"the ellipsoid has dimension {self.ellipsoid.dimension}; dim ker C = {m} (they must match)."
            )
        need = up(MP.mpf(c_eps_delta(self.epsilon, self.delta)) * MP.mpf(self.sensitivity))
        if self.sigma < need:
            raise InvalidArgument(
                f"sigma={self.sigma!r} is below c_eps_delta * Mahalanobis sensitivity = {need!r} needed for "
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
    ) -> SubspaceCorrelatedGaussian:
        r"""Fit the MVEE and calibrate to (ε, δ) with ε, δ in (0, 1) (Lemma 3.4/13).

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
            (:func:`~mechanisms.mvee.mvee_khachiyan`, for larger point sets).
        solver, max_work
            Passed to :func:`~mechanisms.mvee.mvee` (cvxpy route only).

        Raises
        ------
        InvalidArgument
            Bad ε/δ/C/query; nothing moves in ker C; the sensitivity vectors do not
            span ker C (names the rank: the MVEE would be flat).
        SearchTooLarge
            Too many sensitivity vectors for the chosen route.
        """
        if method not in ("cvxpy", "khachiyan"):
            raise InvalidArgument(f"method={method!r} must be 'cvxpy' or 'khachiyan'.")
        rel = relation if relation is not None else Replace()
        sigma = c_eps_delta(epsilon, delta)
        sub = InvariantSubspace.of(constraint)
        vectors = subspace_sensitivity_vectors(sub, query, rel)
        if vectors.shape[0] == 0:
            _require_noise_dimension(0.0, 1.0, "the largest projected sensitivity vector Q_N^T A(h - h')")
        try:
            if method == "cvxpy":
                ell = mvee(vectors, solver=solver, max_work=max_work)
            else:
                ell = mvee_khachiyan(vectors)
        except SearchTooLarge:
            raise
        except InvalidArgument as err:
            if "span a subspace of rank" in str(err):
                raise InvalidArgument(
                    f"the query's sensitivity vectors do not span ker C (dim {sub.null_dimension}): {err} "
                    "Directions of ker C that no neighbouring pair moves could be added to the invariant C."
                ) from err
            raise
        return cls(sub, epsilon, delta, sigma, ell, rel)

    @property
    def shape(self) -> FloatArray:
        r"""F (``m x m``): the noise in :math:`\ker C` coordinates is :math:`Fe`."""
        return self.ellipsoid.shape

    @property
    def sensitivity(self) -> float:
        r"""Certified Mahalanobis sensitivity :math:`\Delta_F=\max_j\|F^{-1}v_j\|_2\le1`."""
        return self.ellipsoid.max_mahalanobis

    @cached_property
    def noise_map(self) -> FloatArray:
        r""":math:`Q_{\mathcal N}F` (``n x m``): the noise is ``noise_map @ e``."""
        out: FloatArray = np.ascontiguousarray(self.subspace.null_basis @ self.shape)
        return out

    def privacy_map(self, relation: Relation) -> ApproxDP:
        r"""(ε, δ) **induced subspace DP w.r.t. C** (GGY Def 2.6/6) on ``relation`` (the base relation).

        Not DP of the joint release: the row(C) components are exact.
        """
        check_same_relation(self.relation, relation)
        return ApproxDP(self.epsilon, self.delta, _subspace_relation(self.relation, self.subspace))

    def check(self, relation: Relation, target: ApproxDP) -> bool:
        """True if the (subspace) guarantee implies ``target`` (read as subspace DP w.r.t. the same C)."""
        g = self.privacy_map(relation)
        return g.dominates(dataclasses.replace(target, relation=g.relation))

    def covariance(self) -> FloatArray:
        r""":math:`\sigma^2Q_{\mathcal N}FF^\top Q_{\mathcal N}^\top`."""
        q = self.noise_map
        out: FloatArray = self.sigma**2 * (q @ q.T)
        return out

    def marginal_variances(self) -> FloatArray:
        r"""Diagonal of :meth:`covariance`."""
        out: FloatArray = self.sigma**2 * np.sum(self.noise_map**2, axis=1)
        return out

    def expected_squared_error(self) -> float:
        r""":math:`\mathbb E\|\mathcal M(x)-A(x)\|_2^2=\sigma^2\operatorname{tr}(FF^\top)` (exact; :math:`Q_{\mathcal N}` orthonormal)."""
        return float(self.sigma**2 * np.sum(self.shape**2))

    def sample(self, value: ArrayLike, *, rng: np.random.Generator, size: int | None = None) -> FloatArray:
        """``value + Q_N F e``; ``value`` is the query value A(x) (shape ``(n,)``); ``size`` draws stack on a new first axis.

        Additive: the noise is drawn from ``rng`` alone, independently of ``value``.
        """
        v = _check_value(value, self.subspace.dimension)
        q = self.noise_map
        e = self.sigma * rng.standard_normal((_draws(size), q.shape[1]))
        return _shape(v + e @ q.T, size)


__all__ = ["SubspaceCorrelatedGaussian", "subspace_sensitivity_vectors"]
