"""Lattice MCMC (DGGY 2023 Alg. 1) and L-lag coupling diagnostics (BJV 2019) vs exact discrete samplers.

Cases:

* ``4x4``: 4x4 table with both margins invariant (basic-move basis, m = 9),
  generalized Laplace l1, epsilon = 0.25, a = e^-1 (DGGY §5,
  docs/reference/subspace-integer-postprocessing.md T-I7/T-I8);
  also l2 with a = e^-1.5 for the convergence rows (T-I8b);
* ``102-county``: single total over 102 cells (basis e_j - e_{j+1}, m = 101),
  l1, epsilon = 0.192, a = e^-2.5 (DGGY's Illinois setting).

Printed, all from one run:

* MCMC proposals/s for one chain and for 200 vectorised chains (one proposal
  = one sweep of one chain);
* iterations to TV <= 0.01 from 200 coupled pairs (hybrid coupling, L = 2000):
  the BJV estimate, plus the confidence-adjusted ("upper") t* at 0.05 and the
  estimate at t = 1e4; wall time of the coupling run. For 102 counties the
  coupling runs under a time budget and reports censored pairs if they have
  not all met;
* exact discrete Laplace / Gaussian throughput (``mechanisms.discrete``,
  vectorised CKS samplers), and the ratios side by side.

Targets (issue): >= 5e6 proposals/s aggregate on 4x4 vectorised; coupling
diagnostics for 200 pairs in seconds; exact discrete samplers >= 1e6 samples/s;
convergence near 1e4 iterations for 4x4 l1.

Run: ``python benchmarks/lattice.py`` (about 1-2 min on 2 cores), or ``--quick``.
"""

from __future__ import annotations

import argparse
import math
import os
import platform
import time
from fractions import Fraction

import numpy as np

from semidp.accountant.core.budget import Budget
from semidp.accountant.lattice.kernel import basic_move_basis, kernel_lattice_basis, total_matrix
from semidp.mechanisms.coupling import choose_burn_in, meeting_times, tv_bound
from semidp.mechanisms.discrete import discrete_gaussian_array, discrete_laplace_array
from semidp.mechanisms.lattice_exact import ExactLatticeSampler
from semidp.mechanisms.lattice_mcmc import LatticeLaplaceTarget, LatticeSampler


def proposal_rate(smp: LatticeSampler, chains: int, iterations: int, seed: int, repeats: int) -> tuple[float, float]:
    """Best of ``repeats`` runs (the machine may be shared), and the acceptance rate."""
    best, acc = 0.0, 0.0
    for r in range(repeats):
        rng = np.random.default_rng(seed + r)
        s0 = smp.initial_states(chains, rng=rng)
        t = time.perf_counter()
        run = smp.run(s0, iterations, rng=rng, progress=False)
        best = max(best, chains * iterations / (time.perf_counter() - t))
        acc = run.acceptance_rate
    return best, acc


