"""Fast bites for :mod:`semidp.accountant.pld` (the f-DP composition): the size cap moves mass to +inf
conservatively but only the mass outside the kept window. Issue Step 16 (mutation testing)."""

from __future__ import annotations

import math
from fractions import Fraction

import mpmath
import numpy as np
import pytest
from numpy.typing import NDArray

from semidp.accountant.core.errors import InvalidArgument
from semidp.accountant.pld import grid as pld
from semidp.accountant.profiles.gaussian import gdp_delta_array
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


# --------------------------------------------------------------------------------------------------------------
# The documented error budget of the grid PLD, made visible: with the unit roundoff ``_U`` and the underflow unit
# ``_TINY`` inflated to 1e-4 and 1e-6 (the float arithmetic itself stays exact to 1e-16), every pad of
# ``_GridPLD.delta_index`` moves the result by >= 1e-5 relative, so a pad dropped, flipped or shrunk (or an index
# of the direct window off by one) moves it away from the documented formula evaluated here at 50 digits.
# --------------------------------------------------------------------------------------------------------------

U, TINY = 1e-4, 1e-6
MPX = mpmath.MPContext()
MPX.dps = 50


def _masses(n: int) -> NDArray[np.float64]:
    """n positive masses of different sizes (a deterministic pattern, total about 0.9)."""
    raw = np.array([1.0 + (7 * j % 11) for j in range(n)], dtype=np.float64)
    return np.asarray(raw / raw.sum() * 0.9, dtype=np.float64)


def _documented_delta(g: pld._GridPLD, i: int, tiny: float = TINY, extra_per_mass: float | None = None) -> mpmath.mpf:
    """delta_index(i) as the module documents it: direct window, far-above suffix sums and far-below bound, each
    with its pad, times (1 + rel)(1 + 4u), plus the underflow pad and the mass at +inf (pld.py steps 5 and the
    floating-point error budget). ``extra_per_mass``: the far-above Gaussian extra per unit mass, if not the documented
    delta_mu(D) e^{-D} (1 + 1e-9)."""
    h, mu, off, n = g.h, g.mu, g.offset, len(g.masses)
    m = [MPX.mpf(float(x)) for x in g.masses]
    d = mu * mu / 2 + 11.0 * mu
    d_above, d_below = (max(1.0, d), d) if mu > 0 else (1.0, 0.0)
    ja, jb = math.ceil(d_above / h), math.ceil(d_below / h)
    sum_rel = (2 * n + 8) * U * 1.01
    abs_pad = (g.n_ops + 4 * n + 16) * MPX.mpf(tiny) * 4
    lo, hi = max(i - jb, off), min(i + ja, off + n - 1)
    near = MPX.mpf(0)
    if hi >= lo:
        near = MPX.fsum(m[j - off] * MPX.mpf(float(g.kernel[j - i + jb])) for j in range(lo, hi + 1))
        near *= 1 + (hi - lo + 4) * MPX.mpf(U)
    far = MPX.mpf(0)
    j0 = max(i + ja + 1, off)
    if j0 <= off + n - 1:
        s0 = MPX.fsum(m[j - off] for j in range(j0, off + n))
        t1 = MPX.fsum(m[j - off] * MPX.exp(-MPX.mpf(h) * (j - i)) for j in range(j0, off + n))
        extra = MPX.mpf(0)
        if mu > 0:
            extra = MPX.mpf(float(gdp_delta_array(mu, np.array([d_above]))[0])) * MPX.exp(-d_above) * (1 + 1e-9)
        if extra_per_mass is not None:
            extra = MPX.mpf(extra_per_mass)
        t0 = s0 * (1 + sum_rel)
        far = (t0 - t1 * (1 - sum_rel)) * (1 + 2 * MPX.mpf(U)) + extra * t0
    below = MPX.mpf(0)
    if mu > 0 and i - jb - off > 0:
        pb = min(i - jb - off, n)
        k = MPX.mpf(float(gdp_delta_array(mu, np.array([d_below]))[0]))
        below = MPX.fsum(m[:pb]) * (1 + sum_rel) * k
    total = (near + far + below) * (1 + MPX.mpf(g.rel)) * (1 + 4 * MPX.mpf(U))
    if mu > 0 or off + n - 1 > i:
        total += abs_pad
    if total == 0:
        return MPX.mpf(g.inf_mass)
    return min(total + MPX.mpf(g.inf_mass), MPX.mpf(1))


# 0.05: D = 0.55, the window above is the documented 1; 0.3: D / h = 53.5, the windows are ceil(D / h) = 54 points
@pytest.mark.parametrize("mu", [0.0, 0.05, 0.3, 0.5])
def test_grid_pld_bound_is_the_documented_budget(mu: float, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pld, "_U", U)
    monkeypatch.setattr(pld, "_TINY", TINY)
    h = 2.0**-4
    g = pld._GridPLD(h, mu, -5, _masses(60), 1e-3, 0.01, 1000)
    # the fields the bound is made of (window half-widths D = mu^2/2 + 11 mu, at least 1 above)
    d = mu * mu / 2 + 11.0 * mu
    assert g.j_above == math.ceil((max(1.0, d) if mu > 0 else 1.0) / h)
    assert g.j_below == (math.ceil(d / h) if mu > 0 else 0)
    assert g.sum_rel == pytest.approx((2 * 60 + 8) * U * 1.01, rel=1e-12)
    assert g.abs_pad == pytest.approx((1000 + 4 * 60 + 16) * TINY * 4, rel=1e-12)
    assert g.c_far <= math.exp(-h * (g.j_above + 1)) <= g.c_far * (1 + 1e-15)
    lows = range(-60 - g.j_above, 0, 7) if mu > 0 else range(-30, 0, 7)
    for i in [*lows, 0, 3, 20, 37, 38, 54, 55, 60, 100, 140, 150, 200]:
        got = g.delta_index(i)
        want = _documented_delta(g, i)
        assert abs(MPX.mpf(got) - want) <= 1e-9 * want + 1e-300, (mu, i, got, want)


def test_far_below_bound_is_the_documented_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    # Gaussian part: losses more than D below eps add at most delta_mu(D) (about 1e-27) each. With eps just above
    # the support's top plus D, the direct window holds the top few masses (kernel about 1e-26) and the rest are
    # below it, so the far-below term is about half the bound; the real underflow unit keeps abs_pad (1e-320) out
    monkeypatch.setattr(pld, "_U", U)
    g = pld._GridPLD(2.0**-4, 0.5, -5, _masses(60), 0.0, 0.01, 1000)
    for above_edge in (1, 2, 5, 30, 58, 59, 60, 61, 70):
        i = g.j_below + g.offset + above_edge
        got = g.delta_index(i)
        want = _documented_delta(g, i, tiny=2.0**-1074)
        assert abs(MPX.mpf(got) - want) <= 1e-9 * want, (above_edge, got, want)


def test_grid_pld_bound_holds_for_the_worst_masses_the_budget_allows() -> None:
    # the guarantee: true masses <= masses (1 + rel) (+ underflow); with the worst ones the exact delta (eps = i h)
    # stays below the bound (mu = 0: delta = sum m_j (1 - e^{(i - j) h})_+ + inf_mass)
    h = 2.0**-4
    g = pld._GridPLD(h, 0.0, -5, _masses(60), 1e-3, 0.01, 1000)
    for i in range(-10, 60, 3):
        worst = MPX.fsum(
            MPX.mpf(float(x)) * (1 + MPX.mpf(0.01)) * (1 - MPX.exp(-MPX.mpf(h) * (j - 5 - i)))
            for j, x in enumerate(g.masses)
            if j - 5 > i
        )
        assert worst + MPX.mpf(1e-3) <= g.delta_index(i), i


# --------------------------------------------------------------------------------------------------------------
# _build: the documented relative budget (3a + 4)u per factor of a grid atoms, plus (r + 2)u when a large Gaussian
# part coarsens the grid by r; and the coarsened law itself against the exact composition.
# --------------------------------------------------------------------------------------------------------------


