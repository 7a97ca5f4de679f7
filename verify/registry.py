"""The registry of mechanism kinds: ``mechanism.kind`` -> the :class:`Kind` object that owns it (house style R16).

A kind owns its spec dataclass (a subclass of :class:`~verify.spec.MechanismSpec`
with the kind's TOML keys), its validation (problems named by key), the claim
frameworks it evaluates, and its run step (:meth:`Kind.run`), which returns a
:class:`~verify.context.KindResult` of typed sections, checks and artefacts. The
runner (:mod:`verify.runner`) does the shared part once.

Adding a kind is one module that defines it and one :func:`register` line
(the built-in kinds are registered in :mod:`verify.kinds`); a test registers a
toy kind the same way. Kinds are looked up, never dispatched by an ``if`` chain.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from semidp.accountant.errors import InvalidSpec

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


class Kind(Protocol):
    """What the runner and the loader need from a kind of ``[mechanism]``."""

    @property
    def name(self) -> str:
        """The TOML ``mechanism.kind``."""
        ...

    @property
    def spec_type(self) -> type[MechanismSpec]:
        """Its frozen dataclass (TOML keys unchanged from contract v1)."""
        ...

    @property
    def frameworks(self) -> tuple[str, ...]:
        """The ``claim.framework`` values it evaluates."""
        ...

    @property
    def reports_sensitivity(self) -> bool:
        """Whether the runner adds the ``sensitivity`` section (and check) when the spec has a ``[query]``."""
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


REGISTRY: dict[str, Kind] = {}
"""``mechanism.kind`` -> kind, in registration order."""


def register(kind: Kind, *, replace: bool = False) -> Kind:
    """Register ``kind`` under ``kind.name``; refuse a second kind of the same name unless ``replace``."""
    if kind.name in REGISTRY and not replace and REGISTRY[kind.name] is not kind:
        raise ValueError(f"a mechanism kind named {kind.name!r} is already registered")
    REGISTRY[kind.name] = kind
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
    "Problem",
    "REGISTRY",
    "kind_names",
    "kinds",
    "lookup",
    "register",
    "unknown_kind_problem",
    "unregister",
]
