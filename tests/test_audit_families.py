"""Black-box audits of the noise families the projection statistic reads weakly (Step 12, item 4).

Each family has a planted bug and its correct twin in :mod:`tests.planted_audit_bugs`: a discrete Gaussian
with sigma^2 too small (lattice noise), a K-norm sampler with the wrong ball, a clamp that leaks, and P+ on an
under-noised base. Audited with ``mechanism.statistics = "all"`` (the likelihood-ratio statistics of the usual
families and the classifier, chosen on the selection half), seed 1 and 10**4 draws per side (one look, a few
seconds each): every bug is refuted, by the statistic recorded here, and every twin is "not refuted at this
sample size" with its lower bound below its claim.
"""

from __future__ import annotations

import pytest

from semidp.accountant.core.budget import Budget
from semidp.accountant.core.outcome import Refuted, Unknown, Verified
from semidp.verify.load import loads
from semidp.verify.run_options import RunOptions
from semidp.verify.runner import audit
from tests.planted_bugs import spec_text

DRAWS = 10_000
SEED = 1

#: (bug, twin, framework, claim, statistic that refutes the bug at SEED and DRAWS, extra [mechanism] keys).
FAMILIES = [
    ("discrete_gaussian_small", "discrete_gaussian_exact", "dp", "{ zcdp = 0.5 }", "classifier", ""),
    ("knorm_wrong_ball", "knorm_right_ball", "semi-dp", "{ epsilon = 1.0 }", "l1-ratio", ""),
    ("laplace_clamped_noise", "laplace_clamped_output", "dp", "{ epsilon = 1.0 }", "projection", ""),
    # P+ is solved by ADMM to a KKT residual of 1e-9 relative: the margins hold to about 1e-8, so say so.
    ("pplus_under_noised", "pplus_exact", "semi-dp", "{ mu = 1.0 }", "classifier", "invariant_tolerance = 1e-6\n"),
]


def _audit(function: str, framework: str, claim: str, extra: str) -> tuple[dict[str, object], object, object]:
    text = spec_text(function, framework=framework, claim=claim, draws=DRAWS, seed=SEED)
    text = text.replace("tests.planted_bugs:", "tests.planted_audit_bugs:")
    text = text.replace("[claim]", f'statistics = "all"\n{extra}[claim]')
    r = audit(loads(text), options=RunOptions(allow_code=True), budget=Budget.of(300))
    checks = {c.name: c.outcome for c in r.typed.checks}
    return r.report["audit_lower_bound"], checks["statistical-audit"], checks["invariant-preserved"]


@pytest.mark.parametrize(
    ("bug", "twin", "framework", "claim", "statistic", "extra"), FAMILIES, ids=[f[0] for f in FAMILIES]
)
def test_planted_bug_refuted_and_twin_not(
    bug: str, twin: str, framework: str, claim: str, statistic: str, extra: str
) -> None:
    sec, outcome, invariant = _audit(bug, framework, claim, extra)
    assert isinstance(outcome, Refuted), outcome
    assert isinstance(invariant, Verified)
    assert sec["refuted"] is True and sec["stop"] == "refuted"
    below = [p for p in sec["tradeoff_points"] if p["below_claim"]]  # type: ignore[attr-defined]
    worst = min(below, key=lambda p: p["beta"] - p["claimed_beta"])
    assert worst["statistic"] == statistic
    assert f"({statistic}," in outcome.counterexample  # the verdict names the statistic that refuted
    assert worst["beta"] < worst["claimed_beta"] and sec["epsilon_delta"][0]["epsilon_lower"] > 0  # type: ignore[index]

    sec, outcome, invariant = _audit(twin, framework, claim, extra)
    assert isinstance(outcome, Unknown), outcome
    assert isinstance(invariant, Verified)
    assert sec["refuted"] is False and sec["stop"] == "samples"
    assert sec["draws"]["drawn_per_side"] == DRAWS  # type: ignore[index]
    assert {p["statistic"] for p in sec["candidates"]} >= {"projection", "l1-ratio", "classifier"}  # type: ignore[attr-defined]
    row = sec["epsilon_delta"][0]  # type: ignore[index]
    assert 0 <= row["epsilon_lower"] <= row["epsilon_upper"]
