"""Canonical noise distributions (mechanisms.cnd): published targets T-C1..T-C3, the CND
property T(N, N+1) = f checked independently by Neyman-Pearson on bins, tails against
mpmath, quantiles, seeded samplers, and input validation.

Targets are from ``docs/reference/semi-dp.md`` Sec. 9 ("CND / Tulap", status V); tolerances are half a
unit in the last printed digit (house style R10). Exact references use mpmath at 50 digits.
Statistical tests use fixed seeds (R12); the suite-wide failure budget below is per test.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import mpmath
import numpy as np
import pytest
from scipy import special, stats

from semidp.accountant.core.errors import InvalidArgument
from semidp.accountant.guarantees.definitions import GDP, ApproxDP, PureDP, TradeOff
from semidp.accountant.guarantees.relations import Replace
from semidp.accountant.profiles.tradeoff import TradeoffCurve
from semidp.mechanisms.cnd import (
    CanonicalNoise,
    GaussianCND,
    TradeoffCND,
    Tulap,
    cnd_from_tradeoff,
    tulap_cdf,
    tulap_ppf,
    tulap_sample,
)

MP = mpmath.MPContext()
MP.dps = 50

#: Declared per-test false-failure rate of the seeded goodness-of-fit tests (R12):
#: a KS p-value threshold of 1e-3 under the null; with fixed seeds the outcome is fixed.
TEST_FAILURE_RATE = 1e-3


def half_unit(printed: str) -> float:
    """Half a unit in the last printed decimal digit of ``printed``."""
    decimals = len(printed.split(".")[1]) if "." in printed else 0
    return 0.5 * 10.0**-decimals


def g_paper(mu: float) -> Callable[[np.ndarray], np.ndarray]:
    """G_mu in the paper convention, vectorised (scipy.special: fast)."""
    return lambda s: special.ndtr(special.ndtri(s) - mu)


def g_std(mu: float) -> Callable[[np.ndarray], np.ndarray]:
    return lambda a: special.ndtr(special.ndtri(1.0 - np.asarray(a)) - mu)


def fed_std(eps: float, delta: float) -> Callable[[float], float]:
    """f_{eps,delta} in the standard convention, scalar callable."""
    e = math.exp(eps)
    return lambda a: max(0.0, 1.0 - delta - e * a, (1.0 - delta - a) / e)


# ------------------------------------------------------------------------------------------
# mpmath references
# ------------------------------------------------------------------------------------------


def tulap_cdf_mp(y: float, eps: float, delta: float = 0.0) -> mpmath.mpf:
    """Exact Tulap CDF (docs/reference/semi-dp.md Sec. 6), untruncated then truncated, at 50 digits."""
    b = MP.exp(-MP.mpf(eps))
    q = 2 * delta * b / (1 - b + 2 * delta * b) if delta else MP.mpf(0)

    def low(v: mpmath.mpf) -> mpmath.mpf:
        k = MP.nint(v)
        return b ** (-k) / (1 + b) * (b + (v - k + MP.mpf(1) / 2) * (1 - b))

    yy = MP.mpf(y)
    f0 = low(yy) if yy <= 0 else 1 - low(-yy)
    if q == 0:
        return f0
    return min(MP.mpf(1), max(MP.mpf(0), (f0 - q / 2) / (1 - q)))


def tulap_sf_mp(y: float, eps: float) -> mpmath.mpf:
    """Exact untruncated upper tail, computed on the small side."""
    return tulap_cdf_mp(-y, eps)


# ------------------------------------------------------------------------------------------
# T-C1, T-C2, T-C3
# ------------------------------------------------------------------------------------------

TC1_X = (-2.3, -1.0, -0.5, 0.0, 0.2, 0.5, 1.7)
TC1_PURE = ("0.0489054147", "0.1839397206", "0.2689414214", "0.5", "0.5924234315", "0.7310585786", "0.9135701315")
TC1_APPROX = ("0.0436548839", "0.1802609262", "0.2662520072", "0.5", "0.5934991971", "0.7337479928", "0.9183838951")


@pytest.mark.parametrize(
    ("delta", "printed"), [(0.0, TC1_PURE), (0.01, TC1_APPROX)], ids=["T-C1-pure", "T-C1-delta0.01"]
)
def test_tc1_tulap_cdf(delta: float, printed: tuple[str, ...]) -> None:
    t = Tulap(1.0, delta)
    for x, p in zip(TC1_X, printed):
        tol = half_unit(p)  # 10 printed decimals: 5e-11
        assert abs(t.cdf(x) - float(p)) <= tol
        # the functional (m, b, q) API, at a shifted location
        assert abs(float(tulap_cdf(x + 3.0, 3.0, math.exp(-1.0), t.q)) - float(p)) <= tol
        # and the exact reference
        assert abs(t.cdf(x) - float(tulap_cdf_mp(x, 1.0, delta))) <= 1e-15


@pytest.mark.parametrize(
    ("eps", "delta", "q", "c"),
    [
        (1.0, 0.0, "0", "0.268941"),
        (1.0, 0.01, "0.011506", "0.266252"),
        (0.5, 0.001, "0.003074", "0.377163"),
        (2.0, 0.05, "0.015411", "0.113243"),
    ],
    ids=["T-C2-(1,0)", "T-C2-(1,0.01)", "T-C2-(0.5,0.001)", "T-C2-(2,0.05)"],
)
def test_tc2_q_and_fixed_point(eps: float, delta: float, q: str, c: str) -> None:
    t = Tulap(eps, delta)
    assert abs(t.q - float(q)) <= half_unit(q)
    assert abs(t.fixed_point - float(c)) <= half_unit(c)  # c = F(-1/2) = (1 - delta)/(1 + e^eps)
    assert abs(t.fixed_point - (1 - delta) / (1 + math.exp(eps))) <= 1e-15


@pytest.mark.parametrize("convention", ["paper", "std"])
def test_tc3_lemma36_cnd_of_g1(convention: str) -> None:
    f = g_paper(1.0) if convention == "paper" else g_std(1.0)
    cnd = cnd_from_tradeoff(f, convention=convention)  # type: ignore[arg-type]
    assert abs(cnd.c - 0.3085375) <= half_unit("0.3085375")  # c = Phi(-1/2)
    assert abs(cnd.c - special.ndtr(-0.5)) <= 1e-15
    for x, p in ((-0.7, "0.23948951"), (0.3, "0.61487748"), (1.2, "0.88359755"), (-1.5, "0.0668072")):
        assert abs(cnd.cdf(x) - float(p)) <= half_unit(p)
    # F(-1.5) = Phi(-1.5) exactly (two steps of the recursion from F(1/2) = Phi(1/2))
    assert abs(cnd.cdf(-1.5) - special.ndtr(-1.5)) <= 1e-15
    # ... but the construction is not the Gaussian CND (T-C3: 0.23948951 vs 0.24196365)
    assert abs(GaussianCND(1.0).cdf(-0.7) - 0.24196365) <= half_unit("0.24196365")
    assert cnd.cdf(-0.7) < GaussianCND(1.0).cdf(-0.7) - 2e-3


@pytest.mark.parametrize(("eps", "delta"), [(1.0, 0.0), (1.0, 0.01), (0.5, 0.001), (2.0, 0.05), (0.1, 0.0)])
def test_lemma36_reproduces_tulap(eps: float, delta: float) -> None:
    """docs/reference/semi-dp.md Sec. 6 [V]: Lemma 36 applied to f_{eps,delta} gives the Tulap CDF (< 3e-13)."""
    cnd = cnd_from_tradeoff(fed_std(eps, delta), convention="std")
    t = Tulap(eps, delta)
    x = np.linspace(-12.0, 12.0, 2401)
    assert np.max(np.abs(cnd.cdf(x) - t.cdf(x))) < 3e-13
    # and from an accountant TradeoffCurve (vertices rounded down by an ulp or so)
    cc = cnd_from_tradeoff(TradeoffCurve.from_approx_dp(eps, delta))
    assert np.max(np.abs(cc.cdf(x) - t.cdf(x))) < 1e-12


# ------------------------------------------------------------------------------------------
# Tulap numerics: tails, symmetry, quantiles
# ------------------------------------------------------------------------------------------


def test_tulap_upper_tail_no_cancellation() -> None:
    t = Tulap(1.0)
    for y in (5.3, 17.5, 40.0, 120.25, 700.4):
        ref = tulap_sf_mp(y, 1.0)
        assert abs(t.sf(y) / float(ref) - 1.0) <= 1e-13
        assert abs(t.logsf(y) - float(MP.log(ref))) <= 1e-13 * abs(float(MP.log(ref)))
        # mirror: the lower tail is the same number
        assert t.cdf(-y) == t.sf(y)
    # the textbook 1 - F_0 form loses everything below 1e-16; ours does not
    assert 1.0 - t.cdf(40.0) == 0.0 and t.sf(40.0) > 1e-18
    # log-space far beyond the smallest double
    for y in (2000.0, 1e5 + 0.3):
        ref_log = MP.log(tulap_sf_mp(y, 1.0))
        assert abs(t.logsf(y) - float(ref_log)) <= 1e-13 * abs(float(ref_log))
        assert t.sf(y) == 0.0 and math.isfinite(t.logsf(y))


@pytest.mark.parametrize(("eps", "delta"), [(1.0, 0.0), (1.0, 0.01), (0.3, 0.2), (3.0, 1e-6)])
def test_tulap_symmetry_and_exactness(eps: float, delta: float) -> None:
    t = Tulap(eps, delta)
    x = np.linspace(-30.0, 30.0, 1201)
    np.testing.assert_allclose(t.cdf(x) + t.cdf(-x), 1.0, rtol=0, atol=2e-16)
    np.testing.assert_array_equal(t.sf(x), t.cdf(-x))
    ref = np.array([float(tulap_cdf_mp(v, eps, delta)) for v in x[::40]])
    np.testing.assert_allclose(t.cdf(x[::40]), ref, rtol=2e-14, atol=1e-300)


def test_tulap_truncation_support() -> None:
    t = Tulap(1.0, 0.01)
    e = t.support_edge
    # q/2 = F_0(-edge): the truncated CDF is 0 below -edge and 1 above edge
    assert abs(float(tulap_cdf_mp(-e, 1.0)) - t.q / 2) <= 1e-17
    assert t.cdf(-e - 1e-9) == 0.0 and t.cdf(e + 1e-9) == 1.0 and t.sf(e + 1e-9) == 0.0
    assert t.ppf(0.0) == pytest.approx(-e, abs=1e-12) and t.ppf(1.0) == pytest.approx(e, abs=1e-12)
    assert Tulap(1.0).ppf(0.0) == -math.inf and Tulap(1.0).support_edge == math.inf
    # density integrates to 1 (piecewise constant between half-integers and the edges)
    edges = np.unique(np.concatenate([np.arange(-6, 7) + 0.5, [-e, e]]))
    edges = edges[(edges >= -e) & (edges <= e)]
    mids = 0.5 * (edges[1:] + edges[:-1])
    assert math.fsum(t.pdf(mids) * np.diff(edges)) == pytest.approx(1.0, abs=1e-14)


@pytest.mark.parametrize(
    "noise",
    [Tulap(1.0), Tulap(0.5, 0.01), Tulap(4.0), GaussianCND(0.7), cnd_from_tradeoff(g_paper(1.0), convention="paper")],
    ids=["tulap", "tulap-trunc", "tulap-eps4", "gauss", "lemma36-g1"],
)
def test_quantile_round_trip(noise: CanonicalNoise) -> None:
    u = np.array([1e-14, 1e-9, 1e-5, 0.003, 0.1, 0.25, 0.4, 0.5, 0.6, 0.9, 0.999, 1 - 1e-9])
    if isinstance(noise, Tulap) and noise.q > 0:
        u = u[(u > 1e-5) & (u < 1 - 1e-5)]  # near the truncation edge F is ill-conditioned in y
    y = noise.ppf(u)
    assert np.all(np.diff(y) > 0)
    back = noise.cdf(y)
    assert np.max(np.abs(back - u) / np.minimum(u, 1 - u)) <= 1e-9
    np.testing.assert_array_equal(noise.isf(u), -noise.ppf(u))
    # tulap_ppf (location form)
    if isinstance(noise, Tulap):
        np.testing.assert_allclose(tulap_ppf(u, 2.5, noise.b, noise.q), 2.5 + y, rtol=0, atol=1e-12)


# ------------------------------------------------------------------------------------------
# The CND property, checked by Neyman-Pearson on bins (does not assume threshold tests)
# ------------------------------------------------------------------------------------------


def np_tradeoff(p: np.ndarray, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Vertices (alpha, beta) of the exact tradeoff curve T(P, Q) of two pmfs on the same bins.

    Neyman-Pearson: reject H0 (P) on bins in decreasing order of q/p; with
    randomisation the curve is the polygon through the cumulative vertices.
    """
    with np.errstate(divide="ignore", invalid="ignore"):
        lr = np.where(p > 0, q / p, np.inf)
    order = np.argsort(-lr, kind="stable")
    a = np.concatenate([[0.0], np.cumsum(p[order])])
    b = 1.0 - np.concatenate([[0.0], np.cumsum(q[order])])
    return np.minimum(a, 1.0), np.maximum(b, 0.0)


