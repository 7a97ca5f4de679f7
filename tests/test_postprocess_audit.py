"""Step 10 items 3-4: ``mechanism.scale``, the ``discrete-laplace`` kind and the ``[postprocess]`` study.

Targets: ``docs/reference/subspace-integer-postprocessing.md`` §6 T-Z5 (toy bias of (P+) under Lap(5),
one total: x = (1, 1, 1, 97) -> (0.89, 0.89, 0.89, -2.66), bound 98.99, bias(P) ~ 0), T-Z1
((P_S) variance 2 lambda^2 (1 - 1/n), [ZVF21, Thm. 5]), T-Z2 (Lemma 2), T-S4 (Lap_Z(3) variance).
"""

from __future__ import annotations

import dataclasses
import json
import math
import time
from collections.abc import Iterator
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from semidp.accountant import InvalidSpec
from semidp.accountant.core.budget import Budget
from semidp.accountant.core.outcome import Refuted, Unknown, Verified
from semidp.accountant.core.progress import report_stages
from semidp.mechanisms.nonneg_projection import project_nonneg
from semidp.mechanisms.postprocess_noise import LaplaceNoise
from semidp.mechanisms.projection import AffineConstraint, project_simplex
from semidp.mechanisms.projection_bias import monte_carlo_bias
from semidp.verify import postprocess_audit
from semidp.verify.cli import main
from semidp.verify.load import load, loads
from semidp.verify.postprocess_audit import MAX_DRAW_CELLS, projector_for, run_study
from semidp.verify.postprocess_section import build, postprocess_of
from semidp.verify.runner import Audit, audit

ROOT = Path(__file__).resolve().parents[1]
COUNTY = ROOT / "specs" / "county-state-total-postprocess.toml"

TOY = """
version = 1
name = "tz5-toy"
[data]
features = [{ name = "cell", levels = 4 }]
table = [1, 1, 1, 97]
[invariant]
kind = "total"
[mechanism]
kind = "laplace"
scale = 5.0
[postprocess]
kind = "project-nonneg"
draws = 100000
[audit]
samples = 200
seed = 1
"""

#: T-Z5 (reference §6, 2M draws, printed to 2 decimals: the slack below is half the last digit).
TZ5_BIAS = (0.89, 0.89, 0.89, -2.66)
TZ5_BOUND = 98.99
PRINTED = 0.005


@pytest.fixture(autouse=True)
def _no_stage_lines_after_the_cli() -> Iterator[None]:
    """``main`` sends stage lines to the (captured) stderr; later library calls must not write to it."""
    yield
    report_stages(None)


def _check(res: Audit, name: str) -> dict[str, object]:
    return next(c for c in res.report["checks"] if c["name"] == name)


@pytest.fixture(scope="module")
def toy() -> Audit:
    return audit(loads(TOY, "toy.toml"), budget=Budget.of(60.0))


def test_tz5_bias_of_nonneg_projection(toy: Audit) -> None:
    pp = toy.report["postprocess"]
    assert pp["kind"] == "project-nonneg" and pp["method"] == "sort-and-threshold"
    assert pp["draws"] == pp["draws_done"] == 100000 and not pp["stopped_early"]
    assert pp["seed"] == 1 and toy.report["seed"] == 1
    for b, (lo, hi), target in zip(pp["bias"], pp["bias_ci"], TZ5_BIAS):
        assert lo - PRINTED <= target <= hi + PRINTED, (b, lo, hi, target)
    assert round(pp["bias_bound"], 2) == TZ5_BOUND  # C' = b - r_m = 99 times Pr[Poisson(0.2) <= 3]
    assert pp["bias_bound_detail"]["max_deviation"] == 99.0
    assert toy.verdict == "holds"


def test_tz5_unbiased_projection_and_thm5_variance(toy: Audit) -> None:
    pp = toy.report["postprocess"]
    for lo, hi in pp["projection_bias_ci"]:
        assert lo <= 0.0 <= hi  # [ZVF21, Thm. 3]; T-Z5: bias(P) ~ 0
    # T-Z1 formula [ZVF21, Thm. 5]: 2 lambda^2 (1 - 1/n) = 2 * 25 * 3/4
    assert pp["variance_theory_projection"] == pytest.approx([37.5] * 4, rel=1e-12)
    rows = {r["program"]: r for r in pp["comparison"]}
    assert set(rows) == {"none", "P", "P+"}
    assert rows["none"]["expected_squared_l2_error_exact"] == pytest.approx(200.0)  # n 2 lambda^2
    assert rows["P"]["expected_squared_l2_error_exact"] == pytest.approx(150.0)  # (n - 1) 2 lambda^2
    assert rows["P+"]["expected_l2_error"] < rows["P"]["expected_l2_error"] < rows["none"]["expected_l2_error"]
    for name in ("postprocess-unbiased-projection", "postprocess-variance", "postprocess-bias-bound"):
        assert _check(toy, name)["status"] == "pass", name


