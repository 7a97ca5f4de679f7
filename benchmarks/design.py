"""How long does a ``[design]`` take against one audit of the same workload, and how tight is it?

Side by side in one run (issue 26, Step 13, item 5): the audit of ``specs/census-2020-pl94-persons-us.toml`` (the
production workload as written: advertised, exact composition, query-level Semi-DP, the certificate's
breakdowns) and the design of ``specs/census-2020-pl94-persons-us-design.toml`` (the same workload and audit,
plus the search for the largest common scale c whose certified query-level Semi-DP epsilon at delta = 1e-10 is at
most 17.14). It prints the wall time of each audit, the design search's own time (``design.seconds``), the ratio
design / audit (target: <= 10), the PLD evaluations, the tightness reached (``c * (1 + gap)`` fails by its
certified lower end; gap <= 1e-3 is the contract) and whether it is proven.

Run: ``python benchmarks/design.py [--repeat 3]`` (about 20 s a repeat on a quiet 2-core machine). In process:
no start-up time, no ``--out`` (plots are not part of the design).
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

from semidp.accountant.core.budget import Budget
from semidp.verify.load import load
from semidp.verify.runner import audit

ROOT = Path(__file__).resolve().parents[1]
AUDIT_SPEC = ROOT / "specs" / "census-2020-pl94-persons-us.toml"
DESIGN_SPEC = ROOT / "specs" / "census-2020-pl94-persons-us-design.toml"


def _timed(path: Path) -> tuple[float, dict[str, object]]:
    spec = load(str(path))
    t0 = time.perf_counter()
    report = audit(spec, budget=Budget.of(600.0)).report
    return time.perf_counter() - t0, report


def main() -> None:
    """Run the side-by-side comparison ``--repeat`` times and print one row per repeat and the medians."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    rows = []
    print(f"{'audit s':>8} {'design spec s':>14} {'search s':>9} {'search/audit':>13} {'evals':>6} {'gap':>9} tight  c")
    for _ in range(args.repeat):
        audit_s, _ = _timed(AUDIT_SPEC)
        design_s, report = _timed(DESIGN_SPEC)
        d = report["design"]
        assert isinstance(d, dict)
        search = float(d["seconds"])
        gap = float(d["failing"]["ratio"]) - 1.0
        rows.append((audit_s, design_s, search, search / audit_s, gap))
        print(
            f"{audit_s:8.2f} {design_s:14.2f} {search:9.2f} {search / audit_s:13.2f} {d['iterations']:>6} "
            f"{gap:9.2e} {d['tight']!s:>5}  {d['scale_exact']} = {d['scale']:.7f}"
        )
    med = [statistics.median(col) for col in zip(*rows)]
    print(
        f"median: audit {med[0]:.2f} s, design spec {med[1]:.2f} s, search {med[2]:.2f} s, search/audit {med[3]:.2f} "
        f"(target <= 10), design spec/audit {med[1] / med[0]:.2f}, tightness gap {med[4]:.2e} (<= 1e-3)"
    )


if __name__ == "__main__":
    main()
