r"""Coordinates in an orthonormal basis :math:`Q` of a subspace :math:`V=\operatorname{span}(S)`.

Shared by every object that lives in :math:`V` ([CA24, Lemma 29]: a
K-norm ball of a rank-deficient sensitivity space is a ball *in* span(S)):
:class:`accountant.geometry.knorm.KNormBall`, :class:`accountant.geometry.containing_ball.ContainingBall`,
:class:`accountant.geometry.root_polytope.RootPolytopeBall` and
:class:`mechanisms.projected_gaussian.ProjectedGaussianMechanism`. Convention:
``y = Q^T x`` for :math:`x\in V`, ``x = Q y`` back.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from semidp.accountant.core.errors import InvalidArgument

FloatArray = NDArray[np.float64]

#: Relative residual :math:`\|x-QQ^\top x\|/\max(\|x\|,1)` above which a vector is not in span(Q).
SPAN_RTOL = 1e-9

__all__ = ["SPAN_RTOL", "SpanCoordinates", "to_coordinates"]


def to_coordinates(q: FloatArray, x: ArrayLike) -> FloatArray:
    """``Q^T x`` for the rows of ``x``, after checking each lies in span(Q).

    Raises
    ------
    InvalidArgument
        Wrong length, or a vector is not in span(Q) (relative residual above :data:`SPAN_RTOL`):
        adding it to a release would change the invariant.
    """
    arr = np.asarray(x, dtype=np.float64)
    if arr.shape[-1] != q.shape[0]:
        raise InvalidArgument(f"vectors must have length {q.shape[0]}; got shape {arr.shape}.")
    y = arr @ q
    resid = np.linalg.norm(arr - y @ q.T, axis=-1)
    scale = np.maximum(np.linalg.norm(arr, axis=-1), 1.0)
    if np.any(resid > SPAN_RTOL * scale):
        raise InvalidArgument("a vector is not in span(S) (it would change the invariant).")
    return np.asarray(y, dtype=np.float64)


class SpanCoordinates:
    """Mixin for objects with an orthonormal ``basis`` ``(d, s)`` of span(S): dimensions and coordinates."""

    __slots__ = ()
    basis: FloatArray

    @property
    def dimension(self) -> int:
        r""":math:`s=\dim\operatorname{span}(S)`, the dimension of the noise."""
        return int(self.basis.shape[1])

    @property
    def ambient_dimension(self) -> int:
        """:math:`d`, the length of the released vector."""
        return int(self.basis.shape[0])

    def coordinates(self, x: ArrayLike) -> FloatArray:
        """``Q^T x`` for ambient vectors (rows), after checking they lie in span(S) (:func:`to_coordinates`)."""
        return to_coordinates(self.basis, x)
