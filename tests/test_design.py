"""``[design]`` vary = "scale" (issue 26, Step 13): certified, tight, budgeted; the shipped census design.

The search (:mod:`semidp.accountant.workloads.design`) is checked against the Gaussian closed form (exact epsilon(delta)),
on a discrete-Gaussian composition, under a tiny budget (never an unproven scale) and on zCDP targets (exact).
The spec wiring (:mod:`semidp.verify.design`): bad ``[design]`` input exits 2 naming the key; the shipped
``specs/census-2020-pl94-persons-us-design.toml`` designs c (golden), writes ``<name>.design.csv``, and that CSV,
audited as a spec with the target as its claim, holds (exit 0), while the CSV at ``c * (1 + 2e-3)`` does not.
"""

from __future__ import annotations

import contextlib
import io
import json
import math
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

from semidp.accountant.core.budget import Budget
from semidp.accountant.core.errors import InvalidArgument
from semidp.accountant.pld.engine import compose_plds
from semidp.accountant.pld.parts import DiscreteGaussianPart, GaussianPart, LaplacePart, PLDPart
from semidp.accountant.workloads.design import DESIGN_REL_TOL, design_scale, design_scale_zcdp
from semidp.verify.cli import main

ROOT = Path(__file__).resolve().parents[1]
DESIGN_SPEC = ROOT / "specs" / "census-2020-pl94-persons-us-design.toml"
CSV_NAME = "census-2020-pl94-persons-us.csv"

#: The shipped design's scale (golden): 13273549 / 2**25 ~ 0.395583; variance x 1/c ~ 2.528.
CENSUS_SCALE = Fraction(13273549, 33554432)


def _gauss(c: Fraction) -> list[tuple[PLDPart, int]]:
    """Ten Gaussian mechanisms of sigma^2 = 4/c, sensitivity 1: mu^2 = 10 c / 4 (closed form, exact bracket)."""
    return [(GaussianPart(math.nextafter(math.sqrt(4 / float(c)), 0.0)), 10)]


def _gaussian_eps(mu: float, delta: float) -> float:
    """Exact epsilon(delta) of mu-GDP [DRS22, Cor. 2.13], by bisection on delta(eps)."""
    from scipy.stats import norm

    def d(e: float) -> float:
        return float(norm.cdf(-e / mu + mu / 2) - math.exp(e) * norm.cdf(-e / mu - mu / 2))

    lo, hi = 0.0, 100.0
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if d(mid) > delta else (lo, mid)
    return hi


def test_gaussian_design_is_the_largest_scale_to_the_tolerance() -> None:
    """Against the exact GDP profile: the designed c meets the target and c * (1 + tol) does not."""
    r = design_scale(_gauss, epsilon=1.0, delta=1e-5)
    assert r.met and r.tight and r.stopped is None
    assert r.scale is not None and r.scale.denominator & (r.scale.denominator - 1) == 0  # dyadic
    mu = math.sqrt(10 * float(r.scale) / 4)
    assert _gaussian_eps(mu, 1e-5) <= 1.0
    mu_above = math.sqrt(10 * float(r.scale) * (1 + DESIGN_REL_TOL) / 4)
    assert _gaussian_eps(mu_above, 1e-5) > 1.0
    assert r.achieved is not None and r.achieved.upper <= 1.0
    assert r.gap is not None and 0 < r.gap <= DESIGN_REL_TOL * (1 + 1e-9)
    assert r.iterations <= 12


def test_discrete_gaussian_design_certified_and_tight() -> None:
    """Three discrete Gaussians: every certified claim of the result re-checked by a fresh composition."""

    def parts(c: Fraction) -> list[tuple[PLDPart, int]]:
        return [(DiscreteGaussianPart(float(Fraction(s) / c), 2), 2) for s in (3, 5, 20)]

    r = design_scale(parts, epsilon=2.0, delta=1e-8, initial=Fraction(1))
    assert r.met and r.tight and r.scale is not None and r.failing is not None
    assert compose_plds(parts(r.scale), points=2**17).epsilon(1e-8).upper <= 2.0
    assert r.failing.scale <= r.scale * (1 + Fraction(DESIGN_REL_TOL))
    assert compose_plds(parts(r.failing.scale), points=2**19).epsilon(1e-8).lower > 2.0


