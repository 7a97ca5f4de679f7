"""Anytime and sequential black-box audits, and release functions run in worker processes (Step 12.1-12.3, 18.5).

* the draws come in rounds (x4 from 10**4) with the error spent across them (linear alpha-spending, Bonferroni
  over the looks): a planted bug is refuted in the first rounds, a correct twin runs to its samples or its
  budget and reports its draws, its stop reason and its empirical lower bound;
* the draws do not depend on the number of worker processes;
* a hostile release function (raises, hangs, forks, wrong dtype, dies, allocates without bound) ends as a
  located error (exit 2) or an inconclusive result within the budget, and leaves no process behind.
"""

from __future__ import annotations

import json
import math
import os
import time
from pathlib import Path

import numpy as np
import pytest

from semidp.accountant.core.budget import Budget
from semidp.verify import audit_looks
from semidp.verify.cli import main
from semidp.verify.load import loads
from semidp.verify.release_pool import ReleasePool, Task
from semidp.verify.run_options import RunOptions
from semidp.verify.runner import audit
from semidp.verify.threshold_audit import Statistic, batch_split, round_sizes, spending
from tests.planted_bugs import spec_text


def _section(function: str, *, draws: int, extra: str = "", time_limit: float = 60.0) -> dict[str, object]:
    text = spec_text(function, draws=draws, seed=1)
    if extra:
        text = text.replace("[claim]", extra + "\n[claim]")
    rep = audit(loads(text), options=RunOptions(allow_code=True), budget=Budget.of(time_limit)).report
    sec: dict[str, object] = rep["audit_lower_bound"]
    return sec


def test_round_sizes_and_spending_sum_to_the_error_budget() -> None:
    sizes = round_sizes(1_000_000)
    assert sizes == [10_000, 40_000, 160_000, 640_000, 1_000_000]
    alphas = spending(0.05, sizes)
    assert alphas == pytest.approx([0.0005, 0.0015, 0.006, 0.024, 0.018])
    assert sum(alphas) <= 0.05  # Bonferroni over the looks: never more than 1 - confidence in all
    assert round_sizes(3_000) == [3_000] and spending(0.05, [3_000]) == [math.nextafter(0.05, 0)]
    assert [batch_split(b, 0.5) for b in (1, 2, 3, 10_000)] == [0, 1, 1, 5_000]


def test_per_call_bug_refuted_in_the_first_rounds_of_a_million_draws() -> None:
    sec = _section("gaussian_20pct_small_loop", draws=1_000_000)
    assert sec["refuted"] is True and sec["stop"] == "refuted"
    rounds = sec["rounds"]
    assert isinstance(rounds, list) and 1 <= len(rounds) <= 2 and rounds[-1]["refuted"] is True
    assert rounds[0]["alpha"] == pytest.approx(0.05 * 10_000 / 1_000_000)  # the first look spends 1% of the error
    assert all(p["stop"] == "refuted" and max(p["draws"]) <= 40_000 for p in sec["pairs"])  # type: ignore[attr-defined]
    assert sec["spending"]["planned_per_side"][-1] == 1_000_000  # type: ignore[index]


def test_correct_twin_runs_to_its_samples_with_rounds_and_a_lower_bound() -> None:
    sec = _section("gaussian_exact", draws=50_000)
    assert sec["refuted"] is False and sec["stop"] == "samples"
    assert [r["planned_per_side"] for r in sec["rounds"]] == [10_000, 40_000, 50_000]  # type: ignore[attr-defined]
    assert sum(r["alpha"] for r in sec["rounds"]) <= 1 - 0.95  # type: ignore[attr-defined]
    assert all(p["draws"] == [50_000, 50_000] and p["stop"] == "samples" for p in sec["pairs"])  # type: ignore[attr-defined]
    row = sec["epsilon_delta"][0]  # type: ignore[index]
    assert 0 < row["epsilon_lower"] < row["epsilon_upper"]


def test_per_call_twin_stops_at_the_budget_and_still_reports(tmp_path: Path) -> None:
    t = time.monotonic()
    sec = _section("gaussian_loop_only", draws=1_000_000, time_limit=12.0)
    assert time.monotonic() - t < 30  # generous: the budget is 12 s; the draws stop before it
    assert sec["refuted"] is False and sec["stop"] == "budget"
    drawn = sec["draws"]["drawn_per_side"]  # type: ignore[index]
    assert 10_000 <= drawn < 1_000_000 and sec["tradeoff_points"]
    assert all(p["stop"] == "budget" for p in sec["pairs"])  # type: ignore[attr-defined]
    assert sec["epsilon_delta"][0]["epsilon_lower"] > 0  # type: ignore[index]


