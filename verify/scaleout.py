"""Scale-out of independent audits on Dask (``--workers N`` or ``--scheduler ADDRESS``; extra ``semidp[dask]``).

The unit of work is one spec's audit (:func:`verify.spec_job.run_spec`, with its hard time and memory
guard). Specs are independent and each draws from its own seed (``--seed``, else the spec's
``[audit] seed``), so a report computed on a worker is the same as the serial one; :func:`map_specs`
yields results in the order of the specs either way. A Dask worker runs the audit in its own process
(:func:`verify.supervisor.can_fork` is false in a daemonic worker: the cooperative budgets hold, counted
from the task's start, and the worker's own memory limit replaces ours). This process waits for the specs
at most :func:`cluster_deadline`; specs still running then are cancelled and reported stopped (exit 3), and
a local cluster is killed then (:func:`verify.dask_client.local_cluster_guard`).

With one spec, this process starts the local cluster or connects to the scheduler, within the budget, and
sends its independent, seeded batches to the cluster through :func:`verify.dask_client.run_tasks`
(``Context.options.scheduler``): an ``implementation`` audit's draws and a lattice sampler's coupled-chain batches.
At the spec's hard stop a local cluster's processes are killed and a hung wait is interrupted
(:func:`verify.dask_client.local_cluster_guard`; the run ends within ``DASK_GRACE_SECONDS`` more).

Without ``--workers``/``--scheduler`` nothing here imports Dask and the audits run one after the other
in this process's children, as before.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterator, Sequence

from semidp.verify.dask_client import Cluster, ScaleOutError, client_for, close_client, local_cluster_guard
from semidp.verify.report import Report
from semidp.verify.spec_job import JobOptions, run_spec
from semidp.verify.supervisor import OutOfTime, Supervised, hard_deadline


def map_specs(
    paths: Sequence[str], opts: JobOptions, cluster: Cluster, *, startup: float = 0.0
) -> Iterator[Supervised[Report]]:
    """The supervised audit of every spec, in order (serially, or on Dask when ``cluster`` says so)."""
    if cluster.serial:
        for i, p in enumerate(paths):
            yield run_spec(p, opts, startup=startup if i == 0 else 0.0)
        return
    if len(paths) == 1:  # one spec: a guarded child starts/connects the cluster and sends its batches there
        yield run_spec(paths[0], opts, startup=startup, cluster=cluster)
        return
    yield from _map_on_cluster(paths, opts, cluster, startup)


def cluster_deadline(specs: int, slots: int, time_limit: float) -> float:
    """Seconds the specs may take on ``slots`` workers: ``ceil(specs / slots)`` hard deadlines in a row, plus one
    for starting the cluster (each spec's own budget is counted on its worker, from the task's start)."""
    return (math.ceil(specs / max(slots, 1)) + 1) * hard_deadline(time_limit)


def _map_on_cluster(
    paths: Sequence[str], opts: JobOptions, cluster: Cluster, startup: float
) -> Iterator[Supervised[Report]]:
    t0 = time.monotonic() - startup
    start_budget = hard_deadline(opts.time_limit) - startup
    # A local cluster is killed when the specs' time is up (cluster_deadline): a hung start or close included.
    # Its slots are not known before it starts: the stop assumes one slot per worker (threads_per_worker=1).
    guard_at = (
        None
        if cluster.address is not None
        else t0 + cluster_deadline(len(paths), cluster.workers or 1, opts.time_limit)
    )
    results: list[Supervised[Report]] = []
    try:
        with local_cluster_guard(guard_at, f"--workers {cluster.workers}"):
            for got in _gather(paths, opts, cluster, t0, start_budget):  # collected: the guard ends with the cluster
                results.append(got)
    except OutOfTime as e:
        results += [Supervised("timeout", message=str(e))] * (len(paths) - len(results))
    yield from results


def _gather(
    paths: Sequence[str], opts: JobOptions, cluster: Cluster, t0: float, start_budget: float
) -> Iterator[Supervised[Report]]:
    try:
        client, owned = client_for(cluster, timeout=start_budget)
    except OutOfTime as e:
        for _ in paths:
            yield Supervised("timeout", message=str(e))
        return
    try:
        slots = sum(client.nthreads().values()) or 1
        stop_at = t0 + cluster_deadline(len(paths), slots, opts.time_limit)
        futures = client.map(run_spec, list(paths), [opts] * len(paths), pure=False)
        for i, f in enumerate(futures):
            try:
                yield f.result(timeout=max(stop_at - time.monotonic(), 0.05))
            except TimeoutError:
                client.cancel(futures[i:])
                why = (
                    f"stopped: the {len(paths)} specs did not finish on {slots} Dask worker(s) within "
                    f"{stop_at - t0:.3g} s (--time-limit {opts.time_limit:g} s each)"
                )
                for _ in futures[i:]:
                    yield Supervised("timeout", message=why)
                return
    finally:
        close_client(client, owned)


__all__ = ["Cluster", "ScaleOutError", "cluster_deadline", "map_specs"]
