r"""Independent re-check of semi-adjacent-parameter witnesses [CA24, Def. 13].

This module deliberately does **not** import the searches
(:mod:`accountant.combinatorics.semiadjacent_search`) or the fiber enumeration
(:mod:`accountant.combinatorics.fiber`). From the definition of the invariant alone it
re-checks, in exact integer arithmetic:

1. both histograms are nonnegative integer vectors with ``n`` records and
   invariant value ``t`` (so both datasets are in ``D_t``);
2. the dataset holds the record ``x`` and the nearest dataset holds the
   target ``x'`` (so ``x'`` is in ``X_t``);
3. the stated distance equals the least Hamming distance between orderings,
   computed as ``n - (largest number of positions that can agree)``, and is
   realised by an explicit pair of ordered datasets built here;
4. (small fibers) no conforming dataset with ``x'`` at position ``i`` is
   strictly closer: every histogram with ``n`` records is generated, and for
   tiny ones every ordering too, so the histogram reduction itself is
   re-derived on the instance;
5. (:func:`check_result`, tiny fibers) the reported value is the maximum over
   all conforming datasets, recomputed here.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Hashable, Iterator, Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from semidp.accountant.data.callable_invariant import CallableInvariant, freeze_value
from semidp.accountant.data.dataspace import DataSpace


class _WitnessLike(Protocol):
    """Read-only view of :class:`accountant.combinatorics.semiadjacent_search.Witness` (no import needed)."""

    @property
    def dataset(self) -> tuple[int, ...]: ...
    @property
    def record(self) -> int: ...
    @property
    def target(self) -> int: ...
    @property
    def nearest(self) -> tuple[int, ...]: ...
    @property
    def distance(self) -> int: ...
    @property
    def individual(self) -> int | None: ...
    @property
    def ordered_dataset(self) -> tuple[int, ...] | None: ...
    @property
    def ordered_nearest(self) -> tuple[int, ...] | None: ...


class _ResultLike(Protocol):
    """Read-only view of :class:`accountant.combinatorics.semiadjacent_search.SemiAdjacentResult`."""

    @property
    def value(self) -> int: ...
    @property
    def upper(self) -> int: ...
    @property
    def exact(self) -> bool: ...
    @property
    def witness(self) -> _WitnessLike: ...
    @property
    def t(self) -> Hashable: ...
    @property
    def n(self) -> int: ...


@dataclass(frozen=True, slots=True)
class WitnessCheck:
    """Outcome of an independent witness check: pass/fail with the reason.

    Examples
    --------
    >>> bool(WitnessCheck(False, "distance mismatch", False))
    False
    """

    passed: bool
    """Whether every check that was run passed."""
    reason: str
    """What was checked (on success) or the first failure (on failure)."""
    optimality_checked: bool
    """Whether optimality of the inner minimum was checked exhaustively."""

    def __bool__(self) -> bool:
        return self.passed


def _value(space: DataSpace, invariant: object, h: Sequence[int]) -> Hashable:
    if isinstance(invariant, CallableInvariant):
        return invariant.value(tuple(h))
    rows = np.asarray(invariant.matrix(space), dtype=np.int64).tolist()  # type: ignore[attr-defined]
    hv = [int(v) for v in h]
    return tuple(sum(c * v for c, v in zip(row, hv) if c and v) for row in rows)  # Python ints: never wraps


def _same_value(space: DataSpace, invariant: object, h: Sequence[int], t: Hashable) -> bool:
    v = _value(space, invariant, h)
    if isinstance(invariant, CallableInvariant):
        return v == freeze_value(t)
    if not isinstance(t, (tuple, list)):
        return False
    try:
        tt = tuple(int(x) for x in t)
    except (TypeError, ValueError):
        return False
    return v == tt


def _overlap_distance(h: Sequence[int], x: int, h2: Sequence[int], x2: int) -> int:
    """n - max agreements between X (X_i = x) and X' (X'_i = x'), over orderings of X'."""
    n = sum(h)
    agree = int(x == x2)
    for c in range(len(h)):
        agree += min(h[c] - (c == x), h2[c] - (c == x2))
    return n - agree


def _compositions(n: int, k: int) -> Iterator[tuple[int, ...]]:
    if k == 1:
        yield (n,)
        return
    for first in range(n, -1, -1):
        for rest in _compositions(n - first, k - 1):
            yield (first,) + rest


def _realise(h: Sequence[int], x: int, h2: Sequence[int], x2: int) -> tuple[list[int], list[int]]:
    """Ordered X, X' (individual 0 holds x / x') aligning as many positions as possible."""
    g = [v - (c == x) for c, v in enumerate(h)]
    g2 = [v - (c == x2) for c, v in enumerate(h2)]
    xs, ys = [x], [x2]
    for c in range(len(g)):
        m = min(g[c], g2[c])
        xs += [c] * m
        ys += [c] * m
        g[c] -= m
        g2[c] -= m
    xs += [c for c in range(len(g)) for _ in range(g[c])]
    ys += [c for c in range(len(g2)) for _ in range(g2[c])]
    return xs, ys


def _distinct_orderings(counts: Sequence[int]) -> Iterator[tuple[int, ...]]:
    """All distinct sequences with the given cell counts (multiset permutations)."""
    items = [c for c, m in enumerate(counts) for _ in range(m)]
    seen: set[tuple[int, ...]] = set()
    for p in itertools.permutations(items):
        if p not in seen:
            seen.add(p)
            yield p


def check_witness(
    space: DataSpace,
    invariant: object,
    witness: _WitnessLike,
    *,
    t: Hashable,
    n: int,
    optimality_limit: int = 200_000,
    ordered_limit: int = 5_000,
) -> WitnessCheck:
    """Re-check a semi-adjacent-parameter witness from scratch [CA24, Def. 13].

    Parameters
    ----------
    space, invariant:
        The data space and the invariant (matrix or callable).
    witness:
        An :class:`accountant.combinatorics.semiadjacent_search.Witness`.
    t, n:
        The published value and the number of records.
    optimality_limit:
        Check optimality of the inner minimum when the number of histograms
        with ``n`` records, ``C(n + k - 1, k - 1)``, is at most this.
    ordered_limit:
        Also check it over explicit orderings when the permutations to try
        number at most this.

    Returns
    -------
    WitnessCheck

    Examples
    --------
    >>> from semidp.accountant.data.invariants import Margins
    >>> from semidp.accountant.combinatorics.semiadjacent_search import Witness
    >>> space = DataSpace.of(("A", 2), ("B", 2))
    >>> inv = Margins((("A",), ("B",)))
    >>> w = Witness((2, 1, 1, 0), 0, 3, (3, 0, 0, 1), 3)       # Example 5 of the paper
    >>> check_witness(space, inv, w, t=(3, 1, 3, 1), n=4).passed
    True
    >>> bad = Witness((2, 1, 1, 0), 0, 3, (3, 0, 0, 1), 2)
    >>> check_witness(space, inv, bad, t=(3, 1, 3, 1), n=4).reason
    'stated distance 2 but the least Hamming distance between orderings is 3'
    """
    k = space.n_cells
    h, h2 = witness.dataset, witness.nearest
    x, x2 = witness.record, witness.target
    for name, vec in (("dataset", h), ("nearest", h2)):
        if len(vec) != k or any((not isinstance(v, (int, np.integer))) or v < 0 for v in vec):
            return WitnessCheck(False, f"{name} {vec!r} is not a nonnegative integer histogram over {k} cells", False)
        if sum(vec) != n:
            return WitnessCheck(False, f"{name} {vec!r} has {sum(vec)} records, expected n={n}", False)
        if not _same_value(space, invariant, vec, t):
            return WitnessCheck(
                False, f"{name} {vec!r} has invariant value {_value(space, invariant, vec)!r}, not t={t!r}", False
            )
    if not (0 <= x < k) or h[x] < 1:
        return WitnessCheck(False, f"dataset {h!r} holds no record in cell {x}", False)
    if not (0 <= x2 < k) or h2[x2] < 1:
        return WitnessCheck(False, f"nearest {h2!r} holds no record in target cell {x2}", False)
    d = _overlap_distance(h, x, h2, x2)
    if d != witness.distance:
        return WitnessCheck(
            False, f"stated distance {witness.distance} but the least Hamming distance between orderings is {d}", False
        )
    xs, ys = _realise(h, x, h2, x2)
    if sum(a != b for a, b in zip(xs, ys)) != d:
        return WitnessCheck(False, "internal: the explicit alignment does not realise the distance", False)
    if witness.ordered_dataset is not None or witness.ordered_nearest is not None:
        X, X2, i = witness.ordered_dataset, witness.ordered_nearest, witness.individual
        if X is None or X2 is None or i is None or len(X) != n or len(X2) != n or not (0 <= i < n):
            return WitnessCheck(False, "incomplete ordered datasets in the witness", False)
        hx = tuple(sum(1 for v in X if v == c) for c in range(k))
        hx2 = tuple(sum(1 for v in X2 if v == c) for c in range(k))
        if hx != tuple(h) or hx2 != tuple(h2):
            return WitnessCheck(False, "ordered datasets do not have the witness histograms", False)
        if X[i] != x or X2[i] != x2:
            return WitnessCheck(
                False, f"ordered datasets: individual {i} holds {X[i]} / {X2[i]}, expected {x} / {x2}", False
            )
        dh = sum(a != b for a, b in zip(X, X2))
        if dh != d:
            return WitnessCheck(False, f"ordered datasets are at Hamming distance {dh}, not the minimum {d}", False)
    if math.comb(n + k - 1, k - 1) > optimality_limit:
        return WitnessCheck(
            True,
            f"conforming, record/target present, distance {d} realised; optimality not checked (too many histograms)",
            False,
        )
    # Optimality of the inner minimum: every conforming h'' holding x'.
    conforming = [hh for hh in _compositions(n, k) if _same_value(space, invariant, hh, t)]
    for hh in conforming:
        if hh[x2] >= 1 and _overlap_distance(h, x, hh, x2) < d:
            return WitnessCheck(
                False,
                f"not the nearest: {hh!r} holds the target at distance {_overlap_distance(h, x, hh, x2)} < {d}",
                True,
            )
    # Tiny instances: the same over explicit orderings (re-derives Lemma 1 here).
    targets = [hh for hh in conforming if hh[x2] >= 1]
    work = sum(math.factorial(n - 1) for _ in targets)
    ordered_note = ""
    if work <= ordered_limit:
        best = n + 1
        for hh in targets:
            rest = [v - (c == x2) for c, v in enumerate(hh)]
            for perm in _distinct_orderings(rest):
                y = [x2, *perm]
                best = min(best, sum(a != b for a, b in zip(xs, y)))
        if best != d:
            return WitnessCheck(
                False, f"over explicit orderings the nearest dataset is at distance {best}, not {d}", True
            )
        ordered_note = " and over explicit orderings"
    return WitnessCheck(
        True,
        f"conforming, record/target present, distance {d} realised and "
        f"minimal over {len(targets)} conforming histograms{ordered_note}",
        True,
    )


def check_result(
    space: DataSpace,
    invariant: object,
    result: _ResultLike,
    *,
    table: Sequence[int] | None = None,
    value_limit: int = 400,
    optimality_limit: int = 200_000,
) -> WitnessCheck:
    """Re-check a :class:`~accountant.combinatorics.semiadjacent_search.SemiAdjacentResult` [CA24, Def. 13].

    Checks the witness (:func:`check_witness`), that its distance equals the
    reported value, that ``value <= upper``, that ``table`` (if given) has the
    reported ``t``, and, when at most ``value_limit`` histograms conform,
    recomputes a(t) over all of ``D_t`` from the definition and compares
    (equality when the result claims to be exact, ``value <= a(t) <= upper``
    otherwise).

    Examples
    --------
    >>> from semidp.accountant.data.invariants import Margins
    >>> from semidp.accountant.combinatorics.semiadjacent_search import search_semi_adjacent_parameter
    >>> space = DataSpace.of(("A", 2), ("B", 2))
    >>> inv = Margins((("A",), ("B",)))
    >>> res = search_semi_adjacent_parameter(space, inv, table=(1, 1, 1, 0))
    >>> check_result(space, inv, res, table=(1, 1, 1, 0)).passed
    True
    """
    w = result.witness
    if table is not None:
        tv = _value(space, invariant, [int(v) for v in np.asarray(table).reshape(-1)])
        if not _same_value(space, invariant, [int(v) for v in np.asarray(table).reshape(-1)], result.t):
            return WitnessCheck(False, f"table has invariant value {tv!r}, result says {result.t!r}", False)
    if w.distance != result.value:
        return WitnessCheck(False, f"witness distance {w.distance} != reported value {result.value}", False)
    if not (result.value <= result.upper):
        return WitnessCheck(False, f"value {result.value} exceeds upper bound {result.upper}", False)
    if result.exact and result.value != result.upper:
        return WitnessCheck(False, "exact result with value != upper", False)
    wc = check_witness(space, invariant, w, t=result.t, n=result.n, optimality_limit=optimality_limit)
    if not wc.passed:
        return wc
    k, n = space.n_cells, result.n
    if math.comb(n + k - 1, k - 1) > optimality_limit:
        return wc
    conforming = [hh for hh in _compositions(n, k) if _same_value(space, invariant, hh, result.t)]
    if len(conforming) > value_limit:
        return wc
    support = sorted({c for hh in conforming for c in range(k) if hh[c] > 0})
    # a(t) = max over (h, x in supp h, x2 in X_t) of min over h2 (h2_{x2} >= 1) of the
    # least ordering distance n - agreements (vectorised; exact integer arithmetic).
    F = np.array(conforming, dtype=np.int64).reshape(-1, k)
    eye = np.eye(k, dtype=np.int64)
    pairs = [(r, x) for r in range(F.shape[0]) for x in range(k) if F[r, x] > 0]
    G = np.array([F[r] - eye[x] for r, x in pairs], dtype=np.int64).reshape(-1, k)
    xs = np.array([x for _, x in pairs], dtype=np.int64)
    a_t = 0
    for x2 in support:
        G2 = F[F[:, x2] > 0] - eye[x2]
        agree = np.minimum(G[:, None, :], G2[None, :, :]).sum(axis=2)  # positions j != i
        inner = n - (agree.max(axis=1) + (xs == x2))
        a_t = max(a_t, int(inner.max()))
    if result.exact and a_t != result.value:
        return WitnessCheck(
            False,
            f"recomputed a(t) = {a_t} over all {len(conforming)} conforming histograms, result says {result.value}",
            True,
        )
    if not (result.value <= a_t <= result.upper):
        return WitnessCheck(False, f"recomputed a(t) = {a_t} outside [{result.value}, {result.upper}]", True)
    return WitnessCheck(
        True, wc.reason + f"; a(t) = {a_t} recomputed over all {len(conforming)} conforming histograms", True
    )
