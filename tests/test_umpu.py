"""The Semi-DP UMPU odds-ratio test (mechanisms.umpu) and its exact null (mechanisms.fnch).

* FNCH: against ``scipy.stats.nchypergeom_fisher`` (moderate n, where scipy is accurate to
  ~1e-9) and against an mpmath oracle (50 digits, closed form with loggamma) including
  far tails and n = 10**6.
* T-U1, T-U2 (``docs/reference/semi-dp.md`` Sec. 9, status V): m, phi*, p-values; tolerances are half a
  unit in the last printed digit (house style R10).
* Validation (R12): exact size alpha by summing over the support at every tested margin;
  p-value validity P(p <= u) <= u by seeded simulation; power monotone in theta by
  simulation with a fixed seed (common random numbers) and exactly.
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
from scipy import special, stats

from semidp.accountant.core.errors import InvalidArgument
from semidp.accountant.data.invariants import Margins
from semidp.accountant.guarantees.definitions import GDP, ApproxDP, PureDP, TradeOff
from semidp.accountant.guarantees.relations import Replace, SemiAdjacent
from semidp.accountant.profiles.tradeoff import TradeoffCurve
from semidp.mechanisms.cnd import CanonicalNoise, GaussianCND, Tulap, cnd_from_tradeoff
from semidp.mechanisms.fnch import FisherNoncentralHypergeometric as FNCH
from semidp.mechanisms.fnch import logpmf_reference
from semidp.mechanisms.umpu import (
    SemiDPOddsRatioTest,
    TableMargins,
    UMPUTestResult,
    umpu_odds_ratio_test,
)

MP = mpmath.MPContext()
MP.dps = 50

#: Relative accuracy we require of the FNCH table against the 50-digit oracle.
FNCH_RTOL = 1e-12


def half_unit(printed: str) -> float:
    decimals = len(printed.split(".")[1]) if "." in printed else 0
    return 0.5 * 10.0**-decimals


def rel_err_log(ours: float, ref: mpmath.mpf) -> float:
    """Relative error of exp(ours) against exp(ref) (both logs)."""
    return abs(float(MP.expm1(MP.mpf(ours) - ref)))


def g_paper(mu: float) -> Callable[[np.ndarray], np.ndarray]:
    return lambda s: special.ndtr(special.ndtri(s) - mu)


def fed_std(eps: float, delta: float) -> Callable[[float], float]:
    e = math.exp(eps)
    return lambda a: max(0.0, 1.0 - delta - e * a, (1.0 - delta - a) / e)


# ==========================================================================================
# FNCH null
# ==========================================================================================

MODERATE = [
    (5, 5, 4, 1.0),
    (10, 8, 9, 2.0),
    (300, 200, 250, 0.37),
    (40, 60, 70, 5.0),
    (2000, 3000, 2500, 1.7),
    (1, 0, 1, 3.0),
    (0, 7, 3, 1.0),
]


@pytest.mark.parametrize("case", MODERATE, ids=[str(c) for c in MODERATE])
def test_fnch_against_scipy_and_mpmath(case: tuple[int, int, int, float]) -> None:
    r1, r2, c1, th = case
    d = FNCH(r1, r2, c1, th)
    lo, logp = d.log_pmf_table()
    xs = np.arange(lo, lo + len(logp))
    assert (lo, lo + len(logp) - 1) == d.support()
    sp = stats.nchypergeom_fisher(r1 + r2, r1, c1, th).pmf(xs)
    ok = sp > 1e-250
    # scipy is itself only accurate to ~1e-9 relative (issue #6 measurements)
    np.testing.assert_allclose(np.exp(logp[ok]), sp[ok], rtol=1e-8)
    # the oracle: every entry, including the far tails, to 1e-12 relative
    pick = xs if len(xs) <= 60 else np.unique(np.r_[xs[:5], xs[-5:], xs[:: max(1, len(xs) // 40)]])
    ref = logpmf_reference(r1, r2, c1, th, pick)
    for x, rv in zip(pick, ref):
        assert rel_err_log(logp[x - lo], rv) <= FNCH_RTOL, (x, float(rv))
    assert math.fsum(np.exp(logp).tolist()) == pytest.approx(1.0, abs=1e-15)


def test_fnch_far_tails_beyond_double_range() -> None:
    """log p at the support ends of a moderately large table (p ~ 1e-600) to 1e-12 relative in p."""
    d = FNCH(3000, 2000, 2600, 0.8)
    lo, logp = d.log_pmf_table()
    hi = lo + len(logp) - 1
    pts = [lo, lo + 1, lo + 100, hi - 100, hi - 1, hi]
    ref = logpmf_reference(3000, 2000, 2600, 0.8, pts)
    for x, rv in zip(pts, ref):
        assert float(rv) < -700.0  # none representable as a double
        assert rel_err_log(logp[x - lo], rv) <= FNCH_RTOL
    assert np.all(d.pmf(np.array([lo, hi])) == 0.0) and np.all(np.isfinite(d.logpmf(np.array([lo, hi]))))


@pytest.mark.parametrize("theta", [1.0, 2.5])
def test_fnch_million(theta: float) -> None:
    """n = 10**6: bulk and tails to 1e-12 relative against the oracle."""
    d = FNCH(500_000, 500_000, 400_000, theta)
    lo, logp = d.log_pmf_table()
    mode = d.mode()
    pts = np.unique(
        np.clip(mode + np.array([-20000, -8000, -3000, -500, -1, 0, 1, 700, 3000, 9000, 20000]), lo, lo + len(logp) - 1)
    )
    ref = logpmf_reference(500_000, 500_000, 400_000, theta, pts, dps=40)
    for x, rv in zip(pts, ref):
        assert rel_err_log(logp[x - lo], rv) <= FNCH_RTOL, (x, float(rv))


def test_fnch_upper_tail_sum() -> None:
    """sf far in the tail (~1e-105; scipy returns 0 here) against an mpmath tail sum."""
    d = FNCH(500_000, 500_000, 500_000, 1.0)
    x = 255_500
    lsf = float(d.logsf(x))
    terms = logpmf_reference(500_000, 500_000, 500_000, 1.0, np.arange(x + 1, x + 1401), dps=40)
    ref = MP.log(MP.fsum(MP.exp(t) for t in terms))  # the omitted terms are < e^-120 relative
    assert -260.0 < float(ref) < -230.0
    assert rel_err_log(lsf, ref) <= 1e-11
    assert float(d.logcdf(244_499)) == pytest.approx(lsf, rel=1e-13)  # symmetric margins


def test_fnch_accessors_and_validation() -> None:
    d = FNCH(10, 8, 9, 2.0)
    assert d.logpmf(0.5) == -math.inf and d.logpmf(-1) == -math.inf and d.logpmf(100) == -math.inf
    assert float(d.cdf(9)) == pytest.approx(1.0, abs=1e-15) and float(d.sf(0)) == pytest.approx(1.0, abs=1e-15)
    assert d.mean() == pytest.approx(stats.nchypergeom_fisher(18, 10, 9, 2.0).mean(), rel=1e-9)
    s = d.sample(rng=np.random.default_rng(1), size=20000)
    assert isinstance(s, np.ndarray) and abs(s.mean() - d.mean()) < 4 * 1.1 / math.sqrt(20000) * 2
    for bad in [(-1, 2, 1, 1.0), (2, 2, 5, 1.0), (2, 2, 1, 0.0), (2, 2, 1, math.nan), (2.5, 2, 1, 1.0)]:
        with pytest.raises(InvalidArgument):
            FNCH(*bad)  # type: ignore[arg-type]


# ==========================================================================================
# T-U1, T-U2
# ==========================================================================================

TU1 = TableMargins((5, 5), (4, 6))
TU1_CASES = {
    "tulap-1-0": (
        Tulap(1.0),
        "4.51867827",
        ("0.00486768", "0.01323171", "0.03596752", "0.09776987", "0.26576605"),
        {2.0: "0.5", 3.7: "0.12014987", 5.2: "0.02820884"},
    ),
    "tulap-1-0.01": (
        Tulap(1.0, 0.01),
        "4.44742349",
        ("0", "0.00894962", "0.03432759", "0.10331207", "0.29083131"),
        {3.7: "0.11572859", 5.2: "0.02278983"},
    ),
    "gauss-1": (
        GaussianCND(1.0),
        "4.12440303",
        ("0.00001858", "0.00089083", "0.01681823", "0.13042104", "0.45049809"),
        {3.7: "0.09437226", 5.2: "0.00638049"},
    ),
}


def test_tu1_null() -> None:
    lo, logp = TU1.null(1.0).log_pmf_table()
    assert lo == 0
    np.testing.assert_allclose(np.exp(logp) * 42, [1, 10, 20, 10, 1], rtol=1e-14)


@pytest.mark.parametrize("name", list(TU1_CASES), ids=[f"T-U1-{k}" for k in TU1_CASES])
def test_tu1(name: str) -> None:
    noise, m, phi, pvals = TU1_CASES[name]
    t = SemiDPOddsRatioTest(TU1, noise, theta0=1.0, alpha=0.05)
    assert abs(t.m - float(m)) <= half_unit(m)
    got = t.phi(np.arange(5))
    for g, p in zip(np.atleast_1d(got), phi):
        # phi(0) for the Gaussian is printed as 1.858e-5 (4 significant digits): written
        # here as 0.00001858, whose half unit (5e-9) is the same tolerance
        assert abs(g - float(p)) <= half_unit(p)
    for z, p in pvals.items():
        assert abs(t.pvalue(z) - float(p)) <= half_unit(p)
    assert t.size() == pytest.approx(0.05, rel=1e-13)


def test_tu1_lemma36_cnd_gives_the_tulap_test() -> None:
    """The Lemma 36 CND of f_{1,0} is Tulap, so the test is the same to ~1e-12."""
    t = SemiDPOddsRatioTest(TU1, cnd_from_tradeoff(fed_std(1.0, 0.0), convention="std"))
    assert abs(t.m - 4.51867827) <= 5e-9
    assert abs(t.pvalue(3.7) - 0.12014987) <= 5e-9


TU2 = TableMargins((10, 8), (9, 9))


def test_tu2() -> None:
    lo, logp = TU2.null(2.0).log_pmf_table()
    assert (lo, lo + len(logp) - 1) == (1, 9)
    printed = (
        "0.0000097",
        "0.0006987",
        "0.01304234",
        "0.09129637",
        "0.27388912",
        "0.36518549",
        "0.20867743",
        "0.04471659",
        "0.00248426",
    )
    for v, p in zip(np.exp(logp), printed):
        assert abs(v - float(p)) <= half_unit(p)
    tul = SemiDPOddsRatioTest(TU2, Tulap(1.0), theta0=2.0)
    assert abs(tul.m - 8.55853955) <= half_unit("8.55853955")
    assert abs(tul.pvalue(3.7) - 0.89805643) <= half_unit("0.89805643")
    assert abs(tul.pvalue(5.2) - 0.64945168) <= half_unit("0.64945168")
    gau = SemiDPOddsRatioTest(TU2, GaussianCND(1.0), theta0=2.0)
    assert abs(gau.m - 8.20070836) <= half_unit("8.20070836")
    assert abs(gau.pvalue(5.2) - 0.66200841) <= half_unit("0.66200841")


# ==========================================================================================
# exact size
# ==========================================================================================

NOISES: list[CanonicalNoise] = [Tulap(1.0), Tulap(0.5, 0.01), GaussianCND(1.0), GaussianCND(0.2)]


def size_at(t: SemiDPOddsRatioTest, m: float) -> float:
    """The size of the one-sided test with threshold ``m`` (independent re-summation)."""
    lo, logp = t.margins.null(t.theta0).log_pmf_table()
    xs = lo + np.arange(len(logp), dtype=np.float64)
    sign = 1.0 if t.alternative == "greater" else -1.0
    return math.fsum((np.exp(logp) * t.noise.cdf(sign * (xs - m))).tolist())


def assert_size_is_alpha(t: SemiDPOddsRatioTest) -> None:
    """size(m) = alpha to 1e-12 relative, or else alpha lies between the sizes at the two
    neighbouring doubles of m (then no double m does better: near the edge of a truncated
    Tulap the size moves by more than 1e-12 relative per ulp of m)."""
    s = t.size()
    assert s == pytest.approx(size_at(t, t.m), rel=1e-14, abs=1e-300)
    if abs(s - t.alpha) <= 1e-12 * t.alpha:
        return

    def neighbour(direction: float) -> float:
        # the nearest double m' in `direction` at which the size changes (x - m' is rounded,
        # so several doubles m' can give the same arguments)
        mm = t.m
        for _ in range(64):
            mm = math.nextafter(mm, direction)
            v = size_at(t, mm)
            if v != s:
                return v
        return s

    a, b = neighbour(-math.inf), neighbour(math.inf)
    assert min(a, b) * (1 - 1e-13) <= t.alpha <= max(a, b) * (1 + 1e-13), (s, a, b)


def all_margins(n: int) -> list[TableMargins]:
    return [TableMargins((r, n - r), (c, n - c)) for r in range(n + 1) for c in range(n + 1)]


@pytest.mark.parametrize("n", [1, 2, 3, 5, 8, 13])
def test_size_is_alpha_at_every_margin(n: int) -> None:
    """Size exactly alpha (summing the support) for every margin with n records, incl. degenerate."""
    for i, mg in enumerate(all_margins(n)):
        noise = NOISES[i % len(NOISES)]
        alpha = (0.01, 0.05, 0.3)[i % 3]
        theta0 = (0.5, 1.0, 2.0)[(i // 3) % 3]
        for alt in ("greater", "less"):
            t = SemiDPOddsRatioTest(mg, noise, theta0, alpha, alt)
            assert abs(t.size() - alpha) <= 1e-12 * alpha, (mg, noise, alt)


@pytest.mark.parametrize(
    "mg",
    [
        TableMargins((1000, 1000), (700, 1300)),
        TableMargins((60_000, 40_000), (50_000, 50_000)),
        TableMargins((500_000, 500_000), (500_000, 500_000)),
        TableMargins((3, 999_997), (500_000, 500_000)),
    ],
    ids=["n2e3", "n1e5", "n1e6", "n1e6-skewed"],
)
@pytest.mark.parametrize(
    "noise", [Tulap(1.0), Tulap(0.2, 1e-6), GaussianCND(0.5)], ids=["tulap", "tulap-trunc", "gauss"]
)
def test_size_large_margins(mg: TableMargins, noise: CanonicalNoise) -> None:
    t = SemiDPOddsRatioTest(mg, noise, theta0=1.3, alpha=0.05)
    # m is a double near n/4: its rounding (half an ulp) moves the size by <~1e-13 relative
    assert abs(t.size() - 0.05) <= 1e-12 * 0.05


@settings(max_examples=40, deadline=None, derandomize=True)
@given(
    r1=st.integers(0, 400),
    r2=st.integers(0, 400),
    c=st.floats(0.0, 1.0),
    theta0=st.floats(0.05, 20.0),
    alpha=st.floats(1e-6, 0.5),
    noise=st.sampled_from([Tulap(1.0), Tulap(0.3, 0.05), GaussianCND(0.5), GaussianCND(3.0)]),
    alt=st.sampled_from(["greater", "less"]),
)
def test_size_property(
    r1: int, r2: int, c: float, theta0: float, alpha: float, noise: CanonicalNoise, alt: str
) -> None:
    """Hypothesis: size = alpha for random margins, null odds ratio, level and noise."""
    n = r1 + r2
    if n == 0:
        return
    c1 = round(c * n)
    t = SemiDPOddsRatioTest(TableMargins((r1, r2), (c1, n - c1)), noise, theta0, alpha, alt)  # type: ignore[arg-type]
    assert_size_is_alpha(t)
    # phi is a probability and monotone in the direction of the alternative
    lo, hi = t.margins.support()
    ph = np.atleast_1d(np.asarray(t.phi(np.arange(lo, hi + 1))))
    assert np.all((ph >= 0) & (ph <= 1))
    d = np.diff(ph)
    assert np.all(d >= -1e-15) if alt == "greater" else np.all(d <= 1e-15)


def test_size_exact_in_mpmath() -> None:
    """Re-sum the size in 50-digit arithmetic at the float m: equals alpha to ~1e-15."""
    b = MP.exp(-1)

    def tul(y: mpmath.mpf) -> mpmath.mpf:
        def low(v: mpmath.mpf) -> mpmath.mpf:
            k = MP.nint(v)
            return b ** (-k) / (1 + b) * (b + (v - k + MP.mpf(1) / 2) * (1 - b))

        return low(y) if y <= 0 else 1 - low(-y)

    for mg, th in [(TU1, 1.0), (TU2, 2.0), (TableMargins((40, 25), (30, 35)), 0.7)]:
        t = SemiDPOddsRatioTest(mg, Tulap(1.0), theta0=th)
        lo, hi = mg.support()
        xs = list(range(lo, hi + 1))
        lps = logpmf_reference(mg.rows[0], mg.rows[1], mg.cols[0], th, xs)
        size = MP.fsum(MP.exp(lp) * tul(MP.mpf(x) - MP.mpf(t.m)) for x, lp in zip(xs, lps))
        assert abs(float(size) - 0.05) <= 1e-15


# ==========================================================================================
# p-values: validity, identity with phi*, far tails
# ==========================================================================================


@pytest.mark.parametrize(
    ("noise", "seed"),
    [(Tulap(1.0), 101), (Tulap(0.5, 0.02), 102), (GaussianCND(0.7), 103)],
    ids=["tulap", "tulap-trunc", "gauss"],
)
def test_pvalue_validity_by_simulation(noise: CanonicalNoise, seed: int) -> None:
    """P(p(Z) <= u) <= u under H0 (theta = theta0 and theta < theta0), seeded, 8000 draws.

    The bound allows 4 binomial standard deviations (false-failure rate < 1e-4 per check).
    """
    mg = TableMargins((25, 20), (22, 23))
    test = SemiDPOddsRatioTest(mg, noise, theta0=1.5, alpha=0.05)
    rng = np.random.default_rng(seed)
    n_sim = 8000
    for theta in (1.5, 0.8):
        x = mg.null(theta).sample(rng=rng, size=n_sim)
        z = np.asarray(x, dtype=np.float64) + np.asarray(noise.sample(rng=rng, size=n_sim))
        p = np.array([test.pvalue(float(v)) for v in z])
        for u in (0.01, 0.05, 0.2, 0.5):
            frac = float(np.mean(p <= u))
            assert frac <= u + 4 * math.sqrt(u * (1 - u) / n_sim), (theta, u, frac)
        if theta == 1.5:  # at the boundary the p-value is exactly uniform-calibrated at alpha
            assert abs(float(np.mean(p <= 0.05)) - 0.05) <= 4 * math.sqrt(0.05 * 0.95 / n_sim)


def test_pvalue_identity_with_phi() -> None:
    """p(Z) <= alpha iff Z >= m, so P(p(Z) <= alpha | X = x) = phi*(x) = F_N(x - m) (Lemma 47)."""
    for noise in (Tulap(1.0), GaussianCND(1.0), Tulap(1.0, 0.01)):
        t = SemiDPOddsRatioTest(TU2, noise, theta0=2.0, alpha=0.05)
        assert t.pvalue(t.m) == pytest.approx(0.05, rel=1e-13)
        zs = np.linspace(-5, 15, 81)
        ps = np.array([t.pvalue(float(z)) for z in zs])
        assert np.all(np.diff(ps) <= 1e-16)  # non-increasing in Z
        assert np.all((ps <= 0.05) == (zs >= t.m - 1e-12))
        for x in range(1, 10):
            assert t.phi(x) == pytest.approx(float(noise.sf(t.m - x)), abs=1e-16)


def test_pvalue_far_tails_against_mpmath() -> None:
    b = MP.exp(-1)

    def tul(y: mpmath.mpf) -> mpmath.mpf:
        def low(v: mpmath.mpf) -> mpmath.mpf:
            k = MP.nint(v)
            return b ** (-k) / (1 + b) * (b + (v - k + MP.mpf(1) / 2) * (1 - b))

        return low(y) if y <= 0 else 1 - low(-y)

    cases = [
        ((5, 5), (4, 6), 1.0, 60.5),
        ((200, 300), (250, 250), 1.5, 400.3),
        ((200, 300), (250, 250), 1.5, 1000.0),
        ((200, 300), (250, 250), 1.5, -60.0),
    ]
    for rows, cols, th, z in cases:
        t = SemiDPOddsRatioTest(TableMargins(rows, cols), Tulap(1.0), theta0=th)
        lo, hi = t.margins.support()
        xs = list(range(lo, hi + 1))
        lps = logpmf_reference(rows[0], rows[1], cols[0], th, xs)
        ref = MP.fsum(MP.exp(lp) * tul(MP.mpf(x) - MP.mpf(z)) for x, lp in zip(xs, lps))
        assert rel_err_log(t.log_pvalue(z), MP.log(ref)) <= 1e-12, (rows, z)
    # far beyond the double range the p-value is 0.0 but its log is exact
    t = SemiDPOddsRatioTest(TableMargins((200, 300), (250, 250)), Tulap(1.0), theta0=1.5)
    assert t.pvalue(1000.0) == 0.0 and -900.0 < t.log_pvalue(1000.0) < -800.0


# ==========================================================================================
# power
# ==========================================================================================


def test_power_monotone_in_theta_by_simulation() -> None:
    """Seeded simulation with common random numbers: X by inverse transform (stochastically
    increasing in theta) and the same noise draws, so rejections are nested and the estimated
    power is monotone; each estimate is also within 4 sd of the exact power."""
    mg = TableMargins((30, 30), (30, 30))
    noise = Tulap(1.0)
    test = SemiDPOddsRatioTest(mg, noise, theta0=1.0, alpha=0.05)
    rng = np.random.default_rng(7)
    n_sim = 4000
    u = rng.random(n_sim)
    nz = np.asarray(noise.sample(rng=rng, size=n_sim))
    est = []
    for theta in (1.0, 1.5, 2.5, 4.0, 8.0):
        lo, logp = mg.null(theta).log_pmf_table()
        cum = np.cumsum(np.exp(logp))
        x = lo + np.minimum(np.searchsorted(cum / cum[-1], u, side="right"), len(cum) - 1)
        rej = (x + nz) >= test.m  # p(Z) <= alpha iff Z >= m
        est.append(float(rej.mean()))
        exact = test.power(theta)
        assert abs(est[-1] - exact) <= 4 * math.sqrt(exact * (1 - exact) / n_sim) + 1e-12
    assert all(b >= a for a, b in itertools.pairwise(est)) and est[-1] > 0.5
    grid = np.exp(np.linspace(-2, 3, 41))
    pw = [test.power(float(th)) for th in grid]
    assert all(b > a for a, b in itertools.pairwise(pw))


# ==========================================================================================
# alternatives
# ==========================================================================================


def test_less_is_the_mirror_of_greater() -> None:
    """Swapping the columns maps X11 -> n1. - X11 and theta -> 1/theta: 'less' at theta0 is
    'greater' at 1/theta0 on the mirrored table, with Z -> n1. - Z."""
    mg = TableMargins((12, 9), (10, 11))
    mirror = TableMargins((12, 9), (11, 10))
    for noise in (Tulap(1.0), GaussianCND(0.8)):
        less = SemiDPOddsRatioTest(mg, noise, theta0=1.7, alternative="less")
        gr = SemiDPOddsRatioTest(mirror, noise, theta0=1 / 1.7, alternative="greater")
        assert less.m == pytest.approx(12 - gr.m, abs=1e-9)
        for z in (2.3, 6.0, 9.9):
            assert less.pvalue(z) == pytest.approx(gr.pvalue(12 - z), rel=1e-10)


@pytest.mark.parametrize(
    "noise", [Tulap(1.0), GaussianCND(1.0), Tulap(0.7, 0.01)], ids=["tulap", "gauss", "tulap-trunc"]
)
def test_two_sided_unbiased(noise: CanonicalNoise) -> None:
    mg = TableMargins((14, 11), (12, 13))
    t = SemiDPOddsRatioTest(mg, noise, theta0=1.3, alpha=0.05, alternative="two-sided")
    assert t.m_lower is not None and t.m_lower < t.m
    assert abs(t.size() - 0.05) <= 1e-12
    # local unbiasedness: Cov(X, phi(X)) = 0 under theta0
    lo, logp = mg.null(1.3).log_pmf_table()
    xs = lo + np.arange(len(logp))
    p = np.exp(logp)
    ph = np.asarray(t.phi(xs))
    mean = float(np.sum(p * xs))
    assert abs(float(np.sum(p * (xs - mean) * ph))) <= 1e-13
    # unbiased: power >= alpha everywhere, minimum at theta0
    grid = np.exp(np.linspace(-2.5, 2.5, 51)) * 1.3
    pw = np.array([t.power(float(th)) for th in grid])
    assert np.all(pw >= 0.05 - 1e-13)
    # p-values: alpha on the boundary, 1 at the peak, valid decision rule
    assert t.pvalue(t.m) == pytest.approx(0.05, rel=1e-9)
    assert t.pvalue(t.m_lower) == pytest.approx(0.05, rel=1e-9)
    for z in np.linspace(t.m_lower - 3, t.m + 3, 25):
        assert (t.pvalue(float(z)) <= 0.05 + 1e-12) == (z <= t.m_lower + 1e-9 or z >= t.m - 1e-9)


def test_two_sided_degenerate_support() -> None:
    mg = TableMargins((0, 6), (2, 4))  # X11 = 0 always
    t = SemiDPOddsRatioTest(mg, Tulap(1.0), alternative="two-sided")
    assert abs(t.size() - 0.05) <= 1e-13
    assert t.m_lower == pytest.approx(-t.m, abs=1e-12)


# ==========================================================================================
# result object, guarantee, end to end
# ==========================================================================================


def test_result_object_and_guarantee() -> None:
    rel = SemiAdjacent(Replace(), Margins((("A",), ("B",))), 3)
    r = SemiDPOddsRatioTest(TU1, Tulap(1.0)).result(3.7)
    assert isinstance(r, UMPUTestResult)
    assert (r.statistic, r.alternative, r.alpha, r.theta0) == (3.7, "greater", 0.05, 1.0)
    assert r.reject is False and r.reject_at(0.2) is True and r.m_lower is None
    assert r.guarantee == PureDP(1.0, rel)
    assert SemiDPOddsRatioTest(TU1, Tulap(1.0, 0.01)).guarantee == ApproxDP(1.0, 0.01, rel)
    assert SemiDPOddsRatioTest(TU1, GaussianCND(1.0)).guarantee == GDP(1.0, rel)
    g = SemiDPOddsRatioTest(TU1, cnd_from_tradeoff(TradeoffCurve.from_gdp(1.0))).guarantee
    assert isinstance(g, TradeOff) and g.relation == rel
    assert "UMPUTestResult(statistic=3.7, pvalue=0.1201" in repr(r)
    lo, hi = r.confidence_interval(0.95)
    assert 0.0 < lo < 1.0 and hi == math.inf
    # the lower bound is where the p-value equals 1 - level
    t2 = SemiDPOddsRatioTest(TU1, Tulap(1.0), theta0=lo)
    assert t2.pvalue(3.7) == pytest.approx(0.05, rel=1e-8)


def test_confidence_interval_coverage() -> None:
    """Seeded: the one-sided 90% lower bound covers the true theta in >= 90% - 4 sd of draws."""
    mg = TableMargins((20, 20), (20, 20))
    noise = GaussianCND(1.0)
    test = SemiDPOddsRatioTest(mg, noise, theta0=1.0)
    rng = np.random.default_rng(5)
    n_sim, theta = 200, 2.0
    x = mg.null(theta).sample(rng=rng, size=n_sim)
    z = np.asarray(x) + np.asarray(noise.sample(rng=rng, size=n_sim))
    cover = [test.result(float(v)).confidence_interval(0.9).low <= theta for v in z]
    assert np.mean(cover) >= 0.9 - 4 * math.sqrt(0.09 / n_sim)


def test_end_to_end_and_reproducible() -> None:
    table = [[30, 10], [12, 28]]
    a = umpu_odds_ratio_test(table, noise=Tulap(1.0), rng=np.random.default_rng(2024))
    b = umpu_odds_ratio_test(table, noise=Tulap(1.0), rng=np.random.default_rng(2024))
    assert a.statistic == b.statistic and a.pvalue == b.pvalue
    assert a.margins == TableMargins((40, 40), (42, 38))
    assert a.reject and a.pvalue < 1e-3 and abs(a.size - 0.05) <= 1e-14
    with pytest.raises(TypeError):
        umpu_odds_ratio_test(table, noise=Tulap(1.0))  # type: ignore[call-arg]
    with pytest.raises(InvalidArgument):
        umpu_odds_ratio_test(table, noise=Tulap(1.0), rng=np.random.RandomState(1))  # type: ignore[arg-type]


def test_million_records() -> None:
    mg = TableMargins((500_000, 500_000), (500_000, 500_000))
    t = SemiDPOddsRatioTest(mg, Tulap(1.0), theta0=1.0)
    r = t.result(250_000 + 2000.5)  # sd of X11 is 250: eight standard deviations out
    assert abs(r.size - 0.05) <= 1e-12 * 0.05
    assert 0.0 < r.pvalue < 1e-12 and r.reject


@pytest.mark.parametrize(
    ("make", "match"),
    [
        (lambda: TableMargins((3, 2), (4, 2)), "same total"),
        (lambda: TableMargins((3, -2), (1, 0)), "non-negative"),
        (lambda: TableMargins((0, 0), (0, 0)), "empty"),
        (lambda: TableMargins.from_table([[1, 2, 3]]), "2x2"),
        (lambda: SemiDPOddsRatioTest(TU1, Tulap(1.0), alpha=0.0), "alpha"),
        (lambda: SemiDPOddsRatioTest(TU1, Tulap(1.0), alpha=1.0), "alpha"),
        (lambda: SemiDPOddsRatioTest(TU1, Tulap(1.0), theta0=0.0), "theta0"),
        (lambda: SemiDPOddsRatioTest(TU1, Tulap(1.0), alternative="bigger"), "alternative"),  # type: ignore[arg-type]
        (lambda: SemiDPOddsRatioTest(TU1, "tulap"), "canonical noise"),  # type: ignore[arg-type]
        (lambda: SemiDPOddsRatioTest(TU1, Tulap(1.0)).release(5, rng=np.random.default_rng(0)), "x11"),
        (lambda: SemiDPOddsRatioTest(TU1, Tulap(1.0)).pvalue(math.nan), "z"),
        (lambda: SemiDPOddsRatioTest(TU1, Tulap(1.0)).result(1.0).confidence_interval(1.0), "confidence"),
    ],
)
def test_invalid_arguments(make: Callable[[], object], match: str) -> None:
    with pytest.raises(InvalidArgument, match=match):
        make()
