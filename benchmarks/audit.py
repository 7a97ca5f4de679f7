"""Benchmark: black-box statistical audits (``mechanism.kind = "implementation"``), all numbers from one run.

Prints

* **rate**: draws per second of the audit loop (calls of the release function, batched with ``size=``, and
  the vectorised statistics), for the correct 1-GDP Gaussian of a 3 x 3 table under one-way margins;
* **power**: over ``--seeds`` seeds, the share of audits that refute a Gaussian whose noise is 20% too small
  for a claim mu = 1 (``tests.planted_bugs:gaussian_20pct_small``), with the draws per side and the seconds
  per audit (target: power >= 0.95 with <= 10**6 draws per side in <= 60 s on 2 cores);
* **false alarms**: over the same seeds, the share of audits that refute a correct twin (Gaussian, DP
  histogram, K-norm); each must be <= 1 - confidence = 0.05 (a refutation of a correct mechanism is a
  false alarm, which the Clopper-Pearson/Bonferroni bounds make rarer than 1 - confidence).

Run: ``python benchmarks/audit.py`` (about two minutes), ``--seeds 5`` for a quick look.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # tests.planted_bugs holds the planted implementations
    sys.path.insert(0, str(ROOT))

from semidp.verify.load import loads  # noqa: E402
from semidp.verify.runner import audit  # noqa: E402
from tests.planted_bugs import spec_text  # noqa: E402

TWINS = (
    ("gaussian_exact", "semi-dp", "{ mu = 1.0 }"),
    ("histogram_replace", "dp", "{ mu = 1.0 }"),
    ("knorm_exact", "semi-dp", "{ epsilon = 1.0 }"),
)


def run(function: str, framework: str, claim: str, draws: int, seed: int) -> tuple[bool, float, int, float]:
    """``(refuted, seconds, total draws, audit-loop draws per second)`` of one audit."""
    t = time.perf_counter()
    r = audit(loads(spec_text(function, framework=framework, claim=claim, draws=draws, seed=seed)), allow_code=True)
    sec = r.report["audit_lower_bound"]
    return bool(sec["refuted"]), time.perf_counter() - t, int(sec["draws"]["total"]), float(sec["draws"]["per_second"])


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seeds", type=int, default=20)
    p.add_argument("--draws", type=int, default=20_000, help="draws per side of each pair")
    args = p.parse_args()
    print(f"cores: {os.cpu_count()}, load average: {os.getloadavg()}")
    seeds = range(1, args.seeds + 1)

    _, secs, total, rate = run("gaussian_exact", "semi-dp", "{ mu = 1.0 }", 250_000, 0)
    print(f"rate: {rate:,.0f} draws/s of the release loop; whole audit {total:,} draws in {secs:.2f} s")

    hits, times, totals = 0, [], []
    for s in seeds:
        ref, secs, total, _ = run("gaussian_20pct_small", "semi-dp", "{ mu = 1.0 }", args.draws, s)
        hits += ref
        times.append(secs)
        totals.append(total)
    print(
        f"power: Gaussian with sigma 20% too small vs claim mu = 1: refuted {hits}/{len(times)} "
        f"= {hits / len(times):.2f}; {args.draws:,} draws per side per pair ({max(totals) // 2:,} per side in all "
        f"pairs), {sum(times) / len(times):.2f} s per audit (max {max(times):.2f} s)"
    )
    for fn, fw, cl in TWINS:
        alarms = sum(run(fn, fw, cl, args.draws, s)[0] for s in seeds)
        print(f"false alarms: {fn} ({fw}, {cl}): {alarms}/{len(seeds)} = {alarms / len(seeds):.2f} (<= 0.05 stated)")


if __name__ == "__main__":
    main()
