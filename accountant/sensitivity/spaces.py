r"""Sensitivity spaces ([CA24, Def. 4], Sec. 4; Awan & Slavković 2021).

A sensitivity space is the finite symmetric set
:math:`S = \{q(X) - q(X') : X, X' \text{ adjacent}\}` of integer difference
vectors (it contains 0). This module holds the value type
:class:`SensitivitySpace` (norms, exact rank, span, orthonormal basis,
projector) and the closed forms:

* :func:`table_space` -- :math:`r\times c` tables under both one-way margins,
  radius :math:`a`: the :math:`2\times2` moves :math:`E^{(i,i',j,j')}` of
  Prop. 32 **and** the 3-cycles that Prop. 32 misses when :math:`a\ge3` and
  :math:`\min(r,c)\ge3` (``docs/reference/semi-dp.md`` §5 caveat, verified by
  exhaustive enumeration; ``paper_exact=True`` gives Prop. 32 as printed);
* :func:`histogram_space` -- :math:`S^{\mathcal D, A_k}` for a histogram under
  replace-one with no invariant (the naive spaces of Prop. 24);
* :func:`group_inflated` -- :math:`a\cdot S` (naive alternative (i) of Sec. 4).

Exact enumeration over conforming datasets lives with the fiber search.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Iterable, Sequence

import numpy as np
import sympy
from numpy.typing import NDArray

from semidp.accountant.core.arguments import check_int
from semidp.accountant.core.directed import sqrt_up
from semidp.accountant.core.errors import InvalidArgument, SearchTooLarge
from semidp.accountant.data.exact_matrices import INT64_PRODUCT_LIMIT, exact_image, query_int64


@dataclass(frozen=True)
class SensitivitySpace:
    """A finite symmetric set of integer difference vectors, with how it was obtained.

    Examples
    --------
    >>> s = table_space(2, 2)                       # reference T-S1 / T-S5
    >>> s.size, s.l1, s.l2, s.linf, s.rank
    (3, 4, 2.0, 1, 1)
    >>> s.projector_exact()[0, :]
    Matrix([[1/4, -1/4, -1/4, 1/4]])
    """

    vectors: tuple[tuple[int, ...], ...]
    """The distinct vectors, sorted, including 0 and closed under negation."""
    label: str
    """How the space was obtained (closed form with its source, or enumeration)."""

    def __post_init__(self) -> None:
        if not self.vectors:
            raise InvalidArgument("A sensitivity space needs at least the zero vector.")
        d = len(self.vectors[0])
        if any(len(v) != d for v in self.vectors):
            raise InvalidArgument("All vectors of a sensitivity space must have the same length.")
        vs = set(self.vectors)
        missing = [v for v in vs if tuple(-x for x in v) not in vs]
        if missing:
            raise InvalidArgument(f"Sensitivity space is not symmetric. Specifically: {missing[0]} has no negation.")
        if (0,) * d not in vs:
            raise InvalidArgument("A sensitivity space contains 0 (X = X' is adjacent to itself).")
        object.__setattr__(self, "vectors", tuple(sorted(vs)))

    @classmethod
    def from_vectors(cls, vectors: Iterable[Sequence[int]], label: str) -> "SensitivitySpace":
        """Build from any vectors, adding 0 and negations (a sensitivity space is symmetric)."""
        vs = {tuple(int(x) for x in v) for v in vectors}
        if not vs:
            raise InvalidArgument("from_vectors needs at least one vector.")
        d = len(next(iter(vs)))
        vs |= {tuple(-x for x in v) for v in vs} | {(0,) * d}
        return cls(tuple(vs), label)

    @property
    def array(self) -> NDArray[np.int64]:
        """The vectors as an ``(m, d)`` integer array (refused beyond int64, never wrapped)."""
        if self.linf >= 2**63:
            raise InvalidArgument(f"a sensitivity vector has an entry of magnitude {self.linf}, beyond int64.")
        return np.array(self.vectors, dtype=np.int64)

    @property
    def dimension(self) -> int:
        """Ambient dimension ``d``."""
        return len(self.vectors[0])

    @property
    def size(self) -> int:
        """Number of distinct vectors (including 0)."""
        return len(self.vectors)

    @cached_property
    def _int64_sums_exact(self) -> bool:
        """Whether every sum of squares (hence of absolute values) of a vector fits int64 (else Python ints)."""
        return self.linf**2 * self.dimension < INT64_PRODUCT_LIMIT

    @property
    def l1(self) -> int:
        """L1 sensitivity (exact integer)."""
        if self._int64_sums_exact:
            return int(np.abs(self.array).sum(axis=1).max())
        return max(sum(abs(x) for x in v) for v in self.vectors)

    @property
    def l2_squared(self) -> int:
        """Squared L2 sensitivity (exact integer)."""
        if self._int64_sums_exact:
            return int((self.array**2).sum(axis=1).max())
        return max(sum(x * x for x in v) for v in self.vectors)

    @property
    def l2(self) -> float:
        """L2 sensitivity, rounded up (exact value ``sqrt(l2_squared)``)."""
        from fractions import Fraction

        return sqrt_up(Fraction(self.l2_squared))

    @cached_property
    def linf(self) -> int:
        """L-infinity sensitivity (exact integer; Python ints, so no int64 wrap at any size)."""
        return max(abs(x) for v in self.vectors for x in v)

    @cached_property
    def rank(self) -> int:
        """Dimension of span(S), computed exactly (:func:`exact_rank`)."""
        return exact_rank(self.array)

    def projector_exact(self) -> sympy.Matrix:
        r"""Orthogonal projector onto span(S) as an exact rational matrix: :math:`B(B^\top B)^{-1}B^\top`.

        ``B`` is a basis of the column space of the Gram matrix :math:`V^\top V`
        (``d x d``), which equals span(S); so sympy never sees the full vector list.
        """
        if self.rank == 0:
            return sympy.zeros(self.dimension, self.dimension)
        v = self.array if self.size * self.linf**2 < INT64_PRODUCT_LIMIT else self.array.astype(object)
        gram = sympy.Matrix((v.T @ v).tolist())  # exact: int64 only where no sum can wrap
        b = sympy.Matrix.hstack(*gram.columnspace())
        return b * (b.T * b).inv() * b.T

    def projector(self) -> NDArray[np.float64]:
        """The projector as floats (from the exact matrix)."""
        return np.array(self.projector_exact().evalf(20), dtype=np.float64)

    def orthonormal_basis(self) -> NDArray[np.float64]:
        """A ``(d, rank)`` matrix with orthonormal columns spanning S (SVD of the stacked vectors)."""
        if self.rank == 0:
            return np.zeros((self.dimension, 0))
        u, _, _ = np.linalg.svd(self.array.T.astype(np.float64), full_matrices=False)
        return u[:, : self.rank]

    def image(self, matrix: NDArray[np.int64] | Sequence[Sequence[int]], label: str) -> "SensitivitySpace":
        """The space of the linear query ``Q h``: ``{Q u : u in S}``."""
        shape = np.shape(matrix)
        if len(shape) != 2 or shape[1] != self.dimension:
            raise InvalidArgument(f"query matrix shape {shape}; expected (k, {self.dimension}).")
        q = query_int64("query matrix", matrix, self.dimension)
        return SensitivitySpace.from_vectors(exact_image(self.array, q).tolist(), label)

    def norms(self) -> dict[str, float | int]:
        """The report's ``sensitivity`` object: l1, l2, linf, rank, dimension."""
        return {
            "l1": self.l1,
            "l2": self.l2,
            "linf": self.linf,
            "rank": self.rank,
            "dimension": self.dimension,
            "size": self.size,
        }


