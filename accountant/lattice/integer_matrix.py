"""Exact integer matrix routines (Python ints): parsing, column reduction with transform, rank, Gram determinants.

The kernels behind :mod:`accountant.lattice.kernel` (Dharangutte, Gao, Gong & Yu 2023,
Prop 8; ``docs/reference/subspace-integer-postprocessing.md`` §3.2): nothing here rounds,
so a certificate built on them is exact. Matrices are lists of rows of Python
ints (:data:`IntMatrix`); sizes are bounded by the callers.
"""

from __future__ import annotations

import math
import numbers
from fractions import Fraction

import numpy as np

from semidp.accountant.core.errors import InvalidArgument

IntMatrix = list[list[int]]

__all__ = [
    "IntMatrix",
    "as_int",
    "column_reduce",
    "det_psd",
    "independent_rows",
    "int_gram",
    "int_matrix",
    "int_product",
]


def as_int(name: str, v: object) -> int:
    if isinstance(v, (numbers.Integral, np.bool_)):
        return int(v)
    if isinstance(v, (float, np.floating)) and math.isfinite(v) and float(v).is_integer():
        return int(v)
    if isinstance(v, numbers.Rational) and Fraction(v).denominator == 1:
        return int(Fraction(v))
    raise InvalidArgument(f"{name} has entry {v!r}; entries must be integers (exact lattice arithmetic).")


def int_matrix(name: str, value: object) -> tuple[IntMatrix, int]:
    """``value`` (numpy array or nested sequences) as integer rows plus the column count."""
    try:
        arr = value if isinstance(value, np.ndarray) else np.array(value, dtype=object)
    except ValueError as e:
        raise InvalidArgument(f"{name} is not a rectangular matrix: {e}") from e
    if arr.ndim != 2:
        raise InvalidArgument(
            f"{name} must be a 2-D integer matrix; got shape {arr.shape} (use an "
            "array of shape (0, d) for no constraint)."
        )
    return [[as_int(name, v) for v in r] for r in arr.tolist()], int(arr.shape[1])


def column_reduce(
    rows: IntMatrix, d: int, n_pivot_rows: int, track: bool
) -> tuple[IntMatrix, IntMatrix | None, list[int]]:
    """Unimodular integer column reduction ``M V = [L | 0]`` (reference §3.2 fallback).

    For each of the first ``n_pivot_rows`` rows, the extended gcd of the row's
    entries in the free columns ``p..d-1`` is computed by elementary column
    operations (determinant +-1): swap the smallest nonzero entry into column
    ``p``, subtract the nearest multiple of column ``p`` from the others, repeat.
    This is the §3.2 pairwise step done Euclid-style across all columns at once,
    which keeps entries far smaller. Rows after ``n_pivot_rows`` are carried
    along (to map points into lattice coordinates). Returns the columns of
    ``M V``, the columns of ``V`` (if ``track``) and the pivots; ``L`` (pivot rows,
    first ``len(pivots)`` columns) is lower triangular, so ``|prod(pivots)|`` is
    the gcd of the maximal minors of the pivot rows when they are independent.
    Rows already processed are zero in columns ``>= p``, so operations touch
    rows ``>= i`` only.
    """
    cols = [[r[j] for r in rows] for j in range(d)]
    vcols = [[int(i == j) for i in range(d)] for j in range(d)] if track else None
    pivots: list[int] = []
    p = 0
    for i in range(n_pivot_rows):
        while p < d:
            nz = [j for j in range(p, d) if cols[j][i]]
            if not nz:
                break  # dependent row (or finished)
            js = min(nz, key=lambda j: abs(cols[j][i]))
            cols[p], cols[js] = cols[js], cols[p]
            if vcols is not None:
                vcols[p], vcols[js] = vcols[js], vcols[p]
            if len(nz) == 1:
                pivots.append(cols[p][i])
                p += 1
                break
            cp, a = cols[p], cols[p][i]
            for j in range(p + 1, d):
                b = cols[j][i]
                if b:
                    q = (2 * b + a) // (2 * a)  # nearest integer to b / a: |remainder| <= |a| / 2
                    cols[j] = cols[j][:i] + [u - q * w for u, w in zip(cols[j][i:], cp[i:])]
                    if vcols is not None:
                        vcols[j] = [u - q * w for u, w in zip(vcols[j], vcols[p])]
        else:
            break
    return cols, vcols, pivots


