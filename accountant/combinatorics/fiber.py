r"""Invariant-conforming histograms: the fiber ``D_t`` at histogram level.

For a data space with ``k`` cells, ``n`` records and an invariant
``T(X) = A h(X)`` (every count invariant of :mod:`accountant.data.invariants`), the
datasets that share the published value ``t`` are summarised by their
histograms

.. math:: F_t = \{ h \in \mathbb Z_{\ge 0}^k : A h = t,\ \mathbf 1^\top h = n \}.

([CA24, Sec. 3]: ``D_t = {X : T(X) = t}``; with the Hamming metric
``n`` is fixed, so the total row is always added.) For a
:class:`~accountant.data.callable_invariant.CallableInvariant` the fiber is
``{h : func(h) = t, sum(h) = n}``.

Everything that enumerates states its size **before** enumerating
(:meth:`Fiber.estimate_size`: an exact count by dynamic programming when that is
cheap, otherwise a proven upper bound) and refuses with
:class:`~accountant.core.errors.SearchTooLarge` above a limit, naming the estimate,
whether it is exact, and the limit.

Enumeration is breadth-first over cells with interval propagation: after the
values of cells ``0..c`` are fixed, each row residual must lie in the range the
remaining cells can still produce (given the per-cell upper bounds), so the last
free cell of every row is forced and partial histograms that cannot be completed
over the reals are dropped at once.
"""

from __future__ import annotations

import contextlib
import math
import os
import sys
from collections.abc import Hashable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from semidp.accountant.core.arguments import check_int
from semidp.accountant.core.budget import Budget
from semidp.accountant.core.errors import BudgetExhausted, InvalidArgument, SearchTooLarge, format_size
from semidp.accountant.data.callable_invariant import CallableInvariant, freeze_value
from semidp.accountant.data.dataspace import DataSpace
from semidp.accountant.data.exact_matrices import ROW_VALUE_LIMIT, check_rows_with_n
from semidp.accountant.data.invariants import Counting, Invariant, Linear, Margins, NoInvariant, Total

AnyInvariant = Invariant | CallableInvariant
"""A matrix invariant of :mod:`accountant.data.invariants` or a callable one."""

_LINEAR_TYPES = (NoInvariant, Total, Margins, Linear, Counting)

#: Default largest number of histograms any search enumerates.
DEFAULT_LIMIT = 1_000_000

#: Default work budget (expanded partial states) of the counting pass.
DEFAULT_COUNT_WORK = 1_000_000
#: Seconds :meth:`Fiber.support` and :func:`integer_point` take by default (without a budget).
SUPPORT_SECONDS = 60.0


@dataclass(frozen=True, slots=True)
class FiberSize:
    """The size of a fiber, known before enumerating it.

    Examples
    --------
    >>> FiberSize(36, True, "dynamic-programming").describe()
    '36 (exact, dynamic-programming)'
    """

    value: int
    """Exact number of conforming histograms, or an upper bound on it."""
    exact: bool
    """Whether :attr:`value` is the exact count."""
    method: str
    """``"dynamic-programming"`` (exact count), ``"partition-bound"`` (product of
    composition counts over a partition of the cells), or ``"compositions"``
    (all histograms with ``n`` records; used for callable invariants)."""

    def describe(self) -> str:
        """E.g. ``'36 (exact, dynamic-programming)'``."""
        kind = "exact" if self.exact else "upper bound"
        value = str(self.value) if self.value < 10**15 else format_size(self.value)
        return f"{value} ({kind}, {self.method})"


