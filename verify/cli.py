"""The ``semidp`` command line (contract: ``specs/README.md``).

``semidp audit SPEC [SPEC ...] [--json] [--out DIR] [--seed N] [--allow-code]``
    Audit specs; exit 0 if every claim holds and every check passes, 1 if a
    claim or check fails, 2 if a spec is invalid or cannot be evaluated, 3 if
    inconclusive and nothing failed.
``semidp check SPEC_OR_DIR... [--baseline FILE] [--update-baseline] [--junit FILE]``
    Privacy regression tests against a stored baseline (:mod:`verify.check_command`): exit 1 on any
    regression, 2 on an invalid spec.
``semidp schema``
    Print the JSON schema of spec files (generated from the dataclasses).
``semidp contract [--path]``
    Print the spec/report/exit-code contract installed with semidp (:mod:`verify.contract`), or its path.

An unexpected error is reported in one line with exit status 2 (``--debug``
prints its traceback); exit status 1 always means a refuted claim or a failed check.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import sys
import tomllib
from pathlib import Path
from typing import Any, Sequence

from semidp.accountant.core.progress import report_stages
from semidp.verify.check_command import add_check_parser, run_check
from semidp.verify.contract import contract_hint, contract_path, contract_text
from semidp.verify.dask_client import exit_if_stopped
from semidp.verify.render import render_text
from semidp.verify.report import Report
from semidp.verify.run_options import RunOptions
from semidp.verify.runner import exit_code
from semidp.verify.scaleout import Cluster, ScaleOutError, map_specs
from semidp.verify.schema import schema
from semidp.verify.spec_job import JobOptions, problem_line
from semidp.verify.supervisor import InvalidEnvironment, memory_limit, process_age
from semidp.verify.version import __version__

EXIT_OK, EXIT_FAILS, EXIT_INVALID, EXIT_INCONCLUSIVE = 0, 1, 2, 3


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="semidp",
        description="Privacy accounting and verification for releases published with exact invariants.",
        epilog=contract_hint(),
    )
    p.add_argument("--version", action="version", version=f"semidp {__version__}")
    sub = p.add_subparsers(dest="command", required=True)
    a = sub.add_parser("audit", help="audit spec files and check their claims", epilog=contract_hint())
    a.add_argument("specs", nargs="+", metavar="SPEC", help="spec file(s) (TOML; keys: `semidp contract`)")
    a.add_argument("--json", action="store_true", help="print JSON (an array for several specs)")
    a.add_argument("--out", metavar="DIR", help="also write DIR/<name>.json, .md and plots (PNG)")
    _common(a)
    add_check_parser(sub, _common)
    sub.add_parser("schema", help="print the JSON schema of spec files")
    c = sub.add_parser("contract", help="print the spec/report/exit-code contract (Markdown) installed with semidp")
    c.add_argument("--path", action="store_true", help="print where the contract file is installed instead")
    return p


def _common(a: argparse.ArgumentParser) -> None:
    """The options ``audit`` and ``check`` share."""
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
    a.add_argument(
        "--allow-code",
        action="store_true",
        help="allow specs to import and run the code they name (mechanism.kind = 'implementation')",
    )
    a.add_argument(
        "--files-root",
        metavar="DIR",
        help="files named by specs (measurements, recorded samples) may lie anywhere under DIR; default: "
        "inside each spec's folder",
    )
    a.add_argument("--debug", action="store_true", help="print the traceback of an internal error")
    a.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    where = a.add_mutually_exclusive_group()  # --workers with --scheduler: exit 2 (which cluster is meant?)
    where.add_argument(
        "--workers",
        type=_workers,
        default=None,
        metavar="N",
        help=f"audit specs on N local Dask workers (semidp[dask]; at most 4 per CPU, here {MAX_WORKERS})",
    )
    where.add_argument(
        "--scheduler",
        type=_address,
        metavar="ADDRESS",
        help="audit specs on a running Dask scheduler, [tcp://]HOST:PORT (semidp[dask])",
    )


def _integer(text: str, minimum: int, why: str) -> int:
    """An integer option ``>= minimum``; ``why`` says what a smaller value means."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if value < minimum:
        raise argparse.ArgumentTypeError(f"{value} {why}")
    return value


#: The most local Dask workers ``--workers`` may start: four per CPU (more only thrash, and each is a process).
MAX_WORKERS = 4 * (os.cpu_count() or 1)

_ADDRESS = re.compile(r"^(?:(?:tcp|tls|ucx|ws|wss)://)?(?:\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+):\d{1,5}$")


def _workers(text: str) -> int:
    """``--workers``: an integer from 1 to :data:`MAX_WORKERS`."""
    n = _integer(text, 1, "workers: at least one worker")
    if n > MAX_WORKERS:
        raise argparse.ArgumentTypeError(f"{n} workers: at most {MAX_WORKERS} (4 per CPU) on this machine")
    return n


