r"""K-norm balls of sensitivity spaces: the optimal ball conv(S) and cheap containing balls.

For a finite symmetric sensitivity space :math:`S\subset\mathbb Z^d` with
:math:`V=\operatorname{span}(S)` of dimension :math:`s`, the optimal K-norm
mechanism uses :math:`K=\operatorname{conv}(S)`, a norm ball **in** :math:`V`
(Cho & Awan 2024, Lemma 29). Everything here is expressed in the coordinates
:math:`y=Q^\top x` of an orthonormal basis :math:`Q\in\mathbb R^{d\times s}`
of :math:`V`; by Prop. 30 the K-norm sensitivity of :math:`Q^\top S` with respect
to :math:`K'=Q^\top K` is exactly 1, whatever basis is used.

* :class:`KNormBall` -- :math:`K'` as vertices, facets
  :math:`\{y: a_i\cdot y\le 1\}` (normalised to right-hand side 1, possible
  because :math:`K'` is symmetric with 0 in its interior), a fan
  triangulation from the origin (used by the exact sampler in
  :mod:`mechanisms.knorm`), the gauge :math:`\|y\|_{K'}=\max_i a_i\cdot y`,
  an independent cvxpy LP gauge, membership, containment, volume.
* :func:`exact_gauge` -- the gauge of an integer vector with an exact rational
  primal/dual certificate (LP duality, no floating point in the check).
* :func:`compare_lp_balls` -- Thm. 31's containment order against the
  :math:`\ell_1,\ell_2,\ell_\infty` balls scaled to contain :math:`S`.
* :class:`ContainingBall` / :func:`containing_ball` -- an exact but
  **non-optimal** ball :math:`L\supseteq\operatorname{conv}(S)` that is cheap to
  sample (basis cube, coordinate box, Euclidean ball), with its loss against the
  optimum bounded, for sizes where the hull is out of reach.
* :func:`certified_span` -- exact rank of :math:`S`, an orthonormal basis and a
  basis of elements of :math:`S` in which every element of :math:`S` has
  coordinates in :math:`[-1,1]` (the precondition of Cho & Awan Alg. 3).
* :class:`TableSymmetry` -- row/column permutations, transposition and sign
  of an :math:`r\times c` table. With it, :meth:`KNormBall.from_space` finds
  one facet per orbit (adjacency decomposition, every facet snapped to an exact
  rational normal and re-verified in integer arithmetic) and triangulates only
  those; the sampler spreads a draw over :math:`K` with a uniformly random
  group element. A representative facet too degenerate for qhull is
  triangulated recursively, one orbit of faces at a time
  (:mod:`accountant.face_fan`). Measured on 2 cores: 4x4 with 3-cycles (3 818
  facets, 9 orbits) ~0.8 s, where direct qhull needs ~1.06 M simplices and ~95 s;
  4x5 moves (15 690 facets) ~1 s; 3x7 with 3-cycles (378 facets, a facet with
  144 vertices in dimension 11) ~4 s; 4x5 with 3-cycles (130 530 facets, 47
  orbits, a facet with 168 vertices) ~17 s, 1.4 M fan simplices.

Size guards: a direct qhull run is refused (:class:`~accountant.errors.SearchTooLarge`)
when ``n ** floor(s/2)`` exceeds :data:`QHULL_WORK_LIMIT`; the symmetric build
recurses below a face whose own hull would exceed it (up to rank
:data:`RECURSION_MAX_RANK`; beyond, it refuses such a face at once), and refuses
beyond its orbit, fan-size and time budgets. Either way it refuses before or within the
stated budget, never hangs.

Floating point: hull facets come from qhull. Every ball is checked at
construction (R9): all of :math:`Q^\top S` has facet gauge
:math:`\le 1+10^{-9}`, every vertex has gauge :math:`\ge 1-10^{-9}`, facets come
in :math:`\pm` pairs, and (direct qhull) the fan volumes sum to qhull's volume; a
failure raises :class:`~accountant.errors.VerificationError`. The privacy statement itself
(:math:`\Delta_K=1`) is Prop. 30 and does not depend on these floats; the float
sampler is not hardened against floating-point side channels (see
:mod:`mechanisms.knorm`).

References
----------
[CA24] Cho & Awan, arXiv:2410.17468v1: Prop. 7, Lemma 29, Prop. 30, Alg. 2,
Thm. 31, Alg. 3. [HT10] Hardt & Talwar, "On the geometry of differential
privacy", STOC 2010. [AS21] Awan & Slavković, "Structure and sensitivity in
differential privacy: comparing K-norm mechanisms", JASA 2021.
"""

from __future__ import annotations

import itertools
import math
import time
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.optimize import linprog
from scipy.spatial import ConvexHull, HalfspaceIntersection, QhullError
from scipy.special import gammaln

from accountant.arguments import check_int
from accountant.directed import pad_down, pad_up, sqrt_up
from accountant.errors import InvalidArgument, SearchTooLarge, VerificationError
from accountant.face_fan import FaceDecomposer, check_volumes, rotate_facet
from accountant.progress import Progress
from accountant.relations import Relation
from accountant.sensitivity import SensitivitySpace
from accountant.span_coordinates import SpanCoordinates
from accountant.outcome import Bounds, Outcome, Refuted, Unknown, Verified

#: Relative tolerance of the float geometry checks (a vertex has gauge exactly 1).
GEOMETRY_RTOL = 1e-9

#: Budget of a direct qhull run, as ``n ** floor(s / 2)`` for ``n`` points in
#: dimension ``s`` (the growth of the Upper Bound Theorem). Calibrated on a
#: 2-core machine: 4x4 moves (n = 72, s = 9: 2.7e7) take 2.5 s and 90 740 fan
#: simplices; 4x4 with 3-cycles (n = 264, s = 9: 4.9e9) has ~1.06 M and takes
#: ~95 s, so it is refused.
QHULL_WORK_LIMIT = 1e8

#: Largest number of fan simplices kept in memory (4x5 with 3-cycles: 1.97 M before qhull's
#: flat simplices are dropped, 1.42 M after; ~200 bytes each with the volumes).
FAN_LIMIT = 3_000_000

#: Largest rank s for which the symmetric build triangulates a facet beyond ``work_limit``
#: recursively (:mod:`accountant.face_fan`); above it such a facet is refused at once. s = 12 covers
#: every table with (r-1)(c-1) <= 12 (4x5 with 3-cycles: ~17 s); at 5x5 (s = 16) the face lattice
#: is out of reach (>= 842 030 facets with the moves only), so refusing quickly is the useful answer.
RECURSION_MAX_RANK = 12

#: Largest number of table entries enumerated for one canonical form under
#: :class:`TableSymmetry` (``r! * 2 * 2 * r * c``; 8x8 is about 2.1e7).
VARIANT_LIMIT = 3e7

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]


# ----------------------------------------------------------------------------
# Exact span certificate
# ----------------------------------------------------------------------------


def _bareiss_det(m: list[list[int]]) -> int:
    """Exact determinant of a square integer matrix (fraction-free Bareiss elimination)."""
    a = [row[:] for row in m]
    n = len(a)
    if n == 0:
        return 1
    sign, prev = 1, 1
    for k in range(n - 1):
        if a[k][k] == 0:
            swap = next((i for i in range(k + 1, n) if a[i][k] != 0), None)
            if swap is None:
                return 0
            a[k], a[swap] = a[swap], a[k]
            sign = -sign
        for i in range(k + 1, n):
            for j in range(k + 1, n):
                a[i][j] = (a[i][j] * a[k][k] - a[i][k] * a[k][j]) // prev
        prev = a[k][k]
    return sign * a[n - 1][n - 1]


