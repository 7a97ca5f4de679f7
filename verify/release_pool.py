"""Worker processes that run a user's release function for a black-box audit (``mechanism.kind = "implementation"``).

The audited function is someone else's code: it may hang, raise, allocate without bound, fork, print, or return
the wrong shape or dtype. It therefore never runs in the audit's process. :class:`ReleasePool` starts
``processes`` workers, each ``python release_pool.py`` in a session (process group) of its own, under the
audit's address-space limit, talking to the parent over pipes only: a task is a JSON line (histogram, the
batch's seed key, the number of draws) and the answer a JSON header plus the releases as ``.npy`` bytes
(``allow_pickle=False``: nothing the worker sends can run code here). A task's releases come from
``default_rng(SeedSequence(seed, spawn_key=key))`` with ``key = (pair, side, batch)``, so the result does not
depend on the number of workers or which worker ran what.

What becomes of a hostile function:

* it **raises** or returns a **bad shape/dtype/non-finite value**: :class:`ReleaseFailure` naming the exception
  and where it was raised (the audit reports it as an invalid spec, exit 2);
* it **hangs**: the parent stops waiting at the draw deadline, kills the worker's process group and the audit
  measures what it has (inconclusive within the budget); a task that stalls long after others finished
  (:data:`STALL_SECONDS`, :data:`STALL_FACTOR`) gets a fresh worker and runs again from its own seed, so a
  worker stuck for reasons of its own costs seconds, not the budget, and the draws stay the same;
* it **allocates without bound**: the worker's ``MemoryError`` under the limit (or its death) stops the draws;
* it **forks**: a forked copy returning into the worker loop exits at once (its pid is not the worker's), and
  every process of the worker's group is killed when the pool closes; a worker whose parent dies kills its
  own group (a watchdog thread), so no process is left behind.

This file imports only the standard library and numpy at module level: the workers start in a fraction of a
second and import nothing of semidp unless the audited function does.
"""

from __future__ import annotations

import io
import json
import os
import random
import selectors
import signal
import subprocess
import sys
import threading
import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import IO, Any

import numpy as np
from numpy.typing import NDArray

from semidp.accountant.core.budget import Budget

#: Seconds a worker gets to start and import the audited function before it counts as hung.
START_SECONDS = 30.0
#: A task taking more than max(STALL_SECONDS, STALL_FACTOR x the median finished task) once some task has
#: finished counts as stalled (a worker stuck after its fork): its worker is replaced and the task run again
#: (same seed: same draws), at most MAX_RESTARTS times per run.
STALL_SECONDS = 10.0
STALL_FACTOR = 20.0
MAX_RESTARTS = 2


class ReleaseFailure(Exception):
    """The audited function failed in a way that is its own fault (raised, bad output, not importable).

    ``message`` completes the sentence ``mechanism.callable = 'name' ...``.
    """

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


@dataclass(frozen=True)
class Task:
    """``n`` releases at ``histogram`` from the stream ``SeedSequence(seed, spawn_key=key)``."""

    key: tuple[int, ...]
    histogram: tuple[int, ...]
    n: int


def takes_size(fn: Callable[..., Any]) -> bool:
    """Whether ``fn`` accepts a ``size=`` keyword (then it is called in batches)."""
    import inspect

    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False
    return "size" in params or any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())


def _where(tb: Any) -> str:
    """``file:line, in function`` of the innermost frame of a traceback (the audited code's, usually)."""
    frames = traceback.extract_tb(tb)
    if not frames:
        return "unknown location"
    f = frames[-1]
    return f"{f.filename}:{f.lineno}, in {f.name}"


