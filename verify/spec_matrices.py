"""Load-time checks of ``invariant.matrix`` and ``query.matrix``: exact integers within the stated range.

Each problem names the entry (``invariant.matrix[0][1]``), so a spec whose matrix
the numeric code could not hold exactly exits 2 before any work is done
(:mod:`accountant.data.exact_matrices` states the range and why; ``specs/README.md``
the contract). Invariant rows are checked after dividing by their gcd, as
:func:`verify.spec_values.invariant_of` builds them.
"""

from __future__ import annotations

from fractions import Fraction

from semidp.accountant.data.exact_matrices import (
    ROW_VALUE_LIMIT,
    primitive_row,
    query_entry_problem,
    row_value_problem,
    shown,
)
from semidp.verify.registry import Problem
from semidp.verify.spec import Spec

#: At most this many rows with problems are listed per matrix (then a count of the others).
LISTED_ROWS = 20


def _records(spec: Spec) -> int | None:
    """n: the sum of ``data.table`` when given (and every entry parsed), else ``data.records``."""
    t = spec.data.table
    if t is not None and all(isinstance(c, int) for c in t):
        return sum(t)
    return spec.data.records


def _capped(key: str, probs: list[Problem]) -> list[Problem]:
    if len(probs) <= LISTED_ROWS:
        return probs
    return probs[:LISTED_ROWS] + [Problem(key, f"{len(probs) - LISTED_ROWS} more rows with problems not listed")]


def records_problems(spec: Spec) -> list[Problem]:
    """``data.records`` and the sum of ``data.table`` at most 2**53: counts and sums stay exact in int64 and float64."""
    probs: list[Problem] = []
    if spec.data.records is not None and spec.data.records > ROW_VALUE_LIMIT:
        probs.append(Problem("data.records", f"is {shown(spec.data.records)}; at most 2**53 records are supported"))
    n = _records(spec)
    if spec.data.table is not None and n is not None and n > ROW_VALUE_LIMIT:
        probs.append(Problem("data.table", f"sums to {shown(n)} records; at most 2**53 are supported"))
    return probs


def invariant_matrix_problems(spec: Spec) -> list[Problem]:
    """``invariant.matrix``: each row, divided by its gcd, within the exact range with ``n`` records."""
    rows = spec.invariant.matrix
    if not rows:
        return []
    n = _records(spec)
    probs: list[Problem] = []
    for r, row in enumerate(rows):
        if row is None or any(v is None for v in row):
            continue  # its parse problem is listed
        reduced = primitive_row(row)
        why = row_value_problem(reduced, n)
        if why is not None:
            c, reason = why
            probs.append(Problem(f"invariant.matrix[{r}][{c}]", f"is {shown(row[c])}; {reason}"))
    return _capped("invariant.matrix", probs)


def _entry_problem(v: Fraction) -> str | None:
    if v.denominator != 1:
        return f"{shown(v.numerator)}/{shown(v.denominator)} is not an integer: only integer linear queries are enumerated exactly"
    why = query_entry_problem(int(v))
    return None if why is None else f"is {shown(int(v))}; {why}"


def query_matrix_problems(spec: Spec, cells: int) -> list[Problem]:
    """``query.matrix`` (``kind = "linear"``, checked by the loader): one integer entry per cell within the range."""
    q = spec.query
    if q is None:  # no [query], or one that failed to parse (its kind's own key is checked there)
        return []
    probs: list[Problem] = []
    for r, row in enumerate(q.matrix or ()):
        if len(row) != cells:
            probs.append(Problem(f"query.matrix[{r}]", f"has {len(row)} entries; expected {cells} (one per cell)"))
            continue
        for c, v in enumerate(row):
            if v is None:
                continue  # its parse problem is listed
            why = _entry_problem(v)
            if why is not None:
                probs.append(Problem(f"query.matrix[{r}][{c}]", why))
                break  # one problem per row
    return _capped("query.matrix", probs)


__all__ = ["LISTED_ROWS", "invariant_matrix_problems", "query_matrix_problems", "records_problems"]
