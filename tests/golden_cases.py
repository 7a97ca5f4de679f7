"""Loader for tests/golden/*.toml (house style R10): each case becomes a pytest.param with its id."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import pytest

GOLDEN = Path(__file__).parent / "golden"


def cases(filename: str) -> list[Any]:
    """All ``[[case]]`` tables of ``tests/golden/<filename>`` as pytest params."""
    data = tomllib.loads((GOLDEN / filename).read_text(encoding="utf-8"))
    return [pytest.param(c, id=c["id"]) for c in data["case"]]


def assert_close(ours: float, case: dict[str, Any]) -> None:
    """Ours must equal the published value to within half a unit of its last printed digit."""
    pub, rtol = float(case["published"]), float(case["rtol"])
    assert abs(ours - pub) <= rtol * abs(pub), (
        f"{case['id']} ({case['source']}, {case['locator']}): ours {ours!r} vs published {pub!r}"
    )