def call_release(fn: Callable[..., Any], histogram: tuple[int, ...], rng: np.random.Generator, n: int) -> NDArray[Any]:
    """``n`` releases of ``fn`` at ``histogram`` as an ``(n, cells)`` array (one call with ``size=n`` when ``fn``
    takes it, else ``n`` calls); :class:`ReleaseFailure` when it raises or its output is not numeric, finite and
    of the right shape. ``MemoryError`` passes through."""
    h = np.array(histogram, dtype=np.int64)
    h.flags.writeable = False
    d = h.size
    try:
        if takes_size(fn):
            res = np.asarray(fn(h, rng, size=n))
            if res.shape != (n, d):
                raise ReleaseFailure(f"returned shape {res.shape} for size={n}; expected ({n}, {d})")
        else:
            rows = []
            for _ in range(n):
                r = np.asarray(fn(h, rng))
                if r.shape != (d,):
                    raise ReleaseFailure(f"returned shape {r.shape}; expected ({d},)")
                rows.append(r)
            res = np.stack(rows) if rows else np.empty((0, d))
    except (ReleaseFailure, MemoryError):
        raise
    except Exception as e:
        first = str(e).splitlines()[0][:300] if str(e) else ""
        raise ReleaseFailure(f"raised {type(e).__name__}: {first} (at {_where(e.__traceback__)})") from None
    if not (np.issubdtype(res.dtype, np.integer) or np.issubdtype(res.dtype, np.floating)):
        raise ReleaseFailure(f"returned dtype {res.dtype}; expected integers or floats")
    if np.issubdtype(res.dtype, np.floating) and not np.all(np.isfinite(res)):
        raise ReleaseFailure("returned a non-finite value")
    return res


def stream(seed: int, key: Sequence[int]) -> np.random.Generator:
    """The generator of one batch: ``SeedSequence(seed, spawn_key=key)`` (the ``key``-th child of the seed)."""
    return np.random.default_rng(np.random.SeedSequence(seed, spawn_key=tuple(int(k) for k in key)))


def seed_globals(seed: int, key: Sequence[int]) -> None:
    """Seed numpy's and Python's global generators for one batch from ``SeedSequence(seed, spawn_key=key + (1,))``
    (no batch's stream: their keys have 3 entries). A function that draws from them rather than from its ``rng``
    then gets independent draws in every batch, reproducible by ``--seed``: forked workers would otherwise start
    from the same global state and repeat each other's draws (found: 50 of 400 rows repeated on 2 workers)."""
    state = np.random.SeedSequence(seed, spawn_key=tuple(int(k) for k in key) + (1,)).generate_state(2)
    np.random.seed(int(state[0]))
    random.seed(int(state[1]))


def load_function(name: str, spec_path: str) -> Callable[..., Any]:
    """Import ``package.module:function`` or ``file.py:function`` (relative to the spec);
    :class:`ReleaseFailure` when it cannot be imported or is not callable."""
    import importlib
    import importlib.util
    from pathlib import Path

    mod_name, _, fn_name = name.rpartition(":")
    try:
        if mod_name.endswith(".py"):
            file = Path(mod_name)
            if not file.is_absolute():
                file = Path(spec_path).parent / file
            loader_spec = importlib.util.spec_from_file_location(f"semidp_audited_{file.stem}", file)
            if loader_spec is None or loader_spec.loader is None:
                raise ImportError(f"cannot load {file}")
            module = importlib.util.module_from_spec(loader_spec)
            loader_spec.loader.exec_module(module)
        else:
            if "" not in sys.path and str(Path.cwd()) not in sys.path:  # like `python -m`: the working directory
                sys.path.append(str(Path.cwd()))
            module = importlib.import_module(mod_name)
        fn = getattr(module, fn_name)
    except (ImportError, AttributeError, OSError) as e:
        raise ReleaseFailure(f"cannot be imported: {e}") from None
    except Exception as e:  # the module's own code raised while it was imported
        raise ReleaseFailure(f"cannot be imported: its module raised {type(e).__name__}: {e}") from None
    if not callable(fn):
        raise ReleaseFailure("is not callable")
    return fn  # type: ignore[no-any-return]


# ---------------------------------------------------------------------------------------------- the worker side


def _send(out: IO[bytes], header: dict[str, Any], payload: bytes = b"") -> None:
    head = json.dumps({**header, "payload": len(payload)}).encode()
    out.write(len(head).to_bytes(8, "little") + head + payload)
    out.flush()


def _watch_parent(parent: int) -> None:
    """Kill this worker's whole group (the worker and anything the audited function forked) once the parent is
    gone."""
    while True:
        time.sleep(0.5)
        if os.getppid() != parent:
            os.killpg(0, signal.SIGKILL)


