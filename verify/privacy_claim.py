r"""The one claim type: :class:`PrivacyClaim`, what a release promises, from the spec loader to the report.

A claim takes one of the forms a spec's ``[claim]`` takes: :math:`(\varepsilon,\delta)`-DP,
:math:`\mu`-GDP, :math:`\rho`-zCDP or :math:`(\alpha,\varepsilon)`-RDP at one order. Parameters are
numbers, :class:`fractions.Fraction` values or exact rational strings (``"1/2"``), checked finite and in
range on construction (:class:`~semidp.accountant.core.errors.InvalidArgument` otherwise). The decisions of
:mod:`verify.claims` and the public :func:`semidp.check_claim` take this type only.

>>> PrivacyClaim.zcdp("1/2").rho
Fraction(1, 2)
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass
from fractions import Fraction
from typing import Literal, Union

from semidp.accountant.core.errors import InvalidArgument
from semidp.accountant.guarantees.definitions import GDP, RDP, ZCDP, ApproxDP, Guarantee, PureDP
from semidp.verify.spec import GuaranteeSpec, MuGuarantee, RdpGuarantee, ZcdpGuarantee

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

    @classmethod
    def of_spec(cls, g: GuaranteeSpec) -> PrivacyClaim:
        """The claim a validated spec guarantee table states (``[claim] guarantee``, specs/README.md)."""
        if isinstance(g, ZcdpGuarantee):
            return cls.zcdp(g.zcdp)
        if isinstance(g, MuGuarantee):
            return cls.gdp(g.mu)
        if isinstance(g, RdpGuarantee):
            return cls.rdp(g.rdp.alpha, g.rdp.epsilon)
        return cls.epsilon_delta(g.epsilon, g.delta if g.delta is not None else 0)

    def exact(self, name: Literal["epsilon", "delta", "mu", "rho", "alpha"]) -> Fraction:
        """The parameter ``name`` as an exact rational (the binary value of a float, the rational of a string)."""
        v = getattr(self, name)
        if v is None:
            raise InvalidArgument(f"a {self.form!r} claim has no {name}.")
        return Fraction(v)


__all__ = ["Form", "Number", "PrivacyClaim"]