def _exact_coordinates(basis: IntArray, vectors: IntArray, approx: FloatArray) -> tuple[IntArray, IntArray] | None:
    """Exact coordinates of ``vectors`` (rows) in ``basis`` (columns), from float guesses.

    Returns ``(numerators (n, s), denominators (n,))``. Each float guess is
    rounded to an integer, or else rationalised (``limit_denominator(10**6)``),
    and accepted only if ``basis @ c == v`` holds exactly in integer arithmetic.
    Returns None if some guess cannot be confirmed. With independent columns the
    confirmed coordinates are the unique ones.
    """
    n, s = vectors.shape[0], basis.shape[1]
    rounded = np.rint(approx)
    ok = np.all(np.abs(approx - rounded) < 1e-7, axis=0) & np.all(np.abs(rounded) < 2**40, axis=0)
    num = np.where(ok, rounded, 0).astype(np.int64).T.copy()       # (n, s)
    if float(np.abs(basis).max()) * float(np.abs(num).max(initial=0)) * s < 2.0**52:
        # every product and partial sum is an integer below 2**53: float64 arithmetic is exact here
        prod = basis.astype(np.float64) @ num.T.astype(np.float64)
        ok &= np.all(prod == vectors.T.astype(np.float64), axis=0)
    else:
        ok &= np.all(basis @ num.T == vectors.T, axis=0)             # exact int64 check
    den = np.ones(n, dtype=np.int64)
    b_obj = basis.astype(object)
    for j in np.flatnonzero(~ok):
        fr = [Fraction(float(x)).limit_denominator(10**6) for x in approx[:, j]]
        lcm = 1
        for f in fr:
            lcm = lcm * f.denominator // math.gcd(lcm, f.denominator)
        nums = [int(f * lcm) for f in fr]
        lhs = b_obj @ np.array(nums, dtype=object)
        if not all(int(lhs[i]) == lcm * int(vectors[j][i]) for i in range(vectors.shape[1])):
            return None
        if lcm >= 2**62 or max(abs(x) for x in nums) >= 2**62:  # pragma: no cover - tiny integer data
            return None
        num[j] = nums
        den[j] = lcm
    return num, den


def _greedy_short_basis(nz: IntArray, s: int) -> IntArray:
    """``s`` independent rows of ``nz``, scanning shortest (l1) first, ties lexicographically (largest first)."""
    keys = [-nz[:, k] for k in range(nz.shape[1] - 1, -1, -1)] + [np.abs(nz).sum(axis=1)]
    order = np.lexsort(keys)
    chosen: list[int] = []
    ortho = np.zeros((nz.shape[1], 0))
    for i in order:
        v = nz[i].astype(np.float64)
        r = v - ortho @ (ortho.T @ v)
        nr = float(np.linalg.norm(r))
        if nr > 1e-8 * float(np.linalg.norm(v)):
            chosen.append(i)
            ortho = np.hstack([ortho, (r / nr)[:, None]])
            if len(chosen) == s:
                break
    return nz[chosen].T.copy()


@dataclass(frozen=True, eq=False)
class SpanCertificate:
    r"""Exact rank of :math:`S`, an orthonormal basis of its span, and a bounded basis of elements of :math:`S`.

    Examples
    --------
    >>> from accountant.sensitivity import table_space
    >>> c = certified_span(table_space(3, 3))
    >>> c.rank, c.max_coordinate
    (4, Fraction(1, 1))
    """

    rank: int
    """Dimension :math:`s` of span(S), exact (independent basis + exact coordinates of every element)."""
    orthonormal: FloatArray
    """``(d, s)`` orthonormal columns spanning S (eigenvectors of the Gram matrix of the stacked
    vectors; any orthonormal basis gives the same mechanism, Prop. 30)."""
    basis: IntArray
    """``(d, s)`` integer columns, elements of S, linearly independent (exact determinant)."""
    nonzero: IntArray
    """``(n, d)`` the nonzero elements of S."""
    numerators: IntArray
    """``(n, s)`` exact coordinates of each nonzero element in ``basis`` are ``numerators / denominators``."""
    denominators: IntArray
    """``(n,)`` positive common denominators (1 when the coordinates are integers)."""
    gram_det: int
    r""":math:`\det(B^\top B)` (exact, nonzero)."""

    def coordinates(self, j: int) -> tuple[Fraction, ...]:
        """Exact coordinates of ``nonzero[j]`` in ``basis``."""
        d = int(self.denominators[j])
        return tuple(Fraction(int(x), d) for x in self.numerators[j])

    @property
    def max_coordinate(self) -> Fraction:
        """Largest :math:`|c_k|` over all elements (exact): at most 1 means conv(S) lies in the basis cube."""
        best = Fraction(0)
        top = np.abs(self.numerators).max(axis=1)
        for d in np.unique(self.denominators):
            best = max(best, Fraction(int(top[self.denominators == d].max()), int(d)))
        return best


def certified_span(space: SensitivitySpace, basis: ArrayLike | None = None) -> SpanCertificate:
    r"""Exact rank and bases of span(S); optionally check a given basis (Cho & Awan Alg. 3, step 1).

    Without ``basis``, a basis of elements of :math:`S` is found greedily
    (shortest in :math:`\ell_1` first, which for tables gives a basis of the
    lattice of margin-preserving integer tables, hence the smallest cube), then
    repaired by a maximum-volume local search: while some element :math:`u` has a coordinate
    :math:`|c_k(u)|>1`, it replaces :math:`b_k` (by Cramer's rule :math:`|\det|`
    grows by the factor :math:`|c_k(u)|`, so the search ends). At the end every
    element of :math:`S` has coordinates in :math:`[-1,1]`, i.e.
    :math:`\operatorname{conv}(S)\subseteq B[-1,1]^s` (the containment
    precondition of Alg. 3, reference ``semi-dp.md`` §10 item 5).

    Parameters
    ----------
    space:
        The sensitivity space.
    basis:
        Optional ``(d, s)`` integer matrix whose columns should be used instead
        (e.g. the authors' basis of reference T-S7); it is only checked.

    Returns
    -------
    SpanCertificate

    Raises
    ------
    InvalidArgument
        Rank 0, or the given basis is not a basis of span(S).
    VerificationError
        Exact confirmation of float coordinates failed (a bug).

    Notes
    -----
    Rank is certified without the per-vector symbolic rank of
    :attr:`SensitivitySpace.rank` (99 s for 6x6 with 3-cycles): ``basis`` is
    independent (exact Bareiss determinant of the Gram matrix) and every element
    of :math:`S` is an exact rational combination of it.
    """
    u = space.array
    nz = u[np.any(u != 0, axis=1)]
    if nz.shape[0] == 0:
        raise InvalidArgument(
            "The sensitivity space is {0} (rank 0): the invariant determines the data, no noise is needed."
        )
    uf = nz.astype(np.float64)
    evals, evecs = np.linalg.eigh(uf.T @ uf)                # Gram of the stacked vectors, exact in float
    keep = evals > evals[-1] * 1e-12
    s = int(np.sum(keep))
    q = np.ascontiguousarray(evecs[:, keep][:, ::-1])
    if basis is None:
        b = _greedy_short_basis(nz, s)
        for _ in range(100 * s + 1000):
            c = np.linalg.pinv(b.astype(np.float64)) @ uf.T
            k, j = np.unravel_index(int(np.argmax(np.abs(c))), c.shape)
            if abs(c[k, j]) <= 1 + 1e-9:
                break
            b[:, k] = nz[j]
        else:  # pragma: no cover - the determinant grows at every swap
            raise VerificationError("maximum-volume basis search did not terminate.")
    else:
        b = np.asarray(basis)
        if b.ndim != 2 or b.shape != (space.dimension, s) or not np.array_equal(b, np.rint(b)):
            raise InvalidArgument(
                f"basis must be an integer (d, s) = ({space.dimension}, {s}) matrix; got shape {b.shape}."
            )
        b = b.astype(np.int64)
    gram = (b.T @ b).tolist()
    det = _bareiss_det([[int(x) for x in row] for row in gram])
    if det == 0:
        raise InvalidArgument("The basis columns are linearly dependent.")
    c = np.linalg.pinv(b.astype(np.float64)) @ uf.T
    coords = _exact_coordinates(b, nz, c)
    if coords is None:
        if basis is not None:
            raise InvalidArgument("The basis does not span S (some element has no exact coordinates in it).")
        raise VerificationError("exact confirmation of the basis coordinates failed.")
    return SpanCertificate(s, q, b, nz, coords[0], coords[1], det)