def rr_gauss_delta(eps0: float, k: int, mu: float, eps: float) -> mpmath.mpf:
    """Exact delta(eps) of k-fold pure eps0-DP (randomized response) composed with mu-GDP: the RR loss law under Q
    (loss (k - 2j) eps0 with mass C(k, j) p^(k-j) q^j) against the Gaussian profile [BW18, Thm. 8]."""
    e0 = MPX.mpf(eps0)
    p, q = MPX.exp(e0) / (1 + MPX.exp(e0)), 1 / (1 + MPX.exp(e0))
    m = MPX.mpf(mu)
    out = MPX.mpf(0)
    for j in range(k + 1):
        x = MPX.mpf(eps) - (k - 2 * j) * e0
        gd = MPX.ncdf(-x / m + m / 2) - MPX.exp(x) * MPX.ncdf(-x / m - m / 2)
        out += MPX.binomial(k, j) * p ** (k - j) * q**j * gd
    return out


def test_build_carries_the_documented_relative_budget() -> None:
    f = TradeoffCurve.from_approx_dp(1.0, 0.0)  # two atoms: losses +-1 (padded up), on two grid points
    g3 = TradeoffCurve.from_approx_dp(0.3, 0.0)
    g = pld._build([f, g3, f], 0.0, 2.0**-6, 0.0, 10**6)
    # (3a + 4) u per factor, each times 1.01, the sum times 1.01 (pld.py's stated safety factors)
    assert g.rel == pytest.approx(math.expm1(1.01 * 3 * (3 * 2 + 4) * 2.0**-53 * 1.01), rel=1e-9, abs=0)
    # n_ops: 2 a n per factor (a grid atoms, n the running length before it): grid losses 65, -63 (1 + 128 points)
    # then 20, -19 (129 + 39 points)
    assert g.n_ops == 2 * 2 * 1 + 2 * 2 * 129 + 2 * 2 * 168


