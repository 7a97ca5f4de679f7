r"""Free / dependent cell splits of an integer kernel lattice (Dharangutte, Gao, Gong & Yu 2023, Prop 8).

:math:`\Lambda=\mathbb Z^d\cap\ker\mathbf A` is a coordinate graph over a set F of
:math:`d-r` free cells when the dependent cells D satisfy
:math:`|\det\mathbf A_{R,D}|=g` (the gcd of the maximal minors of the independent
rows R): then every integer :math:`z_F` determines an integer :math:`z_D=\mathbf Mz_F`
and ``[I; M]`` is a lattice basis (certified exactly by :func:`accountant.lattice.kernel.certify`).
Used by the exact rejection samplers of :mod:`mechanisms.lattice_exact`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from semidp.accountant.core.arguments import check_int
from semidp.accountant.core.errors import InvalidArgument, SearchTooLarge, VerificationError
from semidp.accountant.lattice.integer_matrix import (
    IntMatrix,
    column_reduce,
    independent_rows,
    int_matrix,
    int_product,
)
from semidp.accountant.lattice.kernel import LatticeCertificate, certify

__all__ = [
    "MAX_CELLS",
    "MAX_SPLIT_NODES",
    "FreeSplit",
    "NoFreeSplit",
    "exact_product",
    "free_coordinates",
    "search_free_split",
]

#: Largest number of cells for the search and the exact certification of ``[I; M]``.
MAX_CELLS = 500
#: Default budget of the split search (nodes = tentative column choices). Each node costs
#: O(r d) integer operations; 4x4 margins need 7 nodes, 10x12 margins 21 (no backtracking).
MAX_SPLIT_NODES = 2000

# --------------------------------------------------------------------------- split search


@dataclass(frozen=True, eq=False)
class FreeSplit:
    r"""Free / dependent cells of :math:`\Lambda=\mathbb Z^d\cap\ker\mathbf A` with :math:`z_D=\mathbf Mz_F` [DGGY23, Prop. 8].

    Every integer :math:`z_F` gives the lattice point ``complete(z_F)`` and every lattice
    point arises once; ``basis`` = ``[I; M]`` (rows in cell order) is certified exactly.
    """

    cells: int
    """``d``, the number of cells (columns of ``A``)."""
    rows: tuple[int, ...]
    """Indices of the independent rows of ``A`` used (``r`` of them)."""
    free: tuple[int, ...]
    """``F``, the free cells, ascending (``d - r`` of them)."""
    dependent: tuple[int, ...]
    """``D``, the dependent cells, ascending (``r`` of them)."""
    exact: tuple[tuple[int, ...], ...]
    """``M`` (``|D| x |F|``, Python ints): ``z[dependent[i]] = sum_j M[i][j] z[free[j]]``."""
    minor_gcd: int
    """``g``: gcd of the maximal minors of ``A_R`` (= ``|det A_{R,D}|``)."""
    nodes: int
    """Search nodes used."""
    certificate: LatticeCertificate = field(repr=False)
    """:func:`accountant.lattice.kernel.certify` of ``basis`` against ``A`` (exact)."""

    @property
    def matrix(self) -> NDArray[np.int64]:
        """``M`` as int64 (``|D| x |F|``)."""
        return np.array(self.exact, dtype=np.int64).reshape(len(self.dependent), len(self.free))

    @property
    def basis(self) -> NDArray[np.int64]:
        """The lattice basis ``C`` (``d x |F|``): unit rows on ``F``, ``M`` on ``D``."""
        c = np.zeros((self.cells, len(self.free)), dtype=np.int64)
        c[list(self.free), np.arange(len(self.free))] = 1
        c[list(self.dependent), :] = self.matrix
        return c

    def complete(self, z_free: NDArray[np.int64]) -> NDArray[np.int64]:
        """Lattice points ``z`` (..., d) from free coordinates (..., |F|), exact int64 (bounds checked)."""
        zf = np.asarray(z_free)
        if zf.shape[-1:] != (len(self.free),) or not np.issubdtype(zf.dtype, np.integer):
            raise InvalidArgument(f"z_free must be an integer array with last axis {len(self.free)}.")
        z = np.zeros(zf.shape[:-1] + (self.cells,), dtype=np.int64)
        z[..., list(self.free)] = zf
        flat = zf.reshape(math.prod(zf.shape[:-1]), len(self.free)).astype(np.int64)
        z[..., list(self.dependent)] = exact_product(flat, self.matrix).reshape(zf.shape[:-1] + (len(self.dependent),))
        return z


@dataclass(frozen=True)
class NoFreeSplit:
    """No split was found: ``exhaustive`` says whether none exists or the budget ran out."""

    reason: str
    """Human-readable explanation (names the budget or the proof)."""
    exhaustive: bool
    """True: the search covered every column subset, so no valid split exists."""
    nodes: int
    """Search nodes used."""


def _saturated_rows(a: IntMatrix, d: int) -> tuple[list[int], IntMatrix, int]:
    """Independent rows ``R``, the saturated basis ``S = L^{-1} A_R`` of their row lattice, and ``g``.

    ``column_reduce`` gives ``A_R V = [L | 0]`` (``V`` unimodular, ``L`` lower triangular), so
    ``L^{-1} A_R = [I | 0] V^{-1}`` is integral with maximal minors of gcd 1 and the same
    kernel; ``g = |prod diag L|``.
    """
    rows = independent_rows(a)
    ar = [list(a[i]) for i in rows]
    cols, _, piv = column_reduce(ar, d, len(ar), track=False)
    g = abs(math.prod(piv))
    if g == 1:
        return rows, ar, 1
    s: IntMatrix = []
    for i in range(len(ar)):  # forward substitution L S = A_R, exact
        acc = list(ar[i])
        for k in range(i):
            lik = cols[k][i]
            if lik:
                acc = [u - lik * v for u, v in zip(acc, s[k])]
        q = [divmod(u, piv[i]) for u in acc]
        if any(rem for _, rem in q):
            raise VerificationError("L^{-1} A_R is not integral (a bug in the saturation step).")
        s.append([u for u, _ in q])
    return rows, s, g


def _pivot(mat: IntMatrix, rem: list[int], j: int) -> tuple[IntMatrix, int]:
    """Unimodular row operations making column ``j`` a unit vector; returns (matrix, pivot row).

    Euclid on column ``j`` among the rows ``rem`` (its gcd there is 1), then the pivot
    row (entry +1) clears column ``j`` in every other row.
    """
    m = [list(row) for row in mat]
    while True:
        nz = [i for i in rem if m[i][j]]
        p = min(nz, key=lambda i: abs(m[i][j]))
        if len(nz) == 1:
            break
        for i in nz:
            if i != p:
                q = m[i][j] // m[p][j]
                m[i] = [u - q * v for u, v in zip(m[i], m[p])]
    if m[p][j] < 0:
        m[p] = [-u for u in m[p]]
    for i in range(len(m)):
        f = m[i][j]
        if i != p and f:
            m[i] = [u - f * v for u, v in zip(m[i], m[p])]
    return m, p


def search_free_split(A: object, *, max_nodes: int = MAX_SPLIT_NODES) -> FreeSplit | NoFreeSplit:
    r"""Search for free coordinates of :math:`\mathbb Z^d\cap\ker\mathbf A` ([DGGY23, Prop. 8];
    docs/reference/subspace-integer-postprocessing.md §3.2).

    Depth-first over dependent cells: a cell ``j`` can be added while the gcd of its column
    over the not-yet-pivoted (saturated) rows is 1 -- necessary, since every column of a
    unimodular matrix has gcd 1 -- and unimodular row operations then make it a unit
    column. Candidates with a +-1 entry and few nonzeros go first; a failed candidate is
    excluded from its siblings, so every cell subset is tried at most once and an exhausted
    search proves that no split exists. For 0/1 counting matrices that are totally
    unimodular (a total, block totals, two-way margins) the first path succeeds: one cell
    per block; for margins ``r + c - 1`` cells (an anchor row and column up to relabelling).

    Parameters
    ----------
    A:
        Integer ``k x d`` constraint matrix (dependent rows allowed; shape ``(0, d)`` for none).
    max_nodes:
        Search budget (tentative column choices).

    Returns
    -------
    FreeSplit or NoFreeSplit
        The certified split, or the reason none was found.

    Raises
    ------
    InvalidArgument
        Non-integer entries or no columns.
    SearchTooLarge
        More than :data:`MAX_CELLS` cells.

    Examples
    --------
    >>> s = search_free_split([[1, 1, 1]])
    >>> s.free, s.dependent, s.exact
    ((1, 2), (0,), ((-1, -1),))
    >>> search_free_split([[2, 3]]).exhaustive
    True
    """
    a, d = int_matrix("A", A)
    budget = check_int("max_nodes", max_nodes, minimum=1)
    if d < 1:
        raise InvalidArgument("A must have at least one column (cell).")
    if d > MAX_CELLS:
        raise SearchTooLarge(
            "free-coordinate split (exact certification)",
            d,
            MAX_CELLS,
            "Split block-separable invariants and handle each block separately.",
        )
    rows, s, g = _saturated_rows(a, d)
    r = len(s)
    nodes = 0
    hit_budget = False

    def dfs(
        mat: IntMatrix, rem: list[int], chosen: dict[int, int], banned: set[int]
    ) -> tuple[IntMatrix, dict[int, int]] | None:
        nonlocal nodes, hit_budget
        if not rem:
            return mat, chosen
        allowed = [j for j in range(d) if j not in chosen and j not in banned]
        if len(allowed) < len(rem) or any(not any(mat[i][j] for j in allowed) for i in rem):
            return None
        cand = []
        for j in allowed:
            col = [mat[i][j] for i in rem]
            if math.gcd(*col) == 1:
                cand.append((0 if any(abs(v) == 1 for v in col) else 1, sum(map(bool, col)), j))
        tried: set[int] = set()
        for _, _, j in sorted(cand):
            if nodes >= budget:
                hit_budget = True
                return None
            nodes += 1
            m2, p = _pivot(mat, rem, j)
            out = dfs(m2, [i for i in rem if i != p], {**chosen, j: p}, banned | tried)
            if out is not None or hit_budget:
                return out
            tried.add(j)
        return None

    found = dfs(s, list(range(r)), {}, set())
    if found is None:
        if hit_budget:
            return NoFreeSplit(
                f"no split found within max_nodes={budget} search nodes (not a proof; "
                "raise max_nodes, or use the MCMC sampler mechanisms.lattice_mcmc).",
                False,
                nodes,
            )
        return NoFreeSplit(
            f"no r={r} cells D have |det A_(R,D)| = g = {g} (exhaustive search, {nodes} "
            "nodes): no coordinate projection of the lattice is onto Z^(d-r); use the "
            "MCMC sampler mechanisms.lattice_mcmc.",
            True,
            nodes,
        )
    mat, chosen = found
    dep = tuple(sorted(chosen))
    free = tuple(j for j in range(d) if j not in chosen)
    mm = tuple(tuple(-mat[chosen[j]][f] for f in free) for j in dep)
    ccols = [[1 if i == f else 0 for i in range(d)] for f in free]
    for k, _ in enumerate(free):
        for t, j in enumerate(dep):
            ccols[k][j] = mm[t][k]
    if any(v for row in int_product(a, ccols) for v in row):
        raise VerificationError("A [I; M] != 0 for a free-coordinate split (a bug).")
    cert = certify(
        np.array(a, dtype=object).reshape(len(a), d),
        np.array([[col[i] for col in ccols] for i in range(d)], dtype=object).reshape(d, len(free)),
    )
    return FreeSplit(
        cells=d, rows=tuple(rows), free=free, dependent=dep, exact=mm, minor_gcd=g, nodes=nodes, certificate=cert
    )


def free_coordinates(A: object, *, max_nodes: int = MAX_SPLIT_NODES) -> FreeSplit | None:
    """:func:`search_free_split`, returning ``None`` when there is no split [DGGY23, Prop. 8].

    The reason (budget vs proof) is in :func:`search_free_split`'s :class:`NoFreeSplit`.

    Examples
    --------
    >>> free_coordinates([[1, 1, 0, 0], [0, 0, 1, 1]]).dependent     # two block totals
    (0, 2)
    >>> free_coordinates([[3, -2]]) is None
    True
    """
    out = search_free_split(A, max_nodes=max_nodes)
    return out if isinstance(out, FreeSplit) else None


# --------------------------------------------------------------------------- helpers


def exact_product(zf: NDArray[np.int64], m: NDArray[np.int64]) -> NDArray[np.int64]:
    """``zf @ m.T`` exactly (rows of free coordinates times M): float64 BLAS when every partial sum is an integer < 2**53, else int64."""
    if m.size == 0 or zf.shape[0] == 0:
        return np.zeros((zf.shape[0], m.shape[0]), dtype=np.int64)
    bound = int(np.abs(zf).max()) * int(np.abs(m).sum(axis=1).max())
    if bound < 2**53:
        return np.asarray(zf.astype(np.float64) @ m.T.astype(np.float64), dtype=np.float64).astype(np.int64)
    if bound < 2**62:
        return np.asarray(zf @ m.T, dtype=np.int64)
    raise InvalidArgument(f"|z_D| could reach {bound}, beyond int64; the target is too wide.")