# ----------------------------------------------------------------------------
# Exact gauge (ambient, integer data, rational certificate)
# ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class GaugeCertificate:
    r"""An exact K-norm :math:`\|x\|_{\operatorname{conv}S}` with its LP-duality certificate.

    ``weights`` give :math:`x=\sum_k\lambda_k u_k`, :math:`\lambda\ge0`,
    :math:`\sum\lambda=` ``value`` (so the gauge is at most ``value``);
    ``functional`` is :math:`f` with :math:`f\cdot u\le1` for every
    :math:`u\in S` and :math:`f\cdot x=` ``value`` (so it is at least ``value``).
    """

    value: Fraction
    """The gauge, exact."""
    weights: tuple[tuple[tuple[int, ...], Fraction], ...]
    """Primal certificate: pairs (element of S, weight)."""
    functional: tuple[Fraction, ...]
    """Dual certificate, a rational vector in the ambient space."""

    def check(self, space: SensitivitySpace, x: Sequence[int]) -> bool:
        """Re-verify both certificates in exact arithmetic."""
        xs = [Fraction(int(v)) for v in x]
        total = [Fraction(0)] * len(xs)
        for u, w in self.weights:
            if w < 0:
                return False
            total = [t + w * ui for t, ui in zip(total, u)]
        if total != xs or sum((w for _, w in self.weights), Fraction(0)) != self.value:
            return False
        f = self.functional
        if any(sum((fi * ui for fi, ui in zip(f, u)), Fraction(0)) > 1 for u in space.vectors):
            return False
        return sum((fi * xi for fi, xi in zip(f, xs)), Fraction(0)) == self.value


def exact_gauge(space: SensitivitySpace, x: Sequence[int] | ArrayLike) -> GaugeCertificate | Unknown:
    r""":math:`\|x\|_{\operatorname{conv}S}` for an integer vector, certified exactly (R9).

    Solves :math:`\min\sum\lambda` s.t. :math:`\sum_k\lambda_ku_k=x`,
    :math:`\lambda\ge0` with HiGHS dual simplex (a basic solution), then
    rationalises the primal (re-solved exactly on its support) and the dual
    (:math:`f`, rescaled so that :math:`\max_{u\in S}f\cdot u\le1` holds exactly).
    If the two exact bounds meet, the gauge is certified; otherwise
    :class:`~accountant.outcome.Unknown` with the rational bounds in the reason.

    Raises
    ------
    InvalidArgument
        ``x`` is not an integer vector of the ambient dimension, or is outside span(S).

    Examples
    --------
    >>> from accountant.sensitivity import table_space, table_three_cycles
    >>> moves = table_space(3, 3, paper_exact=True)
    >>> exact_gauge(moves, table_three_cycles(3, 3)[0]).value      # reference T-S6
    Fraction(2, 1)
    """
    xa = np.asarray(x)
    if xa.shape != (space.dimension,) or not np.array_equal(xa, np.rint(xa)):
        raise InvalidArgument(f"x must be an integer vector of length {space.dimension}; got {xa!r}.")
    xi = xa.astype(np.int64)
    nz = space.array[np.any(space.array != 0, axis=1)]
    if not np.any(xi):
        return GaugeCertificate(Fraction(0), (), tuple(Fraction(0) for _ in range(space.dimension)))
    res = linprog(np.ones(nz.shape[0]), A_eq=nz.T.astype(np.float64), b_eq=xi.astype(np.float64),
                  bounds=(0, None), method="highs-ds")
    if res.status == 2:
        raise InvalidArgument(f"x={xi.tolist()} is not in span(S) (the LP is infeasible).")
    if res.status != 0:
        return Unknown(f"HiGHS status {res.status}: {res.message}")
    lam = np.asarray(res.x)
    support = np.flatnonzero(lam > 1e-9)
    sub = nz[support]
    import sympy

    m = sympy.Matrix(sub.T.tolist())
    try:
        sol, params = m.gauss_jordan_solve(sympy.Matrix(xi.tolist()))
    except ValueError:
        return Unknown("the LP support does not reproduce x exactly")
    sol = sol.subs({p: 0 for p in params})
    weights = [Fraction(int(sympy.fraction(w)[0]), int(sympy.fraction(w)[1])) for w in sol]
    if any(w < 0 for w in weights):
        return Unknown("the exact primal solution on the LP support has a negative weight")
    upper = sum(weights, Fraction(0))
    duals = np.asarray(res.eqlin.marginals, dtype=np.float64)
    best: tuple[Fraction, tuple[Fraction, ...]] | None = None
    for sign in (1.0, -1.0):
        f = [Fraction(float(sign * v)).limit_denominator(10**6) for v in duals]
        mx = max(sum((fi * int(ui) for fi, ui in zip(f, u)), Fraction(0)) for u in nz)
        if mx <= 0:
            continue
        f = [fi / mx for fi in f]
        low = sum((fi * int(v) for fi, v in zip(f, xi)), Fraction(0))
        if best is None or low > best[0]:
            best = (low, tuple(f))
    if best is None or best[0] != upper:
        low = best[0] if best is not None else Fraction(0)
        return Unknown(f"exact bounds did not meet: {low} <= gauge <= {upper}")
    return GaugeCertificate(
        upper,
        tuple((tuple(int(v) for v in sub[k]), w) for k, w in enumerate(weights) if w != 0),
        best[1],
    )


# ----------------------------------------------------------------------------
# Symmetry of table sensitivity spaces
# ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class TableElement:
    """An element of :class:`TableSymmetry`: ``u -> sign * (u or u.T)[rows, :][:, cols]``."""

    rows: tuple[int, ...]
    cols: tuple[int, ...]
    transpose: bool
    sign: int


