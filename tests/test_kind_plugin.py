"""A new mechanism kind, with its own section and options, is one module and one registry line (issue 23, R16).

The toy kind and its ``[toy_repeat]`` section plugin live only in :mod:`tests.toy_kind`: a spec dataclass with
its own key, a validation, the frameworks it evaluates, a run step reading the run options, and a section with
its own table and problems. Registering them is the only other thing needed for the loader, the schema, the
runner and the CLI to handle them end to end.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from semidp.verify.cli import main
from semidp.verify.registry import SECTIONS, Kind
from semidp.verify.schema import schema
from tests.toy_kind import TOY_SPEC, ToyKind, ToyRepeatSection, registered

SPEC = (
    TOY_SPEC.replace("EPS", "0.5")
    + """
[claim]
framework = "semi-dp"
guarantee = { epsilon = CLAIM }
"""
)


@pytest.fixture
def toy() -> Iterator[Kind]:
    with registered(ToyKind(), ToyRepeatSection()) as kind:
        yield kind


def _write(tmp_path: Path, text: str) -> str:
    p = tmp_path / "toy.toml"
    p.write_text(text, encoding="utf-8")
    return str(p)


def test_toy_kind_runs_end_to_end_through_the_cli(
    toy: Kind, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["audit", _write(tmp_path, SPEC.replace("CLAIM", "1.0")), "--json"]) == 0
    r = json.loads(capsys.readouterr().out)
    assert r["toy"] == {"epsilon": 0.5, "times": 1, "allow_code": False}
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


def test_toy_kind_is_validated_and_in_the_schema(toy: Kind, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
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


def test_toy_section_plugin_and_run_options_end_to_end_through_the_cli(
    toy: Kind, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The toy section's own table reaches the kind (3 releases: 3 x 0.5 = 1.5 on (D, A_1), 2 x 1.5 = 3.0 at
    a(t) = 2), and so does ``--allow-code`` (one typed options value, threaded by nobody in between)."""
    text = SPEC.replace("CLAIM", "3.0") + "[toy_repeat]\ntimes = 3\n"
    assert main(["audit", _write(tmp_path, text), "--json", "--allow-code"]) == 0
    r = json.loads(capsys.readouterr().out)
    assert r["toy"] == {"epsilon": 0.5, "times": 3, "allow_code": True}
    assert r["advertised"]["epsilon"] == 1.5 and r["effective"]["epsilon"] == 3.0
    assert main(["audit", _write(tmp_path, SPEC.replace("CLAIM", "2.9") + "[toy_repeat]\ntimes = 3\n")]) == 1
    capsys.readouterr()
    # its problems are named by key, all at once with the kind's own
    bad = SPEC.replace("CLAIM", "1.0").replace("toy_epsilon = 0.5", "toy_epsilon = -1") + "[toy_repeat]\ntimes = 0\n"
    assert main(["audit", _write(tmp_path, bad)]) == 2
    err = capsys.readouterr().err
    assert "toy_repeat.times: must be >= 1, got 0" in err and "mechanism.toy_epsilon" in err
    typo = SPEC.replace("CLAIM", "1.0") + "[toy_repeat]\ntimez = 3\n"
    assert main(["audit", _write(tmp_path, typo)]) == 2
    assert "toy_repeat.timez: unknown key; did you mean 'times'?" in capsys.readouterr().err


def test_a_section_plugin_table_is_refused_by_a_kind_that_does_not_take_it(
    toy: Kind, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    published = SPEC.replace("CLAIM", "1.0").replace(
        'kind = "toy-release"\ntoy_epsilon = 0.5', 'kind = "published"\nguarantee = { epsilon = 0.5 }'
    )
    assert main(["audit", _write(tmp_path, published + "[toy_repeat]\ntimes = 2\n")]) == 2
    assert "toy_repeat: mechanism.kind = 'published' does not take [toy_repeat]" in capsys.readouterr().err


def test_without_the_section_plugin_its_table_is_an_unknown_key(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with registered(ToyKind()):
        assert "toy_repeat" not in SECTIONS
        assert main(["audit", _write(tmp_path, SPEC.replace("CLAIM", "1.0") + "[toy_repeat]\ntimes = 2\n")]) == 2
    assert "toy_repeat: unknown key" in capsys.readouterr().err
