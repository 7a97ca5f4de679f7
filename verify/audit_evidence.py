r"""What a refuting threshold test counted: the event, its rates on both sides, and outputs the claimed law forbids.

A refutation by a threshold test ``reject x when s(y) > tau`` (:mod:`verify.threshold_audit`) is evidence
about the **outputs** of the release function, not about the statistic: every statistic is a fixed function
of the release, so the measured point bounds the implementation's own tradeoff curve by post-processing
[DRS22, Prop. 2.8]. What an auditor needs next is *which* outputs carry the evidence:

* the rarer side of the test -- the event ``{s > tau}`` or ``{s <= tau}`` with the smaller total frequency --
  with its rate under ``x`` and under ``x'``;
* when the statistic has an exact range under the claimed law in exact arithmetic (``Statistic.exact_range``:
  ``|y - x|_1 - |y - x'|_1`` lies in ``[-|x - x'|_1, |x - x'|_1]`` for every ``y`` by the triangle inequality,
  likewise any norm), whether that event holds **only** values outside it. Such outputs are *impossible* for
  the claimed law computed exactly; they exist because the release is computed in floating point, and when
  their frequency differs between ``x`` and ``x'`` the implementation leaks through its rounding, as Mironov
  showed for the textbook Laplace sampler [Mir12]. The report says so and shows a few of them, printed to the
  last bit (``repr``), instead of blaming the statistic.

A black-box audit sees only outputs: it cannot tell which line of code rounds, nor see a leak on inputs,
pairs or events it did not draw.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from semidp.verify.json_walk import Walked
from semidp.verify.threshold_audit import Measured, Statistic

FloatArray = NDArray[np.float64]

#: Releases shown per side for an event.
EXAMPLES = 3


@dataclass(frozen=True)
class OutputExample(Walked):
    """One release in the evidence's event, printed to the last bit (``repr``)."""

    side: str
    """``"x"`` or ``"x_prime"``: the input it was drawn at."""
    statistic: str
    release: tuple[str, ...]
    """The release's cells."""


@dataclass(frozen=True)
class Evidence:
    """The outputs a refuting test counted (module docstring)."""

    pair: int
    statistic: str
    event: str
    """``"s > tau"`` or ``"s <= tau"``: the rarer side of the test, the one that carries the evidence."""
    threshold: float
    rate_x: float
    """Share of the measurement releases at ``x`` in the event."""
    rate_x_prime: float
    exact_range: tuple[float, float] | None
    impossible: bool
    """The event holds only statistic values outside ``exact_range``: outputs impossible in exact arithmetic."""
    outside_x: int
    """Measurement releases at ``x`` whose statistic lies outside ``exact_range`` (0 without a range)."""
    outside_x_prime: int
    draws: tuple[int, int]
    examples: tuple[OutputExample, ...]

    def sentence(self) -> str:
        """One or two sentences for the refutation's message."""
        rates = f"{self.rate_x:.4%} of the releases at x and {self.rate_x_prime:.4%} at x'"
        head = f"the evidence is the event {self.statistic} {self.event[2:]} ({self.threshold!r}): {rates}"
        if not self.impossible or self.exact_range is None:
            return head
        lo, hi = self.exact_range
        return (
            f"{head}. Every value in that event lies outside [{lo:g}, {hi:g}], the range {self.statistic} has for "
            "every output in exact arithmetic: these outputs are impossible for the claimed law computed exactly. "
            "float64 rounding makes them, and as the statistic is a fixed function of the release, their "
            "different rates on x and x' are a real difference between the release function's output laws -- "
            "a floating-point leak of the implementation [Mir12], not a calibration defect of the statistic; "
            "examples (to the last bit) in audit_lower_bound.evidence"
        )

    def to_json(self) -> dict[str, object]:
        """The report's ``audit_lower_bound.evidence`` entry."""
        return {
            "pair": self.pair,
            "statistic": self.statistic,
            "event": self.event,
            "threshold": self.threshold,
            "rate_x": self.rate_x,
            "rate_x_prime": self.rate_x_prime,
            "exact_range": None if self.exact_range is None else list(self.exact_range),
            "impossible_in_exact_arithmetic": self.impossible,
            "outside_range": {"x": self.outside_x, "x_prime": self.outside_x_prime},
            "measurement_draws": list(self.draws),
            "examples": [e.to_json() for e in self.examples],
            "explanation": self.sentence(),
        }


def _examples(ys: FloatArray, s: FloatArray, mask: NDArray[np.bool_], side: str) -> list[OutputExample]:
    return [
        OutputExample(side, repr(float(s[i])), tuple(repr(float(v)) for v in ys[i]))
        for i in np.flatnonzero(mask)[:EXAMPLES]
    ]


def refutation_evidence(
    pair: int, test: Measured, stat: Statistic, meas_x: FloatArray, meas_xp: FloatArray
) -> Evidence:
    """The rarer side of a measured test on its measurement releases, with the outputs outside the statistic's
    exact range (module docstring). ``meas_x``, ``meas_xp``: ``(draws, cells)`` releases at ``x`` and ``x'``."""
    tau = test.candidate.threshold
    s0 = stat.score(np.asarray(meas_x, dtype=np.float64))
    s1 = stat.score(np.asarray(meas_xp, dtype=np.float64))
    above0, above1 = s0 > tau, s1 > tau
    upper_side = bool(above0.mean() + above1.mean() <= 2.0 - above0.mean() - above1.mean())
    in0, in1 = (above0, above1) if upper_side else (~above0, ~above1)
    rng = stat.exact_range
    impossible = False
    out0 = out1 = 0
    if rng is not None:
        lo, hi = rng
        impossible = tau >= hi if upper_side else tau < lo
        out0 = int(np.count_nonzero((s0 < lo) | (s0 > hi)))
        out1 = int(np.count_nonzero((s1 < lo) | (s1 > hi)))
    ex = _examples(meas_x, s0, in0, "x") + _examples(meas_xp, s1, in1, "x_prime")
    return Evidence(
        pair=pair,
        statistic=stat.name,
        event="s > tau" if upper_side else "s <= tau",
        threshold=tau,
        rate_x=float(in0.mean()) if len(in0) else 0.0,
        rate_x_prime=float(in1.mean()) if len(in1) else 0.0,
        exact_range=rng,
        impossible=impossible,
        outside_x=out0,
        outside_x_prime=out1,
        draws=(len(s0), len(s1)),
        examples=tuple(ex),
    )


__all__ = ["EXAMPLES", "Evidence", "OutputExample", "refutation_evidence"]
