"""Every shipped spec: each claim comes back certified, refuted with a certificate, or explicitly unknown.

Cheap specs run in the main suite; those that search a(t) by integer program and prove it with z3, or draw
from an MCMC sampler, are marked slow.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from semidp.accountant.core.budget import Budget
from semidp.accountant.core.outcome import NotApplicable, Refuted, Skipped, Unknown, Verified
from semidp.verify.load import load
from semidp.verify.run_options import RunOptions
from semidp.verify.runner import audit
from tests.peer_specs import shipped_spec_params

SLOW = {
    "census-2020-dhc-persons-pr",  # the four DHC specs' figures are checked in tests/test_measurements_table.py
    "census-2020-dhc-persons-us",
    "census-2020-dhc-units-pr",
    "census-2020-dhc-units-us",
    "census-2020-pl94-persons-us",
    "census-2020-pl94-persons-us-design",  # its design: tests/test_design.py
    "delinquent-children-4x4-generalized-gaussian",
    "delinquent-children-4x4-generalized-laplace",
    "intersecting-constraints-generalized-laplace",
    "table-2x13-k-norm",
    "table-3x7-k-norm",
    "table-4x4-k-norm",
    "table-5x5-k-norm",
}
#: Kinds that build and draw a mechanism keeping the invariant: they carry an exact invariant certificate.
BUILT = {"projected-gaussian", "projected-laplace", "k-norm", "generalized-laplace", "generalized-gaussian"}


@pytest.mark.parametrize("path", shipped_spec_params(SLOW))
def test_every_claim_names_its_certificate_or_says_unknown(path: Path) -> None:
    spec = load(str(path))
    result = audit(spec, seed=1, budget=Budget.of(120.0), options=RunOptions(allow_code=True))
    checks = result.typed.checks
    claims = [c for c in checks if c.name == "claim"]
    if spec.claim is not None:
        assert len(claims) == 1
    for c in claims:
        o = c.outcome
        if isinstance(o, (Verified, Refuted)):
            text = o.certificate if isinstance(o, Verified) else o.counterexample
            # a black-box audit's refutation names its statistical certificate (Clopper-Pearson at a confidence)
            statistical = spec.mechanism.kind == "implementation" and "Clopper-Pearson" in text and "confidence" in text
            assert "certified (" in text or "lower bound" in text or statistical, f"{path.stem}: {text}"
        else:
            assert isinstance(o, Unknown) and c.detail.startswith("inconclusive:"), f"{path.stem}: {c.detail}"
    if spec.mechanism.kind in BUILT:
        cert = [c for c in checks if c.name == "invariant-certified"]
        assert len(cert) == 1 and isinstance(cert[0].outcome, Verified), f"{path.stem}: {cert}"
        assert "certified (" in cert[0].detail
    for c in checks:
        if c.name == "invariant-certified":
            assert isinstance(c.outcome, (Verified, NotApplicable, Skipped)), f"{path.stem}: {c.detail}"


@pytest.mark.slow
def test_a_at_table_beyond_16_cells_is_proved_by_z3() -> None:
    result = audit(load("specs/table-5x5-k-norm.toml"), seed=1, budget=Budget.of(120.0))
    a_check = next(c for c in result.typed.checks if c.name == "semi-adjacent-parameter")
    assert "certified (z3, exact integers)" in a_check.detail
