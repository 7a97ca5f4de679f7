"""Speed-up of ``semidp audit --workers N`` (Dask, extra ``semidp[dask]``) over the serial run, in one run.

Audits the same list of shipped specs (the drawing and searching ones, repeated ``--repeat`` times) three
ways in this process: serially, on a local Dask cluster of ``--workers`` processes (cluster start-up
included), and checks that the reports are identical for the same seed (apart from wall-clock fields and
whether a K-norm hull came from the cache). Prints wall times and the
speed-up. On this project's 2-core machines the ceiling is about 2x.

Run: ``python benchmarks/scaleout.py [--workers 2] [--repeat 2]`` (about a minute).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from semidp.accountant.core.progress import report_stages
from semidp.verify.scaleout import Cluster, map_specs
from semidp.verify.spec_job import JobOptions

ROOT = Path(__file__).resolve().parents[1]
SPECS = [
    "table-3x3-k-norm.toml",
    "table-4x4-k-norm.toml",
    "table-3x3-projected-gaussian.toml",
    "delinquent-children-4x4-generalized-gaussian.toml",
    "table-3x3-margins.toml",
    "umpu-odds-ratio.toml",
]


def _stable(obj: object) -> object:
    """A report without its wall-clock fields (``seconds``) and the hull cache's hit/miss record."""
    if isinstance(obj, dict):
        return {k: _stable(v) for k, v in obj.items() if k not in ("seconds", "hull_cache")}
    if isinstance(obj, list):
        return [_stable(v) for v in obj]
    return obj


def _run(paths: list[str], cluster: Cluster) -> tuple[float, list[str]]:
    t0 = time.monotonic()
    reports = []
    for got in map_specs(paths, JobOptions(seed=5, time_limit=120.0), cluster):
        assert got.value is not None, got.message
        reports.append(json.dumps(_stable(got.value.to_json()), sort_keys=True))
    return time.monotonic() - t0, reports


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=2)
    args = ap.parse_args()
    report_stages(None)
    paths = [str(ROOT / "specs" / s) for s in SPECS] * args.repeat
    serial_t, serial = _run(paths, Cluster())
    dask_t, dask = _run(paths, Cluster(workers=args.workers))
    print(f"{len(paths)} spec audits ({len(SPECS)} specs x {args.repeat})")
    print(f"serial:                    {serial_t:7.2f} s")
    print(f"Dask, {args.workers} local workers:    {dask_t:7.2f} s (cluster start-up included)")
    print(f"speed-up serial / Dask:    {serial_t / dask_t:7.2f}x")
    print(f"identical reports:         {serial == dask} (wall-clock fields and the hull cache record aside)")


if __name__ == "__main__":
    main()
