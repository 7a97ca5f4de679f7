"""Fast guards of the supervisor's classification (verify/supervisor.py): time, memory and crash.

Issue Step 16: a child killed by the kernel (out of memory) must come back as ``memory`` (inconclusive, exit 3),
never as an error (exit 2); an overrun as ``timeout``; an exception as an ``error`` classified by the caller; and a
posted interim value as the result when the child is cut short. Judged by
``python benchmarks/mutation.py verify/supervisor.py``. No test asserts a wall time, only generous bounds.
"""

from __future__ import annotations

import math
import multiprocessing
import os
import signal
import subprocess
import time

import pytest

from semidp.verify import supervisor
from semidp.verify.supervisor import (
    GRACE_SECONDS,
    GRACE_SHARE,
    MAX_MEMORY_GB,
    MEMORY_LIMIT,
    InvalidEnvironment,
    OutOfTime,
    Supervised,
    address_space_cap,
    can_fork,
    hard_deadline,
    memory_limit,
    post_interim,
    process_age,
    stop_group,
    supervise,
)


def _classify(e: BaseException) -> tuple[str, str]:
    return type(e).__name__, f"classified: {e}"


def _raise(e: BaseException) -> object:
    raise e


def _sleep(seconds: float) -> str:
    time.sleep(seconds)
    return "late"


def test_constants_and_the_hard_deadline() -> None:
    assert (MEMORY_LIMIT, GRACE_SHARE, GRACE_SECONDS, MAX_MEMORY_GB) == (2 * 2**30, 0.1, 1.0, 2.0**20)
    assert hard_deadline(10.0) == 10.0 * (1 + 0.1) + 1.0
    assert hard_deadline(0.0) == 1.0


@pytest.mark.parametrize(
    "text, expected",
    [(None, 2 * 2**30), ("", 2 * 2**30), ("  ", 2 * 2**30), ("1", 2**30), ("0.5", 2**29), ("1e-12", 1),
     (str(2.0**20), 2**50)],
)  # fmt: skip
def test_memory_limit_from_the_environment(monkeypatch: pytest.MonkeyPatch, text: str | None, expected: int) -> None:
    if text is None:
        monkeypatch.delenv("SEMIDP_MEMORY_LIMIT_GB", raising=False)
    else:
        monkeypatch.setenv("SEMIDP_MEMORY_LIMIT_GB", text)
    assert memory_limit() == expected


@pytest.mark.parametrize("text", ["abc", "0", "-1", "inf", "nan", str(2.0**20 * 1.001)])
def test_memory_limit_refuses_values_outside_its_domain(monkeypatch: pytest.MonkeyPatch, text: str) -> None:
    monkeypatch.setenv("SEMIDP_MEMORY_LIMIT_GB", text)
    with pytest.raises(InvalidEnvironment, match="SEMIDP_MEMORY_LIMIT_GB"):
        memory_limit()


def test_address_space_cap_adds_what_the_process_holds(monkeypatch: pytest.MonkeyPatch) -> None:
    def held() -> int:
        with open("/proc/self/statm", encoding="ascii") as f:
            return int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")

    before = held()
    extra = address_space_cap(2**30) - 2**30
    after = held()
    assert before // 2 <= extra <= 2 * after and extra > 2**20
    monkeypatch.setattr(os, "sysconf", lambda name: _raise(ValueError(name)))
    assert address_space_cap(12345) == 12345


def test_process_age_is_positive_and_below_the_uptime() -> None:
    with open("/proc/uptime", encoding="ascii") as f:
        uptime = float(f.read().split()[0])
    assert 0.0 < process_age() <= uptime


