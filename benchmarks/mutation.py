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

    @property
    def key(self) -> str:
        """A stable name: ``module:line:column:description`` (used by the equivalents list)."""
        return f"{self.module}:{self.line}:{self.col}:{self.description}"


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


def mutants_of(module: str) -> list[Mutant]:
    """Every mutant of ``module`` (a path from the repository root), in a stable order."""
    source = (ROOT / module).read_text()
    tree = ast.parse(source)
    skip = _skipped_nodes(tree)
    defined = _defined_names(tree)
    quiet = _no_mutate_lines(source)
    out = []
    for index, node in enumerate(ast.walk(tree)):
        if id(node) in skip or getattr(node, "lineno", None) in quiet:
            continue
        for variant, (description, _) in enumerate(_variants(node, defined)):
            out.append(Mutant(module, index, variant, node.lineno, node.col_offset, description))  # type: ignore[attr-defined]
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


def _fork_judge(mutant: Mutant, timeout: float, tests: list[str]) -> tuple[Mutant, str, float]:
    """Judge ``mutant`` in a forked child of this (already importing) process: the mutated source is executed
    into the live module, every other module's binding of a changed name is pointed at the new object, and
    pytest runs in the child. Saves the interpreter start and the package import (most of a mutant's time)."""
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
            args = [
                "-x",
                "-q",
                "-p",
                "no:randomly",
                "-p",
                "no:cacheprovider",
                "-m",
                "not slow",
                "--no-header",
                "--assert=plain",
            ]
            code = int(pytest.main([*args, "semidp/" + mutant.module, *tests]))
        except BaseException:
            code = 1
        finally:
            os._exit(code)
    deadline = start + timeout
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            return mutant, "killed", time.monotonic() - start
        time.sleep(0.05)
    code = os.waitstatus_to_exitcode(status)
    if code not in (0, 1, 3):
        raise RuntimeError(f"pytest exited {code} on {mutant.key}")
    return mutant, ("survived" if code == 0 else "killed"), time.monotonic() - start


def _parse_lines(text: str | None) -> tuple[int, int] | None:
    if text is None:
        return None
    lo, _, hi = text.partition("-")
    return int(lo), int(hi or lo)


def main(argv: list[str] | None = None) -> int:
    """Command line: see the module docstring. Exit 0 when every judged module reaches ``--target``."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("modules", nargs="*", help="paths from the repository root (default: every module in TARGETS)")
    ap.add_argument("--jobs", type=int, default=1, help="parallel workers (each has its own copy of the tree)")
    ap.add_argument("--timeout", type=float, default=180.0, help="seconds per mutant (a timeout counts as killed)")
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
        "--sample",
        type=int,
        help="judge only this many mutants per module, drawn at random (seeded by --seed) when there are more",
    )
    ap.add_argument("--seed", type=int, default=0, help="seed of --sample's draw")
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

    todo: list[Mutant] = []
    for m in modules:
        for mu in mutants_of(m):
            if lines is None or lines[0] <= mu.line <= lines[1]:
                todo.append(mu)
    if args.rerun:
        survived = {
            f"{r['module']}:{r['line']}:{r['col']}:{r['description']}"
            for r in json.loads(Path(args.rerun).read_text())
            if r["outcome"] == "survived"
        }
        todo = [mu for mu in todo if mu.key in survived]
    if args.sample is not None:
        rng = random.Random(args.seed)
        kept: list[Mutant] = []
        for m in modules:
            pool = [mu for mu in todo if mu.module == m and mu.key not in equivalents]
            kept += rng.sample(pool, min(args.sample, len(pool)))  # in random order: a stopped run's prefix is random
        todo = kept
        print(f"sampled {len(todo)} mutants (--sample {args.sample} per module, --seed {args.seed})", flush=True)
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
            outcome, seconds = _run_tests(workdirs[0], m, args.timeout * 3, args.tests)
            if outcome != "pass":
                print(f"{m}: the targeted tests do not pass unmutated ({outcome}); fix them first", file=sys.stderr)
                return 2
            print(f"{m}: baseline passes in {seconds:.1f} s", flush=True)
        judged = [mu for mu in todo if mu.key not in equivalents]
        free = list(workdirs)

        def work(mu: Mutant) -> tuple[Mutant, str, float]:
            wd = free.pop()
            try:
                return _judge(wd, mu, args.timeout, args.tests)
            finally:
                free.append(wd)

        with ThreadPoolExecutor(max_workers=len(workdirs)) as pool:
            for n, (mu, outcome, seconds) in enumerate(pool.map(work, judged), 1):
                results.append({**asdict(mu), "outcome": outcome, "seconds": round(seconds, 1)})
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
    print("\nmodule                              killed  survived  equivalent  score")
    for m in modules:
        rows = [r for r in results if r["module"] == m]
        killed = sum(r["outcome"] == "killed" for r in rows)
        survived = sum(r["outcome"] == "survived" for r in rows)
        equiv = sum(mu.key in equivalents for mu in todo if mu.module == m)
        score = 100.0 * killed / max(1, killed + survived)
        ok &= score >= args.target
        print(f"{m:36s}{killed:7d}{survived:10d}{equiv:12d}  {score:5.1f} %")
    if args.out:
        Path(args.out).write_text(json.dumps(results, indent=1))
    return 0 if ok else 1


def _run_forked(args: argparse.Namespace, modules: list[str], todo: list[Mutant], equivalents: set[str]) -> int:
    """The default mode: import the package once, then judge each mutant in a forked child (one at a time)."""
    os.chdir(ROOT)
    sys.path.insert(0, str(ROOT))
    os.environ["PYTHONDONTWRITEBYTECODE"] = "1"
    for m in modules:
        __import__(_module_name(m))
    import semidp  # noqa: F401  (the whole package, as the tests import it)

    results: list[dict[str, object]] = []
    for m in modules:  # the unmutated module must pass, or every mutant would look killed
        tests = args.tests or TARGETS[m]
        baseline = Mutant(m, -1, -1, 0, 0, "baseline")
        start = time.monotonic()
        pid = os.fork()
        if pid == 0:
            import pytest

            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, 1)
            os._exit(
                int(
                    pytest.main(
                        [
                            "-x",
                            "-q",
                            "-p",
                            "no:randomly",
                            "-p",
                            "no:cacheprovider",
                            "--assert=plain",
                            "semidp/" + m,
                            *tests,
                        ]
                    )
                )
            )
        code = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
        if code != 0:
            print(f"{m}: the targeted tests do not pass unmutated (exit {code}); fix them first", file=sys.stderr)
            return 2
        print(f"{m}: baseline passes in {time.monotonic() - start:.1f} s ({baseline.description})", flush=True)
    judged = [mu for mu in todo if mu.key not in equivalents]
    for n, mu in enumerate(judged, 1):
        _, outcome, seconds = _fork_judge(mu, args.timeout, args.tests or TARGETS[mu.module])
        results.append({**asdict(mu), "outcome": outcome, "seconds": round(seconds, 1)})
        if args.out:  # after every mutant, so a stopped run keeps what it judged
            Path(args.out).write_text(json.dumps(results, indent=1))
        if outcome == "survived":
            print(f"[{n}/{len(judged)}] SURVIVED {mu.key}", flush=True)
        elif n % 25 == 0:
            print(f"[{n}/{len(judged)}] ...", flush=True)
    return _summary(args, modules, todo, equivalents, results)


if __name__ == "__main__":
    sys.exit(main())
