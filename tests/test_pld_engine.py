"""Tests for accountant.pld.engine / accountant.pld.parts: the certified PLD bracket.

Every check is one-sided against an independent reference: ``lower <= truth <= upper``.
References: the GDP closed form (k Gaussians with sigma are exactly mu = sqrt(k)/sigma GDP
[DRS22, Cor. 3.3]; certified interval ``accountant.profiles.gaussian.delta_interval``), the binomial
closed form of k-fold pure DP / randomized response [KOV15, Thm. 3.3] in mpmath, mpmath brute
force over the discrete Gaussian pmf, the exact single discrete Gaussian profile [CKS20, Thm. 7]
(``accountant.profiles.discrete_gaussian_dp``), and Google's dp_accounting (skipped when missing).
"""

from __future__ import annotations

import math
from fractions import Fraction

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from semidp.accountant.core.directed import up_exact
from semidp.accountant.core.errors import InvalidArgument
from semidp.accountant.pld import engine as pld_engine
from semidp.accountant.pld import parts as pld_parts
from semidp.accountant.pld.engine import PLDBracket, PLDInterval, compose_plds
from semidp.accountant.pld.parts import (
    ApproxDPPart,
    DiscreteGaussianPart,
    DiscreteLaplacePart,
    GaussianPart,
    LaplacePart,
    RandomizedResponsePart,
)
from semidp.accountant.profiles.discrete_gaussian_dp import discrete_gaussian_delta, discrete_gaussian_delta_lower
from semidp.accountant.profiles.gaussian import delta_interval, gdp_epsilon, gdp_epsilon_lower

MP = mpmath.MPContext()
MP.dps = 40
fast = settings(max_examples=12, deadline=None, derandomize=True)


# ---------------------------------------------------------------- references


def gdp_truth(mu: float, eps: float) -> tuple[float, float]:
    """Certified (lower, upper) of the mu-GDP profile [BW18, Thm. 8]."""
    lo, hi = delta_interval(mu, eps)
    return float(lo) * (1 - 1e-15), float(hi) * (1 + 1e-15)


def rr_composed_delta(eps0: float, k: int, eps: float) -> mpmath.mpf:
    r"""k-fold eps0-randomized response (= k-fold eps0-DP), exact [KOV15, Thm. 3.3].

    Loss ``eps0 (k - 2i)`` with Q-mass ``C(k,i) p^{k-i} (1-p)^i`` and P-mass ``C(k,i) p^i (1-p)^{k-i}``,
    ``p = e^{eps0}/(1+e^{eps0})``; ``delta = sum_i (q_i - e^eps p_i)_+``.
    """
    p = MP.exp(eps0) / (1 + MP.exp(eps0))
    total = MP.mpf(0)
    for i in range(k + 1):
        c = MP.binomial(k, i)
        term = c * (p ** (k - i) * (1 - p) ** i - MP.exp(eps) * p**i * (1 - p) ** (k - i))
        total += max(term, 0)
    return total


def dg_pair_delta(sigma2: float, k: int, eps: float, delta_int: int = 1) -> mpmath.mpf:
    """k-fold discrete Gaussian by brute force over the pmf (k <= 2), mpmath at 40 digits."""
    t = int(math.ceil(math.sqrt(sigma2) * 14)) + 2
    xs = range(-t, t + 1)
    z = MP.fsum(MP.exp(-(MP.mpf(x) ** 2) / (2 * MP.mpf(sigma2))) for x in xs)
    pmf = {x: MP.exp(-(MP.mpf(x) ** 2) / (2 * MP.mpf(sigma2))) / z for x in xs}
    q1 = [(pmf[y - delta_int] if y - delta_int in pmf else MP.mpf(0), pmf.get(y, MP.mpf(0))) for y in xs]
    if k == 1:
        return MP.fsum(max(q - MP.exp(eps) * p, 0) for q, p in q1)
    out = MP.mpf(0)
    for qa, pa in q1:
        for qb, pb in q1:
            out += max(qa * qb - MP.exp(eps) * pa * pb, 0)
    return out


