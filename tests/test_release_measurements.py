"""A measurement workload as a Release and its PLD-bracket interpreter (Step 14, item 1).

:func:`accountant.releases.accounting.pld_bracket` on :class:`~accountant.releases.measurements.MeasurementRelease`
gives the numbers the workload report gave before the kind described a release (the golden report of
``census-2020-pl94-units-us``, rendered from main before the conversion): exact rho and the PLD bracket of the whole
release and of every breakdown group, advertised and query-level. The interpreter refuses a release whose parts do
not state its measurements' worst pairs, and KindResult has no override hooks left.
"""

from __future__ import annotations

import dataclasses
import json
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

from semidp.accountant.core.budget import Budget
from semidp.accountant.core.errors import InvalidArgument
from semidp.accountant.data.invariants import Margins
from semidp.accountant.guarantees.relations import Replace, SemiAdjacent
from semidp.accountant.releases.accounting import BracketAccount, pld_bracket
from semidp.accountant.releases.measurements import MeasurementRelease, PartGroup, measurement_release
from semidp.accountant.releases.model import Part, Shift
from semidp.accountant.workloads.accounting import WorkloadMeasurement
from semidp.verify.kinds.published import PublishedSpec
from semidp.verify.load import load
from semidp.verify.runner import build_context
from semidp.verify.workload_report import workload_release
from semidp.verify.workload_spec import read_measurements

ROOT = Path(__file__).resolve().parent.parent
NAME = "census-2020-pl94-units-us"
STATE = Margins((("state",),))


def _pld(entries: list[dict[str, Any]], delta: float) -> tuple[float, float]:
    e = next(x for x in entries if x["method"] == "pld" and x["delta"] == delta)
    return e["bracket"]["lower"], e["bracket"]["upper"]


def _ours(acct: BracketAccount, delta: float) -> tuple[float, float]:
    r = acct.refined[delta]
    return r.interval.lower, r.interval.upper


@pytest.fixture(scope="module")
def census() -> tuple[MeasurementRelease, dict[str, Any], list[float], int]:
    spec = load(str(ROOT / "specs" / f"{NAME}.toml"))
    m = spec.mechanism
    assert isinstance(m, PublishedSpec) and m.measurements is not None and m.noise is not None
    ms, probs = read_measurements(spec, m.measurements, m.noise)
    assert not probs
    ctx = build_context(spec, seed=1, budget=Budget.of(600))
    golden = json.loads((ROOT / "tests" / "golden" / "reports" / f"{NAME}.json").read_text())
    return workload_release(ctx, m.noise, ms), golden, ctx.deltas, ctx.a.value


def test_the_interpreter_gives_the_reports_numbers_for_the_release_and_every_group(
    census: tuple[MeasurementRelease, dict[str, Any], list[float], int],
) -> None:
    release, golden, deltas, a = census
    assert a == 2 and deltas == [1e-10]
    sides = (("advertised", None), ("effective", a))
    for side, radius in sides:
        acct = pld_bracket(release, radius).evaluated(deltas, Budget.of(600))
        assert str(acct.rho) == golden[side]["rho_exact"]
        assert _ours(acct, 1e-10) == _pld(golden[side]["epsilon_delta"], 1e-10)
        for kind in ("per_attribute", "per_geolevel"):
            want = golden[side][kind]
            groups = release.groups_of(kind)
            assert [g.name for g in groups] == list(want)
            for g in groups:
                sub = pld_bracket(release.group(g), radius).evaluated(deltas, Budget.of(600))
                assert str(sub.rho) == want[g.name]["rho_exact"] and len(g.indices) == want[g.name]["measurements"]
                if sub.pld is None:  # no measurement of the group moves: no PLD entry's bracket to compare
                    assert sub.rho == 0
                else:
                    assert _ours(sub, 1e-10) == _pld(want[g.name]["epsilon_delta"], 1e-10), (side, g.name)


def test_a_release_whose_parts_are_not_its_measurements_is_refused(
    census: tuple[MeasurementRelease, dict[str, Any], list[float], int],
) -> None:
    release = census[0]
    semi = SemiAdjacent(release.base, release.invariant, 2)
    moving = next(i for i, m in enumerate(release.measurements) if not m.fixed)
    p = release.parts[moving]
    # the worst pair at a(t) = 2 stated as (1, 1): too optimistic for the (2, 2) the measurement has
    wrong = Part(
        p.law, tuple(Shift.of_coordinates(semi, (1, 1)) if s.relation == semi else s for s in p.shifts), p.label
    )
    tampered = dataclasses.replace(release, parts=release.parts[:moving] + (wrong,) + release.parts[moving + 1 :])
    with pytest.raises(InvalidArgument, match="not the PLD parts of its measurements"):
        pld_bracket(tampered, 2)
    pld_bracket(tampered, None)  # on base the parts still agree
    # a measurement with less noise than its part states: refused too
    scaled = dataclasses.replace(release.measurements[moving], scale=release.measurements[moving].scale / 2)
    ms = release.measurements[:moving] + (scaled,) + release.measurements[moving + 1 :]
    with pytest.raises(InvalidArgument, match="not the PLD parts"):
        pld_bracket(dataclasses.replace(release, measurements=ms), None)


