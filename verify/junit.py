"""JUnit XML for ``semidp check --junit FILE``: one test case per spec, read by CI systems.

The common subset of the JUnit format (Jenkins, GitLab, GitHub Actions reporters): a ``testsuite``
with ``tests``/``failures``/``errors``/``skipped`` counts and one ``testcase`` per spec; a regression
or a refuted claim is a ``failure``, an invalid spec an ``error``, an inconclusive spec without
regressions passes with its reason in ``system-out``.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from semidp.verify.atomic_write import write_text

Result = Literal["passed", "failed", "error", "skipped"]


@dataclass(frozen=True)
class CaseResult:
    """One spec's outcome in ``semidp check``."""

    name: str
    """The spec (its path as given or its baseline key)."""
    result: Result
    message: str
    """One line: why it failed, or what it found."""
    details: str = ""
    """Everything else (the regressions one per line, the report's failed checks)."""
    seconds: float = 0.0


def junit_xml(cases: list[CaseResult], suite: str = "semidp check") -> str:
    """The JUnit XML document for ``cases``."""
    counts = {r: sum(c.result == r for c in cases) for r in ("failed", "error", "skipped")}
    root = ET.Element("testsuites")
    ts = ET.SubElement(
        root,
        "testsuite",
        name=suite,
        tests=str(len(cases)),
        failures=str(counts["failed"]),
        errors=str(counts["error"]),
        skipped=str(counts["skipped"]),
        time=f"{sum(c.seconds for c in cases):.3f}",
    )
    for c in cases:
        tc = ET.SubElement(ts, "testcase", classname="semidp", name=c.name, time=f"{c.seconds:.3f}")
        if c.result == "failed":
            ET.SubElement(tc, "failure", message=c.message, type="privacy-regression").text = c.details
        elif c.result == "error":
            ET.SubElement(tc, "error", message=c.message, type="invalid-spec").text = c.details
        elif c.result == "skipped":
            ET.SubElement(tc, "skipped", message=c.message)
        else:
            ET.SubElement(tc, "system-out").text = c.message + ("\n" + c.details if c.details else "")
    ET.indent(root)
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def write_junit(path: Path, cases: list[CaseResult]) -> None:
    """Write :func:`junit_xml` to ``path`` (creating its folder), atomically (:mod:`verify.atomic_write`)."""
    write_text(path, junit_xml(cases), what="--junit", parents=True)


__all__ = ["CaseResult", "junit_xml", "write_junit"]
