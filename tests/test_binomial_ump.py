"""The DP-UMP binomial test (mechanisms.binomial_ump, mechanisms.binomial_tail).

Provenance of the golden values
-------------------------------
The authors' R package binomialDP 1.0.0 (J. Awan, A. Slavković, T. Tran; CRAN) publishes
example outputs in its pkgdown site, stored in the GitHub repository ``tranntran/binomialDP``
(``docs/`` at commit 158f39232b4e62e4f5d37c5025b9633ba0d1da46; also rendered at
https://rdrr.io/github/tranntran/binomialDP/ and https://tranntran.github.io/binomialDP/):

* ``docs/reference/tulap.html``: ``ptulap(0.5, 0, 0.3, 0.05)`` -> 0.7834008;
* ``docs/reference/dpPropTest.html``: ``dpPropTest(9, 30, 0.5, exp(-1), 0.05, "less", 0.05)``
  -> p-value 0.02069401, upper limit 0.46070737;
* ``docs/reference/CIOneSide.html``: ``CILower(0.05, 7, 10, exp(-1), 0.05)`` -> 0.3844819,
  ``CIUpper(0.05, 2, 10, exp(-1), 0.05)`` -> 0.517379;
* ``docs/reference/CITwoSide.html``: ``CITwoSide(0.05, 18, 30, exp(-1), 0.05)`` ->
  0.4107206 0.7667096;
* ``docs/reference/pvalueOneSide.html`` / ``pvalueTwoSide.html``: for one seeded release
  ``z`` (``set.seed(2020)``, not reproducible without R's generators): ``pvalLeft`` 0.1264381,
  ``pvalRight`` 0.8735619, ``pvalTwoSide`` 0.2528762 (consistency check, see the test);
* ``docs/articles/binomialDP.html`` (vignette; eps = 1, delta = 0.01, n = 30): ten releases
  printed to 2 decimals with their left/right p-values, two-sided p-values, lower
  confidence bounds and two-sided intervals, printed to 2 digits.

binomialDP's ``b`` and ``q`` are Tulap's parameters: ``Tulap.from_bq(b, q)``. Its
``pvalRight`` is our ``"greater"`` p-value and ``pvalLeft`` our ``"less"`` (as in the
package version used to build those pages; an earlier commit had the two names
swapped). Tolerances are half a unit in the last printed digit (house style R10), plus,
for the vignette, the effect of the releases being printed to 2 decimals.

The NeurIPS paper [AS18] reports its results as figures only; where no published number
exists, references are computed independently here: brute-force summation over the whole
support (scipy's boost-based ``binom.pmf`` and the Tulap CDF), a linear program over all
(eps, delta)-DP tests (the UMP property itself), mpmath at 30-40 digits, and the moment
generating function closed form for releases beyond the support.
"""

from __future__ import annotations

import itertools
import math

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import optimize, stats

from semidp.accountant.core.errors import InvalidArgument
from semidp.accountant.guarantees.definitions import ApproxDP, PureDP
from semidp.accountant.guarantees.relations import Replace
from semidp.mechanisms.binomial_tail import binom_logpmf, log_tail
from semidp.mechanisms.binomial_ump import (
    BinomialTestResult,
    BinomialUMPTest,
    ConfidenceInterval,
    binomial_log_pvalue,
    binomial_pvalue,
    binomial_ump_test,
)
from semidp.mechanisms.cnd import GaussianCND, Tulap, tulap_cdf

MP = mpmath.MPContext()
MP.dps = 40
U = 2.0**-53
B1 = math.exp(-1.0)  # binomialDP's b = exp(-1)


def half_unit(printed: str) -> float:
    decimals = len(printed.split(".")[1]) if "." in printed else 0
    return 0.5 * 10.0**-decimals


def brute_tail(n: int, theta: float, noise: Tulap, z: float, sign: float) -> float:
    """Sum over the whole support with scipy's binom.pmf (boost, ~1e-15) and the Tulap CDF."""
    x = np.arange(n + 1, dtype=np.float64)
    return math.fsum((stats.binom.pmf(x, n, theta) * noise.cdf(sign * (x - z))).tolist())


def brute_size(test: BinomialUMPTest, m: float | None = None) -> float:
    x = np.arange(test.n + 1, dtype=np.float64)
    mm = test.m if m is None else m
    if test.alternative == "greater":
        ph = test.noise.cdf(x - mm)
    elif test.alternative == "less":
        ph = test.noise.cdf(mm - x)
    else:
        assert test.m_lower is not None
        ph = test.noise.cdf(x - mm) + test.noise.cdf(test.m_lower - x)
    return math.fsum((stats.binom.pmf(x, test.n, test.theta0) * ph).tolist())


# ==========================================================================================
# binomialDP goldens
# ==========================================================================================


def test_binomialdp_ptulap() -> None:
    """tulap.html: ptulap(0.5, 0, 0.3, 0.05) = 0.7834008 (our Tulap, binomialDP's b, q)."""
    t = Tulap.from_bq(0.3, 0.05)
    assert abs(t.cdf(0.5) - 0.7834008) <= half_unit("0.7834008")
    assert tulap_cdf(0.5, 0.0, 0.3, 0.05) == t.cdf(0.5)


