"""The one walk from typed report values to JSON (verify.json_walk): field order, internal and omitted fields."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from semidp.accountant.guarantees.conversion_routes import EpsilonDelta
from semidp.verify.json_walk import INTERNAL, OMIT_NONE, Walked, to_json
from semidp.verify.sections import MonteCarloMean, SamplesSection


@dataclass(frozen=True)
class _Inner(Walked):
    b: float
    a: tuple[int, ...]


@dataclass(frozen=True)
class _Outer(Walked):
    z: str
    inner: _Inner
    entries: tuple[EpsilonDelta, ...]
    groups: dict[str, _Inner]
    maybe: int | None = field(default=None, metadata=OMIT_NONE)
    null: int | None = None
    key: str = field(default="outer", metadata=INTERNAL)


def test_fields_in_declaration_order_nested_values_walked() -> None:
    v = _Outer("z", _Inner(1.5, (1, 2)), (EpsilonDelta(1e-6, 2.0, "bun-steinke"),), {"g": _Inner(0.5, ())})
    out = v.to_json()
    assert out == {
        "z": "z",
        "inner": {"b": 1.5, "a": [1, 2]},
        "entries": [{"delta": 1e-6, "epsilon": 2.0, "method": "bun-steinke"}],
        "groups": {"g": {"b": 0.5, "a": []}},
        "null": None,  # only OMIT_NONE fields are left out when None
    }
    assert list(out) == ["z", "inner", "entries", "groups", "null"]  # declaration order, key (internal) left out
    assert to_json(_Outer("z", _Inner(0.0, ()), (), {}, maybe=3))["maybe"] == 3


def test_an_override_of_to_json_is_used_inside_the_walk() -> None:
    @dataclass(frozen=True)
    class Custom(Walked):
        x: int

        def to_json(self) -> Any:
            return {"custom": self.x}

    assert to_json([Custom(1)]) == [{"custom": 1}]


def test_unknown_types_are_refused_not_stringified() -> None:
    with pytest.raises(TypeError, match="no JSON form for set"):
        to_json({"x": {1, 2}})


def test_a_typed_section_gives_the_contract_object() -> None:
    """``samples`` and a Monte Carlo mean as the report wrote them before they were typed."""
    assert SamplesSection(10, 7, (10, 9), "float64", "row-major cells").to_json() == {
        "count": 10,
        "seed": 7,
        "shape": [10, 9],
        "dtype": "float64",
        "order": "row-major cells",
    }
    mc = MonteCarloMean("E||noise||_2", 1.0, 0.1, 0.99, (0.7, 1.3), 100)
    assert list(mc.to_json()) == ["quantity", "mean", "std_error", "level", "interval", "draws"]