def test_wide_brackets_certify_by_the_upper_end(monkeypatch: pytest.MonkeyPatch) -> None:
    """An engine whose lower ends are loose (stood in for by widening every search bracket's lower end by 10 %):
    the design is still decided by the upper end (a fresh composition agrees), and the failing probe's lower end,
    refined at ``rel_width``, proves tightness."""
    import semidp.accountant.workloads.design as design_module
    from semidp.accountant.pld.closed_forms import PLDInterval
    from semidp.accountant.pld.refine import RefinedInterval, refine_bracket

    def loose(parts: Any, **kw: Any) -> RefinedInterval:
        r = refine_bracket(parts, **kw)
        if kw["rel_width"] <= 1e-4:  # the tightness refinement: the engine's own
            return r
        return r._replace(interval=PLDInterval(0.9 * r.interval.lower, r.interval.upper))

    monkeypatch.setattr(design_module, "refine_bracket", loose)

    def parts(c: Fraction) -> list[tuple[PLDPart, int]]:
        return [(LaplacePart(50.0 / float(c)), 1000)]

    r = design_scale(parts, epsilon=2.9, delta=1e-6)
    assert r.met and r.scale is not None and r.achieved is not None
    assert r.achieved.upper <= 2.9
    assert compose_plds(parts(r.scale)).epsilon(1e-6).upper <= 2.9
    assert r.tight and r.failing is not None and r.failing.bracket.lower > 2.9
    assert r.failing.scale <= r.scale * (1 + Fraction(DESIGN_REL_TOL))


def test_an_infinite_upper_end_halves_the_scale() -> None:
    """Above c = 1 the release also spends delta = 0.5 (epsilon(1e-5) infinite): the search halves, no secant."""
    from semidp.accountant.pld.parts import ApproxDPPart

    def parts(c: Fraction) -> list[tuple[PLDPart, int]]:
        return _gauss(c) + ([(ApproxDPPart(1.0, 0.5), 1)] if c > 1 else [])

    r = design_scale(parts, epsilon=1.0, delta=1e-5, initial=Fraction(64))
    plain = design_scale(_gauss, epsilon=1.0, delta=1e-5).scale
    assert r.met and r.tight and r.scale is not None and plain is not None
    assert abs(float(r.scale / plain) - 1) <= DESIGN_REL_TOL
    assert math.isinf(r.probes[0].bracket.upper)


def test_a_spent_budget_never_returns_an_unproven_scale() -> None:
    r = design_scale(_gauss, epsilon=1.0, delta=1e-5, initial=Fraction(50), budget=Budget.of(1e-9))
    assert r.stopped == "the time budget ran out"
    assert r.scale is None or compose_plds(_gauss(r.scale)).epsilon(1e-5).upper <= 1.0
    assert not r.tight


def test_zcdp_target_is_exact() -> None:
    r = design_scale_zcdp(Fraction(10, 3), Fraction(1, 2))
    assert r.scale == Fraction(3, 20) and r.tight and r.iterations == 0
    with pytest.raises(InvalidArgument, match="nothing to scale"):
        design_scale_zcdp(Fraction(0), Fraction(1))


def test_bad_search_arguments_are_refused() -> None:
    with pytest.raises(InvalidArgument, match="delta"):
        design_scale(_gauss, epsilon=1.0, delta=0.0)
    with pytest.raises(InvalidArgument, match="initial"):
        design_scale(_gauss, epsilon=1.0, delta=1e-5, initial=Fraction(0))


# --------------------------------------------------------------------------------------
# the spec: bad [design] input exits 2 naming the key
# --------------------------------------------------------------------------------------


