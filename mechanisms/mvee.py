r"""Minimum-volume enclosing ellipsoid (MVEE) of a centrally symmetric point set.

For points :math:`v_1,\dots,v_p\in\mathbb R^k` (rows of ``points``) that span
:math:`\mathbb R^k`, find the ellipsoid :math:`E=FB_2^k=\{x:\|F^{-1}x\|_2\le1\}`
of least volume containing :math:`K=\operatorname{conv}\{\pm v_j\}`, with
:math:`F` symmetric positive definite. This is step 1 of Gao, Gong & Yu's
correlated Gaussian mechanism (AAAI-22, Alg 2/3; reference
``docs/reference/subspace-integer-postprocessing.md`` §2.5, target T-G6), used by
:mod:`mechanisms.correlated_gaussian`.

Two independent routes return the same :class:`EnclosingEllipsoid`:

* :func:`mvee` -- the convex program :math:`\max\log\det M` s.t. :math:`M\succeq0`,
  :math:`\|Mv_j\|_2\le1` (:math:`M=F^{-1}`), solved with cvxpy (CLARABEL, else SCS);
* :func:`mvee_khachiyan` -- Khachiyan's D-optimal-design iteration with
  Todd–Yildirim away steps [L: Kiefer–Wolfowitz duality, reference §2.5].

**Containment is made rigorous, optimality is certified approximately.** Either
route's ellipsoid is rescaled afterwards by a certified upper bound on
:math:`\max_j\|F^{-1}v_j\|_2` (padded up by a stated float error budget), so
every point is inside *by construction* whatever the solver's accuracy; the
returned ``max_mahalanobis`` is an independently re-computed certified bound
(:math:`\le1`). Optimality is witnessed by a lower bound from design weights
:math:`u` in the simplex [D, Kiefer–Wolfowitz]: for any enclosing ellipsoid
:math:`\{x:x^\top Hx\le1\}`, :math:`\operatorname{tr}(HW(u))=\sum_ju_jv_j^\top Hv_j\le1`
with :math:`W(u)=\sum_ju_jv_jv_j^\top`, so by AM–GM
:math:`\det H^{-1}\ge\det(kW(u))`, i.e. every enclosing :math:`F` has
:math:`\log\det F\ge\tfrac12\log\det(kW(u))`. The cvxpy route takes
:math:`u` from the normalised duals of the norm constraints (KKT: they sum to
:math:`k`), Khachiyan's from its iterate. ``log_det_gap`` is the distance to
that bound (0 at the exact optimum).
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from functools import cached_property

import numpy as np
from numpy.typing import ArrayLike, NDArray

from semidp.accountant.core.arguments import check_int, check_positive
from semidp.accountant.core.directed import pad_down, pad_up
from semidp.accountant.core.errors import InvalidArgument, SearchTooLarge, VerificationError

FloatArray = NDArray[np.float64]

#: Relative rank tolerance on the singular values of the point matrix.
RANK_TOL = 1e-10
#: Relative budget added to float-computed Mahalanobis norms (on top of the residual bound).
MAHALANOBIS_PAD = 1e-10
#: The solver's F is rescaled by the certified max Mahalanobis norm padded up by this much.
RESCALE_PAD = 1e-9
#: Default refusal limit on ``p * k**2`` for the cvxpy route (the solve time grows with it).
MAX_WORK = 200_000
_UNIT_ROUNDOFF = 2.0**-53


@dataclass(frozen=True, eq=False)
class EnclosingEllipsoid:
    r"""An ellipsoid :math:`E=FB_2^k` containing :math:`\operatorname{conv}\{\pm v_j\}` ([GGY22, Alg. 2/3] step 1).

    Produced by :func:`mvee` or :func:`mvee_khachiyan`; ``max_mahalanobis <= 1``
    is a certified bound, so containment holds for the stored ``shape``.
    """

    shape: FloatArray
    r"""F, ``(k, k)`` symmetric positive definite; :math:`E=\{x:\|F^{-1}x\|_2\le1\}`."""
    points: FloatArray
    """The ``(p, k)`` points the ellipsoid was fitted to (the set is their ± closure)."""
    max_mahalanobis: float
    r"""Certified upper bound on :math:`\max_j\|F^{-1}v_j\|_2` (at most 1)."""
    rescale: float
    """Factor applied to the raw solver/iteration F to make it enclosing (about 1 when accurate)."""
    log_det_lower_bound: float
    r"""Certified-from-weights lower bound on :math:`\log\det F` of *every* enclosing ellipsoid (float)."""
    method: str
    """``"cvxpy:<SOLVER>"`` or ``"khachiyan"``."""
    status: str
    """Solver status (``"optimal"``, ``"optimal_inaccurate"``) or Khachiyan's ``"converged"``."""
    iterations: int | None = None
    """Khachiyan iterations (None for cvxpy)."""

    @property
    def dimension(self) -> int:
        """k."""
        return int(self.shape.shape[0])

    @cached_property
    def singular_values(self) -> FloatArray:
        """Singular values of F, decreasing (the semi-axes of E)."""
        s = np.linalg.svd(self.shape, compute_uv=False)
        return np.asarray(s, dtype=np.float64)

    @property
    def log_det(self) -> float:
        r""":math:`\log\det F` (log-volume up to the unit-ball constant)."""
        return float(np.sum(np.log(self.singular_values)))

    @property
    def log_det_gap(self) -> float:
        r""":math:`\log\det F-` ``log_det_lower_bound`` :math:`\ge0`: how far from minimum volume (log scale)."""
        return self.log_det - self.log_det_lower_bound

    def mahalanobis(self, points: ArrayLike) -> FloatArray:
        r"""Float estimates of :math:`\|F^{-1}x\|_2` for the rows ``x`` of ``points`` (``(p, k)`` or ``(k,)``)."""
        v = as_points(points, self.dimension)
        w = np.linalg.solve(self.shape, v.T)
        out: FloatArray = np.linalg.norm(w, axis=0)
        return out

    def contains(self, points: ArrayLike) -> bool:
        r"""True if every row is certified inside E (:math:`\|F^{-1}x\|_2\le1` after the float error budget)."""
        v = as_points(points, self.dimension)
        return certified_max_mahalanobis(self.shape, v) <= 1.0


