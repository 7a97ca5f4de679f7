"""Mutation testing of the modules that decide (issue Step 16): a small single-line AST mutation driver.

Each mutant changes one node of one module (flip or shift a comparison, swap an up/down rounding call or
an upper/lower name, swap min/max, floor/ceil and +inf/-inf, drop a term of a sum, swap + and -, move a
numeric constant by one, flip a boolean, swap and/or, drop a unary minus or a ``not``). Mutants are applied
one at a time to a private copy of the work tree; the module's targeted fast tests (:data:`TARGETS`) are run
with a per-mutant timeout, and a mutant is *killed* when they fail (or time out), *survived* when they pass.
Scores are printed per module; ``--out`` writes every survivor (module, line, mutation) as JSON.

Why our own driver and not mutmut 3 (installed in the dev venv) or cosmic-ray: mutmut 3 starts every run with a
clean run and a stats run of the whole test suite (tens of minutes on this shared 2-core machine) before the first
mutant, picks tests by coverage rather than by a map we choose, and works on a copy of ``paths_to_mutate`` -- our
package ``semidp/`` is symlinks to the top-level folders, which its copying would have to follow (not tried here).
cosmic-ray needs a session database and a config per module and is not installed. The operators here are the
ones that change a privacy result (directed rounding, bracket ends, error terms); the test map keeps one mutant
to seconds (the package is imported once and each mutant is judged in a forked child); the run needs nothing but
the repository.

Run (from the repository root)::

    python benchmarks/mutation.py                     # every module in TARGETS, 1 worker
    python benchmarks/mutation.py accountant/core/directed.py --jobs 2 --timeout 120
    python benchmarks/mutation.py --list accountant/profiles/gaussian.py      # the mutants only, nothing run
    python benchmarks/mutation.py accountant/profiles/gaussian.py --lines 100-180 --out /tmp/survivors.json
    python benchmarks/mutation.py accountant/pld/parts.py --sample 300 --seed 1   # a random 300 of its mutants

Equivalent survivors (mutants that cannot change any result) are listed with their reasons in
``benchmarks/mutation-equivalents.md``; a mutant listed there is reported as ``equivalent`` and left out of
the score's denominator. The score is killed / (killed + survived).
"""

from __future__ import annotations

import argparse
import ast
import copy
import gc
import gzip
import hashlib
import importlib.util
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import deque
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

#: Module (path from the repository root) -> the fast tests that guard it (files or node ids, run with -x).
#: The module's own doctests run too. Keep each selection under about a minute on a loaded machine.
TARGETS: dict[str, list[str]] = {
    "accountant/core/directed.py": ["tests/bites/test_directed_bites.py"],
    "accountant/profiles/gaussian.py": ["tests/bites/test_gaussian_bites.py"],
    "accountant/guarantees/claim_certificate.py": ["tests/bites/test_claim_bites.py"],
    "verify/claims.py": ["tests/bites/test_claim_bites.py", "tests/test_claims_matrix.py"],
    "accountant/guarantees/conversions.py": [
        "tests/bites/test_conversion_bites.py",
        "tests/test_conversions.py",
        "tests/test_conversion_edges.py",
    ],
    "accountant/guarantees/conversion_routes.py": [
        "tests/bites/test_conversion_bites.py",
        "tests/test_certify.py",
        "tests/test_conversions.py",
    ],
    "accountant/pld/parts.py": ["tests/bites/test_pld_parts_bites.py", "tests/bites/test_pld_bites.py"],
    "accountant/pld/engine.py": [
        "tests/bites/test_pld_engine_bites.py",
        "tests/bites/test_pld_bites.py",
        "tests/test_pld_engine.py",
    ],
    "accountant/pld/grid.py": ["tests/bites/test_pld_compose_bites.py", "tests/test_pld.py"],
    "accountant/pld/refine.py": ["tests/bites/test_pld_refine_bites.py", "tests/test_pld_refine_claims.py"],
    "accountant/pld/closed_forms.py": [
        "tests/bites/test_pld_closed_forms_bites.py",
        "tests/bites/test_pld_engine_bites.py",
        "tests/bites/test_pld_parts_bites.py",
    ],
    "mechanisms/projection_bias.py": ["tests/bites/test_projection_bias_bites.py"],
    "accountant/workloads/accounting.py": ["tests/bites/test_workload_bites.py"],
    "verify/threshold_audit.py": ["tests/bites/test_threshold_audit_bites.py"],
    "verify/supervisor.py": ["tests/bites/test_supervisor_bites.py"],
    "verify/regression.py": ["tests/bites/test_regression_bites.py"],
}

#: Identifier swaps: a Name or an attribute with one of these names becomes its partner.
NAME_SWAPS: dict[str, str] = {}
for _a, _b in [
    ("up", "down"),
    ("up_exact", "down_exact"),
    ("sqrt_up", "sqrt_down"),
    ("pad_up", "pad_down"),
    ("min", "max"),
    ("floor", "ceil"),
    ("upper", "lower"),
    ("hi", "lo"),
    ("ceil_div", "floor_div"),
]:
    NAME_SWAPS[_a] = _b
    NAME_SWAPS[_b] = _a
#: Identifiers that contain one of these parts are swapped part-wise (``eps_upper`` <-> ``eps_lower``).
PART_SWAPS = [("_up", "_down"), ("upper", "lower"), ("_hi", "_lo")]

COMPARE_SWAPS: dict[type[ast.cmpop], list[type[ast.cmpop]]] = {
    ast.Lt: [ast.LtE, ast.Gt],
    ast.LtE: [ast.Lt, ast.GtE],
    ast.Gt: [ast.GtE, ast.Lt],
    ast.GtE: [ast.Gt, ast.LtE],
    ast.Eq: [ast.NotEq],
    ast.NotEq: [ast.Eq],
    ast.Is: [ast.IsNot],
    ast.IsNot: [ast.Is],
    ast.In: [ast.NotIn],
    ast.NotIn: [ast.In],
}
BINOP_SWAPS: dict[type[ast.operator], type[ast.operator]] = {
    ast.Add: ast.Sub,
    ast.Sub: ast.Add,
    ast.Mult: ast.Div,
    ast.Div: ast.Mult,
    ast.FloorDiv: ast.Div,
}

