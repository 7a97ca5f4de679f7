"""A hard wall-clock and memory guard around one spec's audit (``--time-limit``; contract: specs/README.md).

Every step of an audit budgets itself cooperatively (:meth:`verify.context.Context.remaining`),
degrading to proven bounds. This module is the backstop for what a cooperative budget cannot
stop (a long numpy or solver call, a step that underestimates itself): the audit runs in a forked
child process with an address-space limit (:data:`MEMORY_LIMIT`), and the parent ends it when
``time_limit * (1 + GRACE_SHARE) + GRACE_SECONDS`` has passed. Either way the spec is reported
**inconclusive** (exit 3), never as a failure and never as an invalid spec: nothing was proven.

Where ``fork`` is not available (Windows, or ``SEMIDP_NO_FORK=1``), the audit runs in-process with
the cooperative budgets only, and the memory limit is not applied.
"""

from __future__ import annotations

import multiprocessing
import os
import resource
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import Generic, Literal, TypeVar

T = TypeVar("T")

#: The address-space limit of the audit process, in bytes (``SEMIDP_MEMORY_LIMIT_GB`` overrides it).
MEMORY_LIMIT = 2 * 2**30
#: The share of ``--time-limit`` and the seconds a spec may overrun it before it is stopped.
GRACE_SHARE, GRACE_SECONDS = 0.1, 1.0

Status = Literal["ok", "error", "timeout", "memory"]


@dataclass(frozen=True)
class Supervised(Generic[T]):
    """What became of a supervised call: its value, or why there is none."""

    status: Status
    value: T | None = None
    kind: str = ""
    """For an error: its class from ``classify`` (exceptions are not sent between processes: many of ours
    do not survive pickling)."""
    message: str = ""
    """For an error: its text from ``classify``; for ``timeout`` and ``memory``: what ran out."""
    traceback: str = ""
    """The child's traceback text of an error (for ``--debug``)."""


def memory_limit() -> int:
    """:data:`MEMORY_LIMIT`, or ``SEMIDP_MEMORY_LIMIT_GB`` (a positive number of GiB) when set."""
    text = os.environ.get("SEMIDP_MEMORY_LIMIT_GB")
    if text:
        try:
            gb = float(text)
        except ValueError:
            gb = 0.0
        if gb > 0:
            return int(gb * 2**30)
    return MEMORY_LIMIT


def hard_deadline(time_limit: float) -> float:
    """Seconds after which a spec with budget ``time_limit`` is stopped: ``time_limit (1 + 10%) + 1``."""
    return time_limit * (1 + GRACE_SHARE) + GRACE_SECONDS


def can_fork() -> bool:
    """Whether the audit can run in a forked child (POSIX with ``fork``, ``SEMIDP_NO_FORK`` unset, and this
    process not a daemon)."""
    return (
        "fork" in multiprocessing.get_all_start_methods()
        and not os.environ.get("SEMIDP_NO_FORK")
        and not multiprocessing.current_process().daemon  # e.g. a Dask worker: it may not have children
    )


Classify = Callable[[BaseException], tuple[str, str]]
"""``exception -> (kind, message)``: how the caller reports an error of the call."""


def process_age() -> float:
    """Seconds since this process started (Linux ``/proc``; 0 elsewhere): the time spent starting Python."""
    try:
        with open("/proc/self/stat", encoding="ascii") as f:
            start_ticks = int(f.read().rsplit(")", 1)[1].split()[19])
        with open("/proc/uptime", encoding="ascii") as f:
            uptime = float(f.read().split()[0])
        return max(0.0, uptime - start_ticks / os.sysconf("SC_CLK_TCK"))
    except (OSError, ValueError, IndexError):
        return 0.0


def supervise(
    call: Callable[[], T], *, time_limit: float, classify: Classify, already: float = 0.0, in_process: bool = False
) -> Supervised[T]:
    """Run ``call`` under the hard guard (see the module docstring); in-process when fork is unavailable.

    ``already``: seconds of the budget spent before the call (e.g. :func:`process_age`). ``in_process``: no
    child (e.g. this process holds a Dask client, which must not be forked); cooperative budgets only.
    """
    if in_process or not can_fork():
        return _run(call, classify, None)
    ctx = multiprocessing.get_context("fork")
    recv, send = ctx.Pipe(duplex=False)
    limit = memory_limit()
    child = ctx.Process(target=_child, args=(call, classify, send, limit), daemon=True)
    child.start()
    send.close()
    stop_at = time.monotonic() + hard_deadline(time_limit) - already
    try:
        while True:
            left = stop_at - time.monotonic()
            if left <= 0 or not recv.poll(min(left, 0.5)):
                if left <= 0:
                    return Supervised(
                        "timeout",
                        message=f"stopped after {hard_deadline(time_limit):.3g} s (--time-limit {time_limit:g} s "
                        f"+ {GRACE_SHARE:.0%} + {GRACE_SECONDS:g} s): a step overran its budget",
                    )
                if not child.is_alive() and not recv.poll(0):
                    return _died(child.exitcode, limit)
                continue
            try:
                got: Supervised[T] = recv.recv()
            except EOFError:
                child.join(1.0)
                return _died(child.exitcode, limit)
            return got
    finally:
        if child.is_alive():
            child.kill()
        child.join(1.0)
        recv.close()


def _died(exitcode: int | None, limit: int) -> Supervised[T]:
    """A child that ended without answering: killed by the kernel (memory) or crashed."""
    return Supervised(
        "memory",
        message=f"the audit process ended without a result (exit code {exitcode}); most likely it exceeded the "
        f"memory limit of {limit / 2**30:.3g} GiB",
    )


def _run(call: Callable[[], T], classify: Classify, limit: int | None) -> Supervised[T]:
    """Run ``call``, turning its exceptions into data."""
    try:
        return Supervised("ok", call())
    except MemoryError:
        cap = f" of {limit / 2**30:.3g} GiB" if limit is not None else ""
        return Supervised("memory", message=f"the audit needed more than the memory limit{cap}")
    except Exception as e:
        kind, message = classify(e)
        return Supervised("error", kind=kind, message=message, traceback=traceback.format_exc())


def _child(call: Callable[[], T], classify: Classify, send: Connection, limit: int) -> None:
    """The child's side: apply the memory limit, run, send the outcome (its value's text if unpicklable)."""
    try:
        _, hard = resource.getrlimit(resource.RLIMIT_AS)
        cap = limit if hard == resource.RLIM_INFINITY else min(limit, hard)
        resource.setrlimit(resource.RLIMIT_AS, (cap, hard))
    except (ValueError, OSError):  # pragma: no cover - a platform without RLIMIT_AS
        pass
    out = _run(call, classify, limit)
    try:
        send.send(out)
    except Exception as e:  # pragma: no cover - an unpicklable value is a bug of ours
        send.send(Supervised("error", kind="internal", message=f"the result could not be sent back: {e}"))
    finally:
        send.close()


__all__ = [
    "GRACE_SECONDS",
    "GRACE_SHARE",
    "MEMORY_LIMIT",
    "Supervised",
    "can_fork",
    "hard_deadline",
    "process_age",
    "supervise",
]
