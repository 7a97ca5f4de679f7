"""Progress lines appear on a terminal only (never in pipes, CI or --json output)."""

from __future__ import annotations

import io

from semidp.accountant.progress import Progress


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_writes_only_to_a_tty() -> None:
    pipe = io.StringIO()
    with Progress("x", 10, stream=pipe, interval=0.0) as p:
        p.update(5)
    assert pipe.getvalue() == ""
    tty = _Tty()
    with Progress("search", 10, stream=tty, interval=0.0) as p:
        p.update(5, "a(t) >= 2")
    out = tty.getvalue()
    assert "search: 5/10 (50%)" in out and "a(t) >= 2" in out and out.endswith("\r\x1b[K")
