r"""Does a claimed guarantee follow from the effective one? Verified, refuted, or unknown.

The effective guarantee is what provably holds for the joint release
(mechanism output and invariant). A claim is

* **verified** when a certified conversion of the effective guarantee implies it
  (every number rounded in the claim's disfavour);
* **refuted** when a mechanism that satisfies the effective guarantee exactly
  violates the claim: the Gaussian mechanism attains :math:`\mu`-GDP,
  :math:`\mu^2/2`-zCDP and the Balle–Wang profile [BW18]; randomized response
  attains :math:`f_{\varepsilon,0}`; the four-point distribution of [KOV15]
  attains :math:`f_{\varepsilon,\delta}` (with an infinite-loss atom when
  :math:`\delta>0`). By [CA24, Prop. 11] nothing tighter follows
  without further knowledge of the mechanism;
* **unknown** when the claim lies between the two (conversions that are not
  tight, e.g. zCDP to :math:`(\varepsilon,\delta)`), with the bounds stated.

Parameters in the same form are compared exactly (``fractions.Fraction`` of
the binary values); transcendental comparisons use 50-digit arithmetic,
rounded against the conclusion being drawn.
"""

from __future__ import annotations

from fractions import Fraction
from functools import singledispatch

from semidp.accountant.conversions import zcdp_to_approx_dp, zcdp_to_delta
from semidp.accountant.directed import MP, down, up
from semidp.accountant.gaussian import gdp_delta, gdp_delta_lower, gdp_epsilon, gdp_epsilon_lower
from semidp.accountant.guarantees import GDP, RDP, ZCDP, ApproxDP, Guarantee, PureDP, TradeOff
from semidp.accountant.outcome import Bounds, Outcome, Refuted, Unknown, Verified
from semidp.accountant.semidp import NoFiniteGuarantee

#: A claim, in one of the spec forms: ("epsilon", eps, delta) | ("mu", mu) | ("zcdp", rho) | ("rdp", alpha, eps).
Claim = tuple[str, ...]


def _fmt(x: float | Fraction) -> str:
    return f"{float(x):.6g}"


def _exact_compare(name: str, effective: Fraction, claimed: Fraction, attained_by: str) -> Outcome:
    if effective <= claimed:
        return Verified(f"effective {name} = {_fmt(effective)} <= claimed {_fmt(claimed)} (exact)")
    return Refuted(
        f"effective {name} = {_fmt(effective)} > claimed {_fmt(claimed)}; {attained_by} satisfies the "
        "effective guarantee and violates the claim"
    )


def _profile_compare(
    eps_c: float, delta_c: float, delta_up: float, delta_low: float, what: str
) -> tuple[Outcome, Bounds | None]:
    b = Bounds(lower=delta_low, estimate=delta_up, upper=delta_up)
    if delta_up <= delta_c:
        return Verified(f"{what}: delta({_fmt(eps_c)}) <= {_fmt(delta_up)} <= claimed delta {_fmt(delta_c)}"), b
    if delta_low > delta_c:
        return Refuted(f"{what}: delta({_fmt(eps_c)}) >= {_fmt(delta_low)} > claimed delta {_fmt(delta_c)}"), b
    return Unknown(
        f"{what}: delta({_fmt(eps_c)}) is in [{_fmt(delta_low)}, {_fmt(delta_up)}], which contains "
        f"the claimed delta {_fmt(delta_c)}"
    ), b


def _rr_delta(eps_e: float, delta_e: float, eps_c: float, direction: str) -> float:
    """Profile of f_{eps_e, delta_e} at eps_c: delta_e + (1-delta_e)(e^eps_e - e^eps_c)_+/(1+e^eps_e)."""
    e, d, c = MP.mpf(eps_e), MP.mpf(delta_e), MP.mpf(eps_c)
    val = d + (1 - d) * max(MP.mpf(0), MP.exp(e) - MP.exp(c)) / (1 + MP.exp(e))
    return min(1.0, up(val) if direction == "up" else down(val))