@dataclass(frozen=True, slots=True)
class TableSymmetry:
    r"""Row and column permutations, transposition (square tables) and sign, acting on :math:`r\times c` tables.

    Vectors are row-major flattened tables. The sensitivity space of a table
    under its one-way margins (moves, 3-cycles) is invariant under this group
    :math:`G`, so :math:`K=\operatorname{conv}(S)` is too, and every
    :math:`g\in G` is orthogonal on :math:`V` (a permutation of coordinates,
    possibly with a sign). :meth:`KNormBall.from_space` uses it to compute one
    facet per orbit (adjacency decomposition) and the sampler to spread a draw
    from the representative cones over all of :math:`K` by a uniformly random
    :math:`g`.

    Examples
    --------
    >>> TableSymmetry(4, 4).order, TableSymmetry(3, 4).order
    (2304, 288)
    """

    rows: int
    """Number of rows r."""
    cols: int
    """Number of columns c."""

    def __post_init__(self) -> None:
        check_int("rows", self.rows, minimum=2)
        check_int("cols", self.cols, minimum=2)

    @property
    def transposes(self) -> bool:
        """Whether transposition is in the group (square tables)."""
        return self.rows == self.cols

    @property
    def order(self) -> int:
        r""":math:`|G| = r!\,c!\,2^{[r=c]}\cdot 2` (as an abstract group)."""
        return math.factorial(self.rows) * math.factorial(self.cols) * (2 if self.transposes else 1) * 2

    def check_invariant(self, space: SensitivitySpace) -> None:
        """Raise InvalidArgument unless S is mapped to itself by every generator of the group."""
        r, c = self.rows, self.cols
        if space.dimension != r * c:
            raise InvalidArgument(f"space has dimension {space.dimension}, not {r} x {c} = {r * c}.")
        m = space.array.reshape(-1, r, c)
        gens = [m[:, [1, 0, *range(2, r)], :], m[:, [*range(1, r), 0], :],
                m[:, :, [1, 0, *range(2, c)]], m[:, :, [*range(1, c), 0]], -m]
        if self.transposes:
            gens.append(m.transpose(0, 2, 1))
        vs = set(space.vectors)
        for g in gens:
            if any(tuple(int(x) for x in v) not in vs for v in g.reshape(len(m), -1)):
                raise InvalidArgument(
                    "The sensitivity space is not invariant under row/column permutations, "
                    "transposition and sign; build the ball without symmetry."
                )

    def _variants(self, m: IntArray) -> IntArray:
        """All row permutations of ``m`` (and of ``m.T``), with both signs; identity first."""
        perms = np.array(list(itertools.permutations(range(self.rows))))
        bases = [m, m.T] if self.transposes else [m]
        out = [sg * b[perms] for b in bases for sg in (1, -1)]
        return np.concatenate(out)

    def canonical(self, m: IntArray) -> tuple[bytes, int]:
        """A complete invariant of the orbit of the integer table ``m``, and the order of its stabiliser.

        The same as :meth:`chain_key` of the one-table stack ``m[None]``.
        """
        return self.chain_key(np.asarray(m)[None])

    def chain_key(self, stack: IntArray) -> tuple[bytes, int]:
        r"""A complete invariant of the orbit of a stack of tables ``(k, r, c)`` (acted on together), and
        the order of its stabiliser.

        Used for faces and chains of faces of conv(S) (:mod:`accountant.face_fan`:
        a face is identified by the sum of its vertices). Canonical form: over
        the row permutations, transposition (square tables) and sign, the least
        (bytewise) sequence of the stack's columns, each a vector of length
        ``k * r``, sorted bytewise (column permutations are absorbed by the
        sort). Stabiliser: the variants whose sorted columns equal those of the
        stack itself, each realised by :math:`\prod_j \mathrm{mult}_j!` column
        permutations (``mult``: multiplicities of equal columns).
        """
        keys, stabs = self.chain_keys(np.asarray(stack)[None])
        return keys[0], int(stabs[0])

    def _columns(self, stacks: IntArray) -> tuple[NDArray[np.intp], NDArray[np.void]]:
        """Row permutations, and the columns (as bytes) of every variant of every stack: ``(n, nv, c)``.

        Variant ``v`` is ``sign * base[:, perms[p]]`` with ``divmod(v, len(perms)) = (block, p)``, the
        base transposed iff ``block >= 2`` and the sign negative iff ``block`` is odd.
        """
        st = np.asarray(stacks, dtype=np.int64)
        n, k = st.shape[0], st.shape[1]
        perms = np.array(list(itertools.permutations(range(self.rows))))
        bases = [st, st.transpose(0, 1, 3, 2)] if self.transposes else [st]
        var = np.concatenate([sg * b[:, :, perms].transpose(0, 2, 1, 3, 4) for b in bases for sg in (1, -1)],
                             axis=1)                                         # (n, nv, k, r, c)
        cols = np.ascontiguousarray(var.transpose(0, 1, 4, 2, 3)).reshape(n, var.shape[1], self.cols, k * self.rows)
        return perms, cols.view(np.dtype((np.void, 8 * k * self.rows))).reshape(n, var.shape[1], self.cols)

    @staticmethod
    def _rows_of(cv: NDArray[np.void]) -> NDArray[np.void]:
        """Each variant's sorted columns as one bytes value: ``(n, nv)``."""
        return np.ascontiguousarray(cv).view(np.dtype((np.void, cv.dtype.itemsize * cv.shape[-1])))[..., 0]

    def chain_keys(self, stacks: IntArray) -> tuple[list[bytes], IntArray]:
        """:meth:`chain_key` of each stack in ``stacks`` ``(n, k, r, c)``, vectorised: keys and stabiliser orders."""
        _, raw = self._columns(stacks)
        n = raw.shape[0]
        cv = np.sort(raw, axis=2)
        whole = self._rows_of(cv)
        same = np.count_nonzero(whole == whole[:, :1], axis=1)
        own = cv[:, 0, :]                                      # sorted columns of the stack itself
        run = np.ones(n, dtype=np.int64)
        prod = np.ones(n, dtype=np.int64)
        for j in range(1, self.cols):                          # prod of (position within its run of equal columns)
            run = np.where(own[:, j] == own[:, j - 1], run + 1, 1)
            prod *= run
        best = np.sort(whole, axis=1)[:, 0]
        tail = int(np.shape(stacks)[1]).to_bytes(2, "little")
        return [bytes(b) + tail for b in best], same.astype(np.int64) * prod

    def canonical_element(self, stack: IntArray) -> tuple[bytes, TableElement]:
        """:meth:`chain_key`'s key, and a group element ``h`` with ``h(stack)`` the canonical form.

        Two stacks ``a``, ``b`` with equal keys satisfy ``b = h_b^{-1}(h_a(a))``
        (:meth:`apply`, :meth:`apply_inverse`).
        """
        perms, raw = self._columns(np.asarray(stack)[None])
        whole = self._rows_of(np.sort(raw[0], axis=1))
        best = int(np.argsort(whole, kind="stable")[0])
        block, p_idx = divmod(best, len(perms))
        elem = TableElement(tuple(int(i) for i in perms[p_idx]),
                            tuple(int(i) for i in np.argsort(raw[0, best], kind="stable")),
                            block >= 2, -1 if block % 2 else 1)
        return bytes(whole[best]) + int(np.shape(stack)[0]).to_bytes(2, "little"), elem

    @staticmethod
    def apply(elem: TableElement, tables: IntArray) -> IntArray:
        """``elem`` applied to each table of ``tables`` ``(n, r, c)``: transpose, rows, columns, sign."""
        b = tables.transpose(0, 2, 1) if elem.transpose else tables
        return np.asarray(elem.sign * b[:, list(elem.rows), :][:, :, list(elem.cols)])

    @staticmethod
    def apply_inverse(elem: TableElement, tables: IntArray) -> IntArray:
        """The inverse of :meth:`apply`."""
        b = elem.sign * np.asarray(tables)
        out = np.empty_like(b)
        out[:, :, list(elem.cols)] = b
        back = np.empty_like(out)
        back[:, list(elem.rows), :] = out
        return back.transpose(0, 2, 1) if elem.transpose else back

    def orbit(self, m: IntArray) -> IntArray:
        """All distinct images of the table ``m`` (shape ``(k, r, c)``)."""
        var = self._variants(m)
        cperm = np.array(list(itertools.permutations(range(self.cols))))
        allm = var[:, :, cperm].transpose(0, 2, 1, 3).reshape(-1, self.rows, self.cols)
        return np.asarray(np.unique(allm.reshape(len(allm), -1), axis=0).reshape(-1, self.rows, self.cols))

    def apply_random(self, w: FloatArray, rng: np.random.Generator) -> FloatArray:
        """Apply an independent uniformly random group element to each row (a flattened table) of ``w``."""
        m = w.shape[0]
        t = w.reshape(m, self.rows, self.cols)
        sig = np.argsort(rng.random((m, self.rows)), axis=1)
        tau = np.argsort(rng.random((m, self.cols)), axis=1)
        out = t[np.arange(m)[:, None, None], sig[:, :, None], tau[:, None, :]]
        if self.transposes:
            flip = rng.random(m) < 0.5
            out[flip] = out[flip].transpose(0, 2, 1)
        sign = np.where(rng.random(m) < 0.5, -1.0, 1.0)
        return np.asarray((out * sign[:, None, None]).reshape(m, -1), dtype=np.float64)


