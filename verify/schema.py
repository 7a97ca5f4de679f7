"""JSON schema of spec files, generated from the dataclasses of :mod:`verify.spec` and the kinds (R13, R16).

``[mechanism]`` is a tagged union: the schema lists one object per registered
kind (``oneOf``), each with ``kind`` fixed to its name and exactly the keys its
dataclass accepts; a kind written in one of several forms (a keyed union, e.g. ``published``: ``guarantee``,
``components`` or ``measurements``) lists its forms in a ``oneOf`` of its own. The table of every registered section plugin
(:class:`~verify.registry.SectionPlugin` with a ``table``, e.g. ``[postprocess]``) is a top-level
property generated from the plugin's dataclass, so the schema is the loader's view of a spec.

``specs/schema.json`` is written by ``semidp schema > specs/schema.json``; a test
asserts the committed file equals the generated one, so it is never edited by hand.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from fractions import Fraction
from typing import Any, Literal

from semidp.verify import kinds as _builtin_kinds  # noqa: F401  (registers the built-in kinds)
from semidp.verify.registry import kinds, section_plugins
from semidp.verify.spec import (
    SPEC_VERSION,
    Alternatives,
    MechanismSpec,
    Spec,
    form_types,
    public_fields,
    strip_optional,
)

_NUMBER = {"anyOf": [{"type": "number"}, {"type": "string", "pattern": r"^\s*-?\d+(\.\d*)?(/\d+)?\s*$"}]}


def _type_schema(tp: Any) -> dict[str, Any]:
    tp, _ = strip_optional(tp)
    origin = typing.get_origin(tp)
    if tp is MechanismSpec:
        return _mechanism_schema()
    if dataclasses.is_dataclass(tp):
        return _object_schema(tp)
    if origin is Literal:
        return {"enum": list(typing.get_args(tp))}
    if origin in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        tagged = sum(dataclasses.is_dataclass(a) for a in args) > 1  # a tagged union of tables: exactly one fits
        return {"oneOf" if tagged else "anyOf": [_type_schema(a) for a in args]}
    if origin is dict:
        return {"type": "object", "additionalProperties": _type_schema(typing.get_args(tp)[1])}
    if origin is tuple:
        return {"type": "array", "items": _type_schema(typing.get_args(tp)[0])}
    if tp is Fraction:
        return dict(_NUMBER)
    if tp is int:
        return {"type": "integer"}
    if tp is float:
        return {"type": "number"}
    if tp is str:
        return {"type": "string"}
    raise TypeError(f"no schema for {tp!r}")


def _object_schema(cls: Any) -> dict[str, Any]:
    hints = typing.get_type_hints(cls)
    props: dict[str, Any] = {}
    required: list[str] = []
    for f in public_fields(cls):
        s = _type_schema(hints[f.name])
        if "doc" in f.metadata:
            s = {"description": f.metadata["doc"], **s}
        props[f.name] = s
        if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
            required.append(f.name)
    out: dict[str, Any] = {"type": "object", "properties": props, "additionalProperties": False}
    if cls.__doc__:
        out["description"] = cls.__doc__.strip().splitlines()[0]
    if required:
        out["required"] = required
    return out


def _mechanism_schema() -> dict[str, Any]:
    """One object schema per registered kind, ``kind`` fixed to its name."""
    variants = []
    for kind in kinds():
        const = {"description": "Mechanism kind.", "const": kind.info.name}
        forms = form_types(kind.info.spec_type) if issubclass(kind.info.spec_type, Alternatives) else []
        obj = _object_schema(kind.info.spec_type)
        obj["properties"]["kind"] = const
        if forms:  # a kind written in one of several forms (a keyed union): exactly one form fits, with its keys
            del obj["additionalProperties"]
            obj["oneOf"] = [_object_schema(form) for form in forms]
            for sub in obj["oneOf"]:
                sub["properties"]["kind"] = const
        obj["title"] = kind.info.name
        variants.append(obj)
    return {"description": "The mechanism or published release: one object per kind.", "oneOf": variants}


def _plugin_tables_schema() -> dict[str, Any]:
    """``{name: object schema}`` of the tables owned by registered section plugins, sorted by name."""
    out: dict[str, Any] = {}
    for plugin in sorted(section_plugins(), key=lambda p: p.name):
        if plugin.table is not None:
            out[plugin.name] = _object_schema(plugin.table)
    return out


def schema() -> dict[str, Any]:
    """The JSON schema (draft 2020-12) of a spec file: :class:`~verify.spec.Spec`'s keys, one ``[mechanism]``
    object per registered kind, and the table of each registered section plugin."""
    s = _object_schema(Spec)
    s["properties"].update(_plugin_tables_schema())
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": f"semidp spec, contract v{SPEC_VERSION}",
        **s,
    }