def independent_rows(rows: IntMatrix) -> list[int]:
    """Indices of a maximal independent set of rows (greedy, exact fraction-free elimination).

    Each reduced row has zeros before its pivot (first nonzero) and at every earlier
    pivot; a new row is reduced against them in ascending pivot order, so it is
    zero at all pivots and is independent iff something is left.
    """
    basis: list[tuple[int, list[int]]] = []  # (pivot column, reduced row), sorted by pivot
    keep: list[int] = []
    for idx, row in enumerate(rows):
        x = list(row)
        for c, b in basis:
            if x[c]:
                f, pb = x[c], b[c]
                x = [pb * u - f * v for u, v in zip(x, b)]
                g = math.gcd(*x)
                x = [u // g for u in x] if g > 1 else x
        lead = next((j for j, u in enumerate(x) if u), None)
        if lead is not None:
            basis.append((lead, x))
            basis.sort(key=lambda t: t[0])
            keep.append(idx)
    return keep


def int_gram(vecs: IntMatrix) -> IntMatrix:
    """Exact Gram matrix of the given vectors (numpy int64 when no overflow is possible)."""
    big = max((abs(v) for vec in vecs for v in vec), default=0)
    if vecs and big * big * len(vecs[0]) < 2**62:
        x = np.array(vecs, dtype=np.int64)
        out: IntMatrix = (x @ x.T).tolist()
        return out
    return [[sum(u * v for u, v in zip(p, q)) for q in vecs] for p in vecs]


_PRIMES: list[int] = []


def det_psd(g: IntMatrix) -> int:
    """Exact determinant of a positive semidefinite integer matrix (Gram matrix).

    Determinants modulo primes below 2**31 (numpy int64 elimination, products
    < 2**62) combined by the Chinese remainder theorem until the modulus exceeds
    Hadamard's bound ``det <= prod(diag)`` for PSD matrices; ``0 <= det`` fixes the
    representative.
    """
    n = len(g)
    if n == 0:
        return 1
    bound = math.prod(g[i][i] for i in range(n))
    modulus, value, idx = 1, 0, 0
    while modulus <= bound:
        while idx >= len(_PRIMES):
            import sympy

            _PRIMES.append(int(sympy.prevprime(_PRIMES[-1] if _PRIMES else 2**31)))
        p = _PRIMES[idx]
        idx += 1
        a = np.array([[x % p for x in row] for row in g], dtype=np.int64)
        det = 1
        for c in range(n):
            nzr = np.flatnonzero(a[c:, c])
            if nzr.size == 0:
                det = 0
                break
            r = c + int(nzr[0])
            if r != c:
                a[[c, r]] = a[[r, c]]
                det = -det
            piv = int(a[c, c])
            det = det * piv % p
            f = (a[c + 1 :, c] * pow(piv, -1, p)) % p
            a[c + 1 :, c:] = (a[c + 1 :, c:] - (f[:, None] * a[c, c:][None, :]) % p) % p
        # CRT: value = value mod modulus, det mod p
        t = ((det - value) * pow(modulus, -1, p)) % p
        value, modulus = value + modulus * t, modulus * p
    return value


def int_product(rows: IntMatrix, ccols: IntMatrix) -> IntMatrix:
    """``A C`` exactly, with ``C`` given by columns (zeros of ``C`` skipped)."""
    out = [[0] * len(ccols) for _ in rows]
    for j, col in enumerate(ccols):
        nz = [(i, v) for i, v in enumerate(col) if v]
        for r, row in enumerate(rows):
            out[r][j] = sum(row[i] * v for i, v in nz)
    return out


# --------------------------------------------------------------------------- certificate
