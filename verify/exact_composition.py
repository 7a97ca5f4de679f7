r"""Exact rational sums of a composed release's pure-DP or zCDP parts, and the claims they decide.

A ``published`` release with ``components`` all pure DP (no ``delta``, or ``delta = 0``) composes to
:math:`\sum_i \varepsilon_i`-DP [DR14, Thm. 3.14]; all zCDP to :math:`\sum_i \rho_i`-zCDP [BS16, Lemma 2.3].
The accountant sums the parts' floats (rounded up), so a claim equal to a sum of decimals could be decided
by binary rounding: ``30 x float(2.74) > float(82.2)``. Spec numbers keep their decimal text
(:func:`verify.spec_numbers.decimal_value`), so the sum here is the exact rational of the decimals written,
compared exactly with the claim's own decimal value (:func:`decimal_claim`). Everything else reads spec
numbers as before (their binary values).

Under Semi-DP at an exact :math:`a(t)` each part is grouped first [CA24, Prop. 21]: an
:math:`\varepsilon`-DP part gives :math:`a\varepsilon`, a :math:`\rho`-zCDP part :math:`a^2\rho`
(group privacy, [DR14, Thm. 2.2], [BS16, Prop. 1.9]), still exact.

Both sums are tight, so they refute as well as verify: randomized response with parameters
:math:`\varepsilon_i` attains :math:`(\sum\varepsilon_i, 0)` and no smaller pure epsilon [KOV15]; Gaussians
attain :math:`\sum\rho_i`-zCDP exactly. Any other claim form is left to :mod:`verify.claims`.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Literal, Optional

from semidp.accountant.core.outcome import Outcome, Refuted, Verified
from semidp.verify.privacy_claim import PrivacyClaim
from semidp.verify.spec import GuaranteeSpec
from semidp.verify.spec_numbers import decimal_value

EXACT_SUM = "certified (exact rational)"


@dataclass(frozen=True)
class ExactSum:
    """The composed guarantee as an exact rational: ``epsilon`` (pure DP) or ``rho`` (zCDP), unitless."""

    form: Literal["epsilon", "rho"]
    value: Fraction
    parts: int


def exact_sum(components: Optional[tuple[GuaranteeSpec, ...]], group: int = 1) -> ExactSum | None:
    """The exact sum of ``components`` each grouped to ``group`` (1 for plain DP; a(t) for Semi-DP), when all
    are pure DP or all are zCDP; ``None`` otherwise (mixed or approximate parts are left to the accountant).

    >>> from semidp.verify.spec import EpsilonGuarantee
    >>> g = EpsilonGuarantee(epsilon=Fraction(137, 50))
    >>> exact_sum((g,) * 30)
    ExactSum(form='epsilon', value=Fraction(411, 5), parts=30)
    """
    if not components or group < 1:
        return None
    rhos = [c.zcdp for c in components]  # decimal values below
    if all(r is not None for r in rhos):
        return ExactSum(
            "rho", group * group * sum((decimal_value(r or Fraction(0)) for r in rhos), Fraction(0)), len(components)
        )
    pure = [
        c.epsilon if not c.delta and c.mu is None and c.zcdp is None and c.rdp is None else None for c in components
    ]
    if all(e is not None for e in pure):
        return ExactSum(
            "epsilon", group * sum((decimal_value(e or Fraction(0)) for e in pure), Fraction(0)), len(components)
        )
    return None


def decimal_claim(g: GuaranteeSpec) -> PrivacyClaim:
    """The claim ``g`` states, its numbers read as the decimals they were written as (``epsilon = 82.2``: 411/5)."""

    return PrivacyClaim.of_spec(g.with_numbers(decimal_value))


def decide_exact(claim: PrivacyClaim, total: ExactSum) -> Outcome | None:
    """Decide ``claim`` from the exact sum when the forms match (a pure sum against an epsilon claim, a zCDP
    sum against a zCDP claim); ``None`` when this sum does not decide it.

    A pure sum at most the claim's epsilon verifies it at any delta; above it, it refutes a pure claim
    (delta = 0) only. A zCDP sum verifies or refutes a zCDP claim.
    """
    what = f"the sum of {total.parts} parts"
    if total.form == "epsilon" and claim.form == "epsilon":
        eps_c = claim.exact("epsilon")
        if total.value <= eps_c:
            return Verified(
                f"{EXACT_SUM}: {what}, epsilon = {_show(total.value)} <= claimed {_show(eps_c)} (decimal spec "
                "numbers summed exactly; pure DP composes additively [DR14, Thm. 3.14])"
            )
        if claim.exact("delta") == 0:
            return Refuted(
                f"{EXACT_SUM}: {what}, epsilon = {_show(total.value)} > claimed {_show(eps_c)}; randomized "
                "response with these parameters attains the sum at delta = 0 [KOV15]"
            )
        return None
    if total.form == "rho" and claim.form == "zcdp":
        rho_c = claim.exact("rho")
        if total.value <= rho_c:
            return Verified(f"{EXACT_SUM}: {what}, rho = {_show(total.value)} <= claimed {_show(rho_c)} [BS16]")
        return Refuted(
            f"{EXACT_SUM}: {what}, rho = {_show(total.value)} > claimed {_show(rho_c)}; Gaussian mechanisms "
            "with these rho attain the sum"
        )
    return None


def _show(x: Fraction) -> str:
    """``x`` as an exact decimal when it has at most 12 decimals (``82.2``), else as ``p/q``."""
    for k in range(13):
        if (10**k) % x.denominator == 0:
            n = abs(x.numerator) * (10**k // x.denominator)
            digits = str(n).rjust(k + 1, "0")
            text = f"{digits[:-k]}.{digits[-k:]}" if k else digits
            return f"-{text}" if x < 0 else text
    return f"{x.numerator}/{x.denominator}"


__all__ = ["ExactSum", "decide_exact", "decimal_claim", "exact_sum"]
