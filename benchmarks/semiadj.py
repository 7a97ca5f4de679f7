"""Benchmark: the exact semi-adjacent parameter a(t) by three methods, side by side.

Cho & Awan 2024, Def. 13 (a(t)) and Thm. 16 (a(t) <= p + 1 for one-way margins).
Instances grow along two families, all with one-way margins published:

* p = 3, 4, 5 binary features;
* 3 x 3 and 4 x 4 tables;

with n = 5, 10, 20, 50, 100 records drawn multinomially (uniform cell
probabilities, fixed seed printed in the header). For each instance it runs

* brute force over ordered datasets (Def. 13 literally; refuses when k**n is
  above its limit),
* graph search over conforming histograms (refuses when the fiber size,
  estimated before enumerating, is above its limit),
* integer programming (no enumeration; time budget),

and prints, per method, the value, the time and where it stopped. The fiber
size column is the number of conforming histograms (exact count by dynamic
programming when cheap, otherwise an upper bound, marked ``<=``).

Run: ``python benchmarks/semiadj.py`` (about two to four minutes), or
``--quick`` for n <= 20 only.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from dataclasses import dataclass

import numpy as np

from semidp.accountant.combinatorics.fiber import conforming_fiber
from semidp.accountant.combinatorics.semiadjacent_brute_force import semiadjacent_by_brute_force
from semidp.accountant.combinatorics.semiadjacent_graph import semiadjacent_by_graph_search
from semidp.accountant.combinatorics.semiadjacent_ilp import semiadjacent_by_integer_program
from semidp.accountant.core.budget import Budget
from semidp.accountant.core.errors import SearchTooLarge
from semidp.accountant.data.dataspace import DataSpace
from semidp.accountant.data.invariants import Margins


@dataclass
class Run:
    method: str
    value: int | None
    exact: bool
    seconds: float
    status: str


def _families() -> list[tuple[str, DataSpace]]:
    out = []
    for p in (3, 4, 5):
        out.append((f"{p} binary", DataSpace.of(*[(f"F{j}", 2) for j in range(p)])))
    out.append(("3x3 table", DataSpace.of(("row", 3), ("col", 3))))
    out.append(("4x4 table", DataSpace.of(("row", 4), ("col", 4))))
    return out


def _run(method: str, fn, **kw) -> Run:  # type: ignore[no-untyped-def]
    t0 = time.monotonic()
    try:
        res = fn(**kw)
    except SearchTooLarge as e:
        return Run(method, None, False, time.monotonic() - t0, f"refused {e.size:.2g}>{e.limit:.2g}")
    dt = time.monotonic() - t0
    if res.exact:
        status = "exact"
    else:
        status = f"out of time: {res.value}<=a<={res.upper}"
    return Run(method, res.value, res.exact, dt, status)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seed", type=int, default=2024, help="seed of the multinomial tables")
    ap.add_argument("--sizes", type=int, nargs="+", default=[5, 10, 20, 50, 100])
    ap.add_argument("--quick", action="store_true", help="n <= 20 only")
    ap.add_argument("--time-limit", type=float, default=60.0, help="seconds per method per instance")
    ap.add_argument("--brute-limit", type=int, default=200_000, help="max ordered datasets k**n")
    ap.add_argument("--graph-limit", type=int, default=1_000_000, help="max conforming histograms")
    ap.add_argument("--json", action="store_true", help="print JSON lines instead of a table")
    args = ap.parse_args(argv)
    sizes = [n for n in args.sizes if not args.quick or n <= 20]
    rng = np.random.default_rng(args.seed)
    print(
        f"# semi-adjacent parameter a(t), one-way margins; seed={args.seed}; "
        f"time limit {args.time_limit:g} s/method; brute limit {args.brute_limit} ordered "
        f"datasets; graph limit {args.graph_limit} histograms; python {platform.python_version()}"
    )
    header = (
        f"{'instance':<12}{'n':>4}{'fiber size':>16}  {'brute force':<34}{'graph search':<34}{'integer program':<34}"
    )
    if not args.json:
        print(header)
        print("-" * len(header))
    fast_big: list[str] = []
    for name, space in _families():
        inv = Margins(tuple((f,) for f in space.names))
        for n in sizes:
            table = rng.multinomial(n, np.ones(space.n_cells) / space.n_cells)
            fib = conforming_fiber(space, inv, table=table)
            est = fib.estimate_size()
            size = f"{est.value}" if est.exact else f"<={est.value:.3g}"
            runs = [
                _run(
                    "brute-force",
                    semiadjacent_by_brute_force,
                    space=space,
                    invariant=inv,
                    table=table,
                    limit=args.brute_limit,
                    budget=Budget.of(args.time_limit),
                ),
                _run(
                    "graph-search",
                    semiadjacent_by_graph_search,
                    space=space,
                    invariant=inv,
                    table=table,
                    limit=args.graph_limit,
                    budget=Budget.of(args.time_limit),
                ),
                _run(
                    "integer-program",
                    semiadjacent_by_integer_program,
                    space=space,
                    invariant=inv,
                    table=table,
                    budget=Budget.of(args.time_limit),
                ),
            ]
            values = {r.value for r in runs if r.exact}
            if len(values) > 1:
                print(f"!! DISAGREEMENT on {name} n={n}: {[(r.method, r.value) for r in runs]}", file=sys.stderr)
                return 1
            g = runs[1]
            if est.exact and est.value >= 100_000 and g.exact and g.seconds < 10:
                fast_big.append(f"{name} n={n}: {est.value} histograms in {g.seconds:.2f} s")
            if args.json:
                print(
                    json.dumps(
                        {
                            "instance": name,
                            "n": n,
                            "table": table.tolist(),
                            "fiber_size": est.value,
                            "fiber_size_exact": est.exact,
                            "runs": [r.__dict__ for r in runs],
                        }
                    )
                )
                continue
            cells = []
            for r in runs:
                val = "-" if r.value is None else str(r.value)
                text = f"a={val} {r.seconds:6.2f}s {r.status}"
                cells.append(f"{text[:33]:<34}")
            print(f"{name:<12}{n:>4}{size:>16}  " + "".join(cells))
    print()
    print("target: exact a(t) on fibers of >= 1e5 histograms in under 10 s (graph search):")
    for line in fast_big or ["  (none in this run)"]:
        print("  " + line)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
