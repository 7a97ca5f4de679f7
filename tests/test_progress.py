"""Progress lines appear on a terminal only; stage lines on stderr when the CLI asks (never on stdout)."""

from __future__ import annotations

import io

import pytest

from semidp.accountant.core.progress import Progress


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


def test_stage_lines_only_when_asked_and_never_when_quiet() -> None:
    import io

    from semidp.accountant.core.progress import report_stages, stage

    buf = io.StringIO()
    try:
        stage("nothing yet")  # library callers get nothing by default
        report_stages(buf)
        stage("a(t) search")
        assert buf.getvalue().startswith("semidp: [") and buf.getvalue().endswith("] a(t) search\n")
        report_stages(buf, quiet=True)
        stage("silenced")
        assert "silenced" not in buf.getvalue()
    finally:
        report_stages(None)


def test_cli_writes_stage_lines_to_stderr_not_stdout(capfd: pytest.CaptureFixture[str]) -> None:
    from pathlib import Path

    from semidp.accountant.core.progress import report_stages
    from semidp.verify.cli import main

    spec = str(Path(__file__).resolve().parents[1] / "specs" / "census-2020-total.toml")
    try:
        assert main(["audit", spec, "--json"]) == 0
        out, err = capfd.readouterr()
        assert out.lstrip().startswith("{") and "semidp: [" in err and "auditing" in err
        assert main(["audit", spec, "--json", "--quiet"]) == 0
        assert "semidp: [" not in capfd.readouterr().err
    finally:
        report_stages(None)
