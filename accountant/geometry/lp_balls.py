r"""The optimal K-norm ball against the l1, l2 and l-infinity balls containing S [CA24, Thm. 31; AS21].

:func:`compare_lp_balls` reports, for each p, the smallest p-ball containing
:math:`S`, its volume against :math:`\mathrm{conv}(S)` and the section volumes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import numpy as np
from numpy.typing import NDArray
from scipy.optimize import linprog
from scipy.spatial import ConvexHull, HalfspaceIntersection

from semidp.accountant.core.errors import VerificationError
from semidp.accountant.core.outcome import Outcome, Refuted, Verified
from semidp.accountant.geometry.knorm import KNormBall, log_unit_ball_volume

FloatArray = NDArray[np.float64]


@dataclass(frozen=True, slots=True)
class LpComparison:
    r"""conv(S) against the section :math:`\Delta_p B_p\cap V` of an :math:`\ell_p` ball scaled to contain S."""

    p: Literal["1", "2", "inf"]
    """Which norm."""
    radius: float
    r""":math:`\Delta_p=\max_{u\in S}\|u\|_p` (rounded up)."""
    contains: Outcome
    r"""Whether :math:`\operatorname{conv}(S)\subseteq\Delta_pB_p` (exact integer check)."""
    inflation: float | None
    r""":math:`\max\{\|x\|_K: x\in\Delta_pB_p\cap V\}\ge1`: how far the ball sticks out of K (None if skipped)."""
    volume_ratio: float | None
    r""":math:`\mathrm{vol}_s(\Delta_pB_p\cap V)/\mathrm{vol}_s(K)` (None if skipped)."""


def compare_lp_balls(ball: KNormBall, *, max_facets: int = 5000, max_volume_dim: int = 8) -> tuple[LpComparison, ...]:
    r"""Containment order of [CA24, Thm. 31] against :math:`\ell_1,\ell_2,\ell_\infty` balls.

    Each :math:`\Delta_pB_p\cap V` is a norm ball on :math:`V` containing
    :math:`S`, hence :math:`\operatorname{conv}(S)` (checked exactly on the
    integer vectors); conv(S) is the smallest such ball (Thm. 31,
    [AS21]), which shows as ``inflation > 1`` and ``volume_ratio > 1``.

    ``inflation`` is :math:`\max_i h(Qa_i)` over facets, :math:`h` the support
    function of the section: :math:`\Delta_2\|a_i\|_2` for :math:`\ell_2`, an LP
    for :math:`\ell_1,\ell_\infty` (skipped above ``max_facets`` facets).
    ``volume_ratio`` uses :math:`\omega_s\Delta_2^s` for :math:`\ell_2` and a
    halfspace intersection for :math:`\ell_1,\ell_\infty` (skipped above
    dimension ``max_volume_dim``).

    Examples
    --------
    >>> from semidp.accountant.sensitivity.spaces import table_space
    >>> rows = compare_lp_balls(KNormBall.from_space(table_space(3, 3)))
    >>> [(r.p, r.radius, r.inflation > 1, r.volume_ratio > 1) for r in rows]
    [('1', 6.0, True, True), ('2', 2.4494897427831783, True, True), ('inf', 1.0, True, True)]
    """
    sp = ball.space
    u = sp.array
    q = ball.basis
    d, s = q.shape
    null = np.linalg.svd(np.eye(d) - q @ q.T)[0][:, : d - s]
    out: list[LpComparison] = []
    radii: dict[str, float] = {"1": float(sp.l1), "2": sp.l2, "inf": float(sp.linf)}
    norms: tuple[Literal["1", "2", "inf"], ...] = ("1", "2", "inf")
    for p in norms:
        rad = radii[p]
        if p == "1":
            ok = bool(np.all(np.abs(u).sum(axis=1) <= sp.l1))
        elif p == "2":
            ok = bool(np.all((u * u).sum(axis=1) <= sp.l2_squared))
        else:
            ok = bool(np.all(np.abs(u) <= sp.linf))
        contains: Outcome = (
            Verified(f"every element of S has l{p} norm <= {rad:g} (exact integers); the ball is convex.")
            if ok
            else Refuted("an element of S exceeds the radius (bug)")
        )
        inflation: float | None = None
        if p == "2":
            inflation = rad * float(np.linalg.norm(ball.facets, axis=1).max())
        elif len(ball.facets) <= max_facets:
            inflation = max(section_support(q @ a, rad, p, null) for a in ball.facets)
        vr: float | None = None
        if p == "2":
            vr = math.exp(log_unit_ball_volume(s) + s * math.log(rad) - math.log(ball.volume))
        elif s <= max_volume_dim and (p == "inf" or d <= 16):
            vr = section_volume(q, rad, p) / ball.volume
        out.append(LpComparison(p, rad, contains, inflation, vr))
    return tuple(out)


def section_support(c: FloatArray, rad: float, p: str, null: FloatArray) -> float:
    """max c.x over ||x||_p <= rad, x in V (V^perp spanned by ``null``), by LP."""
    d = c.shape[0]
    k = null.shape[1]
    if p == "inf":
        res = linprog(
            -c, A_eq=null.T if k else None, b_eq=np.zeros(k) if k else None, bounds=[(-rad, rad)] * d, method="highs"
        )
    else:  # x = xp - xm, sum(xp + xm) <= rad
        a_eq = np.hstack([null.T, -null.T]) if k else None
        res = linprog(
            np.concatenate([-c, c]),
            A_ub=np.ones((1, 2 * d)),
            b_ub=[rad],
            A_eq=a_eq,
            b_eq=np.zeros(k) if k else None,
            bounds=(0, None),
            method="highs",
        )
    if res.status != 0:  # pragma: no cover - bounded feasible LP
        raise VerificationError(f"support-function LP failed: {res.message}")
    return float(-res.fun)


def section_volume(q: FloatArray, rad: float, p: str) -> float:
    """s-volume of {y : ||Q y||_p <= rad} by halfspace intersection (p in {'1', 'inf'})."""
    d, s = q.shape
    if p == "inf":
        normals = np.vstack([q, -q])
    else:
        import itertools

        signs = np.array(list(itertools.product((-1.0, 1.0), repeat=d)))
        normals = signs @ q
    hs = np.hstack([normals, -rad * np.ones((normals.shape[0], 1))])
    inter = HalfspaceIntersection(hs, np.zeros(s))
    return float(ConvexHull(inter.intersections).volume)