def _address(text: str) -> str:
    """``--scheduler``: a Dask scheduler address, ``[tcp://]HOST:PORT`` (also ``tls://``, ``ucx://``, ``ws://``)."""
    if not _ADDRESS.match(text) or not 0 < int(text.rsplit(":", 1)[1]) < 65536:
        raise argparse.ArgumentTypeError(f"{text[:80]!r} is not a scheduler address such as tcp://127.0.0.1:8786")
    return text


def _cluster(args: argparse.Namespace) -> Cluster:
    """Where the specs are audited (``--workers`` / ``--scheduler``; serial without either)."""
    return Cluster(workers=args.workers, address=args.scheduler)


def _seed(text: str) -> int:
    """``--seed``: an integer >= 0 (numpy seeds are non-negative)."""
    return _integer(text, 0, "is negative; a seed is an integer >= 0")


def _seconds(text: str) -> float:
    """``--time-limit``: a finite number of seconds > 0."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not (0 < value < float("inf")):
        raise argparse.ArgumentTypeError(f"{text} must be a finite number of seconds > 0")
    return value


def _options(args: argparse.Namespace) -> JobOptions:
    """The job options of ``semidp audit`` / ``check``."""
    return JobOptions(
        seed=args.seed,
        time_limit=args.time_limit,
        out=Path(args.out) if getattr(args, "out", None) else None,
        run=RunOptions(allow_code=bool(getattr(args, "allow_code", False))),
        files_root=getattr(args, "files_root", None),
    )


def duplicate_outputs(paths: Sequence[str]) -> str | None:
    """Why ``--out`` cannot take these specs (two with the same ``name`` would write the same files), or None.

    Reads only the ``name`` key; a spec that cannot be read is left to the audit to report.
    """
    seen: dict[str, str] = {}
    for p in paths:
        try:
            name = tomllib.loads(Path(p).read_text(encoding="utf-8")).get("name")
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
            continue
        if isinstance(name, str):
            if name in seen:
                return f"{seen[name]} and {p} have the same name = {name!r}: they would write the same --out files"
            seen[name] = p
    return None


def _audit(args: argparse.Namespace, startup: float = 0.0) -> int:
    if args.out and (clash := duplicate_outputs(args.specs)):  # before any work is done
        print(f"semidp: {clash}", file=sys.stderr)
        return EXIT_INVALID
    reports: list[Report] = []
    stopped: list[dict[str, str]] = []  # specs the hard guard stopped: inconclusive, nothing proven
    invalid = False
    for path, got in zip(args.specs, map_specs(args.specs, _options(args), _cluster(args), startup=startup)):
        if got.status in ("timeout", "memory"):
            print(problem_line(path, got), file=sys.stderr)
            stopped.append({"spec": path, "verdict": "inconclusive", "stopped": got.status, "reason": got.message})
            continue
        if got.status == "error" or got.value is None:
            invalid = True
            if got.kind == "internal" and args.debug:
                sys.stderr.write(got.traceback)
            print(problem_line(path, got), file=sys.stderr)
            continue
        report = got.value
        reports.append(report)
        if got.message:  # stopped after the verdict (e.g. while plotting): the verdict stands
            print(f"semidp: {path}: {got.message}", file=sys.stderr)
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
    if args.command == "contract":
        print(contract_path() if args.path else contract_text().rstrip("\n"))
        return EXIT_OK
    # one line per stage on stderr (a live line on a terminal), timed from process start
    report_stages(sys.stderr, quiet=args.quiet, since=process_age() if argv is None else 0.0)
    # Started as the console script (no argv): the first spec's budget, cooperative and hard, includes starting
    # Python and importing semidp (at most MAX_STARTUP s).
    startup = min(process_age(), MAX_STARTUP) if argv is None else 0.0
    if argv is None:  # a SIGTERM (CI timeout, kill) unwinds, so each spec's session is killed on the way out
        signal.signal(signal.SIGTERM, _terminated)
    try:
        memory_limit()  # SEMIDP_MEMORY_LIMIT_GB is checked like an option: exit 2 naming it
        if args.command == "check":
            return run_check(args, _options(args), _cluster(args), startup=startup)
        return _audit(args, startup=startup)
    except (ScaleOutError, InvalidEnvironment) as e:
        print(f"semidp: {e}", file=sys.stderr)
        return EXIT_INVALID


def _terminated(signum: int, frame: object) -> None:
    raise SystemExit(128 + signum)


#: The most start-up seconds counted against the first spec's budget (a stalled start is not the spec's fault).
MAX_STARTUP = 5.0


if __name__ == "__main__":  # pragma: no cover
    code = main()
    exit_if_stopped(code)  # a local Dask cluster killed at its hard stop: no exit handlers to wait for
    sys.exit(code)
