"""One wall-clock budget value: a deadline on the monotonic clock, what remains of it, and its shares.

A :class:`Budget` replaces the float parameters ``time_limit`` (seconds from now), ``deadline`` (a
``time.monotonic()`` value) and ``time_budget`` (seconds) that used to travel separately (issue 23, Step 14
item 5). It is frozen: a callee narrows its own share with :meth:`Budget.split` or :meth:`Budget.child` and
can never extend its caller's deadline. Units: seconds of ``time.monotonic()`` (never the wall clock, which
may jump).

>>> b = Budget.unlimited()
>>> b.expired, b.remaining(), b.bounded
(False, inf, False)
>>> half = Budget.of(10.0).split(0.5)
>>> 0.0 < half.remaining() <= 5.0
True
"""

from __future__ import annotations

import math
import time
import warnings
from collections.abc import Mapping
from dataclasses import dataclass

from semidp.accountant.core.arguments import check_in_interval, check_nonnegative, check_positive
from semidp.accountant.core.errors import InvalidArgument

__all__ = ["Budget", "budget_argument"]


@dataclass(frozen=True, slots=True)
class Budget:
    """A wall-clock deadline on :func:`time.monotonic` (``math.inf``: unlimited).

    Construct with :meth:`unlimited`, :meth:`of` (seconds from now) or :meth:`until` (a monotonic deadline);
    narrow with :meth:`split` (a fraction of what remains) or :meth:`child` (at most so many seconds). A share
    never ends after its parent.
    """

    deadline: float
    """``time.monotonic()`` value by which the work must be done (``math.inf``: no limit)."""

    def __post_init__(self) -> None:
        if math.isnan(self.deadline):
            raise InvalidArgument("Budget: deadline is NaN.")

    @classmethod
    def unlimited(cls) -> Budget:
        """A budget that never expires."""
        return cls(math.inf)

    @classmethod
    def of(cls, seconds: float | None) -> Budget:
        """``seconds`` (``>= 0``) from now; ``None`` or ``inf``: :meth:`unlimited`."""
        if seconds is None or seconds == math.inf:
            return cls.unlimited()
        return cls(time.monotonic() + check_nonnegative("seconds", seconds))

    @classmethod
    def until(cls, at: float) -> Budget:
        """Until the ``time.monotonic()`` value ``at`` (``inf``: unlimited)."""
        return cls(float(at))

    @property
    def bounded(self) -> bool:
        """Whether the budget has a finite deadline."""
        return self.deadline != math.inf

    @property
    def expired(self) -> bool:
        """Whether the deadline has passed."""
        return time.monotonic() >= self.deadline

    def remaining(self) -> float:
        """Seconds left (``>= 0``; ``inf`` when unlimited)."""
        return max(self.deadline - time.monotonic(), 0.0)

    def split(self, fraction: float) -> Budget:
        """A share of ``fraction`` (in ``[0, 1]``) of what remains now; unlimited stays unlimited."""
        f = check_in_interval("fraction", fraction, 0.0, 1.0)
        if not self.bounded:
            return self
        now = time.monotonic()
        return Budget(min(self.deadline, now + f * max(self.deadline - now, 0.0)))

    def child(self, seconds: float) -> Budget:
        """At most ``seconds`` (``>= 0``, ``inf`` allowed) from now, and never past this budget's deadline."""
        if seconds == math.inf:
            return self
        return Budget(min(self.deadline, time.monotonic() + check_nonnegative("seconds", seconds)))

    def allows(self, seconds: float) -> bool:
        """Whether ``seconds`` more work is expected to finish in time."""
        return seconds <= self.remaining()


def budget_argument(
    budget: Budget | None,
    legacy: Mapping[str, object],
    *,
    where: str,
    default: float | None = None,
    old: str = "time_limit",
    zero_ok: bool = False,
) -> Budget:
    """The :class:`Budget` of a public function that used to take ``old`` (float seconds from now).

    ``legacy`` is the function's ``**legacy`` keywords: ``old=seconds`` is still accepted for one release with a
    :class:`DeprecationWarning` (issue 23, Step 14 item 5) and checked as before (``> 0``, or ``>= 0`` with
    ``zero_ok``, else :class:`~semidp.accountant.core.errors.InvalidArgument` naming ``old``; ``None``: unlimited);
    any other keyword is a :class:`TypeError`, as Python would raise. Without either, the budget is ``default``
    seconds from now (``None``: unlimited).
    Units: seconds.
    """
    unknown = sorted(set(legacy) - {old})
    if unknown:
        raise TypeError(f"{where}() got an unexpected keyword argument {unknown[0]!r}")
    if old not in legacy:
        return budget if budget is not None else Budget.of(default)
    if budget is not None:
        raise InvalidArgument(f"{where}: pass budget= or the deprecated {old}=, not both.")
    value = legacy[old]  # a bad value is still an InvalidArgument naming ``old``
    seconds = None if value is None else (check_nonnegative if zero_ok else check_positive)(old, value)
    warnings.warn(
        f"{where}({old}=seconds) is deprecated; pass budget=Budget.of(seconds) (semidp.accountant.core.budget).",
        DeprecationWarning,
        stacklevel=3,
    )
    return Budget.of(seconds)
