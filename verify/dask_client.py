"""Dask plumbing shared by the CLI and the kinds: where work runs (:class:`Cluster`), a client to it, and
:func:`run_tasks`, the one way a kind sends independent, seeded batches to a cluster (extra ``semidp[dask]``).

Nothing here imports Dask unless a cluster is asked for.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from semidp.accountant.errors import ToolkitError
from semidp.verify.supervisor import OutOfTime

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


#: The longest wait for a scheduler to answer (within the spec's budget, whichever is shorter).
CONNECT_SECONDS = 10.0


def run_tasks(
    fn: Callable[..., R], args: Sequence[tuple[Any, ...]], scheduler: str | None, *, deadline: float | None = None
) -> list[R]:
    """``[fn(*a) for a in args]``, in order: here, or as one Dask task per item on ``scheduler``.

    ``fn`` must be a module-level function and each task seeded by its arguments (e.g. a child of
    ``SeedSequence.spawn``), so the results do not depend on where they ran. ``deadline``
    (``time.monotonic()``): the connection and the gather wait no longer; past it the tasks are cancelled and
    :class:`~verify.supervisor.OutOfTime` is raised (the spec is inconclusive, exit 3).
    """
    if scheduler is None or len(args) <= 1:
        return [fn(*a) for a in args]
    left = _left(deadline)
    client, _ = client_for(Cluster(address=scheduler), timeout=left)
    try:
        futures = client.map(fn, *zip(*args), pure=False)
        try:
            return [f.result(timeout=None if deadline is None else _left(deadline)) for f in futures]
        except TimeoutError as e:
            client.cancel(futures)
            raise OutOfTime(f"the Dask tasks did not finish within the spec's budget ({len(args)} tasks)") from e
    finally:
        close_client(client, False)


def _left(deadline: float | None) -> float:
    return float("inf") if deadline is None else max(deadline - time.monotonic(), 0.05)


def client_for(cluster: Cluster, *, timeout: float = float("inf")) -> tuple[Any, bool]:
    """A Dask client: a new local cluster of ``workers`` processes (``True``: close it after use with
    :func:`close_client`), or the scheduler's.

    A connection waits at most ``timeout`` seconds (and :data:`CONNECT_SECONDS`): a scheduler that does not
    answer is a :class:`ScaleOutError` naming ``--scheduler`` (exit 2). A Dask connection can hang on a listener
    that never answers whatever its own timeout says, so the wait is bounded here, in a daemon thread. A local
    cluster that took longer than ``timeout`` to start is :class:`~verify.supervisor.OutOfTime` (exit 3).
    """
    try:
        from distributed import Client, LocalCluster
    except ImportError:
        raise ScaleOutError(
            "--workers / --scheduler need Dask: pip install 'semidp[dask]' (dask and distributed)"
        ) from None
    if cluster.address is not None:
        address = cluster.address
        wait = max(min(timeout, CONNECT_SECONDS), 0.05)
        try:
            client = _within(wait, lambda: Client(address, timeout=f"{wait:.3f}s"))  # type: ignore[no-untyped-call]
        except (OSError, TimeoutError, ValueError) as e:
            why = str(e) or type(e).__name__
            raise ScaleOutError(f"--scheduler {address!r}: cannot connect: {why}") from None
        if client is None:
            raise ScaleOutError(f"--scheduler {address!r}: cannot connect: no answer within {wait:.3g} s")
        return client, False

    # A local cluster starts in this thread (started from another thread its nannies fail at random): its start
    # is bounded by the caller's guard (one spec: the hard stop of the child that starts it; several: the wait
    # for their results, counted from before the start).
    if timeout <= 0:  # the budget is spent already (start-up counts): starting a cluster would only overrun it
        raise OutOfTime(f"--workers {cluster.workers}: the budget ran out before the local Dask cluster could start")
    t0 = time.monotonic()
    local = LocalCluster(  # type: ignore[no-untyped-call]
        # a free loopback port: with None, Dask still tries 8787 and warns (an error under pytest) when another
        # cluster on the machine holds it
        n_workers=cluster.workers,
        threads_per_worker=1,
        processes=True,
        dashboard_address="127.0.0.1:0",
    )
    client = Client(local)  # type: ignore[no-untyped-call]
    if time.monotonic() - t0 > timeout:
        close_client(client, True)
        raise OutOfTime(f"--workers {cluster.workers}: the local Dask cluster did not start within the budget")
    return client, True


def close_client(client: Any, owned: bool) -> None:
    """Close ``client`` and, when ``owned`` (:func:`client_for` started it), its local cluster; bounded waits."""
    cluster_obj = client.cluster if owned else None
    try:
        client.close(timeout=5)
    except Exception:  # noqa: BLE001 - closing is best effort: the spec's result is already known
        pass
    if cluster_obj is not None:
        try:
            cluster_obj.close(timeout=5)
        except Exception:  # noqa: BLE001
            pass


def _within(seconds: float, make: Callable[[], R]) -> R | None:
    """``make()`` in a daemon thread, waited on at most ``seconds``: its value, ``None`` if it is still running
    (the thread is abandoned; it cannot keep the process alive), or its exception re-raised."""
    box: dict[str, Any] = {}

    def run() -> None:
        try:
            box["value"] = make()
        except BaseException as e:  # noqa: BLE001 - handed to the caller
            box["error"] = e

    thread = threading.Thread(target=run, name="semidp-dask-connect", daemon=True)
    thread.start()
    thread.join(None if seconds == float("inf") else seconds)
    if "error" in box:
        raise box["error"]
    return box.get("value")


__all__ = ["CONNECT_SECONDS", "Cluster", "ScaleOutError", "client_for", "close_client", "run_tasks"]