def binned(noise: CanonicalNoise, edges: np.ndarray, shift: float) -> tuple[np.ndarray, np.ndarray]:
    """Probabilities of N and N + shift on the bins (-inf, e0], (e0, e1], ..., (e_last, inf)."""
    e = np.concatenate([[-np.inf], edges, [np.inf]])

    def probs(s: float) -> np.ndarray:
        lo, hi = e[:-1] - s, e[1:] - s
        # use the small side of each bin: cdf differences on the left, sf differences on the right
        left = noise.cdf(hi) - noise.cdf(lo)
        right = noise.sf(lo) - noise.sf(hi)
        return np.where(hi <= 0, left, right)

    return probs(0.0), probs(shift)


def curve_at(a: np.ndarray, b: np.ndarray, x: np.ndarray) -> np.ndarray:
    """The NP polygon at ``x`` (for repeated ``alpha`` the lowest ``beta`` is the tradeoff value)."""
    last = np.concatenate([a[1:] != a[:-1], [True]])
    return np.asarray(np.interp(x, a[last], b[last]), dtype=np.float64)


@pytest.mark.parametrize(("eps", "delta"), [(1.0, 0.0), (1.0, 0.01), (0.5, 0.001), (2.0, 0.05)])
def test_tulap_shift_tradeoff_is_exactly_f(eps: float, delta: float) -> None:
    """T(N, N+1) = f_{eps,delta}: Tulap densities are constant between half-integers (and
    the truncation edges), so binning there loses nothing and the NP curve is exact."""
    t = Tulap(eps, delta)
    e = min(t.support_edge, 60.0)
    edges = np.unique(np.concatenate([np.arange(-61, 62) + 0.5, [-e, e, -e + 1, e + 1]]))
    p, q = binned(t, edges, 1.0)
    # the support edge is a rounded float, so a bin just beyond it carries ~1e-18 of
    # rounding mass instead of 0; zero it (it would put a spurious vertex at alpha ~ 1e-18)
    p[p < 1e-16] = 0.0
    a, b = np_tradeoff(p, q)
    grid = np.linspace(0.0, 1.0, 2001)
    f = np.array([fed_std(eps, delta)(x) for x in grid])
    assert np.max(np.abs(curve_at(a, b, grid) - f)) <= 1e-12
    # property 3 (threshold tests) and the declared target agree too
    alphas = np.linspace(0.0, 1.0, 101)
    np.testing.assert_allclose(t.shift_tradeoff(alphas, convention="std"), f[::20], atol=1e-13)
    np.testing.assert_allclose(t.target(alphas, convention="std"), f[::20], atol=1e-15)
    np.testing.assert_allclose(t.shift_tradeoff(alphas, convention="paper"), f[::20][::-1], atol=1e-13)