def test_groups_are_sub_releases_and_an_empty_one_publishes_nothing() -> None:
    ms = [
        WorkloadMeasurement("US: total", Fraction(4), fixed=True),
        WorkloadMeasurement("Block: x", Fraction(2)),
        WorkloadMeasurement("Tract: x", Fraction(8)),
    ]
    groups = [PartGroup("per_geolevel", "State", (1, 2)), PartGroup("per_attribute", "y", ())]
    release = measurement_release(Replace(), STATE, ms, "discrete-gaussian", lines=[7, 9, 11], groups=groups)
    sub = release.group(groups[0])
    assert (sub.measurements, sub.lines, sub.groups) == ((ms[1], ms[2]), (9, 11), ())
    assert sub.parts == release.parts[1:]
    assert pld_bracket(sub).rho == Fraction(1, 2) + Fraction(1, 8)  # 2 / (2 sigma^2) each at replace-one
    assert pld_bracket(sub, 2).rho == Fraction(2) + Fraction(1, 2)  # 8 / (2 sigma^2) each at the (2, 2) worst pair
    assert pld_bracket(release, 2).rho == Fraction(5, 2)  # the fixed US total does not move
    assert pld_bracket(release).rho == Fraction(1, 4) + Fraction(5, 8)  # but it does on replace-one pairs
    empty = pld_bracket(release.group(groups[1]), 2)
    assert (empty.rho, empty.pld, empty.pld_unavailable) == (0, None, None)
    assert pld_bracket(sub, skip="budget").pld_unavailable == "budget"


def test_a_measurement_release_checks_its_fields() -> None:
    ms = [WorkloadMeasurement("Block: x", Fraction(2))]
    release = measurement_release(Replace(), STATE, ms, "gaussian")
    assert release.lines == (2,)
    with pytest.raises(InvalidArgument, match="1 parts, 1 measurements and 2 lines"):
        dataclasses.replace(release, lines=(2, 3))
    with pytest.raises(InvalidArgument, match="not one of"):
        dataclasses.replace(release, noise="poisson")
    with pytest.raises(InvalidArgument, match="an index is not one of the release's 1 parts"):
        dataclasses.replace(release, groups=(PartGroup("per_attribute", "x", (1,)),))
    with pytest.raises(InvalidArgument, match="PartGroup.kind"):
        PartGroup("per_county", "x", ())


def test_kind_result_has_no_override_hooks_left() -> None:
    from dataclasses import fields

    from semidp.verify.context import KindResult

    names = {f.name for f in fields(KindResult)}
    gone = {"claim_override", "claim_bounds", "advertised_summary", "effective_extra", "effective_pld"}
    assert names.isdisjoint(gone)


def _audit_units(tmp_path: Path, noise: str, value: str, epsilon: float) -> tuple[int, dict[str, Any]]:
    """census-2020-pl94-units-us with every measurement's noise ``value`` (a ``scale`` or ``rho`` column)."""
    import contextlib
    import io

    from semidp.verify.cli import main

    spec = (ROOT / "specs" / f"{NAME}.toml").read_text()
    column = "scale" if "laplace" in noise else "rho"
    rows = [f"{g},detailed,{value}" for g in ("US", "State", "County", "Tract", "Block_Group", "Block")]
    (tmp_path / f"{NAME}.csv").write_text("\n".join([f"geolevel,query,{column}", *rows]) + "\n")
    text = spec.replace('noise = "discrete-gaussian"', f'noise = "{noise}"').replace(
        "epsilon = 2.47", f"epsilon = {epsilon}"
    )
    (tmp_path / "spec.toml").write_text(text)
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        code = main(["audit", str(tmp_path / "spec.toml"), "--quiet", "--json"])
    report: dict[str, Any] = json.loads(out.getvalue())
    return code, report


def test_a_laplace_workload_is_not_refuted_from_the_bracket_of_its_dominating_pairs(tmp_path: Path) -> None:
    """At a(t) = 2 Laplace measurements are accounted by the (4/b, 0)-DP pair of their l1 bound: the bracket's lower
    end bounds that pair, not the release, so a claim below it is unknown; the discrete Gaussian's (2, 2) worst pair
    is attained, so the same claim is refuted there."""
    code, r = _audit_units(tmp_path, "laplace", "10", 0.01)
    claim = next(c for c in r["checks"] if c["name"] == "claim")
    low, up = _pld(r["effective"]["epsilon_delta"], 1e-10)
    assert r["semi_adjacent_parameter"]["value"] == 2 and 0.01 < up
    # the report shows no unproven lower end either: 0, with the reason beside it
    entry = next(x for x in r["effective"]["epsilon_delta"] if x["method"] == "pld" and x["delta"] == 1e-10)
    assert low == 0.0 and "bound the release's worst pair from above" in entry["bracket_note"]
    assert _pld(r["advertised"]["epsilon_delta"], 1e-10)[0] > 0  # the base relation's (1, 1) pair is attained
    assert (code, claim["outcome"]) == (3, "unknown") and "does not refute" in claim["detail"]
    assert claim["bounds"]["lower"] == 0.0
    code, r = _audit_units(tmp_path, "discrete-gaussian", "1/100", 0.01)
    claim = next(c for c in r["checks"] if c["name"] == "claim")
    assert (code, claim["outcome"]) == (1, "refuted") and claim["bounds"]["lower"] > 0.01