def test_binomialdp_dpproptest_less() -> None:
    """dpPropTest.html: Z = 9, n = 30, theta0 = 0.5, b = e^-1, q = 0.05, "less", alpha = 0.05."""
    t = BinomialUMPTest(30, 0.5, Tulap.from_bq(B1, 0.05), alpha=0.05, alternative="less")
    r = t.result(9.0)
    assert abs(r.pvalue - 0.02069401) <= half_unit("0.02069401")
    ci = r.confidence_interval(0.95)
    assert ci.low == 0.0 and abs(ci.high - 0.46070737) <= half_unit("0.46070737")
    assert r.reject  # 0.0207 <= 0.05


@pytest.mark.parametrize(
    ("alternative", "z", "n", "printed"),
    [("greater", 7.0, 10, "0.3844819"), ("less", 2.0, 10, "0.517379")],
    ids=["CILower", "CIUpper"],
)
def test_binomialdp_one_sided_intervals(alternative: str, z: float, n: int, printed: str) -> None:
    """CIOneSide.html: CILower(0.05, 7, 10, e^-1, 0.05), CIUpper(0.05, 2, 10, e^-1, 0.05)."""
    t = BinomialUMPTest(n, 0.5, Tulap.from_bq(B1, 0.05), alternative=alternative)  # type: ignore[arg-type]
    ci = t.result(z).confidence_interval(0.95)
    bound = ci.low if alternative == "greater" else ci.high
    assert abs(bound - float(printed)) <= half_unit(printed)
    # the bound is the root of the one-sided p-value at level 1 - 0.95
    side = "greater" if alternative == "greater" else "less"
    p = binomial_pvalue(z, n=n, theta0=bound, noise=Tulap.from_bq(B1, 0.05), alternative=side)  # type: ignore[arg-type]
    assert p == pytest.approx(0.05, rel=1e-9)


def test_binomialdp_two_sided_interval() -> None:
    """CITwoSide.html: CITwoSide(alpha = 0.05, Z = 18, size = 30, b = e^-1, q = 0.05)."""
    t = BinomialUMPTest(30, 0.5, Tulap.from_bq(B1, 0.05), alternative="two-sided")
    lo, hi = t.result(18.0).confidence_interval(0.95)
    assert abs(lo - 0.4107206) <= half_unit("0.4107206")
    assert abs(hi - 0.7667096) <= half_unit("0.7667096")


def test_binomialdp_seeded_pvalue_example_consistency() -> None:
    """pvalueOneSide.html / pvalueTwoSide.html print pvalLeft 0.1264381, pvalRight 0.8735619 and
    pvalTwoSide 0.2528762 for one seeded release (n = 10, theta0 = 0.5, b = 0.3, q = 0.05) whose
    value is not printed. We recover z from pvalLeft and check the other two. This is a weak
    check (at theta0 = 1/2 both follow from symmetry), but it pins the conventions: right =
    P(X+N >= z), left = P(X+N <= z), two-sided = P(|X+N-5| >= |z-5|)."""
    noise = Tulap.from_bq(0.3, 0.05)

    def left(z: float) -> float:
        return binomial_pvalue(z, n=10, theta0=0.5, noise=noise, alternative="less") - 0.1264381

    z = optimize.brentq(left, -5.0, 15.0, xtol=1e-14)
    assert 2.0 < z < 4.0  # rbinom(1, 10, 0.2) + small noise: plausible
    right = binomial_pvalue(z, n=10, theta0=0.5, noise=noise, alternative="greater")
    two = binomial_pvalue(z, n=10, theta0=0.5, noise=noise, alternative="two-sided")
    assert abs(right - 0.8735619) <= half_unit("0.8735619") + 1e-12
    assert abs(two - 0.2528762) <= half_unit("0.2528762") + 1e-12


# Vignette (docs/articles/binomialDP.html), eps = 1, delta = 0.01, n = 30: Z (2 decimals);
# left and right p-values at theta0 = 0.4; two-sided p-value at theta0 = 0.5; 95% lower bound
# (CILower); 95% two-sided interval (CITwoSide). All printed to 2 digits.
VIGNETTE = [
    ("18.70", "0.99", "0.01", "0.22", "0.46", "0.43", "0.79"),
    ("10.65", "0.33", "0.67", "0.15", "0.21", "0.19", "0.55"),
    ("12.89", "0.62", "0.38", "0.49", "0.27", "0.25", "0.62"),
    ("9.12", "0.17", "0.83", "0.05", "0.17", "0.15", "0.50"),
    ("9.88", "0.24", "0.76", "0.09", "0.19", "0.17", "0.53"),
    ("15.15", "0.85", "0.15", "0.96", "0.34", "0.32", "0.69"),
    ("6.14", "0.02", "0.98", "0.0", "0.09", "0.08", "0.40"),
    ("8.41", "0.11", "0.89", "0.03", "0.15", "0.13", "0.48"),
    ("10.46", "0.3", "0.7", "0.13", "0.21", "0.19", "0.54"),
    ("11.87", "0.49", "0.51", "0.3", "0.24", "0.22", "0.59"),
]


