"""Marks for the shipped specs that audit real DP libraries (``specs/audit-*.toml``, the ``audit-peers`` extra)."""

from __future__ import annotations

from importlib.util import find_spec

import pytest

#: The library each real-library spec imports (through its callable in specs/audit_peers/).
LIBRARY = {"audit-opendp": "opendp", "audit-diffprivlib": "diffprivlib"}


def peer_marks(stem: str) -> list[pytest.MarkDecorator]:
    """``slow`` for every ``audit-*`` spec (each draws for up to a minute), plus a skip when its library is missing."""
    if not stem.startswith("audit-"):
        return []
    marks = [pytest.mark.slow]
    for prefix, lib in LIBRARY.items():
        if stem.startswith(prefix) and find_spec(lib) is None:
            marks.append(pytest.mark.skip(reason=f"{lib} is not installed (pip install 'semidp[audit-peers]')"))
    return marks
