"""Scale-out of independent audits on Dask (``--workers N`` or ``--scheduler ADDRESS``; extra ``semidp[dask]``).

The unit of work is one spec's audit (:func:`verify.spec_job.run_spec`, with its hard time and memory
guard). Specs are independent and each draws from its own seed (``--seed``, else the spec's
``[audit] seed``), so a report computed on a worker is the same as the serial one; :func:`map_specs`
yields results in the order of the specs either way. A Dask worker runs the audit in its own process
(:func:`verify.supervisor.can_fork` is false in a daemonic worker: the cooperative budgets hold, the
worker's own memory limit replaces ours).

Without ``--workers``/``--scheduler`` nothing here imports Dask and the audits run one after the other
in this process's children, as before.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from semidp.accountant.errors import ToolkitError
from semidp.verify.report import Report
from semidp.verify.spec_job import JobOptions, run_spec
from semidp.verify.supervisor import Supervised


class ScaleOutError(ToolkitError, ValueError):
    """Dask is not installed, or the scheduler cannot be reached (names the option)."""


@dataclass(frozen=True)
class Cluster:
    """Where the audits run: ``workers`` local worker processes, or a running scheduler's ``address``."""

    workers: int | None = None
    address: str | None = None

    @property
    def serial(self) -> bool:
        """No Dask: audits run here, one after the other."""
        return self.workers is None and self.address is None


def map_specs(
    paths: Sequence[str], opts: JobOptions, cluster: Cluster, *, startup: float = 0.0
) -> Iterator[Supervised[Report]]:
    """The supervised audit of every spec, in order (serially, or on Dask when ``cluster`` says so)."""
    if cluster.serial:
        for i, p in enumerate(paths):
            yield run_spec(p, opts, startup=startup if i == 0 else 0.0)
        return
    client, owned = _client(cluster)
    try:
        futures = client.map(run_spec, list(paths), [opts] * len(paths), pure=False)
        for f in futures:
            yield f.result()
    finally:
        if owned:
            cluster_obj = client.cluster
            client.close()
            if cluster_obj is not None:
                cluster_obj.close()


def _client(cluster: Cluster) -> tuple[Any, bool]:
    """A Dask client: a new local cluster of ``workers`` processes (closed after use), or the scheduler's."""
    try:
        from distributed import Client, LocalCluster
    except ImportError:
        raise ScaleOutError(
            "--workers / --scheduler need Dask: pip install 'semidp[dask]' (dask and distributed)"
        ) from None
    if cluster.address is not None:
        try:
            return Client(cluster.address, timeout="10s"), False  # type: ignore[no-untyped-call]
        except (OSError, TimeoutError) as e:
            raise ScaleOutError(f"--scheduler {cluster.address!r}: cannot connect: {e}") from None
    local = LocalCluster(  # type: ignore[no-untyped-call]
        n_workers=cluster.workers, threads_per_worker=1, processes=True, dashboard_address=None
    )
    return Client(local), True  # type: ignore[no-untyped-call]


__all__ = ["Cluster", "ScaleOutError", "map_specs"]