@pytest.fixture(scope="module")
def vignette_tests() -> dict[str, BinomialUMPTest]:
    noise = Tulap(1.0, 0.01)  # q = 2 delta b / (1 - b + 2 delta b), as in the vignette
    return {
        "greater": BinomialUMPTest(30, 0.4, noise, alternative="greater"),
        "less": BinomialUMPTest(30, 0.4, noise, alternative="less"),
        "two": BinomialUMPTest(30, 0.5, noise, alternative="two-sided"),
    }


@pytest.mark.parametrize("row", VIGNETTE, ids=[r[0] for r in VIGNETTE])
def test_binomialdp_vignette(row: tuple[str, ...], vignette_tests: dict[str, BinomialUMPTest]) -> None:
    """Each printed value within half a unit of its last digit, plus 0.002 for Z being printed
    to 2 decimals (|dp/dz| <= 0.15 and |d theta/dz| <= 1/n here, times 0.005)."""
    z = float(row[0])
    ours = [
        vignette_tests["less"].pvalue(z),
        vignette_tests["greater"].pvalue(z),
        vignette_tests["two"].pvalue(z),
        vignette_tests["greater"].result(z).confidence_interval(0.95).low,
        *vignette_tests["two"].result(z).confidence_interval(0.95),
    ]
    for printed, val in zip(row[1:], ours):
        assert abs(val - float(printed)) <= half_unit(printed) + 0.002, (row, printed, val)


def test_binomialdp_vignette_dpproptest_greater(vignette_tests: dict[str, BinomialUMPTest]) -> None:
    """Vignette Sec. 6: dpPropTest(Z[1] = 18.70, n = 30, theta0 = 0.5, "greater"): p 0.11, lower 0.46."""
    t = BinomialUMPTest(30, 0.5, Tulap(1.0, 0.01), alternative="greater")
    r = t.result(18.70)
    assert abs(r.pvalue - 0.11) <= half_unit("0.11") + 0.002
    assert abs(r.confidence_interval(0.95).low - 0.46) <= half_unit("0.46") + 0.002


# ==========================================================================================
# exact size, by summation over the whole support
# ==========================================================================================

SIZE_CASES = [
    (10, 0.4, 1.0, 0.0, 0.05),
    (10, 0.4, 1.0, 0.01, 0.05),
    (30, 0.5, 0.5, 0.0, 0.01),
    (30, 0.1, 2.0, 0.05, 0.1),
    (200, 0.05, 1.0, 0.001, 0.05),
    (1000, 0.73, 0.3, 0.0, 1e-6),
    (1, 0.5, 1.0, 0.0, 0.2),
    (57, 0.9, 5.0, 0.2, 0.5),
    (20000, 0.37, 1.0, 0.01, 0.05),  # n >= 4096: the windowed (summand-centred) path
]


@pytest.mark.parametrize("alternative", ["greater", "less", "two-sided"])
@pytest.mark.parametrize("case", SIZE_CASES, ids=[str(c) for c in SIZE_CASES])
def test_size_is_alpha(case: tuple[int, float, float, float, float], alternative: str) -> None:
    n, th0, eps, delta, alpha = case
    t = BinomialUMPTest(n, th0, Tulap(eps, delta), alpha=alpha, alternative=alternative)  # type: ignore[arg-type]
    size = brute_size(t)
    assert abs(size - alpha) <= 1e-12 * alpha, size
    assert abs(t.size() - alpha) <= 1e-12 * alpha
    if alternative != "two-sided":
        # alpha lies between the sizes at the doubles adjacent to m: m is the best double
        s_lo, s_hi = brute_size(t, math.nextafter(t.m, -math.inf)), brute_size(t, math.nextafter(t.m, math.inf))
        assert min(s_lo, s_hi) - 1e-15 * alpha <= alpha <= max(s_lo, s_hi) + 1e-15 * alpha


@settings(max_examples=25, deadline=None)
@given(
    n=st.integers(1, 80),
    th0=st.floats(0.02, 0.98),
    eps=st.floats(0.1, 4.0),
    delta=st.one_of(st.just(0.0), st.floats(1e-6, 0.3)),
    alpha=st.floats(1e-4, 0.6),
    alternative=st.sampled_from(["greater", "less", "two-sided"]),
)
def test_size_property(n: int, th0: float, eps: float, delta: float, alpha: float, alternative: str) -> None:
    t = BinomialUMPTest(n, th0, Tulap(eps, delta), alpha=alpha, alternative=alternative)  # type: ignore[arg-type]
    assert abs(brute_size(t) - alpha) <= 1e-11 * alpha
    if alternative == "two-sided":
        assert t.m_lower is not None and t.m_lower <= t.m


# ==========================================================================================
# p-values
# ==========================================================================================