def as_points(points: ArrayLike, k: int | None = None) -> FloatArray:
    """Points as a finite float array of shape ``(p, k)``, one per row (a 1-D input is one point when ``k`` is given)."""
    v = np.asarray(points, dtype=np.float64)
    if v.ndim == 1 and k is not None:
        v = v.reshape(1, -1)
    if v.ndim != 2:
        raise InvalidArgument(f"points must be a 2-D array (one point per row); got shape {v.shape}.")
    if v.shape[0] < 1 or v.shape[1] < 1:
        raise InvalidArgument(f"points has shape {v.shape}; need at least one point in dimension >= 1.")
    if k is not None and v.shape[1] != k:
        raise InvalidArgument(f"points have dimension {v.shape[1]}; the ellipsoid has dimension {k}.")
    if not np.all(np.isfinite(v)):
        raise InvalidArgument("points has non-finite entries.")
    return v


def _checked_points(points: ArrayLike) -> FloatArray:
    """Finite ``(p, k)`` points spanning R^k (else InvalidArgument naming the rank)."""
    v = as_points(points)
    k = v.shape[1]
    sv = np.linalg.svd(v, compute_uv=False)
    rank = int(np.sum(sv > RANK_TOL * sv[0])) if sv[0] > 0 else 0
    if rank < k:
        raise InvalidArgument(
            f"the points span a subspace of rank {rank} < k = {k}: conv{{±v_j}} is flat, its minimum-volume "
            "enclosing ellipsoid is degenerate (volume 0). Restrict the points to their span first."
        )
    return v