def test_tz5_agrees_with_the_library_monte_carlo(toy: Audit) -> None:
    """An independent run (the library's monte_carlo_bias, another seed) lands in the report's intervals."""
    x = np.array([1.0, 1.0, 1.0, 97.0])
    est = monte_carlo_bias(
        x, lambda d: project_simplex(d, 100.0), LaplaceNoise(5.0), 100_000, rng=np.random.default_rng(9)
    )
    pp = toy.report["postprocess"]
    se = (np.asarray(pp["bias_ci"])[:, 1] - np.asarray(pp["bias"])) / 1.959964
    z = np.abs(est.bias - np.asarray(pp["bias"])) / np.sqrt(se**2 + ((est.bias_high - est.bias) / 1.959964) ** 2)
    assert np.all(z < 4.0), z


def test_ball_probability_is_lemma2(toy: Audit) -> None:
    ball = toy.report["postprocess"]["ball_probability"]
    # [ZVF21, Lemma 2] Pr(Gamma(4, 5) <= 1) = 1 - e^{-0.2}(1 + 0.2 + 0.02 + 0.008/6)
    exact = 1 - math.exp(-0.2) * (1 + 0.2 + 0.02 + 0.2**3 / 6)
    assert ball["value"] == pytest.approx(exact, rel=1e-9)
    assert ball["r"] == 1.0 and ball["cells"] == 4
    lo, hi = ball["monte_carlo"]["interval"]
    assert lo <= exact <= hi


def test_scale_gives_computed_epsilon(toy: Audit) -> None:
    """laplace with scale b = 5 on S = {e_i - e_j} (Delta_1 = 2): epsilon = 2/5, computed not targeted."""
    assert toy.report["advertised"]["epsilon"] == 0.4
    assert "computed, not targeted" in toy.report["mechanism"]["calibration"]
    assert toy.report["mechanism"]["scale"] == 5.0


def test_cli_text_json_markdown_and_plot(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    spec = tmp_path / "toy.toml"
    spec.write_text(TOY.replace("draws = 100000", "draws = 20000"))
    assert main(["audit", str(spec), "--out", str(tmp_path / "out")]) == 0
    text = capsys.readouterr().out
    assert "postprocess: (P+)" in text and "Thm. 4 bound" in text and "E||err||_2" in text
    png = tmp_path / "out" / "tz5-toy.postprocess.png"
    assert png.is_file() and png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    report = json.loads((tmp_path / "out" / "tz5-toy.json").read_text())
    assert "tz5-toy.postprocess.png" in report["plots"]
    assert report["postprocess"]["draws_done"] == 20000
    md = (tmp_path / "out" / "tz5-toy.md").read_text()
    assert "## Post-processing" in md and "| program |" in md


@pytest.mark.parametrize(
    ("edit", "key"),
    [
        (("scale = 5.0", "scale = 5.0\nepsilon = 1.0"), "mechanism.scale"),
        (('kind = "project-nonneg"', 'kind = "project-nonnegative"'), "postprocess.kind"),
        (("draws = 100000", f"draws = {MAX_DRAW_CELLS // 4 + 1}"), "postprocess.draws"),
        (("draws = 100000", "draws = 1"), "postprocess.draws"),
        (("scale = 5.0", "scale = -5.0"), "mechanism.scale"),
        (('kind = "laplace"\nscale = 5.0', 'kind = "projected-laplace"\nepsilon = 1'), "postprocess"),
        (('kind = "total"', 'kind = "none"'), "invariant.kind"),
        (('kind = "laplace"\nscale = 5.0', 'kind = "projected-laplace"\nscale = 5.0'), "mechanism.scale"),
    ],
)
def test_invalid_specs_exit_2_naming_the_key(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], edit: tuple[str, str], key: str
) -> None:
    assert edit[0] in TOY
    spec = tmp_path / "bad.toml"
    spec.write_text(TOY.replace(*edit, 1))
    assert main(["audit", str(spec)]) == 2
    err = capsys.readouterr().err
    assert f"{key}:" in err and "Traceback" not in err, err