EQUIVALENTS_FILE = ROOT / "benchmarks" / "mutation-equivalents.md"


@dataclass(frozen=True)
class Mutant:
    """One single-node mutation: ``index`` is the node's position in ``ast.walk`` order of the parsed module."""

    module: str
    index: int
    variant: int
    line: int
    col: int
    description: str
    #: 0 for the first mutant (in ``ast.walk`` order: outer before inner) with its ``line:col:description``,
    #: 1, 2, ... for same-shaped nested mutants on one line (``a + b + c``: both sums start at ``a``'s column).
    occurrence: int = 0
    #: Lines whose execution (by a test) the mutant needs to change anything: its statement's first line to the
    #: node's last line; empty when the node runs at import time (module or class level, a def's defaults or
    #: decorators), where every target test runs.
    trace_lines: tuple[int, ...] = ()

    @property
    def key(self) -> str:
        """A stable name: ``module:line:column:description``, with ``#2``, ``#3`` ... appended for the second,
        third ... same-shaped nested mutant on one line (used by the equivalents list)."""
        return _key(self.module, self.line, self.col, self.description, self.occurrence)


def _key(module: str, line: int, col: int, description: str, occurrence: int = 0) -> str:
    base = f"{module}:{line}:{col}:{description}"
    return base if occurrence == 0 else f"{base}#{occurrence + 1}"


def _skipped_nodes(tree: ast.Module) -> set[int]:
    """ids of nodes that are not mutated: docstrings, annotations, raise statements' messages, logging."""
    skip: set[int] = set()

    def mark(node: ast.AST | None) -> None:
        if node is not None:
            skip.update(id(n) for n in ast.walk(node))

    for node in ast.walk(tree):
        if isinstance(node, ast.arg):
            mark(node.annotation)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            mark(node.returns)
        elif isinstance(node, ast.AnnAssign):
            mark(node.annotation)
        elif isinstance(node, ast.Raise):
            mark(node.exc)  # the message; the condition that raises is mutated where it is tested
        elif isinstance(node, ast.JoinedStr):
            mark(node)
        elif isinstance(node, ast.Assert):
            mark(node.msg)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Module)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                mark(body[0])
    return skip


def _swap_name(name: str) -> str | None:
    if name in NAME_SWAPS:
        return NAME_SWAPS[name]
    for a, b in PART_SWAPS:
        if a in name:
            return name.replace(a, b)
        if b in name:
            return name.replace(b, a)
    return None


def _variants(node: ast.AST, defined: set[str]) -> Iterator[tuple[str, ast.AST]]:
    """(description, replacement node) for every mutation of ``node`` (the node itself is not changed)."""
    if isinstance(node, ast.Compare):
        for i, op in enumerate(node.ops):
            for new in COMPARE_SWAPS.get(type(op), []):
                m = copy.deepcopy(node)
                m.ops[i] = new()
                yield f"{type(op).__name__}->{new.__name__}", m
    elif isinstance(node, ast.BinOp):
        new_op = BINOP_SWAPS.get(type(node.op))
        if new_op is not None:
            m = copy.deepcopy(node)
            m.op = new_op()
            yield f"{type(node.op).__name__}->{new_op.__name__}", m
        if isinstance(node.op, (ast.Add, ast.Sub)):
            yield f"drop {type(node.op).__name__} right term", copy.deepcopy(node.left)
            if isinstance(node.op, ast.Add):
                yield "drop Add left term", copy.deepcopy(node.right)
    elif isinstance(node, ast.BoolOp):
        m = copy.deepcopy(node)
        m.op = ast.Or() if isinstance(node.op, ast.And) else ast.And()
        yield f"{type(node.op).__name__}->{type(m.op).__name__}", m
    elif isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.Not)):
        if isinstance(node.op, ast.USub) and isinstance(node.operand, ast.Constant):
            pass  # a negative literal: the constant rule moves it
        else:
            yield f"drop {type(node.op).__name__}", copy.deepcopy(node.operand)
    elif isinstance(node, ast.Constant):
        if isinstance(node.value, bool):
            yield f"{node.value}->{not node.value}", ast.Constant(not node.value)
        elif isinstance(node.value, (int, float)) and not isinstance(node.value, complex):
            yield f"{node.value!r}->{node.value + 1!r}", ast.Constant(node.value + 1)
            if node.value != 0:
                yield f"{node.value!r}->{node.value - 1!r}", ast.Constant(node.value - 1)
    elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
        new = _swap_name(node.id)
        if new is not None and new in defined:
            yield f"{node.id}->{new}", ast.Name(new, ast.Load())
    elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load):
        if node.attr == "inf":
            yield "inf->-inf", ast.UnaryOp(ast.USub(), copy.deepcopy(node))
        new = _swap_name(node.attr)
        if new is not None and (new in defined or node.attr in NAME_SWAPS):
            m = copy.deepcopy(node)
            m.attr = new
            yield f".{node.attr}->.{new}", m


def _defined_names(tree: ast.Module) -> set[str]:
    """Names bound anywhere in the module (plus builtins and attribute names used), for name swaps."""
    names = set(dir(__builtins__)) if not isinstance(__builtins__, dict) else set(__builtins__)
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            names.add(node.id)
        elif isinstance(node, ast.Attribute):
            names.add(node.attr)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.arg):
            names.add(node.arg)
        elif isinstance(node, ast.alias):
            names.add((node.asname or node.name).split(".")[0])
    return names


def _no_mutate_lines(source: str) -> set[int]:
    return {i for i, line in enumerate(source.splitlines(), 1) if "pragma: no mutate" in line}


