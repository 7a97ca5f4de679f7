r"""The pairs of datasets a black-box audit draws on, and the statistics it reads on each pair.

``claim.framework = "semi-dp"`` [CA24, Def. 12]: pairs of invariant-conforming
histograms at semi-adjacent distance, starting from ``data.table``:

* the a(t) witness (the dataset and its nearest conforming completion at distance a(t)), when the
  search produced one and the base relation is replace-one;
* the extremes of the exact Semi-DP sensitivity space S at the table
  (:func:`accountant.sensitivity.search.semi_sensitivity_search`): the differences of largest l2 norm
  (where a Gaussian calibrated to a too-small l2 sensitivity shows), then of largest l1 norm (Laplace),
  each realised by the search's witness ``(h, h - u)``, both conforming.

Every pair is checked again here: both histograms non-negative, ``A h = A h'``, and the replace-one
distance ``|u^+|_1`` at most the radius. When a(t) is known only by bounds the pairs use the proven
**lower** bound (a pair is refuting evidence only if it is certainly semi-adjacent).

``claim.framework = "dp"``: ordinary neighbours of the table (replace-one: one record of the most
populated cell moved to other cells; add-remove: a record added or removed).

Statistics (larger = evidence for ``x'``): the projection on ``x' - x`` (the likelihood-ratio direction of
additive isotropic or projected Gaussian noise), ``|y - x|_1 - |y - x'|_1`` (Laplace), and
``|y - x|_K - |y - x'|_K`` for K = conv(S) when its facets are known (K-norm) [CA24, Alg. 2].
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from semidp.accountant.combinatorics.semiadjacent import SemiAdjacentParameter
from semidp.accountant.core.budget import Budget
from semidp.accountant.core.errors import InvalidArgument
from semidp.accountant.data.dataspace import DataSpace
from semidp.accountant.data.invariants import Invariant
from semidp.accountant.geometry.knorm import KNormBall
from semidp.accountant.guarantees.relations import AddRemove, BaseRelation
from semidp.accountant.sensitivity.search import semi_sensitivity_search
from semidp.verify.threshold_audit import Statistic

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]


@dataclass(frozen=True)
class AuditPair:
    """Two histograms the claim covers, with where they come from."""

    x: tuple[int, ...]
    x_prime: tuple[int, ...]
    origin: str
    """``a(t) witness``, ``S extreme (l2)``, ``S extreme (l1)``, ``neighbour`` or ``spec``."""
    distance: int
    """Replace-one distance ``|x - x'|^+_1`` (add-remove: ``|x - x'|_1``)."""


def distance_of(x: tuple[int, ...], xp: tuple[int, ...], relation: BaseRelation) -> int:
    """Dataset distance of two histograms: ``|x - x'|_1`` (add-remove), else ``|(x - x')^+|_1`` (replace-one)."""
    d = [a - b for a, b in zip(x, xp)]
    return sum(abs(v) for v in d) if isinstance(relation, AddRemove) else sum(v for v in d if v > 0)


def check_pair(
    x: tuple[int, ...],
    xp: tuple[int, ...],
    a_mat: IntArray,
    relation: BaseRelation,
    *,
    semi: bool,
    radius: int,
) -> str | None:
    """Why ``(x, x')`` is not a pair of the claim's relation, or ``None`` if it is."""
    if len(x) != len(xp):
        return f"x has {len(x)} cells, x_prime {len(xp)}"
    if min(x + xp, default=0) < 0:
        return "counts must be >= 0"
    if x == xp:
        return "x and x_prime are equal"
    dist = distance_of(x, xp, relation)
    if not isinstance(relation, AddRemove) and sum(x) != sum(xp):
        return f"replace-one pairs have the same number of records ({sum(x)} != {sum(xp)})"
    if semi:
        if a_mat.shape[0] and not np.array_equal(a_mat @ np.array(x), a_mat @ np.array(xp)):
            return "x and x_prime do not share the invariant (A x != A x')"
        if dist > radius:
            return f"distance {dist} exceeds the semi-adjacent radius {radius}"
    elif dist != 1:
        return f"not neighbours: distance {dist}"
    return None


def semi_pairs(
    space: DataSpace,
    inv: Invariant,
    relation: BaseRelation,
    a: SemiAdjacentParameter,
    table: list[int],
    *,
    max_pairs: int,
    budget: Budget,
) -> tuple[list[AuditPair], int, object]:
    """Semi-adjacent pairs (module docstring): ``(pairs, radius used, the sensitivity search result)``; the
    sensitivity search runs within ``budget``."""
    radius = a.value if a.exact else a.lower
    pairs: list[AuditPair] = []
    a_mat = inv.matrix(space)
    seen: set[tuple[int, ...]] = set()

    def add(x: tuple[int, ...], xp: tuple[int, ...], origin: str) -> None:
        u = tuple(p - q for p, q in zip(x, xp))
        key = max(u, tuple(-v for v in u))
        if key in seen or len(pairs) >= max_pairs or check_pair(x, xp, a_mat, relation, semi=True, radius=radius):
            return
        seen.add(key)
        pairs.append(AuditPair(x, xp, origin, distance_of(x, xp, relation)))

    if radius == 0:
        return [], 0, None
    w = a.search.witness if a.search is not None else None
    if w is not None and a.factor == 1 and w.distance <= radius:
        add(tuple(w.dataset), tuple(w.nearest), "a(t) witness")
    res = semi_sensitivity_search(space, inv, radius, table=table, query=None, budget=budget)
    vecs = np.array(res.cell_space.vectors, dtype=np.int64).reshape(-1, space.n_cells)
    vecs = vecs[np.abs(vecs).sum(axis=1) > 0]
    l2 = (vecs * vecs).sum(axis=1)
    l1 = np.abs(vecs).sum(axis=1)
    by_l2 = np.lexsort((-l1, -l2))
    by_l1 = np.lexsort((-l2, -l1))
    # Alternate: the largest l2 direction, then the largest l1 one, ... (both kinds of wrong sensitivity show).
    order = [int(i) for pair in zip(by_l2, by_l1) for i in pair]
    for i in order:
        if len(pairs) >= max_pairs:
            break
        try:
            h, h2 = res.witness(tuple(int(v) for v in vecs[i]))
        except InvalidArgument:
            continue
        what = "l2" if l2[i] == l2.max() else "l1" if l1[i] == l1.max() else "norm"
        add(tuple(h), tuple(h2), f"S extreme ({what})")
    return pairs, radius, res


def dp_pairs(table: list[int], relation: BaseRelation, *, max_pairs: int) -> list[AuditPair]:
    """Ordinary neighbours of the table (module docstring)."""
    x = tuple(table)
    d = len(x)
    src = int(np.argmax(x))
    pairs: list[AuditPair] = []
    if isinstance(relation, AddRemove):
        for j in range(d):
            xp = tuple(c + (1 if i == j else 0) for i, c in enumerate(x))
            pairs.append(AuditPair(x, xp, "neighbour (add)", 1))
    elif x[src] > 0:
        for j in range(d):
            if j != src:
                xp = tuple(c - (i == src) + (i == j) for i, c in enumerate(x))
                pairs.append(AuditPair(x, xp, "neighbour (replace)", 1))
    return pairs[:max_pairs]


def pair_statistics(pair: AuditPair, ball: KNormBall | None) -> list[Statistic]:
    """The statistics read on a pair (module docstring), vectorised over draws."""
    x = np.asarray(pair.x, dtype=np.float64)
    xp = np.asarray(pair.x_prime, dtype=np.float64)
    u = xp - x
    l1 = float(np.abs(u).sum())  # |y - x|_1 - |y - x'|_1 lies in [-l1, l1] (triangle inequality)
    u = u / np.linalg.norm(u)
    mid = 0.5 * (x + xp)
    stats = [
        Statistic("projection", lambda y: np.asarray((y - mid) @ u, dtype=np.float64)),
        Statistic(
            "l1-ratio",
            lambda y: np.asarray(np.abs(y - x).sum(axis=1) - np.abs(y - xp).sum(axis=1), dtype=np.float64),
            exact_range=(-l1, l1),
        ),
    ]
    if ball is not None:
        q = ball.basis

        def knorm(y: FloatArray) -> FloatArray:
            return np.asarray(ball.gauge((y - x) @ q) - ball.gauge((y - xp) @ q), dtype=np.float64)

        stats.append(Statistic("k-norm-ratio", knorm))
    return stats


__all__ = ["AuditPair", "check_pair", "distance_of", "dp_pairs", "pair_statistics", "semi_pairs"]