@dataclass(frozen=True, eq=False)
class Fiber:
    """The conforming histograms ``{h >= 0 : T(h) = t, sum(h) = n}`` [CA24, Sec. 3].

    Build with :func:`conforming_fiber`, which validates the inputs.

    Examples
    --------
    >>> from semidp.accountant.data.invariants import Margins
    >>> space = DataSpace.of(("A", 2), ("B", 2))
    >>> f = conforming_fiber(space, Margins((("A",), ("B",))), table=(1, 1, 1, 1))
    >>> f.t, f.n
    ((2, 2, 2, 2), 4)
    >>> f.estimate_size().describe()
    '3 (exact, dynamic-programming)'
    >>> f.enumerate().tolist()
    [[0, 2, 2, 0], [1, 1, 1, 1], [2, 0, 0, 2]]
    """

    space: DataSpace
    """The data space (cells in row-major order)."""
    invariant: AnyInvariant
    """The published statistic."""
    t: Hashable
    """The published value (a tuple of ints for matrix invariants)."""
    n: int
    """Number of records (fixed under the Hamming metric)."""
    matrix: NDArray[np.int64] | None
    """``A`` with the all-ones row appended (``None`` for callable invariants)."""
    rhs: NDArray[np.int64] | None
    """``(t, n)`` matching :attr:`matrix` (``None`` for callable invariants)."""

    @property
    def is_linear(self) -> bool:
        """Whether the invariant is a matrix (linear) invariant."""
        return self.matrix is not None

    @property
    def n_cells(self) -> int:
        """Number of cells ``k``."""
        return self.space.n_cells

    def contains(self, histogram: Sequence[int]) -> bool:
        """Whether ``histogram`` conforms (nonnegative integers, ``n`` records, value ``t``)."""
        h = np.asarray(histogram)
        if h.shape != (self.n_cells,) or not np.issubdtype(h.dtype, np.integer):
            return False
        if (h < 0).any() or int(h.sum()) != self.n:
            return False
        if self.matrix is not None and self.rhs is not None:
            return bool(np.array_equal(self.matrix @ h.astype(np.int64), self.rhs))
        assert isinstance(self.invariant, CallableInvariant)  # for type checkers
        return bool(self.invariant.value(tuple(int(c) for c in h)) == self.t)

    def cell_upper_bounds(self) -> NDArray[np.int64]:
        """Per-cell bound ``U_c >= h_c`` for every conforming ``h``.

        From every row of ``A`` with nonnegative entries: ``h_c <= t_r / A_rc``
        (the total row gives ``U_c <= n``).
        """
        k = self.n_cells
        if self.matrix is None or self.rhs is None:
            return np.full(k, self.n, dtype=np.int64)
        return cell_bounds(self.matrix, self.rhs, self.n)

    def estimate_size(self, *, work_limit: int = DEFAULT_COUNT_WORK, budget: Budget | None = None) -> FiberSize:
        """Count the fiber without enumerating it, or bound it.

        Parameters
        ----------
        work_limit:
            Largest number of partial states the counting pass may expand before
            giving up and returning the upper bound.
        budget:
            Wall-clock budget of the counting pass: it gives up the same way when it expires (``None``: no limit).

        Returns
        -------
        FiberSize
            Exact count by dynamic programming over cells (states = row
            residuals, merged), or, when that exceeds ``work_limit``, the
            partition bound ``prod_r C(t_r + s_r - 1, s_r - 1)`` over a set of
            disjoint 0/1 rows (each row's cells form a composition of ``t_r``),
            times ``prod (U_c + 1)`` over uncovered cells. For callable
            invariants: the number of histograms with ``n`` records, all of
            which must be evaluated.
        """
        check_int("work_limit", work_limit, minimum=1)
        k = self.n_cells
        if self.matrix is None or self.rhs is None:
            return FiberSize(math.comb(self.n + k - 1, k - 1), False, "compositions")
        bounds = self.cell_upper_bounds()
        counted = _count_linear(self.matrix, self.rhs, bounds, work_limit, budget or Budget.unlimited())
        if counted is not None:
            return FiberSize(counted, True, "dynamic-programming")
        return FiberSize(_partition_bound(self.matrix, self.rhs, bounds), False, "partition-bound")

    def enumerate(
        self,
        *,
        limit: int = DEFAULT_LIMIT,
        work_limit: int = DEFAULT_COUNT_WORK,
        estimate: FiberSize | None = None,
    ) -> NDArray[np.int64]:
        """All conforming histograms, one per row, in lexicographic order.

        Parameters
        ----------
        limit:
            Refuse (before enumerating) when the size estimate exceeds this.
        work_limit:
            Budget of the counting pass used for the estimate.
        estimate:
            A size estimate already computed by :meth:`estimate_size` (saves
            counting twice).

        Raises
        ------
        SearchTooLarge
            If the estimate (exact count or upper bound, stated in the message)
            exceeds ``limit``, or an intermediate layer of the enumeration grows
            beyond ``4 * limit`` partial histograms.
        """
        check_int("limit", limit, minimum=1)
        est = estimate if estimate is not None else self.estimate_size(work_limit=work_limit)
        if est.value > limit:
            raise SearchTooLarge(
                f"enumerating the conforming histograms of the {self.invariant.describe()} "
                f"(n={self.n}, {self.n_cells} cells) refused: estimate {est.describe()} > "
                f"limit {limit}",
                est.value,
                limit,
                hint="Use the integer-programming search (method='integer-program'), "
                "or raise `limit` if memory allows (about 8*cells bytes per histogram).",
            )
        cap = max(4 * limit, 100_000)
        k = self.n_cells
        if self.matrix is None or self.rhs is None:
            ones = np.ones((1, k), dtype=np.int64)
            allh = _enumerate_linear(ones, np.array([self.n], dtype=np.int64), np.full(k, self.n, dtype=np.int64), cap)
            assert isinstance(self.invariant, CallableInvariant)
            inv = self.invariant
            keep = [i for i, row in enumerate(allh.tolist()) if inv.value(row) == self.t]
            return allh[np.array(keep, dtype=np.int64)] if keep else allh[:0]
        return _enumerate_linear(self.matrix, self.rhs, self.cell_upper_bounds(), cap)

    def support(self, *, budget: Budget | None = None) -> dict[int, tuple[int, ...]]:
        r"""The record values ``X_t`` with one conforming histogram showing each.

        ``X_t = {x : h_x >= 1 for some conforming h}`` (Cho & Awan 2024,
        Def. 13; per-individual sets coincide for permutation-invariant ``T``).
        Decided exactly, cell by cell, by an integer feasibility problem
        (HiGHS via :func:`scipy.optimize.milp`); every returned example is
        re-checked in integers. Callable invariants use enumeration.

        Raises
        ------
        SearchTooLarge
            Callable invariant with too many histograms to enumerate.
        InvalidArgument
            If the solver does not finish within ``budget`` (default: :data:`SUPPORT_SECONDS` from now).
        """
        if self.matrix is None or self.rhs is None:
            rows = self.enumerate()
            out: dict[int, tuple[int, ...]] = {}
            for row in rows.tolist():
                for c, v in enumerate(row):
                    if v > 0 and c not in out:
                        out[c] = tuple(row)
            return dict(sorted(out.items()))
        budget = Budget.of(SUPPORT_SECONDS) if budget is None else budget
        bounds = self.cell_upper_bounds()
        found: dict[int, tuple[int, ...]] = {}
        for c in range(self.n_cells):
            if c in found or bounds[c] < 1:
                continue
            lower = np.zeros(self.n_cells, dtype=np.int64)
            lower[c] = 1
            if budget.expired:
                raise BudgetExhausted(
                    f"--time-limit ran out while deciding which records can occur (cell {c} of {self.n_cells})",
                    c,
                )
            status, h = integer_point(self.matrix, self.rhs, lower, bounds, budget=budget)
            if status == "infeasible":
                continue
            if status != "feasible" or h is None:
                raise BudgetExhausted(
                    f"integer feasibility for cell {c} ended with status {status!r} within --time-limit", c
                )
            for cc in np.flatnonzero(h):
                found.setdefault(int(cc), tuple(int(v) for v in h))
        return dict(sorted(found.items()))


