"""Benchmark: black-box statistical audits (``mechanism.kind = "implementation"``), all numbers from one run.

Prints

* **rate**: draws per second of the release function in the audit's worker processes, per-call
  (``f(histogram, rng)``, one release per call) and batched (``size=``), on one process and on all cores
  (``mechanism.processes``), for the correct 1-GDP Gaussian of a 3 x 3 table under one-way margins;
* **per-call refutation**: over ``--seeds`` seeds, the 20%-too-small Gaussian written per call
  (``tests.planted_bugs:gaussian_20pct_small_loop``) at the default settings a user gets (``samples`` =
  10**6 per side, ``--time-limit 60``): share refuted (target >= 0.95), wall seconds and draws per side
  until the refutation (target <= 60 s on 2 cores), and the round it came in;
* **false alarms**: over the same seeds, the share of audits that refute a correct twin (Gaussian, DP
  histogram, K-norm; batched, ``--draws`` per side); each must be <= 1 - confidence = 0.05;
* **per-call twin**: the correct Gaussian written per call (``gaussian_loop_only``) at the default settings of
  the per-call refutation, over the same seeds: its false alarms (<= 1 - confidence = 0.05), how its audits
  ended (budget or samples) and their wall seconds, draws per side and empirical lower bound.
* **efficiency**: for mechanisms whose epsilon(delta) is known exactly (the batched 1-GDP Gaussians: their
  claim is tight, so the claim's certified epsilon is the true one), the median over ``--efficiency-seeds`` of
  the empirical epsilon lower bound divided by the true epsilon at ``delta = 1e-6``, at each of
  ``--efficiency-draws`` draws per side (default 10**5 and 10**6; ``--time-limit`` raised to 600 s so the
  draws are made), with the likelihood-ratio statistics and with the classifier added.

Run: ``python benchmarks/audit.py`` (about 50 minutes on 2 cores), ``--seeds 3`` for a quick look, ``--parts``
to run some parts only (e.g. ``--parts refute twin`` for the per-call figures of the README).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # tests.planted_bugs holds the planted implementations
    sys.path.insert(0, str(ROOT))

from semidp.accountant.core.budget import Budget  # noqa: E402
from semidp.verify.load import loads  # noqa: E402
from semidp.verify.run_options import RunOptions  # noqa: E402
from semidp.verify.runner import audit  # noqa: E402
from tests.planted_bugs import spec_text  # noqa: E402

TWINS = (
    ("gaussian_exact", "semi-dp", "{ mu = 1.0 }"),
    ("histogram_replace", "dp", "{ mu = 1.0 }"),
    ("knorm_exact", "semi-dp", "{ epsilon = 1.0 }"),
)


def run(
    function: str,
    framework: str,
    claim: str,
    draws: int,
    seed: int,
    *,
    processes: int | None = None,
    statistics_key: str = "likelihood-ratio",
    time_limit: float = 60.0,
) -> tuple[dict[str, object], float]:
    """The ``audit_lower_bound`` section of one audit (``--time-limit 60``) and its wall seconds."""
    text = spec_text(function, framework=framework, claim=claim, draws=draws, seed=seed)
    if processes is not None:
        text = text.replace("[claim]", f"processes = {processes}\n[claim]")
    text = text.replace("[claim]", f'statistics = "{statistics_key}"\n[claim]')
    t = time.perf_counter()
    r = audit(loads(text), options=RunOptions(allow_code=True), budget=Budget.of(time_limit))
    sec: dict[str, object] = r.report["audit_lower_bound"]
    return sec, time.perf_counter() - t


def rate(function: str, draws: int, processes: int | None) -> float:
    """Draws per second of the release function in the workers (the twin runs to its samples)."""
    sec, _ = run(function, "semi-dp", "{ mu = 1.0 }", draws, 0, processes=processes)
    d = sec["draws"]
    assert isinstance(d, dict)
    return float(d["total"]) / float(d["draw_seconds"])


#: Correct twins whose claim is tight (1-GDP Gaussians): the claim's certified epsilon(delta) is the true one.
EXACT = (("gaussian_exact", "semi-dp", "{ mu = 1.0 }"), ("histogram_replace", "dp", "{ mu = 1.0 }"))


def efficiency(draws_list: list[int], n_seeds: int) -> None:
    """Median empirical epsilon lower bound / true epsilon at delta 1e-6 (module docstring)."""
    for fn, fw, cl in EXACT:
        for n in draws_list:
            for key in ("likelihood-ratio", "all"):
                ratios, walls = [], []
                for s in range(1, n_seeds + 1):
                    sec, secs = run(fn, fw, cl, n, s, statistics_key=key, time_limit=600.0)
                    rows = sec["epsilon_delta"]
                    assert isinstance(rows, list)
                    ratios.append(float(rows[0]["epsilon_lower"]) / float(rows[0]["epsilon_upper"]))
                    walls.append(secs)
                print(
                    f"efficiency: {fn} ({fw}, {cl}), {n:,} draws per side, statistics {key}: median "
                    f"eps_lower / eps_true = {statistics.median(ratios):.3f} over {n_seeds} seeds "
                    f"(min {min(ratios):.3f}, max {max(ratios):.3f}); wall median {statistics.median(walls):.1f} s"
                )


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--seeds", type=int, default=20)
    p.add_argument("--draws", type=int, default=20_000, help="draws per side of each pair for the batched twins")
    p.add_argument("--efficiency-seeds", type=int, default=5)
    p.add_argument("--efficiency-draws", type=int, nargs="*", default=[100_000, 1_000_000])
    p.add_argument("--parts", nargs="*", choices=PARTS, default=list(PARTS), help="parts to run (default: all)")
    args = p.parse_args()
    print(f"cores: {os.cpu_count()}, load average: {os.getloadavg()}")
    seeds = range(1, args.seeds + 1)
    if "efficiency" in args.parts:
        efficiency(args.efficiency_draws, args.efficiency_seeds)
    if "rate" in args.parts:
        rates()
    if "refute" in args.parts:
        per_call_refutation(seeds)
    if "alarms" in args.parts:
        for fn, fw, cl in TWINS:
            alarms = sum(bool(run(fn, fw, cl, args.draws, s)[0]["refuted"]) for s in seeds)
            print(f"false alarms: {fn} ({fw}, {cl}): {alarms}/{len(seeds)} = {alarms / len(seeds):.2f} (<= 0.05)")
    if "twin" in args.parts:
        per_call_twin(seeds)
    print(f"load average at the end: {os.getloadavg()}")


#: What :func:`main` can run (``--parts``).
PARTS = ("efficiency", "rate", "refute", "alarms", "twin")


def rates() -> None:
    """Draws per second, per-call and batched, on one process and on all cores."""
    for fn, n in (("gaussian_loop_only", 40_000), ("gaussian_exact", 1_000_000)):
        one, every = rate(fn, n, 1), rate(fn, n, None)
        kind = "per-call" if fn.endswith("loop_only") else "batched"
        print(f"rate ({kind}): {one:,.0f} draws/s on 1 process, {every:,.0f} on all cores ({every / one:.2f}x)")


def per_call_refutation(seeds: range) -> None:
    """The 20 %-small Gaussian written per call, at the default settings, over ``seeds``."""
    hits, times, sides, rounds = 0, [], [], []
    for s in seeds:
        sec, secs = run("gaussian_20pct_small_loop", "semi-dp", "{ mu = 1.0 }", 1_000_000, s)
        hits += bool(sec["refuted"])
        times.append(secs)
        d = sec["draws"]
        assert isinstance(d, dict) and isinstance(sec["rounds"], list)
        sides.append(int(d["drawn_per_side"]))
        rounds.append(len(sec["rounds"]))
    print(
        f"per-call refutation: Gaussian sigma 20% too small vs mu = 1, samples 10**6, --time-limit 60: refuted "
        f"{hits}/{len(times)} = {hits / len(times):.2f}; wall median {statistics.median(times):.1f} s (max "
        f"{max(times):.1f} s); draws per side median {statistics.median(sides):,.0f} (max {max(sides):,}); "
        f"rounds median {statistics.median(rounds):g} (max {max(rounds)})"
    )


def per_call_twin(seeds: range) -> None:
    """The correct Gaussian written per call, at the default settings, over ``seeds``: false alarms and ends."""
    alarms, times, sides, lows, stops = 0, [], [], [], []
    claimed = 0.0
    for s in seeds:
        sec, secs = run("gaussian_loop_only", "semi-dp", "{ mu = 1.0 }", 1_000_000, s)
        alarms += bool(sec["refuted"])
        eps = sec["epsilon_delta"]
        d = sec["draws"]
        assert isinstance(eps, list) and isinstance(d, dict)
        times.append(secs)
        sides.append(int(d["drawn_per_side"]))
        lows.append(float(eps[0]["epsilon_lower"]))
        claimed = float(eps[0]["epsilon_upper"])
        stops.append(str(sec["stop"]))
    ends = ", ".join(f"{k} {stops.count(k)}" for k in sorted(set(stops)))
    print(
        f"per-call twin (correct Gaussian) vs mu = 1, samples 10**6, --time-limit 60: false alarms {alarms}/"
        f"{len(times)} = {alarms / len(times):.2f} (<= 0.05); stopped by {ends}; wall median "
        f"{statistics.median(times):.1f} s (max {max(times):.1f} s); draws per side median "
        f"{statistics.median(sides):,.0f}; epsilon lower bound median {statistics.median(lows):.3f} (max "
        f"{max(lows):.3f}) vs claimed {claimed:.3f} at delta 1e-6"
    )


if __name__ == "__main__":
    main()
