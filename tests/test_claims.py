"""Claim checks (verify.claims): every guarantee form against every claim form, incl. pure-DP claims."""

from __future__ import annotations

import pytest

from semidp.accountant.core.outcome import Refuted, Verified
from semidp.accountant.guarantees.definitions import GDP, ZCDP, PureDP
from semidp.accountant.guarantees.relations import Replace
from semidp.verify.claims import decide
from tests.claim_forms import claim

R = Replace()


@pytest.mark.parametrize("g", [GDP(1.0, R), ZCDP(0.5, R)])
def test_gaussian_guarantees_never_give_pure_dp(g: GDP | ZCDP) -> None:
    """Regression: a pure claim (delta = 0) against GDP/zCDP used to crash computing epsilon(delta = 0)."""
    out, bounds = decide(g, claim("epsilon", 1.0, 0.0))
    assert isinstance(out, Refuted) and bounds is None
    assert "0.126937" in out.counterexample  # delta(1) of 1-GDP (Balle & Wang), the lower bound


def test_gdp_approx_claim_has_epsilon_bounds() -> None:
    out, bounds = decide(GDP(1.0, R), claim("epsilon", 5.0, 1e-6))
    assert isinstance(out, Verified) and bounds is not None
    assert bounds.lower <= bounds.upper < 5.0


def test_pure_claim_from_pure_guarantee_is_exact() -> None:
    assert isinstance(decide(PureDP(1.0, R), claim("epsilon", 1.0, 0.0))[0], Verified)
    assert isinstance(decide(PureDP(1.0, R), claim("epsilon", 0.9, 0.0))[0], Refuted)
