r"""The NTZ13 base decomposition behind GGY's subspace correlated Gaussian (AAAI-22 Alg 2/3, steps 1–4).

Reference ``docs/reference/subspace-integer-postprocessing.md`` §2.5 ([GGY22, Cor. 3.10/19], Thm 3.11/20,
after Nikolov, Talwar & Zhang 2013). Input: the sensitivity vectors
:math:`v_1,\dots,v_p\in\mathbb R^m` (rows of ``points``; they must span
:math:`\mathbb R^m`). Output: orthonormal pieces :math:`U_1,\dots,U_\ell`
(:math:`m\times n_i`), mutually orthogonal and spanning :math:`\mathbb R^m`, with radii
:math:`r_i\ge\max_j\|U_i^\top v_j\|_2`:

1. :math:`E=FB_2^{m'}`, the MVEE of :math:`\operatorname{conv}\{\pm v_j\}` in the current
   coordinates (:func:`~mechanisms.mvee.mvee` or :func:`~mechanisms.mvee.mvee_khachiyan`);
2. :math:`u_1,\dots,u_{m'}`, the left singular vectors of :math:`F`, singular values decreasing;
3. if :math:`m'=1` the current basis is the last piece; otherwise the piece is
   :math:`(u_i)_{i>m'/2}` (the small-singular-value half, :math:`\lceil m'/2\rceil` vectors) and
   the recursion continues on :math:`V=(u_i)_{i\le m'/2}` with the points
   :math:`V^\top v_j` (the MVEE is recomputed at every level), mapping its pieces back
   by :math:`V`;
4. :math:`r_i=\max_j\|U_i^\top v_j\|_2`, padded up by :data:`RADIUS_PAD`.

The dimension halves (rounded down) at each level, so there are
:math:`\lfloor\log_2m\rfloor+1\le k=\lceil1+\log_2m\rceil` pieces [D], with sizes
:math:`\lceil m/2\rceil,\lceil\lfloor m/2\rfloor/2\rceil,\dots,1` (e.g. 5 → (3, 1, 1),
8 → (4, 2, 1, 1)). Ties among singular values (e.g. a ball) make the split depend on
the solver's rounding; any split is valid, only the error changes.

**Whitening certificate** [D]. With :math:`S=\sqrt k\,[r_1U_1,\dots,r_\ell U_\ell]`
(square, invertible) and :math:`U=[U_1,\dots,U_\ell]` orthogonal,
:math:`\|S^{-1}v\|_2^2=\sum_i\|U_i^\top v\|_2^2/(kr_i^2)\le\ell/k\le1` for every
sensitivity vector :math:`v`. :class:`BaseDecomposition` re-checks this on the float
matrix :math:`S` itself with a certified upper bound (the same routine that certifies
MVEE containment), and raises :class:`~accountant.core.errors.VerificationError` if it
exceeds 1.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property
from typing import Literal, NamedTuple

import numpy as np
from numpy.typing import ArrayLike, NDArray

from semidp.accountant.core.arguments import check_int
from semidp.accountant.core.directed import pad_up
from semidp.accountant.core.errors import InvalidArgument, VerificationError
from semidp.mechanisms.mvee import (
    MAX_WORK,
    EnclosingEllipsoid,
    as_points,
    certified_max_mahalanobis,
    mvee,
    mvee_khachiyan,
)

FloatArray = NDArray[np.float64]

#: Relative pad on each radius r_i (keeps the certified whitened sensitivity <= 1 when l = k).
RADIUS_PAD = 1e-8
#: Tolerance on max |U^T U - I| for the concatenated pieces.
ORTHONORMAL_TOL = 1e-9


def ntz_log_factor(m: int) -> int:
    r""":math:`k=\lceil1+\log_2m\rceil` ([GGY22, Alg. 3] with the subspace dimension :math:`m`; reference §2.5), computed exactly.

    :math:`\lceil\log_2m\rceil` is ``(m - 1).bit_length()`` for integers :math:`m\ge1`.

    >>> [ntz_log_factor(m) for m in (1, 2, 3, 4, 5, 8, 9)]
    [1, 2, 3, 3, 4, 4, 5]
    """
    mm = check_int("m", m, minimum=1)
    return 1 + (mm - 1).bit_length()


class DecompositionPiece(NamedTuple):
    r"""One piece :math:`(U_i, r_i)` of the base decomposition ([GGY22, Alg. 3] steps 3–4)."""

    basis: FloatArray
    r""":math:`U_i`, ``(m, n_i)`` with orthonormal columns."""
    radius: float
    r""":math:`r_i\ge\max_j\|U_i^\top v_j\|_2` (float maximum padded up by :data:`RADIUS_PAD`)."""


@dataclass(frozen=True, eq=False)
class BaseDecomposition:
    r"""The pieces of [GGY22, Alg. 3] (NTZ13 base decomposition) for the points :math:`v_j`, with their certificate.

    Validated at construction: the pieces have the right shapes, their concatenation
    :math:`U` is orthogonal (to :data:`ORTHONORMAL_TOL`), :math:`\ell\le k`, every
    :math:`r_i` bounds the float projections, and the certified whitened sensitivity
    :math:`\max_j\|S^{-1}v_j\|_2` is at most 1 (else
    :class:`~accountant.core.errors.VerificationError`).
    """

    points: FloatArray
    """The ``(p, m)`` sensitivity vectors (the set is their ± closure)."""
    pieces: tuple[DecompositionPiece, ...]
    r""":math:`(U_1,r_1),\dots,(U_\ell,r_\ell)`, small-singular-value half of the top level first."""
    ellipsoids: tuple[EnclosingEllipsoid, ...]
    """The MVEE fitted at each level (``ellipsoids[0]`` is step 1 on all of R^m); for auditing."""

    def __post_init__(self) -> None:
        v = as_points(self.points)
        m = v.shape[1]
        if not self.pieces:
            raise InvalidArgument("pieces is empty: the decomposition needs at least one piece.")
        for i, (u, r) in enumerate(self.pieces):
            if u.ndim != 2 or u.shape[0] != m or u.shape[1] < 1:
                raise InvalidArgument(f"pieces[{i}].basis has shape {u.shape}; expected ({m}, n_i) with n_i >= 1.")
            if not (math.isfinite(r) and r > 0.0):
                raise InvalidArgument(f"pieces[{i}].radius={r!r} must be finite and > 0.")
            proj = float(np.max(np.linalg.norm(v @ u, axis=1)))
            if r < proj:
                raise InvalidArgument(
                    f"pieces[{i}].radius={r!r} is below max_j ||U_i^T v_j|| = {proj!r} (GGY Alg 3 step 4)."
                )
        full = self.basis
        if full.shape != (m, m):
            raise InvalidArgument(
                f"the pieces have {full.shape[1]} columns in total; they must span R^{m} (exactly {m} columns)."
            )
        dev = float(np.max(np.abs(full.T @ full - np.eye(m))))
        if not dev <= ORTHONORMAL_TOL:
            raise InvalidArgument(
                f"the pieces are not orthonormal and mutually orthogonal: max |U^T U - I| = {dev:.3g} "
                f"> {ORTHONORMAL_TOL}."
            )
        if len(self.pieces) > self.k:
            raise InvalidArgument(
                f"{len(self.pieces)} pieces exceed k = ceil(1 + log2 {m}) = {self.k}: the sqrt(k) scaling "
                "would not whiten the sensitivity set."
            )
        if not self.mahalanobis_sensitivity <= 1.0:
            raise VerificationError(
                f"the whitened sensitivity max_j ||S^-1 v_j|| is only certified <= {self.mahalanobis_sensitivity!r} "
                "> 1 (GGY Alg 3 privacy argument)."
            )

    @property
    def dimension(self) -> int:
        """m, the dimension of the space the points live in."""
        return int(self.points.shape[1])

    @property
    def k(self) -> int:
        r""":math:`k=\lceil1+\log_2m\rceil` (:func:`ntz_log_factor`), used even when fewer pieces arise."""
        return ntz_log_factor(self.dimension)

    @property
    def sizes(self) -> tuple[int, ...]:
        r""":math:`(n_1,\dots,n_\ell)`."""
        return tuple(int(u.shape[1]) for u, _ in self.pieces)

    @property
    def radii(self) -> tuple[float, ...]:
        r""":math:`(r_1,\dots,r_\ell)`."""
        return tuple(r for _, r in self.pieces)

    @cached_property
    def basis(self) -> FloatArray:
        r""":math:`U=[U_1,\dots,U_\ell]` (``m x m``, orthogonal)."""
        return np.ascontiguousarray(np.hstack([u for u, _ in self.pieces]))

    @cached_property
    def noise_factor(self) -> FloatArray:
        r""":math:`S=\sqrt k\,[r_1U_1,\dots,r_\ell U_\ell]` (``m x m``): the noise is :math:`cSw`, :math:`w\sim N(0,I_m)`."""
        out: FloatArray = math.sqrt(self.k) * np.hstack([r * u for u, r in self.pieces])
        return np.ascontiguousarray(out)

    @cached_property
    def mahalanobis_sensitivity(self) -> float:
        r"""Certified upper bound on :math:`\max_j\|S^{-1}v_j\|_2` (:math:`\le\sqrt{\ell/k}` in exact arithmetic)."""
        return certified_max_mahalanobis(self.noise_factor, self.points)

    @property
    def weighted_radius_sum(self) -> float:
        r""":math:`\sum_in_ir_i^2` (the error of Alg 3 is :math:`kc^2` times this)."""
        return float(sum(u.shape[1] * r * r for u, r in self.pieces))


def base_decomposition(
    points: ArrayLike,
    *,
    method: Literal["cvxpy", "khachiyan"] = "cvxpy",
    solver: str | None = None,
    max_work: float = MAX_WORK,
) -> BaseDecomposition:
    r"""Run [GGY22, Alg. 3] steps 1–4 (NTZ13 base decomposition) on the rows of ``points`` (module docstring).

    Parameters
    ----------
    points
        ``(p, m)`` sensitivity vectors spanning :math:`\mathbb R^m` (in :math:`\ker C`
        coordinates for the subspace version).
    method
        MVEE route at every level: ``"cvxpy"`` (:func:`~mechanisms.mvee.mvee`) or
        ``"khachiyan"`` (:func:`~mechanisms.mvee.mvee_khachiyan`).
    solver, max_work
        Passed to :func:`~mechanisms.mvee.mvee` (cvxpy route only).

    Returns
    -------
    BaseDecomposition
        Validated and certified (class docstring).

    Raises
    ------
    InvalidArgument
        Non-finite points or points not spanning :math:`\mathbb R^m` (from the MVEE), bad ``method``.
    SearchTooLarge
        The cvxpy MVEE is too large (use ``method="khachiyan"``).
    VerificationError
        The certified whitened sensitivity exceeds 1 (a bug, not an input error).

    Examples
    --------
    >>> d = base_decomposition(np.diag([1.0, 0.1, 0.01, 0.001]), method="khachiyan")
    >>> d.sizes, d.k, [round(r, 6) for r in d.radii]      # axes found by scale: {0.01, 0.001}, {0.1}, {1}
    ((2, 1, 1), 3, [0.01, 0.1, 1.0])
    >>> round(d.weighted_radius_sum, 6), d.mahalanobis_sensitivity <= 1.0
    (1.0102, True)
    """
    if method not in ("cvxpy", "khachiyan"):
        raise InvalidArgument(f"method={method!r} must be 'cvxpy' or 'khachiyan'.")
    v = as_points(points)
    m = v.shape[1]

    def fit(p: FloatArray) -> EnclosingEllipsoid:
        if method == "cvxpy":
            return mvee(p, solver=solver, max_work=max_work)
        return mvee_khachiyan(p)

    basis = np.eye(m)  # columns: an orthonormal basis of the current level, in R^m coordinates
    bases: list[FloatArray] = []
    ellipsoids: list[EnclosingEllipsoid] = []
    while True:
        dim = basis.shape[1]
        if dim == 1 and ellipsoids:  # step 3 base case (step 1 always runs once, at the top)
            bases.append(basis)
            break
        ell = fit(v @ basis)  # step 1: MVEE of the projected sensitivity set V^T v_j
        ellipsoids.append(ell)
        if dim == 1:
            bases.append(basis)
            break
        u = np.linalg.svd(ell.shape)[0]  # step 2: left singular vectors, singular values decreasing
        half = dim // 2  # V = (u_i)_{i <= dim/2}; the piece is (u_i)_{i > dim/2}
        bases.append(np.ascontiguousarray(basis @ u[:, half:]))
        basis = basis @ u[:, :half]
    pieces = tuple(
        DecompositionPiece(b, pad_up(float(np.max(np.linalg.norm(v @ b, axis=1))), rel=RADIUS_PAD))  # step 4
        for b in bases
    )
    return BaseDecomposition(v, pieces, tuple(ellipsoids))


__all__ = ["BaseDecomposition", "DecompositionPiece", "base_decomposition", "ntz_log_factor"]