@dataclass
class _Facet:
    """A facet orbit representative found by the adjacency decomposition."""

    num: IntArray          # integer normal (ambient), f = num / den
    den: int
    tight: NDArray[np.intp]
    normal: FloatArray     # Q^T f
    orbit: int


def _snap_facet(q: FloatArray, a: FloatArray, u: IntArray, perp: IntArray, s: int) -> _Facet:
    """Exact facet from a float polar vertex ``a``: rational normal, exact validity and tightness."""
    f = q @ a
    fr = [Fraction(float(x)).limit_denominator(10**6) for x in f]
    den = 1
    for x in fr:
        den = den * x.denominator // math.gcd(den, x.denominator)
    num = np.array([int(x * den) for x in fr], dtype=np.int64)
    g = math.gcd(den, *[int(x) for x in num])
    num, den = num // g, den // g
    vals = u @ num
    if vals.max() > den:
        raise VerificationError("snapped facet normal is not a valid inequality (float trouble).")
    if perp.size and np.any(perp @ num != 0):
        raise VerificationError("snapped facet normal is not in span(S) (float trouble).")
    tight = np.flatnonzero(vals == den)
    if np.linalg.matrix_rank(u[tight].astype(np.float64)) != s:
        raise VerificationError("snapped inequality is tight on a face of lower dimension, not a facet.")
    return _Facet(num, int(den), tight, q.T @ (num.astype(np.float64) / den), 0)


def _symmetric_fan(
    cert: SpanCertificate, sym: TableSymmetry, *, orbit_limit: int, time_limit: float, fan_limit: int,
    expand_limit: int, facet_work_limit: float,
) -> tuple[list[_Facet], FloatArray, NDArray[np.intp], FloatArray, IntArray, FloatArray | None]:
    """Adjacency decomposition of conv(S) up to ``sym``; returns reps, fan points/simplices/volumes/mult, facets."""
    import collections

    import sympy

    t0 = time.monotonic()
    n_variants = math.factorial(sym.rows) * (2 if sym.transposes else 1) * 2
    if n_variants * sym.rows * sym.cols > VARIANT_LIMIT:
        raise SearchTooLarge(f"canonical forms under {sym.rows}! row permutations", n_variants * sym.rows * sym.cols,
                             VARIANT_LIMIT, "Orient the table with rows <= cols, or use containing_ball(space).")
    q, s = cert.orthonormal, cert.rank
    u = cert.nonzero
    pts = u.astype(np.float64) @ q
    perp_list = []
    for v in sympy.Matrix(cert.basis.T.tolist()).nullspace():             # exact basis of span(S)^perp
        fr = [Fraction(int(sympy.fraction(x)[0]), int(sympy.fraction(x)[1])) for x in v]
        lcm = math.lcm(*[x.denominator for x in fr])
        perp_list.append([int(x * lcm) for x in fr])
    perp = np.array(perp_list, dtype=np.int64).reshape(len(perp_list), u.shape[1])
    res = linprog(-pts[0], A_ub=pts, b_ub=np.ones(len(pts)), bounds=(None, None), method="highs-ds")
    if res.status != 0:  # pragma: no cover - bounded, feasible
        raise VerificationError(f"initial facet LP failed: {res.message}")
    first = _snap_facet(q, np.asarray(res.x), u, perp, s)
    shape = (sym.rows, sym.cols)

    def key_of(fc: _Facet) -> tuple[bytes, int]:
        k, stab = sym.canonical(fc.num.reshape(shape))
        return k + fc.den.to_bytes(16, "little"), stab

    k0, st0 = key_of(first)
    first.orbit = sym.order // st0
    reps = [first]
    seen = {k0}
    queue = collections.deque([first])
    progress = Progress("K-norm ball: facet orbits of conv(S) processed", 1)
    dec = FaceDecomposer(pts, u.reshape(-1, *shape).astype(np.int64), sym, facet_work_limit, t0 + time_limit,
                         fan_limit, recurse=s <= RECURSION_MAX_RANK)
    fan_idx: list[NDArray[np.intp]] = []
    fan_mult: list[IntArray] = []
    fan_vol: list[FloatArray] = []
    while queue:
        if time.monotonic() - t0 > time_limit:
            raise SearchTooLarge(f"facet orbits of conv(S) (found {len(reps)} so far)", time.monotonic() - t0,
                                 time_limit, "Time budget (s) exceeded; use containing_ball(space).")
        fc = queue.popleft()
        progress.total = len(reps)
        progress.update(len(reps) - len(queue), f"{len(reps)} facet orbits found")
        x = pts[fc.tight]
        a = fc.normal
        cidx = dec.add_point(x.mean(axis=0))                   # relative interior point of the facet
        face = dec.decompose(fc.tight.astype(np.intp), [dec.face_table(fc.tight)], cidx, cone_simplex=True)
        fan_idx.append(face.rows)
        fan_mult.append(face.mult * fc.orbit)
        fan_vol.append(face.vols / (float(np.linalg.norm(a)) * s))      # cone from 0: height 1/|a|
        ridges = [np.searchsorted(fc.tight, r) for r in face.ridges]
        for ridge in ridges:
            if time.monotonic() - t0 > time_limit:
                raise SearchTooLarge(f"facet orbits of conv(S) (found {len(reps)} so far)",
                                     time.monotonic() - t0, time_limit,
                                     "Time budget (s) exceeded; use containing_ball(space).")
            nb = _snap_facet(q, rotate_facet(pts, a, x, x[ridge]), u, perp, s)
            key, stab = key_of(nb)
            if key not in seen:
                seen.add(key)
                nb.orbit = sym.order // stab
                reps.append(nb)
                queue.append(nb)
                if len(reps) > orbit_limit:
                    raise SearchTooLarge("facet orbits of conv(S)", len(reps), orbit_limit,
                                         "Use containing_ball(space) for an exact non-optimal mechanism.")
    total_facets = sum(fc.orbit for fc in reps)
    facets: FloatArray | None = None
    if total_facets <= expand_limit:
        facet_rows = []
        for fc in reps:
            imgs = sym.orbit(fc.num.reshape(shape)).reshape(-1, len(fc.num))
            if len(imgs) != fc.orbit:
                raise VerificationError(f"orbit size {len(imgs)} != |G|/|Stab| = {fc.orbit}.")
            facet_rows.append(imgs.astype(np.float64) / fc.den @ q)
        facets = np.vstack(facet_rows)
    progress.close()
    fpts = dec.all_points()
    rows = np.vstack(fan_idx)
    vols = np.concatenate(fan_vol)
    check_volumes(fpts, rows, vols)
    keep = vols > 1e-12 * float(vols.max())          # qhull Qt's flat simplices carry no volume
    return reps, fpts, rows[keep], vols[keep], np.concatenate(fan_mult)[keep], facets


# ----------------------------------------------------------------------------
# The optimal ball conv(S)
# ----------------------------------------------------------------------------


def _lp_solver() -> str:
    import cvxpy as cp

    solvers: list[str] = cp.installed_solvers()  # type: ignore[no-untyped-call]
    return "HIGHS" if "HIGHS" in solvers else "CLARABEL"


