"""Loading spec files: TOML validated into the frozen dataclasses of :mod:`verify.spec` (house style R13).

:func:`load` walks the dataclasses' type hints to convert and check every key.
``[mechanism]`` is a tagged union: its ``kind`` picks the registered kind
(:mod:`verify.registry`) whose dataclass holds the rest of the table -- or, for a kind written in one of several
forms (``published``: ``guarantee``, ``components`` or ``measurements``; a calibrated kind's target), whose keyed
union (:class:`~verify.spec.Alternatives`) does. A field typed as a union of
dataclasses is a tagged union too: the variants share a first ``Literal`` field (the tag, e.g.
``cnd``) whose value picks the variant, or -- a keyed union (:class:`~verify.spec.Alternatives`, the spec's
"exactly one of" keys: a guarantee's form, a recode's ``map`` or ``bins``) -- the key a variant holds alone
picks it; either way each variant's required keys are checked once, here.
The tables of registered section plugins (:class:`~verify.registry.SectionPlugin`) are built from
their own dataclasses. Unknown
keys are errors with ``difflib`` suggestions, and every problem -- shared
(:mod:`verify.spec_checks`) and the kind's own -- is reported at once in one
:class:`~accountant.core.errors.InvalidSpec`.
"""

from __future__ import annotations

import dataclasses
import difflib
import hashlib
import re
import tomllib
import types
import typing
from collections.abc import Callable, Sequence
from fractions import Fraction
from pathlib import Path
from typing import Any, Literal

from semidp.accountant.core.errors import InvalidSpec, ToolkitError
from semidp.verify import kinds as _builtin_kinds  # noqa: F401  (registers the built-in kinds and sections)
from semidp.verify.design import design_problems
from semidp.verify.registry import REGISTRY, Problem, section_plugins, unknown_kind_problem
from semidp.verify.spec import Alternatives, MechanismSpec, Spec, form_types, own_keys, public_fields, strip_optional
from semidp.verify.spec_checks import SHARED_CHECKS
from semidp.verify.spec_files import SpecFileRefused, decode_text, read_regular
from semidp.verify.spec_numbers import DecimalText, NumberRefused, exact_number


def _convert(tp: Any, value: Any, key: str, probs: list[Problem]) -> Any:
    tp, _ = strip_optional(tp)
    origin = typing.get_origin(tp)
    if tp is MechanismSpec:
        return _build_mechanism(value, key, probs)
    if dataclasses.is_dataclass(tp):
        if not isinstance(value, dict):
            probs.append(Problem(key, f"expected a table, got {type(value).__name__} {value!r}"))
            return None
        return _build(tp, value, key, probs)
    if origin is Literal:
        allowed = typing.get_args(tp)
        if value not in allowed:
            close = difflib.get_close_matches(str(value), [str(a) for a in allowed], n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            probs.append(Problem(key, f"{value!r} is not one of {list(allowed)}{hint}"))
            return None
        return value
    if origin in (typing.Union, types.UnionType):  # e.g. a file name or a table: picked by the value's type
        args = typing.get_args(tp)
        variants = [a for a in args if dataclasses.is_dataclass(a)]
        if len(variants) > 1 and isinstance(value, dict):  # tables of several shapes: by their tag or their key
            if all(isinstance(v, type) and issubclass(v, Alternatives) for v in variants):
                return _build_keyed(variants, value, key, probs)
            return _build_tagged(variants, value, key, probs)
        table = next((a for a in args if dataclasses.is_dataclass(a)), None)
        if isinstance(value, dict) and table is not None:
            return _convert(table, value, key, probs)
        if isinstance(value, str) and str in args:
            return value
        probs.append(Problem(key, f"expected {_union_noun(args)}, got {type(value).__name__} {_short(value)}"))
        return None
    if origin is dict:
        if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
            probs.append(Problem(key, f"expected a table of strings, got {_short(value)}"))
            return None
        return dict(value)
    if origin is tuple:
        inner = typing.get_args(tp)[0]
        if not isinstance(value, list):
            probs.append(Problem(key, f"expected an array, got {type(value).__name__} {value!r}"))
            return None
        return tuple(_convert(inner, v, f"{key}[{i}]", probs) for i, v in enumerate(value))
    if tp is Fraction:
        try:
            return exact_number(value)
        except NumberRefused as e:
            probs.append(Problem(key, str(e)))
            return None
    if tp is int:
        if isinstance(value, bool) or not isinstance(value, int):
            probs.append(Problem(key, f"expected an integer, got {value!r}"))
            return None
        return value
    if tp is float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            probs.append(Problem(key, f"expected a number, got {value!r}"))
            return None
        return float(value)
    if tp is str:
        if not isinstance(value, str):
            probs.append(Problem(key, f"expected a string, got {value!r}"))
            return None
        return value
    raise TypeError(f"unsupported spec field type {tp!r}")  # programming error, not bad input


def _union_noun(args: tuple[Any, ...]) -> str:
    return " or ".join(
        "a table" if dataclasses.is_dataclass(a) else f"a {a.__name__}" for a in args if a is not type(None)
    )


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:60] + "..."