def test_draws_do_not_depend_on_the_number_of_processes() -> None:
    def points(processes: int) -> object:
        sec = _section("gaussian_loop_only", draws=1_200, extra=f"processes = {processes}\nbatch = 250", time_limit=60)
        assert sec["stop"] == "samples" and sec["pairs"][0]["draws"] == [1_200, 1_200]  # type: ignore[index]
        return sec["tradeoff_points"], sec["epsilon_delta"], sec["candidates"]

    one = points(1)
    assert one == points(3)
    assert one != _section_seed2()  # the comparison can fail: another seed gives other points


def _section_seed2() -> object:
    text = spec_text("gaussian_loop_only", draws=1_200, seed=2).replace("[claim]", "batch = 250\n[claim]")
    sec = audit(loads(text), options=RunOptions(allow_code=True)).report["audit_lower_bound"]
    return sec["tradeoff_points"], sec["epsilon_delta"], sec["candidates"]


def test_the_last_look_is_budgeted_so_the_audit_ends_by_its_own_budget(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A look whose cost grows with the draws (1 s per 5,000 selection rows: 1, 4, 16, 64 s at rounds 1-4): the
    third round's look would end past the hard stop (20 s x 1.1 + 1), so the draws stop after the second and
    the audit ends with its own report (exit 3, ``budget``), its second look measured, not at the hard stop."""
    real = audit_looks.select

    def slow(pair: int, stats: object, sel_x: np.ndarray, *args: object, **kw: object) -> object:
        time.sleep(len(sel_x) / 5_000)
        return real(pair, stats, sel_x, *args, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(audit_looks, "select", slow)
    (tmp_path / "s.toml").write_text(spec_text("gaussian_exact", draws=1_000_000, seed=1, max_pairs=1))
    code = main(["audit", "--allow-code", "--json", "--time-limit", "20", str(tmp_path / "s.toml")])
    out = capsys.readouterr()
    assert code == 3 and "stopped after" not in out.out + out.err  # not the supervisor's hard stop
    sec = json.loads(out.out)["audit_lower_bound"]
    assert sec["stop"] == "budget" and sec["refuted"] is False
    # Unloaded: rounds 1 and 2 measured, round 3 never drawn (its look would overrun). A loaded machine may stop
    # a round earlier; round 3's 160,000 draws per side are never all drawn.
    assert 1 <= len(sec["rounds"]) <= 3 and sec["draws"]["drawn_per_side"] < 160_000
    assert sec["rounds"][0]["measured"] is True and sec["tradeoff_points"]


def test_a_look_past_its_deadline_is_given_up(monkeypatch: pytest.MonkeyPatch) -> None:
    """The look checks the clock between its steps: past its deadline it raises, and the audit keeps the last look."""
    drawn = [audit_looks.Drawn.empty()]
    rng = np.random.default_rng(0)
    drawn[0].add(0, rng.standard_normal((400, 2)), 0.5)
    drawn[0].add(1, rng.standard_normal((400, 2)) + 1, 0.5)
    stats = [[Statistic("first", lambda y: y[:, 0])]]
    got = audit_looks.look(drawn, stats, lambda a: 1 - a, 1, 0.05, 2, budget=Budget.of(600))
    assert len(got.measured) == 1 and got.measured[0].candidate.statistic == "first"
    with pytest.raises(audit_looks.OutOfTime):
        audit_looks.look(drawn, stats, lambda a: 1 - a, 1, 0.05, 2, budget=Budget.until(time.monotonic() - 1))
    assert audit_looks.look_cost(None, 10**6) == 0 and audit_looks.look_cost(1e-6, 10**6) == 2.0


# ------------------------------------------------------------------------------------------- hostile functions


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except FileNotFoundError:
        return False


HEADER = "import os, sys, time\nimport numpy as np\nfrom tests.planted_bugs import gaussian_loop_only as G\n"


def _hostile(
    tmp_path: Path, body: str, *, time_limit: float = 20.0, draws: int = 400, extra: str = ""
) -> tuple[int, str, float]:
    (tmp_path / "f.py").write_text(
        "import os, sys, time\nimport numpy as np\nfrom tests.planted_bugs import gaussian_loop_only as G\nPIDS = "
        + repr(str(tmp_path / "pids"))
        + "\n"
        + body
    )
    text = spec_text("x", draws=draws, max_pairs=1).replace('"tests.planted_bugs:x"', '"f.py:f"')
    text = text.replace("[claim]", extra + "[claim]")
    (tmp_path / "s.toml").write_text(text)
    t = time.monotonic()
    code = main(["audit", "--allow-code", "--json", "--time-limit", str(time_limit), str(tmp_path / "s.toml")])
    return code, "", time.monotonic() - t


def _pids(tmp_path: Path) -> list[int]:
    p = tmp_path / "pids"
    return [int(x) for x in p.read_text().split()] if p.exists() else []


def test_a_function_drawing_from_numpys_global_generator_gets_independent_batches(tmp_path: Path) -> None:
    """Forked workers share the parent's global generator state: without seeding it per batch, the 2 workers
    repeated each other's batches (350 distinct rows of 400)."""
    (tmp_path / "g.py").write_text(
        "import numpy as np\ndef f(h, rng):\n    return h + np.random.standard_normal(len(h))\n"
    )
    (tmp_path / "s.toml").write_text("")

    def rows() -> np.ndarray:
        pool = ReleasePool("g.py:f", str(tmp_path / "s.toml"), 1, 2, memory_limit=None)
        pool.start()
        try:
            got = pool.run([Task((0, s, j), (0,) * 9, 50) for j in range(4) for s in (0, 1)], Budget.of(120))
        finally:
            pool.close()
        return np.concatenate([got.done[i] for i in sorted(got.done)])

    first = rows()
    assert first.shape == (400, 9) and len(np.unique(first, axis=0)) == 400
    assert np.array_equal(first, rows())  # and reproducible by the seed


@pytest.mark.parametrize(("rng", "reproducible"), [("rng", True), ("np.random.default_rng()", False)])
def test_the_report_says_whether_seed_reproduces_the_draws(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], rng: str, reproducible: bool
) -> None:
    """The first batch is drawn twice from its stream: a function drawing from the OS's entropy (as OpenDP does)
    gives other releases the second time, so the report says --seed does not reproduce its draws."""
    code, _, _ = _hostile(tmp_path, f"def f(h, rng):\n    return G(h, {rng})\n", draws=400, extra="batch = 100\n")
    sec = json.loads(capsys.readouterr().out)["audit_lower_bound"]
    assert code == 3 and sec["reproducible"] is reproducible
    assert ("does not reproduce" in sec["reproducibility"]) is not reproducible


