"""Fast bites for accountant/pld/engine.py: each error term of the FFT bracket against an exact composition.

The reference is the composition of the *same* grid laws by direct convolution (positive terms only, so every
entry is accurate to a relative ``k n u``) and the profile summed term by term. Against it the engine's two ends
must hold at every grid point, also where the FFT's rounding noise (``r2 * kappa``) or the mass aliased from
outside a short window (``a_up``, ``a_low``) dominates: an untilted composition (lambda = 0) queried far in the
tail, or a window shorter than the support. Dropping or flipping one of those terms then crosses the reference.
The pure-DP cap, the chord between grid points (both ends) and the composed mass at +inf are bitten through the
public bracket against exact binomial profiles. Issue Step 16.
"""

from __future__ import annotations

import math
from fractions import Fraction

import mpmath
import numpy as np
import pytest

from semidp.accountant.pld import engine as pld_engine
from semidp.accountant.pld.engine import PLDBracket, compose_plds
from semidp.accountant.pld.parts import ApproxDPPart, GaussianPart, GridLaw, LaplacePart, RandomizedResponsePart

REF = mpmath.MPContext()
REF.dps = 60


def factor(law: GridLaw, k: int) -> pld_engine._Factor:
    return pld_engine._Factor(law, k, pld_engine._Coarse.of(law))


def convolve_power(law: GridLaw, k: int) -> tuple[int, np.ndarray]:
    """(offset, masses) of the k-fold composition by direct convolution (positive terms: no cancellation)."""
    off, out = 0, np.ones(1)
    base_off, base = law.offset, law.masses
    while k:
        if k & 1:
            off, out = off + base_off, np.convolve(out, base)
        k >>= 1
        if k:
            base_off, base = 2 * base_off, np.convolve(base, base)
    return off, out


def grid_profile(off: int, masses: np.ndarray, h: float, i: int) -> float:
    """sum_{j > i} c_j (1 - e^{(i - j) h}) (finite part) at grid index i, positive terms summed with fsum."""
    j = np.arange(off, off + masses.size)
    sel = j > i
    return math.fsum((masses[sel] * -np.expm1((i - j[sel]) * h)).tolist())


def rr_profile(eps0: float, k: int, eps: float) -> mpmath.mpf:
    e0, e = REF.mpf(eps0), REF.mpf(eps)
    p, q = REF.exp(e0) / (1 + REF.exp(e0)), 1 / (1 + REF.exp(e0))
    out = REF.mpf(0)
    for j in range(k + 1):
        term = REF.binomial(k, j) * (p ** (k - j) * q**j - REF.exp(e) * q ** (k - j) * p**j)
        if term > 0:
            out += term
    return out


@pytest.mark.parametrize(("k", "max_points", "lam"), [(100, 4096, 0.0), (100, 4096, 0.5), (30, 2**20, 0.0)])
def test_tilted_fft_ends_hold_where_noise_and_aliasing_dominate(k: int, max_points: int, lam: float) -> None:
    # RR(1) on h = 2^-6: 128 grid steps per part. k = 100 on a 4096 window: the support (12801 points) is aliased
    # (a_up, a_low > 0); k = 30 fits its exact support (no aliasing). Untilted, the far tail is 10^-30 and below,
    # under the FFT's rounding noise (about 1e-16 of the peak): only r2 * kappa keeps the upper end above it.
    h = 2.0**-6
    part = RandomizedResponsePart(1.0, 2)
    checked = 0
    for upper in (True, False):
        law = pld_engine._trim(part.grid_law(h, pessimistic=upper))
        comp = pld_engine._compose_tilted([factor(law, k)], lam, max_points, upper=upper)
        off, masses = convolve_power(law, k)
        top = off + masses.size - 1
        aliased = k == 100
        assert (comp.log_delta.size - 1 < masses.size) == aliased
        assert (comp.above_log > -math.inf) == (comp.start + comp.log_delta.size - 2 < top)  # window ends below
        for i in range(off - 2, top + 2, 37):
            ref = grid_profile(off, masses, h, i)
            if upper:
                got = pld_engine._delta_from(comp, h, i * h, upper=True)
                assert got >= min(ref, 1.0) * (1 - 1e-12), (i, got, ref)  # padded masses may sum above 1
            else:
                got = pld_engine._delta_from(comp, h, i * h, upper=False, index=i)
                assert got <= ref * (1 + 1e-12), (i, got, ref)
            if 1e-3 < ref < 0.999 and not aliased:
                assert (
                    abs(got - ref) <= 1e-8 * ref + 1e-10
                )  # absolute: the FFT noise bound  # tight where the noise is negligible
            checked += 1
    assert checked > 100


