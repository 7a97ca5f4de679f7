"""Claim checks (verify.claims): every guarantee form against every claim form, incl. pure-DP claims."""

from __future__ import annotations

import pytest

from semidp.accountant.guarantees import GDP, ZCDP, PureDP
from semidp.accountant.outcome import Refuted, Verified
from semidp.accountant.relations import Replace
from semidp.verify.claims import check_claim

R = Replace()


@pytest.mark.parametrize("g", [GDP(1.0, R), ZCDP(0.5, R)])
def test_gaussian_guarantees_never_give_pure_dp(g: GDP | ZCDP) -> None:
    """Regression: a pure claim (delta = 0) against GDP/zCDP used to crash computing epsilon(delta = 0)."""
    out, bounds = check_claim(("epsilon", 1.0, 0.0), g)
    assert isinstance(out, Refuted) and bounds is None
    assert "0.126937" in out.counterexample  # delta(1) of 1-GDP (Balle & Wang), the lower bound


def test_gdp_approx_claim_has_epsilon_bounds() -> None:
    out, bounds = check_claim(("epsilon", 5.0, 1e-6), GDP(1.0, R))
    assert isinstance(out, Verified) and bounds is not None
    assert bounds.lower <= bounds.upper < 5.0


def test_pure_claim_from_pure_guarantee_is_exact() -> None:
    assert isinstance(check_claim(("epsilon", 1.0, 0.0), PureDP(1.0, R))[0], Verified)
    assert isinstance(check_claim(("epsilon", 0.9, 0.0), PureDP(1.0, R))[0], Refuted)
