"""Measurement files as users write them: odd but legal layouts, and values the engine cannot grid.

The contract (specs/README.md, "Measurement workloads"): a bad file, row or cell exits 2 naming the file,
line and column; a byte-order mark, CRLF line ends, blank lines and ``#`` comment lines are accepted;
``detailed`` and the query naming every feature are the same histogram (one may appear once); a noise
scale so extreme that the PLD cannot be gridded leaves the PLD out with the reason (exit 3 for a claim
it cannot decide) while the exact rho and its zCDP conversions are still reported. The base spec is
the shipped housing-units release (specs/census-2020-pl94-units-us.toml).
"""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path
from typing import Any

from semidp.accountant.core.budget import Budget
from semidp.verify.cli import main

ROOT = Path(__file__).resolve().parents[1]
SPEC = ROOT / "specs" / "census-2020-pl94-units-us.toml"
CSV = ROOT / "specs" / "census-2020-pl94-units-us.csv"
CSV_NAME = "census-2020-pl94-units-us.csv"
GEO = ["US", "State", "County", "Tract", "Block_Group", "Block"]


def _run(tmp_path: Path, csv_text: str, *, spec_text: str | None = None, json_out: bool = True) -> tuple[int, str]:
    (tmp_path / CSV_NAME).write_text(csv_text, encoding="utf-8", newline="")
    spec = tmp_path / "spec.toml"
    spec.write_text(SPEC.read_text() if spec_text is None else spec_text)
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["audit", str(spec), "--quiet", *(["--json"] if json_out else [])])
    return code, out.getvalue() + err.getvalue()


def _report(text: str) -> dict[str, Any]:
    report: dict[str, Any] = json.loads(text)
    return report


def _with_us(value: str) -> str:
    lines = CSV.read_text().splitlines()
    return "\n".join(f"US,detailed,{value}" if line.startswith("US,") else line for line in lines) + "\n"


def test_bom_crlf_blank_and_comment_lines_give_the_same_report(tmp_path: Path) -> None:
    code, clean = _run(tmp_path, CSV.read_text())
    lines = CSV.read_text().splitlines()
    odd = (
        "\ufeff# units, US (production settings)\r\n"
        + "\r\n".join([lines[0], "", "# the levels", *lines[1:]])
        + "\r\n\r\n"
    )
    code2, text = _run(tmp_path, odd)
    assert code == code2 == 1
    a, b = _report(clean), _report(text)
    for side in ("advertised", "effective"):
        assert a[side]["rho_exact"] == b[side]["rho_exact"]
        assert a[side]["epsilon_delta"] == b[side]["epsilon_delta"]
    assert [m["line"] for m in b["measurements"]] == [5, 6, 7, 8, 9, 10]  # the file's own line numbers


def test_line_numbers_count_comment_lines(tmp_path: Path) -> None:
    lines = CSV.read_text().splitlines()
    text = "\n".join(["# header next", lines[0], lines[1], "County,detailed,abc", *lines[4:]]) + "\n"
    code, out = _run(tmp_path, text, json_out=False)
    assert code == 2
    assert f"{CSV_NAME}, line 4, column rho: 'abc' is not a number" in out


def test_a_rho_beyond_the_float_range_is_a_located_input_error(tmp_path: Path) -> None:
    code, out = _run(tmp_path, _with_us("1e400"), json_out=False)
    assert code == 2
    assert f"{CSV_NAME}, line 2, column rho: '1e400' is out of range" in out and "Traceback" not in out


def test_detailed_and_the_query_naming_every_feature_are_one_histogram(tmp_path: Path) -> None:
    code, out = _run(tmp_path, CSV.read_text() + "US,occupancy,1/1000\n", json_out=False)
    assert code == 2
    assert f"{CSV_NAME}, line 8, column query: US 'occupancy' repeats line 2" in out


def _pld(r: dict[str, Any], side: str) -> dict[str, Any]:
    entry: dict[str, Any] = next(e for e in r[side]["epsilon_delta"] if e["method"] == "pld")
    return entry


