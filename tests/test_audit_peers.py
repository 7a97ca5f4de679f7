"""Audits of real DP libraries (specs/audit-*.toml) and the evidence a refutation names (verify.audit_evidence).

The library specs need the ``audit-peers`` extra; their tests skip when a library is missing.
"""

from __future__ import annotations

import dataclasses
from importlib.util import find_spec
from pathlib import Path

import numpy as np
import pytest

from semidp.accountant.core.budget import Budget
from semidp.accountant.core.outcome import Refuted, Unknown, Verified
from semidp.verify.audit_evidence import refutation_evidence
from semidp.verify.audit_pairs import AuditPair, pair_statistics
from semidp.verify.kinds.implementation import ImplementationSpec
from semidp.verify.load import load, loads
from semidp.verify.run_options import RunOptions
from semidp.verify.runner import audit
from semidp.verify.threshold_audit import Candidate, Measured, Statistic
from tests.planted_bugs import spec_text

SPECS = Path(__file__).resolve().parent.parent / "specs"
X = (1, 1, 0, 0, 0, 1, 1, 0, 0)
XP = (0, 1, 0, 1, 0, 1, 1, 0, 0)  # one record moved: |x - x'|_1 = 2


def _measured(stat: str, tau: float) -> Measured:
    return Measured(Candidate(0, stat, tau, 0.1), 0.0, 0.0, 0.0, 0.0, 1.0, 100)


def _l1(pair: AuditPair):  # type: ignore[no-untyped-def]
    return next(s for s in pair_statistics(pair, None) if s.name == "l1-ratio")


def test_the_l1_ratio_carries_its_exact_range() -> None:
    stat = _l1(AuditPair(X, XP, "spec", 1))
    assert stat.exact_range == (-2.0, 2.0)
    y = np.random.default_rng(1).laplace(size=(2000, 9)) * 3 + np.array(X)
    s = stat.score(y)
    assert s.min() >= -2.0 - 1e-12 and s.max() <= 2.0 + 1e-12


def test_a_refutation_on_values_outside_the_exact_range_says_they_are_impossible() -> None:
    # A statistic that reads cell 0 and is claimed to lie in [-2, 2]; x' has 30 releases at 2 + 4.4e-16
    # (what float rounding makes of the l1 ratio), x has none.
    stat = Statistic("l1-ratio", lambda y: np.asarray(y[:, 0], dtype=np.float64), exact_range=(-2.0, 2.0))
    rng = np.random.default_rng(2)
    x = rng.uniform(-2.0, 2.0, size=(1000, 9))
    xp = rng.uniform(-2.0, 2.0, size=(1000, 9))
    xp[:30, 0] = 2.0 + 4.4e-16
    ev = refutation_evidence(0, _measured("l1-ratio", 2.0), stat, x, xp)
    assert ev.impossible and ev.event == "s > tau"
    assert ev.rate_x == 0.0 and ev.rate_x_prime == pytest.approx(0.03)
    assert ev.outside_x == 0 and ev.outside_x_prime == 30
    assert [e.side for e in ev.examples] == ["x_prime"] * 3
    assert ev.examples[0].statistic == repr(2.0 + 4.4e-16)
    assert ev.to_json()["examples"][0] == {
        "side": "x_prime",
        "statistic": repr(2.0 + 4.4e-16),
        "release": [repr(float(v)) for v in xp[0]],
    }
    assert "impossible for the claimed law" in ev.sentence() and "[Mir12]" in ev.sentence()
    # Inside the range the same kind of event is evidence, not an impossibility.
    ev_in = refutation_evidence(0, _measured("l1-ratio", 1.9), stat, x, xp)
    assert not ev_in.impossible and "impossible" not in ev_in.sentence()
    # Without an exact range nothing is called impossible.
    plain = refutation_evidence(0, _measured("l1-ratio", 2.0), Statistic("l1-ratio", stat.score), x, xp)
    assert not plain.impossible and plain.outside_x_prime == 0


def test_the_rarer_side_of_the_test_is_the_event_shown() -> None:
    stat = _l1(AuditPair(X, XP, "spec", 1))
    rng = np.random.default_rng(3)
    x = np.array(X, dtype=np.float64) + rng.laplace(size=(4000, 9))
    xp = np.array(XP, dtype=np.float64) + rng.laplace(size=(4000, 9))
    low = refutation_evidence(0, _measured("l1-ratio", -1.9), stat, x, xp)
    assert low.event == "s <= tau"
    assert low.rate_x == pytest.approx(float(np.mean(stat.score(x) <= -1.9)))
    high = refutation_evidence(0, _measured("l1-ratio", 1.9), stat, x, xp)
    assert high.event == "s > tau" and high.rate_x_prime > high.rate_x


@pytest.mark.slow
def test_the_textbook_float_laplace_is_refuted_on_outputs_exact_arithmetic_forbids() -> None:
    res = audit(
        load(str(SPECS / "audit-textbook-laplace.toml")),
        seed=7,
        budget=Budget.of(300.0),
        options=RunOptions(allow_code=True),
    )
    check = next(c for c in res.typed.checks if c.name == "statistical-audit")
    assert isinstance(check.outcome, Refuted)
    text = check.outcome.counterexample
    assert "outside [-2, 2]" in text and "[Mir12]" in text


