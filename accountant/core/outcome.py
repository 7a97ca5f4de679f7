"""Outcomes of checks (house style R9): verified, refuted or unknown, each with its evidence.

These values live at the bottom layer so that :mod:`accountant`, :mod:`mechanisms`
and :mod:`verify` can all return them. Two more outcomes describe checks that were
not run: :class:`NotApplicable` (the property does not concern this release, e.g.
"invariant preserved" for noise added in every cell) and :class:`Skipped` (there
was nothing to check, e.g. a published release has no draws). Neither makes a
verdict inconclusive; :class:`Unknown` does, and it never counts as a success.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Union


@dataclass(frozen=True, slots=True)
class Verified:
    """The property holds; ``certificate`` says why (a formula, a path, a solver model)."""

    certificate: str


@dataclass(frozen=True, slots=True)
class Refuted:
    """The property fails; ``counterexample`` says how."""

    counterexample: str


@dataclass(frozen=True, slots=True)
class Unknown:
    """Neither could be established (solver 'unknown', a gap between bounds, a budget ran out)."""

    reason: str


@dataclass(frozen=True, slots=True)
class NotApplicable:
    """The property does not concern this release; ``reason`` says why (never a success, never a failure)."""

    reason: str


@dataclass(frozen=True, slots=True)
class Skipped:
    """There was nothing to check; ``reason`` says why (never a success, never a failure)."""

    reason: str


Outcome = Union[Verified, Refuted, Unknown, NotApplicable, Skipped]
"""Every outcome of a check."""

Decided = Union[Verified, Refuted, Unknown]
"""The outcomes of a check that was attempted."""


@dataclass(frozen=True, slots=True)
class Bounds:
    """A numerical quantity known to lie in ``[lower, upper]``; ``estimate`` is the reported value."""

    lower: float
    estimate: float
    upper: float


__all__ = ["Bounds", "Decided", "NotApplicable", "Outcome", "Refuted", "Skipped", "Unknown", "Verified"]