@pytest.mark.parametrize(
    ("alternative", "seed"),
    [("greater", 11), ("less", 12), ("two-sided", 13)],
)
def test_pvalue_validity_by_simulation(alternative: str, seed: int) -> None:
    """Seeded, 1500 draws: under theta0 the p-value is exactly uniform (continuous release), so
    P(p <= u) is within 4 binomial sd of u and a KS test does not reject at 1e-3; for the
    one-sided tests, under a null theta further from the alternative P(p <= u) <= u."""
    n, th0 = 25, 0.3
    noise = Tulap(1.0, 0.01)
    test = BinomialUMPTest(n, th0, noise, alpha=0.05, alternative=alternative)  # type: ignore[arg-type]
    rng = np.random.default_rng(seed)
    n_sim = 1500
    thetas = [th0] if alternative == "two-sided" else [th0, th0 - 0.1 if alternative == "greater" else th0 + 0.1]
    for theta in thetas:
        z = rng.binomial(n, theta, n_sim) + np.asarray(noise.sample(rng=rng, size=n_sim))
        p = np.array([test.pvalue(float(v)) for v in z])
        for u in (0.01, 0.05, 0.2, 0.5):
            frac = float(np.mean(p <= u))
            sd = math.sqrt(u * (1 - u) / n_sim)
            assert frac <= u + 4 * sd, (theta, u, frac)
            if theta == th0:
                assert frac >= u - 4 * sd, (theta, u, frac)
        if theta == th0:
            assert stats.kstest(p, "uniform").pvalue > 1e-3


def test_pvalue_identity_with_phi() -> None:
    """p(Z) <= alpha iff Z >= m (greater), so P(p(Z) <= alpha | X = x) = phi*(x) = F_N(x - m)."""
    for noise in (Tulap(1.0), Tulap(0.7, 0.02)):
        t = BinomialUMPTest(20, 0.35, noise, alpha=0.05)
        assert t.pvalue(t.m) == pytest.approx(0.05, rel=1e-13)
        zs = np.linspace(-8.0, 30.0, 153)
        ps = np.array([t.pvalue(float(z)) for z in zs])
        assert np.all(np.diff(ps) <= 1e-16)  # non-increasing in z
        assert np.all((ps <= 0.05) == (zs >= t.m - 1e-12))
        xs = np.arange(21, dtype=np.float64)
        assert np.array_equal(np.asarray(t.phi(xs)), np.asarray(noise.sf(np.asarray(t.m - xs, dtype=np.float64))))
    # Monte Carlo at a fixed x: the fraction of rejections estimates phi*(x)
    t = BinomialUMPTest(20, 0.35, Tulap(1.0), alpha=0.05)
    rng = np.random.default_rng(5)
    z = 11 + np.asarray(t.noise.sample(rng=rng, size=20000))
    frac = float(np.mean(z >= t.m))
    ph = float(t.phi(11))
    assert abs(frac - ph) <= 4 * math.sqrt(ph * (1 - ph) / 20000)


def test_pvalues_against_brute_force_and_existing_tulap() -> None:
    """The log-space sums (direct for n < 4096, summand-centred window for n = 20000) agree with
    full-support sums built on cnd.tulap_cdf and scipy's binom.pmf."""
    for eps, delta in [(1.0, 0.0), (1.0, 0.01), (0.3, 0.1), (3.0, 0.0)]:
        noise = Tulap(eps, delta)
        for n, th in [(10, 0.3), (30, 0.5), (200, 0.05), (20000, 0.37)]:
            x = np.arange(n + 1, dtype=np.float64)
            pmf = stats.binom.pmf(x, n, th)
            sd = math.sqrt(n * th * (1 - th))
            for z in (-3.2, 0.4, n * th + 0.37, n * th - 5.1, n + 2.5, n * th + 9.3 * sd, n * th - 7.7 * sd):
                right = math.fsum((pmf * tulap_cdf(x - z, 0.0, noise.b, noise.q)).tolist())
                left = math.fsum((pmf * tulap_cdf(z - x, 0.0, noise.b, noise.q)).tolist())
                c = n * th
                t_ = abs(z - c)
                two = math.fsum(
                    (
                        pmf
                        * (tulap_cdf(x - c - t_, 0.0, noise.b, noise.q) + tulap_cdf(c - t_ - x, 0.0, noise.b, noise.q))
                    ).tolist()
                )
                for alt, ref in (("greater", right), ("less", left), ("two-sided", min(two, 1.0))):
                    ours = binomial_pvalue(z, n=n, theta0=th, noise=noise, alternative=alt)  # type: ignore[arg-type]
                    # relative 1e-12 plus the log-rounding floor of tiny values (|log p| * u)
                    tol = ref * (1e-12 + 8 * U * abs(math.log(ref))) if ref > 0 else 0.0
                    assert abs(ours - ref) <= tol, (eps, delta, n, th, z, alt, ours, ref)


def test_less_is_the_mirror_of_greater() -> None:
    """X -> n - X, N -> -N: P_{theta}(X+N <= z) = P_{1-theta}(X+N >= n - z)."""
    noise = Tulap(0.8, 0.005)
    for n, th, z in [(12, 0.3, 2.4), (300, 0.81, 251.7), (5000, 0.02, 40.2)]:
        a = binomial_log_pvalue(z, n=n, theta0=th, noise=noise, alternative="less")
        b = binomial_log_pvalue(n - z, n=n, theta0=1 - th, noise=noise, alternative="greater")
        assert a == pytest.approx(b, rel=1e-12, abs=1e-13)
    g = BinomialUMPTest(40, 0.3, noise, alternative="greater")
    le = BinomialUMPTest(40, 0.7, noise, alternative="less")
    assert le.m == pytest.approx(40 - g.m, rel=1e-12)