PEERS = [
    ("audit-opendp-discrete-gaussian", "opendp"),
    ("audit-opendp-discrete-laplace", "opendp"),
    ("audit-diffprivlib-laplace", "diffprivlib"),
    ("audit-diffprivlib-gaussian", "diffprivlib"),
    ("audit-diffprivlib-gaussian-analytic", "diffprivlib"),
]


#: Specs whose release functions draw from the operating system's entropy, not from the audit's rng.
OS_ENTROPY = {"audit-opendp-discrete-gaussian", "audit-opendp-discrete-laplace", "audit-diffprivlib-gaussian-analytic"}


@pytest.mark.slow
@pytest.mark.parametrize(("stem", "library"), PEERS, ids=[p[0] for p in PEERS])
def test_a_correct_library_mechanism_is_not_refuted_and_keeps_the_margins(stem: str, library: str) -> None:
    pytest.importorskip(library)
    spec = load(str(SPECS / f"{stem}.toml"))
    assert isinstance(spec.mechanism, ImplementationSpec)
    spec = dataclasses.replace(spec, mechanism=dataclasses.replace(spec.mechanism, draws=10_000))
    res = audit(spec, seed=1, budget=Budget.of(300.0), options=RunOptions(allow_code=True))
    checks = {c.name: c.outcome for c in res.typed.checks}
    assert isinstance(checks["statistical-audit"], Unknown), checks["statistical-audit"]
    assert "not refuted at this sample size" in str(checks["statistical-audit"])
    assert isinstance(checks["invariant-preserved"], Verified)
    # OpenDP, and diffprivlib's GaussianAnalytic built once without a random_state, draw from the operating
    # system's entropy (secrets.SystemRandom): the audit finds their draws are not reproducible by --seed.
    assert res.report["audit_lower_bound"]["reproducible"] is (stem not in OS_ENTROPY)


def test_the_peer_libraries_are_an_optional_extra_only() -> None:
    text = (SPECS.parent / "pyproject.toml").read_text()
    deps = text.split("[project.optional-dependencies]")[0]
    assert "opendp" not in deps and "diffprivlib" not in deps
    assert 'audit-peers = ["opendp' in text
    assert find_spec("semidp") is not None


def _audit_planted(function: str, draws: int, *, classifier: bool = True) -> dict[str, object]:
    text = spec_text(function, framework="dp", claim="{ mu = 1.0 }", draws=draws, seed=1)
    text = text.replace("tests.planted_bugs:", "tests.planted_audit_bugs:")
    key = "all" if classifier else "likelihood-ratio"
    text = text.replace('kind = "implementation"', f'kind = "implementation"\nstatistics = "{key}"')
    r = audit(loads(text), options=RunOptions(allow_code=True))
    return {c.name: c.outcome for c in r.typed.checks} | {"report": r.report}


def test_the_classifier_reads_a_data_dependent_scale_far_better_than_the_fixed_statistics() -> None:
    # Measured at seed 1, 20000 draws per side: the classifier's point lies 0.053 below the claimed curve, the
    # projection's (the best likelihood-ratio statistic) 0.017; the epsilon lower bounds 2.27 vs 1.69.
    got = _audit_planted("scale_from_data", 20_000)
    assert isinstance(got["statistical-audit"], Refuted), got["statistical-audit"]
    pts = got["report"]["audit_lower_bound"]["tradeoff_points"]  # type: ignore[index]
    clf = min(p["beta"] - p["claimed_beta"] for p in pts if p["statistic"] == "classifier")
    without = _audit_planted("scale_from_data", 20_000, classifier=False)
    pts_lr = without["report"]["audit_lower_bound"]["tradeoff_points"]  # type: ignore[index]
    assert {p["statistic"] for p in pts_lr} <= {"projection", "l1-ratio"}
    fixed = min(p["beta"] - p["claimed_beta"] for p in pts_lr)
    assert clf < 2.0 * fixed < 0.0
    lower = got["report"]["audit_lower_bound"]["epsilon_delta"][0]["epsilon_lower"]  # type: ignore[index]
    lower_lr = without["report"]["audit_lower_bound"]["epsilon_delta"][0]["epsilon_lower"]  # type: ignore[index]
    assert lower > lower_lr + 0.3


def test_the_classifier_does_not_refute_the_correct_twin() -> None:
    got = _audit_planted("scale_fixed", 20_000)
    assert isinstance(got["statistical-audit"], Unknown), got["statistical-audit"]
    row = got["report"]["audit_lower_bound"]["epsilon_delta"][0]  # type: ignore[index]
    assert row["epsilon_lower"] <= row["epsilon_upper"]


def test_an_unknown_statistics_value_is_an_invalid_spec_naming_the_key() -> None:
    from semidp.accountant.core.errors import InvalidSpec

    text = spec_text("scale_fixed", framework="dp").replace("tests.planted_bugs:", "tests.planted_audit_bugs:")
    with pytest.raises(InvalidSpec, match="mechanism.statistics"):
        loads(text.replace('kind = "implementation"', 'kind = "implementation"\nstatistics = "sniper"'))
