"""Workload geography, recodes and defaults (Step 15.2-15.4): no ordering of the geography may lower a guarantee.

The trap (issue 25): a names-only ``data.geography`` written fine to coarse, the order of the Bureau's files,
made the finer levels' ``total`` count as fixed by the State invariant and lowered the query-level Semi-DP
figure with exit 0 or 1 and no warning (shipped P.L. 94-171 persons spec reversed: rho 4.1078 and pld epsilon
21.82 at delta = 1e-10 instead of rho 6.917 and 29.9957). Contract: specs/README.md, "Measurement workloads".
"""

from __future__ import annotations

import contextlib
import io
import itertools
import json
import re
from fractions import Fraction
from pathlib import Path

import pytest

from semidp.accountant.core.errors import InvalidSpec
from semidp.accountant.workloads.accounting import workload_rho
from semidp.verify.cli import main
from semidp.verify.load import load, loads
from semidp.verify.spec import BinsRecode, MapRecode
from semidp.verify.workload_spec import read_measurements, recode_map

ROOT = Path(__file__).resolve().parents[1]
PERSONS = ROOT / "specs" / "census-2020-pl94-persons-us.toml"
PERSONS_CSV = ROOT / "specs" / "census-2020-pl94-persons-us.csv"
README = ROOT / "specs" / "README.md"
GEO = ["US", "State", "County", "Tract", "Block_Group", "Block"]
NAMES_ONLY = 'geography = ["US", "State", "County", "Tract", "Block_Group", "Block"]'


def _run(spec: Path, *args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["audit", str(spec), "--quiet", *args])
    return code, out.getvalue(), err.getvalue()


def _persons(tmp_path: Path, old: str, new: str) -> Path:
    text = PERSONS.read_text()
    assert old in text
    (tmp_path / PERSONS_CSV.name).write_text(PERSONS_CSV.read_text())
    spec = tmp_path / "persons.toml"
    spec.write_text(text.replace(old, new))
    return spec


# --------------------------------------------------------------------------------------
# 15.3: the trap, reproduced on the shipped persons spec
# --------------------------------------------------------------------------------------


def test_reversed_persons_geography_is_refused(tmp_path: Path) -> None:
    """Written fine to coarse, the shipped spec would count the Block..County totals as fixed: exit 2 naming
    data.geography and the rows, never a lower figure."""
    spec = _persons(tmp_path, NAMES_ONLY, f"geography = {json.dumps(GEO[::-1])}")
    code, out, err = _run(spec, "--json")
    assert code == 2 and out == "" and "Traceback" not in err
    assert "data.geography" in err and "listed before 'State' (a level of invariant.margins)" in err
    for line, label in ((23, "County: total"), (34, "Tract: total"), (45, "Block_Group: total"), (56, "Block: total")):
        assert f"{label} (line {line})" in err
    assert "units" in err  # says how to fix it


def test_reversed_unit_counts_are_refused(tmp_path: Path) -> None:
    """With unit counts the order is checked: fine to coarse, the second level has fewer units than the first."""
    counts = (1, 51, 3143, 84414, 239780, 8132968)  # 2020 tallies, 50 states + DC; they check the order only
    rev = ", ".join(f'{{ name = "{g}", units = {u} }}' for g, u in zip(GEO[::-1], counts[::-1]))
    with pytest.raises(InvalidSpec) as e:
        load(_persons(tmp_path, NAMES_ONLY, f"geography = [{rev}]"))
    assert any(p.startswith("data.geography[1].units: 'Block_Group' has 239780 units") for p in e.value.problems)
    assert len(e.value.problems) == 5  # one per level that follows a finer one


def _toy(tmp_path: Path, geography: str, csv_rows: list[str], extra_data: str = "") -> Path:
    """A small workload: feature f (4 levels), geography US > State > County > Block, state totals exact."""
    (tmp_path / "toy.csv").write_text("geolevel,query,rho\n" + "\n".join(csv_rows) + "\n")
    spec = tmp_path / "toy.toml"
    spec.write_text(
        f"""version = 1
name = "toy"
[data]
features = [{{ name = "f", levels = 4 }}]
geography = {geography}
adjacency = "replace-one"
{extra_data}
[invariant]
kind = "margins"
margins = [["State"]]
[mechanism]
kind = "published"
noise = "discrete-gaussian"
measurements = "toy.csv"
"""
    )
    return spec


TOY_GEO = (("US", 1), ("State", 3), ("County", 7), ("Block", 40))
TOY_ROWS = [
    f"{g},{q},{Fraction(i + 1, 10)}" for i, (g, q) in enumerate(itertools.product(dict(TOY_GEO), ("total", "f")))
]


def _semi_rho(spec: Path) -> Fraction:
    s = load(spec)
    ms, probs = read_measurements(s, "toy.csv", "discrete-gaussian")
    assert not probs
    return workload_rho([m.accountant_value() for m in ms], "discrete-gaussian", semi_radius=2)


def _units(order: tuple[tuple[str, int], ...]) -> str:
    return "[" + ", ".join(f'{{ name = "{g}", units = {u} }}' for g, u in order) + "]"


