"""``semidp schema`` lists what the loader accepts: every kind's ``[mechanism]`` and every section plugin's table.

Issue 23, item 4: ``[postprocess]`` is a registered section plugin whose table its plugin declares (not a field
of :class:`~semidp.verify.spec.Spec`); the schema is generated from the registries, so a plugin registered
later (the toy ``[toy_repeat]``) appears in it, and disappears with it.
"""

from __future__ import annotations

import dataclasses

import pytest

from semidp.accountant.core.errors import InvalidSpec
from semidp.verify.load import loads
from semidp.verify.postprocess_section import POSTPROCESS, PostprocessSpec, postprocess_of
from semidp.verify.registry import kind_names, section_plugins
from semidp.verify.schema import schema
from semidp.verify.spec import Spec, public_fields
from tests.toy_kind import ToyKind, ToyRepeatSection, registered

GAUSSIAN = """
version = 1
name = "pp"
[data]
features = [{ name = "a", levels = 2 }, { name = "b", levels = 2 }]
table = [3, 1, 0, 2]
[invariant]
kind = "total"
[mechanism]
kind = "gaussian"
scale = 2.0
[postprocess]
kind = "project"
draws = 50
"""


def test_every_kind_and_every_section_plugin_table_is_in_the_schema() -> None:
    s = schema()
    consts = [v["properties"]["kind"]["const"] for v in s["properties"]["mechanism"]["oneOf"]]
    assert sorted(consts) == sorted(kind_names())
    tables = {p.name for p in section_plugins() if p.table is not None}
    assert "postprocess" in tables
    assert tables <= set(s["properties"])
    pp = s["properties"]["postprocess"]
    assert pp["required"] == ["kind"] and pp["additionalProperties"] is False
    assert pp["properties"]["kind"]["enum"] == ["project-nonneg", "project"]
    assert pp["properties"]["draws"]["type"] == "integer"


def test_a_registered_section_plugin_table_appears_in_the_schema_and_leaves_with_it() -> None:
    assert "toy_repeat" not in schema()["properties"]
    with registered(ToyKind(), ToyRepeatSection()):
        toy = schema()["properties"]["toy_repeat"]
        assert set(toy["properties"]) == {"times"} and toy["properties"]["times"]["type"] == "integer"
    assert "toy_repeat" not in schema()["properties"]


def test_postprocess_is_held_by_its_plugin_not_by_spec() -> None:
    assert "postprocess" not in {f.name for f in public_fields(Spec)}
    assert POSTPROCESS.table is PostprocessSpec
    spec = loads(GAUSSIAN)
    assert postprocess_of(spec) == PostprocessSpec(kind="project", draws=50)
    assert spec.plugin_table("postprocess") == PostprocessSpec(kind="project", draws=50)
    assert postprocess_of(loads(GAUSSIAN.split("[postprocess]")[0])) is None
    changed = spec.with_plugin_table("postprocess", dataclasses.replace(PostprocessSpec("project"), draws=7))
    assert postprocess_of(changed) == PostprocessSpec("project", 7)
    assert len(changed.plugin_tables) == len(spec.plugin_tables)


def test_postprocess_problems_keep_their_keys() -> None:
    with pytest.raises(InvalidSpec) as e:
        loads(GAUSSIAN.replace("draws = 50", "draws = 1\ndraw = 3").replace('"project"', '"projekt"'))
    text = str(e.value)
    assert "postprocess.kind: 'projekt' is not one of ['project-nonneg', 'project']; did you mean 'project'?" in text
    assert "postprocess.draw: unknown key; did you mean 'draws'?" in text