@pytest.mark.parametrize(("eps0", "mu", "r"), [(1.0, 2.0, 8), (65 / 64, 2.0, 8), (1.0, 0.5, 2)])
def test_large_gaussian_part_coarsens_the_grid_conservatively(
    eps0: float, mu: float, r: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    # KERNEL_MAX_POINTS 256 forces the coarsening on a 2^-5 grid: span 2 (mu^2 / 2 + 11 mu) is 48 at mu = 2 (r = 8)
    # and 11.25 at mu = 0.5 (r = 2). eps0 = 65/64: the lowest grid loss is -64 (-32 per factor), a multiple of r
    monkeypatch.setattr(pld, "KERNEL_MAX_POINTS", 256)
    f = TradeoffCurve.from_approx_dp(eps0, 0.0)
    h = 2.0**-5
    g = pld._build([f, f], mu, h, 0.0, 10**6)
    assert g.h == r * h
    assert g.rel == pytest.approx(math.expm1(1.01 * (2 * (3 * 2 + 4) + (r + 2)) * 2.0**-53 * 1.01), rel=1e-9, abs=0)
    for eps in (0.0, 0.5, 1.0, 2.0, 4.0, 7.0):
        got = pld.profile([f, f], mu, eps, grid=h)
        exact = rr_gauss_delta(eps0, 2, mu, eps)
        # losses move up by < 2 h (the two factors) + r h (coarsening), eps down by < r h
        loose = rr_gauss_delta(eps0, 2, mu, eps - (2 + 2 * r) * h)
        assert exact <= got <= loose * (1 + 1e-9), (eps, got, exact, loose)


def test_profile_below_the_eps_clamp_is_one() -> None:
    # eps < -1e6 is not indexed on the grid: delta <= 1 is the only (and the exact) answer
    f = TradeoffCurve.from_approx_dp(1.0, 0.0)
    assert pld.profile([f], 0.0, -2e6) == 1.0
    assert pld.profile([f], 0.5, -2e6) == 1.0
    assert float(pld.profile([f], 0.0, np.array([-2e6, 0.5]))[0]) == 1.0


#: A curve whose top loss carries little Q-mass: segments (p, q) = (0.0025, 0.05), (0.1975, 0.6), (0.78, 0.35) and a
#: flat one; grid losses (2^-4) 48, 18, -12.
SKEWED = TradeoffCurve((0.0, 0.0025, 0.2, 0.98, 1.0), (1.0, 0.95, 0.35, 0.0, 0.0))


@pytest.mark.parametrize(
    ("curves", "max_points", "start", "rel_terms"),
    [
        # two factors of (1, 0.2)-DP: grid losses 17, -15, composed mass at 0, 32, 64 of 65 points (total 0.64,
        # 0.36 at +inf); 40 points kept from 25 on (the first heaviest window): the mass at 0 moves up, none above
        ([TradeoffCurve.from_approx_dp(1.0, 0.2)] * 2, 40, 25, [3 * 2 + 4, 3 * 2 + 4]),
        # SKEWED: mass at 0, 30, 60 of 61 points; 32 points kept from 0: the light top atom (0.05) goes to +inf
        ([SKEWED], 32, 0, [3 * 3 + 4]),
    ],
)
def test_size_cap_moves_exactly_the_documented_masses(
    curves: list[TradeoffCurve], max_points: int, start: int, rel_terms: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    # The size cap keeps max_points consecutive grid losses, moves the mass below them up to the first kept point
    # and the mass above them (plus the error 2 err) to +inf. With u inflated to 1e-4 every pad of the cap is
    # visible against its formula (pld.py, the size cap in _build).
    monkeypatch.setattr(pld, "_U", U)
    h = 2.0**-4
    whole = pld._build(curves, 0.0, h, 0.0, 10**6)
    capped = pld._build(curves, 0.0, h, 0.0, max_points)
    m = whole.masses
    size = len(m)
    cs = np.concatenate(([0.0], np.cumsum(m)))
    err = (size + 2) * U * float(cs[size]) * 1.01
    below = float(cs[start]) * (1 + (size + 2) * U * 1.01)
    rel_log = 0.0
    for t in rel_terms:  # accumulated factor by factor, as _build does (the same float)
        rel_log += t * U * 1.01
    above = (float(cs[size] - cs[start + max_points]) + 2 * err) * (1 + math.expm1(rel_log * 1.01) + 2 * U)
    want = m[start : start + max_points].copy()
    want[0] += below
    assert capped.offset == whole.offset + start
    assert np.allclose(capped.masses, want, rtol=1e-12, atol=0)
    assert capped.inf_mass == pytest.approx(whole.inf_mass + above, rel=1e-12, abs=0)
    assert Fraction(capped.inf_mass) >= Fraction(whole.inf_mass) + Fraction(above)  # rounded up, exactly
    assert capped.rel == pytest.approx(math.expm1((rel_log + 2 * U) * 1.01), rel=1e-12, abs=0)


def test_epsilon_doubles_its_bracket_for_a_gaussian_part() -> None:
    # mu = 1 alone: delta at the first upper guess (eps about 10) is about 1e-21, above delta = 1e-25, so the
    # bracket is doubled until it holds; the answer is finite, conservative and within a few grid steps
    eps = pld.epsilon([], 1.0, 1e-25)
    assert math.isfinite(eps)

    def g(x: float) -> mpmath.mpf:
        return MPX.ncdf(-MPX.mpf(x) + 0.5) - MPX.exp(x) * MPX.ncdf(-MPX.mpf(x) - 0.5)

    assert g(eps) <= 1e-25 < g(eps - 0.01), eps


_Q3, _Q4 = 1e-6 * math.exp(-1.15), 1e-6 * math.exp(-1.2)
#: Two light atoms (p = 1e-6, losses -1.2 and -1.15: grid -19, -18) just below a heavy one (loss log(1/3): -17).
LIGHT_LOW = TradeoffCurve((0.0, 0.2, 0.5, 0.500001, 0.500002, 1.0), (1.0, 0.1, _Q3 + _Q4, _Q4, 0.0, 0.0))


@pytest.mark.parametrize(
    ("curves", "cut", "rel_terms"),
    [
        # two factors of pure 10-DP: grid losses 161, -159, composed mass q^2 (2e-9) at 0, 2pq at 320 and p^2 at
        # 640: the lowest 320 points (mass q^2 <= 1e-6) move up to point 320
        ([TradeoffCurve.from_approx_dp(10.0, 0.0)] * 2, 320, [3 * 2 + 4] * 2),
        # LIGHT_LOW: the two light atoms (6e-7 together) move onto the heavy one right above them
        ([LIGHT_LOW], 2, [3 * 4 + 4]),
    ],
)
def test_lower_tail_moves_exactly_the_documented_mass(
    curves: list[TradeoffCurve], cut: int, rel_terms: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    # tail_mass 1e-6 moves the lowest points (total mass <= 1e-6) up to the first point kept, padded by
    # (cut + 2) u (u inflated to 1e-4 to make it visible), and adds 2u to the relative budget
    monkeypatch.setattr(pld, "_U", U)
    h = 2.0**-4
    whole = pld._build(curves, 0.0, h, 0.0, 10**6)
    moved_law = pld._build(curves, 0.0, h, 1e-6, 10**6)
    m = whole.masses
    cs = np.cumsum(m[:-1])
    assert cs[cut - 1] <= 1e-6 < cs[cut]
    moved = float(cs[cut - 1]) * (1 + (cut + 2) * U)
    want = m[cut:].copy()
    want[0] += moved
    assert moved_law.offset == whole.offset + cut
    assert np.allclose(moved_law.masses, want, rtol=1e-12, atol=0)
    rel_log = 0.0
    for t in rel_terms:
        rel_log += t * U * 1.01
    assert moved_law.rel == pytest.approx(math.expm1((rel_log + 2 * U) * 1.01), rel=1e-12, abs=0)


def test_max_points_below_sixteen_is_refused() -> None:
    f = TradeoffCurve.from_approx_dp(1.0, 0.0)
    with pytest.raises(InvalidArgument, match="max_points"):
        pld.profile([f], 0.0, 1.0, max_points=15)
    assert pld.profile([f], 0.0, 1.0, max_points=16) >= 0.0


# --------------------------------------------------------------------------------------------------------------
# Session 32 (mutation sample --sample 2000 --seed 32): the atoms' own profile, the kernel-size threshold, the
# far-above Gaussian extra, the output curve's epsilons and epsilon()'s edge cases, each against the documented rule.
# --------------------------------------------------------------------------------------------------------------


def test_loss_atoms_delta_is_the_documented_padded_sum(monkeypatch: pytest.MonkeyPatch) -> None:
    # LossAtoms.delta: sum_j max(q_j - E p_j + 3u (q_j + E p_j), 0) (1 + (n + 2) u) + inf_mass, E = e^eps rounded
    # down, then one ulp up. With u inflated to 1e-4 every pad moves the result by >= 1e-4 relative; evaluated here
    # at 50 digits from the float E p_j (the product's own rounding, 1e-16, is far below the tolerance).
    monkeypatch.setattr(pld, "_U", U)
    at = pld.LossAtoms((1.0, 0.2, -0.5, -1.0), (0.05, 0.2, 0.3, 0.45), (0.15, 0.25, 0.2, 0.3), 0.02)
    for eps in (-1.0, 0.0, 0.1, 0.3, 0.7, 1.0, 1.2):
        big = pld._exp_down(eps)
        assert MPX.exp(eps) * (1 - MPX.mpf(2.0**-52)) <= MPX.mpf(big) <= MPX.exp(eps)  # e^eps rounded down
        n = len(at.q)
        terms = [
            max(MPX.mpf(q) - MPX.mpf(big * p) + 3 * MPX.mpf(U) * (MPX.mpf(q) + MPX.mpf(big * p)), 0)
            for q, p in zip(at.q, at.p)
        ]
        want = min(MPX.fsum(terms) * (1 + (n + 2) * MPX.mpf(U)) + MPX.mpf(at.inf_mass), 1)
        got = at.delta(eps)
        assert abs(MPX.mpf(got) - want) <= 1e-12 * want, (eps, got, want)
        assert float(at.delta(np.array([eps]))[0]) == got


def test_loss_atoms_delta_is_an_upper_bound_within_a_few_ulps() -> None:
    # the real unit roundoff: never below the exact profile sum (q_j - e^eps p_j)_+ + inf_mass (50 digits), and
    # above it by at most the documented pads: 3u (q + E p) per term, (n + 2) u on the sum, one ulp
    at = pld.LossAtoms((1.0, 0.2, -0.5, -1.0), (0.05, 0.2, 0.3, 0.45), (0.15, 0.25, 0.2, 0.3), 0.02)
    u = MPX.mpf(2.0**-53)
    for eps in (-1.0, 0.0, 0.1, 0.3, 0.7, 1.0, 1.2):
        e = MPX.exp(eps)
        exact = MPX.fsum(max(MPX.mpf(q) - e * MPX.mpf(p), 0) for q, p in zip(at.q, at.p)) + MPX.mpf(at.inf_mass)
        slack = MPX.fsum(3 * u * (MPX.mpf(q) + e * MPX.mpf(p)) for q, p in zip(at.q, at.p)) + 10 * u * exact
        got = MPX.mpf(at.delta(eps))
        assert exact <= got <= exact + slack, (eps, got, exact)


def test_gaussian_kernel_table_is_capped_by_coarsening_at_the_documented_mu() -> None:
    # KERNEL_MAX_POINTS = 2^21 (16 MiB of float64): the table spans 2 (mu^2/2 + 11 mu) / h points, so at the default
    # grid 2^-14 the grid is coarsened from mu^2 + 22 mu > 128, i.e. mu > 4.78 ("mu > ~5" in compose's docstring)
    h = pld._grid_spacing(None)
    assert h == 2.0**-14
    kept = pld._build([], 4.7, h, 0.0, 10**6)
    assert kept.h == h
    assert 2**20 < len(kept.kernel) <= 2**21 + 2  # the table as documented: at most the cap (plus both ends)
    coarse = pld._build([], 4.8, h, 0.0, 10**6)
    assert coarse.h == 2 * h
    assert len(coarse.kernel) <= 2**21 + 2


def test_far_above_gaussian_extra_is_delta_mu_of_d_times_e_to_minus_d(monkeypatch: pytest.MonkeyPatch) -> None:
    # losses more than D = mu^2/2 + 11 mu above eps add at most 1 - e^{-d} + e^{-d} delta_mu(D) each (d >= D):
    # the extra is delta_mu(D) e^{-D} (1 + 1e-9) per unit mass. At mu = 5 (D = 67.5) e^{+D} instead would be 4e1.
    monkeypatch.setattr(pld, "_U", U)
    g = pld._GridPLD(2.0**-4, 5.0, -5, _masses(60), 0.0, 0.01, 1000)
    d = 5.0 * 5.0 / 2 + 55.0
    k = MPX.mpf(float(gdp_delta_array(5.0, np.array([d]))[0]))
    assert k <= MPX.mpf(1e-27)
    want = k * MPX.exp(-d) * (1 + MPX.mpf(1e-9))
    assert abs(MPX.mpf(g.far_above_extra) - want) <= 1e-14 * want
    # and at an eps whose window sees none of the masses, delta is the far-above sum alone, about 0.9 (1 - e^{-d})
    i = g.offset - g.j_above - 10
    want_i = _documented_delta(g, i, tiny=2.0**-1074)
    assert abs(MPX.mpf(g.delta_index(i)) - want_i) <= 1e-12 * want_i


def test_pure_dp_law_has_no_gaussian_terms() -> None:
    # mu = 0: no Gaussian part, so the far-above extra and the far-below factor are exactly 0 (gdp_delta_array at
    # mu = 0 would add its absolute 1e-300 pad per unit mass: needless looseness), the window is [eps, eps + 1]
    g = pld._GridPLD(2.0**-4, 0.0, -5, _masses(60), 0.0, 0.01, 1000)
    assert g.far_above_extra == 0.0 and g.far_below_k == 0.0
    assert g.j_below == 0 and g.j_above == 16


def test_epsilon_is_zero_when_delta_at_zero_meets_the_target_exactly() -> None:
    # epsilon() returns 0 when the bound at eps = 0 is <= delta, including equality (the same float)
    f = TradeoffCurve.from_approx_dp(0.5, 0.0)
    for mu in (0.0, 0.3):
        d0 = pld.profile([f, f], mu, 0.0)
        assert 0.0 < d0 < 1.0
        assert pld.epsilon([f, f], mu, d0) == 0.0
        assert pld.epsilon([f, f], mu, d0 * (1 - 1e-12)) > 0.0


def test_compose_accepts_two_epsilons() -> None:
    # n_eps >= 2 (documented minimum): two epsilons are one of the dense range and one of the reporting range
    f = TradeoffCurve.from_approx_dp(1.0, 0.0)
    g = pld.compose([f, f], n_eps=2)
    assert g.dominates(pld.compose([f, f, f], n_eps=2))
    with pytest.raises(InvalidArgument, match="n_eps"):
        pld.compose([f, f], n_eps=1)


#: Mass 2^-13 at +inf and the rest at loss log(1 - 2^-13), two grid steps of 2^-14 below 0.
NEAR_ZERO_LOW = TradeoffCurve((0.0, 1.0), (1 - 2.0**-13, 0.0))


def _first_index(g: pld._GridPLD, lo: int, level: float) -> int:
    """The smallest grid index i >= lo with delta_index(i) - inf_mass <= level, by a linear scan (the reference for
    compose's bisection)."""
    i = lo
    while g.delta_index(i) - g.inf_mass > level:
        i += 1
    return i


@pytest.mark.parametrize(
    ("curves", "mu", "grid", "n_eps"),
    [
        ([], 6.0, 2.0**-4, 60),  # Gaussian alone, large mu: delta(mu^2/2 + 8.5 mu) is still 1e-17 > 1e-18
        ([], 0.01, 2.0**-8, 30),  # delta(0) = 0.004 <= 1e-2: the reporting range starts at 0
        ([TradeoffCurve.from_approx_dp(1.0, 1e-3)] * 2, 0.5, 2.0**-6, 45),
        ([TradeoffCurve.from_approx_dp(1.0, 1e-3)] * 3, 0.0, 2.0**-6, 45),  # pure DP grid: top and support added
        # pure 1-DP and 1.1-DP: grid losses 17, -15 and 18, -17, so 3 composed grid losses >= 0 (0, 3 and 35): one
        # more than n_eps = 2, not added; all of them at n_eps = 3
        ([TradeoffCurve.from_approx_dp(1.0, 0.0), TradeoffCurve.from_approx_dp(1.1, 0.0)], 0.0, 2.0**-4, 2),
        ([TradeoffCurve.from_approx_dp(1.0, 0.0), TradeoffCurve.from_approx_dp(1.1, 0.0)], 0.0, 2.0**-4, 3),
        ([NEAR_ZERO_LOW], 1e-6, 2.0**-14, 12),
        ([NEAR_ZERO_LOW], 0.0, 2.0**-14, 12),  # pure DP, no finite loss above 0: the top line is at eps = 0
        # all mass at loss 0 and mu = 1e-6: delta(0) is 4e-7, delta(h) below 1e-18; _top_index must reach index 1
        # (ceil((mu^2 / 2 + 9.5 mu) / h) = ceil(0.16) = 1)
        (
            [TradeoffCurve.identity()],
            1e-6,
            2.0**-14,
            12,
        ),  # delta(0) - delta(inf) is one ulp of 1.2e-4 <= 1e-18: cut = 0
    ],
)
def test_compose_evaluates_delta_at_the_documented_epsilons(
    curves: list[TradeoffCurve], mu: float, grid: float, n_eps: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    # compose's output lines: n - n // 3 epsilons equally spaced on [0, cut] (cut: the first grid index where
    # delta - delta(inf) <= 1e-18), n // 3 on [lo, hi] (delta - delta(inf) first <= 1e-2, resp. <= 1e-14), and for
    # mu = 0 the top loss and every grid loss carrying mass (at most n of them); each delta is delta_index there.
    seen: list[tuple[NDArray[np.float64], list[float]]] = []
    original = TradeoffCurve.from_profile.__func__  # type: ignore[attr-defined]

    def record(cls: type[TradeoffCurve], epsilons: NDArray[np.float64], deltas: list[float]) -> TradeoffCurve:
        seen.append((np.asarray(epsilons, dtype=np.float64), list(deltas)))
        return original(cls, epsilons, deltas)  # type: ignore[no-any-return]

    monkeypatch.setattr(TradeoffCurve, "from_profile", classmethod(record))
    pld.compose(curves, mu, grid=grid, n_eps=n_eps)
    assert len(seen) == 1
    eps, deltas = seen[0]
    g = pld._build(curves, mu, grid, 1e-30, 2**23)  # the documented defaults
    cut = _first_index(g, 0, 1e-18)  # DELTA_FLOOR, as documented
    lo = _first_index(g, 0, 1e-2)
    hi = _first_index(g, lo, 1e-14)
    assert 0 <= lo <= hi <= cut
    if mu == 0.01:
        assert lo == 0
    want = np.union1d(
        np.round(np.linspace(0, cut, n_eps - n_eps // 3)).astype(np.int64),
        np.round(np.linspace(lo, hi, n_eps // 3)).astype(np.int64),
    )
    if mu == 0.0:
        support = np.nonzero(g.masses)[0] + g.offset
        support = support[support >= 0]
        want = np.union1d(want, [max(g.top, 0), *(support if len(support) <= n_eps else [])])
    np.testing.assert_array_equal(eps, want * g.h)
    assert deltas == [g.delta_index(int(i)) for i in want]
    assert deltas[-1] - g.inf_mass <= 1e-18


@pytest.mark.parametrize(("n", "atoms"), [(50, 3), (50, 7), (50, 8), (70000, 9), (40000, 12)])
def test_shift_add_is_the_sparse_convolution_in_either_loop(n: int, atoms: int) -> None:
    # out[i] = sum_j w_j masses[i - s_j]: the plain loop (fewer than 8 atoms) and the blocked one (output blocks of
    # 32768 entries; 70000 + 96 entries span three blocks) give exactly the products summed in the order of shifts
    rng = np.random.default_rng(32)
    masses = rng.random(n)
    shifts = [0, *sorted(rng.choice(np.arange(1, 97), size=atoms - 1, replace=False).tolist())]
    weights = rng.random(atoms).tolist()
    got = pld._shift_add(masses, shifts, weights)
    want = np.zeros(n + shifts[-1])
    for k, w in zip(shifts, weights):
        want[k : k + n] += masses * w
    assert len(got) == n + shifts[-1]
    np.testing.assert_array_equal(got, want)


def test_pure_dp_kernel_is_one_minus_e_to_minus_d_padded_by_kernel_rel_pad() -> None:
    # mu = 0: kernel[t] = (1 - e^{-d}) (1 + 1e-12) for d = (t - j_below) h > 0 and exactly 0 for d <= 0; numpy's
    # expm1 is accurate to a few ulps, so the float lies in [exact, exact (1 + 1e-12 + 1e-15)] (50 digits)
    h = 2.0**-4
    g = pld._GridPLD(h, 0.0, -5, _masses(60), 0.0, 0.01, 1000)
    assert len(g.kernel) == g.j_below + g.j_above + 1 == 17
    assert g.kernel[0] == 0.0
    for t in range(1, 17):
        exact = -MPX.expm1(-MPX.mpf(t * h))
        got = MPX.mpf(float(g.kernel[t]))
        assert exact * (1 + MPX.mpf(1e-12)) <= got <= exact * (1 + MPX.mpf(1e-12) + MPX.mpf(1e-15)), (t, got)


#: Two segments: (p, q) = (0.5, 1 - 1e-200) at loss log 2 and (0.5, 1e-200) at loss log(2e-200), about -459.8.
UNDERFLOW_LOW = TradeoffCurve((0.0, 0.5, 1.0), (1.0, 1e-200, 0.0))


def test_zero_tail_mass_moves_nothing_even_where_masses_underflow() -> None:
    # tail_mass = 0: no lower tail is moved, not even the leading grid points whose mass underflowed to 0.0
    # (1e-200 squared), and the relative budget is the two factors' (3a + 4) u only, without the move's 2u
    g = pld._build([UNDERFLOW_LOW, UNDERFLOW_LOW], 0.0, 2.0**-4, 0.0, 10**6)
    assert g.masses[0] == 0.0  # the product 1e-400 underflowed
    assert g.offset == 2 * math.ceil(math.log(2e-200) * 16) == -14714
    assert g.rel == pytest.approx(math.expm1(1.01 * 2 * (3 * 2 + 4) * 2.0**-53 * 1.01), rel=1e-9, abs=0)


def test_profile_far_below_zero_is_exactly_one() -> None:
    # delta(eps) >= Q(all) - e^eps P(all) = 1 - e^eps: at eps = -1e6 (the clamp itself) and -800 every sound bound is
    # the float 1.0, on both sides of the clamp's test
    f = TradeoffCurve.from_approx_dp(1.0, 0.1)
    for mu in (0.0, 0.5):
        assert pld.profile([f, f], mu, -800.0) == 1.0
        assert pld.profile([f, f], mu, -1e6) == 1.0
        assert pld.profile([f, f], mu, -1e6 - 1.0) == 1.0


def test_public_defaults_are_the_documented_ones() -> None:
    # the grid 1e-4 (2^-14), 1200 output epsilons, the lower tail 1e-30, the dense array cap 2^23 points (64 MiB)
    import inspect

    for fn in (pld.compose, pld.profile, pld.epsilon):
        params = inspect.signature(fn).parameters
        assert params["grid"].default is None
        assert params["tail_mass"].default == 1e-30
        assert params["max_points"].default == 2**23
    assert inspect.signature(pld.compose).parameters["n_eps"].default == 1200
    assert pld._grid_spacing(None) == 2.0**-14


#: Q-mass 1 - 1e-7 at loss 0.04 and 1e-7 at loss -0.02 (grid 2^-4: adjacent points 1 and 0), then a flat segment.
TWO_POINTS = TradeoffCurve(
    (0.0, (1 - 1e-7) * math.exp(-0.04), (1 - 1e-7) * math.exp(-0.04) + 1e-7 * math.exp(0.02), 1.0),
    (1.0, 1e-7, 0.0, 0.0),
)


def test_lower_tail_of_a_two_point_law_is_moved() -> None:
    # the lower tail is moved whenever there is a point above it to move it to, also with only two points
    whole = pld._build([TWO_POINTS], 0.0, 2.0**-4, 0.0, 10**6)
    assert whole.offset == 0 and len(whole.masses) == 2 and whole.masses[0] == pytest.approx(1e-7, rel=1e-9)
    moved = pld._build([TWO_POINTS], 0.0, 2.0**-4, 1e-6, 10**6)
    assert moved.offset == 1 and len(moved.masses) == 1
    assert moved.masses[0] >= whole.masses[0] + whole.masses[1]


@pytest.mark.parametrize("curves", [[SKEWED], [TradeoffCurve.from_approx_dp(1.0, 0.2)] * 2])
def test_size_cap_at_exactly_max_points_changes_nothing(curves: list[TradeoffCurve]) -> None:
    # an array of exactly max_points points is kept as it is: no mass moved to +inf, no 2u added to the budget
    whole = pld._build(curves, 0.0, 2.0**-4, 0.0, 10**6)
    same = pld._build(curves, 0.0, 2.0**-4, 0.0, len(whole.masses))
    assert same.offset == whole.offset and same.inf_mass == whole.inf_mass and same.rel == whole.rel
    np.testing.assert_array_equal(same.masses, whole.masses)


def test_loss_atoms_round_each_loss_up_by_the_documented_pad() -> None:
    # loss_atoms: L = log(q / p) of the exact float differences, computed as math.log of the ratio rounded up, plus
    # LOSS_PAD (1 + |L|) = 1e-13 (1 + |L|): at or above the exact log (50 digits) and above it by at most that pad
    # plus a few ulps; exactly 0.0 when q = p; in mpmath (rounded up, within 2 ulps) when q / p exceeds 2^1000
    rng = np.random.default_rng(5)
    for _ in range(40):
        a = np.sort(rng.random(5))
        alphas = (0.0, *a.tolist(), 1.0)
        slopes = np.sort(rng.exponential(2.0, 6))[::-1]  # decreasing |slope|: a convex curve
        drops = slopes * np.diff(alphas)
        betas = [1.0]
        for dv in drops / drops.sum():
            betas.append(max(betas[-1] - float(dv), 0.0))
        betas[-1] = 0.0
        curve = TradeoffCurve(alphas, tuple(betas))
        at = pld.loss_atoms(curve)
        kept = [j for j in range(len(alphas) - 1) if Fraction(betas[j]) != Fraction(betas[j + 1])]
        assert len(at.loss) == len(kept)
        for loss, j in zip(at.loss, kept):
            q = Fraction(betas[j]) - Fraction(betas[j + 1])
            p = Fraction(alphas[j + 1]) - Fraction(alphas[j])
            exact = MPX.log(MPX.mpf(q.numerator) / q.denominator) - MPX.log(MPX.mpf(p.numerator) / p.denominator)
            pad = MPX.mpf(1e-13) * (1 + abs(exact))
            assert exact + pad * (1 - MPX.mpf(1e-3)) <= loss <= exact + pad * (1 + MPX.mpf(1e-3)) + 1e-15, (j, loss)
    assert pld.loss_atoms(TradeoffCurve((0.0, 0.5, 1.0), (1.0, 0.5, 0.0))).loss == (0.0, 0.0)
    # q / p = 0.5 / p on both sides of 2^1000: the float branch (padded) below, mpmath (within 2 ulps) from it on
    for p_small in (5e-324, 1e-310, 0.75 * 2.0**-1001, 2.0**-1001, 0.75 * 2.0**-1000):  # 2^-1001: q / p = 2^1000
        at = pld.loss_atoms(TradeoffCurve((0.0, p_small, 1.0), (1.0, 0.5, 0.0)))
        exact = MPX.log(MPX.mpf(0.5) / MPX.mpf(p_small))
        if Fraction(0.5) / Fraction(p_small) < 2**1000:
            pad = MPX.mpf(1e-13) * (1 + exact)
            assert exact + pad * (1 - MPX.mpf(1e-3)) <= at.loss[0] <= exact + pad * (1 + MPX.mpf(1e-3)), p_small
        else:
            assert exact <= at.loss[0] <= exact * (1 + 2 * MPX.mpf(2.0**-53)), (p_small, at.loss[0])


def test_underflow_pad_is_four_units_of_2_to_minus_1074_per_operation() -> None:
    # abs_pad = (n_ops + 4 n + 16) 2^-1074 4 (the real subnormal unit; a smaller unit leaves underflow uncovered)
    g = pld._GridPLD(2.0**-4, 0.0, -5, _masses(60), 0.0, 0.01, 1000)
    assert g.abs_pad == (1000 + 4 * 60 + 16) * 4 * 5e-324 > 0.0


def test_profile_clamps_eps_at_one_million() -> None:
    # eps above 1e6 is evaluated at 1e6 (delta is non-increasing: conservative), eps below -1e6 reads 1; a law with
    # its losses around 1e6 (grid 2^-4) shows where the clamp sits
    h = 2.0**-4
    g = pld._GridPLD(h, 0.0, 16_000_000 - 30, _masses(60), 0.0, 0.0, 1000)
    at_clamp = g.delta_index(16_000_000)
    assert pld._delta_at(g, 1e6) == at_clamp == pld._delta_at(g, 1e6 + 1.0) == pld._delta_at(g, 1e300)
    assert pld._delta_at(g, 1e6 - 1.0) == g.delta_index(16_000_000 - 16) > at_clamp > 0.0


def test_a_grid_too_fine_for_a_parts_losses_is_refused_before_allocating(monkeypatch: pytest.MonkeyPatch) -> None:
    # one convolution may produce at most max(CONVOLUTION_MAX_POINTS, 2 max_points) points (2^25 by default: a
    # grid of 1e-9 for pure 1-DP would otherwise allocate 16 GiB); the limit is lowered here to keep arrays small
    f = TradeoffCurve.from_approx_dp(1.0, 0.0)
    # the finest grid is 2^-25: the direct window's kernel table alone has 1 / h points (1e-9: 2^30, 8 GiB)
    assert pld._grid_spacing(2.0**-25) == 2.0**-25
    for fine in (2.0**-25 * (1 - 2.0**-52), 1e-9, 1e-300):
        with pytest.raises(InvalidArgument, match=r"grid=.*2\^-25"):
            pld._grid_spacing(fine)
        with pytest.raises(InvalidArgument, match=r"grid=.*2\^-25"):
            pld.profile([f], 0.0, 0.5, grid=fine)
    monkeypatch.setattr(pld, "CONVOLUTION_MAX_POINTS", 10_000)
    h = 2.0**-12
    # span + 1 points of one part: 2.8 / h = 11469 fits 2 max_points = 12000, 2.0 / h = 16384 does not
    assert pld.profile([TradeoffCurve.from_approx_dp(1.4, 0.0)], 0.0, 1.0, grid=h, max_points=6000) > 0.0
    with pytest.raises(InvalidArgument, match=r"curves\[1\]"):
        pld.profile([f, TradeoffCurve.from_approx_dp(2.0, 0.0)], 0.0, 1.0, grid=h, max_points=6000)
    with pytest.raises(InvalidArgument, match=r"curves\[0\]"):
        pld.profile([TradeoffCurve.from_approx_dp(2.0, 0.0)], 0.0, 1.0, grid=h, max_points=6000)
    assert pld.profile([f], 0.0, 1.0, grid=h, max_points=16) > 0.0  # 8193 points <= 10000
    with pytest.raises(InvalidArgument, match=r"curves\[0\].*10650 grid points .*at most 10000"):
        pld.profile([TradeoffCurve.from_approx_dp(1.3, 0.0)], 0.0, 1.0, grid=h, max_points=16)  # 10650 > 10000
    # the boundary: 1 + 2 k points for pure (k h)-DP (grid losses k + 1 and 1 - k) fit a limit of exactly 1 + 2 k
    k = 3000
    monkeypatch.setattr(pld, "CONVOLUTION_MAX_POINTS", 1 + 2 * k)
    assert pld.profile([TradeoffCurve.from_approx_dp(k * h, 0.0)], 0.0, 1.0, grid=h, max_points=16) > 0.0
    monkeypatch.setattr(pld, "CONVOLUTION_MAX_POINTS", 2 * k)
    with pytest.raises(InvalidArgument, match=r"curves\[0\].*6001 grid points .*at most 6000"):
        pld.profile([TradeoffCurve.from_approx_dp(k * h, 0.0)], 0.0, 1.0, grid=h, max_points=16)


@pytest.mark.parametrize(
    ("loss", "p", "q", "name"),
    [
        ((0.0,), (1.0, 1.0), (1.0,), "p"),  # p alone longer
        ((0.0,), (1.0,), (1.0, 1.0), "q"),  # q alone longer
        ((0.0, 1.0), (1.0,), (1.0,), "loss"),
        ((0.0,), (float("nan"),), (1.0,), "p"),
        ((0.0,), (1.0,), (-0.0 - 1e-300,), "q"),
        ((float("nan"),), (1.0,), (1.0,), "loss"),
    ],
)
def test_loss_atoms_refuse_mismatched_or_invalid_fields(
    loss: tuple[float, ...], p: tuple[float, ...], q: tuple[float, ...], name: str
) -> None:
    with pytest.raises(InvalidArgument, match=name):
        pld.LossAtoms(loss, p, q, 0.0)
    with pytest.raises(InvalidArgument, match="inf_mass"):
        pld.LossAtoms((0.0,), (1.0,), (1.0,), 1.5)  # a probability: at most 1
    assert pld.LossAtoms((0.0,), (1.0,), (1.0,), 1.0).inf_mass == 1.0


def test_delta_index_is_stepped_up_above_its_float_sum() -> None:
    # the bound's last step is one ulp *up*: with finite mass possibly above eps (top > i) it exceeds the mass at
    # +inf and the underflow allowance abs_pad, even where every finite term is 0 (the mass sits at eps itself)
    g = pld._GridPLD(2.0**-4, 0.0, 0, np.array([0.5, 0.0, 0.0]), 0.25, 0.0, 10)
    assert g.delta_index(0) == math.nextafter(g.abs_pad + 0.25, math.inf) > 0.25
    g0 = pld._GridPLD(2.0**-4, 0.0, 0, np.array([0.5, 0.0, 0.0]), 0.0, 0.0, 10)
    assert g0.delta_index(0) == math.nextafter(g0.abs_pad, math.inf) > g0.abs_pad > 0.0


@pytest.mark.parametrize("mu", [0.0, 0.5])
def test_epsilon_returns_the_grid_point_whose_delta_equals_the_target(mu: float) -> None:
    # epsilon(d) is the smallest grid eps with delta(eps) <= d: at d = delta(k h) exactly that is k h (delta is
    # strictly decreasing here), not one step further
    f = TradeoffCurve.from_approx_dp(0.5, 0.0)
    h = 2.0**-6
    for k in (1, 3, 17, 40, 63):
        d = pld.profile([f, f], mu, k * h, grid=h)
        assert pld.profile([f, f], mu, (k - 1) * h, grid=h) > d
        assert pld.epsilon([f, f], mu, d, grid=h) == k * h, (mu, k)


@pytest.mark.parametrize("mu", [0.0, 0.5])
def test_first_below_returns_the_index_whose_excess_equals_the_level(mu: float) -> None:
    # _first_below(lo, hi, level) is the smallest i in [lo, hi] with delta(i) - delta(inf) <= level: at a level equal
    # to that excess at index k (delta strictly decreasing there) it is k, also when the search starts at k
    g = pld._build([TradeoffCurve.from_approx_dp(1.0, 1e-3)] * 2, mu, 2.0**-6, 1e-30, 2**23)
    top = pld._top_index(g)
    for k in (1, 9, 40, 100):
        level = g.delta_index(k) - g.inf_mass
        assert g.delta_index(k - 1) - g.inf_mass > level > 0.0
        assert pld._first_below(g, 0, top, level) == k, (mu, k)
        assert pld._first_below(g, k, top, level) == k, (mu, k)


def test_loss_atoms_are_frozen_and_slotted() -> None:
    # a value object: fields cannot be reassigned (its delta would no longer match loss_atoms' rounding) and it has
    # no per-instance __dict__
    import dataclasses

    at = pld.LossAtoms((0.0,), (1.0,), (1.0,), 0.0)
    with pytest.raises(dataclasses.FrozenInstanceError):
        at.inf_mass = 0.5  # type: ignore[misc]
    assert not hasattr(at, "__dict__")
    # zero masses are allowed (finite and >= 0, as documented)
    assert pld.LossAtoms((0.0,), (0.0,), (0.0,), 1.0).delta(0.0) == 1.0


def test_epsilon_doubles_a_bracket_that_starts_at_index_one() -> None:
    # grid 1 and mu = 0.1 alone: _top_index is 1 (ceil(0.955)), where delta is 1.2e-25 > 1e-25; the bracket grows
    # to 2 * 1 + 1 = 3 and the answer is 2 (delta 4e-91)
    g = pld._build([], 0.1, 1.0, 1e-30, 2**23)
    assert pld._top_index(g) == 1 and g.delta_index(1) > 1e-25 >= g.delta_index(2)
    assert pld.epsilon([], 0.1, 1e-25, grid=1.0) == 2.0


def test_composed_mass_at_infinity_is_the_exact_product_rounded_up() -> None:
    # 1 - (1 - m_1)(1 - m_2)(1 - m_3) in Fractions, rounded up once per part (never down: the mass at +inf is part of
    # every delta)
    ms = (0.1, 0.2, 1e-7)
    g = pld._build([TradeoffCurve.from_approx_dp(1.0, m) for m in ms], 0.0, 2.0**-4, 0.0, 10**6)
    keep = Fraction(1)
    for m in ms:
        keep *= 1 - Fraction(pld.loss_atoms(TradeoffCurve.from_approx_dp(1.0, m)).inf_mass)
    exact = 1 - keep
    assert Fraction(g.inf_mass) >= exact
    assert g.inf_mass <= math.nextafter(math.nextafter(float(exact), math.inf), math.inf)


def test_gaussian_part_without_coarsening_adds_no_rebinning_budget() -> None:
    # mu = 0.5 on a 2^-5 grid: the kernel table (360 points) needs no coarsening, so the relative budget is the two
    # factors' (3a + 4) u only, not (r + 2) u more for a rebinning by r = 1
    f = TradeoffCurve.from_approx_dp(1.0, 0.0)
    g = pld._build([f, f], 0.5, 2.0**-5, 0.0, 10**6)
    assert g.h == 2.0**-5
    assert g.rel == pytest.approx(math.expm1(1.01 * 2 * (3 * 2 + 4) * 2.0**-53 * 1.01), rel=1e-9, abs=0)


def test_epsilon_is_infinite_when_no_grid_eps_reaches_delta() -> None:
    # with a Gaussian part every bound is at least its absolute pad (1e-300 per unit mass): delta = 0 is never reached,
    # and after 64 doublings of the bracket epsilon reports +inf (not a finite or negative number)
    assert pld.epsilon([], 0.5, 0.0) == math.inf
    assert pld.epsilon([TradeoffCurve.from_approx_dp(1.0, 0.0)], 0.5, 1e-320) == math.inf


def test_grid_spacing_is_the_largest_power_of_two_not_above_the_grid() -> None:
    # just below 2^-14, log2 rounds to -14 exactly: the guard loop halves the too-large first guess once
    for g, h in (
        (2.0**-14 * (1 - 2.0**-53), 2.0**-15),
        (2.0**-14, 2.0**-14),
        (1e-4, 2.0**-14),
        (0.75, 0.5),
        (1.0, 1.0),
    ):
        assert pld._grid_spacing(g) == h, g


def test_tail_mass_above_one_millionth_is_refused() -> None:
    f = TradeoffCurve.from_approx_dp(1.0, 0.0)
    assert pld.profile([f], 0.0, 1.0, tail_mass=1e-6) >= 0.0
    with pytest.raises(InvalidArgument, match="tail_mass"):
        pld.profile([f], 0.0, 1.0, tail_mass=2e-6)


def test_kernel_table_of_exactly_the_cap_is_not_coarsened() -> None:
    # mu = 4.7797338380595: the span 2 (mu^2/2 + 11 mu) is exactly 128.0 = 2^21 h at h = 2^-14, so the table has
    # 2^21 + 1 points (both ends) and the grid is kept: only a span strictly above the cap coarsens it
    mu = 4.7797338380595
    assert 2 * (mu * mu / 2 + 11.0 * mu) == 128.0
    g = pld._build([], mu, 2.0**-14, 0.0, 10**6)
    assert g.h == 2.0**-14 and len(g.kernel) == 2**21 + 1


def test_loss_atoms_round_p_masses_down_and_q_masses_up_exactly() -> None:
    """Each atom's P-mass is the exact difference of the curve's alphas rounded down, its Q-mass the betas'
    rounded up (a larger P-mass would lower delta(eps) = sum q - e^eps sum p): at (0.3, 1e-20)-DP the second
    P-difference, 0.9999999999999999 - 0.425557483188341, is not a float (session 32's grid survivor 245:18)."""
    import math as _m
    from fractions import Fraction as _F

    from semidp.accountant.pld.grid import loss_atoms
    from semidp.accountant.profiles.tradeoff import TradeoffCurve

    c = TradeoffCurve.from_approx_dp(0.3, 1e-20)
    at = loss_atoms(c)
    a, b = c.alphas, c.betas
    seg = [j for j in range(len(a) - 1) if _F(b[j]) != _F(b[j + 1])]
    assert len(seg) == len(at.p) == len(at.q)
    inexact = 0
    for k, j in enumerate(seg):
        p, q = _F(a[j + 1]) - _F(a[j]), _F(b[j]) - _F(b[j + 1])
        assert _F(at.p[k]) <= p < _F(_m.nextafter(at.p[k], _m.inf))
        assert _F(_m.nextafter(at.q[k], -_m.inf)) < q <= _F(at.q[k])
        inexact += _F(at.p[k]) != p
    assert inexact >= 1  # the case where the direction matters is present


# --------------------------------------------------------------------------------------------------------------
# Session 33 (the rest of the seed-32 sample): the far-above extra's sign and epsilon()'s first bracket end.
# --------------------------------------------------------------------------------------------------------------


def test_far_above_term_adds_the_gaussian_extra_times_the_suffix_sum(monkeypatch: pytest.MonkeyPatch) -> None:
    # losses d >= D above eps add 1 - e^{-d} + e^{-d} delta_mu(d) each: the last part is bounded by far_above_extra
    # (delta_mu(D) e^{-D}, 1e-57 at mu = 5: invisible to floats) times the suffix sum S0 (0.9 here), and is *added*.
    # A stand-in extra of 1/32 per unit mass makes its sign and its factor visible: the window sees no mass, so delta
    # is the far-above term alone, about 0.93 + 0.03 (below the cap 1)
    monkeypatch.setattr(pld, "_U", U)
    g = pld._GridPLD(2.0**-4, 5.0, -5, _masses(60), 0.0, 0.01, 1000)
    g.far_above_extra = 1 / 32
    for i in (g.offset - g.j_above - 10, g.offset - g.j_above - 1):
        want = _documented_delta(g, i, tiny=2.0**-1074, extra_per_mass=1 / 32)
        assert 0.95 < want < 0.99
        assert abs(MPX.mpf(g.delta_index(i)) - want) <= 1e-12 * want, i


#: A curve with a light atom (Q-mass 1e-9) at loss 4.5, a heavy one (0.99) at 1.5 and the rest at -4.36: grid indices
#: 5, 2 and -4 at h = 1 (segments listed by decreasing loss).
_QL, _QH = 1e-9, 0.99
_PL, _PH = _QL * math.exp(-4.5), _QH * math.exp(-1.5)
HEAVY_BELOW_LIGHT = TradeoffCurve((0.0, _PL, _PL + _PH, 1.0), (1.0, 1 - _QL, 1 - _QL - _QH, 0.0))


def test_epsilon_starts_its_bracket_at_the_documented_top_index() -> None:
    # epsilon(d) is the smallest grid eps with delta(eps) <= d. Where delta_index is not monotone -- a mass more than
    # D = mu^2/2 + 11 mu below eps counts delta_mu(D), more than the kernel's delta_mu(jb h) one step earlier -- the
    # answer depends on the bracket: mu = 2.1 on grid 1 has D = 25.3, jb = 26, and the heavy atom (grid 2) is exactly
    # jb below eps = 28, the one index whose delta (1e-30) is below the plateau 3e-29 all heavier indices reach.
    # _top_index is the top (5, the light atom) plus ceil((mu^2/2 + 9.5 mu) / h) = 23: 28, so epsilon finds it; a
    # first bracket end past 28 (mu^2 instead of mu^2/2) sees only the plateau and returns +inf.
    mu, h, d = 2.1, 1.0, 1e-29
    g = pld._build([HEAVY_BELOW_LIGHT], mu, h, 1e-30, 2**23)
    assert g.offset == -4 and g.top == 5 and g.masses[6] == pytest.approx(_QH, rel=1e-12) and g.inf_mass == 0.0
    assert pld._top_index(g) == 5 + math.ceil((mu * mu / 2 + 9.5 * mu) / h) == 28
    below = [i for i in range(0, 80) if g.delta_index(i) <= d]
    assert below == [28]
    assert pld.epsilon([HEAVY_BELOW_LIGHT], mu, d, grid=h) == 28.0


#: No privacy at all (f = 0): every outcome identifies the dataset, all Q-mass at loss +inf.
NO_PRIVACY = TradeoffCurve((0.0, 1.0), (0.0, 0.0))


def test_a_part_with_all_its_mass_at_infinity_leaves_a_one_point_law(monkeypatch: pytest.MonkeyPatch) -> None:
    # after a part without finite atoms the running law is one zero mass (delta = 1 everywhere), so the next part's
    # size check sees n = 1, as for the first part: pure (k h)-DP needs 1 + 2 k points, which fit a limit of 1 + 2 k
    # and do not fit 2 k (a longer or empty law would move the boundary by a point: a refusal or an acceptance more)
    k, h = 3000, 2.0**-12
    pure = TradeoffCurve.from_approx_dp(k * h, 0.0)
    assert pld.loss_atoms(NO_PRIVACY) == pld.LossAtoms((), (), (), 1.0)
    monkeypatch.setattr(pld, "CONVOLUTION_MAX_POINTS", 1 + 2 * k)
    assert pld.profile([NO_PRIVACY, pure], 0.0, 1.0, grid=h, max_points=16) == 1.0
    monkeypatch.setattr(pld, "CONVOLUTION_MAX_POINTS", 2 * k)
    with pytest.raises(InvalidArgument, match=r"curves\[1\].*6001 grid points .*at most 6000"):
        pld.profile([NO_PRIVACY, pure], 0.0, 1.0, grid=h, max_points=16)


def test_loss_atoms_round_the_mass_at_infinity_up_exactly() -> None:
    # 1 - f(0) in Fractions, rounded up (a smaller mass at +inf lowers every delta): with f(0) = 0.1 (the float
    # 0.1000000000000000055...) the difference 0.8999999999999999944... is not a float, so the direction shows
    for b0 in (0.1, 0.3, 1e-20):
        at = pld.loss_atoms(TradeoffCurve((0.0, 1.0), (b0, 0.0)))
        exact = 1 - Fraction(b0)
        assert Fraction(math.nextafter(at.inf_mass, -math.inf)) < exact < Fraction(at.inf_mass), b0


def test_far_above_factor_is_rounded_down(monkeypatch: pytest.MonkeyPatch) -> None:
    # below the whole support (eps more than the window below the lowest loss) the far-above sum uses e^{-h shift},
    # shift = offset - i >= j_above + 1, and the ratio e^{-h} of its suffix sum S1, both rounded *down* (a larger
    # factor lowers S0 - e^{-h shift} S1).
    # Directed rounding made visible: down() and up() move by 1e-6 relative instead of an ulp, so the documented
    # bound ((S0 (1 + s) - c S1 (1 - s)) (1 + 2u)) (1 + rel) (1 + 4u) + abs_pad is pinned to 1e-9 with
    # c = e^{-h shift} (1 - 1e-6) and S1 = sum m_t r^t, r = e^{-h} (1 - 1e-6)
    bias = 1e-6
    monkeypatch.setattr(pld, "down", lambda x: float(x) * (1 - bias))
    monkeypatch.setattr(pld, "up", lambda x: float(x) * (1 + bias))
    h, off = 2.0**-4, 40
    m = _masses(12)
    g = pld._GridPLD(h, 0.0, off, m, 0.0, 0.0, 10)
    u = 2.0**-53
    for i in (off - g.j_above - 1, off - g.j_above - 2, off - g.j_above - 9, -30):
        shift = off - i
        assert shift >= g.j_above + 1  # j_above + 1: the precomputed c_far, rounded down the same way
        c = MPX.exp(-MPX.mpf(h) * shift) * (1 - MPX.mpf(bias))
        r = MPX.exp(-MPX.mpf(h)) * (1 - MPX.mpf(bias))
        s0 = MPX.fsum(MPX.mpf(float(x)) for x in m)
        s1 = MPX.fsum(MPX.mpf(float(x)) * r**t for t, x in enumerate(m))
        far = (s0 * (1 + MPX.mpf(g.sum_rel)) - c * s1 * (1 - MPX.mpf(g.sum_rel))) * (1 + 2 * MPX.mpf(u))
        want = far * (1 + 4 * MPX.mpf(u)) + MPX.mpf(g.abs_pad)
        assert abs(MPX.mpf(g.delta_index(i)) - want) <= 1e-9 * want, i


def _heavy_and_light(loss_heavy: float, loss_light: float, q_light: float) -> TradeoffCurve:
    """A curve with a heavy atom (Q-mass 0.9) at ``loss_heavy``, a light one above it and the rest (about 0.1) at a
    negative loss."""
    p_light, p_heavy = q_light * math.exp(-loss_light), 0.9 * math.exp(-loss_heavy)
    return TradeoffCurve((0.0, p_light, p_light + p_heavy, 1.0), (1.0, 1 - q_light, 1 - q_light - 0.9, 0.0))


@pytest.mark.parametrize(
    ("mu", "h", "curve", "d", "first", "gap"),
    [
        # heavy atom on grid 2, light (0.01) on grid 6, mu = 1.2, h = 1/8: jb = 112, delta <= 2e-29 at index 114
        # (the heavy atom 112 below), not at 115 (2.1e-29: it left the window), and again from 116 on
        (1.2, 0.125, _heavy_and_light(0.1875, 0.6875, 0.01), 2.0e-29, 114, 115),
        # heavy atom on grid 1, light (1e-4) on grid 8, mu = 2.1, h = 1/4: jb = 102, delta <= 3.2e-29 at 103, not at
        # 104 (3.3e-29), again from 105 on
        (2.1, 0.25, _heavy_and_light(0.125, 1.875, 1e-4), 3.2e-29, 103, 104),
    ],
)
def test_epsilon_is_the_smallest_grid_eps_where_delta_is_not_monotone(
    mu: float, h: float, curve: TradeoffCurve, d: float, first: int, gap: int
) -> None:
    # epsilon(d) is documented as the smallest grid eps with delta(eps) <= d. delta_index is not monotone where an
    # atom leaves the direct window (more than D = mu^2/2 + 11 mu below eps it counts delta_mu(D), more than the
    # kernel's delta_mu(jb h) one step before), so which grid point bisection finds depends on epsilon's bracket
    # (2 hi + 1 from _top_index): here it finds the smallest, where a bracket grown as 2 hi, 2 hi + 2 or 3 hi + 1 finds
    # the next run of indices (two grid steps looser; these two cases were found by a search over such curves)
    g = pld._build([curve], mu, h, 1e-30, 2**23)
    top = pld._top_index(g)
    below = [i for i in range(0, 4 * top + 10) if g.delta_index(i) <= d]
    assert below[:3] == [first, gap + 1, gap + 2] and below[-1] == 4 * top + 9
    assert pld.epsilon([curve], mu, d, grid=h) == first * h


def test_mass_moved_to_infinity_by_the_size_cap_keeps_it_at_most_one() -> None:
    # two parts of (1, 1 - 1e-9)-DP: the mass at +inf is 1 - 1e-18, rounded up to 1.0; the size cap (16 points) then
    # moves the mass above its window (and its pad) to +inf, where the total stays capped at exactly 1.0 (a delta
    # above 1 is no probability: from_profile refuses it); the composition is the trivial curve f = 0
    f = TradeoffCurve.from_approx_dp(1.0, 1 - 1e-9)
    g = pld._build([f, f], 0.0, 2.0**-4, 0.0, 16)
    assert g.inf_mass == 1.0 and 0.0 < float(g.masses.sum()) < 1e-17
    assert g.delta_index(g.top + 10) == 1.0
    assert pld.compose([f, f], 0.0, grid=2.0**-4, max_points=16) == TradeoffCurve((0.0, 1.0), (0.0, 0.0))


def test_compose_shortcut_needs_every_finite_loss_at_or_below_zero() -> None:
    # pure 0.03-DP on a grid of 1/16: its losses +-0.03 round up to grid 1 and 0, so delta(0) > 0; the identity
    # shortcut (perfect privacy) is only for a top loss <= 0 (it would be optimistic here)
    f = TradeoffCurve.from_approx_dp(0.03, 0.0)
    g = pld._build([f], 0.0, 2.0**-4, 1e-30, 2**23)
    assert g.top == 1 and g.inf_mass == 0.0
    exact0 = (math.exp(0.03) - 1) / (math.exp(0.03) + 1)  # delta(0) of pure 0.03-DP
    got = pld.compose([f], 0.0, grid=2.0**-4)
    assert got != TradeoffCurve.identity()
    assert got.privacy_profile(0.0) >= exact0


def test_curves_must_be_a_sequence_of_tradeoff_curves() -> None:
    # a single curve, an iterator, a number or None is refused with an InvalidArgument naming curves (never a
    # TypeError from list(), never an iterator silently consumed)
    f = TradeoffCurve.from_approx_dp(1.0, 0.0)
    for bad in (f, iter([f]), 5, None):
        with pytest.raises(InvalidArgument, match="curves"):
            pld.profile(bad, 0.0, 1.0)  # type: ignore[call-overload]
    assert pld.profile((f,), 0.0, 1.0) == pld.profile([f], 0.0, 1.0)
