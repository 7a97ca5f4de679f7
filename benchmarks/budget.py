"""Does ``--time-limit`` hold? Every shipped spec and the stress specs of issue Step 7, run by the CLI.

For each spec it runs ``semidp audit SPEC --time-limit T --json`` in a fresh process (so Python's start-up
counts, as it does for a user) and prints the wall time, the ratio to the contract's allowance
``T * 1.1 + 2`` (must be <= 1), the peak memory of the process tree (``ru_maxrss`` of the children,
must stay under the 2 GiB guard plus the parent's own size), the exit code and the verdict.

The stress specs are generated: a 6x6x6 table under all two-way margins (a(t) out of reach), 10x10 and
12x12 k-norm tables, and the census persons table with all its 104 832 cells.

Run: ``python benchmarks/budget.py [--time-limit 10] [--only NAME,...]`` (about 3 minutes on 2 cores).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]


def _table_spec(name: str, r: int, c: int, kind: str, seed: int) -> str:
    t = np.random.default_rng(seed).poisson(2, size=r * c).tolist()
    return f"""version = 1
name = "{name}"
[data]
features = [{{ name = "A", levels = {r} }}, {{ name = "B", levels = {c} }}]
adjacency = "replace-one"
table = {t}
[invariant]
kind = "margins"
margins = [["A"], ["B"]]
[mechanism]
kind = "{kind}"
epsilon = 1.0
[claim]
framework = "semi-dp"
guarantee = {{ epsilon = 1.0 }}
[audit]
samples = 200
seed = 1
"""


def _stress_specs(tmp: Path) -> list[Path]:
    rng = np.random.default_rng(6)
    t666 = rng.poisson(1.5, size=216).tolist()
    specs = {
        "stress-6x6x6-two-way": f"""version = 1
name = "stress-6x6x6-two-way"
[data]
features = [{{ name = "A", levels = 6 }}, {{ name = "B", levels = 6 }}, {{ name = "C", levels = 6 }}]
table = {t666}
[invariant]
kind = "margins"
margins = [["A", "B"], ["A", "C"], ["B", "C"]]
[mechanism]
kind = "published"
guarantee = {{ zcdp = 0.5 }}
[claim]
framework = "semi-dp"
guarantee = {{ zcdp = 20 }}
""",
        "stress-10x10-k-norm": _table_spec("stress-10x10-k-norm", 10, 10, "k-norm", 1),
        "stress-12x12-k-norm": _table_spec("stress-12x12-k-norm", 12, 12, "k-norm", 2),
    }
    census = (ROOT / "specs" / "census-2020-persons.toml").read_text(encoding="utf-8")
    cells = np.random.default_rng(1).poisson(3, size=52 * 8 * 2 * 2 * 63).tolist()
    specs["stress-census-full-table"] = census.replace(
        'name = "census-2020-persons"', 'name = "stress-census-full-table"'
    ).replace("[invariant]", f"table = {cells}\n\n[invariant]", 1)
    out = []
    for name, text in specs.items():
        p = tmp / f"{name}.toml"
        p.write_text(text, encoding="utf-8")
        out.append(p)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--time-limit", type=float, default=10.0)
    ap.add_argument("--only", default="", help="comma-separated spec names (file stems)")
    args = ap.parse_args()
    limit = args.time_limit
    allowance = limit * 1.1 + 2
    with tempfile.TemporaryDirectory() as d:
        specs = sorted((ROOT / "specs").glob("*.toml")) + _stress_specs(Path(d))
        if args.only:
            keep = set(args.only.split(","))
            specs = [p for p in specs if p.stem in keep]
        env = {**os.environ, "SEMIDP_CACHE_DIR": str(Path(d) / "cache")}  # cold hull cache: the worst case
        print(f"--time-limit {limit:g} s; allowance T x 1.1 + 2 = {allowance:g} s; memory guard 2 GiB\n")
        print(f"{'spec':44} {'seconds':>8} {'/allow':>7} {'peak MB':>8} {'exit':>5}  verdict")
        worst = 0.0
        for p in specs:
            before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
            t0 = time.monotonic()
            r = subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "semidp.verify.cli",
                    "audit",
                    str(p),
                    "--time-limit",
                    str(limit),
                    "--json",
                    "--allow-code",
                ],
                capture_output=True,
                text=True,
                env=env,
            )
            dt = time.monotonic() - t0
            peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
            try:
                verdict = json.loads(r.stdout).get("verdict", "?") if r.stdout.strip() else "-"
            except json.JSONDecodeError:
                verdict = "?"
            worst = max(worst, dt / allowance)
            mb = f"{peak / 1024:.0f}" if peak > before else "<=prev"  # ru_maxrss is a running maximum
            print(f"{p.stem:44} {dt:8.2f} {dt / allowance:7.2f} {mb:>8} {r.returncode:5d}  {verdict}")
        print(f"\nworst wall time / allowance: {worst:.2f} (must be <= 1)")


if __name__ == "__main__":
    main()