def test_raising_function_is_named_with_its_exception(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, _ = _hostile(tmp_path, "def f(h, rng):\n    return 1 / 0\n")
    err = capsys.readouterr().err
    assert code == 2
    assert "f.py:f" in err and "ZeroDivisionError" in err and "division by zero" in err and "f.py:6" in err
    assert "internal error" not in err and "Traceback" not in err


def test_function_that_cannot_be_imported_is_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, _ = _hostile(tmp_path, "raise RuntimeError('import-time boom')\ndef f(h, rng):\n    return h\n")
    err = capsys.readouterr().err
    assert code == 2 and "f.py:f" in err and "import-time boom" in err and "internal error" not in err


def test_wrong_dtype_and_dead_worker_are_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, _ = _hostile(tmp_path, "def f(h, rng):\n    return np.array(['a'] * 9)\n")
    err = capsys.readouterr().err
    assert code == 2 and "dtype" in err and "f.py:f" in err
    code, _, _ = _hostile(tmp_path, "def f(h, rng):\n    os._exit(7)\n")
    err = capsys.readouterr().err
    assert code == 2 and "exit code 7" in err and "f.py:f" in err


def test_hanging_function_is_inconclusive_within_the_budget(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    body = "def f(h, rng):\n    open(PIDS, 'a').write(f'{os.getpid()}\\n')\n    time.sleep(1000)\n"
    code, _, secs = _hostile(tmp_path, body, time_limit=6.0)
    out = capsys.readouterr().out
    assert code == 3 and secs < 6.0 * 1.1 + 1  # ended by the audit itself, before the supervisor's hard stop
    rep = json.loads(out)
    sec = rep["audit_lower_bound"]
    assert sec["stop"] == "budget" and sec["pairs"][0]["draws"] == [0, 0] and sec["tradeoff_points"] == []
    pids = _pids(tmp_path)
    assert pids and not any(_alive(p) for p in pids)


def test_forking_function_leaves_no_process_behind(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    body = (
        "FORKED = []\n"
        "def f(h, rng):\n"
        "    if not FORKED:\n"
        "        FORKED.append(1)\n"
        "        if os.fork() == 0:\n"  # a copy that lingers ...
        "            open(PIDS, 'a').write(f'{os.getpid()}\\n')\n"
        "            time.sleep(1000)\n"
        "        if os.fork() == 0:\n"  # ... and one that returns into the worker's loop
        "            open(PIDS, 'a').write(f'{os.getpid()}\\n')\n"
        "    return G(h, rng)\n"
    )
    code, _, _ = _hostile(tmp_path, body)
    rep = json.loads(capsys.readouterr().out)
    assert code == 3 and rep["audit_lower_bound"]["stop"] == "samples"
    assert rep["audit_lower_bound"]["pairs"][0]["draws"] == [400, 400]  # each release answered once
    pids = _pids(tmp_path)
    assert len(pids) >= 2
    deadline = time.monotonic() + 5
    while any(_alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not any(_alive(p) for p in pids)


def test_function_allocating_without_bound_is_inconclusive(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    body = "def f(h, rng):\n    return np.ones(10**11)\n"  # 800 GB: over the workers' address-space limit
    code, _, _ = _hostile(tmp_path, body)
    rep = json.loads(capsys.readouterr().out)
    assert code == 3 and rep["audit_lower_bound"]["stop"] == "memory"
    assert "memory" in next(c["detail"] for c in rep["checks"] if c["name"] == "statistical-audit")


def test_printing_function_does_not_corrupt_the_draws(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    body = "def f(h, rng):\n    print('hello'); os.write(1, b'x' * 64)\n    return G(h, rng)\n"
    code, _, _ = _hostile(tmp_path, body, draws=50)
    out = capsys.readouterr().out
    assert code == 3 and json.loads(out)["audit_lower_bound"]["pairs"][0]["draws"] == [50, 50]


@pytest.mark.skipif(not hasattr(os, "fork"), reason="POSIX only")
def test_no_fork_fallback_spawns_script_workers(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SEMIDP_NO_FORK", "1")
    sec = _section("gaussian_loop_only", draws=300, extra="processes = 2", time_limit=60)
    monkeypatch.delenv("SEMIDP_NO_FORK")
    assert sec["stop"] == "samples" and sec["pairs"][0]["draws"] == [300, 300]  # type: ignore[index]
    same = _section("gaussian_loop_only", draws=300, extra="processes = 2", time_limit=60)
    assert same["tradeoff_points"] == sec["tradeoff_points"]


def test_a_stalled_worker_is_replaced_and_its_batch_run_again(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    calls = "CALLS = []\n"
    stall = (
        "def f(h, rng):\n"
        "    CALLS.append(1)\n"
        "    flag = PIDS + '.stalled'\n"
        "    if len(CALLS) == 250 and not os.path.exists(flag):\n"  # once, in one worker, mid-run
        "        open(flag, 'w').close()\n"
        "        time.sleep(1000)\n"
        "    return G(h, rng)\n"
    )
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    extra = "batch = 100\n"
    code, _, _ = _hostile(tmp_path / "a", calls + stall, draws=1_200, extra=extra)
    stalled = json.loads(capsys.readouterr().out)["audit_lower_bound"]
    assert (tmp_path / "a" / "pids.stalled").exists()  # the stall happened ...
    assert code == 3 and stalled["stop"] == "samples" and stalled["pairs"][0]["draws"] == [1_200, 1_200]
    code, _, _ = _hostile(tmp_path / "b", "def f(h, rng):\n    return G(h, rng)\n", draws=1_200, extra=extra)
    plain = json.loads(capsys.readouterr().out)["audit_lower_bound"]
    assert stalled["tradeoff_points"] == plain["tradeoff_points"]  # ... and the batch was drawn again, identically
