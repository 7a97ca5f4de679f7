"""Benchmark: the Semi-DP UMPU odds-ratio test (Cho & Awan 2024, Thm. 37) at n = 10**2 .. 10**6.

For each table size ``n`` (margins rows ``(n/2, n/2)``, columns ``(0.4 n, 0.6 n)``,
``theta0 = 1`` and ``theta0 = 2``) it prints

* **null**: time to compute the whole exact null (FNCH log-pmf over the full support,
  :mod:`mechanisms.fnch`), median wall-clock and CPU time over repeats, and its accuracy
  against the 50-digit mpmath oracle (:func:`mechanisms.fnch.logpmf_reference`) at ~40
  points from the mode to the support ends: max relative error over probabilities that
  are representable doubles, and over the log of the far-tail ones (``p < 1e-308``);
* **scipy** (``--scipy``): the same for ``scipy.stats.nchypergeom_fisher`` (time and
  relative error), and an upper tail ``P(X > mean + 22 sd)`` where scipy's ``sf``
  returns 0; up to ``n = 10**5`` by default (``--scipy-max 1000000`` adds ``n = 10**6``,
  which takes seconds to tens of seconds per call);
* **test**: time for a whole test (calibrate ``m`` by root-finding, release p-value, exact
  size re-summed over the support) for Tulap(1), Tulap(1, 1e-3) and Gaussian(1) noise;
* **p-value accuracy**: ``log p(Z)`` against a 50-digit mpmath sum (Tulap(1) noise) at
  ``Z = m``, ``mean + 5 sd`` and ``mean + 40 sd`` (the last below ``1e-300`` at
  ``n = 10**6``: summed in log space).

Targets (issue #6): full null at ``n = 10**6`` in <= 50 ms with <= 1e-12 relative error;
a whole test <= 100 ms; p-values accurate in the far tails. Timings on a shared machine
are noisy: the header prints the load average, and CPU time is shown next to wall time.

Run: ``python benchmarks/umpu.py`` (about a minute; mpmath references dominate), or
``--quick`` for ``n <= 10**4`` only.
"""

from __future__ import annotations

import argparse
import math
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable

import mpmath
import numpy as np
import scipy
from scipy import stats

from semidp.mechanisms.cnd import CanonicalNoise, GaussianCND, Tulap
from semidp.mechanisms.fnch import FisherNoncentralHypergeometric, logpmf_reference
from semidp.mechanisms.umpu import SemiDPOddsRatioTest, TableMargins

MP = mpmath.MPContext()
MP.dps = 50


def timed(fn: Callable[[], object], repeat: int) -> tuple[float, float]:
    """Median wall-clock and median CPU seconds of ``fn()`` over ``repeat`` runs."""
    walls, cpus = [], []
    for _ in range(repeat):
        w0, c0 = time.perf_counter(), time.process_time()
        fn()
        walls.append(time.perf_counter() - w0)
        cpus.append(time.process_time() - c0)
    return statistics.median(walls), statistics.median(cpus)