def conforming_fiber(
    space: DataSpace,
    invariant: AnyInvariant,
    *,
    table: Sequence[int] | NDArray[np.integer] | None = None,
    t: object = None,
    n: int | None = None,
) -> Fiber:
    """Validate inputs and build the fiber ``D_t`` [CA24, Sec. 3].

    Parameters
    ----------
    space:
        The data space.
    invariant:
        The published statistic (matrix invariant or :class:`CallableInvariant`).
    table:
        The confidential histogram (row-major, length ``space.n_cells``, or an
        array of shape ``space.shape``). Gives ``t = T(table)`` and ``n``.
    t:
        The published value, when no table is given (a sequence of ints for
        matrix invariants).
    n:
        Number of records; required when ``table`` is not given.

    Raises
    ------
    InvalidArgument
        Missing or inconsistent inputs, a negative or non-integer table, a value
        ``t`` of the wrong length.

    Examples
    --------
    >>> from semidp.accountant.data.invariants import Total
    >>> f = conforming_fiber(DataSpace.of(("A", 3),), Total(), t=(2,), n=2)
    >>> f.enumerate().tolist()
    [[0, 0, 2], [0, 1, 1], [0, 2, 0], [1, 0, 1], [1, 1, 0], [2, 0, 0]]
    """
    if not isinstance(space, DataSpace):
        raise InvalidArgument(f"space={space!r} must be a DataSpace.")
    if not isinstance(invariant, _LINEAR_TYPES + (CallableInvariant,)):
        raise InvalidArgument(
            f"invariant={invariant!r} must be one of NoInvariant, Total, Margins, Linear, "
            "Counting or CallableInvariant."
        )
    k = space.n_cells
    hist: tuple[int, ...] | None = None
    if table is not None:
        hist = histogram_from_table(space, table)
        if n is not None and check_int("n", n, minimum=1) != sum(hist):
            raise InvalidArgument(f"n={n} disagrees with the table, which has {sum(hist)} records.")
        n = sum(hist)
    if n is None:
        raise InvalidArgument(
            "n (the number of records) is required when no table is given; the Hamming "
            "metric compares datasets of the same size."
        )
    n = check_int("n", n, minimum=1)
    if isinstance(invariant, CallableInvariant):
        if hist is not None:
            tv = invariant.value(hist)
            if t is not None and freeze_value(t) != tv:
                raise InvalidArgument(f"t={t!r} disagrees with the table, whose value is {tv!r}.")
            t = tv
        if t is None:
            raise InvalidArgument("Give either `table` or the published value `t`.")
        return Fiber(space, invariant, freeze_value(t), n, None, None)
    a = np.asarray(invariant.matrix(space), dtype=np.int64)
    # Every value a row takes on n records (and every partial sum the searches form) must be exact in int64
    # and float64: refuse beyond the stated range rather than wrap (accountant.data.exact_matrices).
    check_rows_with_n("invariant.matrix", a, n)
    if k * n > ROW_VALUE_LIMIT:  # the total row: cell bounds sum to at most k * n
        raise InvalidArgument(f"n = {n} records over {k} cells: k * n exceeds 2**53, the exact range of the searches.")
    if hist is not None:
        tv_tuple = tuple(sum(c * h for c, h in zip(row, hist) if c and h) for row in a.tolist())  # exact
        if t is not None and _int_tuple("t", t) != tv_tuple:
            raise InvalidArgument(f"t={t!r} disagrees with the table, whose value is {tv_tuple}.")
        t = tv_tuple
    if t is None:
        raise InvalidArgument("Give either `table` or the published value `t`.")
    tt = _int_tuple("t", t)
    if len(tt) != a.shape[0]:
        raise InvalidArgument(
            f"t has {len(tt)} entries but the {invariant.describe()} has {a.shape[0]} rows over {k} cells."
        )
    for r, (row, tv) in enumerate(zip(a.tolist(), tt)):
        if abs(tv) > sum(abs(c) for c in row) * n:
            raise InvalidArgument(f"t[{r}] = {tv} is beyond every value row {r} of the invariant takes on {n} records.")
    full = np.vstack([a, np.ones((1, k), dtype=np.int64)])
    rhs = np.array(tt + (n,), dtype=np.int64)
    return Fiber(space, invariant, tt, n, full, rhs)


