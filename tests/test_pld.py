"""Tests for accountant.pld: conservative numerical composition via privacy-loss distributions.

The composition is a *lower* bound of the true tradeoff function, i.e. every
privacy profile we report is an *upper* bound of the exact one. Each check
below is one-sided against an independent exact reference (mpmath, 40 digits),
plus a closeness check whose tolerance follows from the discretisation:
every loss is rounded up by less than one grid step ``h`` (plus a 1e-13
relative pad), and ``profile`` rounds epsilon down to the grid.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import norm

from semidp.accountant.core.errors import InvalidArgument
from semidp.accountant.pld import grid as pld
from semidp.accountant.profiles.gaussian import gdp_delta
from semidp.accountant.profiles.tradeoff import TradeoffCurve

MP = mpmath.MPContext()
MP.dps = 40

H_DEFAULT = 2.0**-14  # pld.DEFAULT_GRID = 1e-4 rounded down to a power of two
SCIPY_SLACK = 1e-13  # scipy ndtr/isf absolute accuracy on [0, 1] is ~1e-15
DENSE = np.union1d(np.linspace(0.0, 1.0, 20001), np.geomspace(1e-12, 1e-2, 400))
fast = settings(max_examples=15, deadline=None, derandomize=True)


# ---------------------------------------------------------------- exact references

Atoms = list[tuple[mpmath.mpf, mpmath.mpf]]


def exact_atoms(pairs: list[tuple[float, float]]) -> tuple[Atoms, mpmath.mpf]:
    """Exact PLD (law under Q) of the product of (eps, delta)-DP tradeoff functions.

    f_{eps,delta} = T(P, Q) with Q-atoms: loss +eps mass (1-d) e^eps/(1+e^eps), loss -eps
    mass (1-d)/(1+e^eps), loss +inf mass d [DRS22, Prop. 2.5]; losses add under Q x Q'.
    """
    per = []
    inf_keep = MP.mpf(1)
    for e, d in pairs:
        E, D = MP.exp(e), MP.mpf(d)
        per.append([(MP.mpf(e), (1 - D) * E / (1 + E)), (-MP.mpf(e), (1 - D) / (1 + E))])
        inf_keep *= 1 - D
    atoms = [(sum(a[0] for a in combo), math.prod(a[1] for a in combo)) for combo in itertools.product(*per)]
    return atoms, 1 - inf_keep


def mp_gauss_delta(mu: float, x: mpmath.mpf) -> mpmath.mpf:
    """delta_mu(x) = Phi(mu/2 - x/mu) - e^x Phi(-mu/2 - x/mu) [BW18, Thm. 8], any real x."""
    m = MP.mpf(mu)
    return MP.ncdf(m / 2 - x / m) - MP.exp(x) * MP.ncdf(-m / 2 - x / m)


def exact_delta(atoms: Atoms, w_inf: mpmath.mpf, mu: float, eps: float) -> mpmath.mpf:
    """delta(eps) = E_Q[(1 - e^{eps - L})_+] = sum_j w_j delta_mu(eps - L_j) + w_inf."""
    e = MP.mpf(eps)
    tot = w_inf
    for loss, w in atoms:
        if mu == 0:
            tot += w * max(MP.mpf(0), 1 - MP.exp(e - loss))
        else:
            tot += w * mp_gauss_delta(mu, e - loss)
    return tot


def kov_delta(k: int, eps: float, e2: float) -> mpmath.mpf:
    """Exact k-fold composition of eps-DP randomized response [KOV15, Thm. 3.3]:
    the loss is eps (2B - k), B ~ Binomial(k, e^eps/(1+e^eps)) under Q."""
    q = MP.exp(eps) / (1 + MP.exp(eps))
    tot = MP.mpf(0)
    for i in range(k + 1):
        loss = (2 * i - k) * MP.mpf(eps)
        if loss > e2:
            tot += MP.binomial(k, i) * q**i * (1 - q) ** (k - i) * (1 - MP.exp(MP.mpf(e2) - loss))
    return tot


def gauss_std(mu: float, alpha: np.ndarray) -> np.ndarray:
    """std G_mu(alpha) = Phi(Phi^{-1}(1 - alpha) - mu) (docs/reference/semi-dp.md Sec. 1)."""
    return np.asarray(norm.cdf(norm.isf(alpha) - mu))


# ---------------------------------------------------------------- curve -> PLD


def test_loss_atoms_of_simple_curves() -> None:
    ident = pld.loss_atoms(TradeoffCurve.identity())
    assert ident.loss == (0.0,) and ident.p == (1.0,) and ident.q == (1.0,) and ident.inf_mass == 0.0
    at = pld.loss_atoms(TradeoffCurve.from_approx_dp(1.0, 0.1))
    assert len(at.loss) == 2  # the flat segment (1 - delta, 0)-(1, 0) has no Q-mass
    assert at.loss[0] >= 1.0 - 1e-15 and abs(at.loss[0] - 1.0) < 1e-12
    assert abs(at.loss[1] + 1.0) < 1e-12
    assert at.inf_mass >= 0.1 and at.inf_mass < 0.1 + 1e-15
    assert pld.loss_atoms(TradeoffCurve.zero()).loss == () and pld.loss_atoms(TradeoffCurve.zero()).inf_mass == 1.0


@fast
@given(
    st.lists(st.tuples(st.floats(0.0, 5.0), st.floats(0.0, 0.3)), min_size=1, max_size=4),
    st.floats(-1.0, 6.0, allow_subnormal=False),
)
def test_atoms_delta_equals_privacy_profile(pairs: list[tuple[float, float]], e: float) -> None:
    # delta(eps) = sum_j (q_j - e^eps p_j)_+ + q_inf  ==  sup_a [1 - f(a) - e^eps a] [DRS22, Prop. 2.12]
    f = TradeoffCurve.from_profile([x for x, _ in pairs], [d for _, d in pairs])
    at = pld.loss_atoms(f)
    exact = max(1 - MP.mpf(b) - MP.exp(e) * MP.mpf(a) for a, b in zip(f.alphas, f.betas))
    d_atoms, d_curve = at.delta(e), f.privacy_profile(e)
    assert MP.mpf(d_atoms) >= exact and MP.mpf(d_curve) >= exact
    assert abs(d_atoms - d_curve) <= 1e-13


# ---------------------------------------------------------------- golden / independent checks


@pytest.mark.parametrize(("k", "mu"), [(3, 1.0), (4, 0.5)])
def test_composed_gdp_curves_vs_exact_gaussian(k: int, mu: float) -> None:
    # [DRS22, Cor. 3.3]: G_mu^{(x) k} = G_{sqrt(k) mu}. The inputs are from_gdp lower bounds
    # (tangent lines), so the result must be below the truth; grid 2^-10 keeps this fast.
    c = pld.compose([TradeoffCurve.from_gdp(mu)] * k, grid=1e-3)
    exact = gauss_std(math.sqrt(k) * mu, DENSE)
    ours = c.std(DENSE)
    assert np.all(ours <= exact + SCIPY_SLACK)
    assert np.max(exact - ours) < 1e-3


@pytest.mark.parametrize("mu", [0.3, 1.0, 3.0])
def test_gaussian_part_alone_is_g_mu(mu: float) -> None:
    # compose([], mu) is the tangent-line envelope of G_mu from the exact profile [BW18, Thm. 8].
    c = pld.compose([], mu)
    exact = gauss_std(mu, DENSE)
    assert np.all(c.std(DENSE) <= exact + SCIPY_SLACK)
    assert np.max(exact - c.std(DENSE)) < 1e-4
    for e in (0.0, 0.5, 1.0, 2.0):  # on-grid epsilons: profile is the certified value, padded
        d = pld.profile([], mu, e)
        assert d >= gdp_delta(mu, e)
        assert d <= gdp_delta(mu, e) * (1 + 1e-8) + 1e-15


@pytest.mark.parametrize(("k", "eps"), [(5, 0.5), (8, 1.0), (3, 2.0)])
def test_pure_dp_composition_vs_kov_exact(k: int, eps: float) -> None:
    # [KOV15, Thm. 3.3]: exact delta(e) of k-fold eps-DP by enumerating the binomial PLD.
    f = TradeoffCurve.from_approx_dp(eps, 0.0)
    c = pld.compose([f] * k)
    grid_eps = np.linspace(0.0, k * eps, 41)
    prof = pld.profile([f] * k, 0.0, grid_eps)
    shift = (k + 1) * (H_DEFAULT + 1e-12 * (1 + eps))  # loss rounding (k) + epsilon floor (1)
    for e, d_prof in zip(grid_eps, prof):
        exact = kov_delta(k, eps, float(e))
        d_curve = c.privacy_profile(float(e))
        assert MP.mpf(d_prof) >= exact and MP.mpf(d_curve) >= exact  # never optimistic
        looser = kov_delta(k, eps, float(e) - shift)  # ... and at most k+1 grid steps looser
        assert d_prof <= float(looser) + 1e-12
        assert d_curve <= float(looser) + 1e-9
    # pure DP stays pure: delta = 0 at k*eps (plus at most k grid steps)
    assert k * eps <= c.epsilon(0.0) <= k * eps + k * H_DEFAULT + 1e-9
    assert k * eps <= pld.epsilon([f] * k, 0.0, 0.0) <= k * eps + k * H_DEFAULT + 1e-9


@pytest.mark.parametrize(
    ("e1", "e2", "a", "published", "exact"),
    [
        # docs/reference/semi-dp.md T-F3 (printed to 4 digits) and our exact rational-enumeration value
        (0.5, 1.0, 2, 0.1058, 0.1058202),
        (1.0, 1.0, 3, 0.1251, 0.1250815),
        (0.3, 2.0, 2, 0.1253, 0.1252863),
    ],
)
def test_prop21_semi_dp_first_beats_composition_first(
    e1: float, e2: float, a: int, published: float, exact: float
) -> None:
    # [CA24, Prop. 21] / [AD22, Prop. A.7]: (x)_i f_i^{o a} >= ((x)_i f_i)^{o a}.
    # Tolerance 5e-4: both sides are lower bounds, each within ~1e-4 of the truth at the
    # default grid (2 parts, loss rounding < 2^-14 each); printed values have 4 digits.
    f1, f2 = TradeoffCurve.from_approx_dp(e1, 0.0), TradeoffCurve.from_approx_dp(e2, 0.0)
    semi_first = pld.compose([f1.group(a), f2.group(a)])
    comp_first = pld.compose([f1, f2]).group(a)
    xs = np.union1d(np.union1d(semi_first.alphas, comp_first.alphas), np.linspace(0, 1, 20001))
    gap = semi_first.std(xs) - comp_first.std(xs)
    assert gap.min() >= -1e-9
    assert abs(gap.max() - exact) < 5e-4
    assert abs(gap.max() - published) < 5e-4


# ---------------------------------------------------------------- properties


def _mixed() -> list[TradeoffCurve]:
    return [
        TradeoffCurve.from_approx_dp(0.5, 0.0),
        TradeoffCurve.from_approx_dp(1.0, 1e-6),
        TradeoffCurve.from_approx_dp(0.2, 1e-4).group(2),
    ]


def test_compose_never_above_its_inputs_and_monotone() -> None:
    a, b, c = _mixed()
    one = pld.compose([a])
    two = pld.compose([a, b])
    three = pld.compose([a, b, c])
    for f in (a, b):
        assert f.dominates(two)  # exact check: the composition is never above any part
    assert a.dominates(one)
    assert two.dominates(three) or np.all(three.std(DENSE) <= two.std(DENSE) + 1e-4)
    # against the exact a (x) b by enumeration: composing c on top never exceeds it
    atoms, w_inf = exact_atoms([(0.5, 0.0), (1.0, 1e-6)])
    for e in (0.0, 0.5, 1.0, 1.5, 2.0):
        assert MP.mpf(three.privacy_profile(e)) >= exact_delta(atoms, w_inf, 0.0, e)
    assert pld.compose([a, TradeoffCurve.identity()]).std(0.3) <= a.std(0.3)


def test_compose_commutative() -> None:
    a, b, c = _mixed()
    x = pld.compose([a, b, c], gaussian_mu=0.7, grid=1e-3)
    y = pld.compose([c, a, b], gaussian_mu=0.7, grid=1e-3)
    assert np.max(np.abs(x.std(DENSE) - y.std(DENSE))) < 1e-9


@fast
@given(
    st.lists(
        st.tuples(st.floats(0.0, 3.0), st.one_of(st.just(0.0), st.floats(1e-9, 0.05))),
        min_size=1,
        max_size=3,
    ),
    st.one_of(st.just(0.0), st.floats(0.05, 2.0)),
    st.floats(0.0, 6.0),
)
def test_never_optimistic_vs_exact(pairs: list[tuple[float, float]], mu: float, e: float) -> None:
    curves = [TradeoffCurve.from_approx_dp(x, d) for x, d in pairs]
    atoms, w_inf = exact_atoms(pairs)
    exact = exact_delta(atoms, w_inf, mu, e)
    assert MP.mpf(pld.profile(curves, mu, e, grid=1e-3)) >= exact
    c = pld.compose(curves, mu, grid=1e-3, n_eps=200)
    assert MP.mpf(c.privacy_profile(e)) >= exact


@pytest.mark.parametrize("mu", [0.0, 0.05, 0.5])
def test_far_window_paths_vs_exact(mu: float) -> None:
    # Losses up to 9 with a small (or no) Gaussian part: most mass lies outside the
    # direct-summation window (half-width max(1, mu^2/2 + 11 mu)), exercising the suffix-sum
    # bound above and the delta_mu(D) bound below. Reference: exact enumeration in mpmath.
    pairs = [(3.0, 0.0), (3.0, 0.0), (3.0, 1e-7)]
    curves = [TradeoffCurve.from_approx_dp(e, d) for e, d in pairs]
    atoms, w_inf = exact_atoms(pairs)
    eps = [0.0, 0.5, 2.0, 3.5, 5.0, 8.0]
    ours = pld.profile(curves, mu, np.array(eps))
    for e, d in zip(eps, ours):
        exact = exact_delta(atoms, w_inf, mu, e)
        assert MP.mpf(d) >= exact
        looser = exact_delta(atoms, w_inf, mu, e - 4 * (H_DEFAULT + 1e-11))
        assert d <= float(looser) * (1 + 1e-9) + 1e-15


def test_epsilon_consistent_with_profile() -> None:
    curves = _mixed()
    # the mass at +inf of _mixed() is about 2.2e-4 (1e-6 plus 1 - f(0) of the group-2 part)
    for mu, delta in [(0.0, 1e-3), (0.8, 1e-3), (0.8, 3e-4)]:
        e = pld.epsilon(curves, mu, delta)
        assert math.isfinite(e)
        h = H_DEFAULT
        assert e == math.floor(e / h) * h  # a grid multiple
        assert pld.profile(curves, mu, e) <= delta
        assert pld.profile(curves, mu, e - h) > delta  # minimal on the grid
        c = pld.compose(curves, mu)
        assert c.privacy_profile(e) <= delta * (1 + 1e-6) + 1e-15 or c.epsilon(delta) >= e
    # more mass at +inf than delta: no finite epsilon
    assert pld.epsilon([TradeoffCurve.from_approx_dp(1.0, 1e-3)], 0.0, 1e-4) == math.inf


def test_trivial_compositions() -> None:
    f = TradeoffCurve.from_approx_dp(1.0, 0.0)
    assert pld.compose([]) == TradeoffCurve.identity()
    assert pld.compose([TradeoffCurve.identity()] * 3) == TradeoffCurve.identity()
    assert pld.compose([f, TradeoffCurve.zero()]) == TradeoffCurve.zero()
    # mass at +inf composes as 1 - prod(1 - d_i); here (0, d)-DP parts only
    c = pld.compose([TradeoffCurve.from_approx_dp(0.0, 0.1), TradeoffCurve.from_approx_dp(0.0, 0.2)])
    assert 1 - c.betas[0] >= 1 - 0.9 * 0.8 - 1e-15 and 1 - c.betas[0] < 1 - 0.9 * 0.8 + 1e-12


def test_grid_is_exposed_and_coarser_is_looser() -> None:
    f = [TradeoffCurve.from_approx_dp(1.0, 0.0)] * 4
    fine = pld.profile(f, 0.3, 2.0)
    coarse = pld.profile(f, 0.3, 2.0, grid=1e-2)
    atoms, w_inf = exact_atoms([(1.0, 0.0)] * 4)
    exact = exact_delta(atoms, w_inf, 0.3, 2.0)
    assert exact <= MP.mpf(fine) <= MP.mpf(coarse)


def test_extreme_losses_and_size_cap_stay_conservative() -> None:
    # a segment with p = 5e-324 has loss log(0.5/5e-324) ~ 743.7 (beyond float exp range)
    c = TradeoffCurve((0.0, 5e-324, 1.0), (1.0, 0.5, 0.0))
    at = pld.loss_atoms(c)
    assert at.loss[0] >= float(MP.log(MP.mpf(0.5) / MP.mpf(5e-324)))
    for e in (0.0, 1.0, 700.0):
        assert pld.profile([c], 0.0, e) >= c.privacy_profile(e) - 1e-15
    assert c.dominates(pld.compose([c]))
    # a tiny max_points forces truncation: still never below the exact KOV profile
    f = TradeoffCurve.from_approx_dp(1.0, 0.0)
    for e in (0.0, 1.0, 3.0, 6.0):
        capped = pld.profile([f] * 6, 0.0, e, max_points=5000)
        assert MP.mpf(capped) >= kov_delta(6, 1.0, e)


def test_invalid_arguments_raise() -> None:
    f = TradeoffCurve.from_approx_dp(1.0, 0.0)
    bad_calls: list[Callable[[], object]] = [
        lambda: pld.compose([f], grid=0.0),
        lambda: pld.compose([f], grid=-1e-3),
        lambda: pld.compose([f], grid=float("nan")),
        lambda: pld.compose([f], grid=2.0),
        lambda: pld.compose([f], gaussian_mu=-0.5),
        lambda: pld.compose([f], gaussian_mu=float("nan")),
        lambda: pld.compose(f),  # type: ignore[arg-type]
        lambda: pld.compose([f, "f"]),  # type: ignore[list-item]
        lambda: pld.compose([f], n_eps=1),
        lambda: pld.compose([f], tail_mass=-1.0),
        lambda: pld.profile([f], 0.0, float("nan")),
        lambda: pld.epsilon([f], 0.0, 1.5),
        lambda: pld.epsilon([f], 0.0, float("nan")),
        lambda: pld.loss_atoms("curve"),  # type: ignore[arg-type]
        lambda: pld.LossAtoms((0.0,), (1.0,), (-1.0,), 0.0),
        lambda: pld.LossAtoms((float("inf"),), (1.0,), (1.0,), 0.0),
    ]
    for call in bad_calls:
        with pytest.raises(InvalidArgument):
            call()
