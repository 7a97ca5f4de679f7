"""One spec's audit as a job: load, audit, write ``--out``, under the hard guard (``semidp audit`` and ``check``).

:func:`run_spec` runs :func:`audit_spec` in :func:`verify.supervisor.supervise` and hands back a
:class:`~verify.supervisor.Supervised` report; :func:`problem_line` is the one line the CLI prints for a
spec that has no report (invalid, cannot be evaluated, unwritable ``--out``, internal error, stopped).
"""

from __future__ import annotations

import dataclasses
import functools
import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from semidp.accountant.errors import InvalidSpec, SearchTooLarge, ToolkitError
from semidp.accountant.progress import stage
from semidp.verify.load import load
from semidp.verify.plots import plot_privacy
from semidp.verify.render import render_markdown
from semidp.verify.report import Report
from semidp.verify.runner import Audit, audit
from semidp.verify.spec import Spec
from semidp.verify.spec_files import files_root
from semidp.verify.spec_values import guarantee_of
from semidp.verify.supervisor import Supervised, supervise


@dataclass(frozen=True)
class JobOptions:
    """The command-line options of one spec's audit."""

    seed: int | None = None
    time_limit: float = 60.0
    out: Path | None = None
    """``--out DIR``: write ``<name>.json``, ``.md``, plots and samples there."""
    allow_code: bool = False
    """``--allow-code``: a spec may import the code it names."""
    scheduler: str | None = None
    """A Dask scheduler address for the spec's batches (one spec on a cluster)."""
    files_root: str | None = None
    """``--files-root DIR``: files named by the spec may lie anywhere under DIR (default: the spec's folder)."""


class OutputError(ToolkitError):
    """``--out`` cannot be written (an existing file, no permission, a full disk)."""


def audit_spec(path: str, opts: JobOptions) -> Report:
    """Load, audit and (with ``opts.out``) write one spec; in the calling process."""
    stage(f"{path}: loading")
    with files_root(opts.files_root):  # the files the spec names are read inside it (verify.spec_files)
        spec = load(path)
        stage(f"{spec.name}: auditing (mechanism.kind = {spec.mechanism.kind!r}, --time-limit {opts.time_limit:g} s)")
        result = audit(
            spec, seed=opts.seed, time_limit=opts.time_limit, allow_code=opts.allow_code, scheduler=opts.scheduler
        )
    if opts.out is None:
        return result.typed
    stage(f"{spec.name}: writing {opts.out}")
    return write_outputs(opts.out, result, spec)


def run_spec(path: str, opts: JobOptions, *, startup: float = 0.0) -> Supervised[Report]:
    """:func:`audit_spec` under the hard time and memory guard; ``startup`` seconds are already spent.

    With ``opts.scheduler`` the audit runs in this process (it talks to the Dask cluster; a forked child of a
    process with a Dask client is unsafe), under the cooperative budgets only.
    """
    return supervise(
        functools.partial(audit_spec, path, opts),
        time_limit=opts.time_limit,
        classify=classify,
        already=startup,
        in_process=opts.scheduler is not None,
    )


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


def write_outputs(out: Path, result: Audit, spec: Spec) -> Report:
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
        report=r,
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


__all__ = ["JobOptions", "OutputError", "audit_spec", "classify", "problem_line", "run_spec", "write_outputs"]