# ---------------------------------------------------------------- Gaussian vs GDP

#: The FFT path's default size, asked for explicitly: Gaussian-only compositions otherwise use the closed form.
FFT = pld_engine.DEFAULT_POINTS


@pytest.mark.parametrize(("sigmas", "k"), [((0.5,), 1000), ((50.0,), 1), ((2.0, 3.0, 7.5), 40)])
def test_gaussian_only_compositions_are_closed_form_and_agree_with_the_grid(sigmas: tuple[float, ...], k: int) -> None:
    """[DRS22, Cor. 3.3]: mu = sqrt(sum k / sigma^2), bracketed by rounding only; the FFT bracket overlaps it."""
    parts = [(GaussianPart(s), k) for s in sigmas]
    closed = compose_plds(parts)
    assert isinstance(closed, pld_engine.GaussianBracket) and closed.count == k * len(sigmas)
    mu = math.sqrt(sum(k / s**2 for s in sigmas))
    lo, up = closed.epsilon(1e-10)
    assert up == gdp_epsilon(closed.mu_upper, 1e-10)
    # each end is certified at 40 digits (two independently rounded upper bounds need not be ordered)
    assert delta_interval(closed.mu_upper, up)[1] <= 1e-10 < delta_interval(closed.mu_lower, lo)[0]
    assert lo <= gdp_epsilon(mu, 1e-10) <= up * (1 + 1e-12)
    assert abs(lo - gdp_epsilon_lower(closed.mu_lower, 1e-10)) <= 1e-9 * up  # both certified lower ends
    assert closed.mu_lower <= mu <= closed.mu_upper and up - lo <= 1e-9 * up
    grid = compose_plds(parts, points=FFT).epsilon(1e-10)
    assert grid.lower <= up and lo <= grid.upper
    d_lo, d_up = closed.delta(1.0)
    assert d_lo <= d_up and d_up - d_lo <= 1e-9 * d_up + 1e-300


@pytest.mark.parametrize(
    ("sigma", "k"), [(0.5, 1), (1.0, 3), (5.0, 10), (2.0, 200), (5.0, 1000), (0.5, 1000), (50.0, 1000)]
)
def test_gaussian_bracket_contains_gdp_epsilon(sigma: float, k: int) -> None:
    mu = math.sqrt(k) / sigma
    b = compose_plds([(GaussianPart(sigma), k)], points=FFT)  # the grid, not the closed form
    for delta in (1e-5, 1e-10):
        lo, up = b.epsilon(delta)
        assert lo <= gdp_epsilon(mu, delta)  # gdp_epsilon is rounded up, gdp_epsilon_lower down
        assert gdp_epsilon_lower(mu, delta) <= up
        # tightness: the pessimistic law's error is second order in the grid (<= 1e-3 relative here)
        assert up <= gdp_epsilon(mu, delta) * (1 + 1e-3)
        assert math.isfinite(up)


@pytest.mark.parametrize(("sigma", "k"), [(1.0, 1), (3.0, 10), (5.0, 300)])
def test_gaussian_bracket_contains_gdp_delta(sigma: float, k: int) -> None:
    mu = math.sqrt(k) / sigma
    b = compose_plds([(GaussianPart(sigma), k)], points=FFT)
    for eps in (0.0, 0.3, 1.0, mu * mu / 2 + 3 * mu, mu * mu / 2 + 7 * mu):
        lo, up = b.delta(eps)
        t_lo, t_hi = gdp_truth(mu, eps)
        assert lo <= t_hi and t_lo <= up, (eps, lo, up, t_lo, t_hi)


