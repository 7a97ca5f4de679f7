r"""Refine a certified PLD bracket to a requested relative width (issue 26, Step 13 item 3).

:func:`refine_bracket` is the one-call façade over :func:`semidp.accountant.pld_engine.compose_plds`: it
composes on the default grid and on finer ones until ``(upper - lower) <= rel_width * upper`` (default
:data:`DEFAULT_REL_WIDTH`), the grid cap or the time budget stops it, and says which. Every grid's interval
contains the truth (``lower`` from the optimistic law, ``upper`` from the pessimistic one), so their
intersection does. Tradeoff-curve compositions (f-DP output) are :mod:`semidp.accountant.pld`'s.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from typing import NamedTuple

from semidp.accountant.arguments import check_in_interval, check_positive
from semidp.accountant.errors import InvalidArgument
from semidp.accountant.pld_engine import (
    DEFAULT_POINTS,
    MAX_POINTS,
    GaussianBracket,
    LaplaceBracket,
    PLDBracket,
    PLDInterval,
    compose_plds,
)
from semidp.accountant.pld_parts import PLDPart

__all__ = ["DEFAULT_REL_WIDTH", "RefinedInterval", "refine_bracket"]

#: Default relative width ``(upper - lower) / upper`` that :func:`refine_bracket` refines to.
DEFAULT_REL_WIDTH = 1e-3


class RefinedInterval(NamedTuple):
    """The result of :func:`refine_bracket`: the narrowest certified interval found and whether it met the width."""

    interval: PLDInterval
    """Intersection of the certified intervals of every grid tried (each contains the truth, so it does)."""
    points: int | None
    """Grid-points target of the last grid tried (``None``: the default grid or a closed form only)."""
    reached: bool
    """Whether ``(upper - lower) <= rel_width * upper`` (an upper end of 0 counts as reached)."""
    rel_width: float
    """The relative width reached (``inf`` if the upper end is infinite)."""


def _relative_width(iv: PLDInterval) -> float:
    if iv.upper == 0.0:
        return 0.0
    if not math.isfinite(iv.upper):
        return math.inf
    return max(0.0, iv.upper - iv.lower) / iv.upper


def refine_bracket(
    parts: Sequence[PLDPart | tuple[PLDPart, int]],
    *,
    epsilon: float | None = None,
    delta: float | None = None,
    rel_width: float = DEFAULT_REL_WIDTH,
    max_points: int = MAX_POINTS,
    time_limit: float | None = None,
) -> RefinedInterval:
    r"""Certified ``delta(epsilon)`` or ``epsilon(delta)`` of a composition, refined to a relative width.

    Composes on the default grid (:func:`compose_plds`), then on grids with 4x the points while
    ``(upper - lower) > rel_width * upper``, the next grid fits ``max_points`` and, with ``time_limit`` (seconds,
    wall clock), the next grid (about 4x the last one's time) is expected to finish within it. Every grid's
    interval contains the truth, so their intersection is returned; ``reached`` says whether the width was met
    (report it when not: the interval is still certified, only wider). Units: epsilon in nats, delta a probability.

    Raises
    ------
    InvalidArgument
        Unless exactly one of ``epsilon`` and ``delta`` is given, or if ``rel_width`` is not in ``(0, 1]``.

    Examples
    --------
    >>> from semidp.accountant.pld_parts import LaplacePart
    >>> r = refine_bracket([(LaplacePart(50.0), 1000)], delta=1e-6)
    >>> r.reached, 2.9049 < r.interval.lower <= r.interval.upper < 2.9065
    (True, True)
    """
    if (epsilon is None) == (delta is None):
        raise InvalidArgument("refine_bracket: give exactly one of epsilon and delta.")
    check_in_interval("rel_width", rel_width, 0.0, 1.0, lo_open=True)
    if time_limit is not None:
        check_positive("time_limit", time_limit)

    def query(b: PLDBracket | GaussianBracket | LaplaceBracket) -> PLDInterval:
        return b.delta(epsilon) if epsilon is not None else b.epsilon(delta)  # type: ignore[arg-type]

    start = time.monotonic()
    bracket = compose_plds(parts, max_points=max_points)
    iv = query(bracket)
    points: int | None = None
    last = time.monotonic() - start
    while isinstance(bracket, PLDBracket) and _relative_width(iv) > rel_width:
        nxt = (points or DEFAULT_POINTS) * 4
        if nxt > max_points:
            break
        if time_limit is not None and time.monotonic() - start + 4 * last > time_limit:
            break
        t0 = time.monotonic()
        bracket = compose_plds(parts, points=nxt, max_points=max_points)
        new = query(bracket)
        iv = PLDInterval(max(iv.lower, new.lower), min(iv.upper, new.upper))
        points, last = nxt, time.monotonic() - t0
    w = _relative_width(iv)
    return RefinedInterval(iv, points, w <= rel_width, w)
