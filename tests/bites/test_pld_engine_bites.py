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
from semidp.accountant.pld.parts import (
    ApproxDPPart,
    GaussianPart,
    GridLaw,
    LaplacePart,
    Lattice,
    RandomizedResponsePart,
)

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


# ------------------------------------------------------------------------------ the documented pads, made visible
#
# Every float pad of the engine is a multiple of the unit roundoff ``_U`` (plus a few fixed relative margins). The
# closed forms are accurate to a few ulps, so a pad made smaller (a proof obligation) or larger (needless
# looseness) hides under the float noise at the real ``_U = 2^-53``. With ``_U`` patched to ``2^-30`` every pad is
# about 10^7 times the float error: the result must then carry exactly the documented pad (to 1e-12 relative)
# above (upper ends) or below (lower ends) the exact value, computed at 60 digits. Fixed margins (1e-12, 1e-9,
# 1e-300) are checked the same way with ``_U = 0``.

U_BIG = 2.0**-30


@pytest.fixture
def big_u(monkeypatch: pytest.MonkeyPatch) -> float:
    monkeypatch.setattr(pld_engine, "_U", U_BIG)
    return U_BIG


@pytest.fixture
def no_u(monkeypatch: pytest.MonkeyPatch) -> float:
    monkeypatch.setattr(pld_engine, "_U", 0.0)
    return 0.0


def close(got: float, want: object, rel: float = 1e-12, absolute: float = 0.0) -> bool:
    w = REF.mpf(want)
    return bool(abs(REF.mpf(got) - w) <= rel * abs(w) + absolute)


def mp_geometric(alpha: float, n: int) -> mpmath.mpf:
    a = REF.mpf(alpha)
    return REF.mpf(n) if alpha == 0 else REF.exp(-a) * (1 - REF.exp(-a * n)) / (1 - REF.exp(-a))


def mp_kappa_sq(lam: float, h: float, n: int) -> mpmath.mpf:
    lm, hm = REF.mpf(lam), REF.mpf(h)
    return REF.fsum((REF.exp(-lm * hm * m) * (1 - REF.exp(-hm * m))) ** 2 for m in range(1, n + 1))


@pytest.mark.parametrize(
    ("lam", "h", "n", "units"),
    [
        (0.0, 0.5, 64, (U_BIG, 0.0)),
        (0.5, 0.5, 64, (U_BIG, 0.0)),
        (0.75, 2.0**-10, 1024, (U_BIG, 0.0)),
        (1e6, 2.0**-24, 1024, (U_BIG,)),  # the closed form is the minimum (the sums cancel to 1e-4 at _U = 0)
        # lambda <= 1 uses the closed form too: at _U = 2^-6 the sums' 32 u pad (about 49) exceeds the closed form
        # (27.4, 1 + 16 u included), so the minimum is the closed form (at the real _U the difference is smaller)
        (0.9, 2.0**-6, 1024, (2.0**-6,)),
    ],
)
def test_kappa_norm_carries_its_documented_pads(
    monkeypatch: pytest.MonkeyPatch, lam: float, h: float, n: int, units: tuple[float, ...]
) -> None:
    # bound = min(S1 - 2 S2 + S3 + 32 u (S1 + 2 S2 + S3), h^2 a (1 + a) / (1 - a)^3 (1 + 16 u)) (the closed form
    # only for lambda > 0), then sqrt(bound + 1e-300) (1 + 1e-9)
    s1, s2, s3 = (mp_geometric(c * h, n) for c in (2 * lam, 2 * lam + 1, 2 * lam + 2))
    for u in units:
        monkeypatch.setattr(pld_engine, "_U", u)
        diff = s1 - 2 * s2 + s3 + 32 * REF.mpf(u) * (s1 + 2 * s2 + s3)
        bound = diff
        if lam > 0:
            a = REF.exp(-2 * REF.mpf(lam) * h)
            closed = REF.mpf(h) ** 2 * a * (1 + a) / (1 - a) ** 3 * (1 + 16 * REF.mpf(u))
            assert abs(closed / diff - 1) > 1e-8  # which one is the minimum is clear
            bound = min(diff, closed)
        want = REF.sqrt(bound + REF.mpf(1e-300)) * (1 + REF.mpf(1e-9))
        got = pld_engine._kappa_norm(lam, h, n)
        assert close(got, want, 1e-12), (u, got, float(want))
        assert got >= REF.sqrt(mp_kappa_sq(lam, h, n))


def test_kappa_norm_closed_form_is_used_where_the_difference_cancels() -> None:
    # lambda = 1e6, h = 2^-24 (lambda h n = 61: the infinite closed form is the finite sum to e^-120): the 32 u
    # pad of the three sums is 2.7 % of the norm squared, the closed form 1.5e-6 above it (1 - e^-x <= x)
    lam, h, n = 1e6, 2.0**-24, 1024
    exact = REF.sqrt(mp_kappa_sq(lam, h, n))
    got = pld_engine._kappa_norm(lam, h, n)
    assert exact <= got <= exact * (1 + 1e-6)


def test_kappa_norm_floor_where_every_exponential_underflows() -> None:
    # lambda h = 1e4: every e^{-lambda h m} underflows to 0, so the sums are 0; the exact norm is e^-1e4 (1 - e^-1)
    # > 0, which only the 1e-300 under the square root covers (1e-150, not more)
    exact = REF.sqrt(mp_kappa_sq(1e4, 1.0, 16))
    got = pld_engine._kappa_norm(1e4, 1.0, 16)
    assert 0 < exact <= got <= 1e-150 * (1 + 2e-9)


@pytest.mark.parametrize(
    "parts",
    [
        [(0.1, 3), (0.01, 2)],
        [(0.9, 5)],
        [(1e-300, 1)],
        [(0.1, 3), (0.0, 4)],
        [(0.5, 1), (0.25, 1), (0.3, 7)],
        [(0.999999, 1000)],  # v = 1.0 in floats: the padded upper end is clamped to 1
    ],
)
def test_inf_mass_carries_its_documented_pad(big_u: float, parts: list[tuple[float, int]]) -> None:
    # s = sum k log1p(-m), v = -expm1(s), pad = 4 u (1 + #factors) max(1, |s|) (+ 1e-300):
    # upper min(1, v (1 + pad) + 1e-300), lower max(0, v (1 - pad))
    factors = [factor(GridLaw(0, np.array([1.0 - m]), m, 1.0), k) for m, k in parts]
    s = sum(k * REF.log1p(-REF.mpf(m)) for m, k in parts)
    v = -REF.expm1(s)
    pad = 4 * REF.mpf(big_u) * (1 + len(parts)) * max(1, abs(s))
    up, lo = pld_engine._inf_mass(factors, upper=True), pld_engine._inf_mass(factors, upper=False)
    assert close(up, min(1, v * (1 + pad) + REF.mpf(1e-300)), 1e-13), (up, float(v))
    assert close(lo, max(0, v * (1 - pad)), 1e-13), (lo, float(v))


def dyadic_law(n: int, offset: int, h: float, zero_block: tuple[int, int] | None = None) -> GridLaw:
    """Masses that are multiples of 2^-20 (sums of a few are exact floats), normalised to about 1."""
    rng = np.random.default_rng(n)
    masses = rng.integers(1, 2000, size=n).astype(np.float64)
    if zero_block is not None:
        masses[zero_block[0] : zero_block[1]] = 0.0
    masses = masses * 2.0 ** -math.ceil(math.log2(masses.sum()))
    return GridLaw(offset, masses, 0.0, h)


