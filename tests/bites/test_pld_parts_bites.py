"""Fast bites for accountant/pld/parts.py: every part's two grid laws against exact profiles at 60 digits.

Each law is evaluated *exactly* (its float masses and grid losses read as reals, summed at 60 digits), so the
float evaluation of :meth:`GridLaw.delta` cannot hide a flipped pad: the pessimistic law must be at or above the
exact profile and the optimistic (or lattice) law at or below it, for every epsilon tried, and both must be tight
where the method promises it (atoms on the grid, connect-the-dots' second-order error). Mass bookkeeping is
checked exactly too (pessimistic total >= 1, optimistic <= 1; tails at +inf or on the top cell). Issue Step 16.
"""

from __future__ import annotations

import functools
import math
from fractions import Fraction

import mpmath
import numpy as np
import pytest
from scipy import special

from semidp.accountant.core.errors import InvalidArgument
from semidp.accountant.pld import parts as pld_parts
from semidp.accountant.pld.parts import (
    ApproxDPPart,
    DiscreteGaussianPart,
    DiscreteLaplacePart,
    GaussianPart,
    GridLaw,
    LaplacePart,
    Lattice,
    RandomizedResponsePart,
    grid_from_atoms,
)

REF = mpmath.MPContext()
REF.dps = 60
EPS_GRID = (-0.5, 0.0, 0.1, 0.37, 0.8, 1.3, 2.0, 3.1)


def exact_delta(law: GridLaw, eps: float) -> mpmath.mpf:
    """``sum_i masses[i] (1 - e^{eps - l_i})_+ + inf_mass`` with every float read exactly, at 60 digits."""
    e = REF.mpf(eps)
    total = REF.mpf(law.inf_mass)
    shift = REF.mpf(law.shift) - REF.mpf(law.slack)
    for i, m in enumerate(law.masses.tolist()):
        if m == 0.0:
            continue
        loss = shift + REF.mpf(law.h) * (law.offset + i)
        if loss > e:
            total += REF.mpf(m) * (1 - REF.exp(e - loss))
    return total


def exact_mass(law: GridLaw) -> Fraction:
    return sum((Fraction(m) for m in law.masses.tolist()), Fraction(0)) + Fraction(law.inf_mass)


def profile_from_pmfs(q: list[mpmath.mpf], p: list[mpmath.mpf], eps: float, inf: mpmath.mpf = 0) -> mpmath.mpf:
    e = REF.exp(REF.mpf(eps))
    return REF.mpf(inf) + sum((max(qi - e * pi, REF.mpf(0)) for qi, pi in zip(q, p, strict=True)), REF.mpf(0))


def rr_profile(eps0: float, k: int, eps: float) -> mpmath.mpf:
    e0 = REF.exp(REF.mpf(eps0))
    den = e0 + k - 1
    q = [e0 / den, 1 / den, (k - 2) / den]
    p = [1 / den, e0 / den, (k - 2) / den]
    return profile_from_pmfs(q, p, eps)


def approx_profile(eps0: float, d0: float, eps: float) -> mpmath.mpf:
    e0 = REF.exp(REF.mpf(eps0))
    keep = 1 - REF.mpf(d0)
    return profile_from_pmfs([keep * e0 / (1 + e0), keep / (1 + e0)], [keep / (1 + e0), keep * e0 / (1 + e0)], eps, d0)


def gauss_profile(mu: float, eps: float) -> mpmath.mpf:
    m, e = REF.mpf(mu), REF.mpf(eps)
    return REF.ncdf(m / 2 - e / m) - REF.exp(e) * REF.ncdf(-m / 2 - e / m)


def laplace_profile(d: float, eps: float) -> mpmath.mpf:
    """Laplace with D = Delta / b: delta(eps) = 1 - e^{(eps - D)/2} on [0, D], 0 above [KJH20, Sec. 6]."""
    if eps >= d:
        return REF.mpf(0)
    return 1 - REF.exp((REF.mpf(eps) - REF.mpf(d)) / 2)


@functools.cache
def _dgauss_pmfs(s2: float, dl: int) -> tuple[list[mpmath.mpf], list[mpmath.mpf]]:
    ys = range(-60 - dl, 60 + 2 * dl)  # e^{-60^2 / (2 * 4)} is far below 10^-60
    wq = [REF.exp(-((y - dl) ** 2) / (2 * REF.mpf(s2))) for y in ys]
    wp = [REF.exp(-(y**2) / (2 * REF.mpf(s2))) for y in ys]
    z = sum(wp)
    return [w / z for w in wq], [w / z for w in wp]


def dgauss_profile(s2: float, dl: int, eps: float) -> mpmath.mpf:
    return profile_from_pmfs(*_dgauss_pmfs(s2, dl), eps)


def dlaplace_profile(t: float, dl: int, eps: float) -> mpmath.mpf:
    """Outcomes y <= 0 (ratio e^{-dl/t}) and y >= dl (ratio e^{dl/t}) summed as geometric series; the rest
    one by one (P(y) = e^{-|y|/t} tanh(1/2t))"""
    r = REF.exp(-1 / REF.mpf(t))
    c = (1 - r) / (1 + r)
    e = REF.exp(REF.mpf(eps))
    lo_q = c * r**dl / (1 - r)  # Q(y <= 0) = sum_{y <= 0} c r^{dl - y}
    lo_p = c / (1 - r)
    out = max(lo_q - e * lo_p, REF.mpf(0)) + max(lo_p - e * lo_q, REF.mpf(0))  # y >= dl mirrors y <= 0
    for y in range(1, dl):
        q, p = c * r ** (dl - y), c * r**y
        out += max(q - e * p, REF.mpf(0))
    return out


def check_bracket(up: GridLaw, lo: GridLaw, ref, eps_grid=EPS_GRID) -> list[tuple[float, float, float]]:  # type: ignore[no-untyped-def]
    """Assert ``lo <= ref <= up`` at every eps (exact evaluation); return (eps, rel gap up, rel gap lo)."""
    gaps = []
    for eps in eps_grid:
        r = ref(eps)
        u, lw = exact_delta(up, eps), exact_delta(lo, eps)
        assert lw <= r <= u, (eps, float(lw), float(r), float(u))
        gaps.append((eps, float((u - r) / r) if r > 0 else float(u), float((r - lw) / r) if r > 0 else float(lw)))
    return gaps


# ------------------------------------------------------------------------------------------- atoms on the grid


@pytest.mark.parametrize("k", [2, 3, 5])
def test_randomized_response_on_the_grid_is_exact_up_to_the_pads(k: int) -> None:
    # losses +-1, 0 lie on h Z: the pessimistic law is the true law with masses padded up (relative 1e-9), the
    # optimistic one with masses rounded down; a pad flipped moves the end across the exact profile
    part = RandomizedResponsePart(1.0, k)
    up, lo = part.grid_law(2.0**-3, pessimistic=True), part.grid_law(2.0**-3, pessimistic=False)
    for eps, gu, gl in check_bracket(up, lo, lambda e: rr_profile(1.0, k, e)):
        if rr_profile(1.0, k, eps) > 0:
            assert gu < 1e-8 and gl < 1e-8, (eps, gu, gl)
    assert up.inf_mass == 0.0 and lo.inf_mass == 0.0
    assert exact_mass(up) >= 1 >= exact_mass(lo)
    assert float(exact_mass(up)) - 1 < 1e-8 and 1 - float(exact_mass(lo)) < 1e-8


@pytest.mark.parametrize(("eps0", "d0"), [(1.0, 0.0), (0.5, 1e-3), (2.0, 0.25)])
def test_approx_dp_part_on_the_grid_carries_delta_at_inf(eps0: float, d0: float) -> None:
    part = ApproxDPPart(eps0, d0)
    up, lo = part.grid_law(2.0**-4, pessimistic=True), part.grid_law(2.0**-4, pessimistic=False)
    for eps, gu, gl in check_bracket(up, lo, lambda e: approx_profile(eps0, d0, e)):
        assert gu < 1e-8 and gl < 1e-8, (eps, gu, gl)
    assert up.inf_mass >= d0 >= lo.inf_mass and up.inf_mass - lo.inf_mass <= 1e-15 * max(d0, 1e-300) + 1e-300
    assert exact_delta(up, 10.0) >= d0 >= exact_delta(lo, 10.0)


# ------------------------------------------------------------------------------------------ atoms off the grid


@pytest.mark.parametrize(("eps0", "k", "h"), [(0.3, 2, 2.0**-4), (0.3, 4, 2.0**-2), (1.1, 2, 2.0**-1)])
def test_off_grid_atoms_are_split_up_and_relabelled_down(eps0: float, k: int, h: float) -> None:
    part = RandomizedResponsePart(eps0, k)
    up, lo = part.grid_law(h, pessimistic=True), part.grid_law(h, pessimistic=False)
    gaps = check_bracket(up, lo, lambda e: rr_profile(eps0, k, e))
    # connect-the-dots keeps q and p: its error is second order in h (a loose end, e.g. atoms rounded up a whole
    # cell, is first order); the relabelling lands the top atom exactly where the mass below balances it
    assert max(g[1] for g in gaps) < 2 * h * h + 1e-8
    assert exact_mass(up) >= 1 >= exact_mass(lo)
    # the P-mass of the pessimistic law is the true one (connect-the-dots keeps p), up to the pads
    p_up = sum(REF.mpf(m) * REF.exp(-(REF.mpf(up.h) * (up.offset + i))) for i, m in enumerate(up.masses.tolist()))
    assert abs(p_up - 1) < 1e-8


def test_grid_from_atoms_pessimistic_rounds_an_inexact_loss_up() -> None:
    # a loss exactly on a grid point, but not declared exact: it is rounded up by LOSS_PAD and split between its
    # own point and the one above (the tiny share above is what keeps a float loss error safe)
    up = grid_from_atoms(np.array([1.0]), np.array([1.0]), 0.0, 2.0**-2, pessimistic=True)
    assert up.offset == 4 and up.masses.size == 2 and 0.0 < up.masses[1] < 1e-12 and up.masses[0] >= 1.0 - 1e-12
    ex = grid_from_atoms(np.array([1.0]), np.array([1.0]), 0.0, 2.0**-2, pessimistic=True, exact=np.array([True]))
    assert ex.offset == 4 and float(ex.masses[1:].sum()) == 0.0
    lo = grid_from_atoms(np.array([1.0]), np.array([1.0]), 0.0, 2.0**-2, pessimistic=False)
    assert lo.offset + np.flatnonzero(lo.masses)[0] == 3  # rounded down a cell, not declared exact
    lo_ex = grid_from_atoms(np.array([1.0]), np.array([1.0]), 0.3, 2.0**-2, pessimistic=False, exact=np.array([True]))
    assert lo_ex.offset + np.flatnonzero(lo_ex.masses)[0] == 4
    assert lo_ex.inf_mass <= 0.3 and lo_ex.inf_mass >= 0.3 * (1 - 1e-15)
    up_inf = grid_from_atoms(np.array([1.0]), np.array([0.5]), 0.5, 2.0**-2, pessimistic=True)
    assert 0.5 <= up_inf.inf_mass <= 0.5 * (1 + 1e-15)
    assert grid_from_atoms(np.array([1.0]), np.array([0.5]), 2.0, 2.0**-2, pessimistic=True).inf_mass == 1.0