def _spec(tmp_path: Path, text: str) -> Path:
    (tmp_path / CSV_NAME).write_text((ROOT / "specs" / CSV_NAME).read_text())
    p = tmp_path / "d.toml"
    p.write_text(text)
    return p


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        ('vary = "scale"', 'vary = "allocations"', "design.vary"),
        ("target = { epsilon = 17.14, delta = 1e-10 }", "target = { mu = 1 }", "design.target: form 'mu'"),
        ("target = { epsilon = 17.14, delta = 1e-10 }", "target = { epsilon = 17.14 }", "design.target.delta"),
        ("target = { epsilon = 17.14, delta = 1e-10 }", "target = { zcdp = 0 }", "design.target.zcdp: must be > 0"),
        ('framework = "semi-dp"', 'framework = "subspace-dp"', "design.framework"),
        ('vary = "scale"', 'vary = "scale"\nrho = 1', "design.rho: unknown key"),
    ],
)
def test_bad_design_input_exits_2_naming_the_key(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], old: str, new: str, expected: str
) -> None:
    text = DESIGN_SPEC.read_text()
    assert old in text
    assert main(["audit", str(_spec(tmp_path, text.replace(old, new)))]) == 2
    assert expected in capsys.readouterr().err


def test_design_with_laplace_noise_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = DESIGN_SPEC.read_text().replace('noise = "discrete-gaussian"', 'noise = "laplace"')
    p = _spec(tmp_path, text)
    (tmp_path / CSV_NAME).write_text("geolevel,query,scale\nState,total,10\nCounty,votingage,20\n")
    assert main(["audit", str(p)]) == 2
    assert "mechanism.noise: [design] scales rho (Gaussian noise); noise = 'laplace'" in capsys.readouterr().err


def test_design_on_a_calibrated_kind_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = (ROOT / "specs" / "census-2020-total.toml").read_text() + "\n[design]\ntarget = { zcdp = 1 }\n"
    assert main(["audit", str(_spec(tmp_path, text))]) == 2
    assert "design: [design] is for workload specs" in capsys.readouterr().err


# --------------------------------------------------------------------------------------
# the shipped census design: golden scale, the CSV audits as a spec, tightness
# --------------------------------------------------------------------------------------


def _audit(args: list[str]) -> tuple[int, dict[str, Any]]:
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        code = main(["audit", *args, "--json"])
    return code, json.loads(buf.getvalue())


@pytest.fixture(scope="module")
def census_design(tmp_path_factory: pytest.TempPathFactory) -> tuple[int, dict[str, Any], Path]:
    out = tmp_path_factory.mktemp("design")
    code, report = _audit([str(DESIGN_SPEC), "--out", str(out), "--time-limit", "600"])
    return code, report, out


def test_census_design_golden(census_design: tuple[int, dict[str, Any], Path]) -> None:
    code, report, out = census_design
    assert code == 0, report["checks"]
    d = report["design"]
    assert Fraction(d["scale_exact"]) == CENSUS_SCALE
    assert d["tight"] is True and d["stopped"] is None
    assert d["achieved"]["upper"] <= 17.14 < d["failing"]["lower"]
    assert d["failing"]["ratio"] <= 1 + DESIGN_REL_TOL
    assert d["expected_error"]["variance_factor"] == pytest.approx(2.527917, abs=1e-6)
    rows = d["expected_error"]["per_measurement"]
    assert len(rows) == 65
    assert all(Fraction(r["rho"]) == CENSUS_SCALE * Fraction(r["rho_before"]) for r in rows)
    assert [c["outcome"] for c in report["checks"] if c["name"] == "design"] == ["verified"]
    assert (out / "census-2020-pl94-persons-us-design.design.png").exists()
    csv_lines = (out / "census-2020-pl94-persons-us-design.design.csv").read_text().splitlines()
    assert csv_lines[0] == "geolevel,query,rho" and len(csv_lines) == 66


def _audit_csv(tmp_path: Path, csv_text: str) -> tuple[int, dict[str, Any]]:
    """The design spec pointing at ``csv_text``, the target as its claim, no [design]."""
    text = DESIGN_SPEC.read_text()
    text = text[: text.index("\n[design]\n") + 1] + (
        '[claim]\nframework = "semi-dp"\nguarantee = { epsilon = 17.14, delta = 1e-10 }\n'
    )
    (tmp_path / "designed.csv").write_text(csv_text)
    p = tmp_path / "audit.toml"
    p.write_text(text.replace(f'measurements = "{CSV_NAME}"', 'measurements = "designed.csv"'))
    return _audit([str(p), "--time-limit", "600"])


def test_the_designed_csv_audits_as_a_spec_and_the_target_holds(
    census_design: tuple[int, dict[str, Any], Path], tmp_path: Path
) -> None:
    _, _, out = census_design
    code, report = _audit_csv(tmp_path, (out / "census-2020-pl94-persons-us-design.design.csv").read_text())
    assert code == 0, report["checks"]
    assert report["verdict"] == "holds"