def check_claim(claim: Claim, effective: Guarantee | NoFiniteGuarantee) -> tuple[Outcome, Bounds | None]:
    """Decide whether ``claim`` follows from ``effective`` (see module docstring)."""
    return _decide(effective, claim)


@singledispatch
def _decide(effective: Guarantee | NoFiniteGuarantee, claim: Claim) -> tuple[Outcome, Bounds | None]:
    raise TypeError(f"unexpected effective guarantee {effective!r}")


@_decide.register
def _(effective: NoFiniteGuarantee, claim: Claim) -> tuple[Outcome, Bounds | None]:
    if claim[0] == "epsilon" and float(claim[2]) >= 1.0:
        return Verified("delta >= 1 is satisfied by every mechanism"), None
    return Refuted(f"no finite guarantee holds: {effective.reason}"), None


@_decide.register
def _(effective: PureDP, claim: Claim) -> tuple[Outcome, Bounds | None]:
    return _from_approx(claim, effective.epsilon, 0.0)


@_decide.register
def _(effective: ApproxDP, claim: Claim) -> tuple[Outcome, Bounds | None]:
    return _from_approx(claim, effective.epsilon, effective.delta)


@_decide.register
def _(effective: TradeOff, claim: Claim) -> tuple[Outcome, Bounds | None]:
    form = claim[0]
    if form == "epsilon":
        eps_c, delta_c = float(claim[1]), float(claim[2])
        d_up = float(effective.curve.privacy_profile(eps_c))
        if d_up <= delta_c:
            return Verified(f"f-DP lower bound gives delta({_fmt(eps_c)}) <= {_fmt(d_up)}"), None
        return Unknown(f"f-DP lower bound gives delta({_fmt(eps_c)}) <= {_fmt(d_up)} only"), None
    return Unknown(f"an f-DP guarantee is not compared with a {form} claim"), None


@_decide.register
def _from_zcdp(g: ZCDP, claim: Claim) -> tuple[Outcome, Bounds | None]:
    rho = Fraction(g.rho)
    form = claim[0]
    gauss = "the Gaussian mechanism with mu = sqrt(2 rho)"
    if form == "zcdp":
        return _exact_compare("rho", rho, Fraction(claim[1]), gauss), None
    if form == "rdp":
        alpha = Fraction(claim[1])
        return _exact_compare(f"RDP epsilon at alpha={_fmt(alpha)}", alpha * rho, Fraction(claim[2]), gauss), None
    mu_g = down(MP.sqrt(2 * MP.mpf(g.rho)))  # Gaussian attaining rho-zCDP; rounded down = weaker refutation
    if form == "mu":
        mu_c = float(claim[1])
        if mu_c < mu_g:
            return Refuted(f"{gauss} = {_fmt(mu_g)} is not {_fmt(mu_c)}-GDP"), None
        return Unknown("rho-zCDP does not imply any mu-GDP bound in general"), None
    eps_c, delta_c = float(claim[1]), float(claim[2])
    if delta_c >= 1.0:
        return Verified("delta >= 1 holds trivially"), None
    d_up = zcdp_to_delta(g, eps_c) if eps_c >= 0 else 1.0
    d_low = gdp_delta_lower(mu_g, eps_c)
    out, b = _profile_compare(eps_c, delta_c, d_up, d_low, "CKS profile (upper) / Gaussian attaining rho (lower)")
    if delta_c == 0:  # a pure claim has no epsilon(delta) bounds
        return out, None
    eps_up = zcdp_to_approx_dp(g, delta_c).epsilon
    eps_low = gdp_epsilon_lower(mu_g, delta_c) if mu_g > 0 else 0.0
    return out, Bounds(lower=eps_low, estimate=eps_up, upper=eps_up) if b else None