@pytest.mark.parametrize(
    ("n", "block"), [(1300, (30, 33)), (300, (5, 6)), (1, None), (1024, (0, 2)), (513, None), (512, (7, 8))]
)
def test_coarse_bins_move_their_exact_mass_to_the_ends_with_the_documented_pad(
    big_u: float, n: int, block: tuple[int, int] | None
) -> None:
    # w = ceil(n / 512) consecutive grid points per bin; the bin's mass is its exact sum times (1 + (w + 2) u), at
    # loss h (offset + w b + w - 1) (top, for t >= 0) and h (offset + w b) (bottom, for t < 0); empty bins dropped
    h, offset = 2.0**-4, -37
    law = dyadic_law(n, offset, h, block)
    coarse = pld_engine._Coarse.of(law)
    w = max(1, -(-n // 512))
    bins = [(b, math.fsum(law.masses[b * w : (b + 1) * w].tolist())) for b in range(-(-n // w))]
    kept = [(b, s) for b, s in bins if s > 0]
    assert coarse.logm.size == len(kept) < len(bins) or block is None
    assert coarse.loss_hi.tolist() == [h * (offset + w * b + w - 1) for b, _ in kept]
    assert coarse.loss_lo.tolist() == [h * (offset + w * b) for b, _ in kept]
    for lm, (_, s) in zip(coarse.logm.tolist(), kept, strict=True):
        assert close(lm, REF.log(REF.mpf(s) * (1 + (w + 2) * REF.mpf(big_u))), 0.0, 8 * 2.0**-53 * max(1, abs(lm)))
    # log-MGF: the exact log-sum of the bins at their ends, plus 1e-12 + 4 u |v|
    for t in (-2.0, -0.5, 0.0, 0.5, 1.0, 3.0):
        loss = coarse.loss_hi if t >= 0 else coarse.loss_lo
        v = REF.log(REF.fsum(REF.exp(REF.mpf(a) + t * REF.mpf(b)) for a, b in zip(coarse.logm, loss, strict=True)))
        got = float(coarse.log_mgf(np.array([t]))[0])
        assert close(got, v + REF.mpf(1e-12) + 4 * REF.mpf(big_u) * abs(v), 0.0, 1e-14 * (1 + abs(v))), (t, got)


def test_coarse_law_without_finite_mass_has_log_mgf_minus_infinity() -> None:
    coarse = pld_engine._Coarse.of(GridLaw(0, np.zeros(3), 1.0, 1.0))
    assert coarse.logm.size == 0
    assert coarse.log_mgf(np.array([-1.0, 0.0, 2.0])).tolist() == [-math.inf] * 3


def test_total_log_mgf_adds_the_factors_with_the_documented_pad(big_u: float) -> None:
    a, b = dyadic_law(700, -3, 2.0**-4), dyadic_law(90, 5, 2.0**-4)
    fa, fb = factor(a, 3), factor(b, 5)
    t = np.array([-1.0, 0.0, 0.25, 2.0])
    s = [3 * REF.mpf(x) + 5 * REF.mpf(y) for x, y in zip(fa.coarse.log_mgf(t), fb.coarse.log_mgf(t), strict=True)]
    got = pld_engine._total_log_mgf([fa, fb], t)
    for g, v in zip(got.tolist(), s, strict=True):
        assert close(g, v + 4 * REF.mpf(big_u) * 2 * abs(v), 0.0, 1e-13 * (1 + abs(v))), (g, float(v))


def test_logsumexp_rows_against_60_digits() -> None:
    a = np.array([[0.0, -1.0, 2.5], [-np.inf, -np.inf, -np.inf], [-700.0, -np.inf, -701.0], [800.0, 799.0, -3.0]])
    got = pld_engine._logsumexp_rows(a)
    assert got[1] == -math.inf
    for g, row in zip(got.tolist(), a.tolist(), strict=True):
        if math.isfinite(g):
            want = REF.log(REF.fsum(REF.exp(REF.mpf(x)) for x in row if math.isfinite(x)))
            assert close(g, want, 4e-16, 1e-15)


# ------------------------------------------------------- reading the composed profile: synthetic compositions


def synthetic(start: int = 7, n: int = 16, inf_mass: float = 1e-3, above_log: float = -9.0) -> pld_engine._Composed:
    """A composed profile on the grid indices start - 1 ... start + n - 1, strictly decreasing, with mass at +inf and
    a Chernoff scale above the window."""
    log_delta = math.log(0.5) - 0.3 * np.arange(n + 1, dtype=np.float64)
    return pld_engine._Composed(start, log_delta, inf_mass, above_log, 0.75, start + n - 1, start + n + 40)


def mp_v(comp: pld_engine._Composed, j: int) -> mpmath.mpf:
    return REF.exp(REF.mpf(float(comp.log_delta[j]))) + REF.mpf(comp.inf_mass)


@pytest.mark.parametrize("h", [2.0**-3, 256.0])
def test_delta_from_grid_points_chords_and_outside_the_window(big_u: float, h: float) -> None:
    u = REF.mpf(big_u)
    comp = synthetic()
    size = comp.log_delta.size
    for j in range(size):
        i = comp.start - 1 + j
        v = mp_v(comp, j)
        # at a grid point: upper v (1 + 8u) + 4u v, lower v (1 - 4u)
        assert close(pld_engine._delta_from(comp, h, i * h, upper=True), min(1, v * (1 + 12 * u)))
        assert close(pld_engine._delta_from(comp, h, i * h, upper=False, index=i), v * (1 - 4 * u))
        # between grid points (upper): the chord in e^eps to the next point, t rounded down by (1 - 8u)
        for frac in (0.3, 0.97):
            eps = i * h + frac * h
            want = v * (1 + 12 * u)
            if j + 1 < size:
                t = REF.mpf(math.expm1(eps - i * h) / math.expm1(h)) * (1 - 8 * u)
                w = mp_v(comp, j + 1)
                want = (v - t * (v - w)) * (1 + 8 * u) + 4 * u * v
            assert close(pld_engine._delta_from(comp, h, eps, upper=True), min(1, want), 1e-12), (j, frac)
    # below the window: upper 1, lower the first grid point's bound
    for i in (comp.start - 1, comp.start - 2, comp.start - 30):
        want = 1.0 if i < comp.start - 1 else min(1, mp_v(comp, 0) * (1 + 12 * u))
        assert close(pld_engine._delta_from(comp, h, i * h, upper=True), want)
        assert close(pld_engine._delta_from(comp, h, i * h, upper=False, index=i), mp_v(comp, 0) * (1 - 4 * u))
    # above the window: the lower end is the mass at +inf; the upper end the Chernoff scale
    # e^{above - lambda h (i - start - size + 1)} until the exact top, the mass at +inf from there
    for i in range(comp.start + size - 1, comp.exact_top + 3):
        lo = pld_engine._delta_from(comp, h, i * h, upper=False, index=i)
        up = pld_engine._delta_from(comp, h, i * h, upper=True)
        assert lo == comp.inf_mass
        chernoff = REF.exp(REF.mpf(comp.above_log) - REF.mpf(comp.lam) * h * (i - comp.start - size + 1))
        assert close(up, comp.inf_mass if i >= comp.exact_top else min(1, comp.inf_mass + chernoff)), i


def test_delta_from_chord_only_where_the_profile_falls() -> None:
    # a flat stretch (w == v): no chord, the grid point's bound
    comp = synthetic()
    comp.log_delta[5] = comp.log_delta[4]
    h = 2.0**-3
    i = comp.start - 1 + 4
    assert pld_engine._delta_from(comp, h, (i + 0.5) * h, upper=True) == pld_engine._delta_from(
        comp, h, i * h, upper=True
    )


def synthetic_bracket(
    h: float, lower_h: float = 0.0, shift: Fraction = Fraction(0), slack: Fraction = Fraction(0)
) -> PLDBracket:
    return PLDBracket(h, (), (), 16, math.inf, lower_h, shift, slack)


@pytest.mark.parametrize(
    ("lower_h", "shift", "slack"), [(0.0, Fraction(0), Fraction(0)), (0.3, Fraction(-1, 3), Fraction(1, 10**6))]
)
def test_delta_lower_chord_between_labels(big_u: float, lower_h: float, shift: Fraction, slack: Fraction) -> None:
    # x = eps - shift + slack (exact); on a label: the label's bound; else the chord between the labels around x
    # with t = expm1(r) / expm1(h) (1 + 8u) (r = x - i h rounded up), ((1 - t) v0 + t v1) (1 - 8u)
    u = REF.mpf(big_u)
    h = 2.0**-3
    br = synthetic_bracket(h, lower_h, shift, slack)
    hl = lower_h or h
    comp = synthetic()
    checked = 0
    for j in range(comp.log_delta.size - 1):
        for frac in (0.0, 0.25, 0.9):
            x = (comp.start - 1 + j + frac) * Fraction(hl)
            eps = float(x + shift - slack)
            xr = Fraction(eps) - shift + slack
            i = math.floor(xr / Fraction(hl))
            jj = min(max(i - (comp.start - 1), 0), comp.log_delta.size)
            v0 = mp_v(comp, jj) * (1 - 4 * u) if jj < comp.log_delta.size else REF.mpf(comp.inf_mass)
            got = br._delta_lower(comp, eps)
            if xr == i * Fraction(hl):
                assert close(got, v0), (j, frac)
                continue
            v1 = mp_v(comp, jj + 1) * (1 - 4 * u) if jj + 1 < comp.log_delta.size else REF.mpf(comp.inf_mass)
            r = REF.mpf(float(xr - i * Fraction(hl)))
            t = min(1, REF.expm1(r) / REF.expm1(hl) * (1 + 8 * u))
            assert close(got, ((1 - t) * v0 + t * v1) * (1 - 8 * u), 1e-11), (j, frac, got)
            checked += 1
    assert checked > 20
    # equal neighbours: the label's bound itself, no chord
    comp.log_delta[4] = comp.log_delta[3]
    eps = float((comp.start - 1 + 3.5) * Fraction(hl) + shift - slack)
    got = br._delta_lower(comp, eps)
    assert close(got, mp_v(comp, 3) * (1 - 4 * u)) or close(got, mp_v(comp, 4) * (1 - 4 * u))


def test_delta_lower_without_chord_beyond_the_chord_limit(big_u: float) -> None:
    br = synthetic_bracket(512.0)
    comp = synthetic()
    i = comp.start + 2
    got = br._delta_lower(comp, (i + 0.5) * 512.0)
    assert close(got, mp_v(comp, i - comp.start + 2) * (1 - 4 * REF.mpf(big_u)))  # min(v0, v1): the label above


@pytest.mark.parametrize(
    ("lower_h", "shift", "slack"), [(0.0, Fraction(0), Fraction(0)), (0.3, Fraction(-1, 3), Fraction(1, 10**6))]
)
def test_eps_lower_stops_at_the_chord_crossing(big_u: float, lower_h: float, shift: Fraction, slack: Fraction) -> None:
    # the largest label i whose bound (e^ld + inf) (1 - 4u) exceeds delta, then the chord to label i + 1 up to its
    # crossing: t = (v0 - delta) / (v0 - v1) (1 - 8u) - 4u, off = log1p(t expm1(h)) (1 - 8u); shifted back exactly
    u = REF.mpf(big_u)
    h = 2.0**-3
    hl = lower_h or h
    br = synthetic_bracket(h, lower_h, shift, slack)
    comp = synthetic()
    size = comp.log_delta.size
    vals = [mp_v(comp, j) * (1 - 4 * u) for j in range(size)]
    for j in range(size):
        for between in (0.5, 0.999):
            hi, lo = vals[j], vals[j + 1] if j + 1 < size else REF.mpf(comp.inf_mass)
            delta = float(lo + between * (hi - lo))
            i = comp.start - 1 + j
            t = max(0, (vals[j] - delta) / (vals[j] - lo) * (1 - 8 * u) - 4 * u)
            off = REF.log1p(t * REF.expm1(hl)) * (1 - 8 * u)
            q = i * Fraction(hl) + shift - slack
            want = max(0, REF.mpf(q.numerator) / q.denominator + off)
            got = br._eps_lower(comp, delta)
            assert close(got, want, 1e-12, 1e-15), (j, between, got, float(want))
    assert br._eps_lower(comp, 0.9) == 0.0  # no label's bound exceeds delta


def test_eps_lower_without_chord_beyond_the_chord_limit() -> None:
    br = synthetic_bracket(512.0)
    comp = synthetic()
    d = float(mp_v(comp, 3) * 0.9 + mp_v(comp, 4) * 0.1)
    assert br._eps_lower(comp, d) == (comp.start - 1 + 3) * 512.0


@pytest.mark.parametrize("h", [2.0**-3, 256.0, 512.0])  # 256 = CHORD_MAX_H: the chord still refines
def test_eps_side_upper_end_chord_and_beyond_the_window(big_u: float, h: float) -> None:
    # the first grid point whose bound (e^ld + inf)(1 + 4u) is <= delta; between it and the point below, the chord
    # crossing with frac = (v0 - delta) / (v0 - v1) (1 + 8u) + 4u v0 / (v0 - v1), log1p(frac expm1(h)) (1 + 8u), one
    # ulp up, at most the grid point (h > 256: the grid point)
    u = REF.mpf(big_u)
    br = synthetic_bracket(h)
    comp = synthetic()
    size = comp.log_delta.size
    vals = [mp_v(comp, j) * (1 + 4 * u) for j in range(size)]
    idx0 = comp.start - 1
    assert br._eps_side(comp, float(vals[0]) * 1.01, upper=True) == idx0 * h
    for i in range(1, size):
        for between in (0.3, 0.95, 1e-9):  # 1e-9: frac reaches 1 (capped), the crossing is the grid point
            delta = float(vals[i] + between * (vals[i - 1] - vals[i]))
            got = br._eps_side(comp, delta, upper=True)
            if h > 256:
                assert got == (idx0 + i) * h
                continue
            v0, v1 = vals[i - 1], vals[i]
            frac = min(1, (v0 - delta) / (v0 - v1) * (1 + 8 * u) + 4 * u * v0 / (v0 - v1))
            want = min((idx0 + i - 1) * h + REF.log1p(frac * REF.expm1(h)) * (1 + 8 * u), (idx0 + i) * h)
            assert close(got, want, 1e-12), (i, between, got, float(want))
    # beyond the window: (end + ceil((above - log(delta - inf)) / (lambda h))) h, end = start + size - 1
    end = comp.start + size - 1
    for delta in (float(vals[-1]) * 0.5, comp.inf_mass * 1.01, comp.inf_mass * 1.5):
        extra = (comp.above_log - math.log(delta - comp.inf_mass)) / (comp.lam * h)
        assert br._eps_side(comp, delta, upper=True) == (end + max(0, math.ceil(extra))) * h
    assert br._eps_side(comp, comp.inf_mass * 0.5, upper=True) == math.inf
    flat = pld_engine._Composed(comp.start, comp.log_delta, comp.inf_mass, -math.inf, 0.75, comp.top, comp.top)
    assert br._eps_side(flat, float(vals[-1]) * 0.5, upper=True) == end * h
    still = pld_engine._Composed(comp.start, comp.log_delta, comp.inf_mass, comp.above_log, 0.0, comp.top, 99)
    assert br._eps_side(still, float(vals[-1]) * 0.5, upper=True) == math.inf


# -------------------------------------------------- the tilted composition's error budget, term by term


def tilted_reference(
    factors: list[pld_engine._Factor], lam: float, u: float, *, compose: bool = True
) -> dict[str, object]:
    """Per factor: the tilted masses x (float, as the engine computes them up to an ulp), the log normaliser (60
    digits), and the documented relative error ``tau`` of the tilted masses; the composition's ``log C``, ``rel``,
    the tilted mean and variance, and the exact (direct-convolution) composed tilted law with its first index."""
    h = factors[0].law.h
    u_ = REF.mpf(u)
    tau = REF.mpf(0)
    log_c = REF.mpf(0)
    mean = var = 0.0
    comp_off, comp = 0, np.ones(1)
    g = 0.0
    for f in factors:
        law = f.law
        loss = h * (law.offset + np.arange(law.masses.size, dtype=np.float64))
        e = [REF.log(REF.mpf(m)) + REF.mpf(lam) * REF.mpf(float(x)) for m, x in zip(law.masses, loss, strict=True)]
        lm = REF.log(REF.fsum(REF.exp(x) for x in e))
        x = np.array([float(REF.exp(v - lm)) for v in e])
        mu = float(np.sum(x * loss))
        mean += f.count * mu
        var += f.count * float(np.sum(x * (loss - mu) ** 2))
        emax = max(abs(v) for v in e)
        tau = max(tau, 8 * u_ * (2 + emax + abs(lm)) + 4 * u_ * law.masses.size + 4 * u_ * abs(lam) * max(abs(loss)))
        log_c += f.count * lm
        g += f.count * math.log(max(1.0, float(np.sum(x)) * (1 + x.size * u)))
        if compose:
            off, pw = convolve_power(GridLaw(law.offset, x, 0.0, h), f.count)
            comp_off, comp = comp_off + off, np.convolve(comp, pw)
    k_total = sum(f.count for f in factors)
    rel = k_total * tau + 4 * u_ * len(factors) * (1 + abs(log_c))
    return {"log_c": log_c, "rel": rel, "mean": mean, "var": var, "off": comp_off, "c": comp, "g": g, "k": k_total}


def expected_log_delta(
    factors: list[pld_engine._Factor], lam: float, comp: pld_engine._Composed, upper: bool, u: float
) -> list[mpmath.mpf | None]:
    """The documented bound at each window index (module docstring, items 3-5): for a window holding the exact
    support, inner = finite +- (4 n + 8) u (ya + yb) +- r2 kappa, times e^{+-rel} (1 +- 1e-12), in log plus
    log C - lambda h i +- (1e-12 + 4 u (|log C| + |lambda h| (|start| + n))); ``None`` where it is -inf."""
    ref = tilted_reference(factors, lam, u)
    h = factors[0].law.h
    u_ = REF.mpf(u)
    n = comp.log_delta.size - 1
    c, off, k = ref["c"], ref["off"], ref["k"]
    assert isinstance(c, np.ndarray) and isinstance(off, int) and isinstance(k, int)
    assert comp.start == off and c.size <= n  # the window holds the exact support (no aliasing)
    r2 = REF.mpf(0)
    if k > 1:
        rho = 16 * REF.log(n, 2) * u_
        r2 = REF.exp(REF.mpf(ref["g"])) * ((k + 1) * rho + 3 * k * u_) * (1 + REF.mpf(1e-6))
    kappa = REF.mpf(pld_engine._kappa_norm(lam, h, n))
    ba, bb = REF.exp(-REF.mpf(lam) * h), REF.exp(-(REF.mpf(lam) + 1) * h)
    log_c, rel = REF.mpf(ref["log_c"]), REF.mpf(ref["rel"])
    pad = REF.mpf(1e-12) + 4 * u_ * (abs(log_c) + abs(REF.mpf(lam) * h) * (abs(comp.start) + n))
    out: list[mpmath.mpf | None] = []
    for r in range(-1, n):
        i = comp.start + r
        ya = REF.fsum(REF.mpf(float(c[i + m - off])) * ba**m for m in range(1, off + c.size - i) if i + m >= off)
        yb = REF.fsum(REF.mpf(float(c[i + m - off])) * bb**m for m in range(1, off + c.size - i) if i + m >= off)
        ferr = (4 * n + 8) * u_ * (ya + yb)
        if upper:
            inner = (ya - yb + ferr + r2 * kappa) * REF.exp(rel) * (1 + REF.mpf(1e-12))
        else:
            inner = (ya - yb - ferr - r2 * kappa) * REF.exp(-rel) * (1 - REF.mpf(1e-12))
        if inner <= 0 or i >= off + c.size - 1:
            out.append(None)
            continue
        out.append(REF.log(inner) + log_c - REF.mpf(lam) * h * i + (pad if upper else -pad))
    return out


def budget_laws() -> list[list[pld_engine._Factor]]:
    h = 2.0**-3
    one = [factor(dyadic_law(40, -11, h), 1)]
    two = [factor(dyadic_law(20, -4, h), 3), factor(dyadic_law(9, 6, h), 2)]
    return [one, two]


@pytest.mark.parametrize("which", [0, 1])
@pytest.mark.parametrize("upper", [True, False])
@pytest.mark.parametrize("u", [U_BIG, 0.0])
def test_tilted_composition_carries_its_documented_error_budget(
    monkeypatch: pytest.MonkeyPatch, which: int, upper: bool, u: float
) -> None:
    # a window that holds the exact support (one part: no FFT; two parts: FFT of 128 points). With _U = 2^-30
    # every u-term of the budget (tau, rel, ferr, r2, the log's pad) is ~1e-9 or more of the bound, 10^4 times the
    # float error where the bound is not small; with _U = 0 the fixed 1e-12 margins are what is left.
    monkeypatch.setattr(pld_engine, "_U", u)
    factors = budget_laws()[which]
    lam = 0.5
    comp = pld_engine._compose_tilted(factors, lam, 2**12, upper=upper)
    want = expected_log_delta(factors, lam, comp, upper, u)
    finite = [w for w in want if w is not None]
    big = max(finite)
    checked = 0
    for j, w in enumerate(want):
        got = float(comp.log_delta[j])
        if w is None:
            assert got == -math.inf or not upper, j
            continue
        if w < big - 8:  # where the FFT's absolute noise is not negligible
            continue
        assert abs(REF.mpf(got) - w) <= 2e-13, (j, got, float(w))
        checked += 1
    assert checked >= 10


def test_delta_from_upper_end_is_capped_at_one() -> None:
    # a bound above 1 (the mass at +inf 0.6 plus 0.5 at the first grid point; the Chernoff scale e^2 above the
    # window) is read as 1, at a grid point, on a chord and above the window
    comp = synthetic(inf_mass=0.6, above_log=2.0)
    h = 2.0**-3
    i0 = comp.start - 1
    assert pld_engine._delta_from(comp, h, i0 * h, upper=True) == 1.0
    assert pld_engine._delta_from(comp, h, (i0 + 0.1) * h, upper=True) == 1.0
    assert pld_engine._delta_from(comp, h, (comp.start + comp.log_delta.size) * h, upper=True) == 1.0


# ------------------------------------------------------------------------ sizes: grid, windows, lattice, ranges


def window_n(var: float, h: float, exact_n: int, k_total: int, max_points: int) -> tuple[int, bool]:
    """The documented FFT length: the tilted law's 2 x 8-sd window (+ 16 points) as a power of two in
    [2^12, max_points], or the exact support's smallest power of two (>= 16) when that fits it (or 2^16 points for at
    most 64 factors, or a single factor). Returns (n, exact)."""
    need = int(2 * 8.0 * math.sqrt(var) / h) + 16
    n = 1 << max(12, min((need - 1).bit_length(), max_points.bit_length() - 1))
    if exact_n <= max(n, 2**16 if k_total <= 64 else 0) or k_total == 1:
        return 1 << max(4, (exact_n - 1).bit_length()), True
    return n, False


@pytest.mark.parametrize(
    ("eps0", "k", "log2h", "max_points", "lam"),
    [
        (1.0, 100, -6, 4096, 0.0),  # cut window of 4096
        (1.0, 100, -6, 4096, 0.5),
        (1.0, 30, -6, 4096, 0.0),  # exact support 3841 <= 2^16, 30 factors
        (0.05, 1000, -6, 2**20, 0.0),  # need < 2^11 points: the window's floor 2^12 (the support has 6401)
        (1.0, 400, -6, 2**20, 0.0),  # need ~ 18200: 2^15 (the support has 51201)
        (1.0, 64, -6, 2**20, 0.0),  # 64 factors: the exact support (8193 points) in 2^14 rather than a 2^13 window
        (1.0, 65, -6, 2**20, 0.0),  # 65 factors: a 2^13 window (need 7800) below the support (8321)
        (1.0, 325, -5, 2**20, 0.0),  # need 8400: 2^14 (a 7-sd window would fit 2^13)
        (0.01, 1000, -12, 2**20, 0.0),  # variance 0.1 < 1: need 20700, 2^15 (the support has 81921)
    ],
)
def test_window_is_the_documented_power_of_two(eps0: float, k: int, log2h: int, max_points: int, lam: float) -> None:
    h = 2.0**log2h
    law = pld_engine._trim(RandomizedResponsePart(eps0, 2).grid_law(h, pessimistic=True))
    f = [factor(law, k)]
    comp = pld_engine._compose_tilted(f, lam, max_points, upper=True)
    ref = tilted_reference(f, lam, 0.0, compose=False)
    exact_lo, exact_hi = k * law.offset, k * (law.offset + law.masses.size - 1)
    n, exact = window_n(float(ref["var"]), h, exact_hi - exact_lo + 1, k, max_points)  # type: ignore[arg-type]
    assert comp.log_delta.size == n + 1
    if exact:
        assert comp.start == exact_lo
    else:
        centre = int(round(float(ref["mean"]) / h))  # type: ignore[arg-type]
        assert comp.start == max(exact_lo, min(centre - n // 2, exact_hi - n + 1))
    assert comp.top == min(exact_hi, comp.start + n - 1) and comp.exact_top == exact_hi


@pytest.mark.parametrize(("size", "k", "n"), [(3, 2, 16), (64, 1, 64), (65, 1, 128), (9, 8, 128), (33, 2, 128)])
def test_exact_window_is_the_smallest_power_of_two_holding_the_support(size: int, k: int, n: int) -> None:
    # (size - 1) k + 1 support points: 5 -> 16 (the floor), 64 -> 64, 65 -> 128, 65 -> 128, 65 -> 128
    law = dyadic_law(size, 3, 2.0**-3)
    comp = pld_engine._compose_tilted([factor(law, k)], 0.25, 2**12, upper=True)
    assert comp.log_delta.size == n + 1 and comp.start == 3 * k


def test_aliased_window_scale_is_the_documented_chernoff_bound() -> None:
    # above_log = log C - lambda h (start + n) + pad + log a_up, a_up = (1 + 1e-6) min over the shifts s of
    # exp(min(M(lambda + s) - log C - s h (start + n), 700)) (M the padded log-MGF bound)
    h, k, lam = 2.0**-6, 100, 0.05
    law = pld_engine._trim(RandomizedResponsePart(1.0, 2).grid_law(h, pessimistic=True))
    f = [factor(law, k)]
    comp = pld_engine._compose_tilted(f, lam, 4096, upper=True)
    n = comp.log_delta.size - 1
    assert comp.start + n <= comp.exact_top  # the window is cut below the top
    ref = tilted_reference(f, lam, 2.0**-53, compose=False)
    log_c = ref["log_c"]
    top = comp.start + n
    shifts = pld_engine._SHIFTS
    m = pld_engine._total_log_mgf(f, lam + shifts)
    a_up = min(REF.exp(min(REF.mpf(float(x)) - log_c - REF.mpf(float(s)) * h * top, 700)) for x, s in zip(m, shifts))
    a_up *= 1 + REF.mpf(1e-6)
    pad = REF.mpf(1e-12) + 4 * REF.mpf(2.0**-53) * (abs(log_c) + abs(lam * h) * (abs(comp.start) + n))
    want = log_c - REF.mpf(lam) * h * top + pad + REF.log(a_up)
    assert close(comp.above_log, want, 0.0, 2e-13), (comp.above_log, float(want))  # the pad is 1e-12


def test_candidate_tilts_and_shifts() -> None:
    # the Chernoff tilts: 0 and 97 from 1e-4 to 1e4 (log spaced); the shifts of the aliasing bounds: 49 from 1e-3 to 1e5
    assert pld_engine._LAMBDAS.tolist() == [0.0, *np.geomspace(1e-4, 1e4, 97).tolist()]
    assert pld_engine._SHIFTS.tolist() == np.geomspace(1e-3, 1e5, 49).tolist()
    assert pld_engine._U == 2.0**-53  # the unit roundoff of binary64


@pytest.mark.parametrize(
    ("parts", "points"),
    [
        ([(LaplacePart(1.0), 50), (RandomizedResponsePart(0.5, 3), 7)], None),
        ([(LaplacePart(1.0), 50), (GaussianPart(3.0), 20)], 2**12),
        ([(RandomizedResponsePart(1.0, 2), 1)], None),  # one mechanism: 2^13 points
        ([(ApproxDPPart(1.0, 0.0), 3)], None),  # the exact support (6) is narrower than the window
        ([(RandomizedResponsePart(0.01, 2), 2), (LaplacePart(0.01), 1)], None),
        ([(RandomizedResponsePart(0.1, 2), 100)], None),  # scale 0.1: variance 1, the exact support 20 is narrower
        ([(RandomizedResponsePart(0.5, 2), 302)], None),  # 28 sd = 243.3: just below 2^8 points of 2^-7
        ([(RandomizedResponsePart(0.5, 2), 345)], None),  # 28 sd = 260.0: just above
    ],
)
def test_automatic_grid_is_the_documented_power_of_two(parts: list[tuple[object, int]], points: int | None) -> None:
    # w = min(exact support, max(2 x 14 sd of the composed law, widest part / 4)); h = 2^ceil(log2(w / points)),
    # points 2^15 (2^13 for one mechanism) by default
    k_total = sum(k for _, k in parts)
    pts = points or (2**13 if k_total == 1 else 2**15)
    var = sum(k * p.loss_scale() ** 2 for p, k in parts)  # type: ignore[attr-defined]
    single = max(p.support_width() for p, _ in parts)  # type: ignore[attr-defined]
    exact = sum(k * p.support_width() for p, k in parts)  # type: ignore[attr-defined]
    w = min(exact, max(2 * 14.0 * math.sqrt(var), single / 4))
    br = compose_plds(parts, points=points) if points else compose_plds(parts)  # type: ignore[arg-type]
    assert isinstance(br, PLDBracket)
    assert br.h == 2.0 ** math.ceil(math.log2(w / pts))


def test_default_sizes() -> None:
    import inspect

    params = inspect.signature(compose_plds).parameters
    assert params["max_points"].default == 2**22 and params["points"].default is None
    assert pld_engine.EXACT_SUPPORT_POINTS == 2**16 and pld_engine.EXACT_SUPPORT_FACTORS == 64


def test_lattice_lower_spacing_is_at_most_the_grid() -> None:
    # Laplace(b = 3): atoms at -+1/3, lattice spacing 2/3; on h = 2^-8 that is 170.7 grid steps, so the labels are
    # 2/3 / 171 apart (the smallest N with spacing / N <= h), not 2/3 / 170 > h
    br = compose_plds([(LaplacePart(3.0), 5)], grid=2.0**-8)
    assert isinstance(br, PLDBracket)
    assert br.lower_h == (2.0 / 3.0) / 171 and br.lower_h <= br.h
    # atoms only (randomized response): the labels are the atoms' lattice itself, spacing 2 eps (N = 1)
    rr = compose_plds([(RandomizedResponsePart(0.3, 2), 5)], grid=2.0**-8)
    assert isinstance(rr, PLDBracket) and rr.lower_h == 0.6


def test_epsilon_range_of_delta_queries() -> None:
    br = compose_plds([(RandomizedResponsePart(1.0, 2), 3)], grid=2.0**-4)
    assert isinstance(br, PLDBracket)
    assert br.delta(1e6).upper == 0.0 and br.delta(-1e6).upper == 1.0
    for bad in (1e6 + 1, -1e6 - 1):
        with pytest.raises(pld_engine.InvalidArgument, match="epsilon"):
            br.delta(bad)


def test_void_part_makes_the_profile_its_mass_at_infinity() -> None:
    # an (eps, 1)-DP part has no finite mass: the composed profile is the constant mass at +inf, read from the
    # pessimistic laws (upper, 1) and the optimistic ones (lower: their mass at +inf, padded down below 1)
    br = compose_plds([(ApproxDPPart(0.5, 1.0), 1), (LaplacePart(1.0), 2)], grid=2.0**-6)
    assert isinstance(br, PLDBracket)
    up = pld_engine._inf_mass(br.upper_factors, upper=True)
    lo = pld_engine._inf_mass(br.lower_factors, upper=False)
    assert up == 1.0 and 1 - 1e-12 < lo < 1.0
    for eps in (-2.0, 0.3, 40.0):
        assert br.delta(eps) == (lo, up)
    assert br.epsilon(0.5) == (math.inf, math.inf) and br.epsilon(1.0) == (0.0, 0.0)
    assert br.epsilon(lo) == (0.0, math.inf)


def test_epsilon_at_exactly_the_mass_at_infinity_with_a_cut_window() -> None:
    # delta equal to the pessimistic composition's mass at +inf, on a window cut below the support's top: no
    # Chernoff tail fits under delta - inf = 0 (the old code took log(0): ValueError, an internal error); the
    # finite part of the grid law vanishes from its exact top on, so that is the upper end
    br = compose_plds([(ApproxDPPart(0.5, 1e-3), 100), (GaussianPart(3.0), 100)], grid=2.0**-8)
    assert isinstance(br, PLDBracket)
    d = pld_engine._inf_mass(br.upper_factors, upper=True)
    comp = br._composed(br._lambda_for_delta(d), upper=True)
    assert comp.inf_mass == d and comp.above_log > -math.inf  # the case: a cut window
    lo, up = br.epsilon(d)
    assert up == comp.exact_top * br.h and lo <= up
    assert br.delta(up).upper <= d * (1 + 1e-14)  # the mass at +inf alone, up to the grid point's 12 ulps
    assert br.epsilon(d * (1 + 1e-9)).upper <= up  # a larger delta: no larger epsilon


class _WidePart:
    """Stands in for a part whose support is far wider than its loss scale (none of parts.py is: their support is at
    most 24 scales), the case where the widest part's quarter sets the grid."""

    def __init__(self, scale: float, width: float) -> None:
        self.scale, self.width = scale, width

    def loss_scale(self) -> float:
        return self.scale

    def support_width(self) -> float:
        return self.width


def test_automatic_grid_spreads_the_widest_part_over_a_quarter_of_the_points() -> None:
    parts = [(_WidePart(0.01, 100.0), 1), (_WidePart(0.02, 0.5), 3)]
    var = 0.01**2 + 3 * 0.02**2
    w = min(100.0 + 1.5, max(2 * 14.0 * math.sqrt(var), 100.0 / 4))
    assert w == 25.0
    assert pld_engine._auto_grid(parts, 2**15) == 2.0 ** math.ceil(math.log2(w / 2**15))  # type: ignore[arg-type]


def test_window_length_at_a_power_of_two_boundary() -> None:
    # two atoms d = 28 apart (h = 1), 332 factors: variance 332 x 196, so need = int(16 x 255.09) + 16 = 4097 points,
    # one more than 2^12: the window is 2^13 (the support, 9297 points, is longer: a cut window)
    masses = np.zeros(29)
    masses[0] = masses[28] = 0.5
    comp = pld_engine._compose_tilted([factor(GridLaw(0, masses, 0.0, 1.0), 332)], 0.0, 2**20, upper=True)
    assert comp.log_delta.size == 2**13 + 1 and comp.exact_top == 332 * 28


def test_window_ending_one_point_below_the_top_atom_counts_its_mass() -> None:
    # atoms at 0 and m = 40000 (two factors: 0, m, 2m) with p_top = 1 - 16384 / m: the tilted mean index is
    # 2 p m = 2m - 32768, so the 2^16 window starts at 2m - 65536 and ends at 2m - 1, one point below the top atom
    # (start + n == exact_hi): its mass p^2 is above the window and only a_up carries it
    h, m = 2.0**-10, 40000
    p = 1 - 16384 / m
    comp = pld_engine._compose_tilted([factor(two_atom_law(p, m, h), 2)], 0.0, 2**16, upper=True)
    n = comp.log_delta.size - 1
    assert comp.start + n == 2 * m and comp.above_log > -math.inf
    for i in (2 * m - 1, 2 * m - 100, 2 * m - 5000):
        ref = three_atom_profile(p, m, h, i)
        got = pld_engine._delta_from(comp, h, i * h, upper=True)
        assert got >= ref > 0.0, (i, got, ref)


def test_eps_side_never_below_zero() -> None:
    # a window starting below 0 (negative losses): the answer is clipped at 0, on a coarse grid (no chord) too
    for h in (2.0**-3, 512.0):
        br = synthetic_bracket(h)
        comp = synthetic(start=-3)
        d = float(mp_v(comp, 2) * 0.5 + mp_v(comp, 1) * 0.5)
        assert br._eps_side(comp, d, upper=True) == 0.0
        assert br._eps_side(comp, float(mp_v(comp, 0)) * 1.1, upper=True) == 0.0


def test_equal_parts_are_merged_with_their_counts() -> None:
    part = RandomizedResponsePart(0.5, 2)
    br = compose_plds([(part, 2), RandomizedResponsePart(0.5, 2), (part, 3)], grid=2.0**-6)
    ref = compose_plds([(part, 6)], grid=2.0**-6)
    assert isinstance(br, PLDBracket) and isinstance(ref, PLDBracket)
    assert br.count == 6 and len(br.upper_factors) == 1 and br.upper_factors[0].count == 6
    assert br.delta(1.0) == ref.delta(1.0)


def test_single_laplace_closed_form_brackets_the_exact_ratio() -> None:
    # D = sensitivity / b = 1/3 is not a float: the closed form's two ends are the floats on either side of it
    br = compose_plds([LaplacePart(3.0)])
    assert isinstance(br, pld_engine.LaplaceBracket)
    third = Fraction(1, 3)
    assert Fraction(br.d_lower) < third < Fraction(br.d_upper) and br.d_upper == math.nextafter(br.d_lower, 1.0)


def test_query_tilts_are_the_chernoff_minimisers_among_the_candidates() -> None:
    # the tilt of a delta(eps) query minimises log M(lam) - lam eps over the candidates (0 included); of an
    # epsilon(delta) query, (log M(lam) - log delta) / lam over the positive ones
    br = compose_plds([(RandomizedResponsePart(0.5, 2), 40), (LaplacePart(2.0), 10)], grid=2.0**-6)
    assert isinstance(br, PLDBracket)
    lams = pld_engine._LAMBDAS
    lm = pld_engine._total_log_mgf(br.upper_factors, lams)
    for eps in (0.0, 3.0, 12.0):
        assert br._lambda_for_eps(eps) == lams[int(np.argmin(lm - lams * eps))]
    for delta in (0.5, 1e-3, 1e-12):
        want = lams[1:][int(np.argmin((lm[1:] - math.log(delta)) / lams[1:]))]
        assert br._lambda_for_delta(delta) == want > 0
    assert len({br._lambda_for_delta(d) for d in (0.5, 1e-3, 1e-12)}) == 3  # the queries reach different tilts


def test_trim_drops_zero_ends_only() -> None:
    law = GridLaw(3, np.array([0.0, 0.0, 0.25, 0.0, 0.5, 0.0]), 0.25, 0.5)
    t = pld_engine._trim(law)
    assert t.offset == 5 and t.masses.tolist() == [0.25, 0.0, 0.5] and t.inf_mass == 0.25 and t.h == 0.5
    void = pld_engine._trim(GridLaw(-2, np.zeros(4), 1.0, 0.5))
    assert void.offset == -2 and void.masses.tolist() == [0.0] and void.inf_mass == 1.0


def test_epsilon_at_exactly_the_mass_at_infinity_is_the_pure_dp_cap() -> None:
    # 40 x (0.5, 1e-3): at delta equal to the (upper) mass at +inf the finite part must vanish: eps = 20, the cap
    br = compose_plds([(ApproxDPPart(0.5, 1e-3), 40)], grid=2.0**-7)
    assert isinstance(br, PLDBracket)
    d = pld_engine._inf_mass(br.upper_factors, upper=True)
    assert br.epsilon(d).upper == 20.0


def test_two_mechanisms_are_tilted_in_the_tail() -> None:
    # untilted, the FFT's rounding noise (1e-16 of the peak) swamps a 1e-14 tail: epsilon's bracket is then 5 wide;
    # tilted (any composition of two or more mechanisms), it is 1e-4 wide
    br = compose_plds([(GaussianPart(1.0), 1), (LaplacePart(1.0), 1)], grid=2.0**-8)
    assert isinstance(br, PLDBracket) and br.count == 2
    lo, up = br.epsilon(1e-14)
    assert up - lo < 1e-3
    dlo, dup = br.delta(9.0)
    assert 0.0 < dlo <= dup < dlo * (1 + 1e-2)


def test_delta_lower_uses_the_chord_up_to_h_256(big_u: float) -> None:
    u = REF.mpf(big_u)
    br = synthetic_bracket(256.0)
    comp = synthetic()
    i = comp.start + 2
    x = i * 256.0 + 200.0
    v0, v1 = (mp_v(comp, i - comp.start + 1 + d) * (1 - 4 * u) for d in (0, 1))
    t = min(1, REF.expm1(200) / REF.expm1(256) * (1 + 8 * u))
    assert close(br._delta_lower(comp, x), ((1 - t) * v0 + t * v1) * (1 - 8 * u), 1e-11)


def test_bracket_defaults_and_points_floor() -> None:
    br = PLDBracket(1.0, (), (), 16)
    assert br.loss_cap == math.inf and br.lower_h == 0.0 and br.lower_shift == 0 and br.lower_slack == 0
    part = RandomizedResponsePart(0.5, 2)
    assert isinstance(compose_plds([(part, 3)], points=16), PLDBracket)
    with pytest.raises(pld_engine.InvalidArgument, match="points"):
        compose_plds([(part, 3)], points=15)
    assert isinstance(compose_plds([(part, 3)], max_points=16), PLDBracket)
    with pytest.raises(pld_engine.InvalidArgument, match="max_points"):
        compose_plds([(part, 3)], max_points=15)


def test_lower_end_subtracts_exactly_the_documented_chernoff_bound_from_below() -> None:
    # the mirror case of a cut window (atom at 0 below it, none above): between the wrapped atom and the top atom the
    # finite part is exact, so the lower end is the truth minus a_low = (1 + 1e-6) min over the shifts s of
    # exp(min(M(lambda - s) - log C + s h (start - 1), 700)), up to the 1e-11 of the other terms
    h, m, p = 2.0**-10, 40000, 0.9
    f = [factor(two_atom_law(p, m, h), 2)]
    comp = pld_engine._compose_tilted(f, 0.0, 2**16, upper=False)
    assert comp.start > 0 and comp.above_log == -math.inf
    log_c = tilted_reference(f, 0.0, 2.0**-53, compose=False)["log_c"]
    shifts = pld_engine._SHIFTS
    mgf = pld_engine._total_log_mgf(f, 0.0 - shifts)
    a_low = min(
        REF.exp(min(REF.mpf(float(x)) - log_c + REF.mpf(float(s)) * h * (comp.start - 1), 700))  # type: ignore[operator]
        for x, s in zip(mgf, shifts, strict=True)
    ) * (1 + REF.mpf(1e-6))
    assert 1e-4 < a_low < 0.5
    for i in (66000, 70000, 75000, 79000):
        ref = three_atom_profile(p, m, h, i)
        got = pld_engine._delta_from(comp, h, i * h, upper=False, index=i)
        assert close(got, ref - a_low, 0.0, 1e-10), (i, got, ref, float(a_low))


def test_eps_lower_label_needs_its_padded_bound_above_delta(big_u: float) -> None:
    # delta between a label's padded bound (e^ld + inf)(1 - 4u) and the unpadded one: the label does not qualify
    br = synthetic_bracket(2.0**-3)
    comp = synthetic()
    for j in (2, 5, 9):
        d = float(mp_v(comp, j) * (1 - 2 * REF.mpf(big_u)))
        assert br._eps_lower(comp, d) < (comp.start - 1 + j) * 2.0**-3


def test_eps_lower_pad_is_four_units(big_u: float) -> None:
    # a label qualifies with (e^ld + inf)(1 - 4u) > delta: at 3.5 units below the bound it does not, at 4.5 it does
    br = synthetic_bracket(2.0**-3)
    comp = synthetic()
    for j in (2, 5, 9):
        label = (comp.start - 1 + j) * 2.0**-3
        assert br._eps_lower(comp, float(mp_v(comp, j) * (1 - REF.mpf(3.5) * big_u))) < label
        assert br._eps_lower(comp, float(mp_v(comp, j) * (1 - REF.mpf(4.5) * big_u))) >= label


def test_lattice_spacing_just_above_the_chord_limit(big_u: float) -> None:
    # lower_h = 256.5 (a lattice spacing, not a power of two) is beyond CHORD_MAX_H = 256: no chord, the label above
    br = synthetic_bracket(2.0**-3, 256.5)
    comp = synthetic()
    i = comp.start + 2
    got = br._delta_lower(comp, i * 256.5 + 100.0)
    assert close(got, mp_v(comp, i - comp.start + 2) * (1 - 4 * REF.mpf(big_u)))


def test_eps_side_at_the_mass_at_infinity_is_clipped_at_zero() -> None:
    log_delta = np.full(17, math.log(0.5))
    comp = pld_engine._Composed(-40, log_delta, 1e-3, -9.0, 0.75, -25, -20)  # exact top below 0
    assert synthetic_bracket(2.0**-3)._eps_side(comp, 1e-3, upper=True) == 0.0


def test_queries_do_not_change_the_bracket_repr() -> None:
    br = compose_plds([(RandomizedResponsePart(0.5, 2), 3)], grid=2.0**-4)
    before = repr(br)
    br.epsilon(1e-3)
    br.delta(0.5)
    assert repr(br) == before


def test_eps_side_accepts_a_grid_point_whose_bound_equals_delta() -> None:
    br = synthetic_bracket(2.0**-3)
    comp = synthetic()
    vals = (np.exp(comp.log_delta) + comp.inf_mass) * (1 + 4 * pld_engine._U)  # the grid points' bounds, as floats
    assert br._eps_side(comp, float(vals[5]), upper=True) == (comp.start - 1 + 5) * 2.0**-3


def test_eps_lower_uses_the_chord_up_to_h_256() -> None:
    br = synthetic_bracket(256.0)
    comp = synthetic()
    d = float(mp_v(comp, 3) * 0.5 + mp_v(comp, 4) * 0.5)
    label = (comp.start - 1 + 3) * 256.0
    assert label < br._eps_lower(comp, d) < label + 256.0


def test_composed_profiles_are_frozen_slotted_values() -> None:
    comp = synthetic()
    assert not hasattr(comp, "__dict__")
    with pytest.raises(AttributeError):
        comp.start = 3  # type: ignore[misc]


def test_window_length_at_exactly_a_power_of_two() -> None:
    # d = 30, 289 factors: sd = 255 exactly, need = 16 x 255 + 16 = 4096 points, which 2^12 holds (the support
    # has 8671 points: a cut window)
    masses = np.zeros(31)
    masses[0] = masses[30] = 0.5
    comp = pld_engine._compose_tilted([factor(GridLaw(0, masses, 0.0, 1.0), 289)], 0.0, 2**20, upper=True)
    assert comp.log_delta.size == 2**12 + 1 and comp.exact_top == 289 * 30


def test_one_mechanism_wider_than_the_exact_support_limit() -> None:
    # a single part's grid law of 2^18+ points (more than EXACT_SUPPORT_POINTS): still one exact window, no FFT
    br = compose_plds([RandomizedResponsePart(1.0, 2)], grid=2.0**-18)
    assert isinstance(br, PLDBracket) and br.count == 1
    comp = pld_engine._compose_tilted([factor(br.upper_factors[0].law, 1)], 0.0, 2**12, upper=True)
    assert comp.log_delta.size - 1 >= br.upper_factors[0].law.masses.size > 2**16


def test_epsilon_of_delta_zero_is_an_invalid_argument() -> None:
    br = compose_plds([(RandomizedResponsePart(1.0, 2), 3)], grid=2.0**-6)
    with pytest.raises(pld_engine.InvalidArgument, match="delta"):
        br.epsilon(0.0)


def test_a_bracket_is_immutable_and_refuses_a_delta_above_one() -> None:
    """A certified bracket cannot be changed after it is composed (frozen), and ``epsilon(delta)`` refuses a
    delta outside (0, 1] by name (session 32's engine survivors 410:18 and 479:51)."""
    import dataclasses

    from semidp.accountant.core.errors import InvalidArgument

    b = compose_plds([GaussianPart(1.0), LaplacePart(1.0)])  # mixed laws: the grid bracket
    assert isinstance(b, PLDBracket)
    with pytest.raises(dataclasses.FrozenInstanceError):
        b.h = 1.0  # type: ignore[misc]
    for bad in (1.5, 2.0, 0.0):
        with pytest.raises(InvalidArgument, match="delta"):
            b.epsilon(bad)
    assert b.epsilon(1.0).upper == 0.0


# ---------------------------------------------- session 33 (E2): the engine's last survivors, one bite each


def binomial_lattice_profile(k: int, q: float, d: int, h: float, i: int) -> mpmath.mpf:
    """Finite part at grid index ``i`` of the ``k``-fold composition of atoms at 0 (mass ``1 - q``) and ``d`` (mass
    ``q``), at 60 digits: ``sum_{a d > i} C(k, a) q^a (1 - q)^(k - a) (1 - e^{(i - a d) h})``."""
    qm, hm = REF.mpf(q), REF.mpf(h)
    return REF.fsum(
        REF.binomial(k, a) * qm**a * (1 - qm) ** (k - a) * -REF.expm1((i - a * d) * hm)
        for a in range(k + 1)
        if a * d > i
    )


def test_tilted_lower_end_subtracts_the_mass_wrapped_from_above_the_window() -> None:
    # 370:48. A window at the support's bottom, cut below the top atom 2m (mass p^2), composed under a tilt
    # lambda = 0.05: the FFT wraps that atom onto index 2m - n = 14464. Read back at index i < 14464 it carries the
    # untilted weight e^{lambda h n} (1 - e^{(i - 2m + n) h}) = 24.5 x 0.36 instead of (1 - e^{(i - 2m) h}) <= 1:
    # far more than its true share. Only a_up (the Chernoff bound of the tilted mass above the window) subtracted
    # from the lower end keeps it below the truth; without it the lower end is 1.2 to 1.6 times the truth here.
    h, m, p, lam = 2.0**-10, 40000, 0.05, 0.05
    comp = pld_engine._compose_tilted([factor(two_atom_law(p, m, h), 2)], lam, 2**16, upper=False)
    n = comp.log_delta.size - 1
    assert comp.start == 0 and n == 2**16 and comp.above_log > -math.inf  # cut below the top: a_up > 0
    for i in (2000, 8000, 12000, 14000, 14400, 20000, 39000):
        ref = three_atom_profile(p, m, h, i)
        got = pld_engine._delta_from(comp, h, i * h, upper=False, index=i)
        assert got <= ref, (i, got, ref)


def test_window_at_the_support_bottom_subtracts_no_mass_from_below() -> None:
    # 336:38, 336:60. 65 factors with atoms at 0 (mass 0.99) and d = 64 grid steps (h = 2^-17): the 4096-point window
    # starts at the support's bottom and is cut below its top (65 x 64 = 4160), where the mass is 1e-126, so a_up
    # is about e^-289. Nothing lies below the window: a_low must be 0. The Chernoff bound of the (empty) mass below
    # index -1 is not small on this fine grid (0.52 e^{-s h} with s h <= 1e5 h = 0.76: about 0.24), and subtracting
    # it (or 1.0) zeroes the lower end; without it the lower end is the exact profile up to its 1e-7 error budget.
    h, d, k, q = 2.0**-17, 64, 65, 0.01
    masses = np.zeros(d + 1)
    masses[0], masses[d] = 1 - q, q
    comp = pld_engine._compose_tilted([factor(GridLaw(0, masses, 0.0, h), k)], 0.0, 2**12, upper=False)
    assert comp.start == 0 and comp.log_delta.size == 2**12 + 1 and comp.exact_top == k * d  # a cut window
    for i in (0, 30, 100):
        ref = binomial_lattice_profile(k, q, d, h, i)
        got = pld_engine._delta_from(comp, h, i * h, upper=False, index=i)
        assert ref * (1 - 1e-7) <= got <= ref, (i, got, float(ref))


@pytest.mark.parametrize("part", [LaplacePart(2.0), GaussianPart(1.5)])
def test_one_mechanism_is_read_from_the_untilted_composition(big_u: float, part: object) -> None:
    # 469:43, 469:56, 469:63, 482:63. One mechanism has no FFT noise to tilt away, so delta() and epsilon() read the
    # untilted (lambda = 0) composition of its laws. A tilt would only add its pads (tau's 4 u |lambda| max |loss|,
    # the log's 4 u |lambda h| (|start| + n)): at _U = 2^-30 the upper ends rise by 1e-8 to 2e-6 relative.
    br = compose_plds([part], grid=2.0**-7)  # type: ignore[list-item]
    assert isinstance(br, PLDBracket) and br.count == 1
    up = pld_engine._compose_tilted(br.upper_factors, 0.0, br.max_points, upper=True)
    lo = pld_engine._compose_tilted(br.lower_factors, 0.0, br.max_points, upper=False)
    for eps in (0.05, 0.2, 0.4, 1.5):
        want = (br._delta_lower(lo, eps), pld_engine._delta_from(up, br.h, eps, upper=True))
        assert br.delta(eps) == (min(want), want[1]), eps
    for delta in (1e-3, 1e-8):
        assert br.epsilon(delta) == (br._eps_lower(lo, delta), br._eps_side(up, delta, upper=True)), delta
    assert sorted(br._cache) == [(False, 0.0), (True, 0.0)]  # no tilted composition was made


def test_eps_side_beyond_the_window_below_one() -> None:
    # 573:27, 579:23. A window ending at grid index 18 on h = 2^-5: beyond it the upper end of epsilon is
    # (end + max(0, ceil((above - log(delta - inf)) / (lambda h)))) h (end h = 0.5625 when nothing lies above),
    # clipped at 0 from below only: an answer below 1 stays below 1.
    h = 2.0**-5
    br = synthetic_bracket(h)
    comp = synthetic(start=2)
    end = comp.start + comp.log_delta.size - 1
    assert end == 18
    flat = pld_engine._Composed(comp.start, comp.log_delta, comp.inf_mass, -math.inf, 0.75, comp.top, comp.top)
    assert br._eps_side(flat, comp.inf_mass * 1.01, upper=True) == end * h == 0.5625
    for steps in (0.5, 3.0, 9.0):  # the Chernoff tail e^{above - lambda h (i - end)} falls below delta after `steps`
        delta = comp.inf_mass + math.exp(comp.above_log - steps * comp.lam * h)
        extra = (comp.above_log - math.log(delta - comp.inf_mass)) / (comp.lam * h)
        got = br._eps_side(comp, delta, upper=True)
        assert got == (end + max(0, math.ceil(extra))) * h < 1.0, (steps, got)


def test_eps_lower_uses_the_chord_when_delta_equals_the_next_label_bound(big_u: float) -> None:
    # 528:32, 521:29. delta exactly the (float) bound at label i + 1: the chord from label i still lies above delta
    # up to t = (v0 - delta) / (v0 - v1) (1 - 8u) - 4u = 1 - 12u, almost the whole step, not stop at label i; and
    # label i + 1 does not qualify itself (its bound does not exceed delta: the answer stays below (i + 1) h).
    u = REF.mpf(big_u)
    h = 2.0**-3
    br = synthetic_bracket(h)
    comp = synthetic()
    vals = (np.exp(comp.log_delta) + comp.inf_mass) * (1 - 4 * big_u)  # the engine's test of the labels
    checked = 0
    for j in (2, 5, 9):
        i = comp.start - 1 + j
        v0 = pld_engine._delta_from(comp, h, 0.0, upper=False, index=i)
        v1 = pld_engine._delta_from(comp, h, 0.0, upper=False, index=i + 1)
        if not (vals[j] > v1 and vals[j + 1] == v1 and v0 > v1):
            continue  # numpy's and libm's exp one ulp apart: not the tie
        t = max(0, (REF.mpf(v0) - v1) / (REF.mpf(v0) - v1) * (1 - 8 * u) - 4 * u)
        want = i * REF.mpf(h) + REF.log1p(t * REF.expm1(h)) * (1 - 8 * u)
        got = br._eps_lower(comp, v1)
        assert close(got, want, 1e-12), (j, got, float(want))
        assert i * h + 0.99 * h < got < (i + 1) * h
        checked += 1
    assert checked >= 2


def test_delta_lower_chord_rounds_its_offset_up_on_the_widest_grid() -> None:
    # 510:12. h = 256 (CHORD_MAX_H) and a shift of -1/3: x - i h is not a float. t = expm1(r) / expm1(h) must not be
    # below the exact t (the chord of lower bounds falls with t): r rounded up. Rounded down instead, expm1(r) is
    # r 2^-52 ~ 250 u low, beyond the (1 + 8 u) pad on t, and where the profile falls by e^-30 per label (the chord
    # near its low end, t close to 1) the lower end lands up to 7e-13 above the exact chord.
    h = 256.0
    br = synthetic_bracket(h, 0.0, Fraction(-1, 3))
    log_delta = math.log(0.5) - 30.0 * np.arange(8, dtype=np.float64)
    comp = pld_engine._Composed(3, log_delta, 0.0, -math.inf, 0.0, 9, 9)
    checked = 0
    for j in range(5):
        for frac in (Fraction(9, 10), Fraction(99, 100), Fraction(999, 1000), Fraction(9999, 10000)):
            eps = float((comp.start - 1 + j + frac) * 256 - Fraction(1, 3))
            x = Fraction(eps) + Fraction(1, 3)
            i = math.floor(x / 256)
            v0 = pld_engine._delta_from(comp, h, eps, upper=False, index=i)
            v1 = pld_engine._delta_from(comp, h, eps, upper=False, index=i + 1)
            r = x - i * 256
            t = REF.expm1(REF.mpf(r.numerator) / r.denominator) / REF.expm1(h)
            exact = (1 - t) * v0 + t * v1
            got = br._delta_lower(comp, eps)
            assert exact * (1 - 1e-12) <= got <= exact, (j, frac, got, float(exact))
            checked += 1
    assert checked == 20


def test_exact_support_of_exactly_the_limit_gets_the_exact_window() -> None:
    # 323:7. Three factors of 21846 points: the composed support has 3 x 21845 + 1 = 2^16 = EXACT_SUPPORT_POINTS
    # points, at most 64 factors: the FFT covers it exactly (2^16 points from the support's bottom, no aliased mass),
    # though the narrow law's own window would be 2^12.
    size = 21846
    masses = np.zeros(size)
    masses[0] = masses[-1] = 2.0**-30
    masses[size // 2] = 1 - 2.0**-29
    law = GridLaw(-5, masses, 0.0, 2.0**-8)
    comp = pld_engine._compose_tilted([factor(law, 3)], 0.0, 2**20, upper=False)
    assert comp.log_delta.size == 2**16 + 1 and comp.start == -15 and comp.above_log == -math.inf
    assert comp.exact_top == -15 + 2**16 - 1


def test_automatic_grid_widest_part_quarter_at_a_power_of_two_boundary() -> None:
    # 598:39. single / 4 = 35.2 = 1.1 x 2^5 over 2^15 points: h = 2^-9 (a fifth, 28.16, would give 2^-10)
    parts = [(_WidePart(0.01, 140.8), 1), (_WidePart(0.02, 0.5), 3)]
    assert pld_engine._auto_grid(parts, 2**15) == 2.0**-9  # type: ignore[arg-type]


def test_given_grid_is_rounded_down_to_a_power_of_two() -> None:
    # 687:19. grid = 0.3 -> h = 0.25 (documented: rounded down); 3 x 2^-7 -> 2^-6
    part = RandomizedResponsePart(0.5, 2)
    for grid, h in ((0.3, 0.25), (3 * 2.0**-7, 2.0**-6), (2.0**-5, 2.0**-5)):
        br = compose_plds([(part, 3)], grid=grid)
        assert isinstance(br, PLDBracket) and br.h == h, grid


def test_lattice_labels_are_the_lattice_itself_when_it_is_finer_than_the_grid() -> None:
    # 720:12. Laplace(b = 3): lattice spacing 2/3 <= h = 1, so N = 1 (the smallest N with 2/3 / N <= h): the labels
    # are 2/3 apart, not halved
    br = compose_plds([(LaplacePart(3.0), 5)], grid=1.0)
    assert isinstance(br, PLDBracket) and br.lower_h == 2.0 / 3.0


def test_parts_on_different_lattices_keep_the_grid_lower_end() -> None:
    # 718:7. RR(0.3) (spacing 0.6) and RR(0.5) (spacing 1.0) share no lattice: the lower laws stay on the grid. Put
    # on the first part's lattice, RR(0.5)'s atoms are floored by up to 0.5 each and the lower ends drop (delta(0.5):
    # 0.065 instead of 0.193; epsilon(1e-3): 1.09 instead of 1.877)
    br = compose_plds([(RandomizedResponsePart(0.3, 2), 3), (RandomizedResponsePart(0.5, 2), 2)], grid=2.0**-6)
    assert isinstance(br, PLDBracket) and br.lower_h == 0.0
    lo, up = br.delta(0.5)
    assert 0.98 * up < lo <= up
    lo, up = br.epsilon(1e-3)
    assert up - lo < 0.02


class _DegenerateLattice:
    """A randomized response that declares a degenerate lattice (a user's part: the protocol is public)."""

    def __init__(self, spacing: float) -> None:
        self.inner, self.spacing = RandomizedResponsePart(0.5, 2), spacing

    def grid_law(self, h: float, *, pessimistic: bool, tail_mass: float = 1e-15) -> GridLaw:
        return self.inner.grid_law(h, pessimistic=pessimistic, tail_mass=tail_mass)

    def loss_scale(self) -> float:
        return self.inner.loss_scale()

    def support_width(self) -> float:
        return self.inner.support_width()

    def max_loss(self) -> Fraction | None:
        return self.inner.max_loss()

    def lattice(self) -> Lattice:
        return Lattice(-0.5, self.spacing, False)

    def lattice_law(self, h: float, shift: float) -> GridLaw:
        return self.inner.lattice_law(h, shift)


@pytest.mark.parametrize("spacing", [math.inf, 0.0, -1.0, math.nan])
def test_a_degenerate_lattice_keeps_the_grid_lower_end(spacing: float) -> None:
    # 718:7, 718:73. A lattice spacing that is not finite and positive is ignored (the grid's lower laws), not used
    # (an infinite spacing reached lattice_law as h = inf: InvalidArgument from a valid composition)
    br = compose_plds([(_DegenerateLattice(spacing), 3)], grid=2.0**-6)
    ref = compose_plds([(RandomizedResponsePart(0.5, 2), 3)], grid=2.0**-6, lattice=False)
    assert isinstance(br, PLDBracket) and isinstance(ref, PLDBracket) and br.lower_h == 0.0
    assert br.delta(0.5) == ref.delta(0.5) and br.epsilon(1e-3) == ref.epsilon(1e-3)


def test_queries_do_not_change_bracket_equality() -> None:
    # 435:98 (and 436:88). The lazy caches (compositions, log-MGF on the tilts) are not part of a bracket's value:
    # a bracket equals a fresh one made of the same laws and sizes after queries as before
    br = compose_plds([(RandomizedResponsePart(0.5, 2), 3), (LaplacePart(2.0), 2)], grid=2.0**-6)
    assert isinstance(br, PLDBracket)

    def fresh() -> PLDBracket:
        return PLDBracket(
            br.h,
            br.upper_factors,
            br.lower_factors,
            br.max_points,
            br.loss_cap,
            br.lower_h,
            br.lower_shift,
            br.lower_slack,
        )

    assert br == fresh()
    br.delta(0.5)
    br.epsilon(1e-6)
    assert br._cache and br._tilts  # both caches filled
    assert br == fresh() and fresh() == br
