"""The registry of mechanism kinds: ``mechanism.kind`` -> the :class:`Kind` object that owns it (house style R16).

A kind owns its :class:`KindInfo` (name; spec dataclass, a subclass of :class:`~verify.spec.MechanismSpec`
with the kind's TOML keys; the claim frameworks it evaluates; the optional sections it accepts), its
validation (problems named by key), and its run step (:meth:`Kind.run`), which returns a
:class:`~verify.context.KindResult` of typed sections, checks and artefacts. The
runner (:mod:`verify.runner`) does the shared part once.

Adding a kind is one module that defines it and one :func:`register` line
(the built-in kinds are registered in :mod:`verify.kinds`); a test registers a
toy kind the same way. Kinds are looked up, never dispatched by an ``if`` chain.

Sections the kinds do not own (``[postprocess]``, the workload's geolevels, a plugin's own table) are
:class:`SectionPlugin` objects registered with :func:`register_section`: the loader and the runner call
every registered one, and import none by name. The options of a run (``--allow-code``, a Dask scheduler)
reach the kind as one :class:`~verify.run_options.RunOptions` on its context.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from semidp.accountant.core.errors import InvalidSpec

if TYPE_CHECKING:
    from semidp.verify.context import Context, KindResult
    from semidp.verify.spec import MechanismSpec, Spec


@dataclass(frozen=True, slots=True)
class Problem:
    """One problem of a spec: the dotted ``key`` it concerns (empty for the whole file) and what is wrong."""

    key: str
    message: str

    def __str__(self) -> str:
        return f"{self.key}: {self.message}" if self.key else self.message


@dataclass(frozen=True, slots=True)
class KindInfo:
    """What the runner and the loader read of a kind without calling it: one frozen value with defaults."""

    name: str
    """The TOML ``mechanism.kind``."""
    spec_type: type[MechanismSpec]
    """Its frozen dataclass (TOML keys unchanged from contract v1)."""
    frameworks: tuple[str, ...] = ("dp", "semi-dp")
    """The ``claim.framework`` values it evaluates."""
    reports_sensitivity: bool = False
    """Whether the runner adds the ``sensitivity`` section (and check) when the spec has a ``[query]``."""
    sections: tuple[str, ...] = ()
    """The registered section plugins (:class:`SectionPlugin`) whose optional table the kind accepts
    (e.g. ``postprocess``)."""


class Kind(Protocol):
    """What the runner and the loader need from a kind of ``[mechanism]``."""

    @property
    def info(self) -> KindInfo:
        """Its name, dataclass, frameworks and the optional sections it accepts."""
        ...

    def default_framework(self, spec: Spec) -> str:
        """The framework reported when the spec has no ``[claim]``."""
        ...

    def semi_adjacent_method(self, spec: Spec) -> str:
        """How the runner computes a(t): ``"auto"`` (closed form when exact, else the exact search) or
        ``"closed-form"`` (a proven bound is all the kind needs, e.g. a test whose guarantee covers a fixed radius)."""
        ...

    def validate(self, spec: Spec) -> list[Problem]:
        """Problems of the spec for this kind, each naming its key (all at once, not the first)."""
        ...

    def run(self, ctx: Context) -> KindResult:
        """The kind's part of the audit (see :class:`~verify.context.KindResult`)."""
        ...


class KindDefaults:
    """The defaults a kind object may inherit: framework ``semi-dp``, a(t) by ``auto``, no problems of its own.

    A subclass sets :attr:`info` and defines :meth:`run`; it overrides a method only where it differs.
    """

    info: KindInfo

    @property
    def name(self) -> str:
        """``info.name``."""
        return self.info.name

    @property
    def spec_type(self) -> type[MechanismSpec]:
        """``info.spec_type``."""
        return self.info.spec_type

    def default_framework(self, spec: Spec) -> str:
        """``semi-dp``."""
        return "semi-dp"

    def semi_adjacent_method(self, spec: Spec) -> str:
        """``auto``: the closed form when exact, else the exact search at the table."""
        return "auto"

    def validate(self, spec: Spec) -> list[Problem]:
        """No problems of its own."""
        return []


