"""The spec's claim forms, written positionally in tests: ``claim("epsilon", eps, delta)`` and so on.

A test helper only: the package passes :class:`~semidp.verify.privacy_claim.PrivacyClaim` values, never tuples.
"""

from __future__ import annotations

from fractions import Fraction

from semidp.verify.privacy_claim import PrivacyClaim

Param = float | int | Fraction


def claim(form: str, *params: Param) -> PrivacyClaim:
    """``("epsilon", eps, delta)``, ``("mu", mu)``, ``("zcdp", rho)`` or ``("rdp", alpha, eps)`` as a claim."""
    if form == "epsilon":
        return PrivacyClaim.epsilon_delta(*params)
    if form == "mu":
        return PrivacyClaim.gdp(*params)
    if form == "zcdp":
        return PrivacyClaim.zcdp(*params)
    if form == "rdp":
        return PrivacyClaim.rdp(*params)
    raise AssertionError(f"no claim form {form!r}")
