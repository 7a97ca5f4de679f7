"""Progress for long computations (searches, audits, MCMC): a live line on a terminal, stage lines in CI.

A :class:`Progress` writes one self-overwriting line to ``stderr`` when
``stderr`` is a TTY, at most every ``interval`` seconds; in pipes and tests it
writes nothing. :func:`stage` writes one line per stage of an audit
(``semidp: [  3.2 s] spec.toml: sensitivity space``) to the stream chosen by
:func:`report_stages` -- the CLI turns it on for ``stderr`` unless ``--quiet``,
so a CI log is never silent for a minute; library callers get nothing unless
they ask. Neither ever writes to ``stdout`` (``--json`` stays machine-readable).
"""

from __future__ import annotations

import sys
import time
from typing import TextIO

_stages: TextIO | None = None
_to_stderr = False
_quiet = False
_t0 = time.monotonic()


def report_stages(stream: TextIO | None, *, quiet: bool = False, since: float = 0.0) -> None:
    """Send :func:`stage` lines to ``stream`` (``None``: nowhere); ``quiet`` also silences :class:`Progress`.

    ``since``: seconds already spent before this call (the CLI passes the process's age, so the clock counts
    from process start, start-up included). ``sys.stderr`` is resolved at each write, so a replaced or
    captured ``stderr`` is always the one used.
    """
    global _stages, _to_stderr, _quiet, _t0
    _to_stderr = stream is sys.stderr and not quiet
    _stages = None if quiet or _to_stderr else stream
    _quiet, _t0 = quiet, time.monotonic() - max(since, 0.0)


def stage(what: str) -> None:
    """One line for the start of a stage of long work, with the seconds since :func:`report_stages` (plus its ``since``)."""
    out = sys.stderr if _to_stderr else _stages
    if out is None:
        return
    try:
        out.write(f"semidp: [{time.monotonic() - _t0:6.1f} s] {what}\n")
        out.flush()
    except (ValueError, OSError):  # a closed stream: progress is never worth an error
        pass


class Progress:
    """``with Progress("a(t) graph search", total=len(pairs)) as p: ... p.update(i)``."""

    def __init__(self, label: str, total: int, *, stream: TextIO | None = None, interval: float = 0.5) -> None:
        self.label = label
        self.total = max(int(total), 1)
        self.stream = stream if stream is not None else sys.stderr
        self.interval = interval
        self.enabled = not _quiet and bool(getattr(self.stream, "isatty", lambda: False)())
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