def test_an_extreme_noise_scale_is_set_aside_and_bounded_through_its_guarantee(tmp_path: Path) -> None:
    """sigma^2 = 1e12 beside sigma^2 ~ 30: no loss grid holds both. The lower end composes the others (adding a
    mechanism never lowers a profile), the upper end adds the extreme one's (eps0, 1e-20)-DP dominating pair."""
    code, text = _run(tmp_path, _with_us("1e-12"))
    r = _report(text)
    _, without = _run(tmp_path, "\n".join(line for line in CSV.read_text().splitlines() if not line.startswith("US,")))
    w = _report(without)
    for side in ("advertised", "effective"):
        pld = _pld(r, side)
        assert pld["set_aside"] == [2] and "pld_unavailable" not in r[side]
        assert pld["bracket"]["lower"] == _pld(w, side)["bracket"]["lower"]  # the kept measurements alone
        # rho = 1e-12 costs eps0 = rho + 2 sqrt(rho log 1e20) < 1.4e-5 on top of the kept measurements
        assert _pld(w, side)["epsilon"] <= pld["epsilon"] <= _pld(w, side)["epsilon"] + 1e-4
    assert code == 1  # refuted from the lower end, as without the extreme row
    assert "sets aside the measurement(s) at line(s) 2" in _run(tmp_path, _with_us("1e-12"), json_out=False)[1]


def test_a_tiny_noise_scale_is_set_aside_not_an_out_of_memory(tmp_path: Path) -> None:
    """sigma^2 = 1e-8: losses of +-5e7 next to ~0.2 (the engine checks sizes before allocating); the upper end
    is its zCDP bound, rho + 2 sqrt(rho log 1e20) for rho = 2e8 (two cells shift 1: 2/(2 sigma^2))."""
    code, text = _run(tmp_path, _with_us("1e8"))
    r = _report(text)
    pld = _pld(r, "advertised")
    assert pld["set_aside"] == [2] and code == 1
    assert 1e8 < pld["epsilon"] < 1.002e8 and pld["bracket"]["lower"] < 3  # nothing proven about the extreme row


def test_rows_too_wide_for_any_grid_are_set_aside_first(tmp_path: Path) -> None:
    """Nine rows with sigma^2 = 1e12 (each too wide for a grid of its own) beside two census-sized ones: all nine
    are set aside, whatever the median, and the two kept ones still refute the claim from below."""
    extra = "".join(f"{g},total,1e-12\n" for g in ("State", "County", "Tract", "Block_Group", "Block"))
    text_csv = "\n".join(
        f"{line.split(',')[0]},detailed,1e-12" if line.split(",")[0] in ("US", "State", "County", "Tract") else line
        for line in CSV.read_text().splitlines()
    )
    # the totals coarser than Block count as fixed by the block counts only with the order checked by unit counts
    units = ", ".join(f'{{ name = "{g}", units = {u} }}' for g, u in zip(GEO, (1, 51, 3143, 84414, 239780, 8132968)))
    spec_text = SPEC.read_text().replace(f"geography = {json.dumps(GEO)}", f"geography = [{units}]")
    assert "units = 8132968" in spec_text
    code, text = _run(tmp_path, text_csv + "\n" + extra, spec_text=spec_text)
    r = _report(text)
    assert _pld(r, "advertised")["set_aside"] == [2, 3, 4, 5, 8, 9, 10, 11, 12]
    assert _pld(r, "effective")["set_aside"] == [2, 3, 4, 5]  # the totals are fixed by the block counts
    assert code == 1 and r["verdict"] == "fails"


