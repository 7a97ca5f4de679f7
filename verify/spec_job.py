"""One spec's audit as a job: load, audit, write ``--out``, under the hard guard (``semidp audit`` and ``check``).

:func:`run_spec` runs :func:`audit_spec` in :func:`verify.supervisor.supervise` and hands back a
:class:`~verify.supervisor.Supervised` report; :func:`problem_line` is the one line the CLI prints for a
spec that has no report (invalid, cannot be evaluated, unwritable ``--out``, internal error, stopped).
"""

from __future__ import annotations

import dataclasses
import functools
import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from semidp.accountant.core.budget import Budget
from semidp.accountant.core.errors import InvalidSpec, SearchTooLarge, ToolkitError
from semidp.accountant.core.progress import stage
from semidp.verify.atomic_write import WriteError, atomic_path, remove_stale_temporaries, write_text, write_with
from semidp.verify.dask_client import Cluster, client_for, close_client, local_cluster_guard
from semidp.verify.load import load
from semidp.verify.plots import plot_privacy
from semidp.verify.render import render_markdown
from semidp.verify.report import Report
from semidp.verify.run_options import DEFAULT_OPTIONS, RunOptions
from semidp.verify.runner import Audit, audit
from semidp.verify.spec import Spec
from semidp.verify.spec_files import files_root
from semidp.verify.spec_values import guarantee_of
from semidp.verify.supervisor import Supervised, hard_deadline, post_interim, supervise


@dataclass(frozen=True)
class JobOptions:
    """The command-line options of one spec's audit."""

    seed: int | None = None
    time_limit: float = 60.0
    out: Path | None = None
    """``--out DIR``: write ``<name>.json``, ``.md``, plots and samples there."""
    run: RunOptions = DEFAULT_OPTIONS
    """What the kind may read (``--allow-code``; the Dask scheduler of one spec on a cluster)."""
    files_root: str | None = None
    """``--files-root DIR``: files named by the spec may lie anywhere under DIR (default: the spec's folder)."""
    deadline: float | None = None
    """``time.monotonic()`` by which the verdict is due (set by :func:`run_spec`: ``--time-limit`` counted from
    the process start, so start-up is inside the budget); ``None``: ``time_limit`` from the audit's start."""
    stop_at: float | None = None
    """``time.monotonic()`` of the hard stop: plots are drawn only while it is ahead (:data:`PLOT_SECONDS`)."""


#: Seconds a plot is assumed to take: a plot is not started closer to the hard stop than this.
PLOT_SECONDS = 1.0


class OutputError(ToolkitError):
    """``--out`` cannot be written (an existing file, no permission, a full disk)."""


def audit_spec(path: str, opts: JobOptions) -> Report:
    """Load, audit and (with ``opts.out``) write one spec; in the calling process."""
    stage(f"{path}: loading")
    with files_root(opts.files_root):  # the files the spec names are read inside it (verify.spec_files)
        spec = load(path)
        stage(f"{spec.name}: auditing (mechanism.kind = {spec.mechanism.kind!r}, --time-limit {opts.time_limit:g} s)")
        result = audit(
            spec,
            seed=opts.seed,
            budget=Budget.of(opts.time_limit) if opts.deadline is None else Budget.until(opts.deadline),
            options=opts.run,
        )
    if opts.out is None:
        return result.typed
    stage(f"{spec.name}: writing {opts.out}")
    return write_outputs(opts.out, result, spec, stop_at=opts.stop_at)


