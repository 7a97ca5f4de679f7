"""``semidp check``: privacy regression tests of many specs against a stored baseline, for a user's CI.

``semidp check SPEC_OR_DIR... [--baseline FILE] [--update-baseline] [--junit FILE] [--rtol X]``
audits every spec (a folder stands for its ``*.toml`` files, recursively), summarises each report
(:func:`verify.regression.summary_of`) and compares it with the baseline's entry:

* exit 1 when any spec regressed (:mod:`verify.regression`: a claim that held and no longer does, a
  guarantee that got weaker, a check that newly fails), or when a spec without a baseline entry has a
  refuted claim or failed check;
* exit 2 when a spec is invalid or cannot be evaluated (the line names the key);
* exit 2 when ``--baseline`` is missing (unless ``--update-baseline`` creates it) or invalid: unreadable,
  or a value of the wrong type (the line names the spec and the key), or ``--rtol`` is not a finite
  number >= 0;
* else exit 0. Inconclusive specs pass unless their baseline verdict was better.

The console gets one line per spec (``[PASS]``/``[FAIL]``/``[ERROR]``), then one indented line per
regression, improvement (``improved: ...``) or note, and one ``[MISSING]`` line per spec that the baseline
records under a checked folder but the folder no longer holds (reported, not failed: a removed spec is
not a weaker guarantee; it is a skipped case in the JUnit file).

``--update-baseline`` records the current summaries (keeping entries of specs not checked this time,
dropping those missing from a checked folder and, with a line each, entries of the wrong type) and exits 0
unless a spec is invalid or the file is not a baseline. ``--junit FILE``
writes one JUnit test case per spec.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from semidp.verify.atomic_write import WriteError
from semidp.verify.contract import contract_hint
from semidp.verify.junit import CaseResult, write_junit
from semidp.verify.regression import RTOL, InvalidBaseline, compare, load_baseline, spec_key, summary_of, write_baseline
from semidp.verify.report import Report
from semidp.verify.scaleout import Cluster, map_specs
from semidp.verify.spec_job import JobOptions, problem_line
from semidp.verify.supervisor import Supervised

EXIT_OK, EXIT_FAILS, EXIT_INVALID = 0, 1, 2


def add_check_parser(sub: Any, common: Callable[[argparse.ArgumentParser], None]) -> None:
    """Register ``semidp check`` on the CLI's subparsers (``common`` adds --seed, --time-limit, ...)."""
    c = sub.add_parser(
        "check", help="privacy regression tests: audit specs and compare with a stored baseline", epilog=contract_hint()
    )
    c.add_argument("paths", nargs="+", metavar="SPEC_OR_DIR", help="spec files, or folders of *.toml specs")
    c.add_argument("--baseline", metavar="FILE", help="JSON baseline to compare with (semidp check --update-baseline)")
    c.add_argument("--update-baseline", action="store_true", help="record the current results in --baseline")
    c.add_argument("--junit", metavar="FILE", help="also write JUnit XML (one test case per spec)")
    c.add_argument(
        "--rtol", type=_tolerance, default=RTOL, metavar="X", help=f"relative tolerance of 'weaker' (default {RTOL:g})"
    )
    common(c)