@_decide.register
def _from_gdp(g: GDP, claim: Claim) -> tuple[Outcome, Bounds | None]:
    mu = Fraction(g.mu)
    form = claim[0]
    gauss = "the Gaussian mechanism"
    if form == "mu":
        return _exact_compare("mu", mu, Fraction(claim[1]), gauss), None
    if form == "zcdp":
        return _exact_compare("rho = mu^2/2", mu * mu / 2, Fraction(claim[1]), gauss), None
    if form == "rdp":
        alpha = Fraction(claim[1])
        return _exact_compare(
            f"RDP epsilon at alpha={_fmt(alpha)}", alpha * mu * mu / 2, Fraction(claim[2]), gauss
        ), None
    eps_c, delta_c = float(claim[1]), float(claim[2])
    out, _ = _profile_compare(
        eps_c, delta_c, gdp_delta(g.mu, eps_c), gdp_delta_lower(g.mu, eps_c), "exact Balle-Wang profile"
    )
    if not 0 < delta_c < 1:  # a pure claim (delta = 0) has no epsilon(delta) bounds
        return out, None
    e = gdp_epsilon(g.mu, delta_c)
    return out, Bounds(lower=gdp_epsilon_lower(g.mu, delta_c), estimate=e, upper=e)


def _from_approx(claim: Claim, eps_e: float, delta_e: float) -> tuple[Outcome, Bounds | None]:
    form = claim[0]
    if form == "epsilon":
        eps_c, delta_c = float(claim[1]), float(claim[2])
        if delta_c == 0 and delta_e == 0:
            return _exact_compare(
                "epsilon", Fraction(eps_e), Fraction(claim[1]), "randomized response (tight for f_{eps,0})"
            ), None
        if Fraction(eps_e) <= Fraction(claim[1]) and Fraction(delta_e) <= Fraction(claim[2]):
            return Verified(
                f"({_fmt(eps_e)}, {_fmt(delta_e)})-DP implies ({_fmt(eps_c)}, {_fmt(delta_c)})-DP: "
                "both parameters are no larger (exact)"
            ), None
        return _profile_compare(
            eps_c,
            delta_c,
            _rr_delta(eps_e, delta_e, eps_c, "up"),
            _rr_delta(eps_e, delta_e, eps_c, "down"),
            "exact profile of f_{eps,delta} (attained by the four-point mechanism)",
        )[0], None
    if delta_e > 0:
        return Refuted(
            f"({_fmt(eps_e)}, {_fmt(delta_e)})-DP allows an infinite privacy loss with probability "
            f"delta > 0, so no finite {form} guarantee follows"
        ), None
    if form == "zcdp":
        rho = Fraction(eps_e) ** 2 / 2
        if rho <= Fraction(claim[1]):
            return Verified(f"eps-DP implies eps^2/2 = {_fmt(rho)}-zCDP [BS16, Prop. 1.4]"), None
        return Unknown(f"eps-DP gives {_fmt(rho)}-zCDP [BS16], above the claim; not tight"), None
    return Unknown(f"pure DP is not compared with a {form} claim"), None


@_decide.register
def _from_rdp(g: RDP, claim: Claim) -> tuple[Outcome, Bounds | None]:
    if claim[0] == "rdp":
        alpha = float(claim[1])
        if alpha in g.orders:
            eps = Fraction(g.epsilons[g.orders.index(alpha)])
            if eps <= Fraction(claim[2]):
                return Verified(f"RDP epsilon at alpha={_fmt(alpha)} is {_fmt(eps)} (exact)"), None
            return Unknown(
                f"RDP epsilon at alpha={_fmt(alpha)} is {_fmt(eps)} > claim; RDP bounds are not tight in general"
            ), None
        return Unknown(f"the RDP curve has no order {alpha}"), None
    if claim[0] == "epsilon":
        from semidp.accountant.conversions import rdp_to_approx_dp

        eps_c, delta_c = float(claim[1]), float(claim[2])
        e = rdp_to_approx_dp(g, delta_c).epsilon
        if e <= eps_c:
            return Verified(f"CKS conversion of the RDP curve gives epsilon {_fmt(e)} <= {_fmt(eps_c)}"), None
        return Unknown(f"CKS conversion gives epsilon {_fmt(e)} > {_fmt(eps_c)}; not tight"), None
    return Unknown(f"an RDP curve is not compared with a {claim[0]} claim"), None