def run_spec(
    path: str, opts: JobOptions, *, startup: float = 0.0, cluster: Cluster | None = None
) -> Supervised[Report]:
    """:func:`audit_spec` under the hard time and memory guard; ``startup`` seconds are already spent (they count
    against the cooperative budget too: ``opts.deadline``).

    ``cluster`` (one spec on Dask): the spec runs in this process, starts or connects to the cluster (inside the
    budget) and sends the spec's batches there; its budget is the cooperative one and the Dask timeouts.
    """
    now = time.monotonic()
    opts = dataclasses.replace(
        opts,
        deadline=now + opts.time_limit - startup,
        stop_at=now + hard_deadline(opts.time_limit) - startup,
    )
    on_cluster = cluster is not None and not cluster.serial
    call = (
        functools.partial(_audit_on_cluster, path, opts, cluster)
        if on_cluster
        else functools.partial(audit_spec, path, opts)
    )
    # One spec on a cluster runs here, not in a forked child: a local cluster started from a forked child of a
    # process that has used Dask before (a test session, a notebook) inherits its event-loop state and never runs
    # a task (seen: the lattice and implementation batches hung to the hard stop). Its hard stop is the local
    # cluster's guard instead (_audit_on_cluster; specs/README.md, Command line).
    got = supervise(
        call,
        time_limit=opts.time_limit,
        classify=classify,
        already=startup,
        memory_cap=not on_cluster,
        in_process=on_cluster,
    )
    if opts.out is not None:
        remove_stale_temporaries(opts.out)  # of a child stopped mid-write
    return got


def _audit_on_cluster(path: str, opts: JobOptions, cluster: Cluster | None) -> Report:
    """:func:`audit_spec` with the spec's batches on ``cluster`` (started or connected here, then closed)."""
    assert cluster is not None
    left = (opts.deadline - time.monotonic()) if opts.deadline is not None else opts.time_limit
    stage(f"{path}: starting Dask ({'--scheduler' if cluster.address else '--workers'})")
    # a local cluster is killed at the hard stop (its processes, then this thread is interrupted): the same
    # stop as a forked child's, plus the seconds closing the cluster takes (DASK_GRACE_SECONDS)
    stop_at = opts.stop_at if cluster.address is None else None
    with local_cluster_guard(stop_at, f"{path}: --workers {cluster.workers}"):
        client, owned = client_for(cluster, timeout=left)
        try:
            return audit_spec(
                path,
                dataclasses.replace(opts, run=dataclasses.replace(opts.run, scheduler=client.scheduler.address)),
            )
        finally:
            close_client(client, owned)


def classify(e: BaseException) -> tuple[str, str]:
    """How an error of one spec is reported: ``(kind, message)``."""
    if isinstance(e, InvalidSpec):
        return "invalid", str(e)
    if isinstance(e, OutputError):
        return "output", str(e)
    if isinstance(e, ToolkitError):  # a SearchTooLarge's hint names Python arguments: its summary only
        return "toolkit", e.summary if isinstance(e, SearchTooLarge) else str(e)
    first = str(e).splitlines()[0] if str(e) else ""
    return "internal", f"{type(e).__name__}: {first[:300]}"


def problem_line(path: str, got: Supervised[Report]) -> str:
    """The line printed for a spec without a report (exit 2, or 3 when the guard stopped it)."""
    if got.status in ("timeout", "memory"):
        return f"semidp: {path}: inconclusive: {got.message}"
    if got.kind == "invalid":
        return f"semidp: {got.message}"
    if got.kind == "output":
        return f"semidp: {path}: {got.message}"
    if got.kind == "toolkit":
        return f"semidp: {path}: cannot be evaluated: {got.message}"
    return f"semidp: {path}: internal error: {got.message} (rerun with --debug for the traceback, and please report it)"


def write_outputs(out: Path, result: Audit, spec: Spec, *, stop_at: float | None = None) -> Report:
    """Write the report's files under ``out``; return the report with its plots and samples file named.

    Every file is written atomically (:mod:`verify.atomic_write`). The verdict comes first: the samples, the
    JSON and the Markdown report are written (saying the plots are not drawn) and posted to the guard
    (:func:`verify.supervisor.post_interim`) before any plot; plots are then drawn while the hard stop
    ``stop_at`` is :data:`PLOT_SECONDS` ahead, and the reports rewritten with them. Plots that run out of time
    are skipped with a note (``plots_note``); they never turn a decided verdict into "inconclusive".
    """
    try:
        return _write_files(out, result, spec, stop_at)
    except (OSError, WriteError) as e:
        why = str(e) if isinstance(e, WriteError) else f"cannot write {e.filename or out}: {e.strerror or e}"
        raise OutputError(f"--out {str(out)!r}: {why}") from None


