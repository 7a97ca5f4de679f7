r"""Exact but non-optimal K-norm balls that contain conv(S), for when the optimal hull is out of reach.

:func:`containing_ball` returns the basis cube, the box or the l2 ball in
:math:`\mathrm{span}(S)` that contains every vector of S (containment certified),
with an upper bound on what is lost against the optimum (:class:`FallbackLoss`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.special import gammaln

from semidp.accountant.core.directed import pad_up, sqrt_up
from semidp.accountant.core.errors import InvalidArgument, VerificationError
from semidp.accountant.geometry.knorm import KNormBall, log_unit_ball_volume
from semidp.accountant.geometry.knorm_certificates import certified_span
from semidp.accountant.geometry.span_coordinates import SpanCoordinates
from semidp.accountant.guarantees.relations import Relation
from semidp.accountant.sensitivity.spaces import SensitivitySpace

FloatArray = NDArray[np.float64]


FallbackKind = Literal["basis-cube", "box", "l2-ball"]


@dataclass(frozen=True, slots=True)
class FallbackLoss:
    r"""How much a containing ball :math:`L\supseteq K` loses against the optimal :math:`K=\operatorname{conv}(S)`.

    For K-norm noise :math:`Y=RU` (:math:`R\sim\mathrm{Gamma}(s+1,\varepsilon)`)
    :math:`\mathbb E\|Y\|_2=\frac{s+1}{\varepsilon}\mathbb E\|U\|_2`, so the
    ratio of expected :math:`\ell_2` errors equals the ratio of
    :math:`\mathbb E\|U\|_2` over the two balls.
    """

    volume_ratio_upper: float
    r"""Upper bound on :math:`\mathrm{vol}(L)/\mathrm{vol}(K)` (exact when the hull volume is known)."""
    norm_ratio_upper: float
    r"""Upper bound on :math:`\mathbb E\|Y_L\|_2/\mathbb E\|Y_K\|_2`."""
    optimal_volume_lower: float
    r"""Lower bound on vol(K) used (the hull volume, or the cross-polytope of the basis)."""
    how: str
    """Which bounds were used."""


@dataclass(frozen=True, eq=False)
class ContainingBall(SpanCoordinates):
    r"""An exact but **non-optimal** K-norm ball :math:`L=T\,Z\supseteq Q^\top\operatorname{conv}(S)`.

    :math:`Z` is the cube :math:`[-1,1]^s` (kinds ``basis-cube``, ``box``) or
    the Euclidean unit ball (``l2-ball``); :math:`T` is ``transform``. Its gauge
    is :math:`\|T^{-1}y\|_\infty` or :math:`\|T^{-1}y\|_2`. Uniform sampling is
    :math:`Tz`, :math:`z` uniform on :math:`Z` (exact, no rejection), so the
    K-norm mechanism with :math:`L` and :math:`\Delta_L\le1` is
    :math:`\varepsilon`-DP (Prop. 7 with any norm ball containing S), but adds
    more noise than Alg. 2's optimal ball (Thm. 31); ``loss`` bounds how much.

    Examples
    --------
    >>> from semidp.accountant.sensitivity.spaces import table_space
    >>> L = containing_ball(table_space(3, 3), kind="basis-cube")
    >>> L.kind, L.sensitivity <= 1, round(L.volume, 6)
    ('basis-cube', True, 144.0)
    """

    space: SensitivitySpace
    """The sensitivity space S."""
    basis: FloatArray
    """``(d, s)`` orthonormal basis Q of span(S)."""
    kind: FallbackKind
    """Shape of Z and how T was chosen."""
    transform: FloatArray
    """``(s, s)`` matrix T."""
    inverse: FloatArray
    """``(s, s)`` its inverse."""
    volume: float
    r""":math:`|\det T|\,\mathrm{vol}(Z)`."""
    sensitivity: float
    r"""Certified :math:`\max_{u\in S}\|Q^\top u\|_L\le1` (exact for ``basis-cube``; ``l2-ball``
    and ``box`` are scaled up with a margin so the float check has slack)."""
    loss: FallbackLoss
    """Loss against the optimal ball."""
    relation: Relation | None = None
    """The relation on which ``space`` is the sensitivity space."""
    label: str = ""
    """Human-readable description, always saying NON-OPTIMAL."""

    def gauge(self, y: ArrayLike) -> FloatArray:
        """Gauge of L for rows of ``y``."""
        z = np.asarray(y, dtype=np.float64) @ self.inverse.T
        if self.kind == "l2-ball":
            return np.asarray(np.linalg.norm(z, axis=-1), dtype=np.float64)
        return np.asarray(np.abs(z).max(axis=-1), dtype=np.float64)


def containing_ball(
    space: SensitivitySpace,
    *,
    kind: FallbackKind | Literal["auto"] = "auto",
    relation: Relation | None = None,
    optimum: KNormBall | None = None,
) -> ContainingBall:
    r"""An exact, cheap, **non-optimal** K-norm ball containing conv(S), with its loss bounded.

    Kinds (all sampled exactly as a linear image of a cube or a Euclidean ball):

    * ``basis-cube`` -- :math:`B[-1,1]^s` for the basis :math:`B\subseteq S` of
      :func:`certified_span` (every element of :math:`S` has coordinates in
      :math:`[-1,1]`, checked in exact arithmetic): [CA24, Alg. 3]'s cube used
      as the ball itself instead of as a rejection envelope;
    * ``box`` -- the axis box of :math:`Q^\top S` in the orthonormal coordinates,
      half-widths scaled up by :math:`1+10^{-9}`;
    * ``l2-ball`` -- the Euclidean ball of radius :math:`\Delta_2` in :math:`V`
      (radius rounded up, then :math:`\times(1+10^{-12})`). For tables under
      one-way margins this is also the minimum-volume ellipsoid containing
      :math:`S` (the row/column permutation group acts irreducibly on :math:`V`,
      so an invariant ellipsoid is a ball).

    ``auto`` picks the smallest expected :math:`\ell_2` error (the K-norm noise
    is :math:`RU`, so this is the smallest :math:`\mathbb E\|U\|_2`; the smallest
    volume is a different, worse criterion in high dimension).

    Loss (:class:`FallbackLoss`): with :math:`\mathrm{vol}(K)\ge v_-` (the hull
    volume of ``optimum`` if given, else the cross-polytope
    :math:`\operatorname{conv}(\pm b_k)\subseteq K`, volume
    :math:`2^s\sqrt{\det B^\top B}/s!`), ``volume_ratio_upper`` is
    :math:`\mathrm{vol}(L)/v_-`, and ``norm_ratio_upper`` is
    :math:`\mathbb E_L\|U\|_2` (exact for the ball, the Jensen bound
    :math:`\|T\|_F/\sqrt3` for cubes) divided by
    :math:`\frac{s}{s+1}(v_-/\omega_s)^{1/s}`, a lower bound on
    :math:`\mathbb E_K\|U\|_2` (among bodies of a given volume the centred ball
    minimises the mean norm).
    """
    cert = certified_span(space)
    q, s = cert.orthonormal, cert.rank
    pts = cert.nonzero.astype(np.float64) @ q
    log_fact = float(gammaln(s + 1))
    t_b = q.T @ cert.basis.astype(np.float64)
    log_det_b = 0.5 * math.log(cert.gram_det)
    cands: dict[str, tuple[FloatArray, float, float]] = {}
    if cert.max_coordinate <= 1:
        cands["basis-cube"] = (t_b, s * math.log(2) + log_det_b, float(cert.max_coordinate))
    half = np.abs(pts).max(axis=0) * (1 + 1e-9)
    cands["box"] = (np.diag(half), float(s * math.log(2) + np.log(half).sum()), 0.0)
    rad = sqrt_up(Fraction(space.l2_squared)) * (1 + 1e-12)
    cands["l2-ball"] = (rad * np.eye(s), log_unit_ball_volume(s) + s * math.log(rad), 0.0)

    def mean_norm(k: str) -> float:
        """E||U||_2 on the candidate: exact for the ball, the Jensen upper bound ||T||_F/sqrt(3) for cubes."""
        return s / (s + 1) * rad if k == "l2-ball" else float(np.linalg.norm(cands[k][0])) / math.sqrt(3)

    chosen: FallbackKind
    if kind == "auto":  # the smallest expected l2 error (not the smallest volume: they disagree)
        chosen = "l2-ball"
        for k in ("basis-cube", "box"):
            if k in cands and mean_norm(k) < mean_norm(chosen):
                chosen = k
    elif kind in cands:
        chosen = kind
    elif kind == "basis-cube":
        raise InvalidArgument("no basis of S with all coordinates in [-1, 1] was found; use kind='l2-ball'.")
    else:
        raise InvalidArgument(f"kind={kind!r} must be one of 'auto', 'basis-cube', 'box', 'l2-ball'.")
    kind = chosen
    t, log_vol, _ = cands[kind]
    inv = np.linalg.inv(t)
    if kind == "basis-cube":
        sens = float(cert.max_coordinate)  # exact rational coordinates
    else:
        z = pts @ inv.T
        sens = float((np.linalg.norm(z, axis=1) if kind == "l2-ball" else np.abs(z).max(axis=1)).max())
        if not sens <= 1 - 1e-13:
            raise VerificationError(f"{kind} does not contain S with margin (max gauge {sens!r}).")
        sens = 1.0
    if optimum is not None:
        log_vk = math.log(optimum.volume)
        how = "hull volume known"
    else:
        log_vk = s * math.log(2) + log_det_b - log_fact
        how = "vol(K) >= cross-polytope conv(+-b_k)"
    mean_l = mean_norm(kind)
    mean_k_lower = s / (s + 1) * math.exp((log_vk - log_unit_ball_volume(s)) / s)
    loss = FallbackLoss(
        volume_ratio_upper=pad_up(math.exp(log_vol - log_vk), rel=1e-9),
        norm_ratio_upper=pad_up(mean_l / mean_k_lower, rel=1e-9),
        optimal_volume_lower=math.exp(log_vk),
        how=how,
    )
    label = (
        f"NON-OPTIMAL K-norm ball ({kind}) containing conv(S); exact sampler; "
        f"E||noise||_2 at most {loss.norm_ratio_upper:.3g}x the optimal K-norm mechanism's "
        f"({how})"
    )
    return ContainingBall(space, q, kind, t, inv, math.exp(log_vol), sens, loss, relation, label)  # type: ignore[arg-type]
