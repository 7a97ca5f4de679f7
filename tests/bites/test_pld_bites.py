"""Fast guards of the PLD bracket's error terms (accountant/pld/parts.py, pld_engine.py) against exact profiles.

Small coarse grids and large truncated tails make every error term matter: the Gaussian part's truncated upper
tail (moved to +inf when pessimistic), the pessimistic atoms' losses (rounded up onto the grid), the aliased mass
of an FFT window shorter than the composed support, and the optimistic law's dropped mass. Each bracket must
contain the exact profile (closed form or exact binomial sum at 60 digits), so dropping or flipping one of these
terms fails a test here (issue Step 16).
"""

from __future__ import annotations

import math

import mpmath
import pytest

from semidp.accountant.pld.engine import compose_plds
from semidp.accountant.pld.parts import ApproxDPPart, GaussianPart

REF = mpmath.MPContext()
REF.dps = 60


def gauss_delta(mu: float, eps: float) -> mpmath.mpf:
    """The mu-GDP profile [BW18, Thm. 8]."""
    m, e = REF.mpf(mu), REF.mpf(eps)
    return REF.ncdf(m / 2 - e / m) - REF.exp(e) * REF.ncdf(-m / 2 - e / m)


def rr_delta(eps0: float, k: int, eps: float, delta0: float = 0.0) -> mpmath.mpf:
    """Exact profile of k-fold (eps0, delta0) randomized response [KOV15, Thm. 3.3 form]: the sum over j of
    C(k, j) (p^(k-j) q^j - e^eps q^(k-j) p^j)_+ for the eps0 part, composed with the delta0 atoms."""
    e0, e = REF.mpf(eps0), REF.mpf(eps)
    p, q = REF.exp(e0) / (1 + REF.exp(e0)), 1 / (1 + REF.exp(e0))
    pure = REF.mpf(0)
    for j in range(k + 1):
        term = REF.binomial(k, j) * (p ** (k - j) * q**j - REF.exp(e) * q ** (k - j) * p**j)
        if term > 0:
            pure += term
    keep = (1 - REF.mpf(delta0)) ** k
    return 1 - keep + keep * pure


def contains(iv: object, ref: mpmath.mpf) -> bool:
    lo, hi = iv  # type: ignore[misc]
    return REF.mpf(lo) <= ref <= REF.mpf(hi)


@pytest.mark.parametrize("eps", [0.0, 1.0, 3.0, 6.0, 9.0])
def test_gaussian_part_on_a_coarse_grid_with_heavy_tails(eps: float) -> None:
    # tail_mass 1e-3: the truncated upper tail (1e-3 of Q-mass per part) must sit at +inf in the upper law
    parts = [(GaussianPart(sigma=1.0, sensitivity=1.0), 3), (GaussianPart(sigma=2.0, sensitivity=1.0), 1)]
    br = compose_plds(parts, grid=2.0**-5, tail_mass=1e-3)
    iv = br.delta(eps)
    ref = gauss_delta(math.sqrt(3 + 0.25), eps)
    assert contains(iv, ref)
    assert iv.upper >= 3e-3 * 0.9 or eps < 3  # the tails at +inf bound delta from below at large eps


def test_single_gaussian_grid_laws_bracket_the_profile() -> None:
    g = GaussianPart(sigma=1.0, sensitivity=1.0)
    up = g.grid_law(2.0**-4, pessimistic=True, tail_mass=1e-4)
    lo = g.grid_law(2.0**-4, pessimistic=False, tail_mass=1e-4)
    assert 0.5e-4 <= up.inf_mass <= 1.1e-4 and lo.inf_mass == 0.0
    for eps in (-1.0, 0.0, 0.5, 2.0, 4.0, 8.0):
        ref = gauss_delta(1.0, eps)
        assert REF.mpf(lo.delta(eps)) <= ref <= REF.mpf(up.delta(eps))
    assert float(sum(up.masses)) + up.inf_mass >= 1.0 - 1e-12
    assert float(sum(lo.masses)) <= 1.0


@pytest.mark.parametrize(("eps0", "k", "points"), [(0.3, 40, 256), (0.7, 12, 4096), (0.1, 200, 512)])
def test_composed_randomized_response_with_off_grid_atoms_and_short_windows(eps0: float, k: int, points: int) -> None:
    # 0.3 / 2^-7 is not an integer: the pessimistic atoms' losses are rounded up, the optimistic ones down;
    # points << support: the FFT window is shorter than the composed law and aliased mass is bounded
    br = compose_plds([(ApproxDPPart(eps0, 0.0), k)], grid=2.0**-7, points=points)
    for eps in (0.5, 1.5, 3.0):
        iv = br.delta(eps)
        ref = rr_delta(eps0, k, eps)
        assert contains(iv, ref), (eps, iv, float(ref))
        # the upper end (what verifies) is tight; the optimistic law floors its atoms, so its end is looser
        assert REF.mpf(iv.upper) - ref <= ref / 20 and REF.mpf(iv.lower) >= ref / 2


def test_delta_atoms_compose_exactly() -> None:
    br = compose_plds([(ApproxDPPart(0.5, 1e-3), 5), (GaussianPart(sigma=3.0, sensitivity=1.0), 1)], grid=2.0**-6)
    iv = br.delta(10.0)  # beyond every finite loss: only the atoms at +inf remain
    ref = 1 - (1 - REF.mpf(1e-3)) ** 5
    assert REF.mpf(iv.upper) >= ref and iv.upper <= 5.1e-3
    assert REF.mpf(iv.lower) <= ref + gauss_delta(1 / 3, 10.0 - 2.5)
