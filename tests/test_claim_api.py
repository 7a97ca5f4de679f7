"""The public claim API (issue Step 11, item 3): ``semidp.check_claim`` with a typed claim."""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import pytest

import semidp
from semidp import GDP, RDP, ZCDP, ApproxDP, PrivacyClaim, PureDP, check_claim
from semidp.accountant.core.errors import InvalidArgument


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


def test_exact_rational_strings_and_fractions_are_claims() -> None:
    """The docstring promises rationals: "1/2" and Fraction(1, 2) are read exactly (issue Step 18, API)."""
    assert PrivacyClaim.zcdp("1/2").rho == Fraction(1, 2)
    assert PrivacyClaim.epsilon_delta(" 21/2 ", "1/10000000000").delta == Fraction(1, 10**10)
    # exact, not through a float: the double 2.56 is 2.56000000000000005329..., just above 64/25
    assert Fraction(2.56) > Fraction(64, 25)
    assert check_claim(ZCDP(2.56), PrivacyClaim.zcdp("64/25")).holds is False
    assert check_claim(ZCDP(2.56), PrivacyClaim.zcdp(Fraction(2.56))).holds is True
    assert check_claim(ZCDP(1 / 3), PrivacyClaim.zcdp("1/3")).holds is (Fraction(1 / 3) <= Fraction(1, 3))
    assert check_claim(GDP(1.0), PrivacyClaim.gdp(Fraction(1))).holds is True
    assert check_claim(ZCDP(0.5), PrivacyClaim.rdp("2", "1/1")).holds is True
    assert check_claim(GDP(1.0), PrivacyClaim.epsilon_delta("21/2", "1/100000")).holds is True


@pytest.mark.parametrize("bad", [math.inf, -math.inf, "1e400", 10**400, Fraction(10**400)])
@pytest.mark.parametrize("form", [PrivacyClaim.epsilon_delta, PrivacyClaim.zcdp, PrivacyClaim.gdp])
def test_an_infinite_claim_is_refused_with_our_error(form: Any, bad: object) -> None:
    with pytest.raises(InvalidArgument, match="infinite or too large"):
        form(bad)


@pytest.mark.parametrize(
    ("bad", "match"), [(math.nan, "nan"), ("abc", "not a number"), ("1/0", "not a number"), (True, "a number")]
)
def test_non_numbers_are_refused_with_our_error(bad: object, match: str) -> None:
    with pytest.raises(InvalidArgument, match=match):
        PrivacyClaim.epsilon_delta(bad)  # type: ignore[arg-type]
    with pytest.raises(InvalidArgument, match=match):
        PrivacyClaim.rdp(2.0, bad)  # type: ignore[arg-type]


def test_an_infinite_claim_never_reaches_the_decision_as_a_bare_overflow() -> None:
    for eff in (ZCDP(2.56), GDP(1.0), PureDP(1.0), ApproxDP(1.0, 1e-6), RDP((2.0,), (1.0,))):
        for make in (lambda: PrivacyClaim.zcdp(math.inf), lambda: PrivacyClaim.rdp(math.inf, 1.0)):
            with pytest.raises(InvalidArgument):
                check_claim(eff, make())


def test_one_public_check_claim_with_one_argument_order() -> None:
    """Issue 23, item 3: ``semidp.check_claim`` and ``semidp.verify.check_claim`` are one function."""
    import semidp.verify

    assert semidp.verify.check_claim is semidp.check_claim
    assert semidp.verify.PrivacyClaim is semidp.PrivacyClaim
    r = semidp.verify.check_claim(GDP(1.0), PrivacyClaim.gdp(0.99))
    assert r.status == "refuted" and r.bounds is None
    # the retired claim-first order (and the tuple claim) is refused with our error, naming the order
    with pytest.raises(InvalidArgument, match="effective guarantee comes first"):
        check_claim(PrivacyClaim.gdp(1.0), GDP(1.0))  # type: ignore[arg-type]
    with pytest.raises(InvalidArgument, match="effective guarantee comes first"):
        check_claim(("mu", 1.0), GDP(1.0))  # type: ignore[arg-type]
    with pytest.raises(InvalidArgument, match="must be a guarantee value"):
        check_claim(1.0, GDP(1.0))  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("table", "expected"),
    [
        ('{ zcdp = "1/2" }', PrivacyClaim.zcdp(Fraction(1, 2))),
        ("{ mu = 1 }", PrivacyClaim.gdp(1)),
        ('{ rdp = { alpha = 2, epsilon = "3/4" } }', PrivacyClaim.rdp(2, Fraction(3, 4))),
        ("{ epsilon = 1 }", PrivacyClaim.epsilon_delta(1, 0)),
        ('{ epsilon = 1, delta = "1/10000000000" }', PrivacyClaim.epsilon_delta(1, Fraction(1, 10**10))),
    ],
)
def test_a_spec_claim_becomes_a_privacy_claim(table: str, expected: PrivacyClaim) -> None:
    """The loader's validated ``[claim] guarantee`` is decided as the PrivacyClaim it states (no tuple form)."""
    from semidp.verify.runner import claim_of

    spec = semidp.loads(
        f"""
version = 1
name = "t"
[data]
features = [{{ name = "a", levels = 2 }}]
[invariant]
kind = "none"
[mechanism]
kind = "published"
guarantee = {{ mu = 0.5 }}
[claim]
framework = "dp"
guarantee = {table}
"""
    )
    assert spec.claim is not None
    got = claim_of(spec.claim.guarantee)
    assert got == PrivacyClaim.of_spec(spec.claim.guarantee) == expected
    assert got.form == expected.form and got.exact("delta") == expected.exact("delta")
