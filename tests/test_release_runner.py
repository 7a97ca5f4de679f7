"""The runner accounts the releases kinds describe (issue 23, item 1).

* The implementation kind describes a black box: its ``advertised`` is the spec's claim reported as a claim
  (``source``), its ``effective`` certifies nothing (``certified: false``, every epsilon ``null``) and carries
  the audit's lower bounds (``epsilon_lower``); the claim is refuted from the audit's proven lower bound only
  and never verified (the audit interpreter decides it, whatever the kind hands over).
* A calibrated kind's release states the shift S it was calibrated to: the sensitivity check compares it.
"""

from __future__ import annotations

from typing import Any

import pytest

from semidp.accountant.core.budget import Budget
from semidp.accountant.core.outcome import Refuted, Unknown, Verified
from semidp.accountant.data.invariants import Total
from semidp.accountant.guarantees.definitions import PureDP
from semidp.accountant.guarantees.relations import Replace
from semidp.accountant.releases.accounting import AuditEvidence
from semidp.accountant.releases.model import BlackBox, KnownGuarantee, Part, Release, Shift
from semidp.verify.context import KindResult
from semidp.verify.load import loads
from semidp.verify.run_options import RunOptions
from semidp.verify.runner import (
    BLACK_BOX_REASON,
    CLAIM_SOURCE,
    accounted,
    assemble,
    audit,
    build_context,
    calibrated_to_exact,
)
from semidp.verify.sensitivity_report import Refusal, SensitivityRefused, SensitivitySection
from tests.planted_bugs import spec_text

BOX_SPEC = """
version = 1
name = "box"
[data]
features = [{ name = "A", levels = 3 }]
adjacency = "replace-one"
table = [1, 2, 0]
[invariant]
kind = "none"
[mechanism]
kind = "implementation"
callable = "m.py:f"
[claim]
framework = "dp"
guarantee = { epsilon = 1.0 }
[report]
deltas = [1e-6, 1e-8]
"""


def _box(outcome: object) -> tuple[Any, KindResult]:
    ctx = build_context(loads(BOX_SPEC), seed=1, budget=Budget.of(30))
    claim = PureDP(1.0, Replace())
    part = KindResult(
        release=Release(Replace(), ctx.invariant, black_box=BlackBox(claim, "m.py:f")),
        audit=AuditEvidence(outcome, ((1e-6, 0.75), (1e-8, 0.5))),  # type: ignore[arg-type]
    )
    return ctx, part


def test_black_box_reports_the_claim_as_a_claim_and_certifies_nothing() -> None:
    ctx, part = _box(Unknown("not refuted at this sample size"))
    acct = accounted(ctx, part)
    assert acct.effective is None and acct.advertised == PureDP(1.0, Replace())
    adv, eff = acct.adv_summary.to_json(), acct.eff_summary.to_json()
    assert adv["source"] == CLAIM_SOURCE and adv["epsilon"] == 1.0
    assert eff["certified"] is False and eff["reason"] == BLACK_BOX_REASON and eff["framework"] == "dp"
    assert [e["epsilon"] for e in eff["epsilon_delta"]] == [None, None]
    assert eff["epsilon_lower"] == [
        {"delta": 1e-6, "epsilon": 0.75, "method": "statistical-audit"},
        {"delta": 1e-8, "epsilon": 0.5, "method": "statistical-audit"},
    ]
    assert [s.guarantee for s in acct.certify] == [PureDP(1.0, Replace())]  # the claim's conversions only
    r = assemble(ctx, part, reports_sensitivity=False).to_json()
    claim = next(c for c in r["checks"] if c["name"] == "claim")
    assert claim["outcome"] == "unknown" and r["verdict"] == "inconclusive"


@pytest.mark.parametrize(("given", "expected"), [(Refuted("below the curve"), "refuted"), (Verified("?"), "unknown")])
def test_black_box_claim_comes_from_the_audit_interpreter(given: object, expected: str) -> None:
    """A refutation stands; a 'verified' audit outcome (no lower bound can give one) is never trusted."""
    ctx, part = _box(given)
    r = assemble(ctx, part, reports_sensitivity=False).to_json()
    assert next(c for c in r["checks"] if c["name"] == "claim")["outcome"] == expected
    assert r["verdict"] == ("fails" if expected == "refuted" else "inconclusive")


def test_kind_result_is_a_release() -> None:
    g = PureDP(1.0, Replace())
    rel = Release(Replace(), Total(), (Part(KnownGuarantee(g)),), advertised=g)
    with pytest.raises(TypeError, match="give the release a kind describes"):
        KindResult(release=g)  # type: ignore[arg-type]
    with pytest.raises(TypeError):  # no guarantees beside the release: the runner computes them
        KindResult(release=rel, advertised=g)  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="black-box release comes with its statistical audit"):
        KindResult(release=rel, audit=AuditEvidence(Unknown("n")))
    with pytest.raises(TypeError, match="black-box release comes with its statistical audit"):
        KindResult(release=Release(Replace(), Total(), black_box=BlackBox(g, "m:f")))


def test_implementation_kind_end_to_end_contract() -> None:
    """The implementation kind through the runner: a planted bug refuted, its effective certifying nothing."""
    spec = loads(spec_text("gaussian_sigma_halved", framework="semi-dp", claim="{ mu = 1.0 }", draws=20_000, seed=1))
    res = audit(spec, options=RunOptions(allow_code=True))
    r = res.report
    assert res.effective is None and r["advertised"]["source"] == CLAIM_SOURCE and r["advertised"]["mu"] == 1.0
    assert r["effective"]["certified"] is False and all(e["epsilon"] is None for e in r["effective"]["epsilon_delta"])
    row = r["audit_lower_bound"]["epsilon_delta"][0]
    assert r["effective"]["epsilon_lower"][0] == {
        "delta": row["delta"],
        "epsilon": row["epsilon_lower"],
        "method": "statistical-audit",
    }
    assert row["epsilon_lower"] > 0
    checks = {c["name"]: c["outcome"] for c in r["checks"]}
    assert checks["claim"] == "refuted" and checks["conversions-certified"] == "verified"


def _sensitivity(l1: float, l2: float) -> SensitivitySection:
    """A sensitivity section with the given norms (the other fields do not enter the comparison)."""
    return SensitivitySection(l1, l2, l2, 1, 1, 1, None, 1, True, "test", "test", "test", Refusal("not computed"))


def test_calibrated_shift_is_compared_with_the_sensitivity_section() -> None:
    """A one-part release stating its exact shift on SemiAdjacent at a(t): a section that disagrees is a BUG."""
    ok = Verified("computed")
    assert calibrated_to_exact(_sensitivity(4.0, 2.0), ok, Shift(Replace(), 4.0, 4.0)) is ok
    bad = calibrated_to_exact(_sensitivity(4.0, 2.0), ok, Shift(Replace(), 4.0, 6.0))
    assert isinstance(bad, Refuted) and "calibrated to sqrt(6.0)" in bad.counterexample
    assert calibrated_to_exact(SensitivityRefused("too large", None), ok, Shift(Replace(), 4.0, 6.0)) is ok
    bad1 = calibrated_to_exact(_sensitivity(2.0, 2.0), ok, Shift(Replace(), 4.0, 4.0))
    assert isinstance(bad1, Refuted) and "l1 = 2.0" in bad1.counterexample