def _build_mechanism(value: Any, key: str, probs: list[Problem]) -> Any:
    """``[mechanism]``: the dataclass of the kind named by ``kind`` (a tagged union)."""
    if not isinstance(value, dict):
        probs.append(Problem(key, f"expected a table, got {type(value).__name__} {value!r}"))
        return None
    if "kind" not in value:
        probs.append(Problem(f"{key}.kind", "missing (required)"))
        return None
    kind = REGISTRY.get(value["kind"]) if isinstance(value["kind"], str) else None
    if kind is None:
        probs.append(unknown_kind_problem(value["kind"]))
        return None
    spec_type = kind.info.spec_type
    if issubclass(spec_type, Alternatives) and form_types(spec_type):  # a kind written in one of several forms
        return _build_keyed(form_types(spec_type), value, key, probs, partial=True)
    return _build(spec_type, value, key, probs)


def _tag_of(variants: Sequence[Any]) -> str:
    """The tag of a tagged union of tables: the first field of every variant, typed ``Literal``."""
    tags = {public_fields(v)[0].name for v in variants}
    if len(tags) != 1:  # programming error in a spec type, not bad input
        raise TypeError(f"the variants {[v.__name__ for v in variants]} do not share a first (tag) field")
    return tags.pop()


def _build_tagged(variants: Sequence[Any], table: dict[str, Any], key: str, probs: list[Problem]) -> Any:
    """A table of a tagged union (e.g. ``mechanism.noise``): the variant whose ``Literal`` tag field holds the
    table's tag value, with its own required keys (so a built value never lacks one: validated once)."""
    tag = _tag_of(variants)
    by_value = {t: v for v in variants for t in typing.get_args(typing.get_type_hints(v)[tag])}
    table = _known_keys(variants, table, key, probs)
    if tag not in table:
        probs.append(Problem(_join(key, tag), f"missing (required): one of {list(by_value)}"))
        return None
    chosen = table[tag]
    cls = by_value.get(chosen) if isinstance(chosen, str) else None
    if cls is None:
        close = difflib.get_close_matches(str(chosen), [str(t) for t in by_value], n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        probs.append(Problem(_join(key, tag), f"{chosen!r} is not one of {list(by_value)}{hint}"))
        return None
    own = {f.name for f in public_fields(cls)}
    kept = dict(table)
    for k in table:
        holders = [v for v in variants if k not in own and k in {f.name for f in public_fields(v)}]
        if holders:  # a key of another variant: named with the tag that takes it, as the runtime checks did
            values = [t for t, v in by_value.items() if v in holders]
            where = f"{tag} = {values[0]!r}" if len(values) == 1 else f"{tag} is one of {values}"
            probs.append(Problem(_join(key, k), f"only allowed when {where} ({tag} is {chosen!r})"))
            del kept[k]
    return _build(cls, kept, key, probs, required=f"required when {tag} = {chosen!r}")


def _known_keys(variants: Sequence[Any], table: dict[str, Any], key: str, probs: list[Problem]) -> dict[str, Any]:
    """``table`` without the keys no variant has, each reported as unknown with a suggestion among all variants'."""
    names = list(dict.fromkeys(f.name for v in variants for f in public_fields(v)))
    for k in table:
        if k not in names:
            close = difflib.get_close_matches(k, names, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else f"; expected one of {names}"
            probs.append(Problem(_join(key, k), f"unknown key{hint}"))
    return {k: v for k, v in table.items() if k in names}


def _build_keyed(
    variants: Sequence[Any], table: dict[str, Any], key: str, probs: list[Problem], *, partial: bool = False
) -> Any:
    """A table of a keyed union (:class:`~verify.spec.Alternatives`, e.g. a guarantee, a recode or the published
    kind's ``[mechanism]``): the form whose own key the table holds, or the form without one (the default).
    Several keys, or none without a default, are one problem naming ``key`` (or the union's ``CHOICE_KEY`` in it:
    the union's :meth:`~verify.spec.Alternatives.choice_problem`); another form's key, e.g. ``delta`` beside
    ``zcdp``, is ``"delta goes with epsilon"`` (the union's ``stray_problem``); unknown keys get a suggestion.

    ``partial``: a required key missing from the chosen form is reported (the union's ``missing_problem``) and the
    form is still built, with ``None`` for it, so the kind's validator lists the spec's other problems too (the
    spec is rejected either way; :func:`validate` tolerates what a missing key makes a validator raise)."""
    base = variants[0]
    own = {v: own_keys(v, variants) for v in variants}
    kept = _known_keys(variants, table, key, probs)
    given = [keys[0] for keys in own.values() if keys and keys[0] in kept]
    default = [v for v, keys in own.items() if not keys]
    chosen = [v for v, keys in own.items() if keys and keys[0] in kept] or default
    if len(given) > 1 or not chosen:
        at = base.choice_key(given)
        probs.append(Problem(_join(key, at) if at else key, base.choice_problem(given)))
    for keys in own.values():  # a later key of a form whose first key is absent (given: the choice above names it)
        for k in keys[1:] if keys and keys[0] not in kept else ():
            if k in kept:
                probs.append(Problem(_join(key, k), base.stray_problem(k, keys[0])))
                del kept[k]
    if len(given) > 1 or not chosen:
        return None
    first = own[chosen[0]][0] if own[chosen[0]] else ""
    return _build(chosen[0], kept, key, probs, required=base.missing_problem(first), partial=partial)


def _build(
    cls: Any,
    table: dict[str, Any],
    prefix: str,
    probs: list[Problem],
    *,
    required: str = "missing (required)",
    partial: bool = False,
) -> Any:
    hints = typing.get_type_hints(cls)
    fields = public_fields(cls)
    names = [f.name for f in fields]
    for k in table:
        if k not in names:
            close = difflib.get_close_matches(k, names, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else f"; expected one of {names}"
            probs.append(Problem(_join(prefix, k), f"unknown key{hint}"))
    kwargs: dict[str, Any] = {}
    for f in fields:
        key = _join(prefix, f.name)
        if f.name in table:
            kwargs[f.name] = _convert(hints[f.name], table[f.name], key, probs)
        elif f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
            probs.append(Problem(key, required))
            if partial:  # reported above: the spec is rejected, and the value only feeds its other validators
                kwargs[f.name] = None
    try:
        return cls(**kwargs)
    except TypeError:
        return None


_DID_YOU_MEAN = re.compile(r"^unknown key; did you mean '([^']+)'\?$")


def without_contradictions(probs: list[Problem]) -> list[Problem]:
    """``probs`` less each "required" problem of a key that an unknown key's did-you-mean already names.

    A typo such as ``nosie = ...`` under ``[mechanism]`` is reported once, as
    ``mechanism.nosie: unknown key; did you mean 'noise'?``, not also as ``mechanism.noise: required``
    (which would contradict the line the user just read).
    """
    meant = set()
    for p in probs:
        m = _DID_YOU_MEAN.match(p.message)
        if m:
            meant.add(_join(p.key.rpartition(".")[0], m.group(1)))
    if not meant:
        return probs

    def contradicted(p: Problem) -> bool:
        named = p.key in meant or any(p.key.startswith(k + ".") for k in meant)
        return named and "required" in p.message

    return [p for p in probs if not contradicted(p)]


def _join(prefix: str, key: str) -> str:
    return f"{prefix}.{key}" if prefix else key


class ValidatorError(RuntimeError):
    """A validator raised instead of listing problems: a bug in semidp or in a registered kind, not bad input.

    Reported as an internal error (exit 2, ``semidp: PATH: internal error: ...``; ``--debug`` prints the
    traceback, which chains the validator's own exception). Never a silently dropped problem.
    """


def validate(spec: Spec, *, parse_problems: Sequence[Problem] = ()) -> list[Problem]:
    """Every problem of a built spec: the shared sections and the kind's own (:meth:`~verify.registry.Kind.validate`).

    ``parse_problems`` are the problems found while building ``spec`` from its TOML: a section that failed to
    parse is left out (``None``), so a validator reading it may raise ``TypeError`` or ``AttributeError``; the
    spec is rejected with those problems either way. Any other exception of a validator -- and any exception
    at all when the spec was built without problems -- raises :class:`ValidatorError` naming the validator.
    A :class:`~accountant.core.errors.ToolkitError` (e.g. a refused size) propagates unchanged.
    """
    probs: list[Problem] = []
    checks: list[tuple[str, Callable[[Spec], list[Problem]]]] = [(c.__name__, c) for c in SHARED_CHECKS[:3]]
    kind = REGISTRY.get(spec.mechanism.kind) if spec.mechanism is not None else None
    if kind is not None:
        checks.append((f"{kind.info.name!r} kind", kind.validate))
    checks.append((SHARED_CHECKS[3].__name__, SHARED_CHECKS[3]))
    checks += [(f"{plugin.name!r} section", plugin.validate) for plugin in section_plugins()]
    checks.append(("design_problems", design_problems))
    for name, check in checks:
        try:
            probs += check(spec)
        except ToolkitError:
            raise
        except (TypeError, AttributeError) as e:
            if not parse_problems:
                raise ValidatorError(f"internal error in the {name} validator: {type(e).__name__}: {e}") from e
            # a section that failed to parse (its problem is listed): this validator's problems wait for it
        except Exception as e:
            raise ValidatorError(f"internal error in the {name} validator: {type(e).__name__}: {e}") from e
    return probs


def loads(text: str, path: str = "<string>") -> Spec:
    """Parse and validate spec text; raise :class:`InvalidSpec` listing every problem."""
    try:
        raw = tomllib.loads(text, parse_float=DecimalText)  # decimals stay exact (spec_numbers)
    except tomllib.TOMLDecodeError as e:
        raise InvalidSpec(path, [f"not valid TOML: {e}"]) from None
    except ValueError as e:  # an integer of more than 4300 digits (Python's int_max_str_digits)
        raise InvalidSpec(path, [f"not valid TOML: {str(e)[:120]}"]) from None
    probs: list[Problem] = []
    owned = {p.name: p for p in section_plugins() if p.table is not None}  # tables of section plugins
    spec = _build(Spec, {k: v for k, v in raw.items() if k not in owned}, "", probs)
    if spec is not None:
        tables = tuple((k, _convert(owned[k].table, v, k, probs)) for k, v in raw.items() if k in owned)
        # Files the spec names are relative to it; each section plugin checks what only the TOML shows and
        # prepares the spec (e.g. geolevels named by the invariant become stand-in features of the data space).
        spec = dataclasses.replace(spec, path=path, plugin_tables=tables)
        for plugin in section_plugins():
            probs += plugin.raw_problems(raw, spec)
            spec = plugin.prepare(spec)
        # A key that failed to parse is left out of the spec; a validator seeing it missing would contradict the
        # parse problem (e.g. "needs exactly one of guarantee ...; got none" under a malformed guarantee).
        parsed = {p.key for p in probs}
        probs += [p for p in validate(spec, parse_problems=probs) if p.key not in parsed]
    probs = without_contradictions(probs)
    if probs or spec is None:
        raise InvalidSpec(path, [str(p) for p in probs] or ["could not be read"])
    digest = hashlib.sha256(text.encode()).hexdigest()
    out: Spec = dataclasses.replace(spec, path=path, sha256=digest)
    return out


def load(path: str | Path) -> Spec:
    """Read and validate a spec file (contract v1); raise :class:`InvalidSpec` on any problem.

    Examples
    --------
    >>> s = loads('''
    ... version = 1
    ... name = "toy"
    ... [data]
    ... features = [{ name = "state", levels = 3 }]
    ... [invariant]
    ... kind = "margins"
    ... margins = [["state"]]
    ... [mechanism]
    ... kind = "published"
    ... guarantee = { zcdp = 0.5 }
    ... ''')
    >>> s.mechanism.guarantee.zcdp
    Fraction(1, 2)
    """
    try:
        text = decode_text(read_regular(Path(path), "spec", str(path)), "spec", str(path))
    except SpecFileRefused as e:
        raise InvalidSpec(str(path), [f"cannot read the file: {e.why}"]) from None
    return loads(text, str(path))


__all__ = ["ValidatorError", "load", "loads", "validate"]
