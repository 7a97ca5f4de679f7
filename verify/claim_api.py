r"""The public claim API: ``semidp.check_claim(effective, claim)`` with a typed claim, for users' own tests.

A :class:`PrivacyClaim` is what a release promises, in one of the forms a spec's ``[claim]`` takes:
:math:`(\varepsilon,\delta)`-DP, :math:`\mu`-GDP, :math:`\rho`-zCDP or :math:`(\alpha,\varepsilon)`-RDP. A
guarantee value converts to one (:meth:`PrivacyClaim.of`). :func:`check_claim` decides it against the
effective guarantee exactly as an audit's ``claim`` check does (:mod:`verify.claims`: verified from a
certified upper bound, refuted from a certified lower bound, otherwise unknown) and returns a
:class:`ClaimResult`.

>>> from semidp import GDP, ZCDP, check_claim, PrivacyClaim
>>> check_claim(ZCDP(2.56), PrivacyClaim.zcdp(2.56)).holds
True
>>> r = check_claim(ZCDP(10.24), PrivacyClaim.epsilon_delta(17.14, 1e-10))   # [CA24, Sec. 6]
>>> r.holds, r.status
(False, 'refuted')
>>> check_claim(GDP(1.0), GDP(1.0)).holds                                        # a guarantee as the claim
True
>>> PrivacyClaim.zcdp("1/2").rho                                                 # an exact rational
Fraction(1, 2)

Parameters are numbers (``int``, ``float``), :class:`fractions.Fraction` values or exact rational strings
(``"1/2"``, ``"0.1"``, read as the rational they write, not as a float); a string is kept as its
``Fraction``, so a claim of ``"1/3"`` is compared exactly. Every parameter must be finite: an infinite
epsilon, rho or mu claims nothing, and a claim that cannot be refuted or verified meaningfully is refused
with :class:`~semidp.accountant.core.errors.InvalidArgument` (a ``ValueError``), as is ``nan``, a boolean or a
string that is not a number.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import get_args

from semidp.accountant.core.errors import InvalidArgument
from semidp.accountant.core.outcome import Bounds, Outcome, Refuted, Unknown, Verified
from semidp.accountant.guarantees.definitions import Guarantee
from semidp.accountant.guarantees.semidp import NoFiniteGuarantee
from semidp.verify.claims import decide
from semidp.verify.privacy_claim import PrivacyClaim
from semidp.verify.report import detail_of


@dataclass(frozen=True)
class ClaimResult:
    """The decision on a claim, with its certificate or counterexample text and epsilon bounds if any."""

    outcome: Outcome

    bounds: Bounds | None = None

    @property
    def holds(self) -> bool | None:
        """``True`` verified, ``False`` refuted, ``None`` unknown (never a guess)."""
        if isinstance(self.outcome, Verified):
            return True
        if isinstance(self.outcome, Refuted):
            return False
        return None

    @property
    def status(self) -> str:
        """``verified``, ``refuted`` or ``unknown``."""
        return {True: "verified", False: "refuted", None: "unknown"}[self.holds]

    @property
    def detail(self) -> str:
        """The certificate (verified), the counterexample (refuted) or the reason (unknown)."""
        return detail_of(self.outcome)


def check_claim(effective: Guarantee | NoFiniteGuarantee, claim: PrivacyClaim | Guarantee) -> ClaimResult:
    """Decide whether ``claim`` follows from ``effective`` (the audit's ``claim`` check, :mod:`verify.claims`).

    ``claim`` is a :class:`PrivacyClaim` or a guarantee value (read as "this guarantee holds"). The result
    is verified only from a certified upper bound and refuted only from a certified lower bound.
    """
    if isinstance(effective, (tuple, PrivacyClaim)):  # the retired claim-first order of verify.check_claim
        raise InvalidArgument(
            "check_claim(effective, claim): the effective guarantee comes first and the claim is a PrivacyClaim "
            f"(or a guarantee); got {type(effective).__name__} first."
        )
    if not isinstance(effective, (*get_args(Guarantee), NoFiniteGuarantee)):
        raise InvalidArgument(f"check_claim: effective must be a guarantee value, got {effective!r}.")
    typed = claim if isinstance(claim, PrivacyClaim) else PrivacyClaim.of(claim)
    outcome, bounds = decide(effective, typed)
    if not isinstance(outcome, (Verified, Refuted, Unknown)):  # pragma: no cover - the decision's types
        raise TypeError(f"unexpected outcome {outcome!r}")
    return ClaimResult(outcome, bounds)


__all__ = ["ClaimResult", "PrivacyClaim", "check_claim"]