def test_draws_limit_message_states_the_limit() -> None:
    with pytest.raises(InvalidSpec) as e:
        loads(TOY.replace("draws = 100000", "draws = 6000000"))
    assert "exceeds the limit 2e+07" in str(e.value) and "at most 5000000 draws" in str(e.value)


def test_discrete_laplace_kind() -> None:
    spec = loads(TOY.replace('kind = "laplace"\nscale = 5.0', 'kind = "discrete-laplace"\nscale = "3"'))
    res = audit(spec, budget=Budget.of(60.0))
    mech = res.report["mechanism"]
    assert mech["scale"] == "3" and res.report["advertised"]["epsilon"] == pytest.approx(2 / 3)
    a = math.exp(-1 / 3)  # T-S4: Var Lap_Z(3) = 2a/(1-a)^2 = 17.8343
    assert round(2 * a / (1 - a) ** 2, 4) == 17.8343
    assert mech["expected_squared_error"] == pytest.approx(4 * 2 * a / (1 - a) ** 2)
    assert res.samples is not None and np.all(res.samples == np.round(res.samples))  # integer releases
    pp = res.report["postprocess"]
    assert pp["noise"]["law"] == "double-geometric" and pp["bias_bound"] is not None
    assert _check(res, "postprocess-ball-probability")["status"] == "pass"
    assert res.verdict == "holds"


def test_discrete_laplace_epsilon_target_is_exact() -> None:
    spec = loads(TOY.replace('kind = "laplace"\nscale = 5.0', 'kind = "discrete-laplace"\nepsilon = "2/7"'))
    res = audit(spec, budget=Budget.of(60.0))
    assert res.report["mechanism"]["scale"] == "7"  # t = Delta_1 / epsilon = 2 / (2/7)
    assert res.report["advertised"]["epsilon"] == pytest.approx(2 / 7)


def test_gaussian_scale_gives_mu_and_no_lemma2() -> None:
    spec = loads(TOY.replace('kind = "laplace"\nscale = 5.0', 'kind = "gaussian"\nscale = 2.0'))
    res = audit(spec, budget=Budget.of(60.0))
    assert res.report["advertised"]["mu"] == pytest.approx(math.sqrt(2) / 2)  # Delta_2(S) / sigma
    pp = res.report["postprocess"]
    assert pp["bias_bound"] is None and pp["ball_probability"]["value"] is None
    assert pp["variance_theory_projection"] == pytest.approx([3.0] * 4)  # sigma^2 (1 - 1/4)
    assert _check(res, "postprocess-bias-bound")["outcome"] == "not-applicable"


MARGINS = """
version = 1
name = "margins-pp"
[data]
features = [{ name = "a", levels = 2 }, { name = "b", levels = 3 }]
table = [2, 0, 5, 1, 3, 9]
[invariant]
kind = "margins"
margins = MARGINS
[mechanism]
kind = "laplace"
scale = 2.0
[postprocess]
kind = "project-nonneg"
draws = 4000
[audit]
samples = 100
seed = 3
"""


@pytest.mark.parametrize(("margins", "method"), [('[["a"]]', "hierarchical-totals"), ('[["a"], ["b"]]', "admm")])
def test_invariant_paths(margins: str, method: str) -> None:
    res = audit(loads(MARGINS.replace("MARGINS", margins)), budget=Budget.of(60.0))
    pp = res.report["postprocess"]
    assert pp["method"] == method
    if method == "admm":
        assert pp["converged"] is True and pp["not_converged"] == 0
        assert _check(res, "postprocess-converged")["status"] == "pass"
        assert pp["bias_bound_detail"]["max_deviation"] is not None
    else:
        assert pp["converged"] is None  # exact path: no iteration to report
    assert res.verdict == "holds"


def test_paths_agree_with_admm() -> None:
    """The sort-and-threshold and atom paths give the ADMM's (P+) (an independent method) on the same draws."""
    rng = np.random.default_rng(5)
    x = np.array([2.0, 0.0, 5.0, 1.0, 3.0, 9.0])
    noisy = x + rng.laplace(0, 3.0, (200, 6))
    for a in (np.ones((1, 6), dtype=np.int64), np.array([[1, 1, 1, 0, 0, 0], [0, 0, 0, 1, 1, 1]])):
        proj = projector_for(a, x)
        assert proj.method in ("sort-and-threshold", "hierarchical-totals")
        fast, _, _ = proj.project_nonneg(noisy)
        ref = project_nonneg(AffineConstraint.of(a.astype(float), a @ x), noisy)
        assert ref.all_converged and np.max(np.abs(fast - ref.solution)) < 1e-6