@dataclass(frozen=True, eq=False)
class KNormBall(SpanCoordinates):
    r"""The optimal K-norm ball :math:`K'=Q^\top\operatorname{conv}(S)` in coordinates of an orthonormal basis of span(S).

    Build with :meth:`from_space`. Coordinates: ``y = basis.T @ x`` for
    :math:`x\in V`, ``x = basis @ y`` back.

    Examples
    --------
    >>> from accountant.sensitivity import table_space, table_three_cycles
    >>> k = KNormBall.from_space(table_space(3, 3, paper_exact=True))
    >>> k.dimension, len(k.vertices), len(k.facets), round(k.volume, 6)
    (4, 18, 30, 24.75)
    >>> round(k.sensitivity(table_three_cycles(3, 3)), 12)  # reference T-S6 (exact: see exact_gauge)
    2.0
    """

    space: SensitivitySpace
    """The sensitivity space S (integer, symmetric)."""
    basis: FloatArray
    """``(d, s)`` orthonormal basis Q of span(S)."""
    vertices: FloatArray
    r"""``(m, s)`` extreme points of :math:`Q^\top S`."""
    vertex_vectors: IntArray
    """``(m, d)`` the elements of S that are the vertices (same order)."""
    facets: FloatArray
    r"""``(f, s)`` facet normals :math:`a_i`, :math:`K'=\{y: a_i\cdot y\le1\}` (deduplicated)."""
    fan_points: FloatArray
    """``(p, s)`` points used by the fan: the vertices, plus one centroid per facet orbit
    representative when built with a symmetry group."""
    fan: NDArray[np.intp]
    """``(t, s)`` indices into ``fan_points``: the simplices conv(0, fan_points[fan[j]]) have
    disjoint interiors and, with their images under ``symmetry``, cover :math:`K'`."""
    fan_volumes: FloatArray
    r"""``(t,)`` volumes of the fan simplices, :math:`|\det|/s!`."""
    fan_multiplicity: IntArray
    """``(t,)`` number of images of each simplex under ``symmetry`` (the orbit size of its
    facet; 1 without symmetry)."""
    fan_cdf: FloatArray
    """``(t,)`` cumulative normalised ``fan_volumes * fan_multiplicity`` (choosing a simplex by volume)."""
    volume: float
    """Volume of :math:`K'`: the sum of ``fan_volumes * fan_multiplicity`` (checked against qhull's
    volume when qhull built the hull)."""
    relation: Relation | None = None
    """The relation on which ``space`` is the sensitivity space (needed for a privacy map)."""
    method: str = "qhull"
    """How the hull was built."""
    symmetry: TableSymmetry | None = None
    """Group under which the fan is completed: the exact sampler applies a uniformly random
    element to a point drawn from the representative simplices."""
    facet_orbit_sizes: tuple[int, ...] = ()
    """Sizes of the facet orbits under ``symmetry`` (empty without symmetry)."""

    # -- construction -----------------------------------------------------------------

    @classmethod
    def from_space(
        cls,
        space: SensitivitySpace,
        *,
        relation: Relation | None = None,
        work_limit: float = QHULL_WORK_LIMIT,
        symmetry: TableSymmetry | None = None,
        orbit_limit: int = 20_000,
        time_limit: float = 120.0,
        expand_limit: int = 2_000_000,
    ) -> KNormBall:
        r"""Build :math:`\operatorname{conv}(S)` in orthonormal coordinates (qhull, options ``Qt``).

        Parameters
        ----------
        space:
            The sensitivity space (rank at least 1).
        relation:
            The relation it is the sensitivity space of; recorded for
            :meth:`mechanisms.knorm.KNormMechanism.privacy_map`.
        work_limit:
            Refuse when ``n ** floor(s/2)`` exceeds it (see :data:`QHULL_WORK_LIMIT`).
            With ``symmetry`` it bounds each face's own qhull run instead
            (``k ** floor(dim/2)`` for a face with ``k`` vertices); a face
            beyond it is triangulated recursively (:mod:`accountant.face_fan`)
            when ``s <= RECURSION_MAX_RANK``, and refused otherwise.
        symmetry:
            A group under which S is invariant (checked). The facets are then
            found one orbit at a time by the adjacency decomposition (start from
            one facet by LP; for each representative, its ridges from a qhull of
            the facet's own vertices in dimension ``s - 1``; rotate across each
            ridge to the neighbouring facet; keep a neighbour if its canonical
            form is new). Every facet is snapped to an exact rational normal and
            re-verified in integer arithmetic (valid inequality, tight set of
            rank ``s``). The representative facets are triangulated (cone from
            the facet's vertex centroid over qhull's triangulated boundary of the
            facet, or, for a facet beyond ``work_limit``, over the recursively
            triangulated representatives of its own facets under the facet's
            stabiliser: :mod:`accountant.face_fan`); the sampler spreads them over
            K with a random group element. Balls whose fan has more than one
            level (:attr:`fan_levels`) are checked against independent methods
            in the tests but are not stored by :mod:`accountant.knorm_cache`.
        orbit_limit, time_limit, expand_limit:
            Budgets of the symmetric build (facet orbits, seconds, total facets
            expanded for :meth:`gauge`); beyond the first two it raises
            SearchTooLarge; beyond the last, ``facets`` holds one normal per orbit
            only and :meth:`gauge` refuses.

        Raises
        ------
        SearchTooLarge
            Without ``symmetry``, before starting qhull, when the work estimate exceeds ``work_limit``
            or the fan has more than :data:`FAN_LIMIT` simplices; with
            ``symmetry``, also beyond :data:`VARIANT_LIMIT`, ``orbit_limit`` or
            ``time_limit``. Use :func:`containing_ball` for an exact non-optimal
            mechanism.
        VerificationError
            A construction check failed (see the module notes).
        """
        if symmetry is not None:
            symmetry.check_invariant(space)
        cert = certified_span(space)
        q, s = cert.orthonormal, cert.rank
        pts = cert.nonzero.astype(np.float64) @ q
        n = pts.shape[0]
        if s == 1:
            y = pts[:, 0]
            i_hi, i_lo = int(np.argmax(y)), int(np.argmin(y))
            mx = float(y[i_hi])
            verts = np.array([[mx], [float(y[i_lo])]])
            facets = np.array([[1.0 / mx], [1.0 / float(y[i_lo])]])
            fan = np.array([[0], [1]], dtype=np.intp)
            vols = np.abs(verts[:, 0])
            ball = cls._assemble(space, q, verts, cert.nonzero[[i_hi, i_lo]], facets, verts, fan, vols,
                                 np.ones(2, dtype=np.int64), relation, "interval (s = 1)")
            ball._check(pts, hull_volume=float(vols.sum()))
            return ball
        if symmetry is not None and s >= 2:
            reps, fpts, fan, vols, mult, all_facets = _symmetric_fan(
                cert, symmetry, orbit_limit=orbit_limit, time_limit=time_limit, fan_limit=FAN_LIMIT,
                expand_limit=expand_limit, facet_work_limit=work_limit)
            expanded = all_facets is not None
            normals = all_facets if all_facets is not None else np.array([fc.normal for fc in reps])
            ball = cls._assemble(space, q, pts, cert.nonzero, normals, fpts, fan, vols, mult, relation,
                                 "adjacency decomposition up to symmetry, fan from the origin "
                                 f"({len(reps)} facet orbits, {int(sum(fc.orbit for fc in reps))} facets)",
                                 symmetry, tuple(fc.orbit for fc in reps))
            if expanded:
                ball._check(pts, hull_volume=ball.volume)
            return ball
        work = float(n) ** (s // 2)
        if work > work_limit:
            raise SearchTooLarge(
                f"convex hull of {n} points in dimension {s}", work, work_limit,
                "Use accountant.knorm.containing_ball(space) for an exact non-optimal K-norm "
                "mechanism (labelled, with its loss bounded), or raise work_limit.",
            )
        try:
            hull = ConvexHull(pts, qhull_options="Qt")
        except QhullError as e:  # pragma: no cover - degenerate input is excluded by the rank check
            raise VerificationError(f"qhull failed on a full-dimensional point set: {e}") from e
        if len(hull.simplices) > FAN_LIMIT:
            raise SearchTooLarge("fan triangulation", len(hull.simplices), FAN_LIMIT)
        vidx = np.asarray(hull.vertices)
        local = np.full(n, -1, dtype=np.intp)
        local[vidx] = np.arange(len(vidx))
        fan = local[np.asarray(hull.simplices)]
        verts = pts[vidx]
        eq = np.asarray(hull.equations)
        offs = -eq[:, -1]
        if np.any(offs <= 0):
            raise VerificationError("a facet does not have the origin strictly inside.")
        normals = eq[:, :-1] / offs[:, None]
        _, keep = np.unique(np.round(normals, 9), axis=0, return_index=True)
        facets = normals[np.sort(keep)]
        dets = np.abs(np.linalg.det(verts[fan]))
        vols = dets / math.factorial(s)
        ball = cls._assemble(space, q, verts, cert.nonzero[vidx], facets, verts, fan, vols,
                             np.ones(len(vols), dtype=np.int64), relation, "qhull Qt, fan from the origin")
        ball._check(pts, hull_volume=float(hull.volume))
        return ball

    @classmethod
    def _assemble(
        cls, space: SensitivitySpace, q: FloatArray, verts: FloatArray, vvec: IntArray, facets: FloatArray,
        fan_points: FloatArray, fan: NDArray[np.intp], vols: FloatArray, mult: IntArray,
        relation: Relation | None, method: str, symmetry: TableSymmetry | None = None,
        orbits: tuple[int, ...] = (),
    ) -> KNormBall:
        w = vols * mult
        cdf = np.cumsum(w)
        total = float(cdf[-1])
        return cls(space, q, verts, vvec, facets, fan_points, fan, vols, mult, cdf / total, total,
                   relation, method, symmetry, orbits)

    def _check(self, points: FloatArray, *, hull_volume: float) -> None:
        """Construction checks (R9); raise VerificationError on failure."""
        g = self.gauge(points)
        if g.max() > 1 + GEOMETRY_RTOL:
            raise VerificationError(f"an element of S has facet gauge {g.max()!r} > 1.")
        gv = self.gauge(self.vertices)
        if gv.min() < 1 - GEOMETRY_RTOL:
            raise VerificationError(f"a vertex has facet gauge {gv.min()!r} < 1.")
        keys = {tuple(r) for r in np.round(self.facets, 7).tolist()}
        if any(tuple(r) not in keys for r in np.round(-self.facets, 7).tolist()):
            raise VerificationError("facets are not symmetric (K = -K fails).")
        if abs(self.volume - hull_volume) > 1e-9 * hull_volume:
            raise VerificationError(f"fan volume {self.volume!r} != qhull volume {hull_volume!r}.")

    # -- coordinates ------------------------------------------------------------------

    @property
    def fan_levels(self) -> int:
        """Largest number of face centroids in one fan simplex: 0 without symmetry, 1 when each
        representative facet was triangulated by qhull, more when :mod:`accountant.face_fan` recursed."""
        if len(self.fan_points) == len(self.vertices):
            return 0
        return int((self.fan >= len(self.vertices)).sum(axis=1).max())

    @property
    def facet_count(self) -> int:
        """Number of facets of K (all orbits counted)."""
        return sum(self.facet_orbit_sizes) if self.symmetry is not None else len(self.facets)

    # -- gauges -----------------------------------------------------------------------

    def gauge(self, y: ArrayLike) -> FloatArray:
        r""":math:`\|y\|_{K'}=\max_i a_i\cdot y` from the facets (rows of ``y``; shape ``y.shape[:-1]``)."""
        arr = np.asarray(y, dtype=np.float64)
        if arr.shape[-1] != self.dimension:
            raise InvalidArgument(f"points must have {self.dimension} coordinates; got shape {arr.shape}.")
        if self.symmetry is not None and len(self.facets) < self.facet_count:
            raise InvalidArgument(
                f"the {self.facet_count} facets were not expanded (expand_limit); use gauge_lp instead."
            )
        flat = arr.reshape(-1, self.dimension)
        out = np.empty(flat.shape[0])
        step = max(1, 4_000_000 // max(1, len(self.facets)))
        for i in range(0, flat.shape[0], step):
            out[i:i + step] = (flat[i:i + step] @ self.facets.T).max(axis=1)
        return np.maximum(out, 0.0).reshape(arr.shape[:-1])

    def contains(self, y: ArrayLike, *, rtol: float = GEOMETRY_RTOL) -> NDArray[np.bool_]:
        """Membership ``gauge(y) <= 1 + rtol``."""
        return self.gauge(y) <= 1 + rtol

    def sensitivity(self, vectors: ArrayLike) -> float:
        r"""K-norm sensitivity :math:`\max_{u}\|Q^\top u\|_{K'}` of ambient vectors (rows), from the facets.

        For an exact value use :func:`exact_gauge` on each vector.
        """
        return float(self.gauge(self.coordinates(vectors)).max())

    def gauge_lp(self, y: ArrayLike) -> Bounds | Unknown:
        r"""Independent LP gauge (cvxpy): :math:`\min t` s.t. :math:`y=\sum\lambda_kv_k`, :math:`\lambda\ge0`, :math:`\sum\lambda=t`.

        Only status ``OPTIMAL`` is accepted (R9); anything else is
        :class:`~accountant.outcome.Unknown`. The result is re-checked outside the
        solver: the upper bound is :math:`\sum\lambda^+` plus the gauge bound
        :math:`\|B^{-1}r\|_1` of the residual :math:`r` (``B`` = s independent
        vertices), the lower bound is :math:`f\cdot y/\max(1,\max_v f\cdot v)`
        from the dual vector :math:`f`; both padded outward.

        Returns
        -------
        Bounds | Unknown
            ``lower <= gauge <= upper`` and the solver's ``estimate``.
        """
        import cvxpy as cp

        yv = np.asarray(y, dtype=np.float64).reshape(-1)
        if yv.shape != (self.dimension,):
            raise InvalidArgument(f"y must have {self.dimension} coordinates; got shape {yv.shape}.")
        v = self.vertices
        lam = cp.Variable(v.shape[0], nonneg=True)
        con = v.T @ lam == yv
        prob = cp.Problem(cp.Minimize(np.ones(v.shape[0]) @ lam), [con])
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                prob.solve(solver=_lp_solver())  # type: ignore[no-untyped-call]
            except cp.error.SolverError as e:
                return Unknown(f"cvxpy solver error: {e}")
        if prob.status != cp.OPTIMAL or lam.value is None or con.dual_value is None:
            note = "; ".join(str(w.message) for w in caught)
            return Unknown(f"cvxpy status {prob.status!r}" + (f" ({note})" if note else ""))
        lp = np.maximum(np.asarray(lam.value, dtype=np.float64), 0.0)
        resid = yv - v.T @ lp
        bsel = _independent_rows(v)
        corr = float(np.abs(np.linalg.solve(v[bsel].T, resid)).sum())
        upper = pad_up(float(lp.sum()) + corr, rel=1e-12, abs_=1e-15)
        dual = np.asarray(con.dual_value, dtype=np.float64).reshape(-1)
        lower = 0.0
        for f in (dual, -dual):
            m = max(1.0, float((v @ f).max()))
            lower = max(lower, float(f @ yv) / m)
        lower = max(0.0, pad_down(lower, rel=1e-12, abs_=1e-15))
        est = min(max(float(prob.value), lower), upper)
        return Bounds(lower, est, upper)

    # -- containment ------------------------------------------------------------------

    def contained_in(self, other: KNormBall, *, exact: bool = False, rtol: float = GEOMETRY_RTOL) -> Outcome:
        r"""Is ``self`` :math:`\subseteq` ``other`` (as subsets of the ambient space)?

        ``self`` is inside ``other`` iff every vertex of ``self`` has gauge at
        most 1 in ``other``. With ``exact=False`` each vertex is checked by
        :meth:`gauge_lp` (certified float bounds, one-sided tolerance ``rtol``
        because vertices on ``other``'s boundary have gauge exactly 1); with
        ``exact=True`` by :func:`exact_gauge` on the integer vertex vectors.

        Returns
        -------
        Verified | Refuted | Unknown
        """
        if other.ambient_dimension != self.ambient_dimension:
            raise InvalidArgument(
                f"ambient dimensions differ: {self.ambient_dimension} vs {other.ambient_dimension}."
            )
        amb = self.vertex_vectors
        resid = amb - (amb @ other.basis) @ other.basis.T
        bad = np.flatnonzero(np.linalg.norm(resid, axis=1) > 1e-9 * np.linalg.norm(amb, axis=1))
        if bad.size:
            return Refuted(f"vertex {amb[bad[0]].tolist()} is not in span of the other ball's space.")
        if exact:
            worst = Fraction(0)
            for u in amb:
                g = exact_gauge(other.space, u)
                if isinstance(g, Unknown):
                    return Unknown(f"vertex {u.tolist()}: {g.reason}")
                if g.value > 1:
                    return Refuted(f"vertex {u.tolist()} has exact gauge {g.value} > 1 in the other ball.")
                worst = max(worst, g.value)
            return Verified(f"all {len(amb)} vertices have exact gauge <= {worst} <= 1 (rational LP certificates).")
        ys = amb.astype(np.float64) @ other.basis
        hi = 0.0
        undecided = ""
        for u, y in zip(amb, ys):
            b = other.gauge_lp(y)
            if isinstance(b, Unknown):
                return Unknown(f"vertex {u.tolist()}: {b.reason}")
            if b.lower > 1 + rtol:
                return Refuted(f"vertex {u.tolist()} has gauge in [{b.lower:.12g}, {b.upper:.12g}] > 1.")
            if b.upper > 1 + rtol:
                undecided = f"vertex {u.tolist()} has gauge in [{b.lower:.12g}, {b.upper:.12g}]"
            hi = max(hi, b.upper)
        if undecided:
            return Unknown(undecided)
        return Verified(
            f"all {len(amb)} vertices have LP gauge <= {hi:.12g} <= 1 + {rtol:g} (cvxpy, certified bounds)."
        )


def _independent_rows(v: FloatArray) -> NDArray[np.intp]:
    """Indices of ``s`` linearly independent rows of ``v`` (pivoted QR)."""
    from scipy.linalg import qr

    _, _, piv = qr(v.T, pivoting=True, mode="economic")
    return np.sort(np.asarray(piv[: v.shape[1]], dtype=np.intp))


def _log_unit_ball_volume(s: int) -> float:
    r""":math:`\log\omega_s`, :math:`\omega_s=\pi^{s/2}/\Gamma(s/2+1)`."""
    return 0.5 * s * math.log(math.pi) - float(gammaln(s / 2 + 1))


# ----------------------------------------------------------------------------
# Thm 31: comparison with scaled lp balls
# ----------------------------------------------------------------------------


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
    r"""Containment order of Cho & Awan Thm. 31 against :math:`\ell_1,\ell_2,\ell_\infty` balls.

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
    >>> from accountant.sensitivity import table_space
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
            if ok else Refuted("an element of S exceeds the radius (bug)")
        )
        inflation: float | None = None
        if p == "2":
            inflation = rad * float(np.linalg.norm(ball.facets, axis=1).max())
        elif len(ball.facets) <= max_facets:
            inflation = max(_section_support(q @ a, rad, p, null) for a in ball.facets)
        vr: float | None = None
        if p == "2":
            vr = math.exp(_log_unit_ball_volume(s) + s * math.log(rad) - math.log(ball.volume))
        elif s <= max_volume_dim and (p == "inf" or d <= 16):
            vr = _section_volume(q, rad, p) / ball.volume
        out.append(LpComparison(p, rad, contains, inflation, vr))
    return tuple(out)


def _section_support(c: FloatArray, rad: float, p: str, null: FloatArray) -> float:
    """max c.x over ||x||_p <= rad, x in V (V^perp spanned by ``null``), by LP."""
    d = c.shape[0]
    k = null.shape[1]
    if p == "inf":
        res = linprog(-c, A_eq=null.T if k else None, b_eq=np.zeros(k) if k else None,
                      bounds=[(-rad, rad)] * d, method="highs")
    else:  # x = xp - xm, sum(xp + xm) <= rad
        a_eq = np.hstack([null.T, -null.T]) if k else None
        res = linprog(np.concatenate([-c, c]), A_ub=np.ones((1, 2 * d)), b_ub=[rad],
                      A_eq=a_eq, b_eq=np.zeros(k) if k else None, bounds=(0, None), method="highs")
    if res.status != 0:  # pragma: no cover - bounded feasible LP
        raise VerificationError(f"support-function LP failed: {res.message}")
    return float(-res.fun)


def _section_volume(q: FloatArray, rad: float, p: str) -> float:
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


# ----------------------------------------------------------------------------
# Exact non-optimal fallback: a cheap ball containing conv(S)
# ----------------------------------------------------------------------------


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
    >>> from accountant.sensitivity import table_space
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
      :math:`[-1,1]`, checked in exact arithmetic): Cho & Awan Alg. 3's cube used
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
    cands["l2-ball"] = (rad * np.eye(s), _log_unit_ball_volume(s) + s * math.log(rad), 0.0)
    def mean_norm(k: str) -> float:
        """E||U||_2 on the candidate: exact for the ball, the Jensen upper bound ||T||_F/sqrt(3) for cubes."""
        return s / (s + 1) * rad if k == "l2-ball" else float(np.linalg.norm(cands[k][0])) / math.sqrt(3)

    chosen: FallbackKind
    if kind == "auto":   # the smallest expected l2 error (not the smallest volume: they disagree)
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
        sens = float(cert.max_coordinate)                     # exact rational coordinates
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
    mean_k_lower = s / (s + 1) * math.exp((log_vk - _log_unit_ball_volume(s)) / s)
    loss = FallbackLoss(
        volume_ratio_upper=pad_up(math.exp(log_vol - log_vk), rel=1e-9),
        norm_ratio_upper=pad_up(mean_l / mean_k_lower, rel=1e-9),
        optimal_volume_lower=math.exp(log_vk),
        how=how,
    )
    label = (f"NON-OPTIMAL K-norm ball ({kind}) containing conv(S); exact sampler; "
             f"E||noise||_2 at most {loss.norm_ratio_upper:.3g}x the optimal K-norm mechanism's "
             f"({how})")
    return ContainingBall(space, q, kind, t, inv, math.exp(log_vol), sens, loss, relation, label)  # type: ignore[arg-type]


__all__ = [
    "ContainingBall", "FallbackLoss", "GaugeCertificate", "KNormBall", "LpComparison", "SpanCertificate",
    "TableSymmetry",
    "certified_span", "compare_lp_balls", "containing_ball", "exact_gauge",
]