def _write_files(out: Path, result: Audit, spec: Spec, stop_at: float | None) -> Report:
    if out.exists() and not out.is_dir():
        raise NotADirectoryError(20, "exists and is not a directory", str(out))
    out.mkdir(parents=True, exist_ok=True)
    r = result.typed
    name = r.name
    samples_file = None
    if result.samples is not None:  # contract: float64, shape (samples, cells), row-major cells
        draws = np.ascontiguousarray(result.samples, dtype=np.float64)
        write_with(out / f"{name}.samples.npy", lambda f: np.save(f, draws))
        samples_file = f"{name}.samples.npy"
    for section in r.sections:  # files a section writes beside the report (e.g. <name>.design.csv)
        for file_name, text in getattr(section, "out_files", lambda _name: [])(name):
            write_text(out / file_name, text)
    draw = _plots(out, result, spec)
    pending = f"not drawn: the budget ran out before the {len(draw)} plot(s) (the verdict does not depend on them)"
    r = dataclasses.replace(r, plots=(), samples_file=samples_file, plots_note=pending)
    _write_reports(out, r)
    post_interim(r)
    drawn: list[str] = []
    for path, plot in draw:
        if stop_at is not None and time.monotonic() > stop_at - PLOT_SECONDS:
            break
        with atomic_path(path) as tmp:
            plot(tmp)
        drawn.append(path.name)
    note = None if len(drawn) == len(draw) else pending.replace("before the", f"before {len(draw) - len(drawn)} of")
    r = dataclasses.replace(r, plots=tuple(drawn), plots_note=note)
    _write_reports(out, r)
    return r


def _write_reports(out: Path, r: Report) -> None:
    write_text(out / f"{r.name}.json", json.dumps(r.to_json(), indent=2) + "\n")
    write_text(out / f"{r.name}.md", render_markdown(r))


def _plots(out: Path, result: Audit, spec: Spec) -> list[tuple[Path, Callable[[Path], object]]]:
    """The PNGs of ``--out``: their paths and how each is drawn (to a given file name)."""
    r = result.typed
    name = r.name
    claim = None
    if spec.claim is not None:
        on = result.effective.relation if result.effective is not None else result.advertised.relation
        claim = (f"{spec.claim.framework}, {_claim_text(spec)}", guarantee_of(spec.claim.guarantee, on))
    curves = [("advertised", result.advertised)] + (  # a black box has no effective curve (none certified)
        [(f"effective ({r.effective.framework})", result.effective)] if result.effective is not None else []
    )
    deltas = tuple(float(d) for d in spec.report.deltas)
    title = f"{name}: advertised vs effective privacy"
    out_plots: list[tuple[Path, Callable[[Path], object]]] = [
        (out / f"{name}.privacy.png", lambda p: plot_privacy(curves, p, title, claim=claim, deltas=deltas, report=r))
    ]
    for plot in result.plots:
        out_plots.append(
            (out / f"{name}.{plot.suffix}.png", functools.partial(_draw, plot.draw, f"{name}: {plot.title}"))
        )
    return out_plots


def _draw(draw: Callable[[Path, str], Path], title: str, path: Path) -> Path:
    return draw(path, title)


def _claim_text(spec: Spec) -> str:
    g = spec.claim.guarantee if spec.claim is not None else None
    if g is None:
        return ""
    return (
        ", ".join(f"{k} = {float(v):g}" for k in ("epsilon", "delta", "mu", "zcdp") if (v := getattr(g, k)) is not None)
        or "rdp"
    )


__all__ = [
    "PLOT_SECONDS",
    "JobOptions",
    "OutputError",
    "audit_spec",
    "classify",
    "problem_line",
    "run_spec",
    "write_outputs",
]