@pytest.mark.parametrize("shift", [0.25, 0.5, 0.8])
def test_tulap_property1_smaller_shifts_are_more_private(shift: float) -> None:
    """CND property 1: T(N, N + s) >= f for s in [0, 1] (sensitivity below 1)."""
    eps, delta = 1.0, 0.01
    t = Tulap(eps, delta)
    e = t.support_edge
    base = np.arange(-61, 62) + 0.5
    edges = np.unique(np.concatenate([base, base + shift, [-e, e, -e + shift, e + shift]]))
    p, q = binned(t, edges, shift)
    a, b = np_tradeoff(p, q)
    f = np.array([fed_std(eps, delta)(x) for x in a])
    assert np.all(b >= f - 1e-12)


@pytest.mark.parametrize(
    ("noise", "target"),
    [
        (GaussianCND(1.0), g_std(1.0)),
        (GaussianCND(0.3), g_std(0.3)),
        (cnd_from_tradeoff(g_paper(1.0), convention="paper"), g_std(1.0)),
    ],
    ids=["gauss-1", "gauss-0.3", "lemma36-g1"],
)
def test_smooth_cnd_shift_tradeoff(noise: CanonicalNoise, target: Callable[[np.ndarray], np.ndarray]) -> None:
    """T(N, N+1) = G_mu for the Gaussian and for the Lemma 36 CND of G_1.

    Binning is post-processing, so the binned NP curve lies *above* T(N, N+1); with
    bins of width 1/200 it must be within 2e-3 of G_mu and never below it (beyond float
    error). Property 3 (threshold tests) must match G_mu to float precision.
    """
    width = 1.0 / 200.0
    lim = 12.0 / (noise.mu if isinstance(noise, GaussianCND) else 1.0)
    edges = np.arange(-lim, lim + width, width)
    p, q = binned(noise, edges, 1.0)
    a, b = np_tradeoff(p, q)
    f = target(a)
    assert np.all(b >= f - 1e-12)
    grid = np.linspace(0.0, 1.0, 401)
    assert np.max(curve_at(a, b, grid) - target(grid)) <= 2e-3
    alphas = np.linspace(1e-6, 1.0 - 1e-6, 301)
    np.testing.assert_allclose(noise.shift_tradeoff(alphas, convention="std"), target(alphas), atol=1e-12)


