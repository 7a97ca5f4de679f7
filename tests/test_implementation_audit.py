"""Black-box audits (``mechanism.kind = "implementation"``): planted bugs are refuted, correct twins are not.

Each planted bug of :mod:`tests.planted_bugs` is audited with a fixed seed and a stated sample size (draws
per side of each pair); its correct twin with the same seed and size must come out "not refuted at this
sample size" (unknown, never verified). The statistics are unit-tested against exact values.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from semidp.accountant.core.outcome import Refuted, Unknown, Verified
from semidp.verify import spec_job, supervisor
from semidp.verify.cli import main
from semidp.verify.kinds.implementation import exact_invariant_check
from semidp.verify.load import loads
from semidp.verify.run_options import RunOptions
from semidp.verify.runner import audit
from semidp.verify.threshold_audit import cp_upper, epsilon_lower
from tests.planted_bugs import TABLE, gaussian_sigma_halved, spec_text

ROOT = Path(__file__).resolve().parents[1]
SEED = 1
DRAWS = 20_000

#: (function, framework, claim, refuted?) at SEED and DRAWS draws per side of each pair.
CATALOGUE = [
    ("gaussian_prop32", "semi-dp", "{ mu = 1.0 }", True),
    ("gaussian_sigma_halved", "semi-dp", "{ mu = 1.0 }", True),
    ("gaussian_20pct_small", "semi-dp", "{ mu = 1.0 }", True),
    ("gaussian_exact", "semi-dp", "{ mu = 1.0 }", False),
    ("histogram_add_remove", "dp", "{ mu = 1.0 }", True),
    ("histogram_replace", "dp", "{ mu = 1.0 }", False),
    ("knorm_gamma_s", "semi-dp", "{ epsilon = 1.0 }", True),
    ("knorm_exact", "semi-dp", "{ epsilon = 1.0 }", False),
]


def _checks(function: str, framework: str, claim: str, **kw: int) -> dict[str, object]:
    r = audit(loads(spec_text(function, framework=framework, claim=claim, **kw)), options=RunOptions(allow_code=True))
    return {c.name: c.outcome for c in r.typed.checks} | {"report": r.report}


@pytest.mark.parametrize(("function", "framework", "claim", "refuted"), CATALOGUE, ids=[c[0] for c in CATALOGUE])
def test_planted_bug_catalogue(function: str, framework: str, claim: str, refuted: bool) -> None:
    got = _checks(function, framework, claim, draws=DRAWS, seed=SEED)
    outcome = got["statistical-audit"]
    assert isinstance(outcome, Refuted if refuted else Unknown), outcome
    assert isinstance(got["claim"], Refuted if refuted else Unknown)  # never Verified
    assert isinstance(got["invariant-preserved"], Verified)
    sec = got["report"]["audit_lower_bound"]  # type: ignore[index]
    assert sec["refuted"] is refuted and sec["confidence"] == 0.95 and sec["draws"]["per_side"] == DRAWS
    row = sec["epsilon_delta"][0]
    assert row["delta"] == 1e-6 and 0 <= row["epsilon_lower"]
    if not refuted:  # a correct twin's empirical lower bound stays below its certified upper bound
        assert row["epsilon_lower"] <= row["epsilon_upper"]


def test_projection_skipped_is_caught_by_the_exact_invariant_check() -> None:
    got = _checks("gaussian_no_projection", "semi-dp", "{ mu = 1.0 }", draws=2_000, seed=SEED)
    assert isinstance(got["invariant-preserved"], Refuted)
    assert got["report"]["verdict"] == "fails"  # type: ignore[index]
    twin = _checks("gaussian_exact", "semi-dp", "{ mu = 1.0 }", draws=2_000, seed=SEED)
    assert isinstance(twin["invariant-preserved"], Verified)


def test_semi_dp_pairs_conform_and_include_the_largest_l2_direction() -> None:
    sec = _checks("gaussian_exact", "semi-dp", "{ mu = 1.0 }", draws=200)["report"]["audit_lower_bound"]  # type: ignore[index]
    a = np.array([[1, 1, 1, 0, 0, 0, 0, 0, 0], [0, 0, 0, 1, 1, 1, 0, 0, 0], [0, 0, 0, 0, 0, 0, 1, 1, 1],
                  [1, 0, 0, 1, 0, 0, 1, 0, 0], [0, 1, 0, 0, 1, 0, 0, 1, 0], [0, 0, 1, 0, 0, 1, 0, 0, 1]])  # fmt: skip
    for p in sec["pairs"]:
        x, xp = np.array(p["x"]), np.array(p["x_prime"])
        assert (a @ x == a @ np.array(TABLE)).all() and (a @ xp == a @ x).all() and min(x.min(), xp.min()) >= 0
        assert 0 < p["distance"] <= 3
    assert max(p["l2_squared"] for p in sec["pairs"]) == 6  # a 3-cycle: where Prop. 32's l2 = 2 is wrong


def test_cli_needs_allow_code(capsys: pytest.CaptureFixture[str]) -> None:
    spec = str(ROOT / "specs" / "implementation-gaussian-3x3.toml")
    assert main(["audit", spec]) == 2
    err = capsys.readouterr().err
    assert "mechanism.callable" in err and "--allow-code" in err and "Traceback" not in err


EXAMPLE_SPEC = str(ROOT / "specs" / "implementation-gaussian-3x3.toml")
CLAIM_EPSILON = 4.8866  # mu = 1 at delta = 1e-6: the certified upper end of every row


def _example_report(tmp_path: Path, capsys: pytest.CaptureFixture[str], time_limit: str) -> dict[str, Any]:
    """``semidp audit`` of the example spec with ``--json --out``: exit 3 (a statistical audit never verifies)."""
    argv = ["audit", "--allow-code", "--json", "--time-limit", time_limit, "--out", str(tmp_path), EXAMPLE_SPEC]
    assert main(argv) == 3  # inconclusive, not verified
    rep: dict[str, Any] = json.loads(capsys.readouterr().out)
    assert rep["verdict"] == "inconclusive"
    checks = {c["name"]: c["outcome"] for c in rep["checks"]}
    assert checks["statistical-audit"] == checks["claim"] == "unknown"
    assert {"tradeoff_points", "epsilon_delta", "confidence", "draws", "pairs"} <= set(rep["audit_lower_bound"])
    assert (tmp_path / "implementation-gaussian-3x3.json").is_file() and (tmp_path / "implementation-gaussian-3x3.md")
    return rep


def test_cli_example_spec_not_refuted_with_report_and_plot(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """With time to spare (--time-limit 600; the audit needs seconds): every planned draw is made, the measured
    lower bound lies strictly between 0 and the claim's epsilon, the invariant holds on every release, and both
    plots are drawn."""
    rep = _example_report(tmp_path, capsys, "600")
    checks = {c["name"]: c["outcome"] for c in rep["checks"]}
    assert checks["invariant-preserved"] == "verified"
    sec = rep["audit_lower_bound"]
    assert sec["stop"] == "samples" and sec["draws"]["drawn_per_side"] == sec["draws"]["per_side"] == 50_000
    row = sec["epsilon_delta"][0]
    assert 0 < row["epsilon_lower"] < row["epsilon_upper"] == pytest.approx(CLAIM_EPSILON, abs=1e-3)
    assert row["epsilon_lower"] == pytest.approx(1.92670, abs=1e-5)  # seeded per (pair, side, batch): any machine
    assert "plots_note" not in rep  # every plot drawn
    assert set(rep["plots"]) == {"implementation-gaussian-3x3.privacy.png", "implementation-gaussian-3x3.audit.png"}
    assert (tmp_path / "implementation-gaussian-3x3.audit.png").read_bytes()[:4] == b"\x89PNG"


def test_cli_example_spec_with_its_budget_spent_reports_what_it_has(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """--time-limit spent at once, with the hard guard moved out of the way (so the cooperative stop is tested, the
    same on any machine): no draw is made and the report says the budget stopped them, nothing beyond the claim is
    reported (lower bound 0: no evidence), and the plots that found no time are named as skipped, not drawn."""
    monkeypatch.setattr(supervisor, "hard_deadline", lambda time_limit: 600.0)  # the guard: far away
    monkeypatch.setattr(spec_job, "PLOT_SECONDS", math.inf)  # no plot fits before the hard stop
    rep = _example_report(tmp_path, capsys, "0.001")
    audit_check = next(c for c in rep["checks"] if c["name"] == "statistical-audit")
    assert "the time budget (--time-limit) ran out first" in audit_check["detail"]
    sec = rep["audit_lower_bound"]
    assert sec["stop"] == "budget" and sec["refuted"] is False
    assert (sec["draws"]["drawn_per_side"], sec["draws"]["per_side"]) == (0, 50_000)
    inv = next(c for c in rep["checks"] if c["name"] == "invariant-preserved")
    assert (inv["outcome"], inv["status"]) == ("unknown", "skip")  # no release was drawn: nothing passes
    assert rep["verdict"] == "inconclusive"
    row = sec["epsilon_delta"][0]
    assert row["epsilon_lower"] == 0.0 and row["epsilon_upper"] == pytest.approx(CLAIM_EPSILON, abs=1e-3)
    assert "plots" not in rep and rep["plots_note"] == (
        "not drawn: the budget ran out before 2 of 2 plot(s) (the verdict does not depend on them)"
    )
    assert not list(tmp_path.glob("*.png"))


def test_prerecorded_samples_need_no_code(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    x, xp = (1, 1, 0, 0, 0, 1, 1, 0, 0), (0, 1, 1, 1, 0, 0, 1, 0, 0)  # a 3-cycle apart: same margins
    rng = np.random.default_rng(3)
    np.save(tmp_path / "x.npy", gaussian_sigma_halved(np.array(x), rng, size=20_000))
    np.save(tmp_path / "xp.npy", gaussian_sigma_halved(np.array(xp), rng, size=20_000))
    text = spec_text("gaussian_exact").replace('callable = "tests.planted_bugs:gaussian_exact"\n', "")
    text = text.replace(
        "draws = 20000",
        f'pairs = [{{ x = {list(x)}, x_prime = {list(xp)}, samples = {{ x = "x.npy", x_prime = "xp.npy" }} }}]',
    )
    (tmp_path / "s.toml").write_text(text)
    assert main(["audit", "--json", str(tmp_path / "s.toml")]) == 1  # refuted, and nothing imported
    rep = json.loads(capsys.readouterr().out)
    assert rep["audit_lower_bound"]["pairs"][0]["origin"] == "spec"
    bad = text.replace(f"x_prime = {list(xp)}", "x_prime = [1, 1, 0, 0, 0, 1, 0, 1, 0]")  # margins differ
    (tmp_path / "bad.toml").write_text(bad)
    assert main(["audit", str(tmp_path / "bad.toml")]) == 2
    assert "mechanism.pairs[0]" in capsys.readouterr().err


def test_loop_only_callable_and_bad_release_shape(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    got = _checks("gaussian_loop_only", "semi-dp", "{ mu = 1.0 }", draws=300, max_pairs=1)
    assert isinstance(got["statistical-audit"], Unknown) and isinstance(got["invariant-preserved"], Verified)
    (tmp_path / "f.py").write_text("import numpy as np\ndef f(h, rng):\n    return np.zeros(3)\n")
    text = spec_text("x").replace('"tests.planted_bugs:x"', '"f.py:f"')
    (tmp_path / "s.toml").write_text(text)
    assert main(["audit", "--allow-code", str(tmp_path / "s.toml")]) == 2
    err = capsys.readouterr().err
    assert "mechanism.callable" in err and "shape (3,)" in err


def test_clopper_pearson_upper_bound_exact_values() -> None:
    # k = 0: 1 - level^(1/n) exactly; a wrong twin (the normal approximation, 0 at k = 0) is rejected
    assert float(cp_upper(0, 100, 0.05)) == pytest.approx(1 - 0.05 ** (1 / 100), rel=1e-9)
    assert float(cp_upper(100, 100, 0.05)) == 1.0
    # k = n - 1: upper bound solves 1 - u^n = ... ; check the defining tail P(Bin(n, u) <= k) = level
    from scipy.stats import binom

    u = float(cp_upper(7, 50, 0.01))
    assert binom.cdf(7, 50, u) == pytest.approx(0.01, rel=1e-6)
    assert binom.cdf(7, 50, 7 / 50 + 1.96 * math.sqrt(0.14 * 0.86 / 50)) > 0.01  # the Wald bound is too small


def test_epsilon_lower_bound_exact() -> None:
    assert epsilon_lower(0.05, 0.5, 0.0) == pytest.approx(math.log(10), rel=1e-15)
    assert epsilon_lower(0.05, 0.5, 0.0) <= math.log(10)  # rounded down
    assert epsilon_lower(0.3, 0.3, 0.0) == pytest.approx(math.log(0.7 / 0.3))
    assert epsilon_lower(0.5, 0.5, 0.0) == 0.0


def test_exact_invariant_check_on_integer_releases() -> None:
    a = np.array([[1, 1, 0], [0, 1, 1]], dtype=np.int64)
    good = np.array([[2, 0, 1], [1, 1, 0]], dtype=np.int64)  # A y = (2, 1) = A (1, 1, 0)
    assert isinstance(exact_invariant_check(a, (1, 1, 0), good), Verified)
    bad = good.copy()
    bad[1, 2] += 1  # one count off: caught exactly
    assert isinstance(exact_invariant_check(a, (1, 1, 0), bad), Refuted)


def test_exact_invariant_check_does_not_overflow_at_int64_extremes() -> None:
    a = np.array([[1, 1]], dtype=np.int64)
    lo = np.iinfo(np.int64).min
    # (min, min) sums to -2^64 exactly, which int64 arithmetic would wrap to 0 = A (0, 0): not a keeper
    assert isinstance(exact_invariant_check(a, (0, 0), np.array([[lo, lo]], dtype=np.int64)), Refuted)
    assert isinstance(exact_invariant_check(a, (0, 0), np.array([[lo + 1, -(lo + 1)]], dtype=np.int64)), Verified)