def test_optimistic_relabelling_is_a_valid_post_processing_and_tighter_than_flooring() -> None:
    # atoms 0.3 and -0.3 at h = 1/4: flooring puts them at 0.25 and -0.5; the relabelling moves part of the lower
    # atom's outputs up to 0.25 (as much as keeps that label's likelihood ratio >= e^0.25): measured 0.6127 at 0.25
    # against 0.5744 floored, delta(0) 0.1355 against 0.1271 (exact 0.1489)
    part = RandomizedResponsePart(0.3, 2)
    lo = part.grid_law(2.0**-2, pessimistic=False)
    q_hi = 1 / (1 + math.exp(-0.3))
    floored = GridLaw(-2, np.array([1 - q_hi, 0.0, 0.0, q_hi]), 0.0, 2.0**-2)
    for eps in (0.0, 0.1, 0.2):
        r, lw = rr_profile(0.3, 2, eps), exact_delta(lo, eps)
        assert exact_delta(floored, eps) * REF.mpf(1.05) <= lw <= r
    # the moved fraction is exactly as large as the label's likelihood ratio allows: Q/P at 0.25 is e^0.25
    q_top = REF.mpf(lo.masses[3])
    p_top = REF.mpf(q_hi) * REF.exp(-0.3) + (q_top - REF.mpf(q_hi)) * REF.exp(0.3)  # moved part: ratio e^-0.3
    assert REF.exp(0.25) <= q_top / p_top <= REF.exp(0.25) * (1 + REF.mpf(1e-8))
    floor = grid_from_atoms(np.array([0.0]), np.array([1.0]), 0.0, 2.0**-2, pessimistic=False)
    assert floor.offset + np.flatnonzero(floor.masses)[0] == -1  # 0 not declared exact: floored one cell
    assert float(lo.masses.sum()) <= 1.0


# ------------------------------------------------------------------------------------------ continuous parts


@pytest.mark.parametrize(("sigma", "h", "tail"), [(1.0, 2.0**-4, 1e-3), (0.5, 2.0**-3, 1e-2), (2.0, 2.0**-6, 1e-12)])
def test_gaussian_part_bracket_tails_and_mass(sigma: float, h: float, tail: float) -> None:
    part = GaussianPart(sigma=sigma)
    up = part.grid_law(h, pessimistic=True, tail_mass=tail)
    lo = part.grid_law(h, pessimistic=False, tail_mass=tail)
    mu = 1.0 / sigma
    gaps = check_bracket(up, lo, lambda e: gauss_profile(mu, e), (0.0, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0))
    assert all(g[1] < 0.05 + h for g in gaps[:3])
    # the truncated upper tail (Q-mass about `tail` above the window) sits at +inf in the upper law ...
    assert tail / 2 <= up.inf_mass <= tail * 1.01 and lo.inf_mass == 0.0
    # ... and on the top cell of the lower law (its mass is in the total, below 1)
    assert lo.masses[-1] >= tail / 2
    assert exact_mass(up) >= 1 >= exact_mass(lo)
    assert 1 - float(exact_mass(lo)) < 1.01 * tail + 1e-8 and float(exact_mass(up)) - 1 < 1e-6
    # the lower tail goes to the lowest cell of the upper law (it keeps the total)
    assert up.masses[0] >= tail / 2 * 0.9


def test_gaussian_part_many_cells_uses_the_one_pass_relabelling() -> None:
    part = GaussianPart(sigma=1.0)
    up = part.grid_law(2.0**-8, pessimistic=True, tail_mass=1e-6)
    lo = part.grid_law(2.0**-8, pessimistic=False, tail_mass=1e-6)
    assert np.count_nonzero(lo.masses) > 1024
    for eps in (0.0, 2.0):
        r = gauss_profile(1.0, eps)
        u, lw = exact_delta(up, eps), exact_delta(lo, eps)
        assert lw <= r <= u
        assert (u - r) / r < 2e-4 and (r - lw) / r < 2e-3, (eps, float((u - r) / r), float((r - lw) / r))


@pytest.mark.parametrize(("b", "sens", "h"), [(1.0, 1.0, 2.0**-4), (0.7, 1.0, 2.0**-3), (2.0, 3.0, 2.0**-5)])
def test_laplace_part_bracket(b: float, sens: float, h: float) -> None:
    part = LaplacePart(b, sens)
    d = sens / b
    up, lo = part.grid_law(h, pessimistic=True), part.grid_law(h, pessimistic=False)
    grid = [x * d for x in (0.0, 0.2, 0.5, 0.9, 0.99)] + [d, d + 0.5]
    gaps = check_bracket(up, lo, lambda e: laplace_profile(d, e), grid)
    assert max(g[1] for g in gaps[:4]) < 0.2 * h + 1e-8
    if Fraction(sens) / Fraction(b) == Fraction(d):  # the atoms at +-D are exact grid-able floats: not floored
        assert max(g[2] for g in gaps[:4]) < 0.1 * h  # measured <= 0.04 h
    assert exact_mass(up) >= 1 >= exact_mass(lo) and float(exact_mass(up)) - 1 < 1e-6
    assert up.inf_mass == 0.0 and lo.inf_mass == 0.0
    assert part.max_loss() == Fraction(sens) / Fraction(b)
    assert part.lattice() == Lattice(-d, 2 * d, True)
    assert part.loss_scale() == d and part.support_width() == 2 * d


@pytest.mark.parametrize(("b", "h", "shift"), [(1.0, 2.0**-4, -1.0), (0.7, 0.1, -1 / 0.7), (3.0, 1 / 30, -1 / 3)])
def test_laplace_lattice_law_is_below_the_profile_and_tight(b: float, h: float, shift: float) -> None:
    part = LaplacePart(b)
    d = 1.0 / b
    law = part.lattice_law(h, shift)
    assert 0.0 <= law.slack < 1e-12 and law.shift == shift
    for x in (0.0, 0.3, 0.6):
        r = laplace_profile(d, x * d)
        lw = exact_delta(law, x * d)
        assert lw <= r and (r - lw) / r < h + 1e-6, (x, float(lw), float(r))
    assert float(exact_mass(law)) <= 1.0


@pytest.mark.parametrize(("s2", "dl", "h"), [(1.0, 1, 2.0**-4), (4.0, 2, 2.0**-3), (0.3, 1, 2.0**-2)])
def test_discrete_gaussian_bracket_and_tails(s2: float, dl: int, h: float) -> None:
    part = DiscreteGaussianPart(s2, dl)
    up = part.grid_law(h, pessimistic=True, tail_mass=1e-3)
    lo = part.grid_law(h, pessimistic=False, tail_mass=1e-3)
    check_bracket(up, lo, lambda e: dgauss_profile(s2, dl, e), (0.0, 0.3, 1.0, 2.5))
    assert exact_mass(up) >= 1 >= exact_mass(lo)
    assert up.inf_mass > 0.0 and lo.inf_mass == 0.0  # half the tail at +inf (pessimistic), dropped (optimistic)
    assert float(exact_mass(up)) - 1 < 1e-6 and 1 - float(exact_mass(lo)) < 1e-6
    assert part.loss_scale() == dl / math.sqrt(s2) and part.max_loss() is None


@pytest.mark.parametrize(("t", "dl", "h"), [(1.0, 1, 2.0**-3), (0.5, 3, 2.0**-2), (2.5, 2, 2.0**-4)])
def test_discrete_laplace_bracket_and_lattice(t: float, dl: int, h: float) -> None:
    part = DiscreteLaplacePart(t, dl)
    up, lo = part.grid_law(h, pessimistic=True), part.grid_law(h, pessimistic=False)
    ref = lambda e: dlaplace_profile(t, dl, e)  # noqa: E731
    check_bracket(up, lo, ref, (-dl / t - 0.5, -dl / t * 0.5, 0.0, 0.2, 0.5, dl / t * 0.9))
    assert exact_mass(up) >= 1 >= exact_mass(lo)
    lat = part.lattice()
    assert lat == Lattice(-dl / t, 2.0 / t, False)
    law = part.lattice_law(lat.spacing, lat.shift)
    for eps in (0.0, 0.2, 0.5):
        r = ref(eps)
        assert r * (1 - 1e-8) <= exact_delta(law, eps) <= r  # atoms on their own lattice: exact
    if t in (1.0, 0.5):  # the losses (2 y - Delta) / t are exact floats, and known to be: no slack
        assert law.slack == 0.0
    assert part.max_loss() == Fraction(dl) / Fraction(t)


@pytest.mark.parametrize(
    "part", [RandomizedResponsePart(0.7, 2), RandomizedResponsePart(0.7, 3), ApproxDPPart(0.7, 0.01)]
)
def test_atom_parts_lattice_laws_are_exact(part: RandomizedResponsePart | ApproxDPPart) -> None:
    lat = part.lattice()
    assert lat is not None and lat.shift == -0.7 and not lat.continuous
    law = part.lattice_law(lat.spacing, lat.shift)
    if isinstance(part, ApproxDPPart):
        ref = lambda e: approx_profile(0.7, 0.01, e)  # noqa: E731
        assert law.inf_mass <= 0.01 and law.inf_mass >= 0.01 * (1 - 1e-15)
    else:
        ref = lambda e: rr_profile(0.7, part.k, e)  # noqa: E731
        assert lat.spacing == (0.7 if part.k > 2 else 1.4)
    for eps in (-0.3, 0.0, 0.3, 0.69):  # below 0 the atom at loss 0 (k > 2) counts too
        r = ref(eps)
        assert r * (1 - 1e-8) <= exact_delta(law, eps) <= r
    assert exact_mass(law) <= 1 - (0.01 if isinstance(part, ApproxDPPart) else 0) + law.inf_mass
    assert RandomizedResponsePart(0.0, 2).lattice() is None and ApproxDPPart(0.0, 0.1).lattice() is None


def test_part_geometry_and_argument_checks() -> None:
    g = GaussianPart(sigma=2.0, sensitivity=3.0)
    assert g.loss_scale() == 1.5 and g.support_width() == 36.0 and g.max_loss() is None
    assert RandomizedResponsePart(1.0).k == 2 and GaussianPart(1.0).sensitivity == 1.0
    rr = RandomizedResponsePart(0.0, 2)
    assert rr.loss_scale() == 1e-6 and rr.support_width() == 1e-6 and rr.max_loss() == 0
    ap = ApproxDPPart(2.0, 0.1)
    assert ap.loss_scale() == 2.0 and ap.support_width() == 4.0 and ap.max_loss() == 2
    dg = DiscreteGaussianPart(4.0, 2)
    assert dg.support_width() == 24.0
    dl = DiscreteLaplacePart(0.5, 2)
    assert dl.loss_scale() == 4.0 and dl.support_width() == 8.0
    with pytest.raises(InvalidArgument, match="power of two"):
        g.grid_law(0.3, pessimistic=True)
    with pytest.raises(InvalidArgument, match="grid points"):
        g.grid_law(2.0**-30, pessimistic=True)
    with pytest.raises(InvalidArgument, match="grid points"):
        LaplacePart(1e-6).grid_law(2.0**-10, pessimistic=True)
    with pytest.raises(InvalidArgument):
        g.grid_law(2.0**-4, pessimistic=True, tail_mass=0.5)
    for tail in (0.5, 0.0):
        with pytest.raises(InvalidArgument, match="tail_mass"):
            dg.grid_law(2.0**-4, pessimistic=False, tail_mass=tail)
    assert ApproxDPPart(1.0).delta == 0.0


def test_grid_law_delta_reads_the_lattice_labels_less_the_slack() -> None:
    # one atom labelled 1.0 whose true loss may be 0.5 below (slack): the plain-float delta uses loss 0.5
    law = GridLaw(1, np.array([1.0]), 0.25, 1.0, shift=0.0, slack=0.5)
    assert law.delta(0.0) == pytest.approx(0.25 + -math.expm1(-0.5), rel=1e-15)
    assert law.delta(0.6) == 0.25
    shifted = GridLaw(2, np.array([0.5, 0.5]), 0.0, 0.5, shift=-1.0)  # labels 0.0 and 0.5
    assert shifted.delta(0.0) == pytest.approx(0.5 * -math.expm1(-0.5), rel=1e-15)


def test_discrete_gaussian_optimistic_masses_divide_by_the_tail_bound_too() -> None:
    # a large tail_mass keeps few outcomes: the optimistic Q-masses must be divided by the full normaliser
    # (kept sum + tail bound), not the kept sum alone, or they exceed the true masses (relative 3e-6 here)
    s2 = 1.0
    lo = DiscreteGaussianPart(s2, 1).grid_law(2.0**-2, pessimistic=False, tail_mass=0.4)
    t = math.ceil(math.sqrt(s2) * math.sqrt(2.0 * math.log(1.0 / 0.4) + 4.0)) + 1
    z_true = sum(REF.exp(-REF.mpf(x * x) / 2) for x in range(-80, 81))
    kept = sum(REF.exp(-REF.mpf(x * x) / 2) for x in range(-t, t + 1)) / z_true
    assert 1 - kept > 1e-6  # the tail is not negligible
    assert REF.mpf(exact_mass(lo).numerator) / exact_mass(lo).denominator <= kept
    up = DiscreteGaussianPart(s2, 1).grid_law(2.0**-2, pessimistic=True, tail_mass=0.4)
    # the pessimistic law puts half the tail bound at +inf and half on its lowest cell
    assert up.inf_mass >= (1 - kept) / 2 and up.masses[0] >= (1 - kept) / 2