def test_tiny_delta_without_cancellation() -> None:
    """delta = 1e-15 after 100 compositions: the bracket holds the truth and is narrow (tilted FFT)."""
    mu = math.sqrt(100) / 5.0
    b = compose_plds([(GaussianPart(5.0), 100)], points=FFT)
    eps = gdp_epsilon(mu, 1e-15)
    lo, up = b.delta(eps)
    t_lo, t_hi = gdp_truth(mu, eps)
    assert lo <= t_hi and t_lo <= up
    assert up <= 1.05e-15 and lo >= 0.5e-15


def test_heterogeneous_gaussians_match_gdp() -> None:
    """150 distinct sigmas compose to mu = sqrt(sum 1/sigma_i^2) GDP [DRS22, Cor. 3.3]."""
    sigmas = [4.0 + i / 50 for i in range(150)]
    mu = math.sqrt(sum(1 / s**2 for s in sigmas))
    b = compose_plds([GaussianPart(s) for s in sigmas], points=FFT)
    lo, up = b.epsilon(1e-10)
    assert lo <= gdp_epsilon(mu, 1e-10) and gdp_epsilon_lower(mu, 1e-10) <= up
    assert up <= gdp_epsilon(mu, 1e-10) * (1 + 1e-3)


def test_sensitivity_scales_like_sigma() -> None:
    a = compose_plds([(GaussianPart(2.0, sensitivity=2.0), 5)], points=FFT).epsilon(1e-6)
    mu = math.sqrt(5)
    assert a.lower <= gdp_epsilon(mu, 1e-6) and gdp_epsilon_lower(mu, 1e-6) <= a.upper


# ---------------------------------------------------------------- pure DP: RR / (eps, 0) / Laplace


@pytest.mark.parametrize(("eps0", "k"), [(0.5, 1), (0.5, 30), (0.1, 400), (1.0, 200)])
def test_rr_and_pure_dp_against_binomial_closed_form(eps0: float, k: int) -> None:
    for part in (RandomizedResponsePart(eps0, 2), ApproxDPPart(eps0, 0.0)):
        b = compose_plds([(part, k)])
        for eps in (0.0, eps0 * math.sqrt(k), eps0 * k / 2, eps0 * k * 0.999):
            truth = rr_composed_delta(eps0, k, eps)
            lo, up = b.delta(eps)
            assert lo <= truth * (1 + 1e-12) + 1e-300 and truth <= up * (1 + 1e-12) + 1e-300, (part, eps)
        # beyond the largest loss k * eps0 the profile is exactly 0 (pure DP; eps0 on the grid)
        if eps0 in (0.5, 1.0):
            assert b.delta(eps0 * k * 1.001).upper == 0.0


def test_approx_dp_part_delta_composes() -> None:
    """(0, d) k times: delta(0) = 1 - (1 - d)^k exactly (only the +inf mass)."""
    b = compose_plds([(ApproxDPPart(0.0, 1e-6), 50)])
    truth = -math.expm1(50 * math.log1p(-1e-6))
    lo, up = b.delta(0.0)
    assert lo <= truth <= up and up - lo <= 1e-15


def test_laplace_single_exact() -> None:
    """One Laplace: delta(eps) = 1 - e^{(eps - D)/2} for 0 <= eps <= D [KJH20]."""
    b = compose_plds([LaplacePart(1.0)])
    for eps in (0.0, 0.25, 0.5, 0.99):
        truth = -math.expm1((eps - 1.0) / 2.0)
        lo, up = b.delta(eps)
        assert lo <= truth * (1 + 1e-12) and truth <= up * (1 + 1e-12)