def _runtime_lines(tree: ast.Module) -> dict[int, tuple[int, ...]]:
    """id(node) -> the lines a test must execute for a mutation of the node to matter, for every node evaluated
    when a function (or lambda) runs: the enclosing statement's first line to the node's last line (a superset of
    the lines a line tracer reports for the node's code). Nodes evaluated at import time (module and class
    bodies, a def's decorators, defaults and annotations) are left out: a test never "executes" them."""
    out: dict[int, tuple[int, ...]] = {}

    def visit(node: ast.AST, stmt: ast.stmt | None, runtime: bool) -> None:
        if isinstance(node, ast.stmt):
            stmt = node
        if runtime and stmt is not None and hasattr(node, "lineno"):
            end = getattr(node, "end_lineno", None) or node.lineno  # type: ignore[attr-defined]
            out[id(node)] = tuple(range(stmt.lineno, max(end, stmt.lineno) + 1))
        for name, value in ast.iter_fields(node):
            inner = runtime
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and name == "body":
                inner = True
            elif isinstance(node, ast.Lambda) and name == "body":
                inner = True
            for child in value if isinstance(value, list) else [value]:
                if isinstance(child, ast.AST):
                    visit(child, stmt, inner)

    visit(tree, None, False)
    return out


def mutants_of(module: str) -> list[Mutant]:
    """Every mutant of ``module`` (a path from the repository root), in a stable order."""
    source = (ROOT / module).read_text()
    tree = ast.parse(source)
    skip = _skipped_nodes(tree)
    defined = _defined_names(tree)
    quiet = _no_mutate_lines(source)
    runtime = _runtime_lines(tree)
    seen: dict[str, int] = {}
    out = []
    for index, node in enumerate(ast.walk(tree)):
        if id(node) in skip or getattr(node, "lineno", None) in quiet:
            continue
        for variant, (description, _) in enumerate(_variants(node, defined)):
            line, col = node.lineno, node.col_offset
            base = _key(module, line, col, description)
            occurrence = seen.get(base, 0)
            seen[base] = occurrence + 1
            out.append(Mutant(module, index, variant, line, col, description, occurrence, runtime.get(id(node), ())))
    return out


class _Replace(ast.NodeTransformer):
    def __init__(self, target: ast.AST, new: ast.AST) -> None:
        self.target, self.new = target, new

    def visit(self, node: ast.AST) -> ast.AST:
        if node is self.target:
            return ast.copy_location(self.new, node)
        return super().visit(node)


def mutated_source(mutant: Mutant) -> str:
    """The module's source with ``mutant`` applied (re-printed by ``ast.unparse``; comments are lost)."""
    tree = ast.parse((ROOT / mutant.module).read_text())
    defined = _defined_names(tree)
    target = list(ast.walk(tree))[mutant.index]
    _, new = list(_variants(target, defined))[mutant.variant]
    tree = _Replace(target, new).visit(tree)
    ast.fix_missing_locations(tree)
    return ast.unparse(tree)


def _load_equivalents() -> set[str]:
    """Keys ``module:line:column:description`` listed in the equivalents file (lines starting with ``- `module:``)."""
    if not EQUIVALENTS_FILE.exists():
        return set()
    keys = set()
    for line in EQUIVALENTS_FILE.read_text().splitlines():
        m = re.match(r"- `([^`]+:\d+:\d+:[^`]+)`", line.strip())
        if m:
            keys.add(m.group(1))
    return keys


def _scratch_copy(dest: Path) -> None:
    ignore = shutil.ignore_patterns(".git", "__pycache__", "*.pyc", ".mypy_cache", ".ruff_cache", "mutants")
    shutil.copytree(ROOT, dest, symlinks=True, ignore=ignore)


