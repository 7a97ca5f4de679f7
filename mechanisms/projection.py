r"""Projection post-processing onto public linear constraints: (P) and, for totals and hierarchies, (P+).

Setting [ZVF21, Sec. 3] (``docs/reference/subspace-integer-postprocessing.md`` §4.1): a noisy
release :math:`\tilde x=x+\eta` of counts :math:`x` that satisfy public constraints
:math:`Ax=b` is post-processed by

.. math::
    (P)\ \ \hat x=\arg\min_{v:\,Av=b}\|v-\tilde x\|_2,\qquad
    (P_+)\ \ \hat x_+=\arg\min_{v:\,Av=b,\ v\ge0}\|v-\tilde x\|_2 .

* :class:`AffineConstraint` -- (P) in closed form :math:`\hat x=\tilde x-A^+(A\tilde x-b)`
  (reference §4.1 [D]); with :math:`b=Ax` this is :math:`x+\Pi_{\ker A}\eta`, i.e. GGY's
  projected mechanism [GGY22, Cor. 3.2/11]. For an integer ``A`` of small rank the map
  :math:`A_r^\top(A_rA_r^\top)^{-1}` (``A_r``: independent rows) is computed in exact
  rational arithmetic and rounded once to float; otherwise the float SVD of
  :class:`~semidp.mechanisms.subspace.InvariantSubspace` (rank tolerance ``1e-10``) is used.
* :func:`project_simplex` -- (P+) for one total (:math:`\mathbf 1^\top v=b`, :math:`v\ge0`):
  Euclidean projection onto the scaled simplex by sort-and-threshold (reference §4.1 [L];
  [HWC74]; Duchi, Shalev-Shwartz, Singer & Chandra 2008, Fig. 1), exact
  up to float rounding, vectorised over any leading axes (e.g. ``(draws, n)``).
* :class:`HierarchicalTotals` -- nested partitions of the leaves (nation / state / county)
  with consistent group totals. The finest level's equalities imply the coarser ones, so (P)
  is a mean shift per finest group and (P+) is one simplex projection per finest group, done
  for all groups and draws in one padded numpy pass.

General ``A`` with non-negativity is in :mod:`semidp.mechanisms.nonneg_projection`.
Arrays of draws have the cells on the **last** axis. Post-processing spends no privacy
budget; these functions are for research and auditing and are not hardened against
floating-point side channels.

References
----------
[ZVF21] K. Zhu, P. Van Hentenryck, F. Fioretto, "Bias and Variance of Post-processing in
Differential Privacy", AAAI 2021, arXiv:2010.04327 (numbering of the arXiv version).
[GGY22] J. Gao, R. Gong, F.-Y. Yu, "Subspace Differential Privacy", AAAI 2022.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
from numpy.typing import ArrayLike, NDArray
from sympy import QQ, ZZ
from sympy.polys.matrices import DomainMatrix

from semidp.accountant.core.errors import InvalidArgument
from semidp.accountant.lattice.integer_matrix import independent_rows, int_gram
from semidp.mechanisms.subspace import RANK_TOL, InvariantSubspace

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]

#: Largest rank for which the (P) map is built in exact rational arithmetic (an r x r rational inverse).
EXACT_MAX_RANK = 32
#: Relative tolerance for "b is in the range of A" and "the hierarchy's totals are consistent".
CONSISTENCY_RTOL = 1e-9

__all__ = [
    "AffineConstraint",
    "HierarchicalTotals",
    "check_draws",
    "project_simplex",
]


def check_draws(name: str, value: ArrayLike, n: int) -> FloatArray:
    """``value`` as a finite float array whose last axis has length ``n`` (one draw per leading index)."""
    v = np.asarray(value, dtype=np.float64)
    if v.ndim < 1 or v.shape[-1] != n:
        raise InvalidArgument(f"{name} has shape {v.shape}; expected cells on the last axis, length n = {n}.")
    if not np.all(np.isfinite(v)):
        raise InvalidArgument(f"{name} has non-finite entries.")
    return v


def _finite_matrix(name: str, value: ArrayLike) -> FloatArray:
    m = np.asarray(value, dtype=np.float64)
    if m.ndim != 2 or m.shape[1] < 1:
        raise InvalidArgument(f"{name} must be a 2-D matrix with at least one column; got shape {m.shape}.")
    if not np.all(np.isfinite(m)):
        raise InvalidArgument(f"{name} has non-finite entries.")
    return m


def _exact_pinv_map(a: FloatArray) -> tuple[list[int], FloatArray] | None:
    r"""Rows ``R`` of a maximal independent set and :math:`A_R^\top(A_RA_R^\top)^{-1}` rounded once to float.

    ``None`` when ``A`` is not integer-valued (|entries| < 2**31) or its rank exceeds
    :data:`EXACT_MAX_RANK` (the caller then uses the float SVD).
    """
    if not (np.all(a == np.round(a)) and np.all(np.abs(a) < 2**31)):
        return None
    rows = [[int(v) for v in row] for row in a.astype(np.int64).tolist()]
    keep = independent_rows(rows)
    if not keep or len(keep) > EXACT_MAX_RANK:
        return None
    ar = [rows[i] for i in keep]
    r = len(ar)
    gram = DomainMatrix([[ZZ(v) for v in row] for row in int_gram(ar)], (r, r), ZZ).convert_to(QQ)
    ginv = gram.inv().to_list()
    n = a.shape[1]
    out = np.empty((n, r), dtype=np.float64)
    for i in range(n):  # (A_R^T G^{-1})_{ik} = sum_j A_R[j][i] G^{-1}[j][k], exact then rounded once
        col = [Fraction(ar[j][i]) for j in range(r)]
        for k in range(r):
            s = sum(
                (c * Fraction(int(ginv[j][k].numerator), int(ginv[j][k].denominator)) for j, c in enumerate(col) if c),
                Fraction(0),
            )
            out[i, k] = float(s)
    return keep, out


@dataclass(frozen=True, eq=False)
class AffineConstraint:
    r"""The public constraint set :math:`\{v: Av=b\}` and program (P) onto it [ZVF21, Sec. 3].

    >>> c = AffineConstraint.of(np.ones((1, 4)), [10.0])
    >>> c.project(np.array([1.0, 2.0, 3.0, 6.0]))          # x~ - (sum(x~) - b)/n
    array([0.5, 1.5, 2.5, 5.5])
    >>> c.exact
    True
    """

    matrix: FloatArray
    """A, shape ``(m, n)``."""
    rhs: FloatArray
    """b, shape ``(m,)``; checked to lie in the range of A."""
    subspace: InvariantSubspace
    r"""ker A and row(A) (float SVD, rank tolerance ``1e-10`` [reference §1])."""
    particular: FloatArray
    r"""The minimum-norm solution :math:`A^+b` (shape ``(n,)``)."""
    exact: bool
    r"""True if (P) applies the exactly computed :math:`A_R^\top(A_RA_R^\top)^{-1}` (rounded once)."""
    rows: tuple[int, ...]
    """Indices R of independent rows used by the exact map (empty for the float path)."""
    pinv_map: FloatArray
    r""":math:`A_R^\top(A_RA_R^\top)^{-1}` (``(n, |R|)``) on the exact path; ``(n, 0)`` otherwise."""

    @classmethod
    def of(cls, matrix: ArrayLike, rhs: ArrayLike) -> AffineConstraint:
        """Validate A and b; raise :class:`InvalidArgument` if ``Av = b`` has no solution or fixes every cell."""
        a = _finite_matrix("matrix", matrix)
        b = np.asarray(rhs, dtype=np.float64).reshape(-1) if np.ndim(rhs) <= 1 else np.asarray(rhs, dtype=np.float64)
        if b.ndim != 1 or b.size != a.shape[0]:
            raise InvalidArgument(f"rhs has shape {np.shape(rhs)}; expected ({a.shape[0]},), one entry per row of A.")
        if not np.all(np.isfinite(b)):
            raise InvalidArgument("rhs has non-finite entries.")
        sub = InvariantSubspace.of(a)
        exact_map = _exact_pinv_map(a)
        if exact_map is not None:
            keep, m = exact_map
            v0 = m @ b[keep]
        else:
            keep, m = [], np.zeros((a.shape[1], 0))
            v0 = np.asarray(np.linalg.lstsq(a, b, rcond=RANK_TOL)[0], dtype=np.float64)
        resid = float(np.max(np.abs(a @ v0 - b))) if b.size else 0.0
        scale = 1.0 + float(np.max(np.abs(b))) if b.size else 1.0
        if resid > CONSISTENCY_RTOL * scale * max(1.0, float(np.max(np.abs(a))) * a.shape[1]):
            raise InvalidArgument(
                f"rhs is not in the range of matrix: the constraints A v = b are inconsistent (least-squares "
                f"residual {resid:.3g}). Check that b = A x for the true counts x."
            )
        return cls(a, b, sub, np.asarray(v0, dtype=np.float64), exact_map is not None, tuple(keep), m)

    @classmethod
    def total(cls, n: int, total: float) -> AffineConstraint:
        r"""One sum constraint :math:`\mathbf 1^\top v=b` (program :math:`(P_S)` [ZVF21, Sec. 6])."""
        if isinstance(n, bool) or not isinstance(n, int) or n < 2:
            raise InvalidArgument(f"n={n!r} must be an integer >= 2 (one total over n cells).")
        return cls.of(np.ones((1, n)), [total])

    @property
    def dimension(self) -> int:
        """n, the number of cells."""
        return int(self.matrix.shape[1])

    def project(self, noisy: ArrayLike) -> FloatArray:
        r"""Program (P): :math:`\tilde x-A^+(A\tilde x-b)` along the last axis [ZVF21, Sec. 3; reference §4.1].

        On the exact path this is :math:`\tilde x-(A_R\tilde x-b_R)\,(A_R^\top(A_RA_R^\top)^{-1})^\top`;
        otherwise :math:`\Pi_{\ker A}\tilde x+A^+b`.
        """
        x = check_draws("noisy", noisy, self.dimension)
        if self.exact:
            r = x @ self.matrix[list(self.rows)].T - self.rhs[list(self.rows)]
            out: FloatArray = x - r @ self.pinv_map.T
            return out
        return self.subspace.project(x) + self.particular

    def residual(self, v: ArrayLike) -> FloatArray:
        r""":math:`\|Av-b\|_\infty` per draw (leading axes kept)."""
        x = check_draws("v", v, self.dimension)
        out: FloatArray = np.max(np.abs(x @ self.matrix.T - self.rhs), axis=-1)
        return out


def _threshold(sorted_desc: FloatArray, totals: FloatArray, sizes: IntArray | None) -> FloatArray:
    r"""The simplex threshold :math:`\tau` along the last axis of values sorted in decreasing order.

    :math:`\rho=\max\{j: j\,u_j>\sum_{i\le j}u_i-b\}` (positions ``j >= sizes`` are padding and
    excluded), :math:`\tau=(\sum_{i\le\rho}u_i-b)/\rho`; if no ``j`` qualifies (only when
    :math:`b=0`) :math:`\rho=1`, which gives :math:`\tau=u_1` and the output 0.
    """
    k = sorted_desc.shape[-1]
    j = np.arange(1, k + 1, dtype=np.float64)
    css = np.cumsum(sorted_desc, axis=-1) - totals[..., None]
    cond = sorted_desc * j > css
    if sizes is not None:
        cond &= np.arange(k) < sizes[..., None]
    last = k - np.argmax(cond[..., ::-1], axis=-1)  # largest qualifying j (robust to a non-prefix from rounding)
    rho = np.where(np.any(cond, axis=-1), last, 1)
    tau: FloatArray = np.take_along_axis(css, (rho - 1)[..., None], axis=-1)[..., 0] / rho
    return tau


def project_simplex(noisy: ArrayLike, total: ArrayLike) -> FloatArray:
    r"""Program (P+) for one total: the projection onto :math:`\{v\ge0,\ \mathbf 1^\top v=b\}`, batched.

    Sort-and-threshold [reference §4.1 [L]; Duchi et al. 2008, Fig. 1]: sort each draw
    decreasingly (:math:`u`), :math:`\rho=\max\{j:u_j-(\sum_{i\le j}u_i-b)/j>0\}`,
    :math:`\tau=(\sum_{i\le\rho}u_i-b)/\rho`, :math:`\hat x_+=\max(\tilde x-\tau,0)`.
    One ``numpy.sort`` over the last axis, :math:`O(n\log n)` per draw.

    Parameters
    ----------
    noisy:
        Noisy counts, shape ``(..., n)``; every leading index is one draw.
    total:
        b >= 0, a scalar or an array broadcastable to the leading shape.

    Returns
    -------
    numpy.ndarray
        Same shape as ``noisy``; entries >= 0 exactly, each draw summing to b up to rounding.

    Raises
    ------
    InvalidArgument
        If ``noisy`` or ``total`` is not finite, or a total is negative (empty feasible set).

    Examples
    --------
    >>> project_simplex(np.array([[3.0, -1.0, 2.0], [1.0, 1.0, 1.0]]), 3.0)
    array([[2., 0., 1.],
           [1., 1., 1.]])
    """
    x = np.asarray(noisy, dtype=np.float64)
    if x.ndim < 1 or x.shape[-1] < 1:
        raise InvalidArgument(f"noisy has shape {x.shape}; expected cells on the last axis (n >= 1).")
    x = check_draws("noisy", x, x.shape[-1])
    t = np.asarray(total, dtype=np.float64)
    if not np.all(np.isfinite(t)) or np.any(t < 0):
        raise InvalidArgument(f"total={total!r} must be finite and >= 0 ({{v >= 0, sum v = b}} is empty for b < 0).")
    try:
        tb = np.broadcast_to(t, x.shape[:-1]).astype(np.float64)
    except ValueError as e:
        raise InvalidArgument(
            f"total has shape {t.shape}; it must broadcast to the draws' shape {x.shape[:-1]}."
        ) from e
    u = -np.sort(-x, axis=-1)
    tau = _threshold(u, tb, None)
    out: FloatArray = np.maximum(x - tau[..., None], 0.0)
    return out


def _labels(name: str, value: ArrayLike, n: int | None) -> tuple[IntArray, int]:
    lab = np.asarray(value)
    if lab.ndim != 1 or lab.size == 0 or (n is not None and lab.size != n):
        raise InvalidArgument(f"{name} has shape {lab.shape}; expected one group label per leaf, shape ({n},).")
    if not np.issubdtype(lab.dtype, np.integer):
        raise InvalidArgument(f"{name} must hold integer group labels 0..g-1; got dtype {lab.dtype}.")
    g = int(lab.max()) + 1
    if int(lab.min()) < 0 or np.unique(lab).size != g:
        raise InvalidArgument(
            f"{name} must use every group label 0..g-1 exactly as group ids (found {np.unique(lab)})."
        )
    return lab.astype(np.int64), g


@dataclass(frozen=True, eq=False)
class HierarchicalTotals:
    r"""Nested sum constraints (e.g. nation / state / county) as a first-class invariant shape.

    Level ``l`` partitions the ``n`` leaves into groups ``0..g_l-1`` with public totals; each
    level refines the one before (coarse to fine) and totals add up. Then the constraints of the
    finest level imply all others, so (P) and (P+) decouple into one independent problem per
    finest group [ZVF21, Sec. 3 programs; reference §4.1].

    >>> h = HierarchicalTotals.of([[0, 0, 0, 0], [0, 0, 1, 1]], [[10.0], [4.0, 6.0]])
    >>> h.project_nonneg(np.array([5.0, -1.0, 3.0, 3.0]))
    array([4., 0., 3., 3.])
    """

    labels: tuple[IntArray, ...]
    """Group label of every leaf, one array of shape ``(n,)`` per level, coarse to fine."""
    totals: tuple[FloatArray, ...]
    """Public totals, one array of shape ``(g_l,)`` per level."""

    @classmethod
    def of(cls, labels: Sequence[ArrayLike], totals: Sequence[ArrayLike]) -> HierarchicalTotals:
        """Validate nesting, labels and consistency of totals (relative tolerance ``1e-9``)."""
        if len(labels) == 0 or len(labels) != len(totals):
            raise InvalidArgument(
                f"labels and totals must be non-empty and of equal length (one entry per level); got "
                f"{len(labels)} and {len(totals)}."
            )
        labs: list[IntArray] = []
        tots: list[FloatArray] = []
        n: int | None = None
        for lvl, (lab_in, tot_in) in enumerate(zip(labels, totals)):
            lab, g = _labels(f"labels[{lvl}]", lab_in, n)
            n = lab.size
            tot = np.asarray(tot_in, dtype=np.float64).reshape(-1)
            if tot.size != g:
                raise InvalidArgument(f"totals[{lvl}] has {tot.size} entries; labels[{lvl}] defines {g} groups.")
            if not np.all(np.isfinite(tot)) or np.any(tot < 0):
                raise InvalidArgument(f"totals[{lvl}] must be finite and >= 0.")
            if labs:
                coarse, ctot = labs[-1], tots[-1]
                parent = np.full(g, -1, dtype=np.int64)
                parent[lab] = coarse
                if np.any(parent[lab] != coarse):
                    raise InvalidArgument(
                        f"labels[{lvl}] does not refine labels[{lvl - 1}]: some group of level {lvl} straddles two "
                        "groups of the level above. Crossed partitions (e.g. two-way margins) are not a hierarchy; "
                        "use mechanisms.nonneg_projection with the stacked constraint matrix."
                    )
                sums = np.bincount(parent, weights=tot, minlength=ctot.size)
                bad = np.abs(sums - ctot) > CONSISTENCY_RTOL * np.maximum(1.0, np.abs(ctot))
                if np.any(bad):
                    k = int(np.flatnonzero(bad)[0])
                    raise InvalidArgument(
                        f"totals[{lvl}] are inconsistent with totals[{lvl - 1}]: group {k} of level {lvl - 1} has "
                        f"total {ctot[k]!r} but its subgroups add up to {sums[k]!r}."
                    )
            labs.append(lab)
            tots.append(tot)
        return cls(tuple(labs), tuple(tots))

    @classmethod
    def from_counts(cls, labels: Sequence[ArrayLike], counts: ArrayLike) -> HierarchicalTotals:
        """The hierarchy whose totals are those of the true leaf ``counts`` (shape ``(n,)``)."""
        if len(labels) == 0:
            raise InvalidArgument("labels must list at least one level.")
        first, _ = _labels("labels[0]", labels[0], None)
        x = check_draws("counts", counts, first.size)
        if x.ndim != 1:
            raise InvalidArgument(f"counts has shape {x.shape}; expected ({first.size},).")
        tots = [np.bincount(_labels(f"labels[{i}]", lab, x.size)[0], weights=x) for i, lab in enumerate(labels)]
        return cls.of(labels, tots)

    @property
    def dimension(self) -> int:
        """n, the number of leaves."""
        return int(self.labels[0].size)

    @property
    def finest(self) -> IntArray:
        """Labels of the finest level."""
        return self.labels[-1]

    def group_sizes(self) -> IntArray:
        """Number of leaves in each finest group."""
        out: IntArray = np.bincount(self.finest).astype(np.int64)
        return out

    def constraint(self) -> AffineConstraint:
        """All levels stacked as one (rank-deficient) ``A v = b``, for the general-A paths and tests."""
        rows = [np.eye(int(t.size))[lab].T for lab, t in zip(self.labels, self.totals)]
        return AffineConstraint.of(np.vstack(rows), np.concatenate(self.totals))

    def project(self, noisy: ArrayLike) -> FloatArray:
        r"""Program (P): per finest group g, :math:`\tilde x_i-(\sum_{j\in g}\tilde x_j-T_g)/|g|` [reference §4.5 form]."""
        x = check_draws("noisy", noisy, self.dimension)
        lab = self.finest
        sums = x @ np.eye(self.totals[-1].size)[lab]  # (..., G) group sums
        shift = (sums - self.totals[-1]) / self.group_sizes()
        out: FloatArray = x - shift[..., lab]
        return out

    def _gather_index(self) -> tuple[IntArray, IntArray]:
        """``(G, S)`` leaf indices per finest group, padded with ``n`` (a ``-inf`` column), and the sizes."""
        sizes = self.group_sizes()
        order = np.argsort(self.finest, kind="stable")
        starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
        s = int(sizes.max())
        pos = np.arange(s)[None, :]
        idx = np.where(
            pos < sizes[:, None], order[np.minimum(starts[:, None] + pos, self.dimension - 1)], self.dimension
        )
        return idx.astype(np.int64), sizes

    def project_nonneg(self, noisy: ArrayLike) -> FloatArray:
        r"""Program (P+): one simplex projection per finest group, all groups and draws in one pass.

        Each group's leaves are gathered into a ``(..., G, S)`` array padded with ``-inf``
        (``S`` the largest group), sorted once, thresholded as in :func:`project_simplex`
        with the padding excluded, and scattered back.
        """
        x = check_draws("noisy", noisy, self.dimension)
        idx, sizes = self._gather_index()
        pad = np.concatenate([x, np.full(x.shape[:-1] + (1,), -np.inf)], axis=-1)
        u = -np.sort(-pad[..., idx], axis=-1)
        u = np.where(np.isfinite(u), u, 0.0)  # padding sits at the end of each sorted group
        tot = np.broadcast_to(self.totals[-1], u.shape[:-1])
        tau = _threshold(u, tot, np.broadcast_to(sizes, u.shape[:-1]))
        out: FloatArray = np.maximum(x - tau[..., self.finest], 0.0)
        return out

    def max_deviation(self, counts: ArrayLike) -> float:
        r""":math:`C'=\sup_{v\in\mathcal K}\|v-x\|_\infty=\max_i\max(x_i,T_{g(i)}-x_i)` for the finest groups [ZVF21, Thm. 4].

        Each leaf ranges over :math:`[0,T_{g(i)}]` on :math:`\mathcal K` (a group of one leaf is fixed).
        """
        x = check_draws("counts", counts, self.dimension)
        if x.ndim != 1:
            raise InvalidArgument(f"counts has shape {x.shape}; expected ({self.dimension},).")
        t = self.totals[-1][self.finest]
        single = self.group_sizes()[self.finest] == 1
        dev = np.where(single, np.abs(t - x), np.maximum(x, t - x))
        return float(np.max(dev))