@pytest.mark.parametrize(("b_", "k"), [(0.5, 200), (5.0, 200), (50.0, 1000), (0.5, 1000)])
def test_laplace_against_dp_accounting(b_: float, k: int) -> None:
    """dp_accounting pessimistic >= truth >= its optimistic estimate is bracketed consistently."""
    pld_lib = pytest.importorskip("dp_accounting.pld.privacy_loss_distribution")
    ours = compose_plds([(LaplacePart(b_), k)]).epsilon(1e-10)
    dpa_up = pld_lib.from_laplace_mechanism(b_, value_discretization_interval=1e-3).self_compose(k)
    e_up = dpa_up.get_epsilon_for_delta(1e-10)
    assert ours.lower <= e_up  # dp_accounting's pessimistic value is >= the truth >= our lower bound
    assert ours.upper <= e_up * (1 + 1e-3)
    assert math.isfinite(ours.upper)


def test_laplace_200_half_is_finite_and_bracketed() -> None:
    """200 Laplace(b=0.5): finite, and our certified bracket is narrow (about 327.1 .. 327.36)."""
    lo, up = compose_plds([(LaplacePart(0.5), 200)], points=2**17).epsilon(1e-10)
    assert math.isfinite(up) and up - lo < 0.5
    assert 320 < lo <= up < 328


# ---------------------------------------------------------------- discrete mechanisms


@pytest.mark.parametrize(("sigma2", "delta_int"), [(1.0, 1), (4.0, 2), (0.3, 1)])
def test_discrete_gaussian_single_against_cks20(sigma2: float, delta_int: int) -> None:
    b = compose_plds([DiscreteGaussianPart(sigma2, delta_int)])
    for eps in (0.1, 0.5, 1.0, 2.0):
        lo, up = b.delta(eps)
        assert lo <= discrete_gaussian_delta(eps, sigma2, delta_int)
        assert discrete_gaussian_delta_lower(eps, sigma2, delta_int) <= up
        assert float(abs(dg_pair_delta(sigma2, 1, eps, delta_int) - MP.mpf(up))) <= 1e-3 * up + 1e-12


@pytest.mark.parametrize("sigma2", [1.0, 2.5])
def test_two_discrete_gaussians_against_mpmath_brute_force(sigma2: float) -> None:
    b = compose_plds([(DiscreteGaussianPart(sigma2), 2)])
    for eps in (0.2, 1.0, 3.0):
        truth = dg_pair_delta(sigma2, 2, eps)
        lo, up = b.delta(eps)
        assert lo <= truth * (1 + 1e-12) and truth <= up * (1 + 1e-12), (eps, lo, float(truth), up)


def test_discrete_laplace_single_closed_form() -> None:
    """Discrete Laplace (t, Delta=3) has the pure-DP profile sum_y (q_y - e^eps p_y)_+ (mpmath over the pmf)."""
    t, d = 1.3, 3
    xs = range(-80, 81)
    z = MP.fsum(MP.exp(-abs(x) / MP.mpf(t)) for x in xs)
    for eps in (0.0, 0.7, 2.0, 2.3):
        truth = MP.fsum(
            max(MP.exp(-abs(y - d) / MP.mpf(t)) / z - MP.exp(eps) * MP.exp(-abs(y) / MP.mpf(t)) / z, 0)
            for y in range(-77, 81)
        )
        lo, up = compose_plds([DiscreteLaplacePart(t, d)]).delta(eps)
        assert lo <= truth * (1 + 1e-12) and truth <= up * (1 + 1e-12)


# ---------------------------------------------------------------- properties


parts_st = st.one_of(
    st.builds(GaussianPart, st.sampled_from([0.7, 2.0, 9.0])),
    st.builds(LaplacePart, st.sampled_from([0.6, 3.0, 20.0])),
    st.builds(RandomizedResponsePart, st.sampled_from([0.2, 1.0]), st.sampled_from([2, 5])),
    st.builds(DiscreteGaussianPart, st.sampled_from([1.0, 9.0])),
)


@fast
@given(st.lists(st.tuples(parts_st, st.integers(1, 40)), min_size=1, max_size=3), st.sampled_from([1e-3, 1e-9]))
def test_lower_le_upper(parts: list[tuple[pld_parts.PLDPart, int]], delta: float) -> None:
    b = compose_plds(parts)
    lo, up = b.epsilon(delta)
    assert 0.0 <= lo <= up
    for eps in (0.0, 0.5 * up, up):
        d_lo, d_up = b.delta(eps)
        assert 0.0 <= d_lo <= d_up <= 1.0


