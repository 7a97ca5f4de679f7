r"""Program (P+) for a general constraint matrix: a batched ADMM in numpy and a per-draw cvxpy reference.

(P+) [ZVF21, Sec. 3] (``docs/reference/subspace-integer-postprocessing.md`` §4.1):
:math:`\hat x_+=\arg\min\{\|v-\tilde x\|_2:\ Av=b,\ v\ge0\}`. For one total or a hierarchy of
totals use the exact sort-and-threshold paths of :mod:`semidp.mechanisms.projection`; this
module handles any ``A``.

* :func:`project_nonneg` -- ADMM ([BPCPE11, Sec. 5.1],
  over-relaxed, Sec. 3.4.3) on :math:`\tfrac12\|v-\tilde x\|^2+I_{\{Av=b\}}(v)+I_{\{z\ge0\}}(z)`,
  :math:`v=z`, run on all draws at once (an array ``(draws, n)``); each draw stops on its own
  KKT residual (below). The returned point is ``z``: non-negative exactly, with
  :math:`\|Az-b\|_\infty` within the tolerance.
* :func:`project_nonneg_cvxpy` -- the slow, independent reference: one cvxpy solve per draw
  (one compiled problem with a parameter); only status ``optimal`` counts as solved
  (house style R9).

**KKT residual** (what ``tol`` bounds). The KKT conditions of (P+) are
:math:`v-\tilde x=A^\top y+\mu`, :math:`\mu\ge0`, :math:`\mu_iv_i=0`, :math:`Av=b`, :math:`v\ge0`.
After every ADMM step the scaled dual ``u`` satisfies :math:`u\le0` and :math:`u_i=0` where
:math:`z_i>0` (by the form of the z-update), so with :math:`\mu=-\rho u` the sign and
complementarity conditions hold exactly and ``z >= 0`` exactly. What remains is measured:

.. math:: \mathrm{kkt}=\max\bigl(\|\Pi_{\ker A}(z-\tilde x+\rho u)\|_\infty,\ \|Az-b\|_\infty\bigr)
          \le \mathrm{tol}\cdot\max(1,\|\tilde x\|_\infty).

Stationarity of a strongly convex problem with residual :math:`\epsilon` puts ``z`` within
:math:`O(\epsilon)` of the exact projection (times a constraint-conditioning factor); the tests
check against cvxpy. Samplers and solvers here are for research and auditing.

References
----------
[ZVF21] K. Zhu, P. Van Hentenryck, F. Fioretto, AAAI 2021, arXiv:2010.04327.
Boyd et al., "Distributed Optimization and Statistical Learning via the Alternating Direction
Method of Multipliers", Found. Trends Mach. Learn. 3(1), 2011 (not in the README bibliography).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from semidp.accountant.core.arguments import check_int, check_positive
from semidp.accountant.core.errors import InvalidArgument
from semidp.mechanisms.projection import AffineConstraint, FloatArray, check_draws

__all__ = ["CvxpyProjection", "NonnegProjection", "project_nonneg", "project_nonneg_cvxpy"]

#: Default KKT tolerance (relative to max(1, |x~|_inf)).
DEFAULT_TOL = 1e-9
#: Check the KKT residual every this many ADMM iterations (it costs one extra projection).
CHECK_EVERY = 10


@dataclass(frozen=True, eq=False)
class NonnegProjection:
    """Result of :func:`project_nonneg` (one row per draw)."""

    solution: FloatArray
    """The projections, shape ``(draws, n)``; ``>= 0`` exactly."""
    kkt_residual: FloatArray
    """Per-draw KKT residual (module docstring), shape ``(draws,)``, absolute units (counts)."""
    iterations: NDArray[np.int64]
    """ADMM iterations each draw used."""
    tol: float
    """The relative tolerance asked for."""
    converged: NDArray[np.bool_]
    """Per draw: residual <= tol * max(1, |x~|_inf) before ``max_iter``."""

    @property
    def all_converged(self) -> bool:
        """True if every draw met the tolerance."""
        return bool(np.all(self.converged))


def _kkt(c: AffineConstraint, x: FloatArray, z: FloatArray, u: FloatArray, rho: float) -> FloatArray:
    stat = np.max(np.abs(c.subspace.project(z - x + rho * u)), axis=-1)
    feas = c.residual(z)
    out: FloatArray = np.maximum(stat, feas)
    return out


def project_nonneg(
    constraint: AffineConstraint,
    noisy: ArrayLike,
    *,
    tol: float = DEFAULT_TOL,
    max_iter: int = 20000,
    rho: float = 1.0,
    relaxation: float = 1.6,
) -> NonnegProjection:
    r"""Program (P+) for every draw of ``noisy`` (shape ``(draws, n)`` or ``(n,)``) by batched ADMM.

    Iteration (scaled form, over-relaxation :math:`\alpha`):
    :math:`v\leftarrow P_{\{Av=b\}}\bigl((\tilde x+\rho(z-u))/(1+\rho)\bigr)`,
    :math:`\hat v=\alpha v+(1-\alpha)z`, :math:`z\leftarrow\max(\hat v+u,0)`,
    :math:`u\leftarrow u+\hat v-z`. Draws that meet the KKT tolerance are frozen and dropped
    from later iterations.

    Parameters
    ----------
    constraint:
        The set ``A v = b`` (:class:`~semidp.mechanisms.projection.AffineConstraint`); the
        feasible set with ``v >= 0`` must be non-empty.
    noisy:
        Noisy counts, cells on the last axis.
    tol:
        Relative KKT tolerance (module docstring).
    max_iter:
        Iteration cap; draws not converged by then are reported in ``converged``.
    rho, relaxation:
        ADMM penalty (> 0) and over-relaxation in (0, 2).

    Returns
    -------
    NonnegProjection

    Examples
    --------
    >>> c = AffineConstraint.of(np.ones((1, 3)), [3.0])
    >>> r = project_nonneg(c, np.array([[3.0, -1.0, 2.0]]))
    >>> bool(np.allclose(r.solution, [[2.0, 0.0, 1.0]], atol=1e-7)), r.all_converged
    (True, True)
    """
    check_positive("tol", tol)
    check_positive("rho", rho)
    check_int("max_iter", max_iter, minimum=1)
    if not 0.0 < relaxation < 2.0:
        raise InvalidArgument(f"relaxation={relaxation!r} must be in (0, 2).")
    x_in = check_draws("noisy", noisy, constraint.dimension)
    x = np.atleast_2d(x_in).reshape(-1, constraint.dimension)
    d = x.shape[0]
    scale = np.maximum(1.0, np.max(np.abs(x), axis=1))
    z = np.maximum(constraint.project(x), 0.0)
    u = np.zeros_like(x)
    iters = np.zeros(d, dtype=np.int64)
    resid = _kkt(constraint, x, z, u, rho)
    active = np.flatnonzero(resid > tol * scale)
    k = 0
    while active.size and k < max_iter:
        xa, za, ua = x[active], z[active], u[active]
        for _ in range(CHECK_EVERY):
            v = constraint.project((xa + rho * (za - ua)) / (1.0 + rho))
            vh = relaxation * v + (1.0 - relaxation) * za
            za = np.maximum(vh + ua, 0.0)
            ua = ua + vh - za
        k += CHECK_EVERY
        z[active], u[active] = za, ua
        iters[active] = k
        ra = _kkt(constraint, xa, za, ua, rho)
        resid[active] = ra
        active = active[ra > tol * scale[active]]
    conv = resid <= tol * scale
    sol = z if x_in.ndim > 1 else z[0]
    return NonnegProjection(sol.reshape(x_in.shape), resid, iters, float(tol), conv)


@dataclass(frozen=True, eq=False)
class CvxpyProjection:
    """Result of :func:`project_nonneg_cvxpy` (one row per draw)."""

    solution: FloatArray
    """Solver outputs, shape ``(draws, n)`` (NaN rows where the status is not ``optimal``)."""
    status: tuple[str, ...]
    """cvxpy status per draw."""

    @property
    def all_optimal(self) -> bool:
        """True if every solve reported ``optimal`` (``optimal_inaccurate`` does not count, R9)."""
        return all(s == "optimal" for s in self.status)


#: Clarabel settings of the reference path: its defaults (1e-8) leave ~1e-5 errors at degenerate points
#: (e.g. x~ already on a face of the simplex); these bring them to ~1e-7.
CLARABEL_TIGHT: dict[str, float] = {"tol_gap_abs": 1e-12, "tol_gap_rel": 1e-12, "tol_feas": 1e-12, "tol_ktratio": 1e-10}


def project_nonneg_cvxpy(
    constraint: AffineConstraint,
    noisy: ArrayLike,
    *,
    solver: str = "CLARABEL",
    solver_options: dict[str, float] | None = None,
) -> CvxpyProjection:
    r"""Program (P+) by one cvxpy QP solve per draw: the slow reference path.

    ``solver_options`` default to :data:`CLARABEL_TIGHT` for Clarabel and to the solver's own otherwise.

    The equality is imposed as :math:`Q_{\mathcal R}^\top v=Q_{\mathcal R}^\top A^+b` (an
    orthonormal basis of row(A), full row rank, same set as ``A v = b``), so redundant rows
    such as a stacked hierarchy do not reach the solver.

    >>> c = AffineConstraint.of(np.ones((1, 3)), [3.0])
    >>> r = project_nonneg_cvxpy(c, np.array([[3.0, -1.0, 2.0]]))
    >>> r.all_optimal, bool(np.allclose(r.solution, [[2.0, 0.0, 1.0]], atol=1e-6))
    (True, True)
    """
    import cvxpy as cp  # imported here: cvxpy is slow to import and only this reference path needs it

    x = check_draws("noisy", noisy, constraint.dimension)
    rows = np.atleast_2d(x).reshape(-1, constraint.dimension)
    q = constraint.subspace.row_basis
    v = cp.Variable(constraint.dimension)
    p = cp.Parameter(constraint.dimension)
    cons = [v >= 0]
    if q.shape[1]:
        cons.append(q.T @ v == q.T @ constraint.particular)
    prob = cp.Problem(cp.Minimize(cp.sum_squares(v - p)), cons)  # type: ignore[attr-defined]
    opts = dict(CLARABEL_TIGHT) if solver_options is None and solver == "CLARABEL" else dict(solver_options or {})
    out = np.full(rows.shape, np.nan)
    status: list[str] = []
    for i, row in enumerate(rows):
        p.value = row
        try:
            with warnings.catch_warnings():  # "may be inaccurate" is reported through the status instead
                warnings.simplefilter("ignore", UserWarning)
                prob.solve(solver=solver, **opts)  # type: ignore[no-untyped-call]
        except cp.error.SolverError as e:
            status.append(f"solver_error: {e}")
            continue
        status.append(str(prob.status))
        if prob.status == cp.OPTIMAL and v.value is not None:
            out[i] = np.asarray(v.value, dtype=np.float64)
    return CvxpyProjection(out.reshape(x.shape), tuple(status))
