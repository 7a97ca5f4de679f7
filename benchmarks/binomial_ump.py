"""Benchmark: the binomial UMP test with Tulap noise (Awan & Slavkovic 2018) at n = 10**2 .. 10**6.

For each ``n`` it times a whole test -- calibrating ``m``, the exact size and a p-value eight standard deviations
out -- as the median of repeats (wall and CPU), and prints each time as a ratio to the ``n = 10**2`` time measured
in the same run: the work grows far slower than ``n`` (sums in log space over a window around the mean). Session 33,
load 3 on the shared 2-core machine: 2.3 ms at ``n = 10**2``, 23 ms at ``n = 10**6`` (ratios 3-23 from ``10**3`` on,
noisy; the ``10**4`` case was the slowest). This replaces the wall-time assertion ``tests/test_binomial_ump.py`` made before session 33 (under
0.5 s at ``n = 10**6``), which a loaded machine failed without any wrong answer.

Run: ``python benchmarks/binomial_ump.py [--repeats 5]``.
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import time

from semidp.mechanisms.binomial_ump import BinomialUMPTest
from semidp.mechanisms.tulap import Tulap


def _one(n: int) -> tuple[float, float]:
    w0, c0 = time.perf_counter(), time.process_time()
    t = BinomialUMPTest(n, 0.5, Tulap(1.0), alpha=0.05)
    r = t.result(n / 2 + 8 * math.sqrt(n / 4) + 0.5)
    assert abs(r.size - 0.05) <= 1e-12 * 0.05 and r.reject
    return time.perf_counter() - w0, time.process_time() - c0


def main() -> None:
    """Print the table (see the module docstring)."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    print(f"load average {os.getloadavg()[0]:.2f}; median of {args.repeats} runs per n")
    print(f"{'n':>9}  {'wall s':>8}  {'cpu s':>8}  {'wall / n=100':>12}")
    base = None
    for n in (10**2, 10**3, 10**4, 10**5, 10**6):
        runs = [_one(n) for _ in range(args.repeats)]
        wall, cpu = statistics.median(r[0] for r in runs), statistics.median(r[1] for r in runs)
        base = base or wall
        print(f"{n:>9}  {wall:8.4f}  {cpu:8.4f}  {wall / base:12.2f}")


if __name__ == "__main__":
    main()