def test_no_ordering_of_the_geography_lowers_the_guarantee(tmp_path: Path) -> None:
    """Every ordering of the four levels, as names and as { name, units }: refused, or a query-level rho at least
    the true one (US and State totals fixed, nothing else). The pre-fix code gave every reversed order less."""
    truth = _semi_rho(_toy(tmp_path, _units(TOY_GEO), TOY_ROWS))
    sigma = {row.split(",")[0] + ": " + row.split(",")[1]: 1 / Fraction(row.split(",")[2]) for row in TOY_ROWS}
    assert truth == sum(Fraction(4) / s for lab, s in sigma.items() if lab not in ("US: total", "State: total"))
    accepted = 0
    for order in itertools.permutations(TOY_GEO):
        for form in (_units(order), json.dumps([g for g, _ in order])):
            try:
                rho = _semi_rho(_toy(tmp_path, form, TOY_ROWS))
            except InvalidSpec as e:
                assert all(p.startswith("data.geography") for p in e.problems), e.problems
                continue
            accepted += 1
            assert rho >= truth, (form, rho, truth)
    # names only: accepted exactly when State comes first (then only State: total counts as fixed, conservatively)
    assert accepted == 1 + 6


def test_names_only_geography_is_accepted_when_the_order_decides_nothing(tmp_path: Path) -> None:
    """Without a coarser-than-invariant measurement, names alone give the same figure as unit counts."""
    rows = [r for r in TOY_ROWS if not r.startswith("US,total")]
    by_units = _semi_rho(_toy(tmp_path, _units(TOY_GEO), rows))
    assert _semi_rho(_toy(tmp_path, json.dumps([g for g, _ in TOY_GEO]), rows)) == by_units


@pytest.mark.parametrize(
    ("geography", "expected"),
    [
        ('[{ name = "US", units = 1 }, "State", "County", "Block"]', "data.geography: give every level as"),
        ('[{ name = "US", units = 0 }, { name = "State", units = 3 }]', "data.geography[0].units: must be >= 1"),
        ('[{ name = "US" }, { name = "State", units = 3 }]', "data.geography[0].units: missing (required)"),
        ('[{ name = "US", units = 1, unit = 2 }]', "data.geography[0].unit: unknown key; did you mean 'units'?"),
        ("[1, 2]", "data.geography[0]: expected a "),  # a string (or str) or a table, got int 1
    ],
)
def test_bad_geography_tables_name_the_key(tmp_path: Path, geography: str, expected: str) -> None:
    with pytest.raises(InvalidSpec) as e:
        load(_toy(tmp_path, geography, ["State,total,1"]))
    assert any(p.startswith(expected) for p in e.value.problems), e.value.problems


def test_the_text_report_says_which_measurements_are_fixed_and_why(tmp_path: Path) -> None:
    code, out, err = _run(_toy(tmp_path, _units(TOY_GEO), TOY_ROWS))
    assert code == 0, err
    lines = out.splitlines()
    i = next(i for i, line in enumerate(lines) if line.startswith("workload:"))
    assert lines[i].endswith("fixed by the invariant: US: total, State: total")
    assert lines[i + 1] == (
        "  why fixed: US: total: its cells are unions of invariant cells "
        "(level US is coarser than State (1 <= 3 units) of the margin (State))"
    )
    assert (
        lines[i + 2]
        == "  why fixed: State: total: its cells are unions of invariant cells (level State is in the margin (State))"
    )
    code, out, _ = _run(_toy(tmp_path, _units(TOY_GEO), TOY_ROWS), "--json")
    why = json.loads(out)["workload"]["fixed_why"]
    assert list(why) == ["US: total", "State: total"]


# --------------------------------------------------------------------------------------
# 15.2: recodes by cut points
# --------------------------------------------------------------------------------------


def test_bins_are_cut_points() -> None:
    assert recode_map(BinsRecode("agecat", "age", bins=(18, 65)), 116) == (0,) * 18 + (1,) * 47 + (2,) * 51
    assert recode_map(BinsRecode("r", "f", bins=(1,)), 3) == (0, 1, 1)
    assert recode_map(MapRecode("r", "f", map=(2, 0, 1)), 3) == (2, 0, 1)


def test_a_bins_recode_gives_the_same_report_as_its_map(tmp_path: Path) -> None:
    """hhinstlevels as bins = [1, 5] is the shipped map [0, 1, 1, 1, 1, 2, 2, 2]: the same figures."""
    shipped = 'recodes = [{ name = "hhinstlevels", of = "hhgq", map = [0, 1, 1, 1, 1, 2, 2, 2] }]'
    spec = _persons(tmp_path, shipped, 'recodes = [{ name = "hhinstlevels", of = "hhgq", bins = [1, 5] }]')
    s, base = load(spec), load(PERSONS)
    assert recode_map(s.data.recodes[0], 8) == base.data.recodes[0].map
    ms, _ = read_measurements(s, PERSONS_CSV.name, "discrete-gaussian")
    ms0, _ = read_measurements(base, PERSONS_CSV.name, "discrete-gaussian")
    assert [(m.label, m.splits, m.scale, m.fixed) for m in ms] == [(m.label, m.splits, m.scale, m.fixed) for m in ms0]