def test_aliased_window_counts_the_mass_above_it() -> None:
    # lambda = 0 on a window centred at the mean: the top of the support lies above the window, and the upper
    # end there is the Chernoff bound of the mass above it (a_up), not 0
    h = 2.0**-6
    law = pld_engine._trim(RandomizedResponsePart(1.0, 2).grid_law(h, pessimistic=True))
    comp = pld_engine._compose_tilted([factor(law, 100)], 0.0, 4096, upper=True)
    end = comp.start + comp.log_delta.size - 1
    off, masses = convolve_power(law, 100)
    assert end < off + masses.size - 1
    # end - 1 is the window's top grid point (start + n - 1): the finite part there was set to 0 when the window
    # was cut below the exact top (the upper end read 0.0 against an exact 2.4e-5; fixed in pld_engine.py)
    for i in (end - 10, end - 1, end, end + 1, end + 50, end + 500):
        ref = grid_profile(off, masses, h, i)
        got = pld_engine._delta_from(comp, h, i * h, upper=True)
        assert ref > 0.0 and got >= ref and got < 1.0


def test_inf_mass_composes_outward() -> None:
    h = 1.0
    a = factor(GridLaw(0, np.array([0.9]), 0.1, h), 3)
    b = factor(GridLaw(0, np.array([0.99]), 0.01, h), 2)
    exact = 1 - (1 - REF.mpf(0.1)) ** 3 * (1 - REF.mpf(0.01)) ** 2
    up, lo = pld_engine._inf_mass([a, b], upper=True), pld_engine._inf_mass([a, b], upper=False)
    assert lo <= exact <= up and up - lo < 1e-14
    assert pld_engine._inf_mass([factor(GridLaw(0, np.array([1.0]), 0.0, h), 5)], upper=True) == 0.0
    assert pld_engine._inf_mass([a, factor(GridLaw(0, np.array([0.0]), 1.0, h), 1)], upper=False) == 1.0
    tiny = factor(GridLaw(0, np.array([1.0]), 1e-300, h), 1)
    assert pld_engine._inf_mass([tiny], upper=True) >= 1e-300 and pld_engine._inf_mass([tiny], upper=False) <= 1e-300


@pytest.mark.parametrize(("lam", "h", "n"), [(0.0, 2.0**-6, 1024), (0.5, 2.0**-6, 1024), (3.0, 0.5, 64)])
def test_kappa_norm_and_geometric_sums_against_60_digits(lam: float, h: float, n: int) -> None:
    lm, hm = REF.mpf(lam), REF.mpf(h)
    exact = REF.sqrt(sum((REF.exp(-lm * hm * m) * (1 - REF.exp(-hm * m))) ** 2 for m in range(1, n + 1)))
    got = pld_engine._kappa_norm(lam, h, n)
    assert exact <= got <= exact * (1 + 1e-6)
    for alpha in (0.0, lam * h, 2.5):
        s = sum(REF.exp(-REF.mpf(alpha) * m) for m in range(1, n + 1))
        assert abs(pld_engine._geometric_sum(alpha, n) - s) <= 1e-13 * s


def test_fold_and_cpow() -> None:
    x = np.arange(1.0, 8.0)
    assert pld_engine._fold(x, 5, 4).tolist() == [4.0, 1.0 + 5.0, 2.0 + 6.0, 3.0 + 7.0]
    assert pld_engine._fold(x, -1, 8).tolist() == [2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 0.0, 1.0]
    z = np.array([0.5 + 0.25j, -1.0 + 0.0j, 1j])
    for k in (1, 2, 5, 8, 13):
        assert np.allclose(pld_engine._cpow(z, k), z**k, rtol=1e-14, atol=0)


# ---------------------------------------------------------------------------------------------- the public bracket


@pytest.mark.parametrize("lattice", [True, False])
def test_pure_dp_cap_and_atoms_at_inf(lattice: bool) -> None:
    # 40 x (0.5, 1e-3)-DP: every finite loss is at most 20, so at and beyond 20 delta is the mass at +inf
    br = compose_plds([(ApproxDPPart(0.5, 1e-3), 40)], grid=2.0**-7, lattice=lattice)
    assert isinstance(br, PLDBracket)
    inf = 1 - (1 - REF.mpf(1e-3)) ** 40
    for eps in (20.0, 25.0):
        lo, up = br.delta(eps)
        assert lo <= inf <= up and up - lo < 1e-15
    lo, up = br.delta(19.5)
    assert up > float(inf)  # one atom below the cap: its mass counts
    # epsilon for a delta that covers the mass at +inf is at most the cap, 20
    lo, up = br.epsilon(float(inf) * 1.000001)
    assert up <= 20.0 and lo <= up
    assert br.epsilon(float(inf) * 0.99).upper == math.inf


