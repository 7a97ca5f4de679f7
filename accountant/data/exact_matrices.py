r"""The exact range of invariant and query matrices, and the checked conversions that keep them in it.

The searches for :math:`a(t)` and the sensitivity space, the fiber counts, the
integer programs (HiGHS, float64) and the Z3 certificates work on ``int64``
arrays built from the spec's matrices. numpy wraps silently on overflow and
float64 rounds integers beyond :math:`2^{53}`, so a matrix is converted only
through the functions here, which keep every value the code forms exact or
refuse with :class:`~accountant.core.errors.InvalidArgument` naming the entry:

* an **invariant row** :math:`a` is first divided by the gcd of its entries
  (:func:`primitive_row`; :math:`a\cdot h = a\cdot h_0 \iff (a/g)\cdot h = (a/g)\cdot h_0`,
  so the conforming datasets, hence :math:`a(t)` and every sensitivity, are
  unchanged); then :math:`\lVert a\rVert_1 \cdot \max(n, 1) \le` :data:`ROW_VALUE_LIMIT`
  :math:`= 2^{53}`, which bounds :math:`|a\cdot v|` for every :math:`v` with
  :math:`|v_c| \le n` (a histogram of ``n`` records, a difference of two, a
  partial sum): exact in ``int64`` and in float64;
* a **query entry** :math:`q` satisfies :math:`|q| \le` :data:`QUERY_ENTRY_LIMIT`
  :math:`= 2^{31}-1`, and a query image :math:`Q u` is formed only when
  :math:`\max_u \lVert u\rVert_1 \cdot \max|q| < 2^{62}` (:func:`exact_image`);
  norms of the image are then computed in Python integers
  (:mod:`accountant.sensitivity.spaces`).

Entries must be integers: Python or numpy integers, :class:`fractions.Fraction`
with denominator 1, or finite integral floats of magnitude at most :math:`2^{53}`
(a larger float may already have been rounded when it was parsed).
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence
from fractions import Fraction

import numpy as np
from numpy.typing import NDArray

from semidp.accountant.core.errors import InvalidArgument

#: Largest ``||row||_1 * max(n, 1)`` of a (gcd-reduced) invariant row: every value the row takes on
#: a histogram of ``n`` records, or on a difference or partial sum of one, is an exact integer in
#: int64 and in float64 (the integer programs' input).
ROW_VALUE_LIMIT = 2**53

#: Largest ``|entry|`` of a linear query matrix (images of sensitivity vectors stay in int64).
QUERY_ENTRY_LIMIT = 2**31 - 1

#: Products formed in int64 must stay below this (a margin of 2 below int64's 2**63).
INT64_PRODUCT_LIMIT = 2**62

#: Largest magnitude of a float accepted as an exact integer (float64 integers are exact up to here).
FLOAT_EXACT_LIMIT = 2**53


def shown(v: int) -> str:
    """An integer for a message: in full up to 24 characters, else its first digits and length."""
    s = str(v)
    return s if len(s) <= 24 else f"{s[:8]}... ({len(s.lstrip('-'))} digits)"


def exact_int(key: str, v: object) -> int:
    """``v`` as a Python int, or :class:`InvalidArgument` naming ``key``: integers, integral
    :class:`~fractions.Fraction`, and finite integral floats of magnitude <= 2**53 only."""
    if isinstance(v, (bool, np.bool_)):
        raise InvalidArgument(f"{key} = {v!r}: expected an integer, not a boolean.")
    if isinstance(v, numbers.Integral):
        return int(v)
    if isinstance(v, numbers.Rational):
        f = Fraction(int(v.numerator), int(v.denominator))
        if f.denominator == 1:
            return int(f)
        raise InvalidArgument(
            f"{key} = {shown(f.numerator)}/{shown(f.denominator)}: expected an integer (the matrix is used in exact integer arithmetic)."
        )
    if isinstance(v, (float, np.floating)):
        x = float(v)
        if not math.isfinite(x):
            raise InvalidArgument(f"{key} = {x!r}: expected a finite integer.")
        if not x.is_integer():
            raise InvalidArgument(
                f"{key} = {x!r}: expected an integer (the matrix is used in exact integer arithmetic)."
            )
        if abs(x) > FLOAT_EXACT_LIMIT:
            raise InvalidArgument(
                f"{key} = {x!r}: a float beyond 2**53 may already be rounded; write the integer exactly "
                "(without a decimal point or exponent)."
            )
        return int(x)
    raise InvalidArgument(f"{key} = {v!r}: expected an integer.")


def exact_rows(key: str, rows: object) -> list[list[int]]:
    """A matrix (nested sequences or a numpy array) as rows of Python ints; entries checked by :func:`exact_int`
    (``key[r][c]`` names an offending entry)."""
    seq = rows.tolist() if isinstance(rows, np.ndarray) else rows
    if not isinstance(seq, Sequence) or isinstance(seq, (str, bytes)):
        raise InvalidArgument(f"{key} must be a matrix (a list of rows), got {type(rows).__name__}.")
    out: list[list[int]] = []
    for r, row in enumerate(seq):
        if not isinstance(row, Sequence) or isinstance(row, (str, bytes)):
            raise InvalidArgument(f"{key}[{r}] must be a row (a list of numbers), got {row!r}.")
        out.append([exact_int(f"{key}[{r}][{c}]", v) for c, v in enumerate(row)])
    return out


def primitive_row(row: Sequence[int]) -> tuple[int, ...]:
    """``row`` divided by the gcd of its entries (exact; a zero row is returned unchanged).

    The constraint ``a . h = a . h0`` and ``(a / g) . h = (a / g) . h0`` hold for the
    same histograms, so the reduced row describes the same invariant.

    Examples
    --------
    >>> primitive_row((0, -2**63, 2**62))
    (0, -2, 1)
    """
    g = math.gcd(*row) if row else 0
    return tuple(row) if g <= 1 else tuple(v // g for v in row)


def row_value_problem(row: Sequence[int], n: int | None) -> tuple[int, str] | None:
    """Why ``row`` (already gcd-reduced) is beyond the exact range with ``n`` records, or None.

    Returns the column of the row's largest entry and the reason.
    """
    l1 = sum(abs(v) for v in row)
    scale = max(n or 1, 1)
    if l1 * scale <= ROW_VALUE_LIMIT:
        return None
    c = max(range(len(row)), key=lambda j: abs(row[j]))
    with_n = f" times n = {scale}" if scale > 1 else ""
    return c, (
        f"after dividing the row by the gcd of its entries, its absolute sum {shown(l1)}{with_n} exceeds "
        "2**53, the range in which the searches, integer programs and Z3 certificates compute exactly"
    )


def invariant_int64(key: str, rows: object, cells: int, n: int | None = None) -> NDArray[np.int64]:
    """The invariant matrix as int64 (rows exactly as given, not reduced), refused beyond the exact range."""
    ints = exact_rows(key, rows)
    for r, row in enumerate(ints):
        if len(row) != cells:
            raise InvalidArgument(f"{key}[{r}] has {len(row)} entries; expected {cells} (one per cell).")
        why = row_value_problem(row, n)
        if why is not None:
            raise InvalidArgument(f"{key}[{r}][{why[0]}] = {shown(row[why[0]])}: {why[1]}.")
    return np.array(ints, dtype=np.int64).reshape(len(ints), cells)


def check_rows_with_n(key: str, a: NDArray[np.int64], n: int) -> None:
    """Refuse an int64 matrix whose rows times ``n`` records leave the exact range (:data:`ROW_VALUE_LIMIT`)."""
    for r, row in enumerate(a.tolist()):
        why = row_value_problem(row, n)
        if why is not None:
            raise InvalidArgument(f"{key}[{r}][{why[0]}] = {shown(row[why[0]])}: {why[1]}.")


def query_entry_problem(v: int) -> str | None:
    """Why a query entry is beyond :data:`QUERY_ENTRY_LIMIT`, or None."""
    if abs(v) <= QUERY_ENTRY_LIMIT:
        return None
    return (
        "query entries must lie in [-(2**31 - 1), 2**31 - 1], the range in which the images of "
        "sensitivity vectors and their norms are computed exactly"
    )


def query_int64(key: str, rows: object, cells: int) -> NDArray[np.int64]:
    """A linear query matrix as int64, entries checked (integers within :data:`QUERY_ENTRY_LIMIT`)."""
    ints = exact_rows(key, rows)
    for r, row in enumerate(ints):
        if len(row) != cells:
            raise InvalidArgument(f"{key}[{r}] has {len(row)} entries; expected {cells} (one per cell).")
        for c, v in enumerate(row):
            why = query_entry_problem(v)
            if why is not None:
                raise InvalidArgument(f"{key}[{r}][{c}] = {shown(v)}: {why}.")
    return np.array(ints, dtype=np.int64).reshape(len(ints), cells)


def exact_image(u: NDArray[np.int64], q: NDArray[np.int64], what: str = "the query image") -> NDArray[np.int64]:
    """``u @ q.T`` in int64, refused (:class:`InvalidArgument`) unless every entry provably fits:
    ``max_i ||u_i||_1 * max |q| < 2**62``."""
    if u.shape[0] == 0 or q.size == 0:
        return np.asarray(u @ q.T, dtype=np.int64)
    ul1 = int(np.abs(u).sum(axis=1).max())
    qmax = int(np.abs(q).max())
    if ul1 * qmax >= INT64_PRODUCT_LIMIT:
        raise InvalidArgument(
            f"{what}: entries up to {ul1} x {qmax} would leave the exact int64 range (2**62); "
            "use smaller query entries."
        )
    return np.asarray(u @ q.T, dtype=np.int64)


__all__ = [
    "FLOAT_EXACT_LIMIT",
    "INT64_PRODUCT_LIMIT",
    "QUERY_ENTRY_LIMIT",
    "ROW_VALUE_LIMIT",
    "check_rows_with_n",
    "exact_image",
    "exact_int",
    "exact_rows",
    "invariant_int64",
    "primitive_row",
    "query_entry_problem",
    "query_int64",
    "row_value_problem",
    "shown",
]