def test_budget_stops_early(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(postprocess_audit, "BATCH_CELLS", 400)  # batches of 100 draws of 4 cells
    x = np.array([1.0, 1.0, 1.0, 97.0])
    study = run_study(
        x,
        np.ones((1, 4), dtype=np.int64),
        LaplaceNoise(5.0),
        True,
        10_000,
        rng=np.random.default_rng(0),
        budget=Budget.until(time.monotonic() - 1.0),
    )
    assert study.stopped_early and study.draws_done == 100
    _, checks = build(study, LaplaceNoise(5.0), "project-nonneg", 0, "test")
    early = next(c for c in checks if c.name == "postprocess-draws")
    assert isinstance(early.outcome, Unknown) and "100 of 10000" in early.detail


def test_the_checks_can_fail() -> None:
    """A biased (P) and a wrong variance are refuted: the checks are not vacuous."""
    x = np.array([1.0, 1.0, 1.0, 97.0])
    study = run_study(
        x,
        np.ones((1, 4), dtype=np.int64),
        LaplaceNoise(5.0),
        True,
        20_000,
        rng=np.random.default_rng(0),
        budget=Budget.unlimited(),
    )
    _, ok = build(study, LaplaceNoise(5.0), "project-nonneg", 0, "test")
    assert all(isinstance(c.outcome, Verified) for c in ok)
    bad_p = dict(study.programs["P"], bias=study.programs["P"]["bias"] + 0.5)
    wrong = dataclasses.replace(study, programs={**study.programs, "P": bad_p})
    _, checks = build(wrong, LaplaceNoise(5.0), "project-nonneg", 0, "test")
    assert isinstance(next(c for c in checks if c.name == "postprocess-unbiased-projection").outcome, Refuted)
    # the study's variance against a law of another scale: Var = 2 * 6^2 (1 - 1/4) = 54, not 37.5
    _, checks = build(study, LaplaceNoise(6.0), "project-nonneg", 0, "test")
    assert isinstance(next(c for c in checks if c.name == "postprocess-variance").outcome, Refuted)


def test_county_example_runs_within_budget() -> None:
    """Within its budget every planned draw is made (the budget's outcome, not the clock)."""
    res = audit(load(COUNTY), budget=Budget.of(60.0))
    pp = res.report["postprocess"]
    assert pp["draws_done"] == 100_000 and pp["method"] == "sort-and-threshold"
    spec = load(COUNTY)
    assert spec.data.table is not None and sum(spec.data.table) == 12_812_508 and len(spec.data.table) == 102
    # Thm. 5: (1 - 1/102) 2 * 5^2
    assert pp["variance_theory_projection"][0] == pytest.approx(50 * (1 - 1 / 102))
    assert res.verdict == "holds"
    assert Fraction(str(res.report["advertised"]["epsilon"])) == Fraction(2, 5)


def test_small_counts_are_biased_by_the_nonneg_projection_and_not_by_p() -> None:
    """specs/county-subgroup-postprocess.toml: zeros pushed up, large counts pushed down [ZVF21, Sec. 4];
    (P) stays unbiased [ZVF21, Thm. 3] (the README's table)."""
    spec = load(ROOT / "specs" / "county-subgroup-postprocess.toml")
    pp_spec = postprocess_of(spec)
    assert pp_spec is not None
    r = audit(spec.with_plugin_table("postprocess", dataclasses.replace(pp_spec, draws=20_000))).report
    pp = r["postprocess"]
    x = np.array(spec.data.table)
    ci = np.array(pp["bias_ci"])
    assert (ci[x == 0, 0] > 0.3).all()  # every empty county: bias (P+) above +0.3, interval and all
    assert (ci[x >= 9, 1] < -1.3).all()  # every county with 9 or more: below -1.3
    checks = {c["name"]: c["status"] for c in r["checks"]}
    assert r["verdict"] == "holds" and checks["postprocess-unbiased-projection"] == "pass"
    assert abs(np.array(pp["projection_bias"])).max() < 0.1
