"""The ``semidp`` command line (contract: ``specs/README.md``).

``semidp audit SPEC [SPEC ...] [--json] [--out DIR] [--seed N]``
    Audit specs; exit 0 if every claim holds and every check passes, 1 if a
    claim or check fails, 2 if a spec is invalid or cannot be evaluated, 3 if
    inconclusive and nothing failed.
``semidp schema``
    Print the JSON schema of spec files (generated from the dataclasses).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from accountant.errors import InvalidSpec, ToolkitError
from verify.load import load
from verify.plots import plot_privacy
from verify.render import render_markdown, render_text
from verify.report import Report
from verify.runner import Audit, audit, exit_code
from verify.schema import schema
from verify.version import __version__

EXIT_OK, EXIT_FAILS, EXIT_INVALID, EXIT_INCONCLUSIVE = 0, 1, 2, 3


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="semidp",
        description="Privacy accounting and verification for releases published with exact invariants.",
    )
    p.add_argument("--version", action="version", version=f"semidp {__version__}")
    sub = p.add_subparsers(dest="command", required=True)
    a = sub.add_parser("audit", help="audit spec files and check their claims")
    a.add_argument("specs", nargs="+", metavar="SPEC", help="spec file(s) (TOML, contract: specs/README.md)")
    a.add_argument("--json", action="store_true", help="print JSON (an array for several specs)")
    a.add_argument("--out", metavar="DIR", help="also write DIR/<name>.json, .md and plots (PNG)")
    a.add_argument("--seed", type=int, default=None, help="seed for sampling-based checks")
    a.add_argument("--time-limit", type=float, default=60.0, metavar="SECONDS",
                   help="budget for exact searches per spec (default 60); past it, proven bounds are used")
    sub.add_parser("schema", help="print the JSON schema of spec files")
    return p


def _write_outputs(out: Path, result: Audit) -> Report:
    """Write the report's files under ``out``; return the report with its plots and samples file named."""
    out.mkdir(parents=True, exist_ok=True)
    r = result.typed
    name = r.name
    png = out / f"{name}.privacy.png"
    plot_privacy(
        [("advertised", result.advertised), (f"effective ({r.effective.framework})", result.effective)],
        png,
        f"{name}: advertised vs effective privacy",
    )
    plots = [png.name]
    for plot in result.plots:
        plots.append(plot.draw(out / f"{name}.{plot.suffix}.png", f"{name}: {plot.title}").name)
    samples_file = None
    if result.samples is not None:  # contract: float64, shape (samples, cells), row-major cells
        np.save(out / f"{name}.samples.npy", np.ascontiguousarray(result.samples, dtype=np.float64))
        samples_file = f"{name}.samples.npy"
    r = dataclasses.replace(r, plots=tuple(plots), samples_file=samples_file)
    (out / f"{name}.json").write_text(json.dumps(r.to_json(), indent=2) + "\n", encoding="utf-8")
    (out / f"{name}.md").write_text(render_markdown(r), encoding="utf-8")
    return r


def _audit(args: argparse.Namespace) -> int:
    reports: list[Report] = []
    invalid = False
    for path in args.specs:
        try:
            spec = load(path)
            result = audit(spec, seed=args.seed, time_limit=args.time_limit)
            report = _write_outputs(Path(args.out), result) if args.out else result.typed
        except InvalidSpec as e:
            print(f"semidp: {e}", file=sys.stderr)
            invalid = True
            continue
        except ToolkitError as e:
            print(f"semidp: {path}: cannot be evaluated: {e}", file=sys.stderr)
            invalid = True
            continue
        reports.append(report)
        if not args.json:
            sys.stdout.write(render_text(report))
            if len(args.specs) > 1:
                sys.stdout.write("\n")
    if args.json:
        payload: Any = reports[0].to_json() if len(args.specs) == 1 and reports else [r.to_json() for r in reports]
        if reports or len(args.specs) > 1:
            print(json.dumps(payload, indent=2))
    if invalid:
        return EXIT_INVALID
    return exit_code([r.verdict for r in reports])


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``semidp`` console script; returns the exit status."""
    args = _parser().parse_args(argv)
    if args.command == "schema":
        print(json.dumps(schema(), indent=2))
        return EXIT_OK
    return _audit(args)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