def _run_tests(workdir: Path, module: str, timeout: float, tests: list[str] | None = None) -> tuple[str, float]:
    """Run the module's targets (and its doctests) in ``workdir``: 'pass', 'fail' or 'timeout', and seconds."""
    doctest_path = "semidp/" + module
    cmd = [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:randomly", "-m", "not slow", "--no-header"]
    cmd += [doctest_path, *(tests or TARGETS[module])]
    env = dict(os.environ, PYTHONPATH=str(workdir), PYTHONDONTWRITEBYTECODE="1")
    start = time.monotonic()
    try:
        proc = subprocess.run(cmd, cwd=workdir, env=env, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return "timeout", time.monotonic() - start
    seconds = time.monotonic() - start
    if proc.returncode == 0:
        return "pass", seconds
    if proc.returncode in (1, 3):  # tests failed, or an internal error (e.g. the mutant does not import)
        return "fail", seconds
    raise RuntimeError(f"pytest exited {proc.returncode} in {workdir} for {module}:\n{proc.stdout[-2000:]}")


def _judge(workdir: Path, mutant: Mutant, timeout: float, tests: list[str] | None) -> tuple[Mutant, str, float]:
    path = workdir / mutant.module
    original = path.read_text()
    try:
        path.write_text(mutated_source(mutant))
        outcome, seconds = _run_tests(workdir, mutant.module, timeout, tests)
    finally:
        path.write_text(original)
    return mutant, ("survived" if outcome == "pass" else "killed"), seconds


def _module_name(module: str) -> str:
    return "semidp." + module[:-3].replace("/", ".")


@dataclass
class _Child:
    """A forked child judging one mutant (:func:`_fork_start`)."""

    mutant: Mutant
    pid: int
    start: float
    deadline: float


def _fork_judge(mutant: Mutant, timeout: float, paths: list[str]) -> tuple[Mutant, str, float]:
    """Judge ``mutant`` in a forked child of this (already importing) process: the mutated source is executed
    into the live module, every other module's binding of a changed name is pointed at the new object, and
    pytest runs ``paths`` (files or node ids) in the child. Saves the interpreter start and the package import
    (most of a mutant's time)."""
    child = _fork_start(mutant, timeout, paths)
    while (outcome := _fork_poll(child)) is None:
        time.sleep(0.05)
    return mutant, outcome, time.monotonic() - child.start


def _fork_start(mutant: Mutant, timeout: float, paths: list[str]) -> _Child:
    """Fork the child that judges ``mutant`` (see :func:`_fork_judge`) and return at once."""
    start = time.monotonic()
    source = mutated_source(mutant)
    pid = os.fork()
    if pid == 0:  # the child: never returns
        code = 1
        try:
            import pytest

            name = _module_name(mutant.module)
            mod = sys.modules[name]
            old = dict(mod.__dict__)
            exec(compile(source, str(ROOT / mutant.module), "exec"), mod.__dict__)
            for other in list(sys.modules.values()):
                d = getattr(other, "__dict__", None)
                if other is mod or not isinstance(d, dict):
                    continue
                for key, value in list(d.items()):
                    if key in old and value is old[key] and mod.__dict__.get(key) is not value:
                        d[key] = mod.__dict__[key]
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, 1)
            os.dup2(devnull, 2)
            code = int(pytest.main([*_PYTEST_ARGS, "--assert=plain", *paths]))
        except BaseException:
            code = 1
        finally:
            os._exit(code)
    return _Child(mutant, pid, start, start + timeout)


def _fork_poll(child: _Child) -> str | None:
    """``None`` while ``child`` runs; then ``"survived"`` (its tests passed) or ``"killed"`` (a test failed, the
    timeout passed -- the child is then killed, and the outcome is ``"timeout"``, which counts as killed -- or a
    signal ended it, e.g. the OOM killer on a mutant that bypassed a size check)."""
    done, status = os.waitpid(child.pid, os.WNOHANG)
    if not done:
        if time.monotonic() <= child.deadline:
            return None
        os.kill(child.pid, signal.SIGKILL)
        os.waitpid(child.pid, 0)
        return "timeout"
    code = os.waitstatus_to_exitcode(status)
    if code < 0:  # killed by a signal: the kernel's OOM killer on a mutant that bypassed a size check, a crash
        return "killed"
    if code not in (0, 1, 3):
        raise RuntimeError(f"pytest exited {code} on {child.mutant.key}")
    return "survived" if code == 0 else "killed"


#: Where coverage maps are cached, one JSON file per (module, tests, package sources) hash.
COVERAGE_CACHE = Path(tempfile.gettempdir()) / "semidp-mutation-coverage"
_PYTEST_ARGS = ["-x", "-q", "-p", "no:randomly", "-p", "no:cacheprovider", "-m", "not slow", "--no-header"]


@dataclass
class CoverageMap:
    """Which target tests execute which lines of one module, from one unmutated run under coverage with a
    context per test (coverage's ``switch_context``, set by a small pytest plugin around each test's call)."""

    #: Every test node id of the selection, in run order.
    tests: list[str]
    #: Node id -> seconds (setup + call + teardown) in the mapping run; the order of a mutant's tests.
    seconds: dict[str, float]
    #: Line -> node ids whose call phase executed it.
    lines: dict[int, list[str]]
    #: Lines executed outside any test's call phase (collection, fixture setup and teardown): a mutant there
    #: runs the whole selection, since a fixture's value reaches tests that never execute the line.
    everywhere: set[int]

    def select(self, mutant: Mutant) -> list[str] | None:
        """The tests to run for ``mutant``, fastest first; ``None`` for the whole selection (import-time code or
        a line run by a fixture or at collection), ``[]`` when no test executes the mutant's lines."""
        if not mutant.trace_lines or any(line in self.everywhere for line in mutant.trace_lines):
            return None
        hit = {t for line in mutant.trace_lines for t in self.lines.get(line, ())}
        order = {t: i for i, t in enumerate(self.tests)}
        return sorted(hit, key=lambda t: (self.seconds.get(t, 0.0), order.get(t, 0)))


def _selection_hash(module: str, paths: list[str]) -> str:
    """sha256 over the module, the selected test files (and conftest files) and every source of the package."""
    digest = hashlib.sha256()
    files = {ROOT / module, ROOT / "pyproject.toml", *(ROOT / "tests").rglob("conftest.py")}
    files |= {ROOT / p.split("::")[0] for p in paths}
    for top in ("accountant", "mechanisms", "verify", "semidp"):
        files |= set((ROOT / top).rglob("*.py"))
    digest.update(repr(paths).encode())
    for f in sorted(files):
        if f.is_file():
            digest.update(str(f.relative_to(ROOT)).encode() + b"\0" + f.read_bytes() + b"\0")
    return digest.hexdigest()[:24]


def _coverage_child(module: str, paths: list[str], out: Path) -> None:
    """In a forked child: run ``paths`` under coverage (the module's file only), a context per test; write the
    map as JSON to ``out`` and exit with pytest's code. Never returns."""
    code = 1
    try:
        import coverage
        import pytest

        real = os.path.realpath(str(sys.modules[_module_name(module)].__file__))
        cov = coverage.Coverage(data_file=None, include=[real], config_file=False)
        seconds: dict[str, float] = {}
        order: list[str] = []

        class Contexts:
            @pytest.hookimpl(hookwrapper=True)
            def pytest_runtest_setup(self, item: pytest.Item) -> Iterator[None]:
                cov.switch_context("setup|" + item.nodeid)
                yield

            @pytest.hookimpl(hookwrapper=True)
            def pytest_runtest_call(self, item: pytest.Item) -> Iterator[None]:
                cov.switch_context(item.nodeid)
                yield
                cov.switch_context("setup|" + item.nodeid)

            def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
                if report.nodeid not in seconds:
                    order.append(report.nodeid)
                seconds[report.nodeid] = seconds.get(report.nodeid, 0.0) + report.duration

        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        cov.start()
        try:
            code = int(pytest.main([*_PYTEST_ARGS, "--assert=plain", *paths], plugins=[Contexts()]))
        finally:
            cov.stop()
        data = cov.get_data()
        files = [f for f in data.measured_files() if os.path.realpath(f) == real]
        by_line = data.contexts_by_lineno(files[0]) if files else {}
        lines: dict[int, list[str]] = {}
        everywhere: list[int] = []
        for line, contexts in by_line.items():
            if any(c == "" or c.startswith("setup|") for c in contexts):
                everywhere.append(line)
            lines[line] = sorted(c for c in contexts if c and not c.startswith("setup|"))
        payload = {"tests": order, "seconds": seconds, "lines": lines, "everywhere": sorted(everywhere)}
        out.write_text(json.dumps(payload))
    except BaseException:
        import traceback

        traceback.print_exc()
        code = 1
    finally:
        os._exit(code)


def coverage_map(module: str, paths: list[str], timeout: float) -> tuple[CoverageMap | None, str]:
    """The coverage map of ``module`` under the test ``paths`` (cached under :data:`COVERAGE_CACHE` by
    :func:`_selection_hash`), built in a forked child so that this process's state (caches) stays unmutated-run
    free. Also the baseline check: ``(None, reason)`` when the unmutated tests do not pass."""
    COVERAGE_CACHE.mkdir(parents=True, exist_ok=True)
    cached = COVERAGE_CACHE / f"{_selection_hash(module, paths)}.json"
    how = f"cached in {cached}"
    if not cached.exists():
        start = time.monotonic()
        part = cached.with_suffix(f".{os.getpid()}.part")
        pid = os.fork()
        if pid == 0:
            _coverage_child(module, paths, part)
        deadline = start + timeout
        while True:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                break
            if time.monotonic() > deadline:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                return None, f"the unmutated tests under coverage took more than {timeout:.0f} s"
            time.sleep(0.05)
        code = os.waitstatus_to_exitcode(status)
        if code != 0 or not part.exists():
            part.unlink(missing_ok=True)
            return None, f"the targeted tests do not pass unmutated under coverage (exit {code})"
        part.replace(cached)
        how = f"baseline passes under coverage in {time.monotonic() - start:.1f} s; map cached in {cached}"
    raw = json.loads(cached.read_text())
    cmap = CoverageMap(
        tests=raw["tests"],
        seconds=raw["seconds"],
        lines={int(k): v for k, v in raw["lines"].items()},
        everywhere=set(raw["everywhere"]),
    )
    return cmap, how


def _parse_lines(text: str | None) -> tuple[int, int] | None:
    if text is None:
        return None
    lo, _, hi = text.partition("-")
    return int(lo), int(hi or lo)


def main(argv: list[str] | None = None) -> int:
    """Command line: see the module docstring. Exit 0 when every judged module reaches ``--target``."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("modules", nargs="*", help="paths from the repository root (default: every module in TARGETS)")
    ap.add_argument(
        "--jobs",
        type=int,
        default=1,
        help="parallel workers: forked children judged at once (with --isolated: copies of the tree)",
    )
    ap.add_argument(
        "--timeout",
        type=float,
        help="seconds per mutant (a timeout counts as killed; its row says timeout). Default: ten times the "
        "module's unmutated selection in its baseline run, at least 60 s (180 s with --isolated)",
    )
    ap.add_argument("--lines", help="only mutants on these lines, e.g. 100-180")
    ap.add_argument("--tests", nargs="+", help="run these tests instead of the module's TARGETS entry")
    ap.add_argument(
        "--isolated",
        action="store_true",
        help="judge each mutant in a fresh interpreter on a copy of the tree (slower; the default forks this "
        "process after importing the package once and swaps the mutated module in)",
    )
    ap.add_argument(
        "--rerun", help="judge again only the mutants that survived in this earlier --out file (after adding tests)"
    )
    ap.add_argument(
        "--skip-judged",
        nargs="+",
        default=[],
        metavar="OLD.json",
        help="leave out the mutants these earlier --out files judged (any outcome): a stopped sampled run goes on "
        "with the same --sample/--seed and --out to a new file",
    )
    ap.add_argument(
        "--sample",
        type=int,
        help="judge only this many mutants per module, drawn at random (seeded by --seed) when there are more",
    )
    ap.add_argument("--seed", type=int, default=0, help="seed of --sample's draw")
    ap.add_argument(
        "--no-coverage",
        action="store_true",
        help="run the module's whole selection for every mutant (the default runs only the tests that execute "
        "the mutant's lines, from a coverage map built once per module and cached)",
    )
    ap.add_argument(
        "--compare",
        action="store_true",
        help="judge every mutant both ways (coverage-targeted and whole selection): both outcomes, both times",
    )
    ap.add_argument(
        "--confirm-survivors",
        action="store_true",
        help="judge a mutant that survives its targeted tests again with the whole selection",
    )
    ap.add_argument(
        "--report",
        nargs="+",
        metavar="OUT.json",
        help="judge nothing: join these --out files (a later file's verdict on a mutant replaces an earlier one's, "
        "as after --rerun) and print the README's table against the current code and equivalents file, the "
        "mutants not judged yet and every survivor not listed as equivalent",
    )
    ap.add_argument("--list", action="store_true", help="print the mutants and stop")
    ap.add_argument("--out", help="write the results (every mutant's outcome) as JSON to this file")
    ap.add_argument("--target", type=float, default=95.0, help="score (percent) a module must reach")
    args = ap.parse_args(argv)
    modules = args.modules or list(TARGETS)
    for m in modules:
        if m not in TARGETS:
            ap.error(f"module {m!r} has no test map in TARGETS (known: {', '.join(TARGETS)})")
    lines = _parse_lines(args.lines)
    equivalents = _load_equivalents()
    if args.report:
        return report(modules, [Path(f) for f in args.report], equivalents, args.target)

    todo: list[Mutant] = []
    for m in modules:
        for mu in mutants_of(m):
            if lines is None or lines[0] <= mu.line <= lines[1]:
                todo.append(mu)
    if args.rerun:
        survived = {_row_key(r) for r in _read_results(Path(args.rerun)) if r["outcome"] == "survived"}
        todo = [mu for mu in todo if mu.key in survived]
    if args.sample is not None:
        rng = random.Random(args.seed)
        kept: list[Mutant] = []
        for m in modules:
            pool = [mu for mu in todo if mu.module == m and mu.key not in equivalents]
            kept += rng.sample(pool, min(args.sample, len(pool)))  # in random order: a stopped run's prefix is random
        todo = kept
        print(f"sampled {len(todo)} mutants (--sample {args.sample} per module, --seed {args.seed})", flush=True)
    if args.skip_judged:
        judged_before = {_row_key(r) for f in args.skip_judged for r in _read_results(Path(f))}
        todo = [mu for mu in todo if mu.key not in judged_before]
        print(f"{len(todo)} mutants left after --skip-judged", flush=True)
    if args.list:
        for mu in todo:
            print(mu.key + ("   [equivalent]" if mu.key in equivalents else ""))
        print(f"{len(todo)} mutants")
        return 0

    if not args.isolated:
        return _run_forked(args, modules, todo, equivalents)
    # a terminated run still removes its copies (the finally below); each pytest child ends with its timeout
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(3))
    scratch = Path(tempfile.mkdtemp(prefix="semidp-mutation-"))
    results: list[dict[str, object]] = []
    try:
        workdirs = []
        for j in range(max(1, args.jobs)):
            _scratch_copy(scratch / f"w{j}")
            workdirs.append(scratch / f"w{j}")
        for m in modules:  # the unmutated tree must pass, or every mutant would look killed
            outcome, seconds = _run_tests(workdirs[0], m, (args.timeout or 180.0) * 3, args.tests)
            if outcome != "pass":
                print(f"{m}: the targeted tests do not pass unmutated ({outcome}); fix them first", file=sys.stderr)
                return 2
            print(f"{m}: baseline passes in {seconds:.1f} s", flush=True)
        judged = [mu for mu in todo if mu.key not in equivalents]
        free = list(workdirs)

        def work(mu: Mutant) -> tuple[Mutant, str, float]:
            wd = free.pop()
            try:
                return _judge(wd, mu, args.timeout or 180.0, args.tests)
            finally:
                free.append(wd)

        with ThreadPoolExecutor(max_workers=len(workdirs)) as pool:
            for n, (mu, outcome, seconds) in enumerate(pool.map(work, judged), 1):
                results.append(_row(mu, outcome, seconds))
                if outcome == "survived":
                    print(f"[{n}/{len(judged)}] SURVIVED {mu.key}", flush=True)
                elif n % 25 == 0:
                    print(f"[{n}/{len(judged)}] ...", flush=True)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)

    return _summary(args, modules, todo, equivalents, results)


def _summary(
    args: argparse.Namespace,
    modules: list[str],
    todo: list[Mutant],
    equivalents: set[str],
    results: list[dict[str, object]],
) -> int:
    ok = True
    print("\nmodule                              killed  (timeout)  survived  equivalent  score")
    for m in modules:
        rows = [r for r in results if r["module"] == m]
        killed = sum(r["outcome"] == "killed" for r in rows)
        survived = sum(r["outcome"] == "survived" for r in rows)
        timeouts = sum(bool(r.get("timeout")) for r in rows)
        equiv = sum(mu.key in equivalents for mu in todo if mu.module == m)
        score = 100.0 * killed / max(1, killed + survived)
        ok &= score >= args.target
        print(f"{m:36s}{killed:7d}{timeouts:11d}{survived:10d}{equiv:12d}  {score:5.1f} %")
    if args.out:
        _write_results(Path(args.out), results)
    return 0 if ok else 1


def _auto_timeout(baseline: float) -> float:
    """The default seconds per mutant: ten times the module's whole unmutated selection (``baseline``, seconds of its
    baseline run: under coverage by default, which is itself slower than a mutant's run), at least 60 s. A mutant
    runs that selection or a subset of it, so a passing mutant has a tenfold margin for a busier machine; one that
    makes the tests ten times slower is a hang (a loop that no longer ends) and counts as killed."""
    return max(60.0, 10.0 * baseline)


def _write_results(path: Path, results: list[dict[str, object]]) -> None:
    """Write ``--out`` atomically (a temporary file in the same folder, then a rename): a run stopped while writing
    leaves the previous complete file, never a truncated one that ``--skip-judged`` or ``--report`` cannot read."""
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(results, indent=1))
    os.replace(tmp, path)


def _row_key(row: dict[str, object]) -> str:
    """The mutant key of an ``--out`` row."""
    return _key(
        str(row["module"]),
        int(str(row["line"])),
        int(str(row["col"])),
        str(row["description"]),
        int(str(row.get("occurrence", 0))),
    )


def _read_results(path: Path) -> list[dict[str, object]]:
    """The rows of an earlier ``--out`` file (gzipped when its name ends in ``.gz``), or a clear error naming it."""
    if path.suffix == ".py":
        raise SystemExit(f"{path}: a module, not an --out file (name the modules before --report/--skip-judged)")
    try:
        text = gzip.decompress(path.read_bytes()).decode() if path.suffix == ".gz" else path.read_text()
        rows = json.loads(text)
    except (OSError, ValueError) as exc:
        raise SystemExit(f"{path}: not a readable --out file of this script ({exc})") from None
    if not isinstance(rows, list) or not all(isinstance(r, dict) and "module" in r for r in rows):
        raise SystemExit(f"{path}: not an --out file of this script (a JSON list of rows with 'module')")
    return rows


def report(modules: list[str], files: list[Path], equivalents: set[str], target: float) -> int:
    """``--report``: the score table of ``modules`` from earlier ``--out`` files, judging nothing.

    A stopped run continued with ``--skip-judged``, or survivors judged again with ``--rerun`` after new tests,
    leave several files; a later file's verdict on a mutant replaces an earlier one's. Mutants are those of the
    current code: a verdict whose key names no current mutant is *stale* (the code moved since) and is left out,
    counted and printed, never scored. A mutant listed in the equivalents file counts as equivalent whatever its
    verdict. Prints a markdown table (the README's columns plus judged and not yet judged) and then every survivor
    counted against; returns 0 when every module is judged in full and reaches ``target``."""
    verdicts: dict[str, str] = {}
    for f in files:
        for r in _read_results(f):
            key = _row_key(r)
            verdicts[key] = "timeout" if r.get("timeout") else str(r["outcome"])
    current = {m: [mu.key for mu in mutants_of(m)] for m in modules}
    known = {k for keys in current.values() for k in keys}
    stale = sorted(k for k in verdicts if k not in known and k.split(":", 1)[0] in current)
    ok = True
    against: list[str] = []
    print("| module | mutants | judged | killed (by timeout) | equivalent | other survivors | not judged | score |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for m, keys in current.items():
        equiv = [k for k in keys if k in equivalents]
        rest = [k for k in keys if k not in equivalents]
        killed = sum(verdicts.get(k) in ("killed", "timeout") for k in rest)
        timeouts = sum(verdicts.get(k) == "timeout" for k in rest)
        survived = [k for k in rest if verdicts.get(k) == "survived"]
        unjudged = sum(k not in verdicts for k in rest)
        judged = sum(k in verdicts for k in keys)
        score = 100.0 * killed / max(1, killed + len(survived))
        ok &= score >= target and unjudged == 0
        against += survived
        print(
            f"| {m} | {len(keys)} | {judged} | {killed} ({timeouts}) | {len(equiv)} | {len(survived)} | {unjudged} "
            f"| {score:.1f} % |"
        )
    if stale:
        print(
            f"\n{len(stale)} verdicts name no current mutant (the code moved since they were judged): "
            + ", ".join(stale[:20])
            + (" ..." if len(stale) > 20 else "")
        )
    if against:
        print(f"\n{len(against)} survivors counted against the score:")
        for k in against:
            print(f"  {k}")
    return 0 if ok else 1


def _preload_pytest_plugins() -> None:
    """Import pytest and its installed plugins (entry points ``pytest11``) once, before any fork: our own plugin
    ``semidp.verify.pytest_plugin`` imports ``semidp.verify`` and with it most of the package, which each child
    otherwise imports again (about 2 s unloaded, 9 s on a loaded machine, per mutant). The children then see
    these modules with the mutated names rebound, as they see every module imported here."""
    from importlib.metadata import entry_points

    import pytest  # noqa: F401

    for ep in entry_points(group="pytest11"):
        try:
            ep.load()
        except Exception:  # a broken third-party plugin: pytest reports it in the run itself
            pass
    try:
        import hypothesis  # noqa: F401  (its plugin imports it at the end of every run: 0.6 s loaded)
    except ImportError:
        pass
    # every object so far is shared with the children and never garbage: pytest's gc.collect() at the end of
    # each run (twice, 0.75 s loaded) then skips them
    gc.collect()
    gc.freeze()


def _row(mu: Mutant, outcome: str, seconds: float, **extra: object) -> dict[str, object]:
    """One ``--out`` row; a ``"timeout"`` is recorded as killed with ``timeout: true``."""
    if outcome == "timeout":
        outcome, extra = "killed", {**extra, "timeout": True}
    row: dict[str, object] = {**asdict(mu), "outcome": outcome, "seconds": round(seconds, 1), **extra}
    del row["trace_lines"]
    return row


def _run_forked(args: argparse.Namespace, modules: list[str], todo: list[Mutant], equivalents: set[str]) -> int:
    """The default mode: import the package once, then judge each mutant in a forked child (one at a time).

    With coverage (the default) each module's targets run once under coverage (:func:`coverage_map`, also the
    baseline check) and a mutant runs only the tests that execute its lines, fastest first; a mutant no test
    executes is *survived* ("not covered") without a run. ``--no-coverage`` runs the whole selection for every
    mutant; ``--compare`` runs both and prints both outcomes and times; ``--confirm-survivors`` judges a
    targeted survivor again with the whole selection."""
    os.chdir(ROOT)
    sys.path.insert(0, str(ROOT))
    os.environ["PYTHONDONTWRITEBYTECODE"] = "1"
    if (not args.no_coverage or args.compare) and importlib.util.find_spec("coverage") is None:
        print(
            "coverage is not installed: the targeted test selection needs it (pip install -e '.[test,mutation]'), "
            "or run with --no-coverage (the whole selection for every mutant)",
            file=sys.stderr,
        )
        return 2
    for m in modules:
        __import__(_module_name(m))
    import semidp  # noqa: F401  (the whole package, as the tests import it)

    _preload_pytest_plugins()
    full: dict[str, list[str]] = {m: ["semidp/" + m, *(args.tests or TARGETS[m])] for m in modules}
    maps: dict[str, CoverageMap] = {}
    limit: dict[str, float] = {}  # seconds per mutant, per module
    for m in modules:  # the unmutated module must pass, or every mutant would look killed
        if args.no_coverage and not args.compare:
            start = time.monotonic()
            pid = os.fork()
            if pid == 0:
                import pytest

                devnull = os.open(os.devnull, os.O_WRONLY)
                os.dup2(devnull, 1)
                os._exit(int(pytest.main([*_PYTEST_ARGS, "--assert=plain", *full[m]])))
            code = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
            if code != 0:
                print(f"{m}: the targeted tests do not pass unmutated (exit {code}); fix them first", file=sys.stderr)
                return 2
            limit[m] = args.timeout or _auto_timeout(time.monotonic() - start)
            print(f"{m}: baseline passes in {time.monotonic() - start:.1f} s; {limit[m]:.0f} s a mutant", flush=True)
            continue
        cmap, how = coverage_map(m, full[m], (args.timeout or 200.0) * 3)
        if cmap is None:
            print(f"{m}: {how}; fix them first", file=sys.stderr)
            return 2
        maps[m] = cmap
        limit[m] = args.timeout or _auto_timeout(sum(cmap.seconds.values()))
        print(
            f"{m}: {how} ({len(cmap.tests)} tests, {len(cmap.lines)} lines executed; {limit[m]:.0f} s a mutant)",
            flush=True,
        )

    judged = [mu for mu in todo if mu.key not in equivalents]
    if args.jobs > 1 and not args.compare:
        return _summary(args, modules, todo, equivalents, _run_parallel(args, judged, maps, full, limit))
    results: list[dict[str, object]] = []
    totals = {"targeted": 0.0, "full": 0.0}
    mismatches = 0
    for n, mu in enumerate(judged, 1):
        cmap = maps.get(mu.module)
        selected = cmap.select(mu) if cmap is not None else None
        ran = "all" if selected is None else str(len(selected))
        if args.no_coverage and not args.compare:
            _, outcome, seconds = _fork_judge(mu, limit[mu.module], full[mu.module])
            row = _row(mu, outcome, seconds)
        elif selected == []:
            outcome, seconds, row = "survived", 0.0, _row(mu, "survived", 0.0, tests=0, note="not covered")
        else:
            _, outcome, seconds = _fork_judge(mu, limit[mu.module], selected or full[mu.module])
            row = _row(mu, outcome, seconds, tests=ran)
        if args.compare:
            _, old, old_seconds = _fork_judge(mu, limit[mu.module], full[mu.module])
            totals["targeted"] += seconds
            totals["full"] += old_seconds
            same = (old == "survived") == (outcome == "survived")
            mismatches += not same
            row.update(full_outcome=old, full_seconds=round(old_seconds, 1))
            print(
                f"[{n}/{len(judged)}] {mu.key}: targeted {outcome} ({ran} tests, {seconds:.1f} s)  "
                f"full {old} ({old_seconds:.1f} s){'' if same else '  MISMATCH'}",
                flush=True,
            )
        elif outcome == "survived" and args.confirm_survivors and not args.no_coverage:
            _, again, more = _fork_judge(mu, limit[mu.module], full[mu.module])
            row.update(full_outcome=again, full_seconds=round(more, 1))
            if again != "survived":
                row["outcome"] = outcome = "killed"
                print(f"[{n}/{len(judged)}] killed only by the whole selection: {mu.key}", flush=True)
        results.append(row)
        if args.out:  # after every mutant, so a stopped run keeps what it judged
            _write_results(Path(args.out), results)
        if args.compare:
            pass
        elif outcome == "survived":
            note = " (not covered)" if row.get("note") else ""
            print(f"[{n}/{len(judged)}] SURVIVED {mu.key}{note}", flush=True)
        elif n % 25 == 0:
            print(f"[{n}/{len(judged)}] ...", flush=True)
    if args.compare:
        ratio = totals["full"] / max(totals["targeted"], 1e-9)
        print(
            f"\ncompare: {len(judged) - mismatches} of {len(judged)} mutants judged the same; targeted "
            f"{totals['targeted']:.1f} s, whole selection {totals['full']:.1f} s (ratio {ratio:.2f})"
        )
    return _summary(args, modules, todo, equivalents, results)


def _run_parallel(
    args: argparse.Namespace,
    judged: list[Mutant],
    maps: dict[str, CoverageMap],
    full: dict[str, list[str]],
    limit: dict[str, float],
) -> list[dict[str, object]]:
    """``--jobs N`` in the forked mode: up to N forked children at once, each judging one mutant exactly as the
    serial loop of :func:`_run_forked` does (the same test selection; a targeted survivor is queued again with
    the whole selection under ``--confirm-survivors``). The parent stays single-threaded (children are forked
    from it and polled), so a fork never copies a lock another thread holds. Rows are recorded in the order the
    mutants finish; ``--out`` is rewritten after each."""
    results: list[dict[str, object]] = []

    def record(row: dict[str, object], key: str) -> None:
        results.append(row)
        if args.out:
            _write_results(Path(args.out), results)
        n = len(results)
        if row["outcome"] == "survived":
            note = " (not covered)" if row.get("note") else ""
            print(f"[{n}/{len(judged)}] SURVIVED {key}{note}", flush=True)
        elif n % 25 == 0:
            print(f"[{n}/{len(judged)}] ...", flush=True)

    #: (mutant, tests to run, how many ("all" or a count), the targeted row a confirmation completes)
    pending: deque[tuple[Mutant, list[str], str, dict[str, object] | None]] = deque()
    for mu in judged:
        cmap = maps.get(mu.module)
        selected = cmap.select(mu) if cmap is not None and not args.no_coverage else None
        if selected == [] and args.confirm_survivors:  # no test executes it (in this process): confirm on all
            pending.append((mu, full[mu.module], "all", _row(mu, "survived", 0.0, tests=0, note="not covered")))
        elif selected == []:
            record(_row(mu, "survived", 0.0, tests=0, note="not covered"), mu.key)
        else:
            pending.append((mu, selected or full[mu.module], "all" if selected is None else str(len(selected)), None))
    running: list[tuple[_Child, str, dict[str, object] | None]] = []
    while pending or running:
        while pending and len(running) < args.jobs:
            mu, paths, ran, confirming = pending.popleft()
            running.append((_fork_start(mu, limit[mu.module], paths), ran, confirming))
        for item in list(running):
            child, ran, confirming = item
            outcome = _fork_poll(child)
            if outcome is None:
                continue
            running.remove(item)
            seconds = time.monotonic() - child.start
            mu = child.mutant
            if confirming is not None:
                confirming.update(full_outcome=outcome, full_seconds=round(seconds, 1))
                if outcome != "survived":
                    confirming["outcome"] = "killed"
                    print(f"killed only by the whole selection: {mu.key}", flush=True)
                record(confirming, mu.key)
                continue
            row = _row(mu, outcome, seconds) if args.no_coverage else _row(mu, outcome, seconds, tests=ran)
            if outcome == "survived" and args.confirm_survivors and not args.no_coverage and ran != "all":
                pending.appendleft((mu, full[mu.module], "all", row))
                continue
            record(row, mu.key)
        time.sleep(0.05)
    return results


if __name__ == "__main__":
    sys.exit(main())