def test_can_fork_and_its_opt_out(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SEMIDP_NO_FORK", raising=False)
    assert can_fork()
    monkeypatch.setenv("SEMIDP_NO_FORK", "1")
    assert not can_fork()
    # in-process: the call runs here, no child
    assert supervise(os.getpid, time_limit=5, classify=_classify) == Supervised("ok", os.getpid())


def test_in_process_outcomes_are_data() -> None:
    ok = supervise(lambda: 7, time_limit=5, classify=_classify, in_process=True)
    assert ok == Supervised("ok", 7)
    err = supervise(lambda: _raise(ValueError("bad")), time_limit=5, classify=_classify, in_process=True)
    assert (err.status, err.kind, err.message) == ("error", "ValueError", "classified: bad")
    assert "ValueError: bad" in err.traceback
    mem = supervise(lambda: _raise(MemoryError()), time_limit=5, classify=_classify, in_process=True)
    assert mem == Supervised("memory", message="the audit needed more than the memory limit")
    late = supervise(lambda: _raise(OutOfTime("budget spent")), time_limit=5, classify=_classify, in_process=True)
    assert late == Supervised("timeout", message="budget spent")


def test_a_forked_child_answers() -> None:
    parent = os.getpid()
    got = supervise(os.getpid, time_limit=20, classify=_classify)
    assert got.status == "ok" and isinstance(got.value, int) and got.value != parent
    err = supervise(lambda: _raise(KeyError("k")), time_limit=20, classify=_classify)
    assert (err.status, err.kind, err.message) == ("error", "KeyError", "classified: 'k'")


def test_a_child_killed_by_the_kernel_is_memory_not_an_error() -> None:
    got = supervise(lambda: os.kill(os.getpid(), signal.SIGKILL), time_limit=20, classify=_classify)
    assert got.status == "memory"
    assert got.message == (
        "the audit process ended without a result (exit code -9); most likely it exceeded the memory limit of 2 GiB"
    )
    uncapped = supervise(lambda: os._exit(9), time_limit=20, classify=_classify, memory_cap=False)
    assert (
        uncapped.status == "memory" and uncapped.message.endswith("memory limit") and "exit code 9" in uncapped.message
    )


def test_the_memory_cap_is_applied_in_the_child(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SEMIDP_MEMORY_LIMIT_GB", "0.03")
    grow = lambda: len(bytearray(300 * 2**20))  # noqa: E731
    got = supervise(grow, time_limit=20, classify=_classify)
    assert got == Supervised("memory", message="the audit needed more than the memory limit of 0.03 GiB")
    assert supervise(grow, time_limit=20, classify=_classify, memory_cap=False) == Supervised("ok", 300 * 2**20)


def test_the_child_is_daemonic_only_under_the_memory_cap() -> None:
    daemon = lambda: multiprocessing.current_process().daemon  # noqa: E731
    assert supervise(daemon, time_limit=20, classify=_classify).value is True
    assert supervise(daemon, time_limit=20, classify=_classify, memory_cap=False).value is False


def test_an_overrun_is_stopped_as_timeout() -> None:
    got = supervise(lambda: _sleep(60), time_limit=0.1, classify=_classify)
    assert got == Supervised(
        "timeout", message="stopped after 1.11 s (--time-limit 0.1 s + 10% + 1 s): a step overran its budget"
    )


def test_time_already_spent_counts_against_the_deadline() -> None:
    start = time.monotonic()
    got = supervise(lambda: _sleep(60), time_limit=20, classify=_classify, already=22.5)
    assert got.status == "timeout" and got.message.startswith("stopped after 23 s (--time-limit 20 s")
    assert time.monotonic() - start < 15  # the budget was already spent; without `already` it would wait 23 s


def test_an_interim_value_is_the_result_when_cut_short() -> None:
    def post_then(what: str) -> str:
        post_interim({"report": 1})
        if what == "sleep":
            time.sleep(60)
        elif what == "exit":
            os._exit(0)
        return "final"

    got = supervise(lambda: post_then("sleep"), time_limit=0.1, classify=_classify)
    assert got == Supervised(
        "ok",
        {"report": 1},
        message="stopped after 1.11 s (--time-limit 0.1 s + 10% + 1 s) after the result was ready: what followed "
        "it was cut short",
    )
    ended = supervise(lambda: post_then("exit"), time_limit=20, classify=_classify)
    assert ended.status == "ok" and ended.value == {"report": 1}
    assert ended.message.startswith("it ended after the result was ready")
    assert supervise(lambda: post_then("return"), time_limit=20, classify=_classify) == Supervised("ok", "final")


def test_post_interim_outside_a_child_is_a_no_op() -> None:
    post_interim(1)


def test_the_whole_process_group_is_stopped(tmp_path: object) -> None:
    def spawn() -> int:
        pid = os.fork()
        if pid == 0:  # the grandchild: outlives its parent unless the group is killed
            time.sleep(60)
            os._exit(0)
        return pid

    got = supervise(spawn, time_limit=20, classify=_classify)
    assert got.status == "ok" and isinstance(got.value, int)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            os.kill(got.value, 0)
        except ProcessLookupError:
            break
        if _zombie(got.value):
            break
        time.sleep(0.05)
    else:
        os.kill(got.value, signal.SIGKILL)
        pytest.fail("the grandchild survived its supervised parent")


def _zombie(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as f:
            return f.read().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True


def test_stop_group_tolerates_missing_groups() -> None:
    stop_group(None)
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    os.waitpid(pid, 0)
    stop_group(pid)  # no such group any more


def test_inf_memory_limit_is_refused_by_name(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SEMIDP_MEMORY_LIMIT_GB", str(math.inf))
    with pytest.raises(InvalidEnvironment, match=r"expected a number of GiB > 0 and <= 1\.04858e\+06"):
        memory_limit()


class _FakeFile:
    def __init__(self, text: str) -> None:
        self.text = text

    def __enter__(self) -> _FakeFile:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def read(self) -> str:
        return self.text


def _fake_proc(monkeypatch: pytest.MonkeyPatch, files: dict[str, str]) -> None:
    def fake_open(path: str, *args: object, **kw: object) -> _FakeFile:
        if path not in files:
            raise FileNotFoundError(path)
        return _FakeFile(files[path])

    monkeypatch.setattr(supervisor, "open", fake_open, raising=False)
    monkeypatch.setattr(os, "sysconf", lambda name: {"SC_CLK_TCK": 100, "SC_PAGE_SIZE": 4096}[name])


def test_process_age_reads_the_start_time_field(monkeypatch: pytest.MonkeyPatch) -> None:
    fields = [str(7 * i + 1) for i in range(30)]
    fields[0], fields[19] = "S", "50000"  # the state, and the start time in clock ticks (field 22)
    _fake_proc(monkeypatch, {"/proc/self/stat": "123 (a) b) " + " ".join(fields), "/proc/uptime": "1234.5 99.0"})
    assert process_age() == 1234.5 - 500.0
    _fake_proc(monkeypatch, {"/proc/self/stat": "123 (a) " + " ".join(fields), "/proc/uptime": "400.0 1.0"})
    assert process_age() == 0.0  # started "after" the uptime: clamped
    _fake_proc(monkeypatch, {"/proc/uptime": "400.0 1.0"})
    assert process_age() == 0.0


def test_address_space_cap_from_a_fake_statm(monkeypatch: pytest.MonkeyPatch) -> None:
    _fake_proc(monkeypatch, {"/proc/self/statm": "1000 20 30"})
    assert address_space_cap(2**30) == 2**30 + 1000 * 4096
    _fake_proc(monkeypatch, {"/proc/self/statm": ""})
    assert address_space_cap(77) == 77
    _fake_proc(monkeypatch, {})
    assert address_space_cap(78) == 78


def test_supervised_defaults_and_frozen() -> None:
    import dataclasses

    s = Supervised("ok")
    assert (s.value, s.kind, s.message, s.traceback, s.interim) == (None, "", "", "", False)
    with pytest.raises(dataclasses.FrozenInstanceError):
        s.status = "error"  # type: ignore[misc]


def test_a_daemonic_child_cannot_fork_again() -> None:
    assert supervise(can_fork, time_limit=20, classify=_classify).value is False
    assert supervise(can_fork, time_limit=20, classify=_classify, memory_cap=False).value is True


def test_the_budget_is_the_hard_deadline_not_the_time_limit() -> None:
    # 1.2 s of work under --time-limit 1: inside the 2.1 s hard deadline
    assert supervise(lambda: _sleep(1.2), time_limit=1.0, classify=_classify) == Supervised("ok", "late")


def _die_leaving_a_grandchild(post: bool) -> None:
    if post:
        post_interim("early")
    if os.fork() == 0:  # holds the result pipe open: the guard must not wait for it
        time.sleep(60)
        os._exit(0)
    os.kill(os.getpid(), signal.SIGKILL)


def test_a_killed_child_is_noticed_while_its_children_hold_the_pipe() -> None:
    start = time.monotonic()
    got = supervise(lambda: _die_leaving_a_grandchild(False), time_limit=20, classify=_classify)
    assert got.status == "memory" and "exit code -9" in got.message
    interim = supervise(lambda: _die_leaving_a_grandchild(True), time_limit=20, classify=_classify)
    assert interim.status == "ok" and interim.value == "early" and interim.message.startswith("it ended after")
    assert time.monotonic() - start < 20  # not the hard deadline (22 s each)


def test_the_child_dies_with_its_guarding_parent(tmp_path: object) -> None:
    import pathlib

    pidfile = pathlib.Path(str(tmp_path)) / "pid"

    def record_and_sleep() -> None:
        pidfile.write_text(str(os.getpid()))
        time.sleep(60)

    guard = os.fork()
    if guard == 0:
        try:
            supervise(record_and_sleep, time_limit=120, classify=_classify)
        finally:
            os._exit(0)
    deadline = time.monotonic() + 20
    while not pidfile.exists() or not pidfile.read_text():
        assert time.monotonic() < deadline, "the supervised child never started"
        time.sleep(0.05)
    child = int(pidfile.read_text())
    os.kill(guard, signal.SIGKILL)
    os.waitpid(guard, 0)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        if _zombie(child):
            return
        time.sleep(0.05)
    os.kill(child, signal.SIGKILL)
    pytest.fail("the supervised child outlived its guard")


def test_the_cap_never_exceeds_an_inherited_hard_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    import resource

    monkeypatch.setenv("SEMIDP_MEMORY_LIMIT_GB", "100")  # wanted cap far above the hard limit set below
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # a throwaway process: its hard limit cannot be raised again
        code = 1
        try:
            os.close(r)
            with open("/proc/self/statm", encoding="ascii") as f:
                held = int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
            hard = held + 4 * 2**30
            resource.setrlimit(resource.RLIMIT_AS, (held + 2 * 2**30, hard))
            got = supervise(lambda: resource.getrlimit(resource.RLIMIT_AS), time_limit=20, classify=_classify)
            os.write(w, repr((got.status, got.value, hard)).encode())
            code = 0
        finally:
            os._exit(code)
    os.close(w)
    with os.fdopen(r) as f:
        text = f.read()
    os.waitpid(pid, 0)
    status, (soft, hard_seen), hard = eval(text)  # noqa: S307 - our own repr of ints
    assert status == "ok" and hard_seen == hard
    assert soft == hard  # capped at the hard limit, not left at the lower inherited soft limit


# --- the process-tree helpers the Dask client uses (children, kill_trees, set_subreaper): session 32

CHAIN = """echo $$ >> "$2"
if [ "$1" -gt 1 ]; then sh "$0" $(($1 - 1)) "$2" & fi
exec sleep 60
"""


def _chain(tmp_path: object, depth: int) -> tuple[subprocess.Popen[bytes], list[int]]:
    """A chain of ``depth`` processes (each the parent of the next), started from this process in its own
    process group (so only a walk of the tree reaches the deeper ones); the pids, root first."""
    import pathlib

    d = pathlib.Path(str(tmp_path))
    script, pids = d / "chain.sh", d / "pids"
    script.write_text(CHAIN)
    root = subprocess.Popen(["sh", str(script), str(depth), str(pids)])
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        got = [int(x) for x in pids.read_text().split()] if pids.exists() else []
        if len(got) == depth:
            return root, got
        time.sleep(0.05)
    root.kill()
    root.wait()
    pytest.fail("the chain did not start")


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return _zombie(pid)


def test_kill_trees_stops_a_chain_eight_deep(tmp_path: object) -> None:
    """``children`` sees this process's child and that child's child; ``kill_trees`` walks the tree (eight
    levels: its bound) and kills every level, though the root leads no process group of its own."""
    from semidp.verify.supervisor import children, kill_trees

    proc, pids = _chain(tmp_path, 8)
    root = proc.pid
    try:
        assert pids[0] == root and root in children() and children(root) == {pids[1]}
        assert os.getpgid(root) != root  # killpg cannot reach the deeper levels: only the walk does
        kill_trees({root})
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and not all(_gone(p) for p in pids):
            time.sleep(0.05)
        assert [p for p in pids if not _gone(p)] == []
    finally:
        for p in pids:
            try:
                os.kill(p, signal.SIGKILL)
            except ProcessLookupError:
                pass
        proc.wait()


def test_set_subreaper_returns_the_previous_setting() -> None:
    from semidp.verify.supervisor import set_subreaper

    old = set_subreaper(True)
    try:
        assert set_subreaper(True) is True
        assert set_subreaper(False) is True
        assert set_subreaper(False) is False
    finally:
        set_subreaper(old)


def test_kill_trees_kills_the_group_of_a_root_that_leads_one(tmp_path: object) -> None:
    """A process of the root's group that is no longer in its tree (its parent exited: an orphan) is reached
    only through the group, which ``kill_trees`` kills when the root leads it."""
    import pathlib

    from semidp.verify.supervisor import children, kill_trees

    orphan_file = pathlib.Path(str(tmp_path)) / "orphan"
    script = f"sh -c 'sleep 60 & echo $! > \"{orphan_file}\"'; exec sleep 60"
    proc = subprocess.Popen(["sh", "-c", script], start_new_session=True)
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and not (orphan_file.exists() and orphan_file.read_text().strip()):
            time.sleep(0.05)
        orphan = int(orphan_file.read_text())
        while time.monotonic() < deadline and children(proc.pid):  # the intermediate shell has exited
            time.sleep(0.05)
        assert os.getpgid(orphan) == proc.pid and orphan not in children(proc.pid)
        kill_trees({proc.pid})
        while time.monotonic() < deadline and not _gone(orphan):
            time.sleep(0.05)
        assert _gone(orphan)
    finally:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait()