def test_when_no_bracket_can_be_built_the_pld_is_left_out(tmp_path: Path, monkeypatch: Any) -> None:
    """If even setting measurements aside fails (stood in for by a size error from the accountant), the report
    keeps rho and zCDP, says why with the extreme rows, and leaves the claim unknown (exit 3), never refuted."""
    from semidp.accountant.core.errors import InvalidArgument
    from semidp.accountant.releases import accounting

    def too_large(*args: object, **kw: object) -> None:
        raise InvalidArgument("DiscreteGaussianPart needs 2.38e+07 grid points (> 16777216); use a coarser grid h.")

    monkeypatch.setattr(accounting, "workload_bracket", too_large)
    code, text = _run(tmp_path, _with_us("1e-12"))
    r = _report(text)
    for side in ("advertised", "effective"):
        assert "line 2" in r[side]["pld_unavailable"] and "too wide a range" in r[side]["pld_unavailable"]
        assert "coarser grid" not in r[side]["pld_unavailable"]  # the engine's advice is not the user's to take
        assert {e["method"] for e in r[side]["epsilon_delta"]} == {"bun-steinke", "canonne-kamath-steinke"}
    claim = next(c for c in r["checks"] if c["name"] == "claim")
    assert code == 3 and (claim["status"], claim["outcome"]) == ("skip", "unknown")
    cks = next(e for e in r["effective"]["epsilon_delta"] if e["method"] == "canonne-kamath-steinke")["epsilon"]
    assert claim["bounds"] == {"lower": 0.0, "estimate": cks, "upper": cks}  # nothing proven below


def test_the_claim_carries_the_pld_bracket_as_bounds(tmp_path: Path) -> None:
    code, text = _run(tmp_path, CSV.read_text())
    r = _report(text)
    claim = next(c for c in r["checks"] if c["name"] == "claim")
    pld = _pld(r, "effective")
    assert code == 1 and claim["outcome"] == "refuted"
    assert claim["bounds"] == {"lower": pld["bracket"]["lower"], "estimate": pld["epsilon"], "upper": pld["epsilon"]}


def test_the_breakdown_is_labelled_by_the_finest_level(tmp_path: Path) -> None:
    spec = SPEC.read_text().replace(
        'geography = ["US", "State", "County", "Tract", "Block_Group", "Block"]', 'geography = ["Nation", "Cell"]'
    )
    spec = spec.replace('margins = [["Block"]]', 'margins = [["Cell"]]')
    code, out = _run(
        tmp_path, "geolevel,query,rho\nNation,detailed,1/100\nCell,detailed,1/50\n", spec_text=spec, json_out=False
    )
    assert code in (0, 1)
    assert "Cell-within-Nation" in out and "Block-within" not in out


def test_a_workload_spec_built_in_python_audits_like_the_loaded_one() -> None:
    """The loader adds a stand-in feature per geolevel an invariant names; semidp.audit adds it too."""
    import dataclasses

    import semidp
    from semidp.verify.workload_spec import attribute_features

    loaded = semidp.load(SPEC)
    bare = dataclasses.replace(
        loaded, data=dataclasses.replace(loaded.data, features=tuple(attribute_features(loaded)))
    )
    assert len(bare.data.features or ()) == 1
    a, b = semidp.audit(loaded).report, semidp.audit(bare).report
    assert a["verdict"] == b["verdict"] == "fails"
    assert a["effective"]["epsilon_delta"] == b["effective"]["epsilon_delta"]


def test_a_short_time_limit_leaves_breakdown_plds_out_not_the_verdict() -> None:
    """The main PLDs come first; the breakdowns get a share of what is left (BREAKDOWN_SHARE), and the groups
    it does not reach keep their exact rho and zCDP values with pld_unavailable saying why."""
    import semidp

    report = semidp.audit(
        semidp.load(ROOT / "specs" / "census-2020-pl94-persons-us.toml"), budget=Budget.of(0.01)
    ).report
    assert report["verdict"] == "fails"  # refuted from the main query-level PLD bracket, as with a full budget
    groups = [
        g
        for side in ("advertised", "effective")
        for k in ("per_attribute", "per_geolevel")
        for g in report[side][k].values()
    ]
    skipped = [g for g in groups if "pld_unavailable" in g]
    assert len(groups) == 18 and len(skipped) >= 10
    for g in skipped:
        assert "--time-limit" in g["pld_unavailable"]
        assert {e["method"] for e in g["epsilon_delta"]} == {"bun-steinke", "canonne-kamath-steinke"}