@pytest.mark.parametrize("pessimistic", [True, False])
def test_grid_from_atoms_checks_its_size_before_allocating(pessimistic: bool) -> None:
    with pytest.raises(InvalidArgument, match="grid_from_atoms needs"):
        grid_from_atoms(np.array([-1e3, 1e3]), np.array([0.5, 0.5]), 0.0, 2.0**-20, pessimistic=pessimistic)


def test_log_cell_masses_use_the_tail_without_cancellation() -> None:
    # both tails: a cell far above the median has Q-mass 1e-20 next to Phi = 1 - 1e-18; its log must come from
    # Phi(-z), not from the difference of two Phi(z) near 1
    from semidp.accountant.pld import parts as pld_parts

    z = np.array([-9.0, -8.9, -1.0, -0.5, 0.0, 0.5, 1.0, 8.9, 9.0])
    got = pld_parts._log_cell_masses(z)
    for i in range(z.size - 1):
        exact = REF.log(REF.ncdf(REF.mpf(z[i + 1])) - REF.ncdf(REF.mpf(z[i])))
        assert abs(got[i] - exact) <= 1e-12 * max(1.0, abs(exact)), (i, got[i], float(exact))


@pytest.mark.parametrize(
    "part",
    [
        GaussianPart(1.0),
        LaplacePart(1.0),
        DiscreteGaussianPart(1.0),
        DiscreteLaplacePart(1.0),
        RandomizedResponsePart(1.0),
        ApproxDPPart(1.0, 0.0),
    ],
)
def test_parts_are_frozen_and_hashable(part: object) -> None:
    # compose_plds merges equal parts through a dict: a part must hash by value and must not change afterwards
    assert {part: 1}[type(part)(*[getattr(part, f) for f in part.__dataclass_fields__])] == 1  # type: ignore[attr-defined]
    name = next(iter(part.__dataclass_fields__))  # type: ignore[attr-defined]
    with pytest.raises(AttributeError):
        setattr(part, name, 2.0)


def test_one_pass_relabelling_moves_at_most_the_whole_cell() -> None:
    # beyond GREEDY_CELLS the one-pass choice moves x = min(1, r) of every cell at odd distance below the top; where
    # the excess above is larger than the cell's deficit (r > 1) it may move the whole cell, never more (x <= 1:
    # moving 1.5 of a cell would create mass). Each fraction keeps x_{i-1} D_{i-1} <= (1 - x_i) E_i.
    n = pld_parts.GREEDY_CELLS + 11
    rng = np.random.default_rng(7)
    e_lo = rng.uniform(0.5, 3.0, n)
    d_hi = rng.uniform(0.5, 3.0, n - 1)
    x = pld_parts._relabel_fractions(e_lo, d_hi)
    r = e_lo[1:] / d_hi
    assert np.any(r[(n - 1 - np.arange(n - 1)) % 2 == 1] > 1.2)  # some movers could absorb more than their cell
    assert x[-1] == 0.0 and np.all(x >= 0.0) and np.all(x <= 1.0)
    assert np.all(x[:-1] * d_hi <= (1.0 - x[1:]) * e_lo[1:])
    assert np.count_nonzero(x == 1.0) > 0  # the whole cell moves where r > 1


def test_laplace_and_lattice_sizes_are_checked_on_their_whole_span() -> None:
    # the span is a1 - a0 (both ends): a check on a1 alone lets a part twice the limit through to its allocations
    d = 1.5 * pld_parts.MAX_PART_POINTS / 2 * 2.0**-10  # d / h = 0.75 MAX_PART_POINTS: the span 1.5 times the limit
    with pytest.raises(InvalidArgument, match="LaplacePart needs"):
        LaplacePart(1.0 / d).grid_law(2.0**-10, pessimistic=False)
    # on a lattice shifted by D the labels run from about -2 D / h up to 1: the span is all below 0
    with pytest.raises(InvalidArgument, match="LaplacePart needs"):
        LaplacePart(1.0 / 1e6).lattice_law(2.0**-30, 1e6)
    with pytest.raises(InvalidArgument, match="lattice_from_atoms needs"):
        pld_parts.lattice_from_atoms(
            np.array([-1e3, 1e3]), np.array([0.5, 0.5]), 0.0, 2.0**-30, 0.0, exact=np.array([True, True])
        )


# ----------------------------------------------------------------------- the float pads alone (REL_PAD = 0)


def atoms_profile(loss: np.ndarray, q: np.ndarray, eps: float) -> mpmath.mpf:
    """``E_Q[(1 - e^{eps - L})_+]`` of atoms ``q`` at ``loss`` (floats read exactly), at 60 digits."""
    e = REF.mpf(eps)
    return sum((REF.mpf(qi) * (1 - REF.exp(e - REF.mpf(li))) for li, qi in zip(loss, q) if li > eps), REF.mpf(0))