@fast
@given(parts_st, st.integers(1, 30), st.integers(1, 30))
def test_monotone_in_k(part: pld_parts.PLDPart, k: int, extra: int) -> None:
    """The truth grows with k, so bracket(k).lower <= bracket(k + extra).upper."""
    a = compose_plds([(part, k)]).epsilon(1e-6)
    b = compose_plds([(part, k + extra)]).epsilon(1e-6)
    assert a.lower <= b.upper


# ---------------------------------------------------------------- the tests catch wrong rounding


def _flip_cells(monkeypatch: pytest.MonkeyPatch) -> None:
    orig = pld_parts._grid_from_cells

    def flipped(a0: int, q: np.ndarray, pe: np.ndarray, h: float, *, pessimistic: bool) -> pld_parts.GridLaw:
        return orig(a0, q, pe, h, pessimistic=not pessimistic)

    monkeypatch.setattr(pld_parts, "_grid_from_cells", flipped)


def test_flipped_pessimistic_rounding_is_detected(monkeypatch: pytest.MonkeyPatch) -> None:
    """With the two discretisations swapped, the 'upper' bound falls below the GDP truth."""
    mu = math.sqrt(200) / 2.0
    _flip_cells(monkeypatch)
    up = compose_plds([(GaussianPart(2.0), 200)], points=FFT).epsilon(1e-10).upper
    assert up < gdp_epsilon_lower(mu, 1e-10)