# ------------------------------------------------------------------------------------------
# Samplers (seeded, R12)
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("noise", "seed"),
    [
        (Tulap(1.0), 11),
        (Tulap(0.5, 0.05), 12),
        (Tulap(0.05), 13),
        (GaussianCND(2.0), 14),
        (cnd_from_tradeoff(g_paper(1.0), convention="paper"), 15),
        (cnd_from_tradeoff(TradeoffCurve.from_approx_dp(0.0, 0.1)), 16),
    ],
    ids=["tulap", "tulap-trunc", "tulap-eps0.05", "gauss", "lemma36-g1", "uniform-eps0"],
)
def test_sampler_matches_cdf(noise: CanonicalNoise, seed: int) -> None:
    a = noise.sample(rng=np.random.default_rng(seed), size=5000)
    b = noise.sample(rng=np.random.default_rng(seed), size=5000)
    assert isinstance(a, np.ndarray) and a.shape == (5000,)
    np.testing.assert_array_equal(a, b)  # reproducible from the seed
    assert stats.kstest(a, noise.cdf).pvalue > TEST_FAILURE_RATE
    # ... and the test has power: a 25% narrower distribution is rejected
    assert stats.kstest(a / 1.25, noise.cdf).pvalue < TEST_FAILURE_RATE
    if isinstance(noise, Tulap) and noise.q > 0:
        assert np.max(np.abs(a)) <= noise.support_edge
    assert isinstance(noise.sample(rng=np.random.default_rng(seed)), float)


