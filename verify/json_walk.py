"""One generic walk from typed report values to the contract's JSON (``specs/README.md``), and the one ``JSON`` alias.

A report section is a frozen dataclass whose fields are its JSON keys, in contract order; :func:`to_json`
walks it (as :mod:`verify.schema` walks the spec dataclasses) and needs no hand-written ``to_json``:

- a :class:`Walked` dataclass becomes an object of its fields, in declaration order. A field with metadata
  ``internal`` (:data:`INTERNAL`, e.g. a section's ``key``; the same marker :func:`verify.spec.public_fields` reads
  for the schema) is not written; one with :data:`OMIT_NONE` is left out when it is ``None``;
- any other value with its own ``to_json()`` (a :class:`~verify.report.GuaranteeSummary`, a
  :class:`~verify.report.Check`, a walked class that overrides it) is written by it;
- tuples and lists become arrays, mappings objects (their values walked); numbers, strings, booleans and ``None``
  are written as they are.

The walk changes no number: the JSON of a typed section is byte-identical to the dictionary it replaces
(``tests/test_report_golden.py`` compares the shipped specs' reports with reports captured before the sections
were typed).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

JSON = dict[str, Any]
"""A JSON object as Python builds it: the type of the JSON boundary only (reading or writing a report file)."""

INTERNAL = MappingProxyType({"internal": True})
"""Field metadata: not a JSON key (a section's ``key``, a value kept for rendering only)."""
OMIT_NONE = MappingProxyType({"omit": "none"})
"""Field metadata: the key is written only when the value is not ``None``."""


def json_fields(cls: Any) -> list[dataclasses.Field[Any]]:
    """The fields of a report dataclass that are JSON keys, in contract order (``internal`` ones left out)."""
    return [f for f in dataclasses.fields(cls) if not f.metadata.get("internal")]


def _omitted(f: dataclasses.Field[Any], value: Any) -> bool:
    return f.metadata.get("omit") == "none" and value is None


def to_json(value: Any) -> Any:
    """The JSON value of a typed report value (module docstring); raises ``TypeError`` for a type it cannot write."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, Walked) and type(value).to_json is Walked.to_json:
        out: JSON = {}
        for f in json_fields(value):
            v = getattr(value, f.name)
            if not _omitted(f, v):
                out[f.name] = to_json(v)
        return out
    own = getattr(value, "to_json", None)
    if callable(own):
        return own()
    if isinstance(value, (tuple, list)):
        return [to_json(v) for v in value]
    if isinstance(value, Mapping):
        return {k: to_json(v) for k, v in value.items()}
    raise TypeError(f"no JSON form for {type(value).__name__}")


class Walked:
    """Base of a report dataclass serialised by :func:`to_json` field by field (its ``to_json`` is the walk)."""

    __slots__ = ()

    def to_json(self) -> Any:
        """The contract's JSON object: the fields, in declaration order (module docstring)."""
        return to_json(self)


__all__ = ["INTERNAL", "JSON", "OMIT_NONE", "Walked", "json_fields", "to_json"]
