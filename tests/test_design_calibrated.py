"""``[design]`` on the calibrated kinds (verify/design_calibrated.py; contract: specs/README.md "[design]").

Golden values are computed here independently of semidp: the analytic Gaussian calibration [BW18, Thm. 8] at the
Semi-DP sensitivity, with scipy's normal CDF and brentq (delta(eps) = Phi(D/(2s) - eps s/D) - e^eps Phi(-D/(2s) -
eps s/D), D = Delta_2, s = sigma), and the Laplace closed form b = Delta_1/epsilon.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from scipy.optimize import brentq
from scipy.stats import norm

from semidp.accountant import InvalidSpec
from semidp.accountant.core.budget import Budget
from semidp.verify.cli import main
from semidp.verify.load import loads
from semidp.verify.render import render_markdown, render_text
from semidp.verify.runner import audit

#: 4 cells under their total: a(t) = 1, S = {e_i - e_j}: Delta_2 = sqrt(2), Delta_1 = 2.
TOTAL = """
version = 1
name = "design-calibrated"
[data]
features = [{ name = "cell", levels = 4 }]
table = [1, 1, 1, 97]
[invariant]
kind = "total"
[mechanism]
kind = "gaussian"
[design]
target = { epsilon = 1.0, delta = 1e-6 }
[audit]
samples = 200
seed = 1
"""

#: A 2 x 2 table under both one-way margins: a(t) = 3 (the report's witness: Hamming distance 3 to the nearest
#: conforming dataset); every difference of two conforming histograms is a multiple of the move (1, -1, -1, 1), and
#: the Semi-DP pairs at this table differ by one move: Delta_2 = 2, while a plain replace-one pair has sqrt(2).
MARGINS = """
version = 1
name = "design-calibrated-margins"
[data]
features = [{ name = "A", levels = 2 }, { name = "B", levels = 2 }]
table = [3, 1, 2, 4]
[invariant]
kind = "margins"
margins = [["A"], ["B"]]
[mechanism]
kind = "gaussian"
[design]
target = { epsilon = 1.0, delta = 1e-6 }
[audit]
samples = 200
seed = 1
"""


def bw18_delta(sigma: float, sens: float, eps: float) -> float:
    """delta(eps) of the Gaussian mechanism with noise sigma at L2 sensitivity ``sens`` [BW18, Thm. 8]."""
    a = sens / (2 * sigma)
    b = eps * sigma / sens
    return float(norm.cdf(a - b) - math.exp(eps) * norm.cdf(-a - b))


def bw18_sigma(sens: float, eps: float, delta: float) -> float:
    """The smallest sigma meeting (eps, delta) at ``sens``: the root of delta(eps) = delta (decreasing in sigma)."""
    return float(brentq(lambda s: bw18_delta(s, sens, eps) - delta, 1e-3, 1e4, xtol=1e-14, rtol=1e-15))


def _check(res: object, name: str) -> dict[str, object]:
    return next(c for c in res.report["checks"] if c["name"] == name)  # type: ignore[attr-defined]


@pytest.mark.parametrize(("text", "sens", "radius"), [(TOTAL, math.sqrt(2), 1), (MARGINS, 2.0, 3)])
def test_gaussian_design_meets_the_target_and_is_tight(text: str, sens: float, radius: int) -> None:
    res = audit(loads(text), budget=Budget.of(120.0))
    assert res.report["semi_adjacent_parameter"]["value"] == radius
    d = res.report["design"]
    assert res.report["mechanism"]["l2_sensitivity"] == pytest.approx(sens, rel=1e-12)
    golden = bw18_sigma(sens, 1.0, 1e-6)
    sigma = d["scale"]
    assert d["noise_parameter"] == "sigma" and sigma == res.report["mechanism"]["sigma"]
    # certified: never less noise than the exact calibration; and within 1e-9 of it
    assert golden * (1 - 1e-12) <= sigma <= golden * (1 + 1e-9)
    assert bw18_delta(sigma, sens, 1.0) <= 1e-6 * (1 + 1e-9)
    assert bw18_delta(sigma * (1 - 1e-3), sens, 1.0) > 1e-6 * 1.01  # less noise fails the target
    assert d["achieved"]["delta_at_target_epsilon"] <= 1e-6 and d["achieved"]["epsilon"] == 1.0
    assert d["tight"] is True and "proven: sigma x 0.999" in d["tightness"]
    assert (d["target"], d["framework"], d["vary"], d["iterations"]) == (
        {"epsilon": 1.0, "delta": 1e-6},
        "semi-dp",
        "scale",
        1,
    )
    assert d["expected_error"]["exact"] == pytest.approx(
        sigma * math.sqrt(2) * math.gamma(2.5) / math.gamma(2)
    )  # E chi_4
    assert _check(res, "design")["status"] == "pass" and res.verdict == "holds"
    text_out, md = render_text(res.typed), render_markdown(res.typed)
    assert f"sigma = {sigma:.6g}" in text_out and "## Design" in md


def test_gaussian_zcdp_and_mu_targets_are_exact_closed_forms() -> None:
    res = audit(loads(TOTAL.replace("epsilon = 1.0, delta = 1e-6", "zcdp = 0.5")), budget=Budget.of(120.0))
    d = res.report["design"]
    assert d["scale"] == pytest.approx(math.sqrt(2), rel=1e-12) and d["scale"] >= math.sqrt(2)  # mu = 1
    assert d["achieved"]["zcdp"] <= 0.5 and d["tightness"].startswith("exact")
    res = audit(loads(TOTAL.replace("epsilon = 1.0, delta = 1e-6", "mu = 0.5")), budget=Budget.of(120.0))
    assert res.report["design"]["scale"] == pytest.approx(2 * math.sqrt(2), rel=1e-12)
    assert _check(res, "design")["status"] == "pass"


def test_laplace_design_is_delta1_over_epsilon() -> None:
    res = audit(
        loads(TOTAL.replace('"gaussian"', '"laplace"').replace(", delta = 1e-6", "").replace("1.0", "0.5")),
        budget=Budget.of(120.0),
    )
    d = res.report["design"]
    assert (d["noise_parameter"], d["scale"], d["achieved"]["epsilon"]) == ("b", 4.0, 0.5)  # b = 2/0.5
    assert d["tight"] is True and _check(res, "design")["status"] == "pass"
    assert d["expected_error"]["exact"] == pytest.approx(2 * 4.0**2 * 4)  # 2 b^2 k, k = 4 cells


@pytest.mark.parametrize(
    ("old", "new", "keys"),
    [
        ('kind = "gaussian"', 'kind = "gaussian"\nmu = 1.0', ["design.target", "mechanism.mu"]),
        ('kind = "gaussian"', 'kind = "gaussian"\nscale = 2.0', ["design.target", "mechanism.scale"]),
        ("[audit]", 'vary = "allocation"\n[audit]', ["design.vary"]),
        ("[audit]", 'framework = "dp"\n[audit]', ["design.framework", "ignores the invariant"]),
        ('kind = "gaussian"', 'kind = "laplace"', ["design.target", "pure {epsilon}"]),
        ("epsilon = 1.0, delta = 1e-6", "rdp = { alpha = 2, epsilon = 1 }", ["design.target", "'rdp'"]),
        ("delta = 1e-6", "delta = 0", ["design.target.delta"]),
        ("epsilon = 1.0, delta = 1e-6", "mu = 0", ["design.target.mu", "> 0"]),
    ],
)
def test_design_problems_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], old: str, new: str, keys: list[str]
) -> None:
    assert old in TOTAL
    text = TOTAL.replace(old, new)
    with pytest.raises(InvalidSpec) as e:
        loads(text)
    assert all(k in str(e.value) for k in keys), str(e.value)
    p = tmp_path / "s.toml"
    p.write_text(text)
    assert main(["audit", str(p)]) == 2
    assert keys[0] in capsys.readouterr().err


def test_subspace_claim_with_design_exits_2() -> None:
    text = TOTAL.replace('"gaussian"', '"projected-laplace"').replace(", delta = 1e-6", "")
    text += '[claim]\nframework = "subspace-dp"\nguarantee = { epsilon = 1.0 }\n'
    with pytest.raises(InvalidSpec, match="design.framework"):
        loads(text)


def test_design_on_a_lattice_kind_still_exits_2() -> None:
    text = TOTAL.replace('kind = "gaussian"', 'kind = "generalized-laplace"').replace(", delta = 1e-6", "")
    with pytest.raises(InvalidSpec, match=r"design: \[design\] is for workload specs .* and the calibrated kinds"):
        loads(text)
