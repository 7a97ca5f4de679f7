"""The one error hierarchy of semidp (house style R5).

Every error raised for bad input is a :class:`ToolkitError` and, where it is
about a value the caller passed, also a :class:`ValueError`, so ``except
ValueError`` keeps working for callers who do not know our types. Messages name
the offending value and what was expected.
"""

from __future__ import annotations

from typing import Any


class ToolkitError(Exception):
    """Root of every error semidp raises on purpose."""


class InvalidArgument(ToolkitError, ValueError):
    """A function argument is out of its domain (names the argument and the domain)."""


#: How many problems an error lists (one more is listed rather than counted); the rest are counted: a file
#: of a million bad rows is one short message.
MAX_LISTED_PROBLEMS = 20


class InvalidSpec(ToolkitError, ValueError):
    """A spec file is malformed; ``problems`` lists every problem found at once.

    Attributes
    ----------
    path:
        The spec file (or ``"<string>"``).
    problems:
        One human-readable line per problem, each naming the key.
    """

    def __init__(self, path: str, problems: list[str]) -> None:
        self.path = path
        self.problems = list(problems)
        shown = self.problems if len(self.problems) <= MAX_LISTED_PROBLEMS + 1 else self.problems[:MAX_LISTED_PROBLEMS]
        lines = "\n".join(f"  - {p}" for p in shown)
        if len(shown) < len(self.problems):
            lines += f"\n  - ... and {len(self.problems) - len(shown)} more problem(s), not listed"
        super().__init__(f"{path}: invalid spec ({len(self.problems)} problem(s)):\n{lines}")


class UnsupportedRelease(ToolkitError, ValueError):
    """A release, mechanism or invariant that this version cannot account for."""


class RelationMismatch(ToolkitError, ValueError):
    """Two guarantees with different neighbouring relations were combined.

    Attributes
    ----------
    left, right:
        The two relations.
    """

    def __init__(self, left: Any, right: Any, what: str = "compose") -> None:
        self.left = left
        self.right = right
        super().__init__(
            f"Cannot {what} guarantees under different neighbouring relations: "
            f"{left!r} vs {right!r}. Convert one explicitly first "
            "(e.g. accountant.semi_dp(g, invariant, radius) for a semi-adjacent relation)."
        )


def format_size(x: float) -> str:
    """``x`` to 4 significant digits (sizes in messages); integers beyond the float range as ``d.ddde+N``."""
    try:
        return f"{x:.4g}"
    except OverflowError:  # an int too large for a float (and maybe for str(): Python caps it at 4300 digits)
        n = abs(int(x))
        exp = (n.bit_length() - 1) * 30103 // 100000  # floor(log10(n)) or one less, without a decimal string
        while 10 ** (exp + 1) <= n:
            exp += 1
        lead = n // 10 ** (exp - 3)  # the leading 4 digits, truncated (a size is never shown as larger)
        return f"{'-' if x < 0 else ''}{lead // 1000}.{lead % 1000:03d}e+{exp}"


class SearchTooLarge(InvalidArgument):
    """A combinatorial search was refused before starting because it is too big.

    Attributes
    ----------
    size:
        The estimated size (e.g. number of conforming histograms).
    limit:
        The limit that was exceeded.
    """

    def __init__(self, what: str, size: float, limit: float, hint: str = "") -> None:
        self.size = size
        self.limit = limit
        self.what = what
        self.hint = hint
        msg = self.summary
        if hint:
            msg += " " + hint
        super().__init__(msg)

    @property
    def summary(self) -> str:
        """What was refused and why, without the hint (which names Python arguments): for reports and the CLI."""
        return f"{self.what}: estimated size {format_size(self.size)} exceeds the limit {format_size(self.limit)}."


class SearchOutOfTime(SearchTooLarge):
    """A combinatorial search stopped because its time budget ran out (``size`` = seconds spent, ``limit`` = the
    seconds it had, 0 when the budget was spent before it started); ``done`` says how far it got."""

    def __init__(self, what: str, seconds: float, limit: float, hint: str = "", done: str = "") -> None:
        self.done = done
        super().__init__(what, seconds, max(limit, 0.0), hint)

    @property
    def summary(self) -> str:
        """What stopped, after how long, and how far it got: for reports and the CLI."""
        got = f" ({self.done})" if self.done else ""
        return f"{self.what}: stopped after {self.size:.3g} s, its time budget of {self.limit:.3g} s spent{got}."


class BudgetExhausted(ToolkitError):
    """A long computation (an MCMC run, a meeting-time search) hit its iteration or time budget first.

    Attributes
    ----------
    completed:
        Iterations completed when the budget ran out.
    """

    def __init__(self, message: str, completed: int) -> None:
        self.completed = completed
        super().__init__(message)


class VerificationError(ToolkitError):
    """An internal certificate failed its independent re-check (a bug, never bad input)."""