@pytest.mark.parametrize(
    ("recode", "expected"),
    [
        ("bins = [2, 1]", "data.recodes[0].bins[1]: 1 is not greater than the cut before it (2)"),
        ("bins = [2, 2]", "data.recodes[0].bins[1]: 2 is not greater than the cut before it (2)"),
        ("bins = [0]", "data.recodes[0].bins[0]: 0 is not a cut of feature 'f' (levels 0..3)"),
        ("bins = [1, 4]", "data.recodes[0].bins[1]: 4 is not a cut of feature 'f' (levels 0..3)"),
        ("bins = [-1]", "data.recodes[0].bins[0]: -1 is not a cut"),
        ("bins = []", "data.recodes[0].bins: needs at least one cut point"),
        ("bins = [1.5]", "data.recodes[0].bins[0]: expected an integer, got 1.5"),
        ("bins = [1], map = [0, 0, 1, 1]", "data.recodes[0]: give exactly one of map"),
        ("", "data.recodes[0]: give exactly one of map (a new level per level) or bins (cut points); got neither"),
        ("map = [0, 1]", "data.recodes[0].map: has 2 entries; feature 'f' has 4 levels"),
    ],
)
def test_bad_bins_are_located(tmp_path: Path, recode: str, expected: str) -> None:
    sep = ", " if recode else ""
    extra = f'recodes = [{{ name = "g", of = "f"{sep}{recode} }}]'
    with pytest.raises(InvalidSpec) as e:
        load(_toy(tmp_path, _units(TOY_GEO), ["State,g,1"], extra))
    assert any(p.startswith(expected) for p in e.value.problems), e.value.problems


# --------------------------------------------------------------------------------------
# 15.4: the contract's defaults are the loader's
# --------------------------------------------------------------------------------------


def test_workload_without_adjacency_exits_2_naming_it(tmp_path: Path) -> None:
    code, _, err = _run(_persons(tmp_path, 'adjacency = "replace-one"\n', ""))
    assert code == 2 and "data.adjacency: required with mechanism.measurements" in err and "Traceback" not in err


def _documented_workload_keys() -> dict[str, str]:
    """``{key: meaning}`` of the rows of the workload keys table (specs/README.md, "Measurement workloads")."""
    text = README.read_text()
    section = text[text.index("### Measurement workloads") :]
    section = section[: section.index("\n#### ")]
    rows = re.findall(r"^\| `(data\.[a-z_]+)` \| [^|]+ \| (.+) \|$", section, flags=re.M)
    return dict(rows)


def test_every_documented_workload_default_is_the_loaders(tmp_path: Path) -> None:
    """Each row of the workload keys table says "Required with `measurements`" or "Default: ..."; removing the key
    from a valid workload must then exit 2 naming it, or load with that default."""
    keys = _documented_workload_keys()
    assert set(keys) == {"data.geography", "data.recodes", "data.adjacency"}
    base = PERSONS.read_text()
    lines = {k: next(line for line in base.splitlines() if line.startswith(k.split(".")[1] + " =")) for k in keys}
    for key, meaning in keys.items():
        text = base.replace(lines[key] + "\n", "")
        if key == "data.recodes":  # the queries name the recode: drop those rows with it
            (tmp_path / PERSONS_CSV.name).write_text(
                "".join(r for r in PERSONS_CSV.read_text().splitlines(True) if "hhinstlevels" not in r)
            )
        else:
            (tmp_path / PERSONS_CSV.name).write_text(PERSONS_CSV.read_text())
        if meaning.startswith("Required with `measurements`"):
            with pytest.raises(InvalidSpec) as e:
                loads(text, str(tmp_path / "w.toml"))
            assert any(p.startswith(key + ":") for p in e.value.problems), (key, e.value.problems)
        else:
            m = re.match(r"Default: (none|`[^`]+`)\.", meaning)
            assert m, f"{key}: the contract states neither 'Required' nor 'Default: ...'"
            value = getattr(loads(text, str(tmp_path / "w.toml")).data, key.split(".")[1])
            assert value == (None if m.group(1) == "none" else m.group(1).strip("`"))
    # outside workloads, adjacency defaults as the row says
    default = re.search(r"other specs default to ([a-z-]+)", keys["data.adjacency"])
    assert default is not None
    plain = (ROOT / "specs" / "table-3x3-margins.toml").read_text()
    assert re.search(r"^adjacency = .*\n", plain, flags=re.M)
    s = loads(re.sub(r"^adjacency = .*\n", "", plain, flags=re.M))
    assert s.data.adjacency == default.group(1)


def test_the_text_report_caps_the_reasons(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from semidp.verify import workload_report

    monkeypatch.setattr(workload_report, "FIXED_SHOWN", 1)
    _, out, _ = _run(_toy(tmp_path, _units(TOY_GEO), TOY_ROWS))
    assert out.count("  why fixed: ") == 2 and "  why fixed: 1 more, see fixed_why in the JSON" in out