def test_tulap_sample_location_and_rng_required() -> None:
    x = tulap_sample(10.0, math.exp(-1.0), 0.0, rng=np.random.default_rng(3), size=4000)
    assert stats.kstest(np.asarray(x) - 10.0, Tulap(1.0).cdf).pvalue > TEST_FAILURE_RATE
    with pytest.raises(TypeError):
        Tulap(1.0).sample(size=3)  # type: ignore[call-arg]
    with pytest.raises(InvalidArgument, match="numpy.random.Generator"):
        Tulap(1.0).sample(rng=np.random.RandomState(0), size=3)  # type: ignore[arg-type]
    with pytest.raises(InvalidArgument):
        GaussianCND(1.0).sample(rng=0, size=3)  # type: ignore[arg-type]


# ------------------------------------------------------------------------------------------
# general construction: conventions, curves, guarantees
# ------------------------------------------------------------------------------------------


def test_conventions_agree() -> None:
    a = cnd_from_tradeoff(g_paper(0.8), convention="paper")
    b = cnd_from_tradeoff(g_std(0.8), convention="std")
    c = cnd_from_tradeoff(lambda s: float(special.ndtr(special.ndtri(s) - 0.8)), convention="paper")
    x = np.linspace(-6, 6, 241)
    np.testing.assert_allclose(a.cdf(x), b.cdf(x), rtol=0, atol=1e-15)
    np.testing.assert_allclose(a.cdf(x), c.cdf(x), rtol=0, atol=0)
    assert a.source == "callable (paper)" and b.source == "callable (std)"
    np.testing.assert_allclose(
        a.target(np.array([0.1, 0.9]), convention="std"), g_std(0.8)(np.array([0.1, 0.9])), atol=1e-15
    )