def test_two_sided_pvalue_shape() -> None:
    t = BinomialUMPTest(30, 0.4, Tulap(1.0), alternative="two-sided")
    assert t.pvalue(12.0) == 1.0  # z at the centre n * theta0
    assert t.pvalue(12.0 + 3.3) == pytest.approx(t.pvalue(12.0 - 3.3), rel=1e-12)  # depends on |z - c|
    ps = [t.pvalue(12.0 + d) for d in np.linspace(0.0, 25.0, 51)]
    assert all(b <= a + 1e-16 for a, b in itertools.pairwise(ps))  # decreasing in |z - c|
    assert (
        t.pvalue(t.m) == pytest.approx(0.05, rel=1e-12)
        and t.m_lower is not None
        and t.pvalue(t.m_lower) == pytest.approx(0.05, rel=1e-12)
    )


def test_two_sided_is_not_unbiased() -> None:
    """binomialDP documents pvalTwoSide as only *asymptotically* unbiased: at n = 30,
    theta0 = 0.1, eps = 1 its power falls below alpha just below theta0 (so it is not UMPU),
    while its size is exactly alpha."""
    t = BinomialUMPTest.from_privacy(30, 0.1, 1.0, alternative="two-sided")
    assert abs(t.size() - 0.05) <= 1e-13
    assert t.power(0.08) < 0.045
    # at theta0 = 1/2 the problem is symmetric and the test is unbiased on a grid
    s = BinomialUMPTest.from_privacy(30, 0.5, 1.0, alternative="two-sided")
    assert min(s.power(float(th)) for th in np.linspace(0.3, 0.7, 41)) >= 0.05 - 1e-13


# ==========================================================================================
# power and optimality
# ==========================================================================================


def test_power_monotone_in_theta() -> None:
    for delta in (0.0, 0.02):
        g = BinomialUMPTest(25, 0.4, Tulap(1.0, delta), alternative="greater")
        le = BinomialUMPTest(25, 0.4, Tulap(1.0, delta), alternative="less")
        grid = np.linspace(0.0, 1.0, 41)
        pg = [g.power(float(th)) for th in grid]
        pl = [le.power(float(th)) for th in grid]
        assert all(b > a for a, b in itertools.pairwise(pg))
        assert all(b < a for a, b in itertools.pairwise(pl))
        assert g.power(0.4) == pytest.approx(0.05, rel=1e-12) and pg[-1] > 0.9
    # Monte Carlo (seeded, common random numbers) agrees with the exact power
    g = BinomialUMPTest(25, 0.4, Tulap(1.0), alternative="greater")
    rng = np.random.default_rng(3)
    u = rng.random(4000)
    nz = np.asarray(g.noise.sample(rng=rng, size=4000))
    est = []
    for th in (0.4, 0.5, 0.6, 0.7):
        x = stats.binom.ppf(u, 25, th)  # inverse transform: nested in theta
        est.append(float(np.mean(x + nz >= g.m)))
        ex = g.power(th)
        assert abs(est[-1] - ex) <= 4 * math.sqrt(ex * (1 - ex) / 4000) + 1e-12
    assert all(b >= a for a, b in itertools.pairwise(est))


def _dp_lp_optimum(n: int, th0: float, th1: float, eps: float, delta: float, alpha: float) -> float:
    """max E_th1 phi(X) over ALL (eps, delta)-DP tests of the count with E_th0 phi <= alpha.

    DP of a test phi: {0..n} -> [0, 1] under |x - x'| <= 1 [AS18]: phi(a) <= e^eps phi(b) + delta
    and 1 - phi(a) <= e^eps (1 - phi(b)) + delta for adjacent a, b, both orders.
    """
    e = math.exp(eps)
    rows, rhs = [], []
    for a, b in [(x, x + 1) for x in range(n)] + [(x + 1, x) for x in range(n)]:
        r = np.zeros(n + 1)
        r[a], r[b] = 1.0, -e
        rows.append(r)
        rhs.append(delta)
        rows.append(-r)
        rhs.append(e - 1.0 + delta)
    x = np.arange(n + 1)
    rows.append(stats.binom.pmf(x, n, th0))
    rhs.append(alpha)
    res = optimize.linprog(
        -stats.binom.pmf(x, n, th1),
        A_ub=np.array(rows),
        b_ub=np.array(rhs),
        bounds=[(0.0, 1.0)] * (n + 1),
        method="highs",
    )
    assert res.status == 0
    return float(-res.fun)


