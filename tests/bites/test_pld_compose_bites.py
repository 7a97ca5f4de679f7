"""Fast bites for :mod:`semidp.accountant.pld` (the f-DP composition): the size cap moves mass to +inf
conservatively but only the mass outside the kept window. Issue Step 16 (mutation testing)."""

from __future__ import annotations

import math

from semidp.accountant.pld import grid as pld
from semidp.accountant.profiles.tradeoff import TradeoffCurve


def rr_profile(eps0: float, k: int, eps: float) -> float:
    """delta(eps) of the k-fold composition of pure eps0-DP (randomized response): a binomial sum (floats; the
    terms are positive and few)."""
    p, q = math.exp(eps0) / (1 + math.exp(eps0)), 1 / (1 + math.exp(eps0))
    out = 0.0
    for j in range(k + 1):
        term = math.comb(k, j) * (p ** (k - j) * q**j - math.exp(eps) * q ** (k - j) * p**j)
        out += max(term, 0.0)
    return out


def test_size_cap_moves_only_the_mass_outside_the_window() -> None:
    # max_points = 20000 forces the cap (6 parts of pure 1-DP on the default grid: the lowest losses are moved up,
    # conservative and loose at small eps); at eps = 5 the profile is the mass near the top, kept in the window, so
    # it stays within 1e-4 of the exact one. A cap that sent mass 1 to +inf would read delta = 1 everywhere.
    f = TradeoffCurve.from_approx_dp(1.0, 0.0)
    for e in (0.0, 1.0, 3.0, 5.0):
        capped = pld.profile([f] * 6, 0.0, e, max_points=20000)
        exact = rr_profile(1.0, 6, e)
        assert exact * (1 - 1e-9) <= capped < 0.995, (e, capped, exact)
        if e == 5.0:
            assert capped <= exact + 1e-4, (capped, exact)  # the grid's discretisation: 2e-5 here