def test_a_scale_two_per_mille_larger_does_not_hold(
    census_design: tuple[int, dict[str, Any], Path], tmp_path: Path
) -> None:
    """Tightness through the audit: the CSV at c * (1 + 2e-3) is not verified (refuted by the lower end)."""
    _, _, out = census_design
    lines = (out / "census-2020-pl94-persons-us-design.design.csv").read_text().splitlines()
    up = Fraction(1002, 1000)
    bumped = [lines[0]] + [",".join([*row.split(",")[:2], str(Fraction(row.split(",")[2]) * up)]) for row in lines[1:]]
    code, report = _audit_csv(tmp_path, "\n".join(bumped) + "\n")
    assert code == 1, report["checks"]


def test_a_spent_budget_is_inconclusive_with_the_best_certified_scale(capsys: pytest.CaptureFixture[str]) -> None:
    """--time-limit too small for the search: exit 3, the design check unknown, no unproven scale reported.

    (The search takes well under a second on a quiet machine once the PLDs are composed: 0.05 s is spent before
    it starts; under load the supervisor's hard stop may end the spec first, also exit 3, without a design.)"""
    code, report = _audit([str(DESIGN_SPEC), "--time-limit", "0.05"])
    assert code == 3
    if "design" not in report:
        return
    d = report["design"]
    assert [c["outcome"] for c in report["checks"] if c["name"] == "design"] == ["unknown"]
    assert d["scale"] is None or d["achieved"]["upper"] <= 17.14


# --------------------------------------------------------------------------------------
# vary = "allocation": the re-balanced rhos, then one scale; the CSV audits as a spec
# --------------------------------------------------------------------------------------

ALLOCATION_SPEC = ROOT / "specs" / "census-2020-pl94-persons-us-allocation.toml"


@pytest.fixture(scope="module")
def census_allocation(tmp_path_factory: pytest.TempPathFactory) -> tuple[int, dict[str, Any], Path]:
    out = tmp_path_factory.mktemp("allocation")
    code, report = _audit([str(ALLOCATION_SPEC), "--out", str(out), "--time-limit", "600"])
    return code, report, out


def test_census_allocation_meets_the_target_with_less_variance_than_uniform_scaling(
    census_allocation: tuple[int, dict[str, Any], Path], tmp_path: Path
) -> None:
    """[design] vary = "allocation" (issue 26, item 4): 64 free measurements of the PL94 persons workload share
    the query-level zCDP budget equally (weights 1, equal coefficients: the closed form), the State total keeps
    its rho, and one scale c meets epsilon = 17.14 at delta = 1e-10; the summed per-cell variance (sum of 1/rho)
    falls from 109 282 (published) and 276 157 (the scale design: 109 282 / c) to about 5 989."""
    code, report, out = census_allocation
    assert code == 0, report["checks"]
    d = report["design"]
    a = d["allocation"]
    assert d["tight"] is True and d["achieved"]["upper"] <= 17.14 < d["failing"]["lower"]
    assert a["method"] == "closed-form" and len(a["kept"]) == 1
    assert Fraction(a["constraint_zcdp"]) <= Fraction(a["budget_zcdp"])
    assert a["objective_published"] == pytest.approx(109_281.5, rel=1e-5)
    assert a["objective_designed"] == pytest.approx(5_989, rel=1e-3)
    uniform_design = a["objective_published"] / float(CENSUS_SCALE)  # the scale design's summed variance
    assert a["objective_designed"] < uniform_design / 40
    rows = d["expected_error"]["per_measurement"]
    state = [r for r in rows if r["geolevel"] == "State" and r["query"] == "total"]
    assert len(state) == 1 and state[0]["rho"] == state[0]["rho_before"]  # fixed by the invariant: kept
    free = {r["rho"] for r in rows if r is not state[0]}
    assert len(free) == 1  # equal weights, equal coefficients: one rho for every free measurement
    csv_text = (out / "census-2020-pl94-persons-us-allocation.design.csv").read_text()
    code, audited = _audit_csv(tmp_path, csv_text)
    assert code == 0, audited["checks"]
