r"""Does a claimed guarantee follow from the effective one? Verified, refuted, or unknown -- each with its certificate.

The effective guarantee is what provably holds for the joint release
(mechanism output and invariant). A claim is

* **verified** when a certified upper bound of the effective guarantee's
  privacy loss implies it;
* **refuted** when a certified *lower* bound exceeds the claim for a mechanism
  that satisfies the effective guarantee exactly: the Gaussian mechanism
  attains :math:`\mu`-GDP, :math:`\mu^2/2`-zCDP and the Balle–Wang profile [BW18];
  randomized response attains :math:`f_{\varepsilon,0}`; the four-point
  distribution of [KOV15] attains :math:`f_{\varepsilon,\delta}` (with an
  infinite-loss atom when :math:`\delta>0`). By [CA24, Prop. 11] nothing tighter
  follows without further knowledge of the mechanism. For a *composed* release
  (:func:`check_composed_claim`) the product of the parts' dominating pairs is
  the worst case [KOV15], [DRS22, Thm. 3.2], and its privacy profile is bracketed by the
  pessimistic and optimistic PLD compositions (:func:`accountant.pld.engine.compose_plds`);
* **unknown** when the claim lies between the two bounds, with both stated.

Every verified or refuted outcome names its certificate in its text, as
``certified (<method>): ...``:

* ``exact rational`` -- parameters in the same form compared as
  :class:`fractions.Fraction` of the binary values;
* ``interval arithmetic`` -- transcendental profiles enclosed by
  :mod:`accountant.guarantees.claim_certificate` (``mpmath`` interval arithmetic, a proven
  erfc enclosure, endpoints rounded outward), compared exactly with the claim;
* ``PLD bracket`` -- the composed profile between the optimistic (lower) and
  pessimistic (upper) FFT compositions with their rounding error bounded;
* ``trivial`` -- a claim with :math:`\delta\ge1`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from fractions import Fraction
from functools import singledispatch

from semidp.accountant.core.budget import Budget
from semidp.accountant.core.outcome import Bounds, Outcome, Refuted, Unknown, Verified
from semidp.accountant.guarantees.claim_certificate import (
    Enclosure,
    approx_dp_profile_enclosure,
    gdp_delta_enclosure,
    rdp_epsilon_upper,
    sqrt_lower,
    tradeoff_profile_enclosure,
    zcdp_delta_upper,
)
from semidp.accountant.guarantees.conversions import zcdp_to_approx_dp
from semidp.accountant.guarantees.definitions import GDP, RDP, ZCDP, ApproxDP, Guarantee, PureDP, TradeOff
from semidp.accountant.guarantees.semidp import NoFiniteGuarantee
from semidp.accountant.pld.engine import GaussianBracket, LaplaceBracket, PLDBracket, compose_plds
from semidp.accountant.pld.refine import refine
from semidp.accountant.profiles.gaussian import gdp_epsilon, gdp_epsilon_lower
from semidp.accountant.releases.accounting import dominating_part  # one definition, re-exported here
from semidp.verify.privacy_claim import PrivacyClaim

EXACT = "certified (exact rational)"
INTERVAL = "certified (interval arithmetic, "


def _fmt(x: float | Fraction) -> str:
    return f"{float(x):.6g}"


def _num(x: float) -> str:
    """``x`` to 6 digits, with its exact float when that differs (certificate texts name exact values)."""
    short = f"{x:.6g}"
    return short if float(short) == x else f"{short} ({x!r})"


def _le(x: float, y: float | Fraction) -> bool:
    """``x <= y`` exactly (both read as rationals; an infinite float compares as itself, e.g. a delta bound
    that overflowed to inf for a huge rho)."""
    if isinstance(x, float) and math.isinf(x) or isinstance(y, float) and math.isinf(y):
        return float(x) <= float(y)  # a NaN still raises below: it decides nothing
    return Fraction(x) <= Fraction(y)


def _exact_compare(name: str, effective: Fraction, claimed: Fraction, attained_by: str) -> Outcome:
    if effective <= claimed:
        return Verified(f"{EXACT}: effective {name} = {_fmt(effective)} <= claimed {_fmt(claimed)}")
    return Refuted(
        f"{EXACT}: effective {name} = {_fmt(effective)} > claimed {_fmt(claimed)}; {attained_by} satisfies the "
        "effective guarantee and violates the claim"
    )


def _profile_compare(
    eps_c: float, delta_c: float, upper: Enclosure, lower: Enclosure, what: str
) -> tuple[Outcome, Bounds]:
    """Decide ``delta(eps_c) <= delta_c`` from a certified upper end and a certified (attained) lower end."""
    b = Bounds(lower=lower.lower, estimate=upper.upper, upper=upper.upper)
    if _le(upper.upper, delta_c):
        return Verified(
            f"{INTERVAL}{upper.method}): {what}: delta({_fmt(eps_c)}) <= {_num(upper.upper)} <= claimed delta "
            f"{_num(delta_c)}"
        ), b
    if not _le(lower.lower, delta_c):
        return Refuted(
            f"{INTERVAL}{lower.method}): {what}: delta({_fmt(eps_c)}) >= {_num(lower.lower)} > claimed delta "
            f"{_num(delta_c)}"
        ), b
    return Unknown(
        f"{what}: delta({_fmt(eps_c)}) is in [{_num(lower.lower)}, {_num(upper.upper)}] (interval arithmetic), which "
        f"contains the claimed delta {_num(delta_c)}"
    ), b


def decide(effective: Guarantee | NoFiniteGuarantee, claim: PrivacyClaim) -> tuple[Outcome, Bounds | None]:
    """Decide whether ``claim`` follows from ``effective`` (see module docstring); the epsilon bounds at the
    claimed delta when the comparison yields them. The public form is :func:`semidp.check_claim`."""
    return _decide(effective, claim)


@singledispatch
def _decide(effective: Guarantee | NoFiniteGuarantee, claim: PrivacyClaim) -> tuple[Outcome, Bounds | None]:
    raise TypeError(f"unexpected effective guarantee {effective!r}")


@_decide.register
def _(effective: NoFiniteGuarantee, claim: PrivacyClaim) -> tuple[Outcome, Bounds | None]:
    if claim.form == "epsilon" and claim.exact("delta") >= 1:
        return Verified("certified (trivial): delta >= 1 is satisfied by every mechanism"), None
    return Refuted(f"{EXACT}: no finite guarantee holds: {effective.reason}"), None


@_decide.register
def _(effective: PureDP, claim: PrivacyClaim) -> tuple[Outcome, Bounds | None]:
    return _from_approx(claim, effective.epsilon, 0.0)


@_decide.register
def _(effective: ApproxDP, claim: PrivacyClaim) -> tuple[Outcome, Bounds | None]:
    return _from_approx(claim, effective.epsilon, effective.delta)


@_decide.register
def _(effective: TradeOff, claim: PrivacyClaim) -> tuple[Outcome, Bounds | None]:
    form = claim.form
    if form == "epsilon":
        eps_c, delta_c = float(claim.exact("epsilon")), float(claim.exact("delta"))
        if delta_c >= 1.0:
            return Verified("certified (trivial): delta >= 1 holds trivially"), None
        up = tradeoff_profile_enclosure(effective.curve.alphas, effective.curve.betas, eps_c)
        if _le(up.upper, delta_c):
            return Verified(
                f"{INTERVAL}{up.method}): the f-DP curve (a certified lower bound of the tradeoff "
                f"function) gives delta({_fmt(eps_c)}) <= {_num(up.upper)} <= claimed delta {_num(delta_c)} "
                "[DRS22, Prop. 2.12]"
            ), None
        return Unknown(
            f"the f-DP curve gives delta({_fmt(eps_c)}) <= {_num(up.upper)} only (an upper bound; no lower bound "
            "without the parts)"
        ), None
    return Unknown(f"an f-DP guarantee is not compared with a {form} claim"), None


@_decide.register
def _from_zcdp(g: ZCDP, claim: PrivacyClaim) -> tuple[Outcome, Bounds | None]:
    rho = Fraction(g.rho)
    form = claim.form
    gauss = "the Gaussian mechanism with mu = sqrt(2 rho)"
    if form == "zcdp":
        return _exact_compare("rho", rho, claim.exact("rho"), gauss), None
    if form == "rdp":
        alpha = claim.exact("alpha")
        return _exact_compare(f"RDP epsilon at alpha={_fmt(alpha)}", alpha * rho, claim.exact("epsilon"), gauss), None
    mu_g = sqrt_lower(2 * rho)  # a Gaussian with mu_g <= sqrt(2 rho) is rho-zCDP: it may refute
    if form == "mu":
        mu_c = claim.exact("mu")
        if mu_c < Fraction(mu_g):
            return Refuted(f"{INTERVAL}interval square root): {gauss} >= {_fmt(mu_g)} is not {_fmt(mu_c)}-GDP"), None
        return Unknown("rho-zCDP does not imply any mu-GDP bound in general"), None
    eps_c, delta_c = float(claim.exact("epsilon")), float(claim.exact("delta"))
    if delta_c >= 1.0:
        return Verified("certified (trivial): delta >= 1 holds trivially"), None
    up = zcdp_delta_upper(g.rho, eps_c)[0]  # a claim's epsilon is >= 0 (PrivacyClaim)
    low = gdp_delta_enclosure(mu_g, eps_c)
    out, b = _profile_compare(
        eps_c, delta_c, up, low, f"CKS profile (upper) / Gaussian with mu = {mu_g!r} <= sqrt(2 rho) (lower)"
    )
    if delta_c == 0:  # a pure claim has no epsilon(delta) bounds
        return out, None
    eps_up = zcdp_to_approx_dp(g, delta_c).epsilon
    eps_low = gdp_epsilon_lower(mu_g, delta_c) if mu_g > 0 else 0.0
    return out, Bounds(lower=eps_low, estimate=eps_up, upper=eps_up) if b else None


@_decide.register
def _from_gdp(g: GDP, claim: PrivacyClaim) -> tuple[Outcome, Bounds | None]:
    mu = Fraction(g.mu)
    form = claim.form
    gauss = "the Gaussian mechanism"
    if form == "mu":
        return _exact_compare("mu", mu, claim.exact("mu"), gauss), None
    if form == "zcdp":
        return _exact_compare("rho = mu^2/2", mu * mu / 2, claim.exact("rho"), gauss), None
    if form == "rdp":
        alpha = claim.exact("alpha")
        return _exact_compare(
            f"RDP epsilon at alpha={_fmt(alpha)}", alpha * mu * mu / 2, claim.exact("epsilon"), gauss
        ), None
    eps_c, delta_c = float(claim.exact("epsilon")), float(claim.exact("delta"))
    enc = gdp_delta_enclosure(g.mu, eps_c)
    out, _ = _profile_compare(eps_c, delta_c, enc, enc, "exact Balle-Wang profile")
    if not 0 < delta_c < 1:  # a pure claim (delta = 0) has no epsilon(delta) bounds
        return out, None
    e = gdp_epsilon(g.mu, delta_c)
    return out, Bounds(lower=gdp_epsilon_lower(g.mu, delta_c), estimate=e, upper=e)


def _from_approx(claim: PrivacyClaim, eps_e: float, delta_e: float) -> tuple[Outcome, Bounds | None]:
    form = claim.form
    if form == "epsilon":
        eps_c, delta_c = float(claim.exact("epsilon")), float(claim.exact("delta"))
        if delta_c == 0 and delta_e == 0:
            return _exact_compare(
                "epsilon", Fraction(eps_e), claim.exact("epsilon"), "randomized response (tight for f_{eps,0})"
            ), None
        if Fraction(eps_e) <= claim.exact("epsilon") and Fraction(delta_e) <= claim.exact("delta"):
            return Verified(
                f"{EXACT}: ({_fmt(eps_e)}, {_fmt(delta_e)})-DP implies ({_fmt(eps_c)}, {_fmt(delta_c)})-DP: "
                "both parameters are no larger"
            ), None
        enc = approx_dp_profile_enclosure(eps_e, delta_e, eps_c)
        return _profile_compare(
            eps_c, delta_c, enc, enc, "exact profile of f_{eps,delta} (attained by the four-point mechanism)"
        )[0], None
    if delta_e > 0:
        return Refuted(
            f"{EXACT}: ({_fmt(eps_e)}, {_fmt(delta_e)})-DP allows an infinite privacy loss with probability "
            f"delta > 0, so no finite {form} guarantee follows"
        ), None
    if form == "zcdp":
        rho = Fraction(eps_e) ** 2 / 2
        if rho <= claim.exact("rho"):
            return Verified(f"{EXACT}: eps-DP implies eps^2/2 = {_fmt(rho)}-zCDP [BS16, Prop. 1.4]"), None
        return Unknown(f"eps-DP gives {_fmt(rho)}-zCDP [BS16], above the claim; not tight"), None
    return Unknown(f"pure DP is not compared with a {form} claim"), None


@_decide.register
def _from_rdp(g: RDP, claim: PrivacyClaim) -> tuple[Outcome, Bounds | None]:
    if claim.form == "rdp":
        alpha = float(claim.exact("alpha"))
        if alpha in g.orders:
            eps = Fraction(g.epsilons[g.orders.index(alpha)])
            if eps <= claim.exact("epsilon"):
                return Verified(f"{EXACT}: RDP epsilon at alpha={_fmt(alpha)} is {_fmt(eps)}"), None
            return Unknown(
                f"RDP epsilon at alpha={_fmt(alpha)} is {_fmt(eps)} > claim; RDP bounds are not tight in general"
            ), None
        return Unknown(f"the RDP curve has no order {alpha}"), None
    if claim.form == "epsilon":
        eps_c, delta_c = float(claim.exact("epsilon")), float(claim.exact("delta"))
        if delta_c >= 1.0:
            return Verified("certified (trivial): delta >= 1 holds trivially"), None
        if delta_c <= 0:
            return Unknown("an RDP curve implies no pure-DP bound"), None
        enc = rdp_epsilon_upper(g.orders, g.epsilons, delta_c)
        if _le(enc.upper, eps_c):
            return Verified(
                f"{INTERVAL}{enc.method}): CKS conversion of the RDP curve gives epsilon <= {_num(enc.upper)} <= "
                f"claimed {_num(eps_c)} [CKS20, Prop. 12]"
            ), None
        return Unknown(f"CKS conversion gives epsilon <= {_num(enc.upper)} > {_num(eps_c)}; not tight"), None
    return Unknown(f"an RDP curve is not compared with a {claim.form} claim"), None


def check_composed_claim(
    parts: Sequence[Guarantee], claim: PrivacyClaim, *, budget: Budget | None = None
) -> tuple[Outcome, Bounds] | None:
    """Decide an ``(epsilon, delta)`` claim on the composition of ``parts`` from its PLD bracket.

    The composition of the parts' dominating pairs satisfies every part and is the worst case of the
    composition [KOV15], [DRS22, Thm. 3.2]: the pessimistic PLD composition bounds its profile from above (so a
    claim it meets holds for every composed release), the optimistic one from below (so a claim it violates is
    violated by that composed release). The bracket of ``delta(epsilon)`` is refined
    (:func:`semidp.accountant.pld.refine.refine`) to the relative width 1e-3 and, while the claimed delta lies
    inside it, further, within ``budget`` (default unlimited: the grid cap bounds it); an undecided claim says why
    refinement stopped. ``None`` when the claim is not an ``(epsilon, delta)`` claim or a part has no dominating
    pair here.
    """
    if claim.form != "epsilon" or not parts:
        return None
    pld_parts = [dominating_part(p) for p in parts]
    if any(p is None for p in pld_parts):
        return None
    eps_c, delta_c = float(claim.exact("epsilon")), float(claim.exact("delta"))
    if delta_c >= 1.0:
        return Verified("certified (trivial): delta >= 1 holds trivially"), Bounds(0.0, 1.0, 1.0)
    kept = [p for p in pld_parts if p is not None]
    grids: list[PLDBracket | GaussianBracket | LaplaceBracket] = []

    def compose(points: int | None) -> PLDBracket | GaussianBracket | LaplaceBracket:
        b = compose_plds(kept, points=points)
        grids.append(b)
        return b

    r = refine(compose, lambda b: b.delta(eps_c), budget=budget, target=delta_c)
    iv, bracket = r.interval, grids[-1]
    b = Bounds(lower=iv.lower, estimate=iv.upper, upper=iv.upper)
    how = (
        f"grid h = {bracket.h!r}"
        + (f" after refinement to {r.points} grid points" if r.points is not None else "")
        + "; optimistic law -> lower, pessimistic law -> upper, FFT rounding bounded"
        if isinstance(bracket, PLDBracket)
        else f"all Gaussian: mu in [{bracket.mu_lower!r}, {bracket.mu_upper!r}] in closed form [DRS22, Cor. 3.3]"
        if isinstance(bracket, GaussianBracket)
        else "one Laplace mechanism in closed form"
    )
    what = f"PLD bracket of the {len(parts)} parts' dominating pairs ({how})"
    if _le(iv.upper, delta_c):
        return Verified(
            f"certified (PLD bracket): {what}: delta({_fmt(eps_c)}) <= {_num(iv.upper)} <= claimed delta {_num(delta_c)}"
        ), b
    if not _le(iv.lower, delta_c):
        return Refuted(
            f"certified (PLD bracket): {what}: delta({_fmt(eps_c)}) >= {_num(iv.lower)} > claimed delta {_num(delta_c)}; "
            "the composition of the dominating pairs satisfies every part and violates the claim"
        ), b
    stop = f"; refinement stopped: {r.stopped_by}" if r.stopped_by else ""
    return Unknown(
        f"{what}: delta({_fmt(eps_c)}) is in [{_num(iv.lower)}, {_num(iv.upper)}], which contains the claimed delta "
        f"{_num(delta_c)}{stop}"
    ), b


__all__ = ["check_composed_claim", "decide", "dominating_part"]