def test_tail_accuracy_paper_callable() -> None:
    """A paper-convention callable keeps relative accuracy deep in the tail."""
    cnd = cnd_from_tradeoff(
        fed_std_paper := (lambda s: np.maximum(np.maximum(1.0 - math.e * (1.0 - s), (s) / math.e), 0.0)),
        convention="paper",
    )
    assert callable(fed_std_paper)
    for y in (-20.3, -60.0, -300.5):
        assert abs(cnd.cdf(y) / float(tulap_cdf_mp(y, 1.0)) - 1.0) <= 1e-12


def test_uniform_cnd_for_eps0() -> None:
    """f_{0,delta} has the uniform CND on [-1/(2 delta), 1/(2 delta)] [AV23]."""
    delta = 0.1
    cnd = cnd_from_tradeoff(TradeoffCurve.from_approx_dp(0.0, delta))
    x = np.linspace(-7.0, 7.0, 141)
    np.testing.assert_allclose(cnd.cdf(x), np.clip(0.5 + delta * x, 0.0, 1.0), atol=1e-12)


def test_curve_symmetrisation() -> None:
    # an asymmetric valid curve: its CND is built for the minorant of min(f, f^-1)
    f = TradeoffCurve((0.0, 0.1, 0.5, 1.0), (0.8, 0.4, 0.1, 0.0))
    cnd = cnd_from_tradeoff(f)
    g = cnd.curve
    xs = np.linspace(0.0, 1.0, 1001)
    assert np.all(g.std(xs) <= f.std(xs) + 1e-15)
    # symmetric: the vertex set is closed under reflection in the diagonal
    verts = {(round(a, 12), round(b, 12)) for a, b in zip(g.alphas, g.betas)}
    assert all((b, a) in verts or b == 0.0 or a == 0.0 for a, b in verts)
    assert cnd.shift_tradeoff(0.3, convention="std") == pytest.approx(float(g.std(0.3)), abs=1e-12)


def test_guarantees() -> None:
    assert Tulap(1.0).guarantee() == PureDP(1.0, Replace())
    assert Tulap(1.0, 0.01).guarantee() == ApproxDP(1.0, 0.01, Replace())
    assert GaussianCND(0.5).guarantee() == GDP(0.5, Replace())
    cnd = cnd_from_tradeoff(g_std(1.0), convention="std")
    g = cnd.guarantee()
    assert isinstance(g, TradeOff) and isinstance(cnd, TradeoffCND)
    xs = np.linspace(0.0, 1.0, 4001)
    exact = g_std(1.0)(xs)
    assert np.all(g.curve.std(xs) <= exact)  # a lower bound: never claims more than G_1
    assert np.max(exact - g.curve.std(xs)) < 2e-3
    # from a curve: the (symmetric) curve itself
    c = TradeoffCurve.from_approx_dp(1.0, 0.01)
    sym = cnd_from_tradeoff(c).guarantee().curve  # type: ignore[union-attr]
    assert c.dominates(sym)  # symmetrising never raises the curve ...
    assert np.max(c.std(xs) - sym.std(xs)) <= 1e-15  # ... and here moves it by an ulp at most


