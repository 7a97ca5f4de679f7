r"""Exact certificates for K-norm balls (house style R9): the span of a sensitivity space and the gauge.

:func:`certified_span` proves in integer arithmetic (Bareiss determinants, exact
coordinates) that a basis spans :math:`\mathrm{span}(S)`; :func:`exact_gauge` gives
the gauge :math:`\|x\|_K` of :math:`K=\mathrm{conv}(S)` with a rational LP certificate,
or :class:`~accountant.core.outcome.Unknown` [CA24, Thm. 31; AS21].
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.optimize import linprog

from semidp.accountant.core.errors import InvalidArgument, VerificationError
from semidp.accountant.core.outcome import Unknown
from semidp.accountant.sensitivity.spaces import SensitivitySpace

FloatArray = NDArray[np.float64]


IntArray = NDArray[np.int64]


def bareiss_det(m: list[list[int]]) -> int:
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


def exact_coordinates(basis: IntArray, vectors: IntArray, approx: FloatArray) -> tuple[IntArray, IntArray] | None:
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
    num = np.where(ok, rounded, 0).astype(np.int64).T.copy()  # (n, s)
    if float(np.abs(basis).max()) * float(np.abs(num).max(initial=0)) * s < 2.0**52:
        # every product and partial sum is an integer below 2**53: float64 arithmetic is exact here
        prod = basis.astype(np.float64) @ num.T.astype(np.float64)
        ok &= np.all(prod == vectors.T.astype(np.float64), axis=0)
    else:
        ok &= np.all(basis @ num.T == vectors.T, axis=0)  # exact int64 check
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


def greedy_short_basis(nz: IntArray, s: int) -> IntArray:
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
    >>> from semidp.accountant.sensitivity.spaces import table_space
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
    r"""Exact rank and bases of span(S); optionally check a given basis ([CA24, Alg. 3], step 1).

    Without ``basis``, a basis of elements of :math:`S` is found greedily
    (shortest in :math:`\ell_1` first, which for tables gives a basis of the
    lattice of margin-preserving integer tables, hence the smallest cube), then
    repaired by a maximum-volume local search: while some element :math:`u` has a coordinate
    :math:`|c_k(u)|>1`, it replaces :math:`b_k` (by Cramer's rule :math:`|\det|`
    grows by the factor :math:`|c_k(u)|`, so the search ends). At the end every
    element of :math:`S` has coordinates in :math:`[-1,1]`, i.e.
    :math:`\operatorname{conv}(S)\subseteq B[-1,1]^s` (the containment
    precondition of Alg. 3, ``docs/reference/semi-dp.md`` §10 item 5).

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
    :attr:`SensitivitySpace.rank` (slow from 6x6 with 3-cycles on): ``basis`` is
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
    evals, evecs = np.linalg.eigh(uf.T @ uf)  # Gram of the stacked vectors, exact in float
    keep = evals > evals[-1] * 1e-12
    s = int(np.sum(keep))
    q = np.ascontiguousarray(evecs[:, keep][:, ::-1])
    if basis is None:
        b = greedy_short_basis(nz, s)
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
    det = bareiss_det([[int(x) for x in row] for row in gram])
    if det == 0:
        raise InvalidArgument("The basis columns are linearly dependent.")
    c = np.linalg.pinv(b.astype(np.float64)) @ uf.T
    coords = exact_coordinates(b, nz, c)
    if coords is None:
        if basis is not None:
            raise InvalidArgument("The basis does not span S (some element has no exact coordinates in it).")
        raise VerificationError("exact confirmation of the basis coordinates failed.")
    return SpanCertificate(s, q, b, nz, coords[0], coords[1], det)


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
    :class:`~accountant.core.outcome.Unknown` with the rational bounds in the reason.

    Raises
    ------
    InvalidArgument
        ``x`` is not an integer vector of the ambient dimension, or is outside span(S).

    Examples
    --------
    >>> from semidp.accountant.sensitivity.spaces import table_space, table_three_cycles
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
    res = linprog(
        np.ones(nz.shape[0]),
        A_eq=nz.T.astype(np.float64),
        b_eq=xi.astype(np.float64),
        bounds=(0, None),
        method="highs-ds",
    )
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