def histogram_from_table(space: DataSpace, table: Sequence[int] | NDArray[np.integer]) -> tuple[int, ...]:
    """Row-major histogram from a flat sequence or an array of shape ``space.shape``.

    Raises
    ------
    InvalidArgument
        Wrong shape, non-integer or negative counts, no records.
    """
    arr = np.asarray(table)
    if arr.shape == space.shape:
        arr = arr.reshape(-1)
    if arr.shape != (space.n_cells,):
        raise InvalidArgument(
            f"table has shape {arr.shape}; expected ({space.n_cells},) (row-major cells) or {space.shape}."
        )
    if arr.dtype == bool or not (
        np.issubdtype(arr.dtype, np.integer)
        or (np.issubdtype(arr.dtype, np.floating) and np.all(np.isfinite(arr)) and np.all(arr == np.round(arr)))
    ):
        raise InvalidArgument(f"table={arr.tolist()!r} must contain integer counts.")
    if (arr < 0).any():
        raise InvalidArgument(f"table={arr.tolist()!r} has negative counts.")
    hist = tuple(int(v) for v in arr)
    if sum(hist) < 1:
        raise InvalidArgument("table has no records; a(t) needs at least one individual.")
    return hist


def histogram_of_records(space: DataSpace, records: Sequence[int]) -> tuple[int, ...]:
    """Histogram of an ordered dataset given as cell indices.

    Examples
    --------
    >>> histogram_of_records(DataSpace.of(("A", 3),), [0, 2, 2])
    (1, 0, 2)
    """
    h = [0] * space.n_cells
    for c in records:
        if not (0 <= int(c) < space.n_cells):
            raise InvalidArgument(f"record cell {c!r} must be in [0, {space.n_cells}).")
        h[int(c)] += 1
    return tuple(h)


