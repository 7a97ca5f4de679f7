"""A hard wall-clock and memory guard around one spec's audit (``--time-limit``; contract: specs/README.md).

Every step of an audit budgets itself cooperatively (:meth:`verify.context.Context.remaining`),
degrading to proven bounds. This module is the backstop for what a cooperative budget cannot
stop (a long numpy or solver call, a step that underestimates itself): the audit runs in a forked
child process with an address-space limit (:data:`MEMORY_LIMIT`), and the parent ends it when
``time_limit * (1 + GRACE_SHARE) + GRACE_SECONDS`` has passed. Either way the spec is reported
**inconclusive** (exit 3), never as a failure and never as an invalid spec: nothing was proven.

The child starts a session of its own (``os.setsid``): when the guard stops it, or when it has answered,
the whole process group is killed, so processes a callable started (or a Dask cluster the child started)
never outlive the spec nor hold its stdout open. A child may post an *interim* value
(:func:`post_interim`, e.g. the report before its plots are drawn): if the guard stops the child after that,
the interim value is the result (status ``"ok"``, with ``message`` saying what was cut short).

Where ``fork`` is not available (Windows, or ``SEMIDP_NO_FORK=1``), the audit runs in-process with
the cooperative budgets only, and the memory limit is not applied.
"""

from __future__ import annotations

import math
import multiprocessing
import os
import signal
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import Any, Generic, Literal, TypeVar

try:  # POSIX only: where it is missing (Windows) the memory cap is not set; the time budget still holds
    import resource
except ImportError:  # pragma: no cover - not on the POSIX machines the tests run on
    resource = None  # type: ignore[assignment]

from semidp.accountant.core.errors import ToolkitError

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
    interim: bool = False
    """A value posted by :func:`post_interim` (the final one may still follow)."""


class InvalidEnvironment(ToolkitError, ValueError):
    """An environment variable of ours has a value outside its domain (names the variable; exit 2)."""


class OutOfTime(ToolkitError):
    """A step found the spec's budget spent and cannot degrade (e.g. a Dask gather): the spec is stopped,
    inconclusive (exit 3), as if the hard guard had stopped it."""


#: The largest ``SEMIDP_MEMORY_LIMIT_GB`` accepted (1 PiB: beyond it a typo, not a machine).
MAX_MEMORY_GB = 2.0**20


def memory_limit() -> int:
    """:data:`MEMORY_LIMIT`, or ``SEMIDP_MEMORY_LIMIT_GB`` (a finite number of GiB > 0) when set, in bytes.

    Raises :class:`InvalidEnvironment` naming the variable for anything else (``abc``, ``0``, ``-1``, ``inf``,
    ``nan``): a typo must not silently give another limit.
    """
    text = os.environ.get("SEMIDP_MEMORY_LIMIT_GB")
    if text is None or text.strip() == "":
        return MEMORY_LIMIT
    try:
        gb = float(text)
    except ValueError:
        gb = math.nan
    if not (0 < gb <= MAX_MEMORY_GB):
        raise InvalidEnvironment(
            f"SEMIDP_MEMORY_LIMIT_GB = {text[:40]!r}: expected a number of GiB > 0 and <= {MAX_MEMORY_GB:g} "
            f"(unset: {MEMORY_LIMIT / 2**30:g} GiB)"
        )
    return max(int(gb * 2**30), 1)


def address_space_cap(limit: int) -> int:
    """The ``RLIMIT_AS`` to set in a freshly forked child: ``limit`` bytes beyond the address space it inherited.

    A fork inherits its parent's mappings (a long-lived parent such as a test session or a notebook may already
    hold more than ``limit`` of virtual address space, most of it never touched), so an absolute cap would make
    the child's first allocation fail and report a small audit as out of memory. The audit's own allowance is
    ``limit``; where ``/proc/self/statm`` cannot be read, ``limit`` itself.
    """
    try:
        with open("/proc/self/statm", encoding="ascii") as f:
            pages = int(f.read().split()[0])
        return limit + pages * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return limit


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
    call: Callable[[], T],
    *,
    time_limit: float,
    classify: Classify,
    already: float = 0.0,
    in_process: bool = False,
    memory_cap: bool = True,
) -> Supervised[T]:
    """Run ``call`` under the hard guard (see the module docstring); in-process when fork is unavailable.

    ``already``: seconds of the budget spent before the call (e.g. :func:`process_age`). ``in_process``: no
    child (cooperative budgets only). ``memory_cap=False``: no address-space limit (a child that starts a Dask
    cluster: its workers have Dask's own memory limit); such a child is not daemonic, so it may start them.
    """
    if in_process or not can_fork():
        return _run(call, classify, None)
    ctx = multiprocessing.get_context("fork")
    recv, send = ctx.Pipe(duplex=False)
    limit = memory_limit() if memory_cap else None
    child = ctx.Process(target=_child, args=(call, classify, send, limit), daemon=memory_cap)
    child.start()
    send.close()
    stop_at = time.monotonic() + hard_deadline(time_limit) - already
    interim: Supervised[T] | None = None
    try:
        while True:
            left = stop_at - time.monotonic()
            if left <= 0 or not recv.poll(min(left, 0.5)):
                if left <= 0:
                    why = (
                        f"stopped after {hard_deadline(time_limit):.3g} s (--time-limit {time_limit:g} s "
                        f"+ {GRACE_SHARE:.0%} + {GRACE_SECONDS:g} s)"
                    )
                    if interim is not None:
                        return _cut_short(interim, why)
                    return Supervised("timeout", message=f"{why}: a step overran its budget")
                if not child.is_alive() and not recv.poll(0):
                    return _died(child.exitcode, limit) if interim is None else _cut_short(interim, "it ended")
                continue
            try:
                got: Supervised[T] = recv.recv()
            except EOFError:
                child.join(1.0)
                return _died(child.exitcode, limit) if interim is None else _cut_short(interim, "it ended")
            if got.interim:
                interim = got
                continue
            return got
    finally:
        stop_group(child.pid)
        if child.is_alive():
            child.kill()
        child.join(1.0)
        recv.close()