def certified_max_mahalanobis(f: FloatArray, v: FloatArray) -> float:
    r"""Upper bound on :math:`\max_j\|F^{-1}v_j\|_2` for the float matrix F, with a stated error budget.

    With :math:`w=\mathrm{solve}(F,v)` and the residual :math:`r=v-Fw` (whose float
    evaluation errs by at most :math:`\gamma_{k+1}(|v|+|F||w|)`, Higham Thm 3.5),
    :math:`\|F^{-1}v\|\le\|w\|+\|r\|/\sigma_{\min}(F)`; :math:`\sigma_{\min}` is
    lowered by :math:`8k u\,\sigma_{\max}` (SVD backward error), and the total padded
    by :data:`MAHALANOBIS_PAD`.
    """
    k = f.shape[0]
    sv = np.linalg.svd(f, compute_uv=False)
    smin = float(sv[-1]) - 8.0 * k * _UNIT_ROUNDOFF * float(sv[0])
    if not smin > 0.0:
        raise InvalidArgument(
            f"the ellipsoid matrix is numerically singular (condition number {sv[0] / max(sv[-1], 1e-300):.3g})."
        )
    w = np.linalg.solve(f, v.T)
    r = v.T - f @ w
    gamma = (k + 1) * _UNIT_ROUNDOFF / (1.0 - (k + 1) * _UNIT_ROUNDOFF)
    r_norm = np.linalg.norm(r, axis=0) + gamma * np.linalg.norm(np.abs(v.T) + np.abs(f) @ np.abs(w), axis=0)
    bound = np.linalg.norm(w, axis=0) + r_norm / smin
    return pad_up(float(np.max(bound)), rel=MAHALANOBIS_PAD)


def _sqrtm_psd(w: FloatArray) -> FloatArray:
    """Symmetric square root of a symmetric PSD matrix (eigh)."""
    lam, u = np.linalg.eigh((w + w.T) / 2.0)
    out: FloatArray = (u * np.sqrt(np.maximum(lam, 0.0))) @ u.T
    return (out + out.T) / 2.0


def _design_lower_bound(v: FloatArray, weights: FloatArray) -> float:
    r""":math:`\tfrac12\log\det(kW(u))` for weights projected onto the simplex (valid for any such u)."""
    u = np.maximum(np.asarray(weights, dtype=np.float64), 0.0)
    total = float(u.sum())
    k = v.shape[1]
    if not total > 0.0:
        return -math.inf
    u = u / total
    sign, logdet = np.linalg.slogdet(k * (v.T * u) @ v)
    if sign <= 0:
        return -math.inf
    return pad_down(0.5 * float(logdet), rel=1e-9, abs_=1e-9)


def _finish(
    raw: FloatArray, v: FloatArray, weights: FloatArray, method: str, status: str, iterations: int | None
) -> EnclosingEllipsoid:
    """Rescale ``raw`` so that it certifiably encloses ``±v`` and re-check independently."""
    f0 = (raw + raw.T) / 2.0
    s = pad_up(certified_max_mahalanobis(f0, v), rel=RESCALE_PAD)
    f = np.ascontiguousarray(f0 * s)
    final = certified_max_mahalanobis(f, v)
    if not final <= 1.0:  # pragma: no cover - the padding covers the rounding of f0 * s
        raise VerificationError(f"rescaled ellipsoid still leaves a point outside (max Mahalanobis {final!r}).")
    return EnclosingEllipsoid(
        shape=f,
        points=v,
        max_mahalanobis=final,
        rescale=s,
        log_det_lower_bound=_design_lower_bound(v, weights),
        method=method,
        status=status,
        iterations=iterations,
    )


def _default_solver() -> str:
    import cvxpy as cp

    solvers: list[str] = cp.installed_solvers()  # type: ignore[no-untyped-call]
    for name in ("CLARABEL", "SCS"):
        if name in solvers:
            return name
    raise InvalidArgument(  # pragma: no cover - both ship with cvxpy
        f"no conic solver with log-det support is installed (found {solvers}); use mvee_khachiyan."
    )


