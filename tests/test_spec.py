"""Spec loading (contract v1): validation, did-you-mean, all problems at once, schema."""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import pytest

from semidp.accountant import InvalidSpec
from semidp.verify.load import load, loads
from semidp.verify.schema import schema

ROOT = Path(__file__).resolve().parents[1]

MINIMAL = """
version = 1
name = "toy"
[data]
features = [{ name = "state", levels = 3 }]
[invariant]
kind = "margins"
margins = [["state"]]
[mechanism]
kind = "published"
guarantee = { zcdp = 0.5 }
"""


def test_shipped_specs_load() -> None:
    for path in sorted((ROOT / "specs").glob("*.toml")):
        spec = load(path)
        assert spec.name == path.stem
        assert len(spec.sha256) == 64


def test_defaults_and_exact_rationals() -> None:
    s = loads(MINIMAL)
    assert s.data.adjacency == "replace-one"
    assert s.report.deltas == (Fraction(1, 10**10),)
    das = load(ROOT / "specs" / "census-2020-persons-das.toml")
    assert das.mechanism.guarantee is not None
    assert das.mechanism.guarantee.zcdp == Fraction(542, 339) ** 2


def test_unknown_key_suggests_and_all_problems_reported() -> None:
    bad = (
        MINIMAL.replace("[data]", "[data]\nadjacncy = 'replace-one'")
        .replace('kind = "margins"', 'kind = "margin"')
        .replace('name = "toy"', 'name = "Toy"')
    )
    with pytest.raises(InvalidSpec) as err:
        loads(bad, "bad.toml")
    text = str(err.value)
    assert "data.adjacncy: unknown key; did you mean 'adjacency'?" in text
    assert "invariant.kind" in text and "did you mean 'margins'?" in text
    assert "name: 'Toy' must match" in text
    assert err.value.path == "bad.toml" and len(err.value.problems) == 3


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (("guarantee = { zcdp = 0.5 }", "guarantee = { zcdp = 0.5, mu = 1 }"), "exactly one form"),
        (("guarantee = { zcdp = 0.5 }", "guarantee = { zcdp = -0.5 }"), "must be >= 0"),
        (("guarantee = { zcdp = 0.5 }", "guarantee = { zcdp = 'abc' }"), "not a finite number"),
        (("guarantee = { zcdp = 0.5 }", "guarantee = { epsilon = 1, delta = 2 }"), "in [0, 1]"),
        (('margins = [["state"]]', 'margins = [["stat"]]'), "did you mean 'state'?"),
        (('margins = [["state"]]', ""), "invariant.margins: required"),
        (("levels = 3 }]", "levels = 3 }]\ntable = [1, 2]"), "has 2 counts"),
        (("version = 1", "version = 2"), "version: must be 1"),
        (('[mechanism]\nkind = "published"', '[mechanism]\nkind = "publshed"'), "did you mean 'published'?"),
        (("[data]", "[data]\nrecords = 'ten'"), "expected an integer"),
    ],
)
def test_invalid_specs_name_the_key(edit: tuple[str, str], message: str) -> None:
    with pytest.raises(InvalidSpec, match=None) as err:
        loads(MINIMAL.replace(*edit))
    assert message in str(err.value)


def test_not_toml_and_missing_file() -> None:
    with pytest.raises(InvalidSpec, match="not valid TOML"):
        loads("version = = 1")
    with pytest.raises(InvalidSpec, match="cannot read"):
        load("/nonexistent/spec.toml")


def test_committed_schema_is_generated() -> None:
    committed = json.loads((ROOT / "specs" / "schema.json").read_text())
    assert committed == schema(), "regenerate with: semidp schema > specs/schema.json"
    invariant = committed["properties"]["invariant"]["oneOf"]  # a tagged union: one object per kind, with its key
    assert [v["properties"]["kind"]["enum"] for v in invariant] == [
        ["none"],
        ["total"],
        ["margins"],
        ["linear"],
        ["counting"],
    ]
    assert [v.get("required") for v in invariant] == [
        ["kind"],
        ["kind"],
        ["kind", "margins"],
        ["kind", "matrix"],
        ["kind", "sets"],
    ]


def test_specs_readme_documents_every_key_of_every_kind() -> None:
    """specs/README.md is the contract: each registered kind and each of its keys appears in it."""
    import dataclasses as dc

    from semidp.verify.registry import kinds

    text = (ROOT / "specs" / "README.md").read_text(encoding="utf-8")
    for kind in kinds():
        assert f"`{kind.name}`" in text, kind.name
        for f in dc.fields(kind.spec_type):
            assert f"`{f.name}`" in text, (kind.name, f.name)