def dyadic_atoms(rng: np.random.Generator, n: int, h: float) -> tuple[np.ndarray, np.ndarray]:
    """``n`` atoms on the grid ``h Z`` (distinct losses in ``[-2, 2]``) with dyadic masses: every input is exact."""
    idx = rng.choice(np.arange(int(-2 / h), int(2 / h)), size=n, replace=False)
    return idx * h, rng.integers(1, 2**20, size=n) / 2.0**30


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_float_rounding_pads_alone_keep_each_atom_law_on_its_side(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    # REL_PAD covers the error of float closed forms; with exact inputs (dyadic masses, losses on the grid) there
    # are none, so REL_PAD = 0 is an admissible instance of the contract and only the pads for the float sums and
    # products remain: a pad flipped to the wrong side then puts the law's mass or profile on the wrong side of
    # the exact values (each sum rounds by a few ulps; (n + 2) 2u flipped is about n ulps over).
    monkeypatch.setattr(pld_parts, "REL_PAD", 0.0)
    rng = np.random.default_rng(seed)
    h = 2.0**-6
    loss, q = dyadic_atoms(rng, 40, h)
    exact = np.ones(loss.size, dtype=bool)
    total = sum((Fraction(x) for x in q.tolist()), Fraction(0))
    up = grid_from_atoms(loss, q, 0.0, h, pessimistic=True, exact=exact)
    lo = grid_from_atoms(loss, q, 0.0, h, pessimistic=False, exact=exact)
    shift = float(loss.min()) - 3 * h  # a lattice whose labels are the atoms themselves (exact: dyadic)
    lat = pld_parts.lattice_from_atoms(loss, q, 0.0, h, shift, exact=exact)
    assert lat.slack == 0.0
    assert exact_mass(up) >= total >= max(exact_mass(lo), exact_mass(lat))
    for eps in (-2.5, -1.0, 0.0, 0.3, 1.0):
        r = atoms_profile(loss, q, eps)
        assert exact_delta(lo, eps) <= r <= exact_delta(up, eps), eps
        assert exact_delta(lat, eps) <= r, eps


def test_merge_down_rounds_every_relabelled_mass_down(monkeypatch: pytest.MonkeyPatch) -> None:
    # Exact cell masses (dyadic) and ratios on the grid: the relabelling's own float products (1 - x) q + x q
    # round by an ulp either way; the final (1 - 8u) keeps the total at or below the exact input, and the
    # mass at or below any label below the exact mass there (prefix sums: relabelling only moves mass up).
    monkeypatch.setattr(pld_parts, "REL_PAD", 0.0)
    rng = np.random.default_rng(7)
    h = 2.0**-5
    n = 300
    q = rng.integers(2**20, 2**21, size=n) / 2.0**30
    w = q * np.exp(-h * rng.uniform(0.0, 1.0, size=n))  # P e^{ah}: below q (losses in the cell)
    law = pld_parts._merge_down(-n // 2, q, w, h, 0.0)
    out = [Fraction(m) for m in law.masses.tolist()]
    inp = [Fraction(m) for m in q.tolist()]
    run_out = run_in = Fraction(0)
    for o, i in zip(out, inp, strict=True):
        run_out += o
        run_in += i
        assert run_out <= run_in
    assert sum(out) < sum(inp)


@pytest.mark.parametrize(
    ("b", "shift", "h"), [(1.0, -0.9, 0.1), (0.7, 0.3, 0.03), (1.0, 5.3, 0.1), (2.0**-7, 0.0, 0.3)]
)
def test_laplace_lattice_slack_covers_its_float_cell_edges(b: float, shift: float, h: float) -> None:
    # The cells between the float edges shift + h a take the exact labels shift + h a; a cell's losses start at
    # its float edge, so the law's slack must be at least every label's excess over its edge (exact Fractions).
    # Here the atoms' labels lie below the atoms, so only the cells' own slack can cover that.
    law = LaplacePart(b).lattice_law(h, shift)
    d = 1.0 / b
    a0, a1 = math.floor((-d - shift) / h) - 1, math.ceil((d - shift) / h) + 1
    edges = shift + h * np.arange(a0, a1 + 1, dtype=np.float64)
    over = [Fraction(shift) + a * Fraction(h) - Fraction(e) for a, e in zip(range(a0, a1 + 1), edges.tolist())]
    assert max(over) > 0  # the float edges do fall below some labels
    assert Fraction(law.slack) >= max(over)


@pytest.mark.parametrize("pessimistic", [True, False])
def test_cell_sums_are_padded_for_their_float_rounding(pessimistic: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    # Adversarial sums (REL_PAD = 0, exact dyadic inputs): 200 atoms share one grid point after a mass 1/2.
    # Pessimistic: each small mass is a quarter ulp of 1/2 (plus the 4u pad) and rounds away, so the float cell sum
    # is 25 ulps short of the exact sum and only the (n + 2) 2u summation pad lifts it back. Optimistic: each is
    # three quarters of an ulp and rounds up a quarter ulp, 50 ulps over in all, which only the downward pad
    # (not _merge_down's 8u) takes back off.
    monkeypatch.setattr(pld_parts, "REL_PAD", 0.0)
    small = 2.0**-55 if pessimistic else 3 * 2.0**-55
    q = np.array([0.5] + [small] * 200)
    loss = np.full(q.size, 0.25)
    law = grid_from_atoms(loss, q, 0.0, 2.0**-4, pessimistic=pessimistic, exact=np.ones(q.size, dtype=bool))
    total = sum((Fraction(x) for x in q.tolist()), Fraction(0))
    if pessimistic:
        assert exact_mass(law) >= total
    else:
        assert exact_mass(law) <= total


def test_connect_the_dots_cells_keep_their_whole_mass(monkeypatch: pytest.MonkeyPatch) -> None:
    # Cells with exact dyadic Q-masses (REL_PAD = 0): each cell's mass is split between its two ends, the lower
    # share (q - wb) padded up by 4u for its subtraction and the whole law by 4u more, so the law's exact total is
    # at least the cells' (a share or the law rounded down by 4u instead loses about 4u of the cells' mass).
    monkeypatch.setattr(pld_parts, "REL_PAD", 0.0)
    rng = np.random.default_rng(11)
    h = 2.0**-5
    q = rng.integers(2**20, 2**21, size=300) / 2.0**30
    pe = q * np.exp(-h * rng.uniform(0.0, 1.0, size=q.size))
    law = pld_parts._grid_from_cells(-150, q, pe, h, pessimistic=True)
    assert exact_mass(law) >= sum((Fraction(x) for x in q.tolist()), Fraction(0))


@pytest.mark.parametrize("seed", [3, 4])
def test_greedy_relabelling_is_valid_and_moves_all_it_may(seed: int) -> None:
    # Up to GREEDY_CELLS cells the fractions are the exact greedy from the top down: x_top = 0 and
    # x_{i-1} = min(1, (1 - x_i) r_i) (r_i = E_i / D_{i-1} less 1e-12). Valid (checked exactly: no label's
    # likelihood ratio drops below its level) and maximal (no fraction could be larger by more than the 1e-12).
    rng = np.random.default_rng(seed)
    n = 200
    e_lo = rng.uniform(0.0, 3.0, n) * (rng.uniform(size=n) > 0.1)  # some cells have no excess
    d_hi = rng.uniform(0.5, 3.0, n - 1)
    x = pld_parts._relabel_fractions(e_lo, d_hi)
    assert x.size == n and x[-1] == 0.0 and np.all((x >= 0.0) & (x <= 1.0))
    for i in range(1, n):
        lhs = Fraction(float(x[i - 1])) * Fraction(float(d_hi[i - 1]))
        assert lhs <= (1 - Fraction(float(x[i]))) * Fraction(float(e_lo[i])), i
        best = min(1.0, (1.0 - x[i]) * e_lo[i] / d_hi[i - 1])
        assert x[i - 1] >= best * (1 - 1e-11), i
    assert np.count_nonzero(x == 1.0) > 0 and np.count_nonzero((x > 0) & (x < 1)) > 0


@pytest.mark.parametrize(
    ("q", "pe"),
    [(0.8319432152802452, 0.8296069076821777), (0.834268198709379, 0.8342611695999717)],
)
def test_connect_the_dots_lower_share_is_padded_up(q: float, pe: float, monkeypatch: pytest.MonkeyPatch) -> None:
    # One cell (REL_PAD = 0) where the float q - wb rounds down (found by a search over random cells): the lower
    # share's (1 + 4u) pad is what keeps the law's total at or above q; padded down instead, the total is about
    # 1e-17 short of the exact q.
    monkeypatch.setattr(pld_parts, "REL_PAD", 0.0)
    law = pld_parts._grid_from_cells(0, np.array([q]), np.array([pe]), 2.0**-5, pessimistic=True)
    assert law.masses.size == 2 and law.masses[1] > 0
    assert exact_mass(law) >= Fraction(q)


def test_discrete_gaussian_checks_its_outcome_count(monkeypatch: pytest.MonkeyPatch) -> None:
    # 2 t + 1 outcomes (t about 11.9 sigma) are allocated before grid_from_atoms sees the (narrow) loss span, so the
    # part's own check must refuse them: with a cap of 1000, sigma = 100 needs about 2400 outcomes.
    monkeypatch.setattr(pld_parts, "MAX_PART_POINTS", 1000)
    with pytest.raises(InvalidArgument, match="DiscreteGaussianPart needs"):
        DiscreteGaussianPart(1e4).grid_law(2.0**-4, pessimistic=True)
    assert DiscreteGaussianPart(1.0).grid_law(2.0**-4, pessimistic=True).masses.size < 1000


def test_lattice_slack_covers_a_label_snapped_above_its_atom() -> None:
    # An atom 2^-40 below a lattice point takes that label (SNAP): the label exceeds the true loss by 2^-40, so the
    # law's slack must be at least that (exactly), or the labelled law would claim a loss the atom does not have.
    loss = np.array([0.5 - 2.0**-40, -0.5])
    law = pld_parts.lattice_from_atoms(loss, np.array([0.5, 0.5]), 0.0, 0.5, -0.5, exact=np.array([True, True]))
    assert Fraction(law.slack) >= Fraction(2) ** -40
    assert law.slack < 2.0**-39


def test_lattice_slack_covers_an_inexact_loss() -> None:
    # A loss that is not exactly the float given may be LOSS_PAD |l| below it: on its label, the slack is that pad.
    law = pld_parts.lattice_from_atoms(
        np.array([1.5, -0.5]), np.array([0.5, 0.5]), 0.0, 0.5, -0.5, exact=np.array([False, True])
    )
    assert Fraction(law.slack) >= Fraction(pld_parts.LOSS_PAD) * Fraction(3, 2)
    assert law.slack < 4 * pld_parts.LOSS_PAD
    # LOSS_PAD is 16 ulps of the loss (u = 2^-53): a few ulps of a closed form, with room
    assert (
        Fraction(16 * 2.0**-53) * Fraction(3, 2)
        <= Fraction(law.slack)
        <= Fraction(16 * 2.0**-53) * Fraction(3, 2) * (1 + Fraction(1, 10**6))
    )


def test_laplace_optimistic_law_keeps_an_inexact_low_atom_below_its_cells() -> None:
    # b = 0.1: D = fl(1 / 0.1) = 10.0 is not the exact ratio, so the atom at -D is floored one step below the
    # lowest cell (-D / h is an integer): the law's span must start there, not at the cells' first index.
    part = LaplacePart(0.1)
    h = 2.0**-4
    law = part.grid_law(h, pessimistic=False)
    assert law.offset == -161  # a span from the cells' -160 wraps the atom's index -1 to the top of the array
    assert float(exact_mass(law)) <= 1.0
    for eps in (0.0, 5.0, 9.0):
        assert exact_delta(law, eps) <= laplace_profile(10.0, eps)


# ------------------------------------------------------------- session 32: shape, adversarial truths, tightness

U = 2.0**-53


@pytest.mark.parametrize(
    "obj",
    [
        GaussianPart(1.0),
        LaplacePart(1.0),
        DiscreteGaussianPart(1.0),
        DiscreteLaplacePart(1.0),
        RandomizedResponsePart(1.0),
        ApproxDPPart(1.0, 0.0),
        GridLaw(0, np.ones(1), 0.0, 1.0),
        Lattice(0.0, 1.0, False),
    ],
)
def test_parts_and_laws_are_slotted_values(obj: object) -> None:
    # house style R1: frozen slotted value objects (no per-instance __dict__: no stray attribute can hide a typo)
    assert not hasattr(obj, "__dict__")
    name = next(iter(getattr(obj, "__dataclass_fields__", None) or obj._fields))  # type: ignore[attr-defined]
    with pytest.raises(AttributeError):  # frozen
        setattr(obj, name, 2.0)


def test_merge_spans_exactly_the_union_of_its_laws() -> None:
    # the pessimistic merge of a cells law and an atoms law: one array over the union of their spans (no extra
    # zero cells at either end: a longer span is a longer FFT for nothing), every mass summed and padded by
    # (1 + 2 k u) for k laws, the masses at +inf too
    a = GridLaw(-2, np.array([0.25, 0.5]), 0.125, 2.0**-3)
    b = GridLaw(1, np.array([0.5, 0.25, 0.125]), 0.0625, 2.0**-3)
    m = pld_parts._merge([a, b], pessimistic=True)
    fac = Fraction(1) + 4 * Fraction(U)
    assert m.offset == -2 and m.masses.size == 6 and m.h == 2.0**-3
    want = [Fraction(x) * fac for x in (0.25, 0.5, 0.0, 0.5, 0.25, 0.125)]
    assert [Fraction(x) for x in m.masses.tolist()] == want
    assert Fraction(m.inf_mass) == Fraction(0.1875) * fac
    c = pld_parts._merge([b, a], pessimistic=True)  # order does not matter
    assert c.offset == -2 and c.masses.tolist() == m.masses.tolist()


def test_laplace_laws_span_exactly_their_cells_and_atoms() -> None:
    # LaplacePart(1) at h = 1/16: cells -16 .. 15 and the exact atoms at -D = -1 and D = 1 (grid points -16, 16).
    # Optimistic: labels -16 .. 16 (33 points, the atom at D the top one); pessimistic: the cells' connect-the-dots
    # adds the point 16, the exact atom at D is split onto 16 and 17 (a zero share): -16 .. 17.
    part = LaplacePart(1.0)
    lo = part.grid_law(2.0**-4, pessimistic=False)
    assert (lo.offset, lo.masses.size) == (-16, 33) and lo.masses[-1] > 0.49
    up = part.grid_law(2.0**-4, pessimistic=True)
    assert (up.offset, up.masses.size) == (-16, 34) and up.masses[-2] > 0.5
    lat = part.lattice_law(2.0**-4, -1.0)  # labels -1 + j / 16: the cells -1 .. 32 (a zero-width one each side)
    assert (lat.offset, lat.masses.size) == (-1, 34) and lat.masses[-1] > 0.49


def test_optimistic_lattice_keeps_the_mass_at_inf_to_four_ulps() -> None:
    # the optimistic laws keep inf_mass (an exact float, ApproxDPPart.delta) rounded down by 4u, no more
    want = Fraction(0.5) * (1 - 4 * Fraction(U))
    lat = pld_parts.lattice_from_atoms(
        np.array([1.0, -1.0]), np.array([0.25, 0.25]), 0.5, 0.5, -1.0, exact=np.ones(2, bool)
    )
    assert Fraction(lat.inf_mass) == want
    grid = grid_from_atoms(
        np.array([1.0, -1.0]), np.array([0.25, 0.25]), 0.5, 0.5, pessimistic=False, exact=np.ones(2, bool)
    )
    assert Fraction(grid.inf_mass) == want
    up = grid_from_atoms(
        np.array([1.0, -1.0]), np.array([0.25, 0.25]), 0.5, 0.5, pessimistic=True, exact=np.ones(2, bool)
    )
    assert Fraction(up.inf_mass) == Fraction(0.5) * (1 + 4 * Fraction(U))


def _pow2_atoms(n: int, h: float) -> tuple[np.ndarray, np.ndarray]:
    """``n`` atoms on distinct grid points with power-of-two masses: every product by ``1 +- k u`` is exact."""
    rng = np.random.default_rng(5)
    idx = rng.choice(np.arange(int(-2 / h), int(2 / h)), size=n, replace=False)
    return idx * h, 2.0 ** -rng.integers(3, 12, size=n).astype(np.float64)


def test_atom_laws_on_the_grid_are_padded_by_exactly_their_float_error_bounds(monkeypatch: pytest.MonkeyPatch) -> None:
    # Exact inputs (REL_PAD = 0, power-of-two masses, exact losses on distinct grid points): nothing is split or
    # relabelled, so each mass is q times the pads alone, computed exactly. Pessimistic: (1 + 4u) on the lower
    # share, (1 + (n + 2) 2u) on the sums; optimistic: (1 - (n + 2) 2u) on the sums, (1 - 8u) after the
    # relabelling. A larger pad is a needless looseness, a smaller or flipped one an unsound end.
    monkeypatch.setattr(pld_parts, "REL_PAD", 0.0)
    n, h = 40, 2.0**-6
    loss, q = _pow2_atoms(n, h)
    ex = np.ones(n, dtype=bool)
    fu = Fraction(U)
    total = sum((Fraction(x) for x in q.tolist()), Fraction(0))
    up = grid_from_atoms(loss, q, 0.0, h, pessimistic=True, exact=ex)
    # (each product of a power of two by 1 +- k u is exact; the second one rounds its u^2 term away)
    assert exact_mass(up) == total * (1 + (4 + (n + 2) * 2) * fu)
    lo = grid_from_atoms(loss, q, 0.0, h, pessimistic=False, exact=ex)
    assert exact_mass(lo) == total * (1 - ((n + 2) * 2 + 8) * fu)
    lat = pld_parts.lattice_from_atoms(loss, q, 0.0, h, float(loss.min()) - 3 * h, exact=ex)
    assert exact_mass(lat) == total * (1 - ((n + 2) * 2 + 8) * fu)


def _adversarial_pair(
    f0: float, f1: float, cells: int, rel: float, q1: float = 0.25
) -> tuple[np.ndarray, np.ndarray, list[mpmath.mpf], list[mpmath.mpf]]:
    """Two non-empty cells for :func:`_merge_down` (``0`` and ``cells``, h = 1/16) and the true pair behind them.

    Cell ``a`` holds one true atom at loss ``(a + f) h`` with Q-mass ``q`` (dyadic, given exactly) and ``P e^{a h}``
    equal to ``w / (1 - 0.99 rel)``: the float ``w`` given is ``0.99 rel`` *below* the truth, the side that makes a
    deficit look smaller and an excess larger than they are (the contract trusts ``w`` to ``rel``). The relabelling
    moves a fraction of the lower cell up; at the lower atom's loss the law then equals the truth up to the margins.
    Returns (q, w, true losses, true Q-masses).
    """
    h = REF.mpf(2) ** -4
    keep = 1 - REF.mpf(0.99) * REF.mpf(rel)
    q = np.zeros(cells + 1)
    w = np.zeros(cells + 1)
    losses, qs = [], []
    for a, f, qa in ((0, f0, 0.5), (cells, f1, q1)):
        wa = float(REF.mpf(qa) * REF.exp(-REF.mpf(f) * h) * keep)
        wt = REF.mpf(wa) / keep
        if f == 0.0:
            wt = REF.mpf(qa)
        assert abs(REF.mpf(wa) - wt) <= REF.mpf(rel) * wt and wt <= qa
        q[a], w[a] = qa, wa
        losses.append(a * h + REF.log(REF.mpf(qa) / wt))
        qs.append(REF.mpf(qa))
    return q, w, losses, qs


def check_dominated(law: GridLaw, losses: list[mpmath.mpf], qs: list[mpmath.mpf]) -> None:
    """The optimistic ``law`` lies at or below the true atoms' profile at every label and every true loss (60 digits)."""
    nz = np.flatnonzero(law.masses)
    labels = [REF.mpf(law.shift) - REF.mpf(law.slack) + REF.mpf(law.h) * (law.offset + int(i)) for i in nz]
    masses = [REF.mpf(m) for m in law.masses[nz].tolist()]
    for e in sorted(set(labels) | set(losses)):
        lw = sum(
            (m * (1 - REF.exp(e - lb)) for m, lb in zip(masses, labels, strict=True) if lb > e), REF.mpf(law.inf_mass)
        )
        tr = sum((qi * (1 - REF.exp(e - li)) for qi, li in zip(qs, losses, strict=True) if li > e), REF.mpf(0))
        assert lw <= tr, (float(e), float(lw), float(tr), float((lw - tr) / tr))


#: (f0, f1, cells, q1, rel, largest relative gap at the lower atom's loss): measured gaps 1.0e-15, 1.2e-13, 6.7e-11,
#: 2.2e-13, 1.5e-15, 1.2e-9 (rel = 0: the 1e-12 on the ratio and the final 8 ulps); 46.7, 26.9, 22.6 rel (the
#: 2 rel (q + w) on the excess: a tiny excess amplifies it); 4.8e6 rel (a tiny deficit). Bounds 1.25 times those.
MERGE_DOWN_CASES = [
    (0.0, 1e-4, 1, 0.25, 0.0, 1.3e-15),
    (1 - 1e-5, 1e-9, 1, 0.25, 0.0, 1.5e-13),
    (1 - 1e-4, 1e-4, 1, 0.25, 0.0, 8.4e-11),
    (0.3, 0.5, 2, 0.25, 0.0, 2.8e-13),
    (1 - 1e-6, 1e-3, 3, 2.0**-20, 0.0, 1.9e-15),
    (1 - 1e-5, 0.5, 1, 2.0**-20, 0.0, 1.5e-9),
    (0.0, 1e-4, 1, 0.25, 1e-9, 58e-9),
    (0.0, 1e-4, 1, 0.25, 1e-6, 58e-6),
    (0.3, 0.5, 2, 0.25, 1e-9, 34e-9),
    (0.3, 0.5, 2, 0.25, 1e-6, 34e-6),
    (1 - 1e-6, 1e-3, 3, 2.0**-20, 1e-9, 28e-9),
    (1 - 1e-6, 1e-3, 3, 2.0**-20, 1e-6, 28e-6),
    (1 - 1e-5, 0.5, 1, 2.0**-20, 1e-9, 6e-3),
]


@pytest.mark.parametrize(("f0", "f1", "cells", "q1", "rel", "max_gap"), MERGE_DOWN_CASES)
def test_merge_down_pair_is_dominated_by_every_pair_its_inputs_allow_and_tight(
    f0: float, f1: float, cells: int, q1: float, rel: float, max_gap: float
) -> None:
    # _merge_down trusts q (rounded down) and w = P e^{ah} to relative rel; here the truth has w 0.99 rel above the
    # float given. The relabelling is tight: the law equals the truth at the lower atom's loss up to the margins.
    # Soundness: every margin of the excess's and the deficit's bounds (2 rel (q + w), the (1 + 8 u) on e^gap, the
    # 1e-12 on the ratio) is needed by some pair (with rel = 0 the inputs are exact and only the float margins
    # remain), and a smaller one lifts the upper label above the truth. Tightness: a larger margin moves less mass
    # up and leaves a larger gap there than the measured one.
    q, w, losses, qs = _adversarial_pair(f0, f1, cells, rel, q1)
    law = pld_parts._merge_down(0, q, w, 2.0**-4, rel)
    assert law.masses[cells] > q[cells]  # part of the lower cell moved up
    check_dominated(law, losses, qs)
    lw = sum(
        (
            REF.mpf(m) * (1 - REF.exp(losses[0] - REF.mpf(law.h) * i))
            for i, m in enumerate(law.masses.tolist())
            if i > 0
        ),
        REF.mpf(0),
    )
    tr = qs[1] * (1 - REF.exp(losses[0] - losses[1]))
    assert 0 <= (tr - lw) / tr <= max_gap, float((tr - lw) / tr)


def test_merge_down_never_moves_a_cell_whose_p_mass_underflowed() -> None:
    # Two cells at h = 1 with Q-masses 2^-1070: the lower one's P-mass e^{-0.9} 2^-1070 is below the subnormal range
    # (given as w = 0.0: its true value is unknown), so its deficit is unbounded and it must stay; moved whole (as if
    # its deficit were none), its label 1 would claim a likelihood ratio its outputs do not have.
    q0 = q1 = 2.0**-1070
    w1 = float(REF.mpf(q1) * REF.exp(-REF.mpf(0.05)))  # a subnormal: the truth is defined by it
    q, w = np.array([q0, q1]), np.array([0.0, w1])
    losses = [REF.mpf(0.9), 1 + REF.log(REF.mpf(q1) / REF.mpf(w1))]
    law = pld_parts._merge_down(0, q, w, 1.0, 0.0)
    assert law.masses[0] > 0.0
    check_dominated(law, losses, [REF.mpf(q0), REF.mpf(q1)])


def test_merge_down_of_empty_cells_is_an_empty_law() -> None:
    law = pld_parts._merge_down(3, np.zeros(4), np.zeros(4), 2.0**-3, 0.0)
    assert (law.offset, law.masses.tolist(), law.inf_mass, law.h) == (3, [0.0], 0.0, 2.0**-3)


@pytest.mark.parametrize("n", [6, 1030])
def test_relabel_fractions_with_no_excess_or_no_deficit(n: int) -> None:
    # Greedy (n <= GREEDY_CELLS) and one-pass branches: a cell with no excess above it (e_lo = 0) never moves, one
    # with no deficit (d_hi = 0, its likelihood ratio already at the label above) may move whole; 0 / 0 is no move
    # (never a NaN), and every fraction is valid: x_{i-1} d_hi <= (1 - x_i) e_lo.
    e_lo = np.tile([0.0, 1.0, 0.0, 2.0, 1.0, 0.5], n // 6 + 1)[:n]
    d_hi = np.tile([0.0, 0.0, 1.0, 0.5, 0.0, 4.0], n // 6 + 1)[: n - 1]
    x = pld_parts._relabel_fractions(e_lo, d_hi)
    assert np.all(np.isfinite(x)) and np.all((x >= 0.0) & (x <= 1.0)) and x[-1] == 0.0
    assert np.all(x[:-1] * d_hi <= (1.0 - x[1:]) * e_lo[1:])
    assert np.all(x[:-1][e_lo[1:] == 0.0] == 0.0)
    free = (d_hi == 0.0) & (e_lo[1:] > 0.0) & (x[1:] == 0.0)
    assert np.any(free) and np.all(x[:-1][free] == 1.0)


def test_relabelling_is_the_greedy_up_to_1024_cells_and_one_pass_beyond() -> None:
    # the documented switch (GREEDY_CELLS = 1024): the greedy's fractions differ from the one-pass choice on cells
    # whose ratio r < 1 lies below a mover
    rng = np.random.default_rng(2)
    for n, greedy in ((1024, True), (1025, False)):
        e_lo, d_hi = rng.uniform(0.2, 1.0, n), rng.uniform(0.5, 1.5, n - 1)
        x = pld_parts._relabel_fractions(e_lo, d_hi)
        r = e_lo[1:] / d_hi * (1.0 - 1e-12)
        want = [0.0] * n
        for i in range(n - 1, 0, -1):
            want[i - 1] = (
                min(1.0, (1.0 - want[i]) * r[i - 1]) if greedy else (min(1.0, r[i - 1]) if (n - i) % 2 else 0.0)
            )
        assert x.tolist() == want, n


def test_part_size_limit_is_two_to_the_24_points() -> None:
    pld_parts._check_points(2**24, "x")
    with pytest.raises(InvalidArgument, match="x needs"):
        pld_parts._check_points(2**24 + 1, "x")


def test_discrete_gaussian_size_check_counts_its_2t_plus_1_outcomes(monkeypatch: pytest.MonkeyPatch) -> None:
    # sigma^2 = 1, default tail: t = ceil(sqrt(2 ln 1e30 + 4)) + 1 = 13, so 27 outcomes (losses -12.5 .. 13.5: 15
    # grid points at h = 2); a cap of exactly 27 lets it through, 26 refuses it
    monkeypatch.setattr(pld_parts, "MAX_PART_POINTS", 27)
    assert DiscreteGaussianPart(1.0).grid_law(2.0, pessimistic=True).masses.size <= 15
    monkeypatch.setattr(pld_parts, "MAX_PART_POINTS", 26)
    with pytest.raises(InvalidArgument, match="DiscreteGaussianPart needs 27"):
        DiscreteGaussianPart(1.0).grid_law(2.0, pessimistic=True)


def test_part_arguments_are_checked_and_widths_stated() -> None:
    with pytest.raises(InvalidArgument, match="k"):
        RandomizedResponsePart(1.0, 1)
    with pytest.raises(InvalidArgument, match="delta"):
        ApproxDPPart(1.0, 1.5)
    assert ApproxDPPart(1.0, 1.0).delta == 1.0
    # the loss ranges [-eps, eps]: width 2 eps (1e-6 at eps = 0, a grid must still be chosen)
    assert RandomizedResponsePart(1.5, 3).support_width() == 3.0 and ApproxDPPart(1.5).support_width() == 3.0
    assert RandomizedResponsePart(0.0).support_width() == 1e-6 and ApproxDPPart(0.0).loss_scale() == 1e-6
    assert ApproxDPPart(0.0).support_width() == 1e-6 and DiscreteLaplacePart(1.0).sensitivity == 1
    for part in (GaussianPart(1.0), DiscreteGaussianPart(1.0)):
        for bad in (0.0, 0.5):  # an open interval: no window at 0 (z infinite), none left at 1/2
            with pytest.raises(InvalidArgument, match="tail_mass"):
                part.grid_law(2.0**-4, pessimistic=True, tail_mass=bad)
    assert RandomizedResponsePart(1.5).loss_scale() == 1.5 and DiscreteLaplacePart(0.5, 2).support_width() == 8.0


def test_connect_the_dots_pads_the_point_where_two_cells_meet(monkeypatch: pytest.MonkeyPatch) -> None:
    # REL_PAD = 0, exact inputs. Cell 0 (P-mass 0) puts its whole Q-mass 1/2 on its upper end, cell 1 (likelihood
    # ratio 1 at its lower edge) its whole 2^-56 on its lower end: the two meet at point 1, where the float sum
    # 1/2 + 2^-56 rounds to 1/2. Only the law's final (1 + 4u) gives the lost 2^-56 back.
    monkeypatch.setattr(pld_parts, "REL_PAD", 0.0)
    law = pld_parts._grid_from_cells(0, np.array([0.5, 2.0**-56]), np.array([0.0, 2.0**-56]), 2.0**-4, pessimistic=True)
    assert law.masses[0] == 0.0 and law.masses[2] == 0.0
    assert exact_mass(law) >= Fraction(1, 2) + Fraction(2) ** -56
    assert exact_mass(law) <= (Fraction(1, 2) + Fraction(2) ** -56) * (1 + 8 * Fraction(U))


def test_lattice_law_rounds_its_cells_down_by_their_sum_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    # REL_PAD = 0, exact inputs on separate labels: atoms 1/4 at labels 0 and 4, continuous cells (Q-mass = P-mass
    # times e^{edge}: nothing moves) with power-of-two masses at labels 1 .. 3. Each cell's mass is rounded down by
    # its sum's 2u and the relabelling's 8u, exactly 10u (a cell padded up instead ends above its true mass).
    monkeypatch.setattr(pld_parts, "REL_PAD", 0.0)
    cq = np.array([2.0**-3, 2.0**-4, 2.0**-5])
    law = pld_parts.lattice_from_atoms(
        np.array([0.0, 2.0]), np.array([0.25, 0.25]), 0.0, 0.5, 0.0, exact=np.ones(2, bool), cells=(1, cq, cq, 0.0)
    )
    assert law.offset == 0 and law.slack == 0.0
    assert [Fraction(x) for x in law.masses[1:4].tolist()] == [Fraction(c) * (1 - 10 * Fraction(U)) for c in cq]


@pytest.mark.parametrize(("s2", "excess"), [(1.0, 0.0035), (4.0, 0.035)])
def test_discrete_gaussian_tail_bound_is_safe_and_tight(s2: float, excess: float) -> None:
    # tail_mass 0.4 keeps |x| <= t (t = 4, 6): the Q-mass T beyond is bounded geometrically by
    # 2 e^{-(t+1)^2/2s2} / (1 - e^{-(t+1)/s2}), 0.27 % and 3.2 % above T (measured). The pessimistic law puts half
    # the bound at +inf (the upper half of T is there), the optimistic one divides by (kept sum + bound): both ends
    # within `excess` of T of the truth (a looser geometric ratio or a doubled tail is caught).
    t = math.ceil(math.sqrt(s2) * math.sqrt(2.0 * math.log(1.0 / 0.4) + 4.0)) + 1
    z = sum(REF.exp(-REF.mpf(x * x) / (2 * REF.mpf(s2))) for x in range(-200, 201))
    tail = 2 * sum(REF.exp(-REF.mpf(x * x) / (2 * REF.mpf(s2))) for x in range(t + 1, 201)) / z
    up = DiscreteGaussianPart(s2).grid_law(2.0**-2, pessimistic=True, tail_mass=0.4)
    assert tail / 2 <= up.inf_mass <= tail / 2 * (1 + excess)
    assert exact_mass(up) >= 1  # the lower half of the tail is on the lowest point, not dropped (T >> REL_PAD)
    lo = DiscreteGaussianPart(s2).grid_law(2.0**-2, pessimistic=False, tail_mass=0.4)
    assert np.count_nonzero(lo.masses) == 2 * t + 1  # one outcome per label (losses 4 / s2 labels apart)
    lo_mass = REF.mpf(exact_mass(lo).numerator) / exact_mass(lo).denominator
    assert (1 - tail) * (1 - 2e-9) - tail * excess <= lo_mass <= 1 - tail


def test_discrete_gaussian_keeps_exactly_its_2t_plus_1_outcomes() -> None:
    # sigma^2 = 1: t = 13, losses (2 y - 1) / 2 for y = 1 + x, |x| <= 13: -12.5 .. 13.5, not declared exact: the
    # optimistic law floors them (labels -26 .. 26 at h = 1/2), the pessimistic one rounds up (-25 .. 27, 28)
    lo = DiscreteGaussianPart(1.0).grid_law(0.5, pessimistic=False)
    assert (lo.offset, lo.offset + lo.masses.size - 1) == (-26, 26) and lo.masses[0] > 0 and lo.masses[-1] > 0
    up = DiscreteGaussianPart(1.0).grid_law(0.5, pessimistic=True)
    assert (up.offset, up.offset + up.masses.size - 1) == (-25, 28)


def test_an_inexact_zero_loss_is_rounded_up_too() -> None:
    # a loss 0.0 not declared exact may be a tiny positive number: LOSS_PAD |l| is 0 there, so the absolute pad
    # 1e-300 rounds it up into (0, h]: a tiny share goes to the grid point above, and the law starts at 0
    up = grid_from_atoms(np.array([0.0]), np.array([1.0]), 0.0, 2.0**-2, pessimistic=True)
    assert up.offset == 0 and up.masses.size == 2 and up.masses[0] >= 1.0 and up.masses[1] > 0.0


def test_lattice_size_check_counts_the_labels_and_two_more(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pld_parts, "MAX_PART_POINTS", 10)
    ex = np.ones(2, dtype=bool)
    pld_parts.lattice_from_atoms(np.array([-4.0, 4.0]), np.array([0.5, 0.5]), 0.0, 1.0, 0.0, exact=ex)  # 8 + 2
    with pytest.raises(InvalidArgument, match="lattice_from_atoms needs 11"):
        pld_parts.lattice_from_atoms(np.array([-4.0, 5.0]), np.array([0.5, 0.5]), 0.0, 1.0, 0.0, exact=ex)


def test_grid_law_with_cells_rounds_its_cells_down_by_their_sum_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    # as the lattice law's cells: REL_PAD = 0, atoms 1/4 at 0 and 2, cells (Q = P e^{edge}: nothing moves) with
    # power-of-two masses at grid points 1 .. 3 (h = 1/2): each rounded down by exactly 10u
    monkeypatch.setattr(pld_parts, "REL_PAD", 0.0)
    cq = np.array([2.0**-3, 2.0**-4, 2.0**-5])
    law = grid_from_atoms(
        np.array([0.0, 2.0]),
        np.array([0.25, 0.25]),
        0.0,
        0.5,
        pessimistic=False,
        exact=np.ones(2, bool),
        cells=(1, cq, cq),
    )
    assert law.offset == 0
    assert [Fraction(x) for x in law.masses[1:4].tolist()] == [Fraction(c) * (1 - 10 * Fraction(U)) for c in cq]


def test_lattice_relabelling_is_tighter_than_flooring() -> None:
    # RR(0.3) on the labels -0.3 + j / 4: the atom 0.3 is labelled 0.2 (its w = q e^{-0.1}); the relabelling moves
    # part of the atom -0.3 up to 0.2 as far as that label's likelihood ratio allows: measured 1.147 times the
    # floored law's delta at these eps, and below the exact profile
    law = RandomizedResponsePart(0.3, 2).lattice_law(0.25, -0.3)
    q_hi = 1 / (1 + math.exp(-0.3))
    floored = GridLaw(0, np.array([1 - q_hi, 0.0, q_hi]), 0.0, 0.25, -0.3)
    for eps in (-0.3, 0.0, 0.1):
        assert exact_delta(floored, eps) * REF.mpf(1.12) <= exact_delta(law, eps) <= rr_profile(0.3, 2, eps)


def test_lattices_of_the_atom_parts() -> None:
    # losses -eps, eps (and 0 for k > 2): spacing 2 eps, or eps with the middle atom
    assert ApproxDPPart(1.5, 0.1).lattice() == Lattice(-1.5, 3.0, False)
    assert RandomizedResponsePart(1.5, 2).lattice() == Lattice(-1.5, 3.0, False)
    assert RandomizedResponsePart(1.5, 3).lattice() == Lattice(-1.5, 1.5, False)
    assert ApproxDPPart(0.0).lattice() is None and RandomizedResponsePart(0.0).lattice() is None


def test_gaussian_size_check_counts_both_ends(monkeypatch: pytest.MonkeyPatch) -> None:
    # GaussianPart(1) at h = 1/16 spans cells a0 .. a1 about 11.4 / h either side of 1/2: about 370 in all
    monkeypatch.setattr(pld_parts, "MAX_PART_POINTS", 300)
    with pytest.raises(InvalidArgument, match="GaussianPart needs"):
        GaussianPart(1.0).grid_law(2.0**-4, pessimistic=True)
    monkeypatch.setattr(pld_parts, "MAX_PART_POINTS", 400)
    assert 300 < GaussianPart(1.0).grid_law(2.0**-4, pessimistic=True).masses.size <= 400


@pytest.mark.parametrize("lattice", [False, True])
def test_atom_laws_with_cells_cover_cells_trusted_to_rel_pad(lattice: bool) -> None:
    # A continuous part's cells (q, pe) come from closed forms trusted to REL_PAD each, so the merge's rel must
    # carry REL_PAD. Two cells at h = 1/16: cell 0's true losses at its label (P e^0 = q), cell 1's 1e-4 h above
    # its label (a tiny excess); the pe given is 0.99 REL_PAD below the truth. An exact atom far above completes the
    # law. The law must stay below the true pair at every label and true loss.
    h = 2.0**-4
    keep = 1 - REF.mpf(0.99) * REF.mpf(pld_parts.REL_PAD)
    cq = np.array([0.5, 0.25])
    wt = [REF.mpf(0.5), REF.mpf(0.25) * REF.exp(-REF.mpf(1e-4) * REF.mpf(h))]
    cw = np.array([float(v * keep) for v in wt])
    wt[1] = REF.mpf(cw[1]) / keep
    losses = [REF.mpf(0), REF.mpf(h) + REF.log(REF.mpf(0.25) / wt[1]), REF.mpf(3)]
    qs = [REF.mpf(0.5), REF.mpf(0.25), REF.mpf(2.0**-10)]
    atom = (np.array([3.0]), np.array([2.0**-10]), 0.0, h)
    if lattice:
        law = pld_parts.lattice_from_atoms(*atom, 0.0, exact=np.ones(1, bool), cells=(0, cq, cw, 0.0))
        assert law.slack == 0.0
    else:
        law = grid_from_atoms(*atom, pessimistic=False, exact=np.ones(1, bool), cells=(0, cq, cw))
    assert law.masses[1] > 0.25  # part of cell 0 moved up
    check_dominated(law, losses, qs)


def test_optimistic_atoms_cover_an_inexact_large_loss(monkeypatch: pytest.MonkeyPatch) -> None:
    # A loss not declared exact may be LOSS_PAD |l| below the float given; at |l| = 2^22 that is 7.5e-9 relative,
    # above REL_PAD, so rel's LOSS_PAD (max |l| + 1) term must cover it. h = 1: the lower atom 1e-6 below the top of
    # its cell (a tiny deficit) whose true loss is 0.99 LOSS_PAD |l| lower still, the upper one 1e-5 above its
    # label (exact), and an exact atom at 0 (so the largest |l|, not the smallest, sets the term).
    top = 2.0**22
    l0 = top - 1e-6
    loss = np.array([l0, top + 1e-5, 0.0])
    q = np.array([0.5, 2.0**-8, 2.0**-10])
    law = grid_from_atoms(loss, q, 0.0, 1.0, pessimistic=False, exact=np.array([False, True, True]))
    pad = REF.mpf(0.99) * REF.mpf(pld_parts.LOSS_PAD) * REF.mpf(l0)
    losses = [REF.mpf(l0) - pad, REF.mpf(top + 1e-5), REF.mpf(0)]
    i = int(top) - law.offset
    assert law.masses[i] > q[1]  # part of the lower atom moved up
    check_dominated(law, losses, [REF.mpf(x) for x in q.tolist()])


@pytest.mark.parametrize(("q", "pe"), [(0.3, 0.29), (0.5, 0.499), (0.25, 0.24)])
def test_connect_the_dots_p_mass_deficit_is_its_pads_only(q: float, pe: float) -> None:
    # Connect-the-dots keeps a cell's P-mass exactly; the pads (2 err = 2 REL_PAD (q + pe) on the upper share, the
    # upper share padded up by REL_PAD, q padded up by REL_PAD) take e^{-ah} REL_PAD (2 q + pe) of it away (measured
    # 1.0000 times that): a larger pad on the upper share moves more mass up than the float error needs.
    h = 2.0**-4
    law = pld_parts._grid_from_cells(5, np.array([q]), np.array([pe]), h, pessimistic=True)
    p_law = sum(REF.mpf(m) * REF.exp(-REF.mpf(h) * (law.offset + i)) for i, m in enumerate(law.masses.tolist()))
    scale = REF.exp(-REF.mpf(h) * 5)
    deficit = REF.mpf(pe) * scale - p_law
    assert 0 <= deficit <= REF.mpf(1.05) * REF.mpf(pld_parts.REL_PAD) * (2 * REF.mpf(q) + REF.mpf(pe)) * scale


def test_lattice_slack_covers_an_inexact_zero_loss() -> None:
    # an inexact loss 0.0 may be a tiny positive number (LOSS_PAD |l| is 0 there): its label 0 may exceed it by the
    # absolute pad 1e-300, which the slack must carry
    law = pld_parts.lattice_from_atoms(
        np.array([0.0, 1.0]), np.array([0.5, 0.5]), 0.0, 0.5, 0.0, exact=np.array([False, True])
    )
    assert law.slack >= 1e-300


@pytest.mark.parametrize("pessimistic", [True, False])
def test_grid_from_atoms_size_check_counts_the_span_and_two_more(
    pessimistic: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(pld_parts, "MAX_PART_POINTS", 10)
    ex = np.ones(2, dtype=bool)
    grid_from_atoms(np.array([-7.5, 0.5]), np.array([0.5, 0.5]), 0.0, 1.0, pessimistic=pessimistic, exact=ex)  # 8 + 2
    with pytest.raises(InvalidArgument, match="grid_from_atoms needs 11"):
        grid_from_atoms(np.array([-8.5, 0.5]), np.array([0.5, 0.5]), 0.0, 1.0, pessimistic=pessimistic, exact=ex)


def test_gaussian_window_is_exactly_its_tail_quantiles() -> None:
    # cells from floor((m - z mu) / h) to ceil((m + z mu) / h), z = -ndtri(tail_mass): no cell more (the tails beyond
    # are moved to +inf / the lowest cell, or put on the top cell)
    from scipy import special

    h, tail = 2.0**-4, 1e-6
    z = -float(special.ndtri(tail))
    a0, a1 = math.floor((0.5 - z) / h), math.ceil((0.5 + z) / h)
    up = GaussianPart(1.0).grid_law(h, pessimistic=True, tail_mass=tail)
    lo = GaussianPart(1.0).grid_law(h, pessimistic=False, tail_mass=tail)
    assert (up.offset, up.masses.size) == (a0, a1 - a0 + 1) and (lo.offset, lo.masses.size) == (a0, a1 - a0)


@pytest.mark.parametrize(
    "part",
    [
        LaplacePart(1.0),
        LaplacePart(0.7),
        LaplacePart(2.0, 3.0),
        DiscreteLaplacePart(0.5, 3),
        RandomizedResponsePart(0.3, 4),
    ],
)
@pytest.mark.parametrize("h", [2.0**-4, 2.0**-3])
def test_laws_of_parts_without_tails_keep_their_total_mass_to_rel_pad(part: object, h: float) -> None:
    # No tail is cut: the true total is 1, and the float masses given are trusted to REL_PAD, so the truth may lie
    # REL_PAD either side of them. The pessimistic law keeps at least all of the largest total they allow, the
    # optimistic and the lattice laws at most the smallest: both REL_PAD away from 1 (measured 1.0000 REL_PAD, plus
    # ulps). A pad dropped, or a lost or doubled cell, or a pad beyond REL_PAD, moves the total across a bound.
    r = Fraction(pld_parts.REL_PAD) * Fraction(1001, 1000)
    s = Fraction(pld_parts.REL_PAD) * Fraction(999, 1000)
    up = part.grid_law(h, pessimistic=True)  # type: ignore[attr-defined]
    lo = part.grid_law(h, pessimistic=False)  # type: ignore[attr-defined]
    lat = part.lattice()  # type: ignore[attr-defined]
    ll = part.lattice_law(lat.spacing / 4, lat.shift)  # type: ignore[attr-defined]
    assert 1 + s <= exact_mass(up) <= 1 + r
    assert 1 - r <= exact_mass(lo) <= 1 - s and 1 - r <= exact_mass(ll) <= 1 - s


def test_lattice_slack_is_rounded_up_to_a_float() -> None:
    # an inexact loss 0.0 labelled 2^-30 (the labels 2^-30 + j / 2): its excess 2^-30 + 1e-300 is no float, and the
    # slack must be the float above it, not the nearest one (2^-30)
    law = pld_parts.lattice_from_atoms(
        np.array([0.0, 1.0]), np.array([0.5, 0.5]), 0.0, 0.5, 2.0**-30, exact=np.array([False, True])
    )
    assert Fraction(law.slack) >= Fraction(2) ** -30 + Fraction(1e-300)
    assert law.slack == math.nextafter(2.0**-30, 1.0)


def test_discrete_parts_check_their_integer_sensitivity() -> None:
    for cls in (DiscreteLaplacePart, DiscreteGaussianPart):
        with pytest.raises(InvalidArgument, match="sensitivity"):
            cls(1.0, 0)
        assert cls(1.0, 1).sensitivity == 1


@pytest.mark.parametrize("lattice", [False, True])
def test_atom_relabelling_margin_is_the_documented_rel(lattice: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    # REL_PAD = 0, exact atoms 1/2 at 0 and 1/4 at h + 2^-22 (h = 1/16): the upper atom's excess over its label is
    # tiny, so the margin 2 rel (q + w) on it decides how much of the lower atom moves up, and the law's gap below the
    # truth at eps = 0 is about 4 rel / h = 64 rel (measured 65.8 rel, rel = LOSS_PAD (max |l| + 1) + (n + 8) 2u as
    # documented): a larger rel (a term doubled, 8 -> 9) leaves a larger gap.
    monkeypatch.setattr(pld_parts, "REL_PAD", 0.0)
    h, d = 2.0**-4, 2.0**-22
    loss, q, ex = np.array([0.0, h + d]), np.array([0.5, 0.25]), np.ones(2, dtype=bool)
    if lattice:
        law = pld_parts.lattice_from_atoms(loss, q, 0.0, h, 0.0, exact=ex)
        assert law.slack == 0.0
    else:
        law = grid_from_atoms(loss, q, 0.0, h, pessimistic=False, exact=ex)
    rel = pld_parts.LOSS_PAD * (h + d + 1) + (2 + 8) * 2 * U
    lw = sum(
        REF.mpf(m) * (1 - REF.exp(-REF.mpf(h) * (law.offset + i)))
        for i, m in enumerate(law.masses.tolist())
        if law.offset + i > 0
    )
    tr = REF.mpf(0.25) * (1 - REF.exp(-REF.mpf(h + d)))
    assert 0 <= (tr - lw) / tr <= 67.2 * rel, float((tr - lw) / tr / rel)


def _spy(monkeypatch: pytest.MonkeyPatch, name: str) -> list[tuple[tuple[object, ...], GridLaw]]:
    """Wrap ``pld_parts.<name>`` (called by global name inside the module) and record each call's args and law."""
    seen: list[tuple[tuple[object, ...], GridLaw]] = []
    orig = getattr(pld_parts, name)

    def spy(*args: object, **kwargs: object) -> GridLaw:
        law: GridLaw = orig(*args, **kwargs)
        seen.append((args, law))
        return law

    monkeypatch.setattr(pld_parts, name, spy)
    return seen


def _rel_err(got: float, want: mpmath.mpf) -> float:
    return float(abs(REF.mpf(got) / want - 1))


@pytest.mark.parametrize(("sigma", "tail_mass"), [(1.0, 1e-3), (0.5, 1e-6)])
def test_gaussian_tails_carry_exactly_their_rel_pad(
    sigma: float, tail_mass: float, monkeypatch: pytest.MonkeyPatch
) -> None:
    # REL_PAD made visible (2^-12): the pessimistic law puts the low tail Phi((a0 h - m) / mu) (1 + REL_PAD) on its
    # first cell and the high tail Phi(-(a1 h - m) / mu) (1 + REL_PAD) at +inf; the optimistic law puts the high tail
    # (1 - REL_PAD) on its last cell. Checked at 60 digits against the cells' own law (recorded): a dropped, flipped
    # or divided pad is off by ~2^-12 relative, far above the tolerance.
    rp = 2.0**-12
    monkeypatch.setattr(pld_parts, "REL_PAD", rp)
    seen = _spy(monkeypatch, "_grid_from_cells")
    h = 2.0**-5
    mu = 1.0 / sigma  # exact
    m = mu * mu / 2.0
    z = -float(special.ndtri(tail_mass))
    a0, a1 = math.floor((m - z * mu) / h), math.ceil((m + z * mu) / h)
    low = REF.ncdf((REF.mpf(a0 * h) - REF.mpf(m)) / REF.mpf(mu))
    high = REF.ncdf(-(REF.mpf(a1 * h) - REF.mpf(m)) / REF.mpf(mu))
    up = GaussianPart(sigma).grid_law(h, pessimistic=True, tail_mass=tail_mass)
    cells = seen[-1][1]
    assert up.offset == cells.offset == a0 and up.masses.size == cells.masses.size
    assert _rel_err(up.masses[0] - cells.masses[0], low * (1 + REF.mpf(rp))) < 1e-9
    assert np.array_equal(up.masses[1:], cells.masses[1:])
    assert _rel_err(up.inf_mass, high * (1 + REF.mpf(rp))) < 1e-9
    lo = GaussianPart(sigma).grid_law(h, pessimistic=False, tail_mass=tail_mass)
    cells = seen[-1][1]
    assert lo.inf_mass == 0.0 and np.array_equal(lo.masses[:-1], cells.masses[:-1])
    assert _rel_err(lo.masses[-1] - cells.masses[-1], high * (1 - REF.mpf(rp))) < 1e-9


@pytest.mark.parametrize(("s2", "dl"), [(4.5, 1), (3.0, 2)])
def test_discrete_gaussian_pads_are_exactly_their_documented_formulas(
    s2: float, dl: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The unit roundoff made visible (_U = 2^-20) and REL_PAD too (2^-12), at tail_mass 0.4 (so the geometric tail
    # bound is ~1e-3 of Z and t = ceil(sigma sqrt(2 ln(1/tail) + 4)) + 1 differs from the `+ 3` one). With n = 2t + 1
    # outcomes, Zp their 60-digit partial sum and T the geometric tail bound: pessimistic atoms w / (Zp (1 - (n+4)u)),
    # half of T / (Zp (1 - (n+4)u)) (1 + REL_PAD) on the lowest cell and half at +inf; optimistic atoms
    # w / ((Zp + T) (1 + (n+4)u)) and nothing else. Every pad one ulp smaller or larger is off by 2^-20 relative.
    u, rp = 2.0**-20, 2.0**-12
    monkeypatch.setattr(pld_parts, "_U", u)
    monkeypatch.setattr(pld_parts, "REL_PAD", rp)
    seen = _spy(monkeypatch, "grid_from_atoms")
    tail_mass, h = 0.4, 2.0**-6
    t = math.ceil(math.sqrt(s2) * math.sqrt(2.0 * math.log(1.0 / tail_mass) + 4.0)) + 1
    n = 2 * t + 1
    w = [REF.exp(-(REF.mpf(x) ** 2) / (2 * REF.mpf(s2))) for x in range(-t, t + 1)]
    zp = sum(w, REF.mpf(0))
    tb = 2 * REF.exp(-(REF.mpf(t + 1) ** 2) / (2 * REF.mpf(s2))) / -REF.expm1(-REF.mpf(t + 1) / REF.mpf(s2))
    assert 1e-4 < tb / zp < 1e-2
    part = DiscreteGaussianPart(s2, dl)
    up = part.grid_law(h, pessimistic=True, tail_mass=tail_mass)
    args, atoms = seen[-1]
    q = np.asarray(args[1])
    assert q.size == n
    down = 1 - (n + 4) * REF.mpf(u)
    assert max(_rel_err(qi, wi / (zp * down)) for qi, wi in zip(q.tolist(), w, strict=True)) < 1e-12
    ztail = tb / (zp * down) * (1 + REF.mpf(rp))
    assert atoms.inf_mass == 0.0 and _rel_err(up.inf_mass, ztail / 2) < 1e-12
    assert _rel_err(up.masses[0] - atoms.masses[0], ztail / 2) < 1e-9
    assert up.offset == atoms.offset and np.array_equal(up.masses[1:], atoms.masses[1:])
    lo = part.grid_law(h, pessimistic=False, tail_mass=tail_mass)
    args, atoms = seen[-1]
    q = np.asarray(args[1])
    upd = (zp + tb) * (1 + (n + 4) * REF.mpf(u))
    assert max(_rel_err(qi, wi / upd) for qi, wi in zip(q.tolist(), w, strict=True)) < 1e-12
    assert lo is atoms


@pytest.mark.parametrize("lattice", [False, True])
def test_atom_relabelling_margin_passed_on_is_exactly_the_documented_rel(
    lattice: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    # REL_PAD, LOSS_PAD and the unit roundoff set to distinct powers of two (2^-10, 2^-20, 2^-30), so every term of
    # rel = REL_PAD + LOSS_PAD (max |l| + 1) + (n + 8) 2u is visible and the float sum exact: the margin handed to
    # _merge_down equals it exactly (max |l| = 3 is the lowest atom's, min |l| = 1/4). A term dropped, halved,
    # flipped, or one unit off in n + 8 moves it.
    rp, lp, u = 2.0**-10, 2.0**-20, 2.0**-30
    monkeypatch.setattr(pld_parts, "REL_PAD", rp)
    monkeypatch.setattr(pld_parts, "LOSS_PAD", lp)
    monkeypatch.setattr(pld_parts, "_U", u)
    seen = _spy(monkeypatch, "_merge_down")
    h = 2.0**-4
    loss, q, ex = np.array([-3.0, 0.25, 1.5]), np.array([0.25, 0.25, 0.125]), np.ones(3, dtype=bool)
    if lattice:
        pld_parts.lattice_from_atoms(loss, q, 0.0, h, 0.0, exact=ex)
    else:
        grid_from_atoms(loss, q, 0.0, h, pessimistic=False, exact=ex)
    want = Fraction(rp) + Fraction(lp) * (3 + 1) + (3 + 8) * 2 * Fraction(u)
    assert len(seen) == 1 and Fraction(seen[0][0][4]) == want  # type: ignore[arg-type]


def test_merge_down_excess_and_deficit_bounds_carry_exactly_their_documented_margins(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # rel = 2^-10 and u = 2^-30 (visible) on two dyadic cells 0 and 2 (h = 1/16): the greedy gets
    # E^- = max(q - w - 2 rel (q + w), 0) for each cell and D^+ = up_w - q + 2 rel (up_w + q) for the lower one,
    # up_w = e^{2h} (1 + 8u) w. A margin halved or left with one term is off by ~rel, far above the tolerance.
    rel, u = 2.0**-10, 2.0**-30
    monkeypatch.setattr(pld_parts, "_U", u)
    seen: list[tuple[np.ndarray, np.ndarray]] = []
    orig = pld_parts._relabel_fractions

    def spy(e_lo: np.ndarray, d_hi: np.ndarray) -> np.ndarray:
        seen.append((e_lo.copy(), d_hi.copy()))
        out: np.ndarray = orig(e_lo, d_hi)
        return out

    monkeypatch.setattr(pld_parts, "_relabel_fractions", spy)
    h = 2.0**-4
    q, w = np.array([0.25, 0.0, 0.5]), np.array([0.375, 0.0, 0.125])
    pld_parts._merge_down(0, q, w, h, rel)
    e_lo, d_hi = seen[0]
    fr = Fraction(rel)
    assert e_lo.tolist() == [0.0, float(Fraction(0.5) - Fraction(0.125) - 2 * fr * Fraction(0.625))]
    up_w = REF.exp(2 * REF.mpf(h)) * (1 + 8 * REF.mpf(u)) * REF.mpf(0.375)
    assert (
        d_hi.size == 1 and _rel_err(d_hi[0], up_w - REF.mpf(0.25) + 2 * REF.mpf(rel) * (up_w + REF.mpf(0.25))) < 1e-13
    )


def test_connect_the_dots_pads_are_exactly_their_documented_formulas(monkeypatch: pytest.MonkeyPatch) -> None:
    # REL_PAD = 2^-10 and u = 2^-30 (visible), dyadic cells and atom (h = 1/16). Cells: qu = q (1 + REL_PAD),
    # err = REL_PAD (q + pe), wb = min((q - pe + 2 err) (1 + REL_PAD) / (1 - e^{-h}), qu) to the upper point,
    # wa = (qu - wb) (1 + 4u) to the lower one, the law times (1 + 4u). Atom at a h + f: qu as above,
    # wb = min(qu (1 - e^{-f}) / (1 - e^{-h}) (1 + REL_PAD), qu), wa = (qu - wb) (1 + 4u), times (1 + (n + 2) 2u).
    rp, u = 2.0**-10, 2.0**-30
    monkeypatch.setattr(pld_parts, "REL_PAD", rp)
    monkeypatch.setattr(pld_parts, "_U", u)
    h = 2.0**-4
    R, H = REF.mpf, REF.mpf(h)
    q, pe = np.array([0.5, 0.25]), np.array([0.484375, 0.2421875])
    law = pld_parts._grid_from_cells(3, q, pe, h, pessimistic=True)
    want = [R(0)] * 3
    for i, (qi, pi) in enumerate(zip(q.tolist(), pe.tolist(), strict=True)):
        qu = R(qi) * (1 + R(rp))
        wb = min((R(qi) - R(pi) + 2 * R(rp) * (R(qi) + R(pi))) * (1 + R(rp)) / -REF.expm1(-H), qu)
        assert 0 < wb < qu
        want[i] += (qu - wb) * (1 + 4 * R(u))
        want[i + 1] += wb
    assert law.offset == 3 and law.masses.size == 3
    assert max(_rel_err(g, x * (1 + 4 * R(u))) for g, x in zip(law.masses.tolist(), want, strict=True)) < 1e-13
    f = 2.0**-6
    atoms = grid_from_atoms(np.array([5 * h + f]), np.array([0.5]), 0.0, h, pessimistic=True, exact=np.ones(1, bool))
    qu = R(0.5) * (1 + R(rp))
    wb = -REF.expm1(-R(f)) / -REF.expm1(-H) * qu * (1 + R(rp))
    tot = 1 + (1 + 2) * 2 * R(u)
    assert atoms.offset == 5 and atoms.masses.size == 2
    assert _rel_err(atoms.masses[0], (qu - wb) * (1 + 4 * R(u)) * tot) < 1e-13
    assert _rel_err(atoms.masses[1], wb * tot) < 1e-13


def test_pessimistic_laplace_law_merges_its_cells_and_atoms_padded_up(monkeypatch: pytest.MonkeyPatch) -> None:
    # u = 2^-30 (visible): the pessimistic Laplace law is its cells' law plus its atoms' law, times (1 + 2 * 2u)
    # (two laws summed, rounded up); the optimistic factor (1 - 4u) would end 8u = 7e-9 lower.
    u = 2.0**-30
    monkeypatch.setattr(pld_parts, "_U", u)
    cells_seen = _spy(monkeypatch, "_grid_from_cells")
    atoms_seen = _spy(monkeypatch, "grid_from_atoms")
    law = LaplacePart(1.0).grid_law(2.0**-4, pessimistic=True)
    parts = [cells_seen[-1][1], atoms_seen[-1][1]]
    want = [REF.mpf(0)] * law.masses.size
    for g in parts:
        for i, m in enumerate(g.masses.tolist()):
            want[g.offset - law.offset + i] += REF.mpf(m)
    fac = 1 + 4 * REF.mpf(u)
    assert law.offset == min(g.offset for g in parts)
    assert max(_rel_err(g, x * fac) for g, x in zip(law.masses.tolist(), want, strict=True) if x > 0) < 1e-12
    assert law.inf_mass == sum(g.inf_mass for g in parts) * (1 + 4 * u)


def test_laplace_lattice_cells_and_their_slack_are_exactly_as_documented(monkeypatch: pytest.MonkeyPatch) -> None:
    # u = 2^-30 (visible), D = 1, shift = 0.35, h = 0.3 (no edge on an integer ratio, |a0| != |a1|): the cells
    # handed to lattice_from_atoms start at a0 = floor((-D - shift) / h) - 1 and end at a1 = ceil((D - shift) / h) + 1
    # (a1 - a0 cells between the float edges shift + h a), with slack 4u (|shift| + h max(|a0|, |a1|)) + 1e-300.
    u = 2.0**-30
    monkeypatch.setattr(pld_parts, "_U", u)
    seen: list[tuple[int, np.ndarray, np.ndarray, float]] = []
    orig = pld_parts.lattice_from_atoms

    def spy(*args: object, **kwargs: object) -> GridLaw:
        seen.append(kwargs["cells"])  # type: ignore[arg-type]
        law: GridLaw = orig(*args, **kwargs)
        return law

    monkeypatch.setattr(pld_parts, "lattice_from_atoms", spy)
    d, shift, h = 1.0, 0.35, 0.3
    LaplacePart(1.0).lattice_law(h, shift)
    c0, cq, cw, slack = seen[0]
    a0, a1 = math.floor((-d - shift) / h) - 1, math.ceil((d - shift) / h) + 1
    assert (a0, a1) == (-6, 4)
    assert c0 == a0 and cq.size == cw.size == a1 - a0
    want = 4 * REF.mpf(u) * (REF.mpf(shift) + REF.mpf(h) * 6)
    assert _rel_err(slack, want) < 1e-14


def test_laplace_cell_slack_keeps_its_absolute_floor(monkeypatch: pytest.MonkeyPatch) -> None:
    # u = 0 isolates the fixed term of the cells' slack 4u (|shift| + h max(|a0|, |a1|)) + 1e-300: exactly 1e-300.
    monkeypatch.setattr(pld_parts, "_U", 0.0)
    seen: list[float] = []
    orig = pld_parts.lattice_from_atoms

    def spy(*args: object, **kwargs: object) -> GridLaw:
        seen.append(kwargs["cells"][3])  # type: ignore[index]
        law: GridLaw = orig(*args, **kwargs)
        return law

    monkeypatch.setattr(pld_parts, "lattice_from_atoms", spy)
    LaplacePart(1.0).lattice_law(0.3, 0.35)
    assert seen == [1e-300]


def test_lattice_w_of_an_atom_snapped_up_is_its_q(monkeypatch: pytest.MonkeyPatch) -> None:
    # An atom 2^-30 below its label 3/4 (h = 1/4) takes that label by SNAP: w = q e^{min(label - loss, 0)} = q
    # exactly (the gap goes to the slack, not into w); e^{gap} would raise w by ~1e-9.
    seen = _spy(monkeypatch, "_merge_down")
    h = 0.25
    loss, q = np.array([0.75 - 2.0**-30, -0.5]), np.array([0.25, 0.125])
    law = pld_parts.lattice_from_atoms(loss, q, 0.0, h, 0.0, exact=np.ones(2, dtype=bool))
    assert law.slack >= 2.0**-30
    a0, _, w, _, _ = seen[0][0]
    assert a0 == -2 and np.asarray(w).tolist() == [0.125 * math.exp(0.0), 0.0, 0.0, 0.0, 0.0, 0.25]


def test_optimistic_laplace_law_ends_at_its_top_atom(monkeypatch: pytest.MonkeyPatch) -> None:
    # D = 4/3 (b = 3/4), h = 1/16: D / h = 21.3, so the cells end at index 21 (the last cell [21 h, D]) and the atom at
    # D floors to 21 too; the optimistic law ends there, without an empty cell 22 above.
    seen = _spy(monkeypatch, "_merge_down")
    law = LaplacePart(0.75).grid_law(2.0**-4, pessimistic=False)
    a0, q, _, _, _ = seen[-1][0]
    assert a0 + np.asarray(q).size - 1 == 21 == math.floor((1 / 0.75) / 2.0**-4)
    assert law.offset + law.masses.size - 1 == 21 and law.masses[-1] > 0