def _tolerance(text: str) -> float:
    """``--rtol``: a finite number >= 0 (a negative, nan or infinite tolerance would hide every regression)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not (math.isfinite(value) and value >= 0):
        raise argparse.ArgumentTypeError(f"{text} must be a finite number >= 0")
    return value


def expand(paths: list[str]) -> list[Path]:
    """Spec files of ``paths``: files as given, folders as their ``*.toml`` files (recursively, sorted)."""
    out: list[Path] = []
    for p in map(Path, paths):
        if p.is_dir():
            out += sorted(q for q in p.rglob("*.toml") if not any(part.startswith(".") for part in q.parts))
        else:
            out.append(p)
    return out


def run_check(args: argparse.Namespace, opts: JobOptions, cluster: Cluster | None = None, startup: float = 0.0) -> int:
    """Run ``semidp check`` (see the module docstring); returns the exit status (``cluster``: serial if None;
    ``startup``: seconds of the first spec's budget already spent starting the process)."""
    cluster = cluster if cluster is not None else Cluster()
    if args.update_baseline and not args.baseline:
        print("semidp: check: --update-baseline needs --baseline FILE", file=sys.stderr)
        return EXIT_INVALID
    specs = expand(args.paths)
    if not specs:
        print(f"semidp: check: no *.toml spec found in {args.paths}", file=sys.stderr)
        return EXIT_INVALID
    baseline_path = Path(args.baseline) if args.baseline else None
    try:
        baseline = load_baseline(baseline_path, missing_ok=args.update_baseline) if baseline_path is not None else {}
    except InvalidBaseline as e:
        if not (args.update_baseline and e.valid is not None):
            for line in [str(e)] + [f"    {p}" for p in e.problems[1:]]:
                print(f"semidp: check: {line}", file=sys.stderr)
            return EXIT_INVALID
        for p in e.problems:  # --update-baseline: bad entries are dropped, then rewritten if checked now
            print(f"semidp: check: baseline entry dropped: {p}", file=sys.stderr)
        baseline = e.valid
    cases: list[CaseResult] = []
    summaries: dict[str, dict[str, Any]] = {}
    t0 = time.monotonic()
    for spec, got in zip(specs, map_specs([str(s) for s in specs], opts, cluster, startup=startup)):
        key = spec_key(spec, baseline_path) if baseline_path is not None else spec.as_posix()
        dt, t0 = time.monotonic() - t0, time.monotonic()
        case = judge(key, got, baseline.get(key), rtol=args.rtol, updating=args.update_baseline, seconds=dt)
        if got.value is not None:
            summaries[key] = summary_of(got.value)
        cases.append(case)
        print(_line(case))
        if case.details:
            print("    " + case.details.replace("\n", "\n    "))
    gone = missing_specs(args.paths, baseline_path, baseline, {c.name for c in cases})
    for key in gone:
        case = CaseResult(key, "skipped", "in the baseline, no longer in the checked folder")
        cases.append(case)
        print(_line(case))
    if args.update_baseline and baseline_path is not None:
        kept = {k: v for k, v in baseline.items() if k not in gone}
        if not _written("--baseline", lambda: write_baseline(baseline_path, {**kept, **summaries})):
            return EXIT_INVALID
        dropped = f"; {len(gone)} missing spec(s) dropped" if gone else ""
        print(f"baseline: {len(summaries)} spec(s) recorded in {baseline_path}{dropped}")
    if args.junit and not _written("--junit", lambda: write_junit(Path(args.junit), cases)):
        return EXIT_INVALID
    counts = {r: sum(c.result == r for c in cases) for r in ("passed", "failed", "error")}
    print(
        f"{counts['passed']} passed, {counts['failed']} failed"
        + (f", {counts['error']} errors" if counts["error"] else "")
        + (f", {len(gone)} missing" if gone else "")
    )
    if counts["error"]:
        return EXIT_INVALID
    return EXIT_FAILS if counts["failed"] else EXIT_OK


def _written(option: str, write: Callable[[], None]) -> bool:
    """Run ``write``; on an OS error print one line naming ``option`` and the path (e.g. a folder), not a traceback."""
    try:
        write()
    except WriteError as e:  # atomic writes: the previous file is intact
        print(f"semidp: check: {e}", file=sys.stderr)
        return False
    except OSError as e:
        print(f"semidp: check: {option} {str(e.filename)!r}: cannot write: {e.strerror}", file=sys.stderr)
        return False
    return True


def missing_specs(paths: list[str], baseline_path: Path | None, baseline: dict[str, Any], seen: set[str]) -> list[str]:
    """Baseline keys under a checked folder whose spec was not checked this time (removed or renamed).

    Only folders count: checking one file of a folder does not make its siblings missing.
    """
    if baseline_path is None:
        return []
    prefixes = []
    for p in map(Path, paths):
        if p.is_dir():
            prefix = spec_key(p / "_", baseline_path)[: -len("_")]
            prefixes.append(prefix)
    return sorted(k for k in baseline if k not in seen and any(k.startswith(pre) for pre in prefixes))


def judge(
    key: str,
    got: Supervised[Report],
    base: dict[str, Any] | None,
    *,
    rtol: float = RTOL,
    updating: bool = False,
    seconds: float = 0.0,
) -> CaseResult:
    """One spec's test case: errors, regressions against ``base``, or a refuted claim without a baseline."""
    dt = seconds
    if got.value is None and got.status not in ("timeout", "memory"):
        return CaseResult(key, "error", problem_line(key, got), seconds=dt)
    if got.value is None:  # stopped by the guard: inconclusive
        now: dict[str, Any] = {"verdict": "inconclusive", "checks": {}}
        stopped = problem_line(key, got)
    else:
        now, stopped = summary_of(got.value), ""
    if updating:
        return CaseResult(key, "passed", f"{now['verdict']}; recorded", stopped, seconds=dt)
    if base is None:
        failed = [n for n, s in now.get("checks", {}).items() if s == "fail"]
        if now["verdict"] == "fails":
            why = f"verdict fails (no baseline entry to compare with); failed checks: {', '.join(failed)}"
            return CaseResult(key, "failed", why, _failed_details(got), seconds=dt)
        return CaseResult(key, "passed", f"{now['verdict']}; no baseline entry", stopped, seconds=dt)
    cmp = compare(key, base, now, rtol=rtol)
    if got.value is None:
        cmp.notes.append(stopped)
    if cmp.regressed:
        more = f" (+{len(cmp.regressions) - 1} more)" if len(cmp.regressions) > 1 else ""
        return CaseResult(key, "failed", cmp.regressions[0] + more, "\n".join(cmp.regressions + cmp.notes), seconds=dt)
    detail = "\n".join([*(f"improved: {i}" for i in cmp.improvements), *cmp.notes])
    return CaseResult(key, "passed", f"{now['verdict']}; no regression", detail, seconds=dt)


def _failed_details(got: Supervised[Report]) -> str:
    """The failed checks of a report, one per line with their detail."""
    if got.value is None:
        return ""
    return "\n".join(
        f"[FAIL] {c['name']}: {c['detail']}" for c in got.value.to_json().get("checks", []) if c["status"] == "fail"
    )


def _line(case: CaseResult) -> str:
    if case.result == "skipped":
        return f"[MISSING] {case.name}: {case.message}"
    tag = {"passed": "PASS", "failed": "FAIL", "error": "ERROR"}[case.result]
    return f"[{tag}] {case.name}: {case.message} ({case.seconds:.1f} s)"


__all__ = ["add_check_parser", "expand", "judge", "missing_specs", "run_check"]