def test_pure_dp_cap_for_randomized_response() -> None:
    br = compose_plds([(RandomizedResponsePart(0.3, 2), 20)], grid=2.0**-5)
    assert isinstance(br, PLDBracket) and br.loss_cap == 6.000000000000001 or br.loss_cap >= 6.0
    assert br.loss_cap == float(Fraction(3, 10) * 20) or br.loss_cap == math.nextafter(6.0, 7.0)
    assert br.delta(6.0).upper == 0.0 and br.delta(5.9).upper > 0.0
    ref = rr_profile(0.3, 20, 5.9)
    lo, up = br.delta(5.9)
    assert lo <= ref <= up
    assert br.epsilon(1e-300).upper <= br.loss_cap


@pytest.mark.parametrize(("eps0", "k"), [(1.0, 10), (0.5, 30)])
def test_chords_between_grid_points_hold_and_help(eps0: float, k: int) -> None:
    # atoms on the grid (upper) and on their lattice (lower): both ends are exact up to pads at grid points; at an
    # eps between grid points, the upper chord lies below the grid point underneath (profile convex in e^eps) and
    # the lower chord above the label above, both still bracketing the exact profile
    h = 2.0**-3
    br = compose_plds([(RandomizedResponsePart(eps0, 2), k)], grid=h)
    assert isinstance(br, PLDBracket)
    for eps in (0.3, 1.05, 2.2):
        ref = rr_profile(eps0, k, eps)
        lo, up = br.delta(eps)
        assert lo <= ref <= up, (eps, lo, float(ref), up)
        below = br.delta(math.floor(eps / h) * h).upper
        above = br.delta(math.ceil(eps / h) * h).lower
        assert up < below and lo > above
        assert (up - float(ref)) / float(ref) < 0.02 and (float(ref) - lo) / float(ref) < 0.02
    for delta in (1e-2, 1e-4):
        lo, up = br.epsilon(delta)
        assert rr_profile(eps0, k, up) <= delta * (1 + 1e-12)
        assert lo == 0.0 or rr_profile(eps0, k, lo) >= delta * (1 - 1e-12)
        assert up - lo < 0.3


def test_laplace_composition_bracket_is_tight_and_ordered() -> None:
    # continuous parts on a non-power-of-two lattice lower end: the shift and slack bookkeeping
    br = compose_plds([(LaplacePart(2.0), 6)], grid=2.0**-8)
    assert isinstance(br, PLDBracket) and br.lower_h > 0.0 and br.lower_shift == Fraction(-3)
    for eps in (0.0, 0.5, 1.5, 2.9):
        lo, up = br.delta(eps)
        assert 0.0 <= lo <= up and up - lo <= 0.02 * up
    assert br.delta(3.0).upper == 0.0  # the cap: 6 x 1/2
    lo, up = br.epsilon(1e-3)
    assert lo <= up and up - lo < 0.1


def test_coarse_grid_beyond_the_chord_limit_keeps_the_grid_point() -> None:
    # h = 512 > CHORD_MAX_H: e^h overflows, so epsilon's upper end is the grid point where the bound holds
    br = compose_plds([(ApproxDPPart(1000.0, 0.0), 2)], grid=512.0)
    assert isinstance(br, PLDBracket) and br.h == 512.0
    lo, up = br.epsilon(0.5)
    exact = 2000.0 + math.log(0.5)  # delta(eps) = 1 - e^{eps - 2000} near the top (e^-1000 terms aside)
    assert lo <= exact <= up <= 2000.0
    lo, up = br.delta(1999.0)
    assert lo <= -math.expm1(-1.0) <= up


def two_atom_law(p_top: float, m: int, h: float) -> GridLaw:
    """Masses ``1 - p_top`` at grid index 0 and ``p_top`` at index ``m`` (zeros between): a composition of two has
    three atoms, at 0, m and 2m, with binomial masses."""
    masses = np.zeros(m + 1)
    masses[0], masses[m] = 1.0 - p_top, p_top
    return GridLaw(0, masses, 0.0, h)


def three_atom_profile(p_top: float, m: int, h: float, i: int) -> float:
    """Finite part of the 2-fold composition of :func:`two_atom_law` at grid index ``i`` (exact to a few ulps)."""
    atoms = ((0, (1 - p_top) ** 2), (m, 2 * p_top * (1 - p_top)), (2 * m, p_top**2))
    return math.fsum(c * -math.expm1((i - j) * h) for j, c in atoms if j > i)