def _start_watchdog(parent: int) -> None:
    """Linux: this worker dies with ``parent`` (``PR_SET_PDEATHSIG``), and a watchdog process in its session kills
    the session once the worker is gone, taking what the audited function forked (found: a ``sleep`` started by a
    callable outlived a SIGKILLed ``semidp``). Unlike :func:`_watch_parent` (a thread, which an audited function
    holding the GIL would starve), neither needs this process to run Python. Call before any thread starts."""
    import ctypes

    try:
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):  # pragma: no cover - no prctl
        return
    if os.getppid() != parent:  # the parent died before the request took effect
        os.killpg(0, signal.SIGKILL)
    worker = os.getpid()
    if os.fork() == 0:  # pragma: no cover - the watchdog's coverage is not collected
        try:
            os.closerange(0, 1 << 16)  # hold no pipe open: not the protocol's, not a piped stdout or stderr
            while os.getppid() == worker:
                time.sleep(0.2)
            os.killpg(0, signal.SIGKILL)
        finally:
            os._exit(0)


def serve() -> None:
    """The worker's main loop run as a script (``python release_pool.py``): the protocol on stdin/stdout."""
    _serve_fds(os.dup(0), os.dup(1), os.getppid())


def _inherited_bytes() -> int:
    """The address space this worker inherited from its parent (0 where /proc is not there): the memory limit
    counts from there, so a parent holding much virtual memory does not leave the worker none."""
    try:
        with open("/proc/self/statm", encoding="ascii") as f:
            return int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def _serve_fds(in_fd: int, out_fd: int, parent: int) -> None:
    """The worker's main loop: an init line, then one answer per task line (module docstring)."""
    me = os.getpid()
    proto_in = os.fdopen(in_fd, "rb")
    proto_out = os.fdopen(out_fd, "wb")
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)  # the audited code reads nothing of the protocol ...
    os.dup2(2, 1)  # ... and what it prints goes to stderr, not into the answers
    if sys.platform.startswith("linux"):  # the kernel's hold on a worker whose audited code never yields the GIL
        _start_watchdog(parent)
    threading.Thread(target=_watch_parent, args=(parent,), daemon=True).start()
    init = json.loads(proto_in.readline())
    sys.path[:0] = [p for p in init["sys_path"] if p not in sys.path]
    limit = init.get("memory_limit")
    if limit:
        try:
            import resource

            _, hard = resource.getrlimit(resource.RLIMIT_AS)
            want = int(limit) + _inherited_bytes()  # as verify.supervisor.address_space_cap (stdlib only here)
            cap = want if hard == resource.RLIM_INFINITY else min(want, hard)
            resource.setrlimit(resource.RLIMIT_AS, (cap, hard))
        except (ImportError, ValueError, OSError):  # pragma: no cover - a platform without RLIMIT_AS
            pass
    try:
        fn = load_function(init["callable"], init["spec_path"])
    except ReleaseFailure as e:
        _send(proto_out, {"status": "failure", "message": e.message})
        return
    if os.getpid() != me:  # pragma: no cover - the module forked while it was imported
        os._exit(0)
    _send(proto_out, {"status": "ready"})
    seed = int(init["seed"])
    for line in proto_in:
        task = json.loads(line)
        try:
            seed_globals(seed, task["key"])
            res = call_release(fn, tuple(task["histogram"]), stream(seed, task["key"]), int(task["n"]))
        except ReleaseFailure as e:
            if os.getpid() != me:
                os._exit(0)
            _send(proto_out, {"status": "failure", "message": e.message})
            continue
        except MemoryError:
            if os.getpid() != me:
                os._exit(0)
            _send(proto_out, {"status": "memory", "message": f"ran out of memory (limit {limit} bytes)"})
            continue
        if os.getpid() != me:  # a copy forked by the audited function: it must not answer
            os._exit(0)
        buf = io.BytesIO()
        np.save(buf, res, allow_pickle=False)
        _send(proto_out, {"status": "ok"}, buf.getvalue())


# ---------------------------------------------------------------------------------------------- the parent side


@dataclass
class _Worker:
    pid: int
    to_worker: int
    """The pipe the tasks go down (write end)."""
    from_worker: int
    """The pipe the answers come up (read end)."""
    buf: bytearray
    proc: subprocess.Popen[bytes] | None = None
    task: int | None = None
    ready: bool = False
    since: float = 0.0
    """``time.monotonic()`` when its task was sent."""


