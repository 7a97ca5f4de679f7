"""verify.claims on every (effective guarantee, claim form) pair, at points on both sides of each boundary.

Each row states the outcome mathematics dictates: verified only from an upper bound
that implies the claim, refuted only from a mechanism attaining the effective
guarantee that violates it, otherwise unknown. A wrong constant (e.g. eps^2/4 for
pure DP -> zCDP instead of eps^2/2 [BS16, Prop. 1.4]) flips a row.
"""

from __future__ import annotations

from fractions import Fraction as F

import pytest

from semidp.accountant.core.outcome import Refuted, Unknown, Verified
from semidp.accountant.guarantees.conversions import approx_dp_to_tradeoff
from semidp.accountant.guarantees.definitions import GDP, RDP, ZCDP, ApproxDP, Guarantee, PureDP
from semidp.accountant.guarantees.relations import Replace
from semidp.accountant.guarantees.semidp import NoFiniteGuarantee
from semidp.verify.claims import decide
from semidp.verify.privacy_claim import PrivacyClaim
from tests.claim_forms import claim

V, R, U = Verified, Refuted, Unknown
NONE = NoFiniteGuarantee("the invariant differs between adjacent datasets", Replace())
TRADE = approx_dp_to_tradeoff(ApproxDP(1.0, 0.0))

CASES: list[tuple[str, Guarantee | NoFiniteGuarantee, PrivacyClaim, type]] = [
    # pure DP: randomized response is tight for f_{eps,0}
    ("pure-eps-eq", PureDP(1.0), claim("epsilon", F(1), 0), V),
    ("pure-eps-below", PureDP(1.0), claim("epsilon", F(99, 100), 0), R),
    ("pure-approx-ok", PureDP(1.0), claim("epsilon", F(1), F(1, 10**6)), V),
    ("pure-approx-profile", PureDP(1.0), claim("epsilon", F(1, 2), F(1, 10)), R),  # (e - e^.5)/(1 + e) = 0.288
    ("pure-approx-profile-ok", PureDP(1.0), claim("epsilon", F(1, 2), F(3, 10)), V),
    ("pure-zcdp-eq", PureDP(1.0), claim("zcdp", F(1, 2)), V),  # eps^2/2 [BS16, Prop. 1.4]
    ("pure-zcdp-just-below", PureDP(1.0), claim("zcdp", F(49, 100)), U),
    ("pure-zcdp-quarter", PureDP(1.0), claim("zcdp", F(3, 10)), U),  # eps^2/4 would verify this
    ("pure-mu", PureDP(1.0), claim("mu", F(5)), U),
    # approximate DP: infinite loss with probability delta
    ("approx-zcdp", ApproxDP(1.0, 1e-6), claim("zcdp", F(100)), R),
    ("approx-eq", ApproxDP(1.0, 1e-6), claim("epsilon", F(1), F(1, 10**6)), V),
    ("approx-smaller-delta", ApproxDP(1.0, 1e-6), claim("epsilon", F(1), F(1, 10**7)), R),
    # GDP: the Gaussian mechanism is tight
    ("gdp-mu-eq", GDP(1.0), claim("mu", F(1)), V),
    ("gdp-mu-below", GDP(1.0), claim("mu", F(99, 100)), R),
    ("gdp-zcdp-eq", GDP(1.0), claim("zcdp", F(1, 2)), V),
    ("gdp-zcdp-below", GDP(1.0), claim("zcdp", F(49, 100)), R),
    ("gdp-rdp-eq", GDP(1.0), claim("rdp", F(2), F(1)), V),  # alpha mu^2 / 2
    ("gdp-rdp-below", GDP(1.0), claim("rdp", F(2), F(99, 100)), R),
    ("gdp-eps-above", GDP(1.0), claim("epsilon", F(4378, 1000), F(1, 10**5)), V),  # 4.3771781 [BW18]
    ("gdp-eps-below", GDP(1.0), claim("epsilon", F(437, 100), F(1, 10**5)), R),
    # zCDP: the Gaussian with mu = sqrt(2 rho) attains it; CKS is an upper bound only
    ("zcdp-eq", ZCDP(0.5), claim("zcdp", F(1, 2)), V),
    ("zcdp-below", ZCDP(0.5), claim("zcdp", F(49, 100)), R),
    ("zcdp-rdp-eq", ZCDP(0.5), claim("rdp", F(3), F(3, 2)), V),
    ("zcdp-rdp-below", ZCDP(0.5), claim("rdp", F(3), F(149, 100)), R),
    ("zcdp-mu-eq", ZCDP(0.5), claim("mu", F(1)), U),  # zCDP implies no GDP bound
    ("zcdp-mu-below", ZCDP(0.5), claim("mu", F(9, 10)), R),
    ("zcdp-eps-cks", ZCDP(0.5), claim("epsilon", F(5221535, 10**6), F(1, 10**6)), V),  # 5.221534 [CKS20]
    ("zcdp-eps-between", ZCDP(0.5), claim("epsilon", F(5), F(1, 10**6)), U),
    ("zcdp-eps-gaussian", ZCDP(0.5), claim("epsilon", F(4), F(1, 10**6)), R),
    # RDP at one order: not tight
    ("rdp-eq", RDP((2.0,), (1.0,)), claim("rdp", F(2), F(1)), V),
    ("rdp-below", RDP((2.0,), (1.0,)), claim("rdp", F(2), F(9, 10)), U),
    ("rdp-other-order", RDP((2.0,), (1.0,)), claim("rdp", F(3), F(10)), U),
    ("rdp-eps-large", RDP((2.0,), (1.0,)), claim("epsilon", F(30), F(1, 10**10)), V),
    ("rdp-eps-small", RDP((2.0,), (1.0,)), claim("epsilon", F(1), F(1, 10**10)), U),
    # f-DP lower bound: verified from its profile only
    ("fdp-eps-ok", TRADE, claim("epsilon", F(101, 100), F(1, 10**9)), V),
    ("fdp-eps-small", TRADE, claim("epsilon", F(1, 2), F(1, 100)), U),
    ("fdp-zcdp", TRADE, claim("zcdp", F(1)), U),
    # no finite guarantee
    ("none-delta-one", NONE, claim("epsilon", F(1), F(1)), V),
    ("none-eps", NONE, claim("epsilon", F(100), F(1, 2)), R),
    ("none-zcdp", NONE, claim("zcdp", F(100)), R),
]


@pytest.mark.parametrize("effective, claim, expected", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_claim_outcome(effective: Guarantee | NoFiniteGuarantee, claim: PrivacyClaim, expected: type) -> None:
    outcome, _ = decide(effective, claim)
    assert type(outcome) is expected, outcome


def test_every_effective_type_and_claim_form_is_covered() -> None:
    pairs = {
        (type(c[1]).__name__, c[2].form + ("-pure" if c[2].form == "epsilon" and c[2].delta == 0 else ""))
        for c in CASES
    }
    for t in ("PureDP", "GDP", "ZCDP"):
        for form in ("epsilon", "mu", "zcdp"):
            assert (t, form) in pairs or (t, form + "-pure") in pairs, (t, form)