def exact_rate(fn, n: int) -> float:  # type: ignore[no-untyped-def]
    fn(min(n, 10_000))  # warm-up
    t = time.perf_counter()
    fn(n)
    return n / (time.perf_counter() - t)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer iterations, no l2 / census coupling")
    ap.add_argument("--seed", type=int, default=2023)
    args = ap.parse_args()
    q = args.quick
    print(
        f"# lattice MCMC benchmark  seed={args.seed}  python {platform.python_version()}  "
        f"numpy {np.__version__}  cpus={os.cpu_count()}  load={os.getloadavg()[0]:.2f}"
    )

    four = LatticeSampler(LatticeLaplaceTarget(basic_move_basis(4, 4), 0.25), ratio=math.exp(-1))
    four_l2 = LatticeSampler(LatticeLaplaceTarget(basic_move_basis(4, 4), 0.25, "l2"), ratio=math.exp(-1.5))
    county_basis = kernel_lattice_basis(total_matrix(102), method="block").matrix  # e_j - e_{j+1}
    county = LatticeSampler(LatticeLaplaceTarget(county_basis, 0.192), ratio=math.exp(-2.5))

    print("\n## MCMC proposals per second (one proposal = one sweep of one chain; best of 3 runs)")
    print(f"{'case':<14}{'m':>5}{'1 chain':>12}{'200 chains':>14}{'speed-up':>10}{'acceptance':>12}")
    rates: dict[str, float] = {}
    for name, smp, it1, it200 in (
        ("4x4 l1", four, 20_000 if q else 100_000, 5_000 if q else 20_000),
        ("102-county", county, 5_000 if q else 20_000, 500 if q else 2_000),
    ):
        r1, _ = proposal_rate(smp, 1, it1, args.seed, 1 if q else 3)
        r200, acc = proposal_rate(smp, 200, it200, args.seed + 1, 1 if q else 3)
        rates[name] = r200
        print(f"{name:<14}{smp.target.m:>5}{r1:>12.3g}{r200:>14.3g}{r200 / r1:>9.0f}x{acc:>12.3f}")

    print("\n## Convergence from 200 coupled pairs (hybrid coupling; BJV Thm 2.5 estimates, not certificates)")
    print(
        f"{'case':<14}{'L':>6}{'pairs':>6}{'wall s':>8}{'median tau':>11}{'max tau':>9}"
        f"{'t*(est<=.01)':>13}{'t*(upp<=.05)':>13}{'TV est @1e4':>12}{'censored':>9}"
    )
    t_star: dict[str, int] = {}
    runs: list[tuple[str, LatticeSampler, int, float | None]] = [("4x4 l1", four, 2000, None)]
    if not q:
        runs += [("4x4 l2", four_l2, 2000, None), ("102-county", county, 2000, 120.0)]
    for name, smp, lag, budget in runs:
        mt = meeting_times(
            smp,
            lag=lag,
            pairs=200,
            rng=np.random.default_rng(args.seed + 7),
            budget=Budget.of(budget),
            censor=True,
            progress=True,
        )
        if mt.censored:
            print(
                f"{name:<14}{lag:>6}{mt.pairs:>6}{mt.seconds:>8.1f}{'-':>11}{'>' + str(int(mt.tau.max())):>9}"
                f"{'-':>13}{'-':>13}{'-':>12}{mt.censored:>9}"
            )
            continue
        est = choose_burn_in(mt, 0.01, criterion="estimate")
        upp = choose_burn_in(mt, 0.05)
        t_star[name] = est.t
        print(
            f"{name:<14}{lag:>6}{mt.pairs:>6}{mt.seconds:>8.1f}{int(np.median(mt.tau)):>11}"
            f"{int(mt.tau.max()):>9}{est.t:>13}{upp.t:>13}{tv_bound(mt, 10_000).estimate:>12.3f}{0:>9}"
        )

    print("\n## Exact discrete samplers (CKS20, vectorised, exact integer arithmetic)")
    n = 200_000 if q else 1_000_000
    rng = np.random.default_rng(args.seed)
    lap = exact_rate(lambda k: discrete_laplace_array(Fraction(4), k, rng=rng), n)
    gau = exact_rate(lambda k: discrete_gaussian_array(Fraction(16), k, rng=rng), n)
    print(f"discrete Laplace  Lap_Z(t=4)      {lap:>12.3g} samples/s")
    print(f"discrete Gaussian N_Z(0, 16)      {gau:>12.3g} samples/s")

    print("\n## Exact lattice samplers (rejection from free coordinates; mechanisms.lattice_exact): releases/s")
    a44 = np.vstack(
        [
            np.kron(np.eye(4, dtype=np.int64), np.ones((1, 4), dtype=np.int64)),
            np.kron(np.ones((1, 4), dtype=np.int64), np.eye(4, dtype=np.int64)),
        ]
    )
    exact_rates: dict[str, float] = {}
    for name, a_mat, eps, k in (
        ("4x4 l1", a44, 0.25, 2_000 if q else 10_000),
        ("102-county", np.ones((1, 102), dtype=np.int64), 0.192, 5_000 if q else 20_000),
    ):
        ex = ExactLatticeSampler(a_mat, epsilon=eps, norm="l1")
        t0 = time.perf_counter()
        run = ex.run(k, rng=np.random.default_rng(args.seed + 11))
        exact_rates[name] = k / (time.perf_counter() - t0)
        print(
            f"{name:<14}{exact_rates[name]:>12.3g} releases/s  (acceptance {run.acceptance_rate:.3g}, "
            f"{run.proposals} proposals)"
        )

    print("\n## Side by side")
    r4 = rates["4x4 l1"]
    print(f"4x4 MCMC proposals/s (200 chains) / exact Lap_Z samples/s        = {r4 / lap:.2f}")
    if "4x4 l1" in t_star:
        rel = r4 / t_star["4x4 l1"]
        print(
            f"4x4 independent releases/s by MCMC (200 chains, burn-in {t_star['4x4 l1']}) = {rel:.3g}"
            f"  vs exact Lap_Z 16-vectors/s (no invariant) = {lap / 16:.3g}  (ratio {lap / 16 / rel:.0f}x)"
        )
    if "4x4 l1" in t_star:
        mc_rel = r4 / t_star["4x4 l1"]
        print(
            f"4x4 independent releases/s: exact sampler {exact_rates['4x4 l1']:.3g} vs MCMC {mc_rel:.3g} "
            f"(ratio {exact_rates['4x4 l1'] / mc_rel:.2f}; MCMC also charges delta')"
        )
    print(
        f"102-county independent releases/s by the exact sampler: {exact_rates['102-county']:.3g} "
        "(the MCMC coupling does not meet within its budget there)"
    )
    print(
        "\ntargets: >= 5e6 proposals/s (4x4, vectorised); 200-pair coupling in seconds; "
        ">= 1e6 exact samples/s; 4x4 l1 convergence near 1e4 iterations"
    )


if __name__ == "__main__":
    main()
