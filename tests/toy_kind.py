"""A toy mechanism kind and a toy section plugin, each one small definition plus one registry line (issue 23).

Shared by ``test_kind_plugin`` (the kind and its section end to end through the CLI) and
``test_validator_errors`` (a kind whose validator has a bug). The toy kind releases pure DP with its own
``mechanism.toy_epsilon`` key; the ``[toy_repeat]`` section (its own table, owned by a section plugin, not
by :class:`~semidp.verify.spec.Spec`) composes the release ``times`` times; the kind reports the run option
``--allow-code`` it was handed, to show the options reach it through the registry.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from fractions import Fraction
from typing import Optional

from semidp.accountant.core.outcome import Verified
from semidp.accountant.guarantees.definitions import PureDP
from semidp.accountant.guarantees.semidp import semi_dp
from semidp.verify.context import Context, KindResult
from semidp.verify.registry import (
    REGISTRY,
    Kind,
    KindDefaults,
    KindInfo,
    Problem,
    SectionDefaults,
    SectionPlugin,
    register,
    register_section,
    unregister,
    unregister_section,
)
from semidp.verify.report import Check, JsonSection
from semidp.verify.spec import MechanismSpec, Spec, documented


@dataclass(frozen=True)
class ToySpec(MechanismSpec):
    """``[mechanism]`` of the toy kind: a pure-DP release with its own epsilon key."""

    toy_epsilon: Optional[Fraction] = documented("The toy release's epsilon on (D, A_1).", default=None)


@dataclass(frozen=True)
class ToyRepeat:
    """``[toy_repeat]``: how many times the toy release is published (basic composition)."""

    times: int = documented("Releases composed (>= 1).", default=1)


class ToyRepeatSection(SectionDefaults):
    """The ``[toy_repeat]`` section plugin: its own table, and its problems named by key."""

    name = "toy_repeat"
    table = ToyRepeat

    def validate(self, spec: Spec) -> list[Problem]:
        t = spec.plugin_table(self.name)
        if t is None:
            return []
        kind = REGISTRY.get(spec.mechanism.kind) if spec.mechanism is not None else None
        probs = []
        if kind is None or self.name not in kind.info.sections:
            probs.append(Problem(self.name, f"mechanism.kind = {spec.mechanism.kind!r} does not take [toy_repeat]"))
        if t.times < 1:
            probs.append(Problem(f"{self.name}.times", f"must be >= 1, got {t.times}"))
        return probs


@dataclass(frozen=True)
class ToyKind(KindDefaults):
    """The toy kind: ``toy_epsilon``-DP per release, ``[toy_repeat] times`` releases, Semi-DP at a(t)."""

    info: KindInfo = KindInfo("toy-release", ToySpec, frameworks=("semi-dp",), sections=("toy_repeat",))

    def validate(self, spec: Spec) -> list[Problem]:
        m = spec.mechanism
        if isinstance(m, ToySpec) and (m.toy_epsilon is None or not m.toy_epsilon > 0):
            return [Problem("mechanism.toy_epsilon", "the toy kind needs toy_epsilon > 0")]
        return []

    def run(self, ctx: Context) -> KindResult:
        m = ctx.mechanism(ToySpec)
        assert m.toy_epsilon is not None
        repeat = ctx.spec.plugin_table("toy_repeat")
        times = repeat.times if isinstance(repeat, ToyRepeat) else 1
        advertised = PureDP(float(m.toy_epsilon * times), ctx.relation)  # basic composition [DR14, Thm. 3.14]
        return KindResult(
            advertised=advertised,
            effective=semi_dp(advertised, ctx.invariant, ctx.a.value),
            checks=(Check("toy-check", Verified("the toy kind ran")),),
            sections=(
                JsonSection(
                    "toy",
                    {"epsilon": float(m.toy_epsilon), "times": times, "allow_code": ctx.options.allow_code},
                ),
            ),
        )


TOY_SPEC = """
version = 1
name = "toy"
[data]
features = [{ name = "state", levels = 4 }]
[invariant]
kind = "margins"
margins = [["state"]]
[mechanism]
kind = "toy-release"
toy_epsilon = EPS
"""
"""A toy spec: ``EPS`` is the epsilon to fill in."""


@contextmanager
def registered(kind: Kind, *sections: SectionPlugin) -> Iterator[Kind]:
    """``kind`` (and section plugins) registered for the ``with`` block, unregistered after it."""
    register(kind)
    for s in sections:
        register_section(s)
    try:
        yield kind
    finally:
        unregister(kind.info.name)
        for s in sections:
            unregister_section(s.name)