def test_cut_window_upper_end_adds_the_mass_above_the_window() -> None:
    # two factors with atoms at 0 and m = 40000: the composition has atoms at 0, m, 2m (80001 support points, too
    # many for an exact window); max_points 2^16 makes a 65536-point window. With the top atom unlikely the window
    # starts at the support's bottom (no mass below it, a_low = 0) and the atom at 2m (mass 0.01) lies above the
    # window: the FFT wraps it onto index 2m - n = 14464, below the points queried, so between m and the window's
    # top the finite part is ~0 and only a_up keeps the upper end above the truth (0.01 (1 - e^{(i - 2m) h})).
    h, m, p = 2.0**-10, 40000, 0.1
    law = two_atom_law(p, m, h)
    comp = pld_engine._compose_tilted([factor(law, 2)], 0.0, 2**16, upper=True)
    assert comp.start == 0 and comp.start + comp.log_delta.size - 2 < 2 * m  # the window is cut below the top
    for i in (m, m + 1000, 50000, 60000, 65000, 65535, 65536, 70000, 79999):
        ref = three_atom_profile(p, m, h, i)
        got = pld_engine._delta_from(comp, h, i * h, upper=True)
        assert ref > 0.0 and got >= ref, (i, got, ref)
        assert got < 1.0


def test_lower_end_subtracts_the_mass_wrapped_from_below_the_window() -> None:
    # the mirror case: the top atom likely (p_top = 0.9), so the window ends at the support's top (a_up = 0) and the
    # atom at 0 (mass 0.01) lies below it; the FFT wraps it onto index n = 65536 inside the window. The lower end
    # must subtract a_low (the Chernoff bound of that mass) everywhere in the window: adding it instead (a_up - a_low)
    # puts the lower end above the truth.
    h, m, p = 2.0**-10, 40000, 0.9
    law = two_atom_law(p, m, h)
    comp = pld_engine._compose_tilted([factor(law, 2)], 0.0, 2**16, upper=False)
    assert comp.start > 0 and comp.above_log == -math.inf  # mass below the window, none above
    for i in range(comp.start, 2 * m, 997):
        ref = three_atom_profile(p, m, h, i)
        got = pld_engine._delta_from(comp, h, i * h, upper=False, index=i)
        assert got <= ref, (i, got, ref)
        if i > m:
            assert got >= ref - 0.1  # a_low (a Chernoff bound of the 0.01 below) is all that is given away here


@pytest.mark.parametrize("upper", [True, False])
def test_grid_point_bound_rounds_its_exponential_outward(upper: bool) -> None:
    # At a grid point the bound is e^{log_delta[j]} + inf_mass, a real number: the float returned must lie on the
    # bound's side of it (read at 60 digits). The last (1 + 8u) / (1 - 4u) is what puts it there; turned around,
    # the float lands about 4u on the wrong side at every grid point.
    h = 2.0**-6
    part = ApproxDPPart(1.0, 1e-3)  # mass at +inf too
    law = pld_engine._trim(part.grid_law(h, pessimistic=upper))
    comp = pld_engine._compose_tilted([factor(law, 5)], 0.0, 4096, upper=upper)
    assert comp.inf_mass > 0
    checked = 0
    for j in range(1, comp.log_delta.size - 1):
        if comp.log_delta[j] == -math.inf:
            continue
        i = comp.start - 1 + j
        got = pld_engine._delta_from(comp, h, i * h, upper=upper, index=None if upper else i)
        exact = REF.exp(REF.mpf(float(comp.log_delta[j]))) + REF.mpf(comp.inf_mass)
        assert (got >= exact) if upper else (got <= exact), (j, got, float(exact))
        checked += 1
    assert checked > 100


def test_epsilon_lower_end_needs_the_real_bound_above_delta() -> None:
    # The lower end of epsilon(delta) may stop at label i only if the optimistic bound there, the real number
    # e^{log_delta} + inf_mass, exceeds delta. Query delta = that bound's float where the float rounds up (it is
    # then above the real bound by < 1 ulp): label i does not qualify, so the answer stays below i h. Tested with
    # (1 + 4u) instead of (1 - 4u) on the float, the label qualifies and the answer is i h: a lower end past the
    # point the proof reaches.
    br = compose_plds([(GaussianPart(1.0), 4)], grid=2.0**-6)  # no lattice: labels i h, no shift
    assert isinstance(br, PLDBracket) and br.lower_shift == 0 and br.lower_slack == 0.0
    h = br.lower_h or br.h
    comp = br._composed(0.0, upper=False)
    checked = 0
    for j in range(1, comp.log_delta.size - 1, 3):
        real = REF.exp(REF.mpf(float(comp.log_delta[j]))) + REF.mpf(comp.inf_mass)
        d = float(real)
        if not (0.0 < d < 1.0) or REF.mpf(d) <= real:
            continue
        i = comp.start - 1 + j
        if i <= 1:
            continue  # the answer is clipped at 0
        assert br._eps_lower(comp, d) < i * h, (j, d)
        checked += 1
    assert checked > 10
