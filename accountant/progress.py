"""Progress lines for long computations (searches, audits, MCMC), on a terminal only.

A :class:`Progress` writes one self-overwriting line to ``stderr`` when
``stderr`` is a TTY, at most every ``interval`` seconds; in CI, pipes and tests
it writes nothing, so machine-readable output (``--json``) is never disturbed.
"""

from __future__ import annotations

import sys
import time
from typing import TextIO


class Progress:
    """``with Progress("a(t) graph search", total=len(pairs)) as p: ... p.update(i)``."""

    def __init__(self, label: str, total: int, *, stream: TextIO | None = None, interval: float = 0.5) -> None:
        self.label = label
        self.total = max(int(total), 1)
        self.stream = stream if stream is not None else sys.stderr
        self.interval = interval
        self.enabled = bool(getattr(self.stream, "isatty", lambda: False)())
        self._t0 = time.monotonic()
        self._last = 0.0
        self._shown = False

    def update(self, done: int, note: str = "") -> None:
        """Report ``done`` of ``total`` units (throttled)."""
        if not self.enabled:
            return
        now = time.monotonic()
        if now - self._last < self.interval:
            return
        self._last = now
        frac = min(done / self.total, 1.0)
        elapsed = now - self._t0
        self.stream.write(
            f"\r{self.label}: {done}/{self.total} ({frac:.0%}), {elapsed:.0f} s"
            + (f", {note}" if note else "")
            + "\033[K"
        )
        self.stream.flush()
        self._shown = True

    def close(self) -> None:
        """Clear the line (if one was shown)."""
        if self.enabled and self._shown:
            self.stream.write("\r\033[K")
            self.stream.flush()

    def __enter__(self) -> "Progress":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
