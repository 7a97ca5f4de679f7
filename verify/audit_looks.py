r"""The looks of a sequential black-box audit (``mechanism.kind = "implementation"``): the draws kept so far
and one look at them -- the tests chosen on the selection rows and measured on the measurement rows
(:mod:`verify.threshold_audit`, :mod:`verify.audit_classifier`).

A look checks the clock between its steps (each pair's selection, the classifier's fit, each measurement) and
gives up with :class:`OutOfTime` once its deadline has passed; the audit then keeps its previous look, whose
bounds hold on their own (a look's thresholds come from selection rows, its bounds from measurement rows, and
the error spent at each look is fixed in advance [LD83]). :func:`look_cost` predicts a look's seconds from the
last one, so the draws stop early enough for the final look to be made within ``--time-limit``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from semidp.accountant.core.budget import Budget
from semidp.verify.audit_classifier import classifier_statistic
from semidp.verify.audit_pairs import AuditPair
from semidp.verify.threshold_audit import (
    Candidate,
    Curve,
    Measured,
    Statistic,
    batch_split,
    choose,
    measure,
    per_bound_level,
    select,
)

FloatArray = NDArray[np.float64]

#: Selection rows per side a pair needs before a classifier is fitted on it (half fit, half choose).
CLASSIFIER_MIN_ROWS = 200
#: Held-out selection rows per side that choose the classifier's threshold (it is fitted on as many).
CLASSIFIER_MAX_ROWS = 20_000
#: A look is predicted to cost this many times the seconds per row of the last look (rows grow x4 a round).
LOOK_SAFETY = 2.0


def look_cost(seconds_per_row: float | None, rows: int) -> float:
    """Predicted seconds of a look on ``rows`` drawn rows (``LOOK_SAFETY`` times the last look's seconds per row;
    0 before any look was timed)."""
    return 0.0 if seconds_per_row is None else LOOK_SAFETY * seconds_per_row * rows


@dataclass
class Drawn:
    """The releases of one pair so far, by side: the selection rows and the measurement rows (float64)."""

    sel: list[list[FloatArray]]
    meas: list[list[FloatArray]]
    raw: list[list[NDArray[Any]]]
    """As released (for the invariant check: integer releases are checked exactly)."""

    @staticmethod
    def empty() -> Drawn:
        """No releases yet."""
        return Drawn([[], []], [[], []], [[], []])

    def add(self, side: int, y: NDArray[Any], selection: float) -> None:
        """Add a batch of releases on ``side`` (0: x, 1: x'): its first ``selection`` share selects."""
        s = batch_split(len(y), selection)
        f = y.astype(np.float64)
        self.sel[side].append(f[:s])
        self.meas[side].append(f[s:])
        self.raw[side].append(y)

    @staticmethod
    def _cat(parts: list[FloatArray], cells: int) -> FloatArray:
        if len(parts) > 1:  # keep one array: a look concatenates each side once
            parts[:] = [np.concatenate(parts)]
        return parts[0] if parts else np.empty((0, cells))

    def selection(self, side: int, cells: int) -> FloatArray:
        """The selection rows of ``side`` so far."""
        return self._cat(self.sel[side], cells)

    def measurement(self, side: int, cells: int) -> FloatArray:
        """The measurement rows of ``side`` so far."""
        return self._cat(self.meas[side], cells)

    def releases(self, side: int, cells: int) -> NDArray[Any]:
        """The releases of ``side`` as released (integer dtype kept)."""
        parts = self.raw[side]
        if len(parts) > 1:
            parts[:] = [np.concatenate(parts)]
        return parts[0] if parts else np.empty((0, cells))

    def count(self, side: int) -> int:
        """Releases drawn on ``side``."""
        return sum(len(p) for p in self.raw[side])


@dataclass(frozen=True)
class Look:
    """One look of a sequential audit: the candidates chosen, the tests measured, their per-bound level."""

    candidates: list[Candidate]
    measured: list[Measured]
    level: float
    stats: list[list[Statistic]]
    """The statistics each pair was read with at this look (the fixed ones, then a fitted classifier)."""


def look(
    drawn: list[Drawn],
    stats_of: list[list[Statistic]],
    curve: Curve,
    tests: int,
    alpha: float,
    cells: int,
    pairs: list[AuditPair] | None = None,
    budget: Budget | None = None,
) -> Look:
    """Choose the tests on the selection rows, measure them on the measurement rows, each bound at
    ``alpha / (2 tests)`` (pairs without a selection and a measurement row on each side wait). With ``pairs``,
    each pair also gets a classifier (:mod:`verify.audit_classifier`) fitted on the even selection rows; its
    threshold and predicted gap come from the odd ones (held out, so it is not preferred for overfitting).
    Raises :class:`OutOfTime` when ``budget`` expires between two of its steps."""
    level = per_bound_level(1.0 - alpha, tests)
    cands: list[Candidate] = []
    used = [list(s) for s in stats_of]

    def in_time() -> None:
        if budget is not None and budget.expired:
            raise OutOfTime

    for k, d in enumerate(drawn):
        in_time()
        s0, s1 = d.selection(0, cells), d.selection(1, cells)
        m0, m1 = d.measurement(0, cells), d.measurement(1, cells)
        if min(len(s0), len(s1), len(m0), len(m1)) == 0:
            continue
        n_measure = min(len(m0), len(m1))
        cands += select(k, stats_of[k], s0, s1, curve, n_measure=n_measure, level=level)
        if pairs is not None and min(len(s0), len(s1)) >= CLASSIFIER_MIN_ROWS:
            in_time()
            clf = classifier_statistic(pairs[k].x, pairs[k].x_prime, s0[0::2], s1[0::2])
            used[k].append(clf)
            held0, held1 = s0[1::2][:CLASSIFIER_MAX_ROWS], s1[1::2][:CLASSIFIER_MAX_ROWS]
            cands += select(k, [clf], held0, held1, curve, n_measure=n_measure, level=level)
    chosen = choose(cands, tests) if cands else []
    measured = []
    for c in chosen:
        in_time()
        stat = next(s for s in used[c.pair] if s.name == c.statistic)
        d = drawn[c.pair]
        measured.append(measure(c, stat, d.measurement(0, cells), d.measurement(1, cells), curve, level=level))
    return Look(cands, measured, level, used)


class OutOfTime(Exception):
    """A look that would not end before its deadline (the audit keeps the previous look: each look is valid on its own)."""


__all__ = [
    "CLASSIFIER_MAX_ROWS",
    "CLASSIFIER_MIN_ROWS",
    "LOOK_SAFETY",
    "Drawn",
    "Look",
    "OutOfTime",
    "look",
    "look_cost",
]