# ------------------------------------------------------------------------------------------
# validation (R5): one error type, the value named
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("make", "match"),
    [
        (lambda: Tulap(0.0), "epsilon"),
        (lambda: Tulap(-1.0), "epsilon"),
        (lambda: Tulap(float("nan")), "epsilon"),
        (lambda: Tulap(math.inf), "epsilon"),
        (lambda: Tulap(1.0, 1.0), "delta"),
        (lambda: Tulap(1.0, -0.1), "delta"),
        (lambda: Tulap.from_bq(1.0, 0.0), "b="),
        (lambda: GaussianCND(0.0), "mu"),
        (lambda: cnd_from_tradeoff(g_std(1.0)), "convention is required"),
        (lambda: cnd_from_tradeoff(g_std(1.0), convention="STD"), "convention"),  # type: ignore[arg-type]
        (lambda: cnd_from_tradeoff(g_paper(1.0), convention="std"), "paper convention"),
        (lambda: cnd_from_tradeoff(lambda a: 1.0 - np.asarray(a), convention="std"), "trivial"),
        (
            lambda: cnd_from_tradeoff(
                lambda a: max(0.0, 1.0 - 3.0 * a) if a < 0.2 else max(0.0, 0.5 - a), convention="std"
            ),
            "convex|non-increasing",
        ),
        (lambda: cnd_from_tradeoff(lambda a: max(0.0, 0.9 - 2.0 * a, 0.5 - 0.5 * a), convention="std"), "symmetric"),
        (lambda: cnd_from_tradeoff(TradeoffCurve.from_approx_dp(1.0), convention="paper"), "TradeoffCurve"),
        (lambda: cnd_from_tradeoff(3.0), "callable"),  # type: ignore[arg-type]
        (lambda: Tulap(1.0).cdf(float("nan")), "NaN"),
        (lambda: Tulap(1.0).ppf(1.5), r"\[0, 1\]"),
        (lambda: Tulap(1.0).target(0.5, convention="reflected"), "convention"),  # type: ignore[arg-type]
    ],
)
def test_invalid_arguments(make: Callable[[], object], match: str) -> None:
    with pytest.raises(InvalidArgument, match=match):
        make()


def test_scalar_and_array_returns() -> None:
    t = Tulap(1.0)
    assert isinstance(t.cdf(0.3), float) and isinstance(t.ppf(0.3), float)
    out = t.cdf(np.array([[0.1, 0.2], [0.3, 0.4]]))
    assert isinstance(out, np.ndarray) and out.shape == (2, 2)
    assert t.cdf(-math.inf) == 0.0 and t.cdf(math.inf) == 1.0 and t.logcdf(-math.inf) == -math.inf


def test_from_bq_records_a_conservative_guarantee() -> None:
    """epsilon = -log b and delta = q(1-b)/(2b(1-q)) are rounded up, never down (house style R6)."""
    import mpmath

    from semidp.mechanisms.cnd import Tulap as _T

    for b, q in [(0.3, 0.05), (math.exp(-1), 0.0), (0.9, 0.2), (1e-3, 1e-4)]:
        t = _T.from_bq(b, q)
        with mpmath.workdps(60):
            eps = -mpmath.log(mpmath.mpf(b))
            delta = mpmath.mpf(q) * (1 - mpmath.mpf(b)) / (2 * mpmath.mpf(b) * (1 - mpmath.mpf(q)))
            assert mpmath.mpf(t.epsilon) >= eps and mpmath.mpf(t.delta) >= delta
        assert t.epsilon == pytest.approx(float(eps), rel=1e-15)
        assert t.b == b and t.q == q  # the noise itself uses the given parameters