def exact_rank(vectors: NDArray[np.integer[Any]] | Sequence[Sequence[int]]) -> int:
    r"""Exact rank of integer vectors (rows), via the Gram matrix [CA24, Prop. 25].

    :math:`\mathrm{rank}\,V = \mathrm{rank}\,V^\top V` over the reals; the
    ``d x d`` Gram matrix is formed exactly in integers and reduced by
    fraction-free (Bareiss) elimination in Python integers: after pivots in
    columns :math:`c_1..c_p` every remaining entry is the
    :math:`(p+1)`-minor on the pivot rows and columns plus its own row and
    column, so each division is exact (Sylvester's identity) and skipped
    columns stay zero. Cost ``O(m d^2 + d^3)``.

    Examples
    --------
    >>> exact_rank([[1, -1, 0], [0, 1, -1], [1, 0, -1]])
    2
    """
    v = np.asarray(vectors)
    if v.ndim != 2 or v.shape[0] == 0:
        return 0
    vmax = int(np.abs(v).max()) if v.size else 0
    if v.shape[0] * vmax * vmax < 2**62:
        gram = (v.astype(np.int64).T @ v.astype(np.int64)).tolist()
    else:  # pragma: no cover - astronomically large entries: exact Python ints
        vo = v.astype(object)
        gram = (vo.T @ vo).tolist()
    m: list[list[int]] = [[int(x) for x in row] for row in gram]
    d = len(m)
    rank = 0
    prev = 1
    for c in range(d):
        piv = next((i for i in range(rank, d) if m[i][c] != 0), None)
        if piv is None:
            continue
        m[rank], m[piv] = m[piv], m[rank]
        p_row = m[rank]
        p = p_row[c]
        for i in range(rank + 1, d):
            row = m[i]
            f = row[c]
            m[i] = [(x * p - f * y) // prev for x, y in zip(row, p_row)]
        prev = p
        rank += 1
    return rank


def _table_vector(r: int, c: int, plus: Iterable[tuple[int, int]], minus: Iterable[tuple[int, int]]) -> tuple[int, ...]:
    v = [0] * (r * c)
    for i, j in plus:
        v[i * c + j] += 1
    for i, j in minus:
        v[i * c + j] -= 1
    return tuple(v)


def table_moves(r: int, c: int) -> list[tuple[int, ...]]:
    r"""The nonzero :math:`2\times2` moves :math:`E^{(i,i',j,j')}` of an :math:`r\times c` table, row-major.

    There are :math:`r(r-1)c(c-1)/2` of them (both signs) ([CA24, Sec. 5.1];
    reference T-S4).
    """
    out = set()
    for i, i2 in itertools.permutations(range(r), 2):
        for j, j2 in itertools.permutations(range(c), 2):
            out.add(_table_vector(r, c, [(i, j), (i2, j2)], [(i, j2), (i2, j)]))
    return sorted(out)


def table_three_cycles(r: int, c: int) -> list[tuple[int, ...]]:
    r"""The 3-cycles: :math:`+1` at :math:`(i_1,j_1),(i_2,j_2),(i_3,j_3)`, :math:`-1` at :math:`(i_1,j_2),(i_2,j_3),(i_3,j_1)`.

    Distinct rows and distinct columns; :math:`12\binom r3\binom c3` of them (both
    signs). They are differences of conforming tables at Hamming distance 3
    (records :math:`(1,2),(2,3),(3,1)` replaced by :math:`(1,1),(2,2),(3,3)`),
    missing from [CA24, Prop. 32] (``docs/reference/semi-dp.md`` §5, §10 item 1).
    """
    out = set()
    for rows in itertools.permutations(range(r), 3):
        for cols in itertools.permutations(range(c), 3):
            plus = [(rows[k], cols[k]) for k in range(3)]
            minus = [(rows[k], cols[(k + 1) % 3]) for k in range(3)]
            out.add(_table_vector(r, c, plus, minus))
    return sorted(out)


#: Largest number of entries (vectors x cells) :func:`table_space` builds; a larger space is refused at once.
TABLE_SPACE_LIMIT = 20_000_000


def table_space(r: int, c: int, radius: int = 3, *, paper_exact: bool = False) -> SensitivitySpace:
    r"""Semi-DP sensitivity space of an :math:`r\times c` table under both one-way margins.

    Parameters
    ----------
    r, c:
        Table shape (row-major vectorisation).
    radius:
        The semi-adjacent parameter :math:`a(t)` (at most 3 by Thm. 16 with
        :math:`p = 2`; the paper uses the worst case 3). ``radius <= 1`` gives
        ``{0}`` (one replacement always changes a margin); 2 gives the moves.
    paper_exact:
        Return Prop. 32 as printed (moves only) even where it is incomplete.

    Notes
    -----
    Distance 2 reaches exactly the moves (two records swap a coordinate).
    Distance 3 adds the 3-cycles whenever :math:`\min(r,c)\ge3`; no other
    difference of conforming tables has Hamming distance :math:`\le 3`
    (a nonzero margin-preserving difference with :math:`\ell_1 \le 6` is a move,
    a 3-cycle or a sum of two moves with :math:`\ell_1 = 6`, and the latter are
    3-cycles). Checked against exhaustive enumeration (reference T-S2, T-S2b).

    Examples
    --------
    >>> s = table_space(3, 3)                       # reference T-S2
    >>> s.size, s.l1, round(s.l2, 6), s.linf, s.rank
    (31, 6, 2.44949, 1, 4)
    >>> table_space(3, 3, paper_exact=True).l2      # Prop. 32 as printed
    2.0
    """
    check_int("r", r, minimum=2)
    check_int("c", c, minimum=2)
    check_int("radius", radius, minimum=0)
    if radius > 3:
        raise InvalidArgument(
            f"radius={radius}: under both one-way margins a(t) <= 3 (Cho & Awan Thm. 16, p = 2), and "
            "this closed form covers radius <= 3 only. For larger radii use "
            "accountant.sensitivity.search.semi_sensitivity_space (e.g. 3x3 at radius 4 has 121 vectors)."
        )
    d = r * c
    cycles = radius >= 3 and min(r, c) >= 3
    count = 1 + (2 * math.comb(r, 2) * math.comb(c, 2) if radius >= 2 else 0)
    count += 12 * math.comb(r, 3) * math.comb(c, 3) if cycles and not paper_exact else 0
    if count * d > TABLE_SPACE_LIMIT:  # checked before building anything (a 12x12 table: 589 513 vectors)
        raise SearchTooLarge(
            f"the sensitivity space of a {r}x{c} table ({count} vectors of {d} cells)",
            count * d,
            TABLE_SPACE_LIMIT,
            hint="Tables this large need a closed-form treatment of S that semidp does not have yet.",
        )
    vectors: list[tuple[int, ...]] = [(0,) * d]
    if radius >= 2:
        vectors += table_moves(r, c)
    if cycles and not paper_exact:
        vectors += table_three_cycles(r, c)
    if paper_exact:
        label = "Cho & Awan Prop. 32 as printed (moves only)"
        if cycles:
            label += "; INCOMPLETE: misses the 3-cycles at radius 3 (docs/reference/semi-dp.md §5)"
    elif cycles:
        label = "closed form: moves and 3-cycles (Prop. 32 corrected; docs/reference/semi-dp.md §5)"
    else:
        label = "closed form: moves (Cho & Awan Prop. 32)" if radius >= 2 else "closed form: {0}"
    return SensitivitySpace.from_vectors(vectors, label)


def histogram_space(cells: int, distance: int = 1) -> SensitivitySpace:
    r""":math:`S^{\mathcal D, A_k}` of the histogram under replace-one with no invariant (Prop. 24's naive space).

    Differences of histograms of equal size at Hamming distance :math:`\le k`:
    integer vectors summing to 0 with positive part :math:`\le k`. Enumerated
    exactly for small cases (refuses when the count exceeds ``10**6``).

    Examples
    --------
    >>> s = histogram_space(4)                      # reference T-S3
    >>> s.l1, round(s.l2, 6), s.linf
    (2, 1.414214, 1)
    """
    check_int("cells", cells, minimum=1)
    check_int("distance", distance, minimum=1)
    est = (distance + 1) ** cells  # the loop below visits every vector with entries in 0..k
    if est > 10**6:
        from semidp.accountant.core.errors import SearchTooLarge

        raise SearchTooLarge(
            f"histogram_space({cells}, {distance})",
            est,
            10**6,
            "Its norms are known in closed form: l1 = 2k, l2 = k*sqrt(2) (+k and -k on two cells), "
            "linf = k; accountant.sensitivity.search.naive_spaces enumerates larger cases.",
        )
    parts = [p for p in itertools.product(range(distance + 1), repeat=cells) if 0 < sum(p) <= distance]
    vectors = {(0,) * cells}
    for plus in parts:
        for minus in parts:
            if sum(plus) == sum(minus) and all(a == 0 or b == 0 for a, b in zip(plus, minus)):
                vectors.add(tuple(a - b for a, b in zip(plus, minus)))
    return SensitivitySpace.from_vectors(vectors, f"histogram, replace-one, distance <= {distance}")


def group_inflated(space: SensitivitySpace, a: int) -> dict[str, float | int]:
    r"""Norms of :math:`a\cdot S` (the group-privacy calibration of [CA24, Sec. 4], alternative (i))."""
    check_int("a", a, minimum=1)
    from fractions import Fraction

    return {
        "l1": a * space.l1,
        "l2": sqrt_up(Fraction(a * a * space.l2_squared)),
        "linf": a * space.linf,
        "rank": space.rank,
        "dimension": space.dimension,
    }


def table_projector_kron(r: int, c: int) -> sympy.Matrix:
    r""":math:`P = (I_r - \tfrac1r\mathbf 1\mathbf 1^\top)\otimes(I_c - \tfrac1c\mathbf 1\mathbf 1^\top)`, exact [CA24, Sec. 5.1]."""
    cr = sympy.eye(r) - sympy.ones(r, r) / r
    cc = sympy.eye(c) - sympy.ones(c, c) / c
    from sympy.physics.quantum import TensorProduct

    return TensorProduct(cr, cc)