@pytest.mark.parametrize("delta", [0.0, 0.01])
def test_ump_equals_lp_optimum_over_all_dp_tests(delta: float) -> None:
    """The UMP property itself: for every alternative theta1 the power of phi* equals the LP
    optimum over all (eps, delta)-DP level-alpha tests, and phi* is feasible for that LP."""
    n, th0, eps, alpha = 12, 0.4, 1.0, 0.05
    t = BinomialUMPTest(n, th0, Tulap(eps, delta), alpha=alpha)
    ph = np.asarray(t.phi(np.arange(n + 1)))
    e = math.exp(eps)
    assert np.all(ph[:-1] <= e * ph[1:] + delta + 1e-14) and np.all(ph[1:] <= e * ph[:-1] + delta + 1e-14)
    q = 1.0 - ph
    assert np.all(q[:-1] <= e * q[1:] + delta + 1e-14) and np.all(q[1:] <= e * q[:-1] + delta + 1e-14)
    for th1 in (0.45, 0.6, 0.8, 0.95):
        assert t.power(th1) == pytest.approx(_dp_lp_optimum(n, th0, th1, eps, delta, alpha), abs=1e-7)


def test_ump_beats_laplace_and_is_below_non_private() -> None:
    """Against the Laplace-mechanism test calibrated to exact size alpha (eps-DP, hence a valid
    competitor) the UMP test is at least as powerful everywhere above theta0 and strictly more
    somewhere; the classical randomized binomial UMP test (non-private) is an upper bound."""
    n, th0, eps, alpha = 10, 0.3, 1.0, 0.05
    t = BinomialUMPTest(n, th0, Tulap(eps), alpha=alpha)
    x = np.arange(n + 1, dtype=np.float64)
    lap = stats.laplace(scale=1.0 / eps)
    b0 = stats.binom.pmf(x, n, th0)
    c = optimize.brentq(lambda cc: float(b0 @ lap.sf(cc - x)) - alpha, -50.0, 100.0, xtol=1e-14)
    # non-private UMP: reject above k, randomize at k
    k = int(stats.binom.isf(alpha, n, th0))
    while stats.binom.sf(k, n, th0) > alpha:
        k += 1
    gamma = (alpha - stats.binom.sf(k, n, th0)) / stats.binom.pmf(k, n, th0)
    phi_np = np.where(x > k, 1.0, np.where(x == k, gamma, 0.0))
    assert float(b0 @ phi_np) == pytest.approx(alpha, rel=1e-12)
    gaps = []
    for th in np.linspace(th0, 0.9, 25):
        b = stats.binom.pmf(x, n, th)
        p_ump, p_lap, p_np = t.power(float(th)), float(b @ lap.sf(c - x)), float(b @ phi_np)
        assert p_lap <= p_ump + 1e-12 and p_ump <= p_np + 1e-12
        gaps.append(p_ump - p_lap)
    assert max(gaps) > 0.005  # measured 0.0086 (n = 10, theta0 = 0.3, eps = 1)


# ==========================================================================================
# large n, far tails, accuracy
# ==========================================================================================


def test_binom_logpmf_against_mpmath() -> None:
    """Loader's algorithm vs 40-digit loggamma; the error bound is the rounding of log p itself."""
    for n, th in [(10, 0.3), (1000, 0.01), (10**6, 0.5), (10**6, 0.123), (10**8, 0.3)]:
        xs = np.unique(
            np.clip(
                np.array(
                    [
                        0,
                        1,
                        2,
                        7,
                        15,
                        16,
                        36,
                        81,
                        501,
                        n * th,
                        n * th + 1,
                        n * th - 3 * math.sqrt(n),
                        n * th + 40 * math.sqrt(n),
                        n - 1,
                        n,
                    ]
                ).round(),
                0,
                n,
            )
        )
        ours = binom_logpmf(xs, n, th)
        t = MP.mpf(th)
        for x, o in zip(xs.astype(int).tolist(), ours.tolist()):
            ref = (
                MP.loggamma(n + 1)
                - MP.loggamma(x + 1)
                - MP.loggamma(n - x + 1)
                + x * MP.log(t)
                + (n - x) * MP.log(1 - t)
            )
            assert abs(o - float(ref)) <= 1e-13 + 8 * U * abs(float(ref)), (n, th, x)


def _mp_tulap_cdf(y: mpmath.mpf, eps: float, delta: float) -> mpmath.mpf:
    b = MP.exp(-MP.mpf(eps))
    d = MP.mpf(delta)
    q = 2 * d * b / (1 - b + 2 * d * b)

    def f0(v: mpmath.mpf) -> mpmath.mpf:
        if v <= 0:
            k = MP.nint(v)
            return b ** (-k) / (1 + b) * (b + (v - k + MP.mpf(1) / 2) * (1 - b))
        return 1 - f0(-v)

    return min(MP.mpf(1), max(MP.mpf(0), (f0(y) - q / 2) / (1 - q)))


def _mp_window_sum(
    n: int, th: float, eps: float, delta: float, z: float, sign: int, x_lo: int, x_hi: int
) -> mpmath.mpf:
    """sum_{x_lo <= x <= x_hi} Binom(x) F(sign (x - z)) in mpmath (pmf by ratio recursion)."""
    t = MP.mpf(th)
    term = MP.exp(
        MP.loggamma(n + 1)
        - MP.loggamma(x_lo + 1)
        - MP.loggamma(n - x_lo + 1)
        + x_lo * MP.log(t)
        + (n - x_lo) * MP.log(1 - t)
    )
    r = t / (1 - t)
    s = MP.mpf(0)
    zz = MP.mpf(z)
    for x in range(x_lo, x_hi + 1):
        s += term * _mp_tulap_cdf(sign * (x - zz), eps, delta)
        term *= MP.mpf(n - x) / (x + 1) * r
    return s