def _fork_worker(others: Sequence[_Worker]) -> _Worker:
    """A worker forked from this process (it has every module already: it starts at once) in a session of its
    own; it never returns into this process's code (``os._exit``)."""
    t_read, t_write = os.pipe()
    r_read, r_write = os.pipe()
    parent = os.getpid()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child's coverage is not collected
        code = 0
        try:
            os.setsid()
            os.close(t_write)
            os.close(r_read)
            for w in others:  # the other workers' pipes: their ends must close when the parent's do
                for fd in (w.to_worker, w.from_worker):
                    try:
                        os.close(fd)
                    except OSError:
                        pass
            _serve_fds(t_read, r_write, parent)
        except BaseException:
            code = 1
        finally:
            os._exit(code)
    os.close(t_read)
    os.close(r_write)
    return _Worker(pid, t_write, r_read, bytearray())


def _spawn_worker() -> _Worker:
    """A worker started as ``python release_pool.py`` (where ``fork`` is not available)."""
    proc = subprocess.Popen(
        [sys.executable, os.path.abspath(__file__)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        start_new_session=True,
    )
    if proc.stdin is None or proc.stdout is None:  # pragma: no cover - PIPE was asked for
        raise OSError("no pipes to the release worker")
    return _Worker(proc.pid, proc.stdin.fileno(), proc.stdout.fileno(), bytearray(), proc)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


@dataclass(frozen=True)
class PoolResult:
    """What a :meth:`ReleasePool.run` produced: the releases of the finished tasks (by index), and why it ended
    early (``None``: every task finished; ``"budget"``; ``"memory"``)."""

    done: dict[int, NDArray[Any]]
    stopped: str | None
    note: str = ""


class ReleasePool:
    """``processes`` worker processes running ``callable_name`` (module docstring); a context manager."""

    def __init__(
        self, callable_name: str, spec_path: str, seed: int, processes: int, *, memory_limit: int | None
    ) -> None:
        self.callable_name = callable_name
        self.spec_path = spec_path
        self.seed = seed
        self.processes = max(1, processes)
        self.memory_limit = memory_limit
        self.workers: list[_Worker] = []

    def __enter__(self) -> ReleasePool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def start(self) -> None:
        """Start the missing workers (they import the function while the caller goes on)."""
        init = {
            "callable": self.callable_name,
            "spec_path": self.spec_path,
            "seed": self.seed,
            "sys_path": [p for p in sys.path if p],
            "memory_limit": self.memory_limit,
        }
        line = (json.dumps(init) + "\n").encode()
        fork = hasattr(os, "fork") and os.environ.get("SEMIDP_NO_FORK") != "1"
        for _ in range(self.processes - len(self.workers)):
            w = _fork_worker(self.workers) if fork else _spawn_worker()
            os.set_blocking(w.from_worker, False)
            self.workers.append(w)
            _write_all(w.to_worker, line)

    def close(self) -> None:
        """Kill every worker's process group (the audited function's forks with it) and reap the workers."""
        for w in self.workers:
            self._end(w)
        self.workers = []

    @staticmethod
    def _end(w: _Worker) -> None:
        """Kill one worker's process group and reap the worker."""
        try:
            os.killpg(w.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        if w.proc is not None:
            for f in (w.proc.stdin, w.proc.stdout):
                if f is not None:
                    try:
                        f.close()
                    except OSError:
                        pass
            w.proc.wait()
        else:
            for fd in (w.to_worker, w.from_worker):
                try:
                    os.close(fd)
                except OSError:
                    pass
            try:
                os.waitpid(w.pid, 0)
            except ChildProcessError:
                pass

    @staticmethod
    def _message(w: _Worker) -> tuple[dict[str, Any], bytes] | None:
        """A complete message at the head of ``w``'s buffer (removed from it), or ``None``."""
        if len(w.buf) < 8:
            return None
        hl = int.from_bytes(w.buf[:8], "little")
        if len(w.buf) < 8 + hl:
            return None
        head = json.loads(bytes(w.buf[8 : 8 + hl]))
        pl = int(head.get("payload", 0))
        if len(w.buf) < 8 + hl + pl:
            return None
        payload = bytes(w.buf[8 + hl : 8 + hl + pl])
        del w.buf[: 8 + hl + pl]
        return head, payload

    def run(self, tasks: Sequence[Task], budget: Budget) -> PoolResult:
        """Run ``tasks`` on the workers until all are done or ``budget`` (a wall-clock Budget) runs out.

        At the deadline the workers are killed (a later call starts new ones) and the finished tasks are
        returned with ``stopped = "budget"``; a worker out of memory ends the run with ``"memory"``. Raises
        :class:`ReleaseFailure` when the function fails (or its worker dies).
        """
        self.start()
        todo = list(range(len(tasks)))[::-1]
        done: dict[int, NDArray[Any]] = {}
        sel = selectors.DefaultSelector()
        try:
            for w in self.workers:
                sel.register(w.from_worker, selectors.EVENT_READ, w)
            started = time.monotonic()
            took: list[float] = []
            restarts = 0

            def assign(w: _Worker) -> None:
                if w.ready and w.task is None and todo:
                    w.task = todo.pop()
                    w.since = time.monotonic()
                    t = tasks[w.task]
                    msg = {"key": list(t.key), "histogram": list(t.histogram), "n": t.n}
                    _write_all(w.to_worker, (json.dumps(msg) + "\n").encode())

            while len(done) < len(tasks):
                now = time.monotonic()
                if now >= budget.deadline:
                    self.close()
                    return PoolResult(done, "budget")
                if not any(w.ready for w in self.workers) and now - started > START_SECONDS:
                    raise ReleaseFailure(f"did not start in a worker within {START_SECONDS:g} s (hung on import?)")
                for key, _ in sel.select(timeout=min(0.5, budget.deadline - now)):
                    w = key.data
                    chunk = os.read(key.fd, 1 << 20)
                    if not chunk:
                        code = _exit_code(w)
                        what = f"signal {-code}" if code < 0 else f"exit code {code}"
                        raise ReleaseFailure(f"ended its worker process ({what}) while releasing")
                    w.buf += chunk
                    while (m := self._message(w)) is not None:
                        head, payload = m
                        status = head["status"]
                        if status == "ready":
                            w.ready = True
                        elif status == "ok" and w.task is not None:
                            arr = np.load(io.BytesIO(payload), allow_pickle=False)
                            done[w.task] = arr
                            w.task = None
                            took.append(time.monotonic() - w.since)
                        elif status == "memory":
                            self.close()
                            return PoolResult(done, "memory", str(head.get("message", "")))
                        else:
                            where = ""
                            if w.task is not None:
                                k = tasks[w.task].key
                                where = f" (pair {k[0]}, side {'x' if k[1] == 0 else 'x_prime'}, batch {k[2]})"
                            raise ReleaseFailure(str(head.get("message", "failed")) + where)
                if took and restarts < MAX_RESTARTS:
                    limit = max(STALL_SECONDS, STALL_FACTOR * float(np.median(took)))
                    for w in [w for w in self.workers if w.task is not None and now - w.since > limit]:
                        restarts += 1
                        todo.append(w.task)  # type: ignore[arg-type]
                        sel.unregister(w.from_worker)
                        self.workers.remove(w)
                        self._end(w)
                        self.start()
                        sel.register(self.workers[-1].from_worker, selectors.EVENT_READ, self.workers[-1])
                for w in self.workers:
                    assign(w)
            return PoolResult(done, None)
        except BaseException:
            self.close()
            raise
        finally:
            sel.close()


def _exit_code(w: _Worker) -> int:
    """The dead worker's exit code (negative: the signal that ended it)."""
    if w.proc is not None:
        return w.proc.wait()
    _, status = os.waitpid(w.pid, 0)
    return os.waitstatus_to_exitcode(status)


def default_processes() -> int:
    """All cores this process may use (``os.sched_getaffinity`` where available, else ``os.cpu_count()``)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


__all__ = [
    "PoolResult",
    "ReleaseFailure",
    "ReleasePool",
    "MAX_RESTARTS",
    "STALL_FACTOR",
    "STALL_SECONDS",
    "START_SECONDS",
    "Task",
    "call_release",
    "default_processes",
    "load_function",
    "serve",
    "stream",
    "takes_size",
]

if __name__ == "__main__":
    if sys.path and os.path.abspath(sys.path[0]) == os.path.dirname(os.path.abspath(__file__)):
        del sys.path[0]  # run as a script: semidp/verify/ is no top-level package directory
    serve()
