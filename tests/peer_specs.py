"""The shipped specs as test parameters, with marks for those that audit real DP libraries (``specs/audit-*.toml``,
the ``audit-peers`` extra)."""

from __future__ import annotations

from collections.abc import Set
from importlib.util import find_spec
from pathlib import Path

import pytest

#: The library each real-library spec imports (through its callable in specs/audit_peers/).
LIBRARY = {"audit-opendp": "opendp", "audit-diffprivlib": "diffprivlib"}

#: Every shipped spec, in name order.
SPECS = sorted(Path(__file__).resolve().parent.parent.joinpath("specs").glob("*.toml"))


def peer_marks(stem: str) -> list[pytest.MarkDecorator]:
    """``slow`` for every ``audit-*`` spec (each draws for up to a minute), plus a skip when its library is missing."""
    if not stem.startswith("audit-"):
        return []
    marks = [pytest.mark.slow]
    for prefix, lib in LIBRARY.items():
        if stem.startswith(prefix) and find_spec(lib) is None:
            marks.append(pytest.mark.skip(reason=f"{lib} is not installed (pip install 'semidp[audit-peers]')"))
    return marks


def shipped_spec_params(slow: Set[str]) -> list[object]:
    """One ``pytest.param`` per shipped spec, id its stem: the stems in ``slow`` are marked slow, and every
    ``audit-*`` spec gets :func:`peer_marks` (real libraries draw for a minute: slow, skipped without them)."""
    return [
        pytest.param(
            p, id=p.stem, marks=[pytest.mark.slow, *peer_marks(p.stem)] if p.stem in slow else peer_marks(p.stem)
        )
        for p in SPECS
    ]
