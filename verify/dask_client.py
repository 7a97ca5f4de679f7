"""Dask plumbing shared by the CLI and the kinds: where work runs (:class:`Cluster`), a client to it, and
:func:`run_tasks`, the one way a kind sends independent, seeded batches to a cluster (extra ``semidp[dask]``).

Nothing here imports Dask unless a cluster is asked for.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from semidp.accountant.core.errors import ToolkitError
from semidp.verify.supervisor import OutOfTime, children, kill_trees, set_subreaper

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


#: Seconds each of closing the client and closing its local cluster may take (a cluster in use: its workers
#: end cleanly; a close cut short leaves Dask's threads closing it while this process goes on, e.g. forks).
CLOSE_SECONDS = 5.0
#: The same once the hard stop has killed the cluster's processes (nothing is left to end cleanly).
STOPPED_CLOSE_SECONDS = 2.0
#: Seconds past the hard stop a local cluster's path may take: the main thread is interrupted this long after
#: the cluster's processes were killed, then the client and the cluster are closed (:data:`STOPPED_CLOSE_SECONDS`
#: each).
DASK_GRACE_SECONDS = 1.0 + 2 * STOPPED_CLOSE_SECONDS


def close_client(client: Any, owned: bool) -> None:
    """Close ``client`` and, when ``owned`` (:func:`client_for` started it), its local cluster; bounded waits
    (:data:`CLOSE_SECONDS` each, :data:`STOPPED_CLOSE_SECONDS` once :func:`local_cluster_guard` has stopped it)."""
    cluster_obj = client.cluster if owned else None
    wait = STOPPED_CLOSE_SECONDS if _STOPPING else CLOSE_SECONDS
    try:
        client.close(timeout=wait)
    except Exception:  # noqa: BLE001 - closing is best effort: the spec's result is already known
        pass
    if cluster_obj is not None:
        try:
            cluster_obj.close(timeout=wait)
        except Exception:  # noqa: BLE001
            pass


#: Non-empty while a guard's hard stop has fired and its block is still unwinding.
_STOPPING: list[bool] = []


class _Stopped(BaseException):
    """Raised in the main thread by :func:`local_cluster_guard` at the hard stop (a ``BaseException``: Dask's own
    ``except Exception`` must not swallow it)."""


@contextlib.contextmanager
def local_cluster_guard(stop_at: float | None, what: str) -> Iterator[None]:
    """The hard stop of a local Dask cluster started inside the block (``--workers``; ``stop_at`` is a
    ``time.monotonic()``, ``None``: no stop).

    The cluster's processes are the children this process starts inside the block (its worker processes; their
    own children below them). At ``stop_at`` a watchdog thread kills them all (SIGKILL, whole trees) and, if
    the block has not ended one second later, interrupts the main thread (SIGUSR1, whose handler raises): the
    block ends with :class:`~verify.supervisor.OutOfTime` (``what`` names what was stopped; exit 3), the
    cluster closed within :data:`DASK_GRACE_SECONDS` of ``stop_at``. Whatever the outcome, the processes the block started and left running
    are killed on the way out, so nothing (e.g. a process a callable forked on a worker) outlives the spec:
    inside the block this process is the reaper of orphans (:func:`~verify.supervisor.set_subreaper`), so the
    children of a worker Dask has closed are still found.
    """
    before = children() | _tracker()
    subreaper = set_subreaper(True)
    done, lock = threading.Event(), threading.Lock()
    fired: list[bool] = []
    main = threading.current_thread() is threading.main_thread() and hasattr(signal, "pthread_kill")
    armed = [True]

    def interrupted(signum: int, frame: object) -> None:
        if armed[0] and fired:
            raise _Stopped

    previous = signal.signal(signal.SIGUSR1, interrupted) if main else None

    def watch() -> None:
        assert stop_at is not None
        if done.wait(max(stop_at - time.monotonic(), 0.0)):
            return
        fired.append(True)
        _STOPPING.append(True)
        _ABANDONED.append(what)
        logging.getLogger("distributed").setLevel(logging.CRITICAL)  # a killed cluster's complaints are noise
        kill_trees(children() - before - _tracker())
        if done.wait(1.0) or not main:
            return
        with lock:
            if not done.is_set():
                signal.pthread_kill(threading.main_thread().ident or 0, signal.SIGUSR1)

    if stop_at is not None:
        threading.Thread(target=watch, name="semidp-dask-hard-stop", daemon=True).start()
    try:
        try:
            yield
        except _Stopped:
            raise OutOfTime(f"{what}: stopped at the hard stop, its processes killed") from None
        except Exception as e:
            if fired:  # a Dask call failed because its processes were killed: the stop, not the spec's error
                raise OutOfTime(f"{what}: stopped at the hard stop, its processes killed") from e
            raise
    finally:
        with lock:
            done.set()
        armed[0] = False
        _STOPPING.clear()
        if main:
            signal.signal(signal.SIGUSR1, signal.SIG_DFL if previous is None else previous)
        kill_trees(children() - before - _tracker())
        set_subreaper(subreaper)


#: The local clusters stopped at their hard stop in this process (their ``what``).
_ABANDONED: list[str] = []


def exit_if_stopped(code: int) -> None:
    """End this process now with ``code`` if a local cluster was stopped at its hard stop (:func:`local_cluster_guard`);
    else return. Call it once the results are printed: Dask's exit handlers would close the killed cluster again,
    with waits of their own (seen: 12 s under load, past the budget). Stdout and stderr are flushed and any process
    this one still has (a worker its nanny restarted) is killed first."""
    if not _ABANDONED:
        return
    kill_trees(children() - _tracker())
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(code)


def _tracker() -> set[int]:
    """The pid of multiprocessing's resource tracker, when running: a process of this one, never the cluster's."""
    try:
        from multiprocessing import resource_tracker

        pid = getattr(resource_tracker._resource_tracker, "_pid", None)  # noqa: SLF001 - the stdlib's
    except (ImportError, AttributeError):
        return set()
    return {pid} if isinstance(pid, int) else set()


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


__all__ = [
    "CLOSE_SECONDS",
    "STOPPED_CLOSE_SECONDS",
    "DASK_GRACE_SECONDS",
    "local_cluster_guard",
    "CONNECT_SECONDS",
    "exit_if_stopped",
    "Cluster",
    "ScaleOutError",
    "client_for",
    "close_client",
    "run_tasks",
]
