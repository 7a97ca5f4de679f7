"""A new mechanism kind is one module and one registry line (issue Step 6, house style R16).

The toy kind below lives only in this test module: a spec dataclass with its
own key, a validation, the frameworks it evaluates and a run step. Registering
it is the only other thing needed for the loader, the schema, the runner and
the CLI to handle it end to end.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Optional

import pytest

from semidp.accountant.guarantees import PureDP
from semidp.accountant.outcome import Verified
from semidp.accountant.semidp import semi_dp
from semidp.verify.cli import main
from semidp.verify.context import Context, KindResult
from semidp.verify.registry import Problem, register, unregister
from semidp.verify.report import Check, JsonSection
from semidp.verify.schema import schema
from semidp.verify.spec import MechanismSpec, Spec, documented


@dataclass(frozen=True)
class ToySpec(MechanismSpec):
    """``[mechanism]`` of the toy kind: a pure-DP release with its own epsilon key."""

    toy_epsilon: Optional[Fraction] = documented("The toy release's epsilon on (D, A_1).", default=None)


@dataclass(frozen=True)
class ToyKind:
    name: str = "toy-release"
    spec_type: type[ToySpec] = ToySpec
    frameworks: tuple[str, ...] = ("semi-dp",)
    reports_sensitivity: bool = False

    def default_framework(self, spec: Spec) -> str:
        return "semi-dp"

    def semi_adjacent_method(self, spec: Spec) -> str:
        """``auto``: the closed form when exact, else the exact search at the table."""
        return "auto"

    def validate(self, spec: Spec) -> list[Problem]:
        m = spec.mechanism
        if isinstance(m, ToySpec) and (m.toy_epsilon is None or not m.toy_epsilon > 0):
            return [Problem("mechanism.toy_epsilon", "the toy kind needs toy_epsilon > 0")]
        return []

    def run(self, ctx: Context) -> KindResult:
        m = ctx.mechanism(ToySpec)
        assert m.toy_epsilon is not None
        advertised = PureDP(float(m.toy_epsilon), ctx.relation)
        return KindResult(
            advertised=advertised,
            effective=semi_dp(advertised, ctx.invariant, ctx.a.value),
            checks=(Check("toy-check", Verified("the toy kind ran")),),
            sections=(JsonSection("toy", {"epsilon": float(m.toy_epsilon)}),),
        )


SPEC = """
version = 1
name = "toy"
[data]
features = [{ name = "state", levels = 4 }]
[invariant]
kind = "margins"
margins = [["state"]]
[mechanism]
kind = "toy-release"
toy_epsilon = 0.5
[claim]
framework = "semi-dp"
guarantee = { epsilon = CLAIM }
"""


@pytest.fixture
def toy() -> Iterator[ToyKind]:
    kind = ToyKind()
    register(kind)
    yield kind
    unregister(kind.name)


def _write(tmp_path: Path, text: str) -> str:
    p = tmp_path / "toy.toml"
    p.write_text(text, encoding="utf-8")
    return str(p)


def test_toy_kind_runs_end_to_end_through_the_cli(
    toy: ToyKind, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["audit", _write(tmp_path, SPEC.replace("CLAIM", "1.0")), "--json"]) == 0
    r = json.loads(capsys.readouterr().out)
    assert r["toy"] == {"epsilon": 0.5}
    assert r["semi_adjacent_parameter"]["value"] == 2  # replace-one, state totals fixed
    assert r["effective"]["epsilon"] == 1.0 and r["effective"]["framework"] == "semi-dp"  # 2 x 0.5 [CA24, Prop. 15]
    assert [c["name"] for c in r["checks"]] == [
        "semi-adjacent-parameter",
        "toy-check",
        "conversions-certified",
        "claim",
    ]
    assert r["verdict"] == "holds"
    assert main(["audit", _write(tmp_path, SPEC.replace("CLAIM", "0.9"))]) == 1  # 1.0 > 0.9: refuted


def test_toy_kind_is_validated_and_in_the_schema(
    toy: ToyKind, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = SPEC.replace("CLAIM", "1.0").replace("toy_epsilon = 0.5", "toy_epsilon = -1")
    assert main(["audit", _write(tmp_path, bad)]) == 2
    assert "mechanism.toy_epsilon: the toy kind needs toy_epsilon > 0" in capsys.readouterr().err
    typo = SPEC.replace("CLAIM", "1.0").replace("toy_epsilon", "toy_epsilom")
    assert main(["audit", _write(tmp_path, typo)]) == 2
    assert "did you mean 'toy_epsilon'?" in capsys.readouterr().err
    variants = schema()["properties"]["mechanism"]["oneOf"]
    toy_schema = next(v for v in variants if v["properties"]["kind"].get("const") == "toy-release")
    assert set(toy_schema["properties"]) == {"kind", "toy_epsilon"}


def test_an_unregistered_kind_is_named_with_a_suggestion(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["audit", _write(tmp_path, SPEC.replace("CLAIM", "1.0").replace("toy-release", "k-norn"))]) == 2
    assert "mechanism.kind: 'k-norn' is not one of" in capsys.readouterr().err