def margins_for(n: int) -> TableMargins:
    return TableMargins((n // 2, n - n // 2), (int(0.4 * n), n - int(0.4 * n)))


def null_accuracy(mg: TableMargins, theta: float) -> tuple[float, float, int]:
    """(max rel. error of representable p, max rel. error of log p for p < 1e-308, #points)."""
    d = mg.null(theta)
    lo, logp = d.log_pmf_table()
    hi = lo + len(logp) - 1
    mode = d.mode()
    sd = math.sqrt(max(mg.total, 4) / 16.0)
    offs = np.concatenate([[0, 1, -1], np.round(sd * np.array([0.5, 1, 2, 4, 8, 12, 20, 30, 40, 60]))])
    pts = np.unique(np.clip(np.concatenate([mode + offs, mode - offs, [lo, lo + 1, hi - 1, hi]]), lo, hi))
    pts = pts.astype(np.int64)
    ref = logpmf_reference(mg.rows[0], mg.rows[1], mg.cols[0], theta, pts, dps=40)
    rel, logrel = 0.0, 0.0
    for x, r in zip(pts, ref):
        ours = float(logp[x - lo])
        if r > -745:
            rel = max(rel, abs(float(MP.expm1(MP.mpf(ours) - r))))
        else:
            logrel = max(logrel, abs(float((MP.mpf(ours) - r) / r)))
    return rel, logrel, len(pts)


def scipy_tail(mg: TableMargins, theta: float) -> tuple[float, float, float]:
    """Upper tail P(X > mean + 22 sd): (x, ours, scipy) -- scipy's sf underflows to 0 here."""
    d = mg.null(theta)
    x = float(math.floor(d.mean() + 22.0 * math.sqrt(mg.total / 16.0)))
    ours = float(d.logsf(x))
    sp = float(stats.nchypergeom_fisher(mg.total, mg.rows[0], mg.cols[0], theta).sf(x))
    return x, ours, sp


def scipy_null(mg: TableMargins, theta: float) -> tuple[float, float, int]:
    """(time, max relative error vs ours where scipy > 0, #entries scipy rounds to 0 but ours > 0)."""
    lo, logp = mg.null(theta).log_pmf_table()
    xs = lo + np.arange(len(logp))
    t0 = time.perf_counter()
    sp = stats.nchypergeom_fisher(mg.total, mg.rows[0], mg.cols[0], theta).pmf(xs)
    t = time.perf_counter() - t0
    ours = np.exp(logp)
    ok = (sp > 1e-300) & (ours > 1e-300)
    err = float(np.max(np.abs(sp[ok] / ours[ok] - 1.0))) if np.any(ok) else math.nan
    lost = int(np.count_nonzero((sp == 0) & (logp > -745)))
    return t, err, lost


def tulap_cdf_mp(y: mpmath.mpf, b: mpmath.mpf) -> mpmath.mpf:
    def low(v: mpmath.mpf) -> mpmath.mpf:
        k = MP.nint(v)
        return b ** (-k) / (1 + b) * (b + (v - k + MP.mpf(1) / 2) * (1 - b))

    return low(y) if y <= 0 else 1 - low(-y)


def pvalue_accuracy(mg: TableMargins, z: float, test: SemiDPOddsRatioTest) -> tuple[float, float]:
    """(ours log p, relative error of p vs a 50-digit sum over |x - mean| <= 60 sd)."""
    lo, hi = mg.support()
    d = mg.null(1.0)
    mean = d.mean()
    sd = math.sqrt(max(mg.total, 4) / 16.0)
    xs = np.arange(max(lo, int(mean - 60 * sd)), min(hi, int(mean + 60 * sd)) + 1)
    lps = logpmf_reference(mg.rows[0], mg.rows[1], mg.cols[0], 1.0, xs, dps=40)
    b = MP.exp(-1)
    zz = MP.mpf(z)
    ref = MP.fsum(MP.exp(lp) * tulap_cdf_mp(MP.mpf(int(x)) - zz, b) for x, lp in zip(xs, lps))
    ours = test.log_pvalue(z)
    return ours, abs(float(MP.expm1(MP.mpf(ours) - MP.log(ref))))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="n <= 10**4 only")
    ap.add_argument("--scipy", action="store_true", help="also time scipy.stats.nchypergeom_fisher")
    ap.add_argument("--scipy-max", type=int, default=10**5, help="largest n for the scipy comparison")
    ap.add_argument("--repeat", type=int, default=7)
    args = ap.parse_args()

    sizes = [10**2, 10**3, 10**4] + ([] if args.quick else [10**5, 10**6])
    load = os.getloadavg() if hasattr(os, "getloadavg") else (math.nan,) * 3
    print(
        f"semidp UMPU benchmark | python {platform.python_version()} numpy {np.__version__} "
        f"scipy {scipy.__version__} mpmath {mpmath.__version__} | {platform.machine()} "
        f"{os.cpu_count()} cpu | load avg {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}"
    )
    print("margins: rows (n/2, n/2), cols (0.4n, 0.6n); times are medians (wall / cpu)\n")

    print("1. exact null (FNCH log-pmf over the whole support) vs mpmath (50 digits)")
    print(
        f"{'n':>9} {'theta':>5} {'support':>8} {'wall ms':>8} {'cpu ms':>7} "
        f"{'max rel err p':>14} {'max rel err log p (p<1e-308)':>29}"
    )
    worst_null = 0.0
    worst_err = 0.0
    for n in sizes:
        mg = margins_for(n)
        for theta in (1.0, 2.0):

            def build(mg: TableMargins = mg, theta: float = theta) -> object:
                return FisherNoncentralHypergeometric(mg.rows[0], mg.rows[1], mg.cols[0], theta).log_pmf_table()

            wall, cpu = timed(build, args.repeat)
            rel, logrel, _ = null_accuracy(mg, theta)
            lo, hi = mg.support()
            print(
                f"{n:>9} {theta:>5} {hi - lo + 1:>8} {wall * 1e3:>8.2f} {cpu * 1e3:>7.2f} {rel:>14.2e} {logrel:>29.2e}"
            )
            if n == 10**6:
                worst_null = max(worst_null, wall)
            worst_err = max(worst_err, rel)
            if args.scipy and n <= args.scipy_max:
                t, err, lost = scipy_null(mg, theta)
                print(
                    f"{'':>9} {'':>5} {'scipy':>8} {t * 1e3:>8.1f} {'':>7} {err:>14.2e}   entries rounded to 0: {lost}"
                )
                if n >= 10**4:
                    x, ours_l, sp = scipy_tail(mg, theta)
                    print(
                        f"{'':>9} {'':>5} {'tail':>8}  P(X > {x:.0f}): ours exp({ours_l:.4f}) = "
                        f"{math.exp(ours_l):.4g}, scipy sf = {sp:.4g}"
                    )
    if not args.quick:
        print(
            f"  target n=1e6: <= 50 ms and <= 1e-12 -> worst {worst_null * 1e3:.1f} ms, "
            f"{worst_err:.1e}: {'OK' if worst_null <= 0.05 and worst_err <= 1e-12 else 'ABOVE TARGET'}"
        )

    print("\n2. whole test: calibrate m (5), p-value (6), exact size; theta0 = 1, alpha = 0.05")
    noises: list[tuple[str, CanonicalNoise]] = [
        ("Tulap(1)", Tulap(1.0)),
        ("Tulap(1,1e-3)", Tulap(1.0, 1e-3)),
        ("Gauss(1)", GaussianCND(1.0)),
    ]
    print(f"{'n':>9} " + " ".join(f"{name + ' ms':>16}" for name, _ in noises) + f" {'|size-a|/a':>11}")
    worst_test = 0.0
    for n in sizes:
        mg = margins_for(n)
        cells = []
        worst_size = 0.0
        for _, noise in noises:
            z = n * 0.2 + 1.5

            def run(mg: TableMargins = mg, noise: CanonicalNoise = noise, z: float = z) -> object:
                return SemiDPOddsRatioTest(mg, noise).result(z)

            wall, cpu = timed(run, max(3, args.repeat // 2))
            r = SemiDPOddsRatioTest(mg, noise).result(z)
            worst_size = max(worst_size, abs(r.size - 0.05) / 0.05)
            cells.append(f"{wall * 1e3:>7.2f} /{cpu * 1e3:>7.2f}")
            if n == 10**6:
                worst_test = max(worst_test, wall)
        print(f"{n:>9} " + " ".join(f"{c:>16}" for c in cells) + f" {worst_size:>11.1e}")
    if not args.quick:
        print(
            f"  target whole test <= 100 ms at n=1e6 -> worst {worst_test * 1e3:.1f} ms: "
            f"{'OK' if worst_test <= 0.1 else 'ABOVE TARGET'}"
        )

    print("\n3. p-value accuracy, Tulap(1) noise, theta0 = 1 (reference: 50-digit sum over +-60 sd)")
    print(f"{'n':>9} {'Z':>14} {'log p(Z)':>14} {'rel err p':>10}")
    for n in [10**2, 10**4] if args.quick else [10**2, 10**4, 10**6]:
        mg = margins_for(n)
        test = SemiDPOddsRatioTest(mg, Tulap(1.0))
        mean = mg.null(1.0).mean()
        sd = math.sqrt(n / 16.0)
        for z in (test.m, mean + 5 * sd, mean + 40 * sd):
            lp, err = pvalue_accuracy(mg, z, test)
            print(f"{n:>9} {z:>14.4f} {lp:>14.6f} {err:>10.1e}")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
