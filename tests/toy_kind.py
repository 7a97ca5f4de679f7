"""A toy mechanism kind and a toy section plugin, each one small definition plus one registry line (issue 23).

Shared by ``test_kind_plugin`` (the kind and its section end to end through the CLI) and
``test_validator_errors`` (a kind whose validator has a bug). The toy kind releases pure DP with its own
``mechanism.toy_epsilon`` key; the ``[toy_repeat]`` section (its own table, owned by a section plugin, not
by :class:`~semidp.verify.spec.Spec`) composes the release ``times`` times; the kind reports the run option
``--allow-code`` it was handed, to show the options reach it through the registry. The kind *describes* its
release (``times`` parts, each a :class:`ToyLaw` with the query's shift on the base relation) and registers the
toy law's interpreter; the runner's interpreters do the accounting (composition, Semi-DP grouping).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Optional

from semidp.accountant.core.directed import up_exact
from semidp.accountant.core.outcome import Verified
from semidp.accountant.guarantees.definitions import Guarantee, PureDP
from semidp.accountant.releases.accounting import register_law, unregister_law
from semidp.accountant.releases.model import Part, PluginLaw, Release, Shift
from semidp.verify.context import Context, KindResult
from semidp.verify.json_walk import INTERNAL, Walked
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
from semidp.verify.report import Check
from semidp.verify.sections import Unrendered
from semidp.verify.spec import MechanismSpec, Spec, documented


@dataclass(frozen=True)
class ToySection(Unrendered, Walked):
    """The toy kind's ``toy`` section: its fields are its JSON keys (the one walk of :mod:`verify.json_walk`)."""

    epsilon: float
    times: int
    allow_code: bool
    key: str = field(default="toy", metadata=INTERNAL)


@dataclass(frozen=True)
class ToySpec(MechanismSpec):
    """``[mechanism]`` of the toy kind: a pure-DP release with its own epsilon key."""

    toy_epsilon: Optional[Fraction] = documented("The toy release's epsilon on (D, A_1).", default=None)


@dataclass(frozen=True)
class ToyLaw(PluginLaw):
    """A toy noise law: ``epsilon_per_unit`` of pure DP per unit of l1 shift (a Laplace law by another name)."""

    epsilon_per_unit: Fraction


def toy_interpreter(law: PluginLaw, shift: Shift) -> Guarantee:
    """The toy law's privacy map: ``epsilon_per_unit * l1``-DP on the shift's relation [DR14, Thm. 3.6]."""
    assert isinstance(law, ToyLaw)
    return PureDP(up_exact(law.epsilon_per_unit * Fraction(shift.l1)), shift.relation)


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
        part = Part(ToyLaw(m.toy_epsilon), (Shift(ctx.relation, l1=1.0, l2_squared=1.0),), label="toy")
        return KindResult(
            release=Release(ctx.relation, ctx.invariant, (part,) * times),  # composed and grouped by the runner
            checks=(Check("toy-check", Verified("the toy kind ran")),),
            sections=(ToySection(float(m.toy_epsilon), times, ctx.options.allow_code),),
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
    register_law(ToyLaw, toy_interpreter)
    for s in sections:
        register_section(s)
    try:
        yield kind
    finally:
        unregister(kind.info.name)
        unregister_law(ToyLaw)
        for s in sections:
            unregister_section(s.name)
