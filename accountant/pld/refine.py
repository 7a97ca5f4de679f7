r"""Refine a certified PLD bracket to a requested relative width (issue 26, Step 13 item 3).

:func:`refine_bracket` is the one-call façade over :func:`semidp.accountant.pld.engine.compose_plds`: it
composes on the default grid and on finer ones until ``(upper - lower) <= rel_width * upper`` (default
:data:`DEFAULT_REL_WIDTH`), the grid cap or the time budget (a :class:`~semidp.accountant.core.budget.Budget`) stops
it, and says which. :func:`refine` is the same loop over any bracket-composing callable (the workload's). Every grid's interval
contains the truth (``lower`` from the optimistic law, ``upper`` from the pessimistic one), so their
intersection does. Tradeoff-curve compositions (f-DP output) are :mod:`semidp.accountant.pld.grid`'s.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from typing import NamedTuple, Protocol

from semidp.accountant.core.arguments import check_in_interval
from semidp.accountant.core.budget import Budget
from semidp.accountant.core.errors import InvalidArgument
from semidp.accountant.pld.engine import (
    DEFAULT_POINTS,
    MAX_POINTS,
    GaussianBracket,
    LaplaceBracket,
    PLDInterval,
    compose_plds,
)
from semidp.accountant.pld.parts import PLDPart

__all__ = ["DEFAULT_REL_WIDTH", "Bracket", "RefinedInterval", "refine", "refine_bracket", "refine_many"]

#: Default relative width ``(upper - lower) / upper`` that :func:`refine_bracket` refines to.
DEFAULT_REL_WIDTH = 1e-3


class Bracket(Protocol):
    """Anything with certified ``delta(epsilon)`` and ``epsilon(delta)`` intervals (the engine's brackets,
    :class:`semidp.accountant.workloads.accounting.SetAsideBracket`)."""

    def delta(self, epsilon: float) -> PLDInterval: ...  # noqa: D102 - see the class docstring

    def epsilon(self, delta: float) -> PLDInterval: ...  # noqa: D102 - see the class docstring


class RefinedInterval(NamedTuple):
    """The result of :func:`refine_bracket`: the narrowest certified interval found and whether it met the width."""

    interval: PLDInterval
    """Intersection of the certified intervals of every grid tried (each contains the truth, so it does)."""
    points: int | None
    """Grid-points target of the last grid tried (``None``: the first grid or a closed form only)."""
    reached: bool
    """Whether ``(upper - lower) <= rel_width * upper`` (an upper end of 0 counts as reached)."""
    rel_width: float
    """The relative width reached (``inf`` if the upper end is infinite)."""
    stopped_by: str = ""
    """Why refinement stopped short of the width or of deciding the target: ``"budget"``, ``"grid cap"``
    (``max_points`` or the engine's size limit), or ``""`` (both reached, or the bracket is a closed form)."""
    target_width: float = DEFAULT_REL_WIDTH
    """The relative width asked for."""

    def shortfall(self) -> str | None:
        """``"bracket width 2.1e-3 > 1e-3: budget"`` when the width was not reached, else ``None``."""
        if self.reached:
            return None
        return f"bracket width {self.rel_width:.2g} > {self.target_width:.2g}: {self.stopped_by or 'grid cap'}"


def _relative_width(iv: PLDInterval) -> float:
    if iv.upper == 0.0:
        return 0.0
    if not math.isfinite(iv.upper):
        return math.inf
    return max(0.0, iv.upper - iv.lower) / iv.upper


def _undecided(iv: PLDInterval, target: float | None) -> bool:
    """Whether ``target`` lies in ``[lower, upper)``: neither verified (``upper <= target``) nor refuted."""
    return target is not None and iv.lower <= target < iv.upper


def refine(
    compose: Callable[[int | None], Bracket],
    query: Callable[[Bracket], PLDInterval],
    *,
    rel_width: float = DEFAULT_REL_WIDTH,
    first_points: int = DEFAULT_POINTS,
    max_points: int = MAX_POINTS,
    budget: Budget | None = None,
    target: float | None = None,
) -> RefinedInterval:
    r"""Refine ``query(compose(points))`` on grids of 4x the points until the relative width is met.

    ``compose(None)`` is the first bracket (``first_points`` grid points, or a closed form that is not refined);
    ``compose(n)`` composes on about ``n`` points and may raise
    :class:`~semidp.accountant.core.errors.InvalidArgument` on size (stops refinement: ``"grid cap"``). Refinement
    goes on while ``(upper - lower) > rel_width * upper`` or ``target`` lies in ``[lower, upper)`` (a claim
    not yet decided), the next grid fits ``max_points``, and the next grid (expected 4x the last one's seconds,
    composing and querying) fits what remains of ``budget``. Every grid's interval contains the truth
    (``lower`` from the optimistic law, ``upper`` from the pessimistic one), so their intersection does and is
    returned. :func:`refine_many` refines several queries on the same grids.
    """
    return refine_many(
        compose,
        [query],
        [target],
        rel_width=rel_width,
        first_points=first_points,
        max_points=max_points,
        budget=budget,
    )[0]


def refine_many(
    compose: Callable[[int | None], Bracket],
    queries: Sequence[Callable[[Bracket], PLDInterval]],
    targets: Sequence[float | None],
    *,
    rel_width: float = DEFAULT_REL_WIDTH,
    first_points: int = DEFAULT_POINTS,
    max_points: int = MAX_POINTS,
    budget: Budget | None = None,
    first_seconds: float | None = None,
) -> list[RefinedInterval]:
    """:func:`refine` for several queries (e.g. epsilon at several deltas) sharing each grid's composition.

    Each grid is composed once; refinement goes on while any query is short of the width or its target is
    undecided, and each query's interval is the intersection over the grids tried. ``first_seconds``: what the
    first bracket took to compose when ``compose(None)`` returns one composed earlier (the next grid is
    expected to take 4x that; default: the time ``compose(None)`` and its queries take now).
    """
    check_in_interval("rel_width", rel_width, 0.0, 1.0, lo_open=True)
    if len(queries) != len(targets):
        raise InvalidArgument(f"refine_many: {len(queries)} queries but {len(targets)} targets.")
    budget = Budget.unlimited() if budget is None else budget
    t0 = time.monotonic()
    bracket = compose(None)
    ivs = [q(bracket) for q in queries]
    points: int | None = None
    last = time.monotonic() - t0 if first_seconds is None else max(first_seconds, time.monotonic() - t0)
    stopped = ""
    refinable = not isinstance(bracket, (GaussianBracket, LaplaceBracket))

    def pending() -> bool:
        return any(_relative_width(iv) > rel_width or _undecided(iv, t) for iv, t in zip(ivs, targets))

    while refinable and pending():
        nxt = (points or first_points) * 4
        if nxt > max_points:
            stopped = "grid cap"
            break
        if not budget.allows(4 * last):
            stopped = "budget"
            break
        t0 = time.monotonic()
        try:
            bracket = compose(nxt)
            new = [q(bracket) for q in queries]
        except InvalidArgument:  # the engine's size limit (a tilted law wider than max_points)
            stopped = "grid cap"
            break
        ivs = [PLDInterval(max(iv.lower, n.lower), min(iv.upper, n.upper)) for iv, n in zip(ivs, new)]
        points, last = nxt, time.monotonic() - t0
    out = []
    for iv, t in zip(ivs, targets):
        w = _relative_width(iv)
        short = w > rel_width or _undecided(iv, t)
        out.append(RefinedInterval(iv, points, w <= rel_width, w, stopped if short else "", rel_width))
    return out


def refine_bracket(
    parts: Sequence[PLDPart | tuple[PLDPart, int]],
    *,
    epsilon: float | None = None,
    delta: float | None = None,
    rel_width: float = DEFAULT_REL_WIDTH,
    max_points: int = MAX_POINTS,
    budget: Budget | None = None,
    target: float | None = None,
) -> RefinedInterval:
    r"""Certified ``delta(epsilon)`` or ``epsilon(delta)`` of a composition, refined to a relative width.

    Composes on the default grid (:func:`compose_plds`), then on grids with 4x the points while
    ``(upper - lower) > rel_width * upper`` (or ``target``, a claimed value, lies in ``[lower, upper)``), the
    next grid fits ``max_points`` and the next grid (about 4x the last one's time) is expected to finish within
    ``budget`` (default unlimited: the grid cap bounds it). Every grid's interval contains the truth, so their
    intersection is returned; ``reached`` says whether the width was met (report it when not, with
    :meth:`RefinedInterval.shortfall`: the interval is still certified, only wider). Units: epsilon in nats,
    delta a probability, budget in seconds.

    Raises
    ------
    InvalidArgument
        Unless exactly one of ``epsilon`` and ``delta`` is given, or if ``rel_width`` is not in ``(0, 1]``.

    Examples
    --------
    >>> from semidp.accountant.pld.parts import LaplacePart
    >>> r = refine_bracket([(LaplacePart(50.0), 1000)], delta=1e-6)
    >>> r.reached, 2.9049 < r.interval.lower <= r.interval.upper < 2.9065
    (True, True)
    """
    if (epsilon is None) == (delta is None):
        raise InvalidArgument("refine_bracket: give exactly one of epsilon and delta.")
    check_in_interval("rel_width", rel_width, 0.0, 1.0, lo_open=True)

    def query(b: Bracket) -> PLDInterval:
        return b.delta(epsilon) if epsilon is not None else b.epsilon(delta)  # type: ignore[arg-type]

    def compose(points: int | None) -> Bracket:
        return compose_plds(parts, points=points, max_points=max_points)

    return refine(compose, query, rel_width=rel_width, max_points=max_points, budget=budget, target=target)