def stop_group(pid: int | None) -> None:
    """Kill the process group (session) the supervised child ``pid`` leads: the child and all it started."""
    if pid is None:
        return
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):  # no such group (the child had not yet called setsid)
        pass


def children(pid: int | None = None) -> set[int]:
    """The live child processes of ``pid`` (default: this process), from every thread's ``/proc`` children list
    (Linux; elsewhere none)."""
    pid = os.getpid() if pid is None else pid
    found: set[int] = set()
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return found
    for tid in tids:
        try:
            with open(f"/proc/{pid}/task/{tid}/children", encoding="ascii") as f:
                found.update(int(x) for x in f.read().split())
        except (OSError, ValueError):
            continue
    return found


def kill_trees(roots: set[int]) -> None:
    """SIGKILL the processes ``roots`` and all their descendants (and the process groups the roots lead).

    Every process is stopped (SIGSTOP) before the tree is walked again, so none can start a new one behind the
    walk; then all are killed at once. Best effort: a process that already ended is skipped.
    """
    seen: set[int] = set()
    todo = set(roots)
    for _ in range(8):  # a tree changing under us settles once its members are stopped
        todo -= seen
        if not todo:
            break
        for pid in todo:
            _signal(pid, signal.SIGSTOP)
        seen |= todo
        todo = set().union(*(children(p) for p in todo))
    for pid in roots:
        try:
            if os.getpgid(pid) == pid:
                os.killpg(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    for pid in seen:
        _signal(pid, signal.SIGKILL)


def set_subreaper(on: bool) -> bool:
    """Linux: make this process the reaper of its orphaned descendants (``PR_SET_CHILD_SUBREAPER``), so a process
    whose parent died (a callable's child on a killed Dask worker) stays in reach of :func:`children`; returns
    the previous setting (``False`` elsewhere, where it is a no-op)."""
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        old = ctypes.c_int(0)
        if libc.prctl(37, ctypes.byref(old), 0, 0, 0) != 0:  # PR_GET_CHILD_SUBREAPER
            return False
        libc.prctl(36, int(on), 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
        return bool(old.value)
    except (OSError, AttributeError):  # pragma: no cover - not Linux
        return False


def _signal(pid: int, sig: int) -> None:
    try:
        os.kill(pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def post_interim(value: Any) -> None:
    """Send ``value`` to the guard as the result to use if the child is stopped from now on (no-op outside a
    supervised child). E.g. the report, written, before its plots are drawn."""
    if _INTERIM is not None:
        _INTERIM.send(Supervised("ok", value, interim=True))


_INTERIM: Connection | None = None


def _die_with_parent(parent: int) -> None:
    """Linux: the kernel kills this child if the guarding parent dies (a session of its own is out of reach of
    a kill aimed at the parent's process group); elsewhere a no-op."""
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):  # pragma: no cover - not Linux
        return
    if os.getppid() != parent:  # the parent died before the request took effect
        os._exit(1)


def _cut_short(interim: Supervised[T], why: str) -> Supervised[T]:
    return Supervised("ok", interim.value, message=f"{why} after the result was ready: what followed it was cut short")


def _died(exitcode: int | None, limit: int | None) -> Supervised[T]:
    """A child that ended without answering: killed by the kernel (memory) or crashed."""
    cap = f" of {limit / 2**30:.3g} GiB" if limit is not None else ""
    return Supervised(
        "memory",
        message=f"the audit process ended without a result (exit code {exitcode}); most likely it exceeded the "
        f"memory limit{cap}",
    )


def _run(call: Callable[[], T], classify: Classify, limit: int | None) -> Supervised[T]:
    """Run ``call``, turning its exceptions into data."""
    try:
        return Supervised("ok", call())
    except MemoryError:
        cap = f" of {limit / 2**30:.3g} GiB" if limit is not None else ""
        return Supervised("memory", message=f"the audit needed more than the memory limit{cap}")
    except OutOfTime as e:
        return Supervised("timeout", message=str(e))
    except Exception as e:
        kind, message = classify(e)
        return Supervised("error", kind=kind, message=message, traceback=traceback.format_exc())


def _child(call: Callable[[], T], classify: Classify, send: Connection, limit: int | None) -> None:
    """The child's side: a session of its own, the memory limit, run, send the outcome (its value's text if
    unpicklable)."""
    global _INTERIM
    parent = os.getppid()
    try:
        os.setsid()
    except OSError:  # pragma: no cover - already a group leader
        pass
    _die_with_parent(parent)
    _INTERIM = send
    if limit is not None and resource is not None:
        try:
            _, hard = resource.getrlimit(resource.RLIMIT_AS)
            want = address_space_cap(limit)
            cap = want if hard == resource.RLIM_INFINITY else min(want, hard)
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
    "InvalidEnvironment",
    "MAX_MEMORY_GB",
    "MEMORY_LIMIT",
    "OutOfTime",
    "Supervised",
    "address_space_cap",
    "can_fork",
    "children",
    "hard_deadline",
    "kill_trees",
    "memory_limit",
    "post_interim",
    "set_subreaper",
    "process_age",
    "stop_group",
    "supervise",
]