class SectionPlugin(Protocol):
    """A spec section handled outside the kinds (``[postprocess]``, the workload's geography, a plugin's table).

    The loader and the runner call every registered section plugin; neither imports one by name.
    """

    @property
    def name(self) -> str:
        """The TOML table the plugin owns (also what :attr:`KindInfo.sections` names)."""
        ...

    @property
    def table(self) -> type | None:
        """The dataclass of the table the plugin owns (read into ``Spec.plugin_tables``, e.g. ``[postprocess]``;
        listed by ``semidp schema``); ``None`` when it has none."""
        ...

    def raw_problems(self, raw: Mapping[str, Any], spec: Spec) -> list[Problem]:
        """Problems only the parsed TOML shows (e.g. a key the dataclass defaults), before :meth:`prepare`."""
        ...

    def prepare(self, spec: Spec) -> Spec:
        """The spec as the accounting reads it (idempotent: the loader and the runner both call it)."""
        ...

    def validate(self, spec: Spec) -> list[Problem]:
        """Problems of the section, each naming its key (run after the kind's own validation)."""
        ...


class SectionDefaults:
    """The defaults a section plugin may inherit: no table of its own, nothing to prepare, no problems."""

    table: type | None = None

    def raw_problems(self, raw: Mapping[str, Any], spec: Spec) -> list[Problem]:
        """None."""
        return []

    def prepare(self, spec: Spec) -> Spec:
        """The spec unchanged."""
        return spec

    def validate(self, spec: Spec) -> list[Problem]:
        """None."""
        return []


SECTIONS: dict[str, SectionPlugin] = {}
"""Section name -> section plugin, in registration order."""


def register_section(plugin: SectionPlugin, *, replace: bool = False) -> SectionPlugin:
    """Register a section plugin under ``plugin.name``; refuse a second one of the same name unless ``replace``."""
    if plugin.name in SECTIONS and not replace and SECTIONS[plugin.name] is not plugin:
        raise ValueError(f"a section plugin named {plugin.name!r} is already registered")
    SECTIONS[plugin.name] = plugin
    return plugin


def unregister_section(name: str) -> None:
    """Remove a registered section plugin (tests that register toy sections clean up with this)."""
    SECTIONS.pop(name, None)


def section_plugins() -> list[SectionPlugin]:
    """The registered section plugins, in registration order."""
    return list(SECTIONS.values())


def prepare_sections(spec: Spec) -> Spec:
    """``spec`` after every section plugin's :meth:`SectionPlugin.prepare` (idempotent)."""
    for plugin in section_plugins():
        spec = plugin.prepare(spec)
    return spec


def kinds_accepting(section: str) -> list[str]:
    """The registered kinds whose :attr:`KindInfo.sections` name ``section``, in registration order."""
    return [k.info.name for k in REGISTRY.values() if section in k.info.sections]


REGISTRY: dict[str, Kind] = {}
"""``mechanism.kind`` -> kind, in registration order."""


def register(kind: Kind, *, replace: bool = False) -> Kind:
    """Register ``kind`` under ``kind.info.name``; refuse a second kind of the same name unless ``replace``."""
    name = kind.info.name
    if name in REGISTRY and not replace and REGISTRY[name] is not kind:
        raise ValueError(f"a mechanism kind named {name!r} is already registered")
    REGISTRY[name] = kind
    return kind


def unregister(name: str) -> None:
    """Remove a registered kind (tests that register toy kinds clean up with this)."""
    REGISTRY.pop(name, None)


def kind_names() -> list[str]:
    """The registered ``mechanism.kind`` values, in registration order."""
    return list(REGISTRY)


def kinds() -> Iterator[Kind]:
    """The registered kinds, in registration order."""
    return iter(list(REGISTRY.values()))


def lookup(name: str, path: str = "<string>") -> Kind:
    """The kind registered as ``name``; :class:`InvalidSpec` naming ``mechanism.kind`` (with a suggestion) if none."""
    try:
        return REGISTRY[name]
    except KeyError:
        raise InvalidSpec(path, [str(unknown_kind_problem(name))]) from None


def unknown_kind_problem(name: object) -> Problem:
    """The problem of an unregistered ``mechanism.kind``, with a did-you-mean suggestion."""
    names = kind_names()
    close = difflib.get_close_matches(str(name), names, n=1)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    return Problem("mechanism.kind", f"{name!r} is not one of {names}{hint}")


__all__ = [
    "Kind",
    "KindDefaults",
    "KindInfo",
    "Problem",
    "REGISTRY",
    "SECTIONS",
    "SectionDefaults",
    "SectionPlugin",
    "kind_names",
    "kinds",
    "kinds_accepting",
    "lookup",
    "prepare_sections",
    "register",
    "register_section",
    "section_plugins",
    "unknown_kind_problem",
    "unregister",
    "unregister_section",
]
