"""Benchmark: program (P+) [ZVF21] for 10**4 noisy draws of a 254-county state, batched vs one cvxpy solve per draw.

Setting: 254 counties (Texas has 254; the county counts are **synthetic** -- a seeded
log-normal with 20 counties set to 0..19 so that non-negativity binds -- because the 2010 county file is not available
offline; the total is Texas' 2010 population 25,145,561,
docs/reference/subspace-integer-postprocessing.md §2.8), Laplace noise
lambda = 1/0.192 (reference T-G4), one state-total invariant.

Paths timed in one run, side by side:

* **sort-and-threshold** (:func:`semidp.mechanisms.projection.project_simplex`): all 10**4
  draws in one numpy pass (target <= 30 s; it takes well under a second);
* **hierarchy** (:class:`semidp.mechanisms.projection.HierarchicalTotals`): the same with the
  counties grouped into 12 synthetic districts with totals (nation / district / county);
* **batched ADMM** (:func:`semidp.mechanisms.nonneg_projection.project_nonneg`) on the
  general-A path, all 10**4 draws, tol 1e-9;
* **cvxpy per draw** (:func:`semidp.mechanisms.nonneg_projection.project_nonneg_cvxpy`,
  Clarabel with its default tolerances; the tight ones of the test path do not all reach status
  ``optimal`` at counts of 1e7): timed on a subset (``--cvxpy-draws``, default 200) and **extrapolated
  linearly** to 10**4 draws; the printout says so.

It prints wall-clock and CPU seconds, the ratio of the cvxpy extrapolation to each batched
path, and the largest difference between the paths on the shared draws. Timings on a shared
machine are noisy; the header prints the load average.

Run: ``python benchmarks/postprocess.py`` (about 10 s).
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Callable

import numpy as np

from semidp.mechanisms.nonneg_projection import project_nonneg, project_nonneg_cvxpy
from semidp.mechanisms.projection import AffineConstraint, HierarchicalTotals, project_simplex

TEXAS_TOTAL = 25_145_561
COUNTIES = 254


def synthetic_counties(rng: np.random.Generator) -> np.ndarray:
    """254 non-negative integer counts summing to the Texas total (log-normal shape, 20 counties of 0..19)."""
    w = rng.lognormal(mean=0.0, sigma=1.8, size=COUNTIES)
    x = np.floor(w / w.sum() * TEXAS_TOTAL)
    x[np.argsort(x)[:20]] = np.arange(20.0)  # 20 tiny counties (0..19) so that v >= 0 binds
    x[np.argmax(x)] += TEXAS_TOTAL - x.sum()
    out: np.ndarray = np.asarray(x, dtype=np.float64)
    return out


def timed(fn: Callable[[], object]) -> tuple[object, float, float]:
    w, c = time.perf_counter(), time.process_time()
    out = fn()
    return out, time.perf_counter() - w, time.process_time() - c


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--draws", type=int, default=10_000)
    ap.add_argument("--cvxpy-draws", type=int, default=200)
    ap.add_argument("--seed", type=int, default=20240601)
    args = ap.parse_args()
    rng = np.random.default_rng(args.seed)
    x = synthetic_counties(rng)
    lam = 1 / 0.192
    noisy = x + rng.laplace(0.0, lam, (args.draws, COUNTIES))
    print(f"load average {os.getloadavg()}; seed {args.seed}; {args.draws} draws x {COUNTIES} counties")
    print(f"synthetic counts: total {x.sum():.0f}, smallest {x.min():.0f}, largest {x.max():.0f}; lambda = {lam:.4f}")

    simplex, t_s, c_s = timed(lambda: project_simplex(noisy, TEXAS_TOTAL))
    districts = np.sort(rng.integers(0, 12, COUNTIES))
    districts = np.unique(districts, return_inverse=True)[1].astype(np.int64)
    h = HierarchicalTotals.from_counts([np.zeros(COUNTIES, dtype=np.int64), districts], x)
    _, t_h, c_h = timed(lambda: h.project_nonneg(noisy))
    c = AffineConstraint.total(COUNTIES, float(TEXAS_TOTAL))
    admm, t_a, c_a = timed(lambda: project_nonneg(c, noisy, tol=1e-9))
    k = min(args.cvxpy_draws, args.draws)
    ref, t_c, c_c = timed(lambda: project_nonneg_cvxpy(c, noisy[:k], solver_options={}))  # Clarabel defaults
    per_draw = t_c / k
    extrap = per_draw * args.draws

    s = np.asarray(simplex)
    a = admm.solution  # type: ignore[attr-defined]
    r = ref.solution  # type: ignore[attr-defined]
    print()
    print(f"{'path':44s} {'wall s':>9s} {'cpu s':>9s} {'cvxpy/this':>11s}")
    print(f"{'sort-and-threshold, batched (all draws)':44s} {t_s:9.3f} {c_s:9.3f} {extrap / t_s:11.0f}")
    print(f"{'hierarchy, 12 districts, batched (all draws)':44s} {t_h:9.3f} {c_h:9.3f} {extrap / t_h:11.0f}")
    print(f"{'general-A ADMM, batched (all draws)':44s} {t_a:9.3f} {c_a:9.3f} {extrap / t_a:11.0f}")
    print(f"{f'cvxpy per draw, measured on {k} draws':44s} {t_c:9.3f} {c_c:9.3f}")
    print(f"{f'cvxpy per draw, extrapolated to {args.draws} draws':44s} {extrap:9.1f} {'':9s} {'1':>11s}")
    print()
    print(
        f"ADMM: converged {admm.all_converged}, iterations max {admm.iterations.max()}, "  # type: ignore[attr-defined]
        f"max |ADMM - sort| {np.max(np.abs(a - s)):.2e}"
    )
    print(f"cvxpy: all optimal {ref.all_optimal}, max |cvxpy - sort| on {k} draws {np.max(np.abs(r - s[:k])):.2e}")  # type: ignore[attr-defined]
    print(f"target: batched sort-and-threshold <= 30 s: {'met' if t_s <= 30 else 'MISSED'} ({t_s:.3f} s)")


if __name__ == "__main__":
    main()