def mvee(points: ArrayLike, *, solver: str | None = None, max_work: float = MAX_WORK) -> EnclosingEllipsoid:
    r"""MVEE of :math:`\operatorname{conv}\{\pm v_j\}` by cvxpy (GGY AAAI-22 Alg 2/3, step 1; reference §2.5, T-G6).

    Solves :math:`\max\log\det M` s.t. :math:`M\succeq0`, :math:`\|Mv_j\|_2\le1` for
    :math:`M=F^{-1}` on the points scaled to unit max norm, then rescales
    :math:`F=M^{-1}` so that containment is certified (module docstring).

    Parameters
    ----------
    points
        ``(p, k)`` array, one point per row; they must span :math:`\mathbb R^k`.
        Passing both :math:`v` and :math:`-v` is harmless.
    solver
        A cvxpy solver name; default CLARABEL if installed, else SCS.
    max_work
        Refuse when :math:`p\,k^2` exceeds this (the conic problem grows like it).

    Returns
    -------
    EnclosingEllipsoid
        ``status`` is the cvxpy status (``"optimal"`` or ``"optimal_inaccurate"``:
        an inaccurate solve is still rigorously enclosing; its ``log_det_gap``
        says how far from minimum volume it may be).

    Raises
    ------
    InvalidArgument
        Non-finite points, points not spanning :math:`\mathbb R^k` (names the rank),
        or a solver failure (suggests :func:`mvee_khachiyan`).
    SearchTooLarge
        :math:`p\,k^2>` ``max_work``.

    Examples
    --------
    >>> e = mvee(np.array([[3.0, 0, 0], [0, 1, 0], [0, 0, 0.5], [3, 1, 0.5]]))   # T-G6
    >>> [round(float(s), 4) for s in e.singular_values], e.max_mahalanobis <= 1.0
    ([3.7429, 1.0607, 0.4908], True)
    """
    import cvxpy as cp

    v = _checked_points(points)
    p, k = v.shape
    check_positive("max_work", max_work)
    if p * k * k > max_work:
        raise SearchTooLarge(
            f"MVEE by cvxpy of {p} points in R^{k} (p*k^2)",
            p * k * k,
            max_work,
            hint="Use mvee_khachiyan (method='khachiyan'), or raise max_work.",
        )
    name = solver if solver is not None else _default_solver()
    rho = float(np.max(np.linalg.norm(v, axis=1)))
    vs = v / rho
    m = cp.Variable((k, k), PSD=True)
    con = cp.norm(m @ vs.T, 2, axis=0) <= 1  # type: ignore[attr-defined]
    prob = cp.Problem(cp.Maximize(cp.log_det(m)), [con])  # type: ignore[attr-defined]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            prob.solve(solver=name)  # type: ignore[no-untyped-call]
        except cp.error.SolverError as err:
            raise InvalidArgument(
                f"cvxpy solver {name} failed on the MVEE of {p} points in R^{k} ({err}). "
                "Try another solver or mvee_khachiyan."
            ) from err
    status = str(prob.status)
    if status not in (cp.OPTIMAL, cp.OPTIMAL_INACCURATE) or m.value is None:
        note = "; ".join(str(w.message) for w in caught)
        raise InvalidArgument(
            f"cvxpy solver {name} returned status {status!r} for the MVEE of {p} points in R^{k}"
            + (f" ({note})" if note else "")
            + ". Try another solver or mvee_khachiyan."
        )
    mv = np.asarray(m.value, dtype=np.float64)
    lam, u = np.linalg.eigh((mv + mv.T) / 2.0)
    if not float(lam[0]) > 0.0:
        raise InvalidArgument(
            f"cvxpy solver {name} returned a singular M (smallest eigenvalue {float(lam[0])!r}); try mvee_khachiyan."
        )
    raw = (u / lam) @ u.T * rho
    dual = con.dual_value
    weights = np.asarray(dual, dtype=np.float64).reshape(-1) if dual is not None else np.full(p, 1.0 / p)
    return _finish(raw, v, weights, f"cvxpy:{name}", status, None)


