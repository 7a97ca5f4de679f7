"""Dask plumbing shared by the CLI and the kinds: where work runs (:class:`Cluster`), a client to it, and
:func:`run_tasks`, the one way a kind sends independent, seeded batches to a cluster (extra ``semidp[dask]``).

Nothing here imports Dask unless a cluster is asked for.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from semidp.accountant.errors import ToolkitError

R = TypeVar("R")


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


def run_tasks(fn: Callable[..., R], args: Sequence[tuple[Any, ...]], scheduler: str | None) -> list[R]:
    """``[fn(*a) for a in args]``, in order: here, or as one Dask task per item on ``scheduler``.

    ``fn`` must be a module-level function and each task seeded by its arguments (e.g. a child of
    ``SeedSequence.spawn``), so the results do not depend on where they ran.
    """
    if scheduler is None or len(args) <= 1:
        return [fn(*a) for a in args]
    client, _ = client_for(Cluster(address=scheduler))
    try:
        futures = client.map(fn, *zip(*args), pure=False)
        return [f.result() for f in futures]
    finally:
        client.close()


def client_for(cluster: Cluster) -> tuple[Any, bool]:
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


__all__ = ["Cluster", "ScaleOutError", "client_for", "run_tasks"]
