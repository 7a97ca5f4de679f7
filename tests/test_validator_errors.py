"""A validator that raises is an internal error, never a silently dropped problem (issue 23, item 3).

``load.validate`` used to swallow ``TypeError`` and ``AttributeError`` from every validator, so a bug in a
kind's validation dropped that kind's problems and the spec ran unchecked. Now the exception surfaces as a
:class:`~semidp.verify.load.ValidatorError` naming the validator (exit 2, ``internal error``; ``--debug``
prints the traceback with the validator's own exception); only a section that failed to parse (already
listed as a problem) may make a validator raise quietly.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from semidp.verify.cli import main
from semidp.verify.load import ValidatorError, loads
from semidp.verify.registry import Kind, KindInfo, Problem
from semidp.verify.spec import Spec
from tests.toy_kind import TOY_SPEC, ToyKind, ToySpec, registered


@dataclass(frozen=True)
class BuggyKind(ToyKind):
    """The toy kind under another name, with a bug in its validator."""

    info: KindInfo = KindInfo("buggy-release", ToySpec, frameworks=("semi-dp",))

    def validate(self, spec: Spec) -> list[Problem]:
        m = spec.mechanism
        assert isinstance(m, ToySpec)
        if m.toy_epsilon is not None and m.toy_epsilon > 1:  # the bug: a typo'd attribute
            return [Problem("mechanism.toy_epsilon", f"too large: {m.epsilon_typo}")]  # type: ignore[attr-defined]
        return []


SPEC = TOY_SPEC.replace('name = "toy"', 'name = "buggy"').replace("toy-release", "buggy-release")


@pytest.fixture
def buggy() -> Iterator[Kind]:
    with registered(BuggyKind()) as kind:
        yield kind


def test_a_validator_that_raises_is_an_internal_error_naming_it(buggy: Kind) -> None:
    assert loads(SPEC.replace("EPS", "0.5")).name == "buggy"  # the validator's happy path
    with pytest.raises(ValidatorError, match="internal error in the 'buggy-release' kind validator: AttributeError"):
        loads(SPEC.replace("EPS", "2"))


def test_through_the_cli_exit_2_and_the_traceback_under_debug(
    buggy: Kind, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "buggy.toml"
    path.write_text(SPEC.replace("EPS", "2"), encoding="utf-8")
    assert main(["audit", str(path)]) == 2
    err = capsys.readouterr().err
    assert "internal error" in err and "'buggy-release' kind validator" in err and "--debug" in err
    assert "Traceback" not in err
    assert main(["audit", str(path), "--debug"]) == 2
    err = capsys.readouterr().err
    assert "Traceback" in err and "epsilon_typo" in err  # the validator's own exception, chained


def test_a_section_that_failed_to_parse_is_reported_as_its_problem(buggy: Kind) -> None:
    """The loader leaves a section that failed to parse out; validators reading it stay quiet, the problem is
    listed (a spec with a broken [data] is rejected for that, not as an internal error)."""
    broken = SPEC.replace("EPS", "2").replace('features = [{ name = "state", levels = 4 }]', "features = 3")
    with pytest.raises(ValueError, match="data.features") as e:
        loads(broken)
    assert not isinstance(e.value, ValidatorError)
