r"""Integer kernel lattices of counting invariants (Dharangutte, Gao, Gong & Yu 2023, Prop 8).

For an integer constraint matrix :math:`\mathbf A\in\mathbb Z^{k\times d}` of rank
:math:`r`, the outputs of an :math:`\mathcal A`-invariant integer mechanism lie in
the coset :math:`x+\Lambda`, :math:`\Lambda=\mathbb Z^d\cap\ker\mathbf A`, a lattice of
dimension :math:`m=d-r` [DGGY23, Prop 8]. :func:`kernel_lattice_basis` returns a
:math:`d\times m` integer matrix :math:`\mathbf C` with :math:`\Lambda=\mathbf C\mathbb Z^m`, by

* ``"snf"`` -- Smith normal form ``D = S A T`` (``sympy`` >= 1.14
  ``smith_normal_decomp``); the basis is the **last m columns** of ``T`` (the
  paper says rows: a slip, ``docs/reference/subspace-integer-postprocessing.md`` §3.2);
* ``"column-reduction"`` -- extended-gcd integer column reduction
  ``A V = [L | 0]`` with ``V`` unimodular (reference §3.2), our own exact code;
* ``"block"`` -- closed form for a single total or totals over disjoint cell
  blocks: consecutive differences :math:`e_{c_t}-e_{c_{t+1}}` inside each block
  and unit vectors for uncovered cells (moves touch two neighbours, which mixes
  better in MCMC than :math:`e_j-e_{\text{first}}`).

Whatever the method, the basis is accepted only after :func:`certify` has
checked exactly, in Python integers: (i) ``A C = 0``; (ii) ``rank C = d - r``;
(iii) saturation -- the gcd of the maximal minors of ``C`` (the product of its
invariant factors, the index of :math:`\mathbf C\mathbb Z^m` in :math:`\Lambda`) is 1.
(i)+(ii) give :math:`\operatorname{span}\mathbf C=\ker\mathbf A`; (iii) then gives
:math:`\mathbf C\mathbb Z^m=\mathbb Z^d\cap\ker\mathbf A`. ``DomainMatrix.nullspace()``
fails (iii) (reference §3.2 pitfall, T-I11).

References
----------
[DGGY23] Dharangutte, Gao, Gong, Yu, "Integer Subspace Differential Privacy", AAAI 2023,
Def 1, Prop 8, Lemma 11, Thm 12.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
from numpy.typing import NDArray

from semidp.accountant.core.arguments import check_int
from semidp.accountant.core.directed import MP, up
from semidp.accountant.core.errors import InvalidArgument, SearchTooLarge, VerificationError
from semidp.accountant.data.dataspace import DataSpace
from semidp.accountant.data.invariants import Invariant
from semidp.accountant.lattice.integer_matrix import (
    IntMatrix,
    column_reduce,
    det_psd,
    independent_rows,
    int_gram,
    int_matrix,
    int_product,
)

__all__ = [
    "GRAM_DIRECT_LIMIT",
    "MAX_CELLS_BLOCK",
    "MAX_CELLS_EXACT",
    "MAX_CELLS_SNF",
    "MAX_LLL_DIMENSION",
    "LatticeBasis",
    "LatticeCertificate",
    "basic_move_basis",
    "basis_for",
    "basis_from_columns",
    "certify",
    "counting_matrix",
    "kernel_lattice_basis",
    "table_margins_matrix",
    "tail_constant",
    "total_matrix",
]

#: Largest ``d`` (cells) for column reduction (Python ints, no gmpy2, including
#: certification); covers 15x20 table margins (35x300). Timed by ``benchmarks/lattice.py``.
MAX_CELLS_EXACT = 300
#: Largest ``d`` for ``method="snf"`` (sympy ``smith_normal_decomp``, much slower than
#: column reduction: it grows steeply past ~200 cells).
MAX_CELLS_SNF = 200
#: Largest ``d`` for the closed-form block basis (certification is O(d^2)).
MAX_CELLS_BLOCK = 1000
#: Largest lattice dimension ``m`` for LLL (sympy ``DomainMatrix.lll``, pure
#: Python); covers 10x12 margins (m = 99).
MAX_LLL_DIMENSION = 120
#: Gram determinants of bases with at most this many columns are computed twice
#: (directly, modular + CRT, and by the duality identity) and compared.
GRAM_DIRECT_LIMIT = 150

Method = Literal["auto", "snf", "column-reduction", "block"]


@dataclass(frozen=True, slots=True)
class LatticeCertificate:
    r"""Exact proof that ``C`` is a basis of :math:`\mathbb Z^d\cap\ker\mathbf A` [DGGY23, Prop 8].

    All three checks of reference §3.2 are done in Python integers; a
    certificate exists only if all passed (:func:`certify` raises otherwise).
    """

    cells: int
    """``d``, the number of histogram cells (columns of ``A``, rows of ``C``)."""
    constraint_rows: int
    """``k``, the number of rows of ``A`` (dependent rows allowed)."""
    rank_of_A: int
    """``r = rank A`` (exact fraction-free elimination)."""
    rank_of_C: int
    """``rank C`` (exact); equals ``d - r`` (check ii)."""
    max_abs_AC: int
    """``max |(A C)_{ij}|``; 0 (check i)."""
    saturation_index: int
    """gcd of the maximal minors of ``C`` = product of its invariant factors = index of
    ``C Z^m`` in ``Z^d ∩ span C``; 1 (check iii, by unimodular column reduction of ``C^T``)."""


def certify(A: object, C: object) -> LatticeCertificate:
    r"""Certify that the columns of ``C`` are a :math:`\mathbb Z`-basis of :math:`\mathbb Z^d\cap\ker\mathbf A`.

    Implements the three validity checks of [DGGY23, Prop 8] as corrected in
    reference §3.2: (i) ``A C = 0``; (ii) ``rank C = d - rank A``; (iii) the
    invariant factors of ``C`` are all 1, i.e. the gcd of its maximal minors is 1.
    All arithmetic is exact (Python integers).

    Parameters
    ----------
    A:
        Integer ``k x d`` constraint matrix (numpy array or nested lists).
    C:
        Integer ``d x m`` candidate basis (columns are lattice vectors).

    Returns
    -------
    LatticeCertificate

    Raises
    ------
    InvalidArgument
        Non-integer entries or incompatible shapes.
    VerificationError
        Naming the failed check: ``(i) A C = 0``, ``(ii) rank`` or ``(iii) saturation``
        (with the index, e.g. 3 for sympy's ``nullspace`` of ``[[1,2,3],[4,5,6]]``).

    Examples
    --------
    >>> certify([[1, 1, 1]], [[1, 0], [-1, 1], [0, -1]]).saturation_index
    1
    """
    a, d = int_matrix("A", A)
    c, m = int_matrix("C", C)
    if len(c) != d:
        raise InvalidArgument(f"C has {len(c)} rows but A has {d} columns; C must be d x m.")
    return _certify(a, d, [[c[i][j] for i in range(d)] for j in range(m)])


def _certify(a: IntMatrix, d: int, ccols: IntMatrix) -> LatticeCertificate:
    """:func:`certify` on parsed input (``ccols`` = the columns of ``C``)."""
    m = len(ccols)
    prod = int_product(a, ccols)
    worst = max((abs(x) for row in prod for x in row), default=0)
    if worst:
        raise VerificationError(
            f"check (i) A C = 0 failed: max |(A C)_ij| = {worst}; some column of C is not in the kernel of A."
        )
    r = len(independent_rows(a))
    _, _, piv = column_reduce(ccols, d, m, track=False)
    if len(piv) != m or m != d - r:
        raise VerificationError(
            f"check (ii) rank failed: rank C = {len(piv)} with {m} columns, but d - rank A = {d} - {r} = {d - r}."
        )
    index = abs(math.prod(piv))
    if index != 1:
        raise VerificationError(
            f"check (iii) saturation failed: C generates a sublattice of index "
            f"{index} in Z^d ∩ ker A (invariant factors not all 1). Integer "
            "nullspace vectors are not necessarily a lattice basis."
        )
    return LatticeCertificate(
        cells=d, constraint_rows=len(a), rank_of_A=r, rank_of_C=len(piv), max_abs_AC=0, saturation_index=index
    )


# --------------------------------------------------------------------------- basis object


@dataclass(frozen=True, slots=True)
class LatticeBasis:
    r"""A certified :math:`\mathbb Z`-basis of :math:`\Lambda=\mathbb Z^d\cap\ker\mathbf A` [DGGY23, Prop 8].

    Build with :func:`kernel_lattice_basis`, :func:`basis_from_columns` or
    :func:`basis_for`; every instance carries the :class:`LatticeCertificate`
    of its exact checks. Noise for an :math:`\mathcal A`-invariant mechanism is
    ``C s`` for integer coordinates ``s`` (reference §3.5).
    """

    exact: tuple[tuple[int, ...], ...]
    """``C`` as ``d`` rows of ``m`` Python ints (exact)."""
    matrix: NDArray[np.int64] = field(compare=False, repr=False)
    """``C`` as a read-only ``d x m`` int64 array."""
    rank_of_A: int
    """``r = rank A``."""
    dimension: int
    """``m = d - r``, the lattice dimension (number of columns)."""
    method: str
    """The method actually used: ``"snf"``, ``"column-reduction"``, ``"block"`` or ``"given"``."""
    reduced: bool
    """Whether LLL reduction (``DomainMatrix.lll``, delta = 3/4) was applied."""
    gram_determinant: int
    r"""Exact :math:`\det(\mathbf C^\top\mathbf C)` (basis-free: the squared covolume)."""
    certificate: LatticeCertificate
    """The exact checks (i)-(iii) passed by ``C``."""
    note: str = ""
    """Why the requested method or reduction was not used, if so."""

    @property
    def cells(self) -> int:
        """``d``, the number of histogram cells."""
        return len(self.exact)

    def coordinates(self, z: object) -> tuple[int, ...]:
        """Exact integer ``s`` with ``C s = z`` for a lattice point ``z`` [DGGY23, Prop 8].

        ``z`` is mapped by the same unimodular column reduction of ``C^T`` as in
        check (iii); the triangular system with unit pivots is solved in
        integers and ``C s = z`` is re-checked exactly.

        Raises
        ------
        InvalidArgument
            ``z`` has the wrong length, non-integer entries, or is not in the lattice.

        Examples
        --------
        >>> b = kernel_lattice_basis([[1, 1, 1]])
        >>> b.coordinates([2, -5, 3])
        (2, -3)
        """
        if not isinstance(z, (list, tuple, np.ndarray)) or np.ndim(z) != 1:
            raise InvalidArgument(f"z={z!r} must be a 1-D integer vector of length {self.cells}.")
        (zz,), d = int_matrix("z", [list(z)])
        if d != self.cells:
            raise InvalidArgument(f"z has length {d}; the lattice lives in Z^{self.cells}.")
        m = self.dimension
        ct = [list(col) for col in zip(*self.exact)] if m else []
        cols, _, piv = column_reduce(ct + [zz], d, m, track=False)
        y = [cols[j][m] for j in range(d)]
        s = [0] * m
        for j in range(m - 1, -1, -1):  # s^T L = y[:m], L lower triangular, diag = piv
            num = y[j] - sum(s[t] * cols[j][t] for t in range(j + 1, m))
            q, rem = divmod(num, piv[j])
            if rem:
                raise InvalidArgument(f"z={zz} is not in the lattice (non-integer coordinate).")
            s[j] = q
        if any(sum(row[t] * s[t] for t in range(m)) != zz[i] for i, row in enumerate(self.exact)):
            raise InvalidArgument(f"z={zz} is not in the lattice (z is not in ker A).")
        return tuple(s)


def _int64(cols: IntMatrix, d: int) -> NDArray[np.int64]:
    big = max((max(map(abs, col)) for col in cols), default=0)
    if big >= 2**63:
        raise SearchTooLarge(
            "largest basis entry (int64 matrix)",
            big,
            2**63 - 1,
            f"LLL (reduce=True) shrinks entries but only up to dimension "
            f"{MAX_LLL_DIMENSION}; split the constraints into independent blocks.",
        )
    mat = np.array(cols, dtype=np.int64).reshape(len(cols), d).T.copy()
    mat.flags.writeable = False
    return mat


def _lll(cols: IntMatrix) -> IntMatrix | None:
    """LLL-reduced rows of ``C^T`` (same lattice), or None when sympy lacks ``DomainMatrix.lll``."""
    try:
        from sympy import ZZ
        from sympy.polys.matrices import DomainMatrix

        lll = DomainMatrix.lll
    except (ImportError, AttributeError):
        return None
    dm = DomainMatrix([[ZZ(v) for v in col] for col in cols], (len(cols), len(cols[0])), ZZ)
    return [[int(v) for v in row] for row in lll(dm).to_list()]


def _gram_determinant(a: IntMatrix, d: int, cols: IntMatrix) -> int:
    r"""Exact :math:`\det(\mathbf C^\top\mathbf C)` of a certified basis ``C`` of :math:`\mathbb Z^d\cap\ker\mathbf A`.

    By duality of primitive lattices (:math:`\det\Lambda=\det\Lambda^\perp`, with
    :math:`\Lambda^\perp` the saturation of the row lattice of ``A``):
    :math:`\det(\mathbf C^\top\mathbf C)=\det(\mathbf A_r\mathbf A_r^\top)/g^2`, ``A_r`` a maximal set of
    independent rows and ``g`` the gcd of its maximal minors (reference §3.2: equals
    :math:`\det(\mathbf A\mathbf A^\top)` for a saturated full-rank ``A``). For ``m <=``
    :data:`GRAM_DIRECT_LIMIT` the determinant is also computed directly and compared.
    """
    ar = [a[i] for i in independent_rows(a)]
    _, _, piv = column_reduce(ar, d, len(ar), track=False)
    g = math.prod(piv)
    value, rem = divmod(det_psd(int_gram(ar)), g * g)
    if rem:
        raise VerificationError(f"det(A_r A_r^T) is not divisible by g^2 = {g * g} (a bug).")
    if len(cols) <= GRAM_DIRECT_LIMIT and det_psd(int_gram(cols)) != value:
        raise VerificationError(f"direct det(C^T C) disagrees with the dual value {value} (a bug).")
    return value


def _build(a: IntMatrix, d: int, cols: IntMatrix, method: str, reduced: bool, note: str) -> LatticeBasis:
    cert = _certify(a, d, cols)
    return LatticeBasis(
        exact=tuple(tuple(col[i] for col in cols) for i in range(d)),
        matrix=_int64(cols, d),
        rank_of_A=cert.rank_of_A,
        dimension=len(cols),
        method=method,
        reduced=reduced,
        gram_determinant=_gram_determinant(a, d, cols),
        certificate=cert,
        note=note,
    )


def _blocks(a: IntMatrix, d: int) -> list[list[int]] | None:
    """Cell blocks if every nonzero row is constant on its support and supports are disjoint."""
    supports: list[list[int]] = []
    seen: set[tuple[int, ...]] = set()
    covered: set[int] = set()
    for row in a:
        sup = [j for j in range(d) if row[j]]
        if not sup:
            continue
        if len({row[j] for j in sup}) != 1:
            return None
        key = tuple(sup)
        if key in seen:
            continue
        if covered.intersection(sup):
            return None
        seen.add(key)
        covered.update(sup)
        supports.append(sup)
    return supports + [[j] for j in range(d) if j not in covered]


def kernel_lattice_basis(
    A: object, *, method: Method = "auto", reduce: bool | Literal["auto"] = "auto"
) -> LatticeBasis:
    r"""A certified integer basis of the noise lattice :math:`\mathbb Z^d\cap\ker\mathbf A` [DGGY23, Prop 8].

    Parameters
    ----------
    A:
        Integer ``k x d`` constraint matrix (e.g. :func:`counting_matrix`); rank
        deficiency is allowed (``r = rank A`` is used). Use an array of shape
        ``(0, d)`` for no constraint.
    method:
        ``"auto"`` (closed form for a total or disjoint block totals, else
        column reduction), ``"snf"`` (sympy >= 1.14; falls back to column
        reduction, recorded in ``note``), ``"column-reduction"`` or ``"block"``.
    reduce:
        LLL reduction (sympy ``DomainMatrix.lll`` on ``C^T``, same lattice, shorter
        vectors): ``"auto"`` applies it when some entry exceeds 1 in absolute value
        and ``m <=`` :data:`MAX_LLL_DIMENSION` (else skipped, said in ``note``);
        ``True`` always (:class:`SearchTooLarge` above the limit); ``False`` never.
        Not applied to the closed form (its vectors already have the minimal
        length :math:`\sqrt2`). Without sympy's LLL the unreduced basis is kept
        and ``note`` says so.

    Returns
    -------
    LatticeBasis
        ``d x m`` basis with ``m = d - r``, its exact Gram determinant and certificate.

    Raises
    ------
    InvalidArgument
        Non-integer entries, unknown method, or ``"block"`` on a non-block matrix.
    SearchTooLarge
        ``d`` above :data:`MAX_CELLS_EXACT` (:data:`MAX_CELLS_BLOCK` for the closed form,
        :data:`MAX_CELLS_SNF` for ``"snf"``), or entries beyond int64 without LLL.

    Examples
    --------
    >>> b = kernel_lattice_basis([[1, 1, 1, 1]])     # single total, d = 4
    >>> b.matrix.T.tolist(), b.gram_determinant, b.method
    ([[1, -1, 0, 0], [0, 1, -1, 0], [0, 0, 1, -1]], 4, 'block')
    """
    a, d = int_matrix("A", A)
    if d < 1:
        raise InvalidArgument("A must have at least one column (cell).")
    if method not in ("auto", "snf", "column-reduction", "block"):
        raise InvalidArgument(f"method={method!r} must be 'auto', 'snf', 'column-reduction' or 'block'.")
    if not (isinstance(reduce, bool) or reduce == "auto"):
        raise InvalidArgument(f"reduce={reduce!r} must be True, False or 'auto'.")
    blocks = _blocks(a, d) if method in ("auto", "block") else None
    if method == "block" and blocks is None:
        raise InvalidArgument(
            "method='block' needs rows that are constant on pairwise disjoint "
            "supports (a total or block totals); use method='auto'."
        )
    if blocks is not None:
        if d > MAX_CELLS_BLOCK:
            raise SearchTooLarge(
                "closed-form block lattice basis (exact certification)",
                d,
                MAX_CELLS_BLOCK,
                "Split the invariant by block and handle each separately.",
            )
        cols = []
        for blk in blocks:
            for t in range(len(blk) - 1):
                col = [0] * d
                col[blk[t]], col[blk[t + 1]] = 1, -1
                cols.append(col)
            if len(blk) == 1 and not any(row[blk[0]] for row in a):
                cols.append([int(i == blk[0]) for i in range(d)])
        cols.sort(key=lambda col: [-abs(v) for v in col])
        return _build(a, d, cols, "block", False, "")
    if d > MAX_CELLS_EXACT:
        raise SearchTooLarge(
            f"exact kernel lattice basis of a {len(a)} x {d} matrix",
            d,
            MAX_CELLS_EXACT,
            "Totals over disjoint blocks use a closed form; block-separable invariants can be handled block by block.",
        )
    note = ""
    used = "column-reduction"
    cols_out: IntMatrix | None = None
    if method == "snf":
        try:
            from sympy import ZZ, Matrix
            from sympy.matrices.normalforms import smith_normal_decomp
        except ImportError:
            note = "sympy has no smith_normal_decomp (needs >= 1.14); used column-reduction. "
        else:
            if d > MAX_CELLS_SNF:
                raise SearchTooLarge(
                    "sympy Smith normal form",
                    d,
                    MAX_CELLS_SNF,
                    "method='column-reduction' gives the same lattice far faster.",
                )
            r = len(independent_rows(a))
            if a:
                _, _, t = smith_normal_decomp(Matrix(a), domain=ZZ)
                tt = [[int(v) for v in row] for row in t.tolist()]
            else:
                tt = [[int(i == j) for j in range(d)] for i in range(d)]
            cols_out = [[tt[i][j] for i in range(d)] for j in range(r, d)]
            used = "snf"
    if cols_out is None:
        _, v, piv = column_reduce(a, d, len(a), track=True)
        cols_out = (v or [])[len(piv) :]
    reduced = False
    if reduce is True or (reduce == "auto" and any(abs(v) > 1 for col in cols_out for v in col)):
        if len(cols_out) > MAX_LLL_DIMENSION:
            if reduce is True:
                raise SearchTooLarge(
                    "LLL reduction of the kernel basis (sympy, pure Python)",
                    len(cols_out),
                    MAX_LLL_DIMENSION,
                    "Use reduce='auto' or False.",
                )
            note += f"LLL skipped: dimension {len(cols_out)} > {MAX_LLL_DIMENSION}."
        elif cols_out:
            red = _lll(cols_out)
            if red is None:
                note += "sympy has no DomainMatrix.lll; basis not reduced."
            else:
                cols_out, reduced = red, True
    return _build(a, d, cols_out, used, reduced, note.strip())


def basis_from_columns(A: object, C: object) -> LatticeBasis:
    """Wrap a user-supplied basis ``C`` (``d x m``) after :func:`certify` [DGGY23, Prop 8].

    Examples
    --------
    >>> basis_from_columns([[1, 1]], [[1], [-1]]).gram_determinant
    2
    """
    a, d = int_matrix("A", A)
    c, m = int_matrix("C", C)
    if len(c) != d:
        raise InvalidArgument(f"C has {len(c)} rows but A has {d} columns; C must be d x m.")
    return _build(a, d, [[c[i][j] for i in range(d)] for j in range(m)], "given", False, "")


# --------------------------------------------------------------------------- builders


def counting_matrix(sets: Iterable[Iterable[int]], d: int) -> NDArray[np.int64]:
    r"""Incidence matrix :math:`\mathbf A_{l,i}=\mathbb 1[i\in A_l]` of counting invariants [DGGY23, Def 1].

    Examples
    --------
    >>> counting_matrix([[0, 1], [1, 2]], 3).tolist()
    [[1, 1, 0], [0, 1, 1]]
    """
    d = check_int("d", d, minimum=1)
    rows = []
    for k, s in enumerate(sets):
        cells = [check_int(f"cell of counting set {k}", c) for c in s]
        if len(set(cells)) != len(cells) or any(c >= d for c in cells):
            raise InvalidArgument(f"counting set {k}={cells} must hold distinct cells in 0..{d - 1}.")
        rows.append([int(i in cells) for i in range(d)])
    return np.array(rows, dtype=np.int64).reshape(len(rows), d)


def total_matrix(d: int) -> NDArray[np.int64]:
    """The single-total invariant ``1^T`` over ``d`` cells [DGGY23, Def 1 with A = {[d]}]."""
    return np.ones((1, check_int("d", d, minimum=1)), dtype=np.int64)


def table_margins_matrix(r: int, c: int, *, drop_redundant: bool = False) -> NDArray[np.int64]:
    """Row sums then column sums of an ``r x c`` table, row-major cells [DGGY23, Sec. 3 example].

    Rank ``r + c - 1``; ``drop_redundant=True`` drops the last column sum (full row rank).

    Examples
    --------
    >>> table_margins_matrix(2, 2).tolist()
    [[1, 1, 0, 0], [0, 0, 1, 1], [1, 0, 1, 0], [0, 1, 0, 1]]
    """
    r, c = check_int("r", r, minimum=1), check_int("c", c, minimum=1)
    sets = [[i * c + j for j in range(c)] for i in range(r)] + [[j + i * c for i in range(r)] for j in range(c)]
    return counting_matrix(sets[:-1] if drop_redundant else sets, r * c)


def basic_move_basis(r: int, c: int) -> NDArray[np.int64]:
    r"""The basic moves :math:`E_{00}-E_{0j}-E_{i0}+E_{ij}` (:math:`i,j\ge1`) of an ``r x c`` table, as columns.

    A :math:`\mathbb Z`-basis of the kernel lattice of :func:`table_margins_matrix` ``(r, c)``
    [DGGY23, Prop 8] with anchor cell :math:`(0,0)`: reference
    ``docs/reference/subspace-integer-postprocessing.md`` §3.2 (saturated, T-I1;
    :math:`\det(\mathbf C^\top\mathbf C)=r^{c-1}c^{r-1}`). Cells are row-major; columns are
    ordered by ``i`` then ``j``; the shape is ``(r c) x (r-1)(c-1)``. The lattice MCMC runs
    for T-I7/T-I8 use this basis (their mixing depends on the basis, so they fix it). Not
    certified here: pass it to :func:`basis_from_columns` for the exact check.

    Examples
    --------
    >>> C = basic_move_basis(2, 3)
    >>> C.T.tolist()
    [[1, -1, 0, -1, 1, 0], [1, 0, -1, -1, 0, 1]]
    >>> basis_from_columns(table_margins_matrix(2, 3), C).gram_determinant   # 2^2 * 3^1
    12
    """
    r, c = check_int("r", r, minimum=1), check_int("c", c, minimum=1)
    basis = np.zeros((r * c, (r - 1) * (c - 1)), dtype=np.int64)
    for k, (i, j) in enumerate((i, j) for i in range(1, r) for j in range(1, c)):
        basis[[0, j, i * c, i * c + j], k] = (1, -1, -1, 1)
    return basis


def basis_for(
    invariant: Invariant, space: DataSpace, *, method: Method = "auto", reduce: bool | Literal["auto"] = "auto"
) -> LatticeBasis:
    """Lattice basis for an invariant of :mod:`accountant.data.invariants` via its ``matrix(space)``."""
    return kernel_lattice_basis(invariant.matrix(space), method=method, reduce=reduce)


def tail_constant(basis: LatticeBasis) -> float:
    r"""Constant :math:`K` of the generalized-Laplace tail bound [DGGY23, Thm 12, eq. 7].

    .. math:: K=\frac{4\cdot 2^{m}V_{m}}{\sqrt{\det(\mathbf C^\top\mathbf C)}},\quad
              V_m=\frac{\pi^{m/2}}{\Gamma(m/2+1)},\ m=d-r,

    so that :math:`\Pr[\|M(x)-x\|_2\ge t]\le K t^{m}e^{-\varepsilon t}` for large ``t``
    (built on Lemma 11). Basis-free; evaluated at 50 digits and rounded **up**
    (a larger K is a weaker, safe bound).

    Examples
    --------
    >>> round(tail_constant(kernel_lattice_basis(table_margins_matrix(4, 4))), 3)   # T-I4
    105.552
    """
    m = MP.mpf(basis.dimension)
    vol = MP.pi ** (m / 2) / MP.gamma(m / 2 + 1)
    return up(4 * MP.mpf(2) ** m * vol / MP.sqrt(MP.mpf(basis.gram_determinant)))
