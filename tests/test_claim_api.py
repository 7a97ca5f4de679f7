"""The public claim API (issue Step 11, item 3): ``semidp.check_claim`` with a typed claim."""

from __future__ import annotations

import pytest

import semidp
from semidp import GDP, RDP, ZCDP, ApproxDP, PrivacyClaim, PureDP, check_claim
from semidp.accountant.errors import InvalidArgument


def test_census_claims_as_in_the_audit() -> None:
    # [CA24, Sec. 6]: 2.56-zCDP advertised, 10.24-zCDP effective under the state totals
    assert check_claim(ZCDP(2.56), PrivacyClaim.zcdp(2.56)).holds is True
    refuted = check_claim(ZCDP(10.24), PrivacyClaim.zcdp(2.56))
    assert (refuted.holds, refuted.status) == (False, "refuted") and "10.24" in refuted.detail
    eps = check_claim(ZCDP(2.56), PrivacyClaim.epsilon_delta(17.16, 1e-10))  # CKS: 17.1584 (T-Z2)
    assert eps.holds is True and eps.detail.startswith("certified")
    assert check_claim(ZCDP(2.56), PrivacyClaim.epsilon_delta(17.15, 1e-10)).holds is not True


def test_guarantees_as_claims_and_every_form() -> None:
    assert check_claim(GDP(1.0), GDP(1.0)).holds is True
    assert check_claim(GDP(1.0), GDP(0.9)).holds is False
    assert check_claim(PureDP(1.0), ApproxDP(1.0, 1e-6)).holds is True
    assert check_claim(ZCDP(0.5), PrivacyClaim.rdp(2.0, 1.0)).holds is True  # rho-zCDP: eps(alpha) = alpha rho
    assert check_claim(ZCDP(0.5), RDP((2.0,), (0.9,))).holds is False
    assert check_claim(PureDP(1.0), PrivacyClaim.rdp(2.0, 1.0)).holds is None  # not compared: unknown, no guess
    assert PrivacyClaim.of(ApproxDP(1.0, 1e-6)) == PrivacyClaim.epsilon_delta(1.0, 1e-6)
    assert semidp.check_claim is check_claim


def test_bad_claims_name_what_is_wrong() -> None:
    with pytest.raises(InvalidArgument, match="needs rho"):
        PrivacyClaim("zcdp")
    with pytest.raises(InvalidArgument, match="delta"):
        PrivacyClaim.epsilon_delta(1.0, 2.0)
    with pytest.raises(InvalidArgument, match="not a claim form"):
        PrivacyClaim.of(RDP((2.0, 3.0), (1.0, 1.0)))
