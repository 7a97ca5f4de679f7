"""Independent re-certification of reported (epsilon, delta) pairs (verify.certify)."""

from __future__ import annotations

import pytest

from semidp.accountant.core.outcome import Refuted, Skipped, Verified
from semidp.accountant.guarantees.conversion_routes import EpsilonDelta
from semidp.accountant.guarantees.conversions import approx_dp_to_tradeoff, tradeoff_to_approx_dp
from semidp.accountant.guarantees.definitions import ZCDP, ApproxDP
from semidp.accountant.guarantees.relations import Replace
from semidp.accountant.guarantees.semidp import NoFiniteGuarantee
from semidp.verify.certify import certify_entry, certify_summary
from semidp.verify.report import PLD_CERTIFICATE, GuaranteeSummary, PldEntry


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


def test_every_reported_value_is_accounted_for_pld_entries_labelled_with_their_bracket() -> None:
    """Issue 23, item 2: the census report showed 6 (epsilon, delta) values and the check spoke of 4."""
    g = ZCDP(2.56, Replace())
    s = GuaranteeSummary.of(g, [1e-10])
    routes = {e.method: e.epsilon for e in s.epsilon_delta}
    assert set(routes) == {"bun-steinke", "canonne-kamath-steinke"}
    cks = routes["canonne-kamath-steinke"]
    assert cks is not None
    pld = s.with_pld((PldEntry(1e-10, cks - 0.5, cks - 0.3),))
    assert [e["method"] for e in pld.to_json()["epsilon_delta"]] == ["bun-steinke", "canonne-kamath-steinke", "pld"]
    assert pld.to_json()["epsilon_delta"][2] == {
        "delta": 1e-10,
        "epsilon": cks - 0.3,
        "method": "pld",
        "bracket": {"lower": cks - 0.5, "upper": cks - 0.3},
    }
    out = certify_summary([(pld, g), (pld, g)])
    assert isinstance(out, Verified)
    assert out.certificate.startswith("6 reported (epsilon, delta) value(s): 4 re-certified at 80 digits")
    assert f"2 PLD value(s) certified by {PLD_CERTIFICATE}" in out.certificate
    # a PLD lower end above a re-certified upper bound, or an unordered bracket, is a bug
    above = s.with_pld((PldEntry(1e-10, cks + 1e-9, cks + 1),))
    assert isinstance(certify_summary([(above, g)]), Refuted)
    unordered = s.with_pld((PldEntry(1e-10, cks - 0.3, cks - 0.5),))
    assert isinstance(certify_summary([(unordered, g)]), Refuted)
    # with nothing re-certified, the PLD values are still named, and the check is skipped, not passed
    none = GuaranteeSummary(s.relation, s.forms, ()).with_pld((PldEntry(1e-10, 1.0, 2.0),))
    skipped = certify_summary([(none, g)])
    assert isinstance(skipped, Skipped) and "1 PLD value(s)" in skipped.reason


def test_extra_fields_never_shadow_typed_ones() -> None:
    """``extra`` used to override ``epsilon_delta`` in the JSON, hiding the typed entries from the certifier."""
    s = GuaranteeSummary.of(ZCDP(0.5, Replace()), [1e-6])
    for key in ("epsilon_delta", "zcdp", "relation", "framework"):
        with pytest.raises(ValueError, match="shadow typed fields"):
            s.with_extra(**{key: []})
    assert s.with_extra(rho_exact="1/2").to_json()["rho_exact"] == "1/2"
