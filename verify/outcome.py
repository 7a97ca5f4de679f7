"""Outcomes of checks (house style R9): verified, refuted or unknown, each with its evidence."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Union


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


Outcome = Union[Verified, Refuted, Unknown]


@dataclass(frozen=True, slots=True)
class Bounds:
    """A numerical quantity known to lie in ``[lower, upper]``; ``estimate`` is the reported value."""

    lower: float
    estimate: float
    upper: float


Status = Literal["pass", "fail", "skip"]


def status_of(outcome: Outcome) -> Status:
    """Contract status of a check: pass, fail, or skip (unknown is never a pass)."""
    if isinstance(outcome, Verified):
        return "pass"
    if isinstance(outcome, Refuted):
        return "fail"
    return "skip"


def detail_of(outcome: Outcome) -> str:
    """The human-readable evidence of an outcome."""
    if isinstance(outcome, Verified):
        return outcome.certificate
    if isinstance(outcome, Refuted):
        return outcome.counterexample
    return "inconclusive: " + outcome.reason
