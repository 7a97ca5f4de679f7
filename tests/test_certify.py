"""Independent re-certification of reported (epsilon, delta) pairs (verify.certify)."""

from __future__ import annotations

from semidp.accountant.conversion_routes import EpsilonDelta
from semidp.accountant.conversions import approx_dp_to_tradeoff, tradeoff_to_approx_dp
from semidp.accountant.guarantees import ApproxDP
from semidp.accountant.outcome import Refuted, Skipped, Verified
from semidp.accountant.relations import Replace
from semidp.accountant.semidp import NoFiniteGuarantee
from semidp.verify.certify import certify_entry, certify_summary
from semidp.verify.report import GuaranteeSummary


def test_tradeoff_profile_is_recertified_at_the_vertices_and_catches_a_low_epsilon() -> None:
    g = approx_dp_to_tradeoff(ApproxDP(1.0, 1e-6))
    r = tradeoff_to_approx_dp(g, 2e-6)  # f_{1, 1e-6} at delta = 2e-6: epsilon just below 1
    assert r is not None and 0.99 < r.epsilon < 1.0
    assert certify_entry(g, EpsilonDelta(2e-6, r.epsilon, "f-dp-profile")) is True
    assert certify_entry(g, EpsilonDelta(2e-6, 0.99, "f-dp-profile")) is False  # below the truth: caught
    s = GuaranteeSummary.of(g, [2e-6])
    assert isinstance(certify_summary([(s, g)]), Verified)
    bad = GuaranteeSummary(s.relation, s.forms, (EpsilonDelta(2e-6, 0.5, "f-dp-profile"),))
    assert isinstance(certify_summary([(bad, g)]), Refuted)


def test_nothing_to_certify_is_skipped_not_passed() -> None:
    g = NoFiniteGuarantee("the state totals differ between adjacent datasets", Replace())
    out = certify_summary([(GuaranteeSummary.of(g, [1e-10]), g)])
    assert isinstance(out, Skipped)
