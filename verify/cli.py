"""The ``semidp`` command line (contract: ``specs/README.md``).

``semidp audit SPEC [SPEC ...] [--json] [--out DIR] [--seed N]``
    Audit specs; exit 0 if every claim holds and every check passes, 1 if a
    claim or check fails, 2 if a spec is invalid or cannot be evaluated, 3 if
    inconclusive and nothing failed.
``semidp schema``
    Print the JSON schema of spec files (generated from the dataclasses).

An unexpected error is reported in one line with exit status 2 (``--debug``
prints its traceback); exit status 1 always means a refuted claim or a failed check.
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import json
import sys
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from semidp.accountant.errors import InvalidSpec, SearchTooLarge, ToolkitError
from semidp.verify.load import load
from semidp.verify.plots import plot_privacy
from semidp.verify.render import render_markdown, render_text
from semidp.verify.report import Report
from semidp.verify.runner import Audit, audit, exit_code
from semidp.verify.schema import schema
from semidp.verify.spec import Spec
from semidp.verify.spec_values import guarantee_of
from semidp.verify.supervisor import process_age, supervise
from semidp.verify.version import __version__

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
    a.add_argument(
        "--seed", type=_seed, default=None, metavar="N", help="seed for sampling-based checks (an integer >= 0)"
    )
    a.add_argument(
        "--time-limit",
        type=_seconds,
        default=60.0,
        metavar="SECONDS",
        help="wall-clock budget for each spec (default 60); what runs out degrades to proven bounds",
    )
    a.add_argument("--debug", action="store_true", help="print the traceback of an internal error")
    sub.add_parser("schema", help="print the JSON schema of spec files")
    return p


def _seed(text: str) -> int:
    """``--seed``: an integer >= 0 (numpy seeds are non-negative)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"{value} is negative; a seed is an integer >= 0")
    return value


def _seconds(text: str) -> float:
    """``--time-limit``: a finite number of seconds > 0."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not (0 < value < float("inf")):
        raise argparse.ArgumentTypeError(f"{text} must be a finite number of seconds > 0")
    return value


class OutputError(ToolkitError):
    """``--out`` cannot be written (an existing file, no permission, a full disk)."""


def _write_outputs(out: Path, result: Audit, spec: Spec) -> Report:
    """Write the report's files under ``out``; return the report with its plots and samples file named."""
    try:
        return _write_files(out, result, spec)
    except OSError as e:
        why = e.strerror or type(e).__name__
        raise OutputError(f"--out {str(out)!r}: cannot write {e.filename or out}: {why}") from None


def _write_files(out: Path, result: Audit, spec: Spec) -> Report:
    if out.exists() and not out.is_dir():
        raise NotADirectoryError(20, "exists and is not a directory", str(out))
    out.mkdir(parents=True, exist_ok=True)
    r = result.typed
    name = r.name
    png = out / f"{name}.privacy.png"
    claim = None
    if spec.claim is not None:
        claimed = guarantee_of(spec.claim.guarantee, result.effective.relation)
        claim = (f"{spec.claim.framework}, {_claim_text(spec)}", claimed)
    plot_privacy(
        [("advertised", result.advertised), (f"effective ({r.effective.framework})", result.effective)],
        png,
        f"{name}: advertised vs effective privacy",
        claim=claim,
        deltas=tuple(float(d) for d in spec.report.deltas),
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


def _claim_text(spec: Spec) -> str:
    g = spec.claim.guarantee if spec.claim is not None else None
    if g is None:
        return ""
    return (
        ", ".join(f"{k} = {float(v):g}" for k in ("epsilon", "delta", "mu", "zcdp") if (v := getattr(g, k)) is not None)
        or "rdp"
    )


def _audit_one(path: str, args: argparse.Namespace) -> Report:
    """Load, audit and write one spec (runs under :func:`verify.supervisor.supervise`)."""
    spec = load(path)
    result = audit(spec, seed=args.seed, time_limit=args.time_limit)
    return _write_outputs(Path(args.out), result, spec) if args.out else result.typed


def _classify(e: BaseException) -> tuple[str, str]:
    """How an error of one spec is reported: ``(kind, message)``."""
    if isinstance(e, InvalidSpec):
        return "invalid", str(e)
    if isinstance(e, OutputError):
        return "output", str(e)
    if isinstance(e, ToolkitError):  # a SearchTooLarge's hint names Python arguments: its summary only
        return "toolkit", e.summary if isinstance(e, SearchTooLarge) else str(e)
    first = str(e).splitlines()[0] if str(e) else ""
    return "internal", f"{type(e).__name__}: {first[:300]}"


def _audit(args: argparse.Namespace, startup: float = 0.0) -> int:
    reports: list[Report] = []
    stopped: list[dict[str, str]] = []  # specs the hard guard stopped: inconclusive, nothing proven
    invalid = False
    for i, path in enumerate(args.specs):
        got = supervise(
            functools.partial(_audit_one, path, args),
            time_limit=args.time_limit,
            classify=_classify,
            already=startup if i == 0 else 0.0,
        )
        if got.status in ("timeout", "memory"):
            print(f"semidp: {path}: inconclusive: {got.message}", file=sys.stderr)
            stopped.append({"spec": path, "verdict": "inconclusive", "stopped": got.status, "reason": got.message})
            continue
        if got.status == "error" or got.value is None:
            invalid = True
            if got.kind == "invalid":
                print(f"semidp: {got.message}", file=sys.stderr)
            elif got.kind == "output":
                print(f"semidp: {path}: {got.message}", file=sys.stderr)
            elif got.kind == "toolkit":
                print(f"semidp: {path}: cannot be evaluated: {got.message}", file=sys.stderr)
            else:  # a bug of ours: one line, exit 2, never a bare traceback or exit 1
                if args.debug:
                    sys.stderr.write(got.traceback)
                print(
                    f"semidp: {path}: internal error: {got.message} (rerun with --debug for the traceback, and "
                    "please report it)",
                    file=sys.stderr,
                )
            continue
        report = got.value
        reports.append(report)
        if not args.json:
            sys.stdout.write(render_text(report))
            if len(args.specs) > 1:
                sys.stdout.write("\n")
    if args.json:
        objs: list[Any] = [r.to_json() for r in reports] + stopped
        payload: Any = objs[0] if len(args.specs) == 1 and objs else objs
        if objs or len(args.specs) > 1:
            print(json.dumps(payload, indent=2))
    if invalid:
        return EXIT_INVALID
    verdicts: list[str] = [r.verdict for r in reports]
    return exit_code(verdicts + ["inconclusive"] * len(stopped))


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``semidp`` console script; returns the exit status."""
    args = _parser().parse_args(argv)
    if args.command == "schema":
        print(json.dumps(schema(), indent=2))
        return EXIT_OK
    # Started as the console script (no argv): the first spec's budget includes starting Python (at most 5 s).
    return _audit(args, startup=min(process_age(), 5.0) if argv is None else 0.0)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