def count_datasets(histograms: NDArray[np.integer], n: int) -> int:
    r"""Number of ordered datasets with these histograms: :math:`\sum_h n!/\prod_c h_c!`.

    This is ``|D_t|`` of Cho & Awan 2024 (datasets of ``n`` ordered
    individuals), as opposed to the number of histograms.

    Examples
    --------
    >>> count_datasets(np.array([[2, 2, 0], [1, 1, 2]]), 4)
    18
    """
    fact = [math.factorial(i) for i in range(n + 1)]
    total = 0
    nf = fact[n]
    for row in np.asarray(histograms).tolist():
        d = 1
        for v in row:
            d *= fact[v]
        total += nf // d
    return total


@contextlib.contextmanager
def _stdout_to_stderr() -> Iterator[None]:
    """Send file descriptor 1 to 2 for the duration (HiGHS prints debug lines on stdout)."""
    try:
        sys.stdout.flush()
        saved = os.dup(1)
    except (OSError, ValueError):  # no real stdout (embedded interpreters)
        yield
        return
    try:
        os.dup2(2, 1)
        yield
    finally:
        os.dup2(saved, 1)
        os.close(saved)


def solve_milp(**kwargs: Any) -> Any:
    """:func:`scipy.optimize.milp` with one retry without presolve on a HiGHS solve error.

    HiGHS occasionally reports "Solve error" (status 4) from presolve on small
    infeasible problems (printing a debug line on stdout, which is redirected
    to stderr here so that machine-readable output stays clean); the same model
    without presolve is then decided correctly. Any other outcome is returned
    unchanged.
    """
    from scipy.optimize import milp

    with _stdout_to_stderr():
        res = milp(**kwargs)
        if res.status == 4:
            options = dict(kwargs.get("options") or {})
            options["presolve"] = False
            res = milp(**{**kwargs, "options": options})
    return res


def integer_point(
    a: NDArray[np.int64],
    b: NDArray[np.int64],
    lower: NDArray[np.int64],
    upper: NDArray[np.int64],
    *,
    budget: Budget | None = None,
) -> tuple[str, NDArray[np.int64] | None]:
    """Find ``h`` integer with ``a h = b`` and ``lower <= h <= upper`` (HiGHS MILP), within ``budget``
    (default: :data:`SUPPORT_SECONDS` from now; the solver always gets at least a millisecond).

    Returns
    -------
    status, h
        ``("feasible", h)`` with ``h`` re-checked exactly in integers,
        ``("infeasible", None)`` when HiGHS proves infeasibility, or
        ``("unknown", None)`` (time limit, or a solution that fails the exact re-check).
    """
    from scipy.optimize import Bounds, LinearConstraint

    k = a.shape[1]
    if (lower > upper).any():
        return "infeasible", None
    seconds = (Budget.of(SUPPORT_SECONDS) if budget is None else budget).remaining()
    seconds = SUPPORT_SECONDS if seconds == math.inf else seconds
    res = solve_milp(
        c=np.zeros(k),
        integrality=np.ones(k),
        bounds=Bounds(lower.astype(float), upper.astype(float)),
        constraints=[LinearConstraint(a.astype(float), b.astype(float), b.astype(float))],
        options={"time_limit": max(seconds, 1e-3), "presolve": True},
    )
    if res.status == 2:
        return "infeasible", None
    if res.x is None:
        return "unknown", None
    h = np.rint(res.x).astype(np.int64)
    if np.array_equal(a @ h, b) and (h >= lower).all() and (h <= upper).all():
        return "feasible", h
    return "unknown", None


# --------------------------------------------------------------------------- internals


def _int_tuple(name: str, value: object) -> tuple[int, ...]:
    try:
        arr = np.asarray(value)
    except (TypeError, ValueError):  # ragged sequences and the like
        raise InvalidArgument(f"{name}={value!r} must be a sequence of integers.") from None
    if arr.ndim == 0:
        arr = arr.reshape(1)
    if arr.ndim != 1 or arr.dtype == bool or not np.issubdtype(arr.dtype, np.integer):
        if arr.ndim == 1 and arr.size == 0:
            return ()
        raise InvalidArgument(f"{name}={value!r} must be a sequence of integers.")
    return tuple(int(v) for v in arr)


