r"""Closed-form PLD brackets and the certified interval type of :mod:`semidp.accountant.pld.engine`.

:class:`GaussianBracket` (a composition of Gaussian parts is exactly :math:`\mu`-GDP [DRS22, Cor. 3.3]) and
:class:`LaplaceBracket` (one Laplace mechanism [KJH20, Sec. 6]) answer the same ``delta(epsilon)`` /
``epsilon(delta)`` queries as the FFT bracket, outward-rounded; :func:`semidp.accountant.pld.engine.compose_plds`
returns them when every part has the closed form. Units: epsilon in nats, delta a probability.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import NamedTuple

import mpmath

from semidp.accountant.core.arguments import check_in_interval
from semidp.accountant.core.directed import MP, down, sqrt_down, sqrt_up, up
from semidp.accountant.pld.parts import GaussianPart, PLDPart
from semidp.accountant.profiles.gaussian import gdp_delta, gdp_delta_lower, gdp_epsilon, gdp_epsilon_lower


class PLDInterval(NamedTuple):
    """A certified interval ``lower <= truth <= upper``."""

    lower: float
    """Lower bound (from the optimistic law)."""
    upper: float
    """Upper bound (from the pessimistic law)."""

    @property
    def width(self) -> float:
        """``upper - lower`` (``inf`` if the upper bound is infinite)."""
        return self.upper - self.lower


@dataclass(frozen=True)
class GaussianBracket:
    r"""A composition of Gaussian parts in closed form: :math:`\mu=\sqrt{\sum_i k_i\Delta_i^2/\sigma_i^2}`-GDP,
    exactly [DRS22, Cor. 3.3], bracketed only by the rounding of :math:`\mu` (outward) and the certified
    GDP profile [BW18, Thm. 8] (:mod:`accountant.profiles.gaussian`). Same queries as :class:`PLDBracket`."""

    mu_lower: float
    mu_upper: float
    count: int
    """Number of composed mechanisms."""

    def delta(self, epsilon: float) -> PLDInterval:
        """Certified ``(lower, upper)`` of the composed privacy profile at ``epsilon``."""
        eps = check_in_interval("epsilon", epsilon, -1e6, 1e6)
        return PLDInterval(gdp_delta_lower(self.mu_lower, eps), gdp_delta(self.mu_upper, eps))

    def epsilon(self, delta: float) -> PLDInterval:
        """Certified ``(lower, upper)`` of the smallest ``epsilon >= 0`` with ``delta(epsilon) <= delta``."""
        d = check_in_interval("delta", delta, 0.0, 1.0, lo_open=True)
        up_eps = max(0.0, gdp_epsilon(self.mu_upper, d))  # epsilon grows with mu: a start for the lower end
        return PLDInterval(max(0.0, gdp_epsilon_lower(self.mu_lower, d, start=up_eps)), up_eps)


@dataclass(frozen=True)
class LaplaceBracket:
    r"""One Laplace mechanism in closed form: with :math:`D=\Delta/b`,
    :math:`\delta(\varepsilon)=1-e^{(\varepsilon-D)/2}` on :math:`[-D,D]`, :math:`1-e^{\varepsilon}` below,
    0 above [KJH20, Sec. 6] (checked against the grid bracket in the tests); evaluated at 50 digits with
    :math:`D` and the result rounded outward."""

    d_lower: float
    d_upper: float
    count: int = 1

    @staticmethod
    def _delta(eps: float, d: float) -> mpmath.mpf:
        e, dd = MP.mpf(eps), MP.mpf(d)
        if e <= -dd:
            return -MP.expm1(e)
        return -MP.expm1((e - dd) / 2) if e < dd else MP.mpf(0)

    def delta(self, epsilon: float) -> PLDInterval:
        """Certified ``(lower, upper)`` of the privacy profile at ``epsilon``."""
        eps = check_in_interval("epsilon", epsilon, -1e6, 1e6)
        return PLDInterval(max(0.0, down(self._delta(eps, self.d_lower))), min(1.0, up(self._delta(eps, self.d_upper))))

    def epsilon(self, delta: float) -> PLDInterval:
        r"""Certified ``(lower, upper)`` of the smallest ``epsilon >= 0`` with ``delta(epsilon) <= delta``:
        :math:`\max(0, D + 2\log(1-\delta))`."""
        d = check_in_interval("delta", delta, 0.0, 1.0, lo_open=True)
        lo = MP.mpf(self.d_lower) + 2 * MP.log1p(-MP.mpf(d))
        hi = MP.mpf(self.d_upper) + 2 * MP.log1p(-MP.mpf(d))
        return PLDInterval(max(0.0, down(lo)), max(0.0, up(hi)))


def gaussian_bracket(items: Sequence[tuple[PLDPart, int]]) -> GaussianBracket | None:
    """The closed form when every part is Gaussian, else ``None``."""
    if not all(isinstance(p, GaussianPart) for p, _ in items):
        return None
    gauss = [(p, k) for p, k in items if isinstance(p, GaussianPart)]
    mu2 = sum((k * (Fraction(p.sensitivity) / Fraction(p.sigma)) ** 2 for p, k in gauss), Fraction(0))
    return GaussianBracket(sqrt_down(mu2), sqrt_up(mu2), sum(k for _, k in items))
