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
with :class:`~semidp.accountant.errors.InvalidArgument` (a ``ValueError``), as is ``nan``, a boolean or a
string that is not a number.
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass
from fractions import Fraction
from typing import Literal, Union

from semidp.accountant.errors import InvalidArgument
from semidp.accountant.guarantees import GDP, RDP, ZCDP, ApproxDP, Guarantee, PureDP
from semidp.accountant.outcome import Bounds, Outcome, Refuted, Unknown, Verified
from semidp.accountant.semidp import NoFiniteGuarantee
from semidp.verify.claims import Claim
from semidp.verify.claims import check_claim as _decide
from semidp.verify.report import detail_of

Form = Literal["epsilon", "mu", "zcdp", "rdp"]
#: A claim parameter as given: a number, a Fraction, or an exact rational string such as ``"1/2"``.
Number = Union[float, int, Fraction, str]
_PARAMS = ("epsilon", "delta", "mu", "rho", "alpha")


def _parameter(form: str, name: str, v: object) -> float | int | Fraction | None:
    """A claim parameter as a finite number (a string read as the exact rational it writes)."""
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, (int, float, Fraction, str)):
        raise InvalidArgument(f"a {form!r} claim's {name} must be a number or a rational string, got {v!r}.")
    if isinstance(v, str):
        try:
            exact = Fraction(v.strip())
        except (ValueError, ZeroDivisionError):
            raise InvalidArgument(
                f"a {form!r} claim's {name}={v!r} is not a number (write e.g. 0.5 or '1/2')."
            ) from None
        return _finite(form, name, exact)
    return _finite(form, name, v)


def _finite(form: str, name: str, v: float | int | Fraction) -> float | int | Fraction:
    """``v`` if finite and within the float range the accountant computes in, else :class:`InvalidArgument`."""
    try:
        as_float = float(v)
    except OverflowError:
        as_float = math.inf
    if math.isnan(as_float):
        raise InvalidArgument(f"a {form!r} claim's {name} is nan, not a number.")
    if not math.isfinite(as_float):
        raise InvalidArgument(
            f"a {form!r} claim's {name} is infinite or too large (at most {sys.float_info.max:.3g}): an infinite "
            f"{name} claims nothing; omit the claim."
        )
    return v


@dataclass(frozen=True)
class PrivacyClaim:
    """A claimed guarantee: ``form`` and its parameters (exact rationals accepted)."""

    form: Form
    epsilon: Number | None = None
    """``epsilon`` (forms ``epsilon`` and ``rdp``)."""
    delta: Number = 0.0
    """``delta`` (form ``epsilon``; 0 for pure DP)."""
    mu: Number | None = None
    rho: Number | None = None
    alpha: Number | None = None
    """The Renyi order (form ``rdp``)."""

    def __post_init__(self) -> None:
        need = {"epsilon": ("epsilon",), "mu": ("mu",), "zcdp": ("rho",), "rdp": ("alpha", "epsilon")}
        if self.form not in need:
            raise InvalidArgument(f"form={self.form!r} must be one of {sorted(need)}.")
        for name in _PARAMS:  # strings become exact Fractions; inf, nan, bools and non-numbers are refused
            object.__setattr__(self, name, _parameter(self.form, name, getattr(self, name)))
        for name in need[self.form]:
            v = getattr(self, name)
            if v is None or not v >= 0:
                raise InvalidArgument(f"a {self.form!r} claim needs {name} >= 0, got {v!r}.")
        if not 0 <= self.delta <= 1:  # type: ignore[operator]
            raise InvalidArgument(f"delta={self.delta!r} must be in [0, 1].")

    @classmethod
    def epsilon_delta(cls, epsilon: Number, delta: Number = 0.0) -> PrivacyClaim:
        """:math:`(\\varepsilon,\\delta)`-DP (pure DP with ``delta = 0``)."""
        return cls("epsilon", epsilon=epsilon, delta=delta)

    @classmethod
    def gdp(cls, mu: Number) -> PrivacyClaim:
        """:math:`\\mu`-GDP [DRS22, Def. 2.6]."""
        return cls("mu", mu=mu)

    @classmethod
    def zcdp(cls, rho: Number) -> PrivacyClaim:
        """:math:`\\rho`-zCDP [BS16, Def. 1.1]."""
        return cls("zcdp", rho=rho)

    @classmethod
    def rdp(cls, alpha: Number, epsilon: Number) -> PrivacyClaim:
        """:math:`(\\alpha,\\varepsilon)`-RDP [Mir17, Def. 4]."""
        return cls("rdp", alpha=alpha, epsilon=epsilon)

    @classmethod
    def of(cls, g: Guarantee) -> PrivacyClaim:
        """The claim that ``g`` holds (ε-DP, (ε, δ)-DP, GDP, zCDP or RDP; f-DP is not a claim form)."""
        if isinstance(g, PureDP):
            return cls.epsilon_delta(g.epsilon)
        if isinstance(g, ApproxDP):
            return cls.epsilon_delta(g.epsilon, g.delta)
        if isinstance(g, GDP):
            return cls.gdp(g.mu)
        if isinstance(g, ZCDP):
            return cls.zcdp(g.rho)
        if isinstance(g, RDP) and len(g.orders) == 1:
            return cls.rdp(g.orders[0], g.epsilons[0])
        raise InvalidArgument(
            f"{type(g).__name__} is not a claim form; claim epsilon/delta, mu, rho or RDP at one order."
        )

    def as_claim(self) -> Claim:
        """The internal form used by :mod:`verify.claims`."""
        if self.form == "epsilon":
            return ("epsilon", self.epsilon, self.delta)  # type: ignore[return-value]
        if self.form == "mu":
            return ("mu", self.mu)  # type: ignore[return-value]
        if self.form == "zcdp":
            return ("zcdp", self.rho)  # type: ignore[return-value]
        return ("rdp", self.alpha, self.epsilon)  # type: ignore[return-value]


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
    typed = claim if isinstance(claim, PrivacyClaim) else PrivacyClaim.of(claim)
    outcome, bounds = _decide(typed.as_claim(), effective)
    if not isinstance(outcome, (Verified, Refuted, Unknown)):  # pragma: no cover - the decision's types
        raise TypeError(f"unexpected outcome {outcome!r}")
    return ClaimResult(outcome, bounds)


__all__ = ["ClaimResult", "PrivacyClaim", "check_claim"]