def mvee_khachiyan(points: ArrayLike, *, tol: float = 1e-7, max_iterations: int = 200_000) -> EnclosingEllipsoid:
    r"""MVEE of :math:`\operatorname{conv}\{\pm v_j\}` by Khachiyan's iteration with away steps (reference §2.5 [L]).

    D-optimal design: maximise :math:`\log\det W(u)`, :math:`W(u)=\sum_ju_jv_jv_j^\top`
    over the simplex. With :math:`g_j=v_j^\top W^{-1}v_j` (always
    :math:`\sum_ju_jg_j=k`), step toward :math:`j^+=\arg\max g_j` by
    :math:`\tau=(g-k)/(k(g-1))` (Khachiyan / Fedorov–Wynn), or away from
    :math:`j^-=\arg\min_{u_j>0}g_j` by the same formula clipped at
    :math:`u_{j^-}=0` (all the way to 0 when :math:`g_{j^-}\le1`; Todd & Yildirim 2007), whichever violates optimality more;
    :math:`W^{-1}` and :math:`g` are updated by Sherman–Morrison and recomputed
    every 500 steps. Stops when :math:`\max g_j\le k(1+\text{tol})`; then
    :math:`F=(kW)^{1/2}`, rescaled to be certifiably enclosing. Independent of
    cvxpy: used to cross-check :func:`mvee` (T-G6).

    Parameters
    ----------
    points
        ``(p, k)``, one point per row, spanning :math:`\mathbb R^k`.
    tol
        Relative optimality tolerance (the final ``log_det_gap`` is about
        :math:`\tfrac k2\log(1+\text{tol})`).
    max_iterations
        Iteration cap; reaching it raises :class:`InvalidArgument`.

    Examples
    --------
    >>> q = np.linalg.svd(np.ones((1, 6)))[2][1:].T            # Q_N for C = 1^T, n = 6 (T-G6)
    >>> e = mvee_khachiyan(q)                                   # points Q_N^T e_j (rows of Q_N)
    >>> bool(np.allclose(e.shape, np.sqrt(5 / 6) * np.eye(5), atol=1e-6))
    True
    """
    v = _checked_points(points)
    check_positive("tol", tol)
    cap = check_int("max_iterations", max_iterations, minimum=1)
    p, k = v.shape
    if k == 1:  # the step formula degenerates (tau = 1): all weight on the longest point
        u = np.zeros(p)
        u[int(np.argmax(np.abs(v[:, 0])))] = 1.0
        return _finish(np.abs(v).max(keepdims=True).reshape(1, 1), v, u, "khachiyan", "converged", 0)
    u = np.full(p, 1.0 / p)
    winv = np.linalg.inv((v.T * u) @ v)
    g = np.einsum("ij,jk,ik->i", v, winv, v)
    it = 0
    converged = False
    while it < cap:
        jp = int(np.argmax(g))
        gp = float(g[jp])
        support = u > 0.0
        jm = int(np.flatnonzero(support)[np.argmin(g[support])])
        gm = float(g[jm])
        if gp <= k * (1.0 + tol):
            converged = True
            break
        if gp / k - 1.0 >= 1.0 - gm / k or u[jm] >= 1.0:
            j, tau = jp, (gp - k) / (k * (gp - 1.0))
        else:  # away step; for g <= 1 the objective keeps increasing down to u_j = 0 (drop step)
            j = jm
            drop = -u[jm] / (1.0 - u[jm])
            tau = drop if gm <= 1.0 else max((gm - k) / (k * (gm - 1.0)), drop)
        a = v[j]
        wa = winv @ a
        gj = float(a @ wa)
        rr = tau / (1.0 - tau)
        denom = 1.0 + rr * gj
        winv = (winv - (rr / denom) * np.outer(wa, wa)) / (1.0 - tau)
        g = (g - (rr / denom) * (v @ wa) ** 2) / (1.0 - tau)
        u *= 1.0 - tau
        u[j] += tau
        u[j] = max(u[j], 0.0)
        it += 1
        if it % 500 == 0:
            u /= u.sum()
            winv = np.linalg.inv((v.T * u) @ v)
            g = np.einsum("ij,jk,ik->i", v, winv, v)
    if not converged:
        raise InvalidArgument(
            f"Khachiyan's iteration did not reach tol={tol!r} in max_iterations={cap} "
            f"(max g_j / k - 1 = {float(np.max(g)) / k - 1.0:.3g}); raise max_iterations or tol."
        )
    u /= u.sum()
    raw = _sqrtm_psd(k * (v.T * u) @ v)
    return _finish(raw, v, u, "khachiyan", "converged", it)


__all__ = ["EnclosingEllipsoid", "mvee", "mvee_khachiyan"]
