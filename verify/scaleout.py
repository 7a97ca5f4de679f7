"""Scale-out of independent audits on Dask (``--workers N`` or ``--scheduler ADDRESS``; extra ``semidp[dask]``).

The unit of work is one spec's audit (:func:`verify.spec_job.run_spec`, with its hard time and memory
guard). Specs are independent and each draws from its own seed (``--seed``, else the spec's
``[audit] seed``), so a report computed on a worker is the same as the serial one; :func:`map_specs`
yields results in the order of the specs either way. A Dask worker runs the audit in its own process
(:func:`verify.supervisor.can_fork` is false in a daemonic worker: the cooperative budgets hold, the
worker's own memory limit replaces ours).

With one spec, the spec itself runs in this process (no forked child: a process holding a Dask client
must not fork; the cooperative budgets still hold) and sends its independent, seeded batches to the
cluster through :func:`verify.dask_client.run_tasks` (``Context.scheduler``): an ``implementation``
audit's draws and a lattice sampler's coupled-chain batches.

Without ``--workers``/``--scheduler`` nothing here imports Dask and the audits run one after the other
in this process's children, as before.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Sequence

from semidp.verify.dask_client import Cluster, ScaleOutError, client_for
from semidp.verify.report import Report
from semidp.verify.spec_job import JobOptions, run_spec
from semidp.verify.supervisor import Supervised


def map_specs(
    paths: Sequence[str], opts: JobOptions, cluster: Cluster, *, startup: float = 0.0
) -> Iterator[Supervised[Report]]:
    """The supervised audit of every spec, in order (serially, or on Dask when ``cluster`` says so)."""
    if cluster.serial:
        for i, p in enumerate(paths):
            yield run_spec(p, opts, startup=startup if i == 0 else 0.0)
        return
    client, owned = client_for(cluster)
    try:
        if len(paths) == 1:  # one spec: it runs here and sends its independent batches to the cluster
            yield run_spec(paths[0], dataclasses.replace(opts, scheduler=client.scheduler.address), startup=startup)
            return
        futures = client.map(run_spec, list(paths), [opts] * len(paths), pure=False)
        for f in futures:
            yield f.result()
    finally:
        if owned:
            cluster_obj = client.cluster
            client.close()
            if cluster_obj is not None:
                cluster_obj.close()


__all__ = ["Cluster", "ScaleOutError", "map_specs"]