def cell_bounds(a: NDArray[np.int64], b: NDArray[np.int64], n: int) -> NDArray[np.int64]:
    """Per-cell upper bounds of non-negative histograms with ``a x = b`` and at most ``n`` records.

    A row with non-negative coefficients bounds each cell it covers by ``b // coefficient``; ``-1``
    everywhere when such a row has a negative right-hand side (nothing conforms).
    """
    k = a.shape[1]
    u = np.full(k, n, dtype=np.int64)
    for r in range(a.shape[0]):
        row = a[r]
        if (row >= 0).all():
            pos = row > 0
            if b[r] < 0:
                u[:] = -1  # infeasible: nothing conforms
                return u
            u[pos] = np.minimum(u[pos], b[r] // row[pos])
    return u


def _ceil_div(num: NDArray[np.int64], den: NDArray[np.int64]) -> NDArray[np.int64]:
    return -((-num) // den)


class _Propagator:
    """Interval propagation for ``A h = b``, ``0 <= h <= U``, cells fixed in order."""

    def __init__(self, a: NDArray[np.int64], b: NDArray[np.int64], u: NDArray[np.int64]) -> None:
        self.a = a
        self.b = b
        self.u = np.maximum(u, -1)
        k = a.shape[1]
        au = a * np.maximum(u, 0)[None, :]
        lo = np.minimum(au, 0)
        hi = np.maximum(au, 0)
        rows = a.shape[0]
        self.slo = np.zeros((k + 1, rows), dtype=np.int64)
        self.shi = np.zeros((k + 1, rows), dtype=np.int64)
        for c in range(k - 1, -1, -1):
            self.slo[c] = self.slo[c + 1] + lo[:, c]
            self.shi[c] = self.shi[c + 1] + hi[:, c]

    def feasible_start(self) -> bool:
        if (self.u < 0).any():
            return False
        return bool(((self.slo[0] <= self.b) & (self.b <= self.shi[0])).all())

    def ranges(self, c: int, res: NDArray[np.int64]) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
        """Value range of cell ``c`` for each residual row (residual = b - A h_partial)."""
        a = self.a[:, c]
        m = res.shape[0]
        lo = np.zeros(m, dtype=np.int64)
        hi = np.full(m, int(self.u[c]), dtype=np.int64)
        slo = self.slo[c + 1]
        shi = self.shi[c + 1]
        pos = np.flatnonzero(a > 0)
        if pos.size:
            ap = a[pos][None, :]
            lo = np.maximum(lo, _ceil_div(res[:, pos] - shi[pos][None, :], ap).max(axis=1))
            hi = np.minimum(hi, ((res[:, pos] - slo[pos][None, :]) // ap).min(axis=1))
        neg = np.flatnonzero(a < 0)
        if neg.size:
            an = -a[neg][None, :]
            lo = np.maximum(lo, _ceil_div(slo[neg][None, :] - res[:, neg], an).max(axis=1))
            hi = np.minimum(hi, ((shi[neg][None, :] - res[:, neg]) // an).min(axis=1))
        return lo, hi


def _expand(lo: NDArray[np.int64], hi: NDArray[np.int64]) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    cnt = np.maximum(hi - lo + 1, 0)
    total = int(cnt.sum())
    parent = np.repeat(np.arange(lo.shape[0], dtype=np.int64), cnt)
    starts = np.cumsum(cnt) - cnt
    val = lo[parent] + (np.arange(total, dtype=np.int64) - np.repeat(starts, cnt))
    return parent, val


def _enumerate_linear(a: NDArray[np.int64], b: NDArray[np.int64], u: NDArray[np.int64], cap: int) -> NDArray[np.int64]:
    k = a.shape[1]
    prop = _Propagator(a, b, u)
    if not prop.feasible_start():
        return np.zeros((0, k), dtype=np.int64)
    res = b[None, :].copy()
    parents: list[NDArray[np.int64]] = []
    values: list[NDArray[np.int64]] = []
    for c in range(k):
        lo, hi = prop.ranges(c, res)
        width = np.maximum(hi - lo + 1, 0)
        total = int(width.sum())
        if total > cap:
            raise SearchTooLarge(
                f"enumerating conforming histograms (partial layer at cell {c} of {k})",
                total,
                cap,
                hint="The fiber is larger than its estimate suggested; use the integer-programming search.",
            )
        parent, val = _expand(lo, hi)
        res = res[parent] - val[:, None] * a[:, c][None, :]
        parents.append(parent)
        values.append(val)
    m = res.shape[0]
    out = np.zeros((m, k), dtype=np.int64)
    idx = np.arange(m, dtype=np.int64)
    for c in range(k - 1, -1, -1):
        out[:, c] = values[c][idx]
        idx = parents[c][idx]
    # Exact re-check (cheap): every row satisfies the system.
    if m and not (np.array_equal(out @ a.T, np.broadcast_to(b, (m, b.shape[0]))) and (out >= 0).all()):
        raise AssertionError("internal error: enumeration produced a non-conforming histogram")
    return out  # lexicographic by construction (values increase within each parent)


def _row_keys(res: NDArray[np.int64], lo: NDArray[np.int64], hi: NDArray[np.int64]) -> NDArray[np.int64] | None:
    radix = (hi - lo + 1).tolist()
    prod = 1
    for r in radix:
        prod *= max(int(r), 1)
    if prod >= 2**62:
        return None
    strides = np.ones(len(radix), dtype=np.int64)
    for j in range(len(radix) - 2, -1, -1):
        strides[j] = strides[j + 1] * max(int(radix[j + 1]), 1)
    keys: NDArray[np.int64] = ((res - lo[None, :]) * strides[None, :]).sum(axis=1)
    return keys


def _count_linear(
    a: NDArray[np.int64], b: NDArray[np.int64], u: NDArray[np.int64], work_limit: int, budget: Budget
) -> int | None:
    """Exact number of integer points, or ``None`` if the work or time budget runs out."""
    k = a.shape[1]
    prop = _Propagator(a, b, u)
    if not prop.feasible_start():
        return 0
    res = b[None, :].copy()
    weight: NDArray[np.int64] = np.ones(1, dtype=np.int64)
    big = False  # switch to Python ints (object arrays) once counts approach 2**62
    for c in range(k):
        if budget.expired:
            return None
        lo, hi = prop.ranges(c, res)
        width = np.maximum(hi - lo + 1, 0)
        if int(width.sum()) > work_limit:
            return None
        parent, val = _expand(lo, hi)
        res = res[parent] - val[:, None] * a[:, c][None, :]
        weight = weight[parent]
        if res.shape[0] == 0:
            return 0
        keys = _row_keys(res, prop.slo[c + 1], prop.shi[c + 1])
        if keys is None:
            _, first, inverse = np.unique(res, axis=0, return_index=True, return_inverse=True)
        else:
            _, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
        inverse = inverse.reshape(-1)
        order = np.argsort(inverse, kind="stable")
        starts = np.searchsorted(inverse[order], np.arange(first.shape[0]))
        if not big:
            shadow = np.bincount(inverse, weights=weight.astype(np.float64))
            if shadow.max() > 2.0**61:
                big = True
                weight = weight.astype(object)
        weight = np.add.reduceat(weight[order], starts)
        res = res[first]
    return int(weight.sum())


def _partition_bound(a: NDArray[np.int64], b: NDArray[np.int64], u: NDArray[np.int64]) -> int:
    k = a.shape[1]
    if (u < 0).any():
        return 0
    best = math.prod(int(v) + 1 for v in u)
    zero_one = [r for r in range(a.shape[0]) if set(np.unique(a[r]).tolist()) <= {0, 1}]
    supports = {r: set(np.flatnonzero(a[r]).tolist()) for r in zero_one}
    for seed in zero_one:
        chosen = [seed]
        covered = set(supports[seed])
        for r in zero_one:
            if r != seed and not (supports[r] & covered):
                chosen.append(r)
                covered |= supports[r]
        bound = 1
        for r in chosen:
            s = sum(1 for c in supports[r] if u[c] > 0)
            tr = int(b[r])
            if s == 0:
                bound *= 1 if tr == 0 else 0
            else:
                bound *= math.comb(tr + s - 1, s - 1) if tr >= 0 else 0
        for c in range(k):
            if c not in covered:
                bound *= int(u[c]) + 1
        best = min(best, bound)
    return best