def test_million_far_tails_against_mpmath() -> None:
    """n = 10**6, theta0 = 1/2 (sd 500). Windows for the mpmath sums and why the rest is
    negligible: right tail at z = mean + 6000.3 (log p ~ -72): x < z - 300 contributes
    <= F(-300) < e^-299; x > mean + 12000 contributes <= P(X >= mean + 12000) <= e^-288
    (Hoeffding). Left tail, delta = 1e-6 (truncated, support edge ~ 13.7) at z = mean - 6000.3:
    F(z - x) = 0 for x > z + 14; x < mean - 12000 contributes <= e^-288."""
    n, th = 10**6, 0.5
    mean = n * th
    z = mean + 6000.3
    ours = log_tail(n, th, Tulap(1.0), z, 1.0)
    ref = MP.log(_mp_window_sum(n, th, 1.0, 0.0, z, 1, int(z) - 300, int(mean) + 12000))
    assert -80.0 < ours < -60.0
    assert abs(ours - float(ref)) <= 1e-12 * abs(float(ref))
    z = mean - 6000.3
    noise = Tulap(1.0, 1e-6)
    ours = log_tail(n, th, noise, z, -1.0)
    ref = MP.log(_mp_window_sum(n, th, 1.0, 1e-6, z, -1, int(mean) - 12000, int(z) + 15))
    assert abs(ours - float(ref)) <= 1e-12 * abs(float(ref))
    # beyond the truncated support the left p-value is exactly 0
    assert log_tail(n, th, noise, -14.0, -1.0) == -math.inf


def test_far_beyond_double_range_closed_form() -> None:
    """For z beyond the support, with fractional part r = z - round(z) fixed, F(x - z) =
    K e^{eps (x - round(z))} for every x <= n (Tulap lower tail, untruncated), so
    p = K e^{-eps round(z)} E[e^{eps X}] = K e^{-eps round(z)} (1 - theta + theta e^eps)^n
    exactly (the binomial moment generating function); K = (b + (1/2 - r)(1 - b)) / (1 + b)."""
    for n, th, eps, z in [(10**6, 0.5, 1.0, 10**6 + 50.3), (10**6, 0.02, 0.5, 10**6 + 0.7), (5000, 0.3, 2.0, 9000.25)]:
        zz = MP.mpf(z)
        k = MP.nint(zz)
        r = zz - k
        b = MP.exp(-MP.mpf(eps))
        kk = (b + (MP.mpf(1) / 2 - r) * (1 - b)) / (1 + b)
        t = MP.mpf(th)
        ref = MP.log(kk) - eps * k + n * MP.log(1 - t + t * MP.exp(eps))
        ours = binomial_log_pvalue(z, n=n, theta0=th, noise=Tulap(eps))
        assert abs(ours - float(ref)) <= 1e-14 * abs(float(ref)) + 1e-12, (n, th, z)
        assert binomial_pvalue(z, n=n, theta0=th, noise=Tulap(eps)) == (
            0.0 if float(ref) < -746 else pytest.approx(math.exp(float(ref)), rel=1e-10)
        )


def test_million_records() -> None:
    """n = 10**6: calibrating m, the size and a far-tail p-value (their speed is measured in benchmarks/, not
    asserted here: a loaded machine is not a wrong answer)."""
    t = BinomialUMPTest(10**6, 0.5, Tulap(1.0), alpha=0.05)
    r = t.result(5e5 + 4000.5)  # eight standard deviations out
    assert abs(r.size - 0.05) <= 1e-12 * 0.05
    assert 0.0 < r.pvalue < 1e-12 and r.reject
    s_lo = math.exp(log_tail(10**6, 0.5, t.noise, math.nextafter(t.m, -math.inf), 1.0))
    s_hi = math.exp(log_tail(10**6, 0.5, t.noise, math.nextafter(t.m, math.inf), 1.0))
    assert s_hi <= 0.05 * (1 + 1e-15) and 0.05 * (1 - 1e-15) <= s_lo


# ==========================================================================================
# result object, release, guarantees
# ==========================================================================================


def test_result_object_and_guarantee() -> None:
    t = BinomialUMPTest.from_privacy(10, 0.4, 1.0, 0.01)
    r = t.result(8.2)
    assert isinstance(r, BinomialTestResult)
    assert r.statistic == 8.2 and r.alternative == "greater" and r.m == t.m and r.m_lower is None
    assert r.reject == (r.pvalue <= 0.05) and r.reject_at(0.01) == (r.pvalue <= 0.01)
    assert r.guarantee == ApproxDP(1.0, 0.01, Replace()) == t.guarantee
    assert "test=" not in repr(r)
    assert BinomialUMPTest(10, 0.4, Tulap(2.0)).guarantee == PureDP(2.0, Replace())
    tb = BinomialUMPTest(10, 0.4, Tulap.from_bq(B1, 0.05))
    g = tb.guarantee
    assert isinstance(g, ApproxDP) and g.delta == pytest.approx(0.05 * (1 - B1) / (2 * B1 * 0.95), rel=1e-12)
    two = BinomialUMPTest(10, 0.4, Tulap(1.0), alternative="two-sided").result(1.0)
    assert two.m_lower is not None and isinstance(two.confidence_interval(0.9), ConfidenceInterval)