def test_flipped_atom_rounding_is_detected(monkeypatch: pytest.MonkeyPatch) -> None:
    orig = pld_parts.grid_from_atoms

    def flipped(*args: object, pessimistic: bool, **kw: object) -> pld_parts.GridLaw:
        return orig(*args, pessimistic=not pessimistic, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(pld_parts, "grid_from_atoms", flipped)
    b = compose_plds([(RandomizedResponsePart(0.3, 2), 100)], grid=2.0**-6)
    eps = 2.0
    assert b.delta(eps).upper < float(rr_composed_delta(0.3, 100, eps))


# ---------------------------------------------------------------- API and input checks


def test_api_shapes() -> None:
    b = compose_plds([GaussianPart(1.0), (LaplacePart(1.0), 2)])
    assert isinstance(b, PLDBracket) and b.count == 3
    r = b.epsilon(1e-6)
    assert isinstance(r, PLDInterval) and r.width == r.upper - r.lower >= 0
    assert b.h == 2.0 ** round(math.log2(b.h))


@pytest.mark.parametrize(
    "make",
    [
        lambda: GaussianPart(-1.0),
        lambda: GaussianPart(1.0, sensitivity=float("nan")),
        lambda: LaplacePart(0.0),
        lambda: DiscreteGaussianPart(1.0, 0),
        lambda: DiscreteLaplacePart(1.0, 0),
        lambda: RandomizedResponsePart(1.0, 1),
        lambda: ApproxDPPart(1.0, 1.5),
        lambda: compose_plds([]),
        lambda: compose_plds([(GaussianPart(1.0), 0)]),
        lambda: compose_plds([GaussianPart(1.0)]).epsilon(0.0),
        lambda: compose_plds([GaussianPart(1.0)]).delta(float("nan")),
        lambda: compose_plds(["gaussian"]),  # type: ignore[list-item]
    ],
)
def test_invalid_arguments_raise(make: object) -> None:
    with pytest.raises(InvalidArgument):
        make()  # type: ignore[operator]


@pytest.mark.parametrize(("b", "sens"), [(1.0, 1.0), (0.5, 1.0), (5.0, 2.0), (50.0, 1.0)])
def test_single_laplace_closed_form_agrees_with_the_grid(b: float, sens: float) -> None:
    """One Laplace mechanism: delta(eps) = 1 - e^{(eps - D)/2} on [-D, D], 1 - e^eps below [KJH20, Sec. 6]."""
    closed = compose_plds([LaplacePart(b, sens)])
    assert isinstance(closed, pld_engine.LaplaceBracket)
    grid = compose_plds([LaplacePart(b, sens)], points=2**16)
    d = sens / b
    for eps in (-1.5 * d, -d, -0.3 * d, 0.0, 0.5 * d, 0.99 * d, d, 2 * d):
        lo, up = closed.delta(eps)
        g_lo, g_up = grid.delta(eps)
        assert lo <= up and lo <= g_up and g_lo <= up
        assert up - lo <= 1e-12
    for delta in (1e-10, 0.05):
        lo, up = closed.epsilon(delta)
        assert lo <= up <= lo + 1e-12 and abs(up - max(0.0, d + 2 * math.log1p(-delta))) <= 1e-12
        g = grid.epsilon(delta)
        assert g.lower <= up and lo <= g.upper


def test_a_wrong_laplace_formula_is_caught() -> None:
    """The twin without the 1/2 (1 - e^{eps - D}) leaves the grid bracket: the agreement test can fail."""
    grid = compose_plds([LaplacePart(1.0)], points=2**16)
    g_lo, g_up = grid.delta(0.3)
    assert not (g_lo <= -math.expm1(0.3 - 1.0) <= g_up)


# ---------------------------------------------------------------- the O(1) error norm and the pure-DP cap


@fast
@given(
    lam=st.one_of(st.just(0.0), st.floats(1e-4, 1e4)),
    log2h=st.integers(-16, 0),
    n=st.sampled_from([16, 256, 1024]),
)
def test_kappa_norm_bounds_the_sum_tightly(lam: float, log2h: int, n: int) -> None:
    r"""The closed form of :math:`\|\kappa\|_2` is an upper bound of the sum evaluated at 40 digits, within 1 %."""
    h = 2.0**log2h
    exact = MP.sqrt(MP.fsum((MP.exp(-lam * h * m) * -MP.expm1(-MP.mpf(h) * m)) ** 2 for m in range(1, n + 1)))
    got = pld_engine._kappa_norm(lam, h, n)
    assert got >= exact
    assert got <= float(exact) * 1.01 + 1e-149  # 1e-149: the floor for sums that underflow


def test_kappa_norm_dropping_a_term_is_caught() -> None:
    """The twin without the third geometric sum falls below the exact norm: the test above can fail."""
    lam, h, n = 2.0, 2.0**-8, 1024
    s = [pld_engine._geometric_sum(a * h, n) for a in (2 * lam, 2 * lam + 1)]
    exact = MP.sqrt(MP.fsum((MP.exp(-lam * h * m) * -MP.expm1(-MP.mpf(h) * m)) ** 2 for m in range(1, n + 1)))
    assert math.sqrt(max(0.0, s[0] - 2 * s[1])) < exact


def test_pure_dp_compositions_are_capped_at_the_summed_epsilon() -> None:
    """k-fold D-pure DP is kD-pure DP (basic composition [DR14, Thm. 3.16]); the top atom (Q-mass 2^-k for
    Laplace) makes epsilon(1e-10) >= kD + log(1 - 1e-10 2^k), so the capped upper bound is nearly tight."""
    b = compose_plds([(LaplacePart(5.0), 10)])
    assert isinstance(b, PLDBracket) and b.loss_cap == 2.0
    lo, up = b.epsilon(1e-10)
    assert up == 2.0 and lo <= up
    assert up >= 2.0 + math.log1p(-1e-10 * 2**10)
    assert b.delta(2.0).upper == 0.0 and b.delta(2.5) == (0.0, 0.0)
    mixed = compose_plds([(LaplacePart(5.0), 10), (RandomizedResponsePart(0.3), 3)])
    assert isinstance(mixed, PLDBracket) and mixed.loss_cap == pytest.approx(2.9, abs=1e-15) and mixed.loss_cap >= 2.9
    assert mixed.epsilon(1e-10).upper <= mixed.loss_cap


def test_the_cap_keeps_the_mass_at_infinity() -> None:
    """(eps, delta) parts: beyond the summed epsilon the profile is the composed delta 1 - (1 - d)^k, not 0."""
    b = compose_plds([(ApproxDPPart(0.1, 1e-6), 20)])
    assert isinstance(b, PLDBracket) and b.loss_cap == up_exact(Fraction(0.1) * 20)
    lo, up = b.delta(5.0)
    truth = -math.expm1(20 * math.log1p(-1e-6))
    assert lo <= truth * (1 + 1e-12) and truth * (1 - 1e-12) <= up <= truth * (1 + 1e-9)
    assert b.epsilon(1e-7).upper == math.inf  # below the mass at +inf: no epsilon
    assert compose_plds([(GaussianPart(1.0), 2), LaplacePart(1.0)]).loss_cap == math.inf  # type: ignore[union-attr]


# ---------------------------------------------------------------- the optimistic law: relabelled, not floored


def _single_truths() -> list[tuple[str, pld_parts.PLDPart, object]]:
    """Parts with an exact profile: mu-GDP [BW18, Thm. 8], k-ary RR (exact sum), the discrete Gaussian [CKS20, Thm. 7]."""
    return [
        ("gaussian", GaussianPart(1.5), lambda e: gdp_truth(1 / 1.5, e)[0]),
        ("rr", RandomizedResponsePart(0.7, 3), lambda e: float(rr_k_delta(0.7, 3, e))),
        ("discrete gaussian", DiscreteGaussianPart(2.0), lambda e: discrete_gaussian_delta_lower(e, 2.0, 1)),
    ]


def rr_k_delta(eps0: float, k: int, eps: float) -> mpmath.mpf:
    """k-ary randomized response: Q-masses (e^eps0, 1, k-2)/(e^eps0+k-1) at losses (eps0, -eps0, 0)."""
    den = MP.exp(eps0) + k - 1
    atoms = [(MP.exp(eps0) / den, MP.mpf(eps0)), (1 / den, MP.mpf(-eps0)), ((k - 2) / den, MP.mpf(0))]
    return MP.fsum(q * max(0, 1 - MP.exp(eps - loss)) for q, loss in atoms)


@pytest.mark.parametrize("log2h", [-4, -7, -10])
def test_optimistic_single_laws_stay_below_the_truth_and_close_to_it(log2h: int) -> None:
    h = 2.0**log2h
    for name, part, truth in _single_truths():
        law = part.grid_law(h, pessimistic=False)
        gaps = []
        for eps in np.linspace(-1.0, 3.0, 41):
            t = float(truth(float(eps)))  # type: ignore[operator]
            got = law.delta(float(eps))
            assert got <= t * (1 + 1e-12) + 1e-300, (name, eps)
            gaps.append(t - got)
        # relabelling, not flooring: the gap is far below the floor's h * (density of losses)
        if name == "gaussian":
            assert max(gaps) <= 0.02 * h, (name, max(gaps))


def test_optimistic_gaussian_composition_is_second_order() -> None:
    """200 Gaussians (sigma = 2) on the 2^15-point grid: bracket [69.250, 69.271] around the exact 69.2648
    (GDP, mu = sqrt(200)/2); flooring the optimistic law gave [68.48, 69.27]."""
    lo, up = compose_plds([(GaussianPart(2.0), 200)], points=2**15).epsilon(1e-10)
    exact = gdp_epsilon(math.sqrt(200) / 2.0, 1e-10)
    assert lo <= gdp_epsilon_lower(math.sqrt(200) / 2.0, 1e-10) <= exact <= up
    assert up - lo < 0.03


def test_relabelling_without_the_gap_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """The twin that moves mass up a label as if it were already there (deficit measured with no gap) puts
    labels above their likelihood ratio: the 'lower' law then exceeds the exact GDP profile."""
    orig = np.diff

    def no_gap(x: np.ndarray, *args: object, **kw: object) -> np.ndarray:
        return np.zeros_like(orig(x, *args, **kw))  # type: ignore[arg-type]

    monkeypatch.setattr(pld_parts.np, "diff", no_gap)
    for log2h in (-4, -7):  # the greedy (few cells) and the alternating (many cells) relabelling
        law = GaussianPart(1.5).grid_law(2.0**log2h, pessimistic=False)
        assert any(law.delta(e) > gdp_truth(1 / 1.5, e)[1] for e in np.linspace(0.0, 2.0, 21))


# ---------------------------------------------------------------- two Laplace mechanisms against quadrature


def laplace_two_fold_delta(b: float, eps: float) -> mpmath.mpf:
    r"""delta(eps) of two Laplace(b) mechanisms (sensitivity 1) at 40 digits, from the exact single PLD
    [KJH20, Sec. 6]: atoms 1/2 at D and e^{-D}/2 at -D, density e^{-(D-l)/2}/4 on (-D, D), D = 1/b. Atom pairs
    are summed, an atom against the density and the density against itself are integrated (the inner
    integral in closed form, the outer by mpmath quadrature split at the kink)."""
    d = MP.mpf(1) / b
    e = MP.mpf(eps)
    atoms = [(d, MP.mpf(1) / 2), (-d, MP.exp(-d) / 2)]

    def dens_tail(c: mpmath.mpf) -> mpmath.mpf:
        """int_{-D}^{D} f(l) (1 - e^{c - l})_+ dl, f(l) = e^{-(D-l)/2}/4, in closed form."""
        lo = max(-d, c)
        if lo >= d:
            return MP.mpf(0)
        # int f = (1/2)(1 - e^{-(D-lo)/2});  int f e^{-l} = (1/2) e^{-D/2}(e^{-lo/2} - e^{-D/2})
        first = (1 - MP.exp(-(d - lo) / 2)) / 2
        second = MP.exp(-d / 2) * (MP.exp(-lo / 2) - MP.exp(-d / 2)) / 2
        return first - MP.exp(c) * second

    total = MP.fsum(qa * qb * max(0, 1 - MP.exp(e - la - lb)) for la, qa in atoms for lb, qb in atoms)
    total += 2 * MP.fsum(qa * dens_tail(e - la) for la, qa in atoms)
    pts = sorted({-d, d, *[x for x in (e - d, e + d) if -d < x < d]})
    total += MP.quad(lambda l1: MP.exp(-(d - l1) / 2) / 4 * dens_tail(e - l1), pts)
    return total


@pytest.mark.parametrize("log2h", [-3, -6, None])
@pytest.mark.parametrize("b", [0.7, 2.0])
def test_two_laplace_mechanisms_against_quadrature(b: float, log2h: int | None) -> None:
    """The cells-and-atoms path (connect the dots up, relabelling down) brackets the exact two-fold profile."""
    bracket = compose_plds([(LaplacePart(b), 2)], grid=None if log2h is None else 2.0**log2h)
    d = 1.0 / b
    for eps in (-2 * d, -d, -0.3 * d, 0.0, 0.4 * d, d, 1.5 * d, 1.99 * d):
        truth = laplace_two_fold_delta(b, eps)
        lo, up = bracket.delta(eps)
        assert MP.mpf(lo) <= truth * (1 + 1e-12) + 1e-30, (eps, lo, truth)
        assert MP.mpf(up) >= truth * (1 - 1e-12), (eps, up, truth)
    assert laplace_two_fold_delta(b, 2 * d * (1 + 1e-12)) == 0  # two D-pure mechanisms: 2D-pure
