"""Independent re-certification of reported (epsilon, delta) pairs (verify.certify)."""

from __future__ import annotations

import pytest

from semidp.accountant.core.outcome import Refuted, Skipped, Verified
from semidp.accountant.guarantees.conversion_routes import EpsilonDelta
from semidp.accountant.guarantees.conversions import approx_dp_to_tradeoff, tradeoff_to_approx_dp
from semidp.accountant.guarantees.definitions import ZCDP, ApproxDP
from semidp.accountant.guarantees.relations import Replace
from semidp.accountant.guarantees.semidp import NoFiniteGuarantee
from semidp.verify.certify import certify_entry, certify_summary, section_summaries
from semidp.verify.report import PLD_CERTIFICATE, Breakdown, GuaranteeSummary, PldEntry
from semidp.verify.sections import PlainDpSection


def test_tradeoff_profile_is_recertified_at_the_vertices_and_catches_a_low_epsilon() -> None:
    g = approx_dp_to_tradeoff(ApproxDP(1.0, 1e-6))
    r = tradeoff_to_approx_dp(g, 2e-6)  # f_{1, 1e-6} at delta = 2e-6: epsilon just below 1
    assert r is not None and 0.99 < r.epsilon < 1.0
    assert certify_entry(g, EpsilonDelta(2e-6, r.epsilon, "f-dp-profile")) is True
    assert certify_entry(g, EpsilonDelta(2e-6, 0.99, "f-dp-profile")) is False  # below the truth: caught
    s = GuaranteeSummary.of(g, [2e-6])
    assert isinstance(certify_summary([s]), Verified)
    bad = GuaranteeSummary(s.relation, s.forms, (EpsilonDelta(2e-6, 0.5, "f-dp-profile"),), guarantee=g)
    assert isinstance(certify_summary([bad]), Refuted)


def test_nothing_to_certify_is_skipped_not_passed() -> None:
    g = NoFiniteGuarantee("the state totals differ between adjacent datasets", Replace())
    out = certify_summary([GuaranteeSummary.of(g, [1e-10])])
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
    out = certify_summary([pld, pld])
    assert isinstance(out, Verified)
    assert out.certificate.startswith("6 reported (epsilon, delta) value(s): 4 re-certified at 80 digits")
    assert f"2 PLD value(s) certified by {PLD_CERTIFICATE}" in out.certificate
    # a PLD lower end above a re-certified upper bound, or an unordered bracket, is a bug
    above = s.with_pld((PldEntry(1e-10, cks + 1e-9, cks + 1),))
    assert isinstance(certify_summary([above]), Refuted)
    unordered = s.with_pld((PldEntry(1e-10, cks - 0.3, cks - 0.5),))
    assert isinstance(certify_summary([unordered]), Refuted)
    # with nothing re-certified, the PLD values are still named, and the check is skipped, not passed
    none = GuaranteeSummary(s.relation, s.forms, (), guarantee=g).with_pld((PldEntry(1e-10, 1.0, 2.0),))
    skipped = certify_summary([none])
    assert isinstance(skipped, Skipped) and "1 PLD value(s)" in skipped.reason


def test_extra_fields_never_shadow_typed_ones() -> None:
    """``extra`` used to override ``epsilon_delta`` in the JSON, hiding the typed entries from the certifier; the
    optional fields are now typed, and no other name is accepted (nor a form that would shadow one)."""
    s = GuaranteeSummary.of(ZCDP(0.5, Replace()), [1e-6])
    for key in ("epsilon_delta", "zcdp", "relation", "framework", "bag"):
        with pytest.raises(ValueError, match="not optional fields"):
            s.with_extra(**{key: []})
    with pytest.raises(ValueError, match="shadow typed fields"):
        GuaranteeSummary(s.relation, {**s.forms, "rho_exact": "1"}, s.epsilon_delta)
    out = s.with_extra(rho_exact="1/2").to_json()
    assert out["rho_exact"] == "1/2" and list(out)[-2:] == ["epsilon_delta", "rho_exact"]


def test_nested_summaries_and_breakdowns_are_recertified_too() -> None:
    """Issue 23, item 5: a workload report's ``coarse`` and ``per_attribute``/``per_geolevel`` entries, and a
    section's summary (``plain_dp``), are reported (epsilon, delta) values: each is re-certified or labelled."""
    g = ZCDP(0.5, Replace())
    coarse = ZCDP(2.0, Replace())
    top = GuaranteeSummary.of(g, [1e-6])
    group = Breakdown(
        0.25, "1/4", 3, (*GuaranteeSummary.of(ZCDP(0.25), [1e-6]).epsilon_delta, PldEntry(1e-6, 1.0, 1.1))
    )
    s = top.with_extra(coarse=GuaranteeSummary.of(coarse, [1e-6]), per_attribute={"sex": group})
    out = certify_summary([s])
    assert isinstance(out, Verified)
    # 2 top + 2 coarse + 2 routes of the group re-certified, the group's PLD entry labelled
    assert out.certificate.startswith("7 reported (epsilon, delta) value(s): 6 re-certified at 80 digits")
    assert "1 PLD value(s)" in out.certificate
    # a group entry below the truth is caught, and named by its JSON path
    low = Breakdown(0.25, "1/4", 3, (EpsilonDelta(1e-6, 0.5, "bun-steinke"),))
    bad = certify_summary([top.with_extra(per_geolevel={"State": low})])
    assert isinstance(bad, Refuted) and "(per_geolevel.State)" in bad.counterexample
    # so is a coarse one (checked against the coarse guarantee, not the top one)
    wrong = GuaranteeSummary("replace-one", {"zcdp": 2.0}, (EpsilonDelta(1e-6, 7.0, "bun-steinke"),), guarantee=coarse)
    assert isinstance(certify_summary([top.with_extra(coarse=wrong)]), Refuted)
    # a section's summary (plain_dp) is found with its guarantee
    found = section_summaries([PlainDpSection(GuaranteeSummary.of(coarse, [1e-6]))])
    assert [(p.forms, p.guarantee) for p in found] == [({"zcdp": 2.0}, coarse)]


def test_each_summary_is_recertified_against_the_guarantee_it_holds() -> None:
    """Issue 23, item 3 (s32 D): ``GuaranteeSummary.of`` stores its guarantee, so summaries are handed alone."""
    import dataclasses

    small, large = ZCDP(0.1, Replace()), ZCDP(0.5, Replace())
    s = GuaranteeSummary.of(small, [1e-6])
    assert s.guarantee is small and s.with_pld(()).with_extra(rho_exact="1/10").guarantee is small
    assert isinstance(certify_summary([s]), Verified)
    # the small guarantee's epsilons, said to summarise the larger one: below its certified bound, caught
    assert isinstance(certify_summary([dataclasses.replace(s, guarantee=large)]), Refuted)
    # no guarantee held: nothing re-checks the values, so the check is skipped, never passed
    unheld = certify_summary([dataclasses.replace(s, guarantee=None)])
    assert isinstance(unheld, Skipped) and "2 value(s) rest on the accountant alone" in unheld.reason