def test_confidence_interval_edges() -> None:
    t = BinomialUMPTest(10, 0.5, Tulap(1.0, 0.05), alternative="greater")
    assert t.result(-30.0).confidence_interval().low == 0.0  # nothing rejected
    assert t.result(40.0).confidence_interval().low == 1.0  # everything rejected (empty set)
    le = BinomialUMPTest(10, 0.5, Tulap(1.0, 0.05), alternative="less")
    assert le.result(40.0).confidence_interval().high == 1.0
    assert le.result(-30.0).confidence_interval().high == 0.0
    two = BinomialUMPTest(10, 0.5, Tulap(1.0), alternative="two-sided")
    lo, hi = two.result(5.0).confidence_interval(0.95)
    assert 0.0 < lo < 0.5 < hi < 1.0 and lo == pytest.approx(1.0 - hi, abs=1e-9)


def test_release_end_to_end_and_reproducible() -> None:
    a = binomial_ump_test(19, n=30, theta0=0.4, epsilon=1.0, rng=np.random.default_rng(7))
    b = binomial_ump_test(19, n=30, theta0=0.4, epsilon=1.0, rng=np.random.default_rng(7))
    assert a.statistic == b.statistic and a.pvalue == b.pvalue
    assert a.guarantee == PureDP(1.0, Replace())
    t = BinomialUMPTest(30, 0.4, Tulap(1.0, 0.01))
    rng = np.random.default_rng(0)
    z = np.array([t.release(12, rng=rng) for _ in range(2000)])
    assert np.all(np.abs(z - 12) <= t.noise.support_edge)
    assert stats.kstest(z - 12, lambda v: t.noise.cdf(v)).pvalue > 1e-3


@pytest.mark.parametrize(
    ("make", "match"),
    [
        (lambda: BinomialUMPTest(0, 0.5, Tulap(1.0)), "n="),
        (lambda: BinomialUMPTest(2.5, 0.5, Tulap(1.0)), "n="),  # type: ignore[arg-type]
        (lambda: BinomialUMPTest(True, 0.5, Tulap(1.0)), "n="),
        (lambda: BinomialUMPTest(10**9, 0.5, Tulap(1.0)), "n="),
        (lambda: BinomialUMPTest(10, 0.0, Tulap(1.0)), "theta0"),
        (lambda: BinomialUMPTest(10, 1.0, Tulap(1.0)), "theta0"),
        (lambda: BinomialUMPTest(10, math.nan, Tulap(1.0)), "theta0"),
        (lambda: BinomialUMPTest(10, 0.5, Tulap(1.0), alpha=0.0), "alpha"),
        (lambda: BinomialUMPTest(10, 0.5, Tulap(1.0), alpha=1.0), "alpha"),
        (lambda: BinomialUMPTest(10, 0.5, Tulap(1.0), alternative="two.sided"), "alternative"),  # type: ignore[arg-type]
        (lambda: BinomialUMPTest(10, 0.5, GaussianCND(1.0)), "noise"),  # type: ignore[arg-type]
        (lambda: BinomialUMPTest.from_privacy(10, 0.5, 0.0), "epsilon"),
        (lambda: BinomialUMPTest.from_privacy(10, 0.5, 1.0, delta=1.0), "delta"),
        (lambda: BinomialUMPTest(10, 0.5, Tulap(1.0)).pvalue(math.inf), "z"),
        (lambda: BinomialUMPTest(10, 0.5, Tulap(1.0)).power(1.5), "theta"),
        (lambda: BinomialUMPTest(10, 0.5, Tulap(1.0)).release(11, rng=np.random.default_rng(0)), "x="),
        (lambda: BinomialUMPTest(10, 0.5, Tulap(1.0)).release(2.0, rng=np.random.default_rng(0)), "x="),  # type: ignore[arg-type]
        (lambda: BinomialUMPTest(10, 0.5, Tulap(1.0)).release(2, rng=None), "rng"),  # type: ignore[arg-type]
        (lambda: BinomialUMPTest(10, 0.5, Tulap(1.0)).result(1.0).confidence_interval(1.0), "confidence_level"),
        (lambda: BinomialUMPTest(10, 0.5, Tulap(1.0)).result(1.0).reject_at(2.0), "level"),
        (lambda: binomial_pvalue(1.0, n=10, theta0=0.5, noise=Tulap(1.0), alternative="left"), "alternative"),  # type: ignore[arg-type]
        (lambda: binomial_ump_test(-1, n=10, theta0=0.5, epsilon=1.0, rng=np.random.default_rng(0)), "x="),
    ],
)
def test_invalid_arguments(make: object, match: str) -> None:
    with pytest.raises(InvalidArgument, match=match):
        make()  # type: ignore[operator]
