"""The layers point one way and modules stay small (house style R16; issue Step 6).

The import graph is read from the source with :mod:`ast` (every import, at
module level or inside a function), so a cycle held together by a
function-level import is still a cycle.
"""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import networkx as nx
import pytest

ROOT = Path(__file__).resolve().parents[1]
LAYERS = {"accountant": 0, "mechanisms": 1, "verify": 2}
#: The most lines a module of the three packages may have (issue Step 6: "no module over ~800 lines").
MAX_LINES = 800


@dataclass(frozen=True)
class Edge:
    source: str
    target: str
    names: tuple[str, ...]
    line: int


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1]) if parts[-1] == "__init__" else ".".join(parts)


def _modules() -> dict[str, Path]:
    return {_module_name(p): p for pkg in LAYERS for p in sorted((ROOT / pkg).rglob("*.py"))}


def _layer_module(dotted: str) -> str:
    """``semidp.accountant.x`` -> ``accountant.x`` (the installed name -> the folder it lives in)."""
    return dotted.removeprefix("semidp.")


def _edges(modules: dict[str, Path]) -> list[Edge]:
    out: list[Edge] = []
    for name, path in modules.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                target = _layer_module(node.module)
                if target.split(".")[0] not in LAYERS:
                    continue
                plain = [a.name for a in node.names if f"{target}.{a.name}" not in modules]
                subs = [a.name for a in node.names if f"{target}.{a.name}" in modules]
                if plain:
                    out.append(Edge(name, target, tuple(plain), node.lineno))
                out += [Edge(name, f"{target}.{s}", (), node.lineno) for s in subs]
            elif isinstance(node, ast.Import):
                out += [
                    Edge(name, _layer_module(a.name), (), node.lineno)
                    for a in node.names
                    if _layer_module(a.name).split(".")[0] in LAYERS
                ]
    return out


MODULES = _modules()
EDGES = _edges(MODULES)


def test_layers_point_one_way() -> None:
    """accountant imports nothing from semidp.mechanisms or verify; mechanisms nothing from semidp.verify."""
    bad = [
        f"{e.source}:{e.line} imports {e.target}"
        for e in EDGES
        if LAYERS[e.target.split(".")[0]] > LAYERS[e.source.split(".")[0]]
    ]
    assert bad == []


def test_no_module_imports_another_modules_private_names() -> None:
    bad = [
        f"{e.source}:{e.line} imports {n} from {e.target}"
        for e in EDGES
        for n in e.names
        if n.startswith("_") and not n.startswith("__") and e.target != e.source
    ]
    assert bad == []


def test_no_import_cycles() -> None:
    """No cycle among modules (a package's ``__init__`` re-exporting its modules is not a cycle by itself)."""
    g = nx.DiGraph()
    g.add_edges_from((e.source, e.target) for e in EDGES if e.target in MODULES and e.target != e.source)
    cycles = [c for c in nx.simple_cycles(g) if len(c) > 1]
    assert cycles == []


@pytest.mark.parametrize("name", sorted(MODULES))
def test_module_is_small(name: str) -> None:
    lines = len(MODULES[name].read_text(encoding="utf-8").splitlines())
    assert lines <= MAX_LINES, f"{name} has {lines} lines; split it along its seams"


def test_the_checks_can_fail() -> None:
    """The graph readers see a forbidden direction, a private import and a cycle when there is one."""
    fake = {"accountant.a": ROOT / "a.py", "verify.b": ROOT / "b.py"}
    edges = [Edge("accountant.a", "verify.b", ("_x",), 1), Edge("verify.b", "accountant.a", (), 1)]
    assert [e for e in edges if LAYERS[e.target.split(".")[0]] > LAYERS[e.source.split(".")[0]]] == edges[:1]
    g = nx.DiGraph()
    g.add_edges_from((e.source, e.target) for e in edges if e.target in fake)
    assert [c for c in nx.simple_cycles(g) if len(c) > 1]


OLD_CITATIONS = re.compile(
    r"Cho (?:&|and) Awan(?: 2024)?,? (?:Prop|Thm|Def|Lemma|Alg|Cor)\b|\bD?GGY (?:Def|Thm|Prop|Cor|Alg)\b"
)


def test_docstrings_cite_with_keys() -> None:
    """One citation form in docstrings: ``[CA24, Prop. 15]`` with the key of the README's References."""
    bad = []
    for name, path in MODULES.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.Expr)
                and isinstance(getattr(node, "value", None), ast.Constant)
                and isinstance(node.value.value, str)
                and OLD_CITATIONS.search(node.value.value)
            ):
                bad.append(f"{name}:{node.lineno}: {OLD_CITATIONS.search(node.value.value).group(0)}")
    assert bad == []


def _claim_type_violations(sources: dict[str, str]) -> list[str]:
    """Modules that define a ``check_claim`` other than the public one, or a tuple claim alias."""
    bad = []
    for name, text in sources.items():
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.FunctionDef) and node.name == "check_claim" and name != "verify.claim_api":
                bad.append(f"{name}:{node.lineno}: a second check_claim (the public one is verify.claim_api's)")
            if (
                isinstance(node, ast.Assign)
                and any(isinstance(t, ast.Name) and t.id == "Claim" for t in node.targets)
                and "tuple" in ast.unparse(node.value)
            ):
                bad.append(f"{name}:{node.lineno}: a tuple claim type (claims are PrivacyClaim values)")
    return bad


def test_one_claim_type_and_one_check_claim() -> None:
    """Issue 23, item 3: ``PrivacyClaim`` is the only claim type, and there is one public ``check_claim``."""
    assert _claim_type_violations({n: p.read_text(encoding="utf-8") for n, p in MODULES.items()}) == []
    planted = {"verify.claims": "Claim = tuple[str, ...]\ndef check_claim(claim, effective): ...\n"}
    assert len(_claim_type_violations(planted)) == 2  # the rule sees both when they come back


@pytest.mark.parametrize("layer", sorted(LAYERS))
def test_a_layer_has_one_import_name(layer: str) -> None:
    """Issue 23, item 8: from the repository root, ``import accountant`` (etc.) fails with a message naming
    ``semidp.accountant``; a second name would load second copies of the classes (``ZCDP`` rejected by semidp)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"} | {"PYTHONPATH": str(ROOT)}
    run = subprocess.run(
        [sys.executable, "-c", f"import {layer}"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode != 0
    assert f"ImportError: import semidp.{layer}, not '{layer}'" in run.stderr


def test_posix_only_modules_are_imported_where_they_exist() -> None:
    """``resource`` (POSIX) is imported inside a ``try`` only, so the package imports where it is missing."""
    bare = []
    for name, path in MODULES.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in tree.body:  # module level, outside a try
            if isinstance(node, ast.Import) and any(a.name in ("resource", "fcntl", "termios") for a in node.names):
                bare.append(f"{name}:{node.lineno}")
    assert bare == []


# ------------------------------------------------------------ citations resolve inside the repository (Step 14.7)

REFERENCE = ROOT / "docs" / "reference"
#: Text files that may cite (sources, tests, specs, notes); generated and tool folders are skipped.
CITING_SUFFIXES = {".py", ".md", ".toml", ".txt", ".rst", ".cfg", ".ini", ".json", ".yml", ".yaml", ".csv"}
SKIPPED_DIRS = {
    ".git",
    ".venv",
    ".ci-venv",
    "__pycache__",
    ".mypy_cache",
    ".ruff_cache",
    ".pytest_cache",
    "build",
    "dist",
}
#: A reproduction target id as cited: ``T-A7``, ``T-I8b``, ``T-Z2`` (also inside ``T-Z2-advertised``).
TARGET_ID = re.compile(r"(?<![\w-])T-[A-Z]{1,2}\d+[a-z]?(?![A-Za-z0-9])")
#: Where a note defines a target: the first cell of a table row or the head of a list item.
TARGET_DEFINITION = re.compile(r"^(?:\| |- )(T-[A-Z]{1,2}\d+[a-z]?)\b", re.MULTILINE)
#: Paths into the workspace around a checkout (the shared reference folder, the paper texts, absolute homes).
OUTSIDE = re.compile(r"\.\./shared/(?:reference|seeds|census)|\bshared/reference/|/work/\w|\.\./seeds/")
CITED_NOTE = re.compile(r"docs/reference/([\w.-]+\.md)")


def _citing_files() -> list[Path]:
    found = []
    for folder, dirs, files in os.walk(ROOT):
        dirs[:] = [d for d in dirs if d not in SKIPPED_DIRS and not d.startswith(".") and not d.endswith(".egg-info")]
        found += [Path(folder, f) for f in files if Path(f).suffix in CITING_SUFFIXES]
    return sorted(found)


def _defined_targets() -> dict[str, list[str]]:
    defined: dict[str, list[str]] = {}
    for note in sorted(REFERENCE.glob("*.md")):
        for target in TARGET_DEFINITION.findall(note.read_text(encoding="utf-8")):
            defined.setdefault(target, []).append(note.name)
    return defined


def test_every_cited_target_is_defined_in_the_repository() -> None:
    """Every ``T-...`` id cited in code, tests, specs or docs is defined in docs/reference/ (a clone resolves it)."""
    defined = _defined_targets()
    assert {"T-A1", "T-A10", "T-S2b", "T-I8b", "T-Z5"} <= set(defined)  # the reader sees both notes' tables
    cited: dict[str, list[str]] = {}
    for path in _citing_files():
        if path.parent == REFERENCE:
            continue
        for target in TARGET_ID.findall(path.read_text(encoding="utf-8", errors="replace")):
            cited.setdefault(target, []).append(path.relative_to(ROOT).as_posix())
    assert sum(map(len, cited.values())) > 100  # not vacuous: the code base cites its targets
    missing = {t: sorted(set(where)) for t, where in cited.items() if t not in defined}
    assert missing == {}


def test_citations_stay_inside_the_repository() -> None:
    """No file points at the workspace around a checkout, and every cited reference note exists."""
    me = Path(__file__).resolve()
    outside, absent = [], []
    for path in _citing_files():
        text = path.read_text(encoding="utf-8", errors="replace")
        for number, line in enumerate(text.splitlines(), 1):
            where = f"{path.relative_to(ROOT).as_posix()}:{number}"
            found = OUTSIDE.search(line)
            if found and path != me:
                outside.append(f"{where}: {found.group(0)}")
            absent += [f"{where}: {n}" for n in CITED_NOTE.findall(line) if not (REFERENCE / n).is_file()]
    assert outside == []
    assert absent == []


#: A docstring reference to one of our objects by its full name: :class:`~accountant.geometry.knorm.KNormBall`.
QUALIFIED_ROLE = re.compile(
    r":(?:mod|class|func|meth|data|attr|exc|obj):`~?((?:accountant|mechanisms|verify|semidp)(?:\.\w+)*)`"
)


def _top_level_names(path: Path) -> set[str]:
    names: set[str] = set()
    body = ast.parse(path.read_text(encoding="utf-8")).body
    # names imported under ``if TYPE_CHECKING:`` are the lazily exported ones (PEP 562 ``__getattr__``)
    body += [n for node in body if isinstance(node, ast.If) for n in node.body]
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
    return names


def _resolves(qualified: str) -> bool:
    """The longest prefix that is a module of the checkout exists, and the next part is defined in it."""
    parts = qualified.split(".")
    for path in (parts, parts[1:]) if parts[0] == "semidp" and len(parts) > 1 else (parts,):
        for i in range(len(path), 0, -1):
            base = ROOT.joinpath(*path[:i])
            for module in (base.with_suffix(".py"), base / "__init__.py"):
                if module.is_file():
                    return i == len(path) or path[i] in _top_level_names(module)
    return False


def test_docstrings_name_objects_where_they_live() -> None:
    """A docstring that names one of our objects by its full path names a module that defines it (or imports it).

    Catches the docstrings left behind when an object moves (issue Step 14: ``knorm.py`` described five objects
    that had moved to their own modules).
    """
    assert _resolves("accountant.geometry.knorm.KNormBall") and not _resolves(
        "accountant.geometry.knorm.ContainingBall"
    )
    stale = []
    for path in [p for pkg in [*LAYERS, "tests", "benchmarks"] for p in sorted((ROOT / pkg).rglob("*.py"))]:
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            stale += [
                f"{path.relative_to(ROOT)}:{number}: {q}" for q in QUALIFIED_ROLE.findall(line) if not _resolves(q)
            ]
    assert stale == []


#: Parameter names of the float budgets that :class:`semidp.accountant.core.budget.Budget` replaces (issue 23, Step 14
#: item 5): seconds (``time_limit``, ``time_budget``) or a ``time.monotonic()`` deadline (``deadline``).
FLOAT_BUDGET_NAMES = frozenset({"time_limit", "deadline", "time_budget"})
#: Function parameters of the three packages still named so: a ceiling that only goes down (lower it when you
#: convert one; 51 before the Budget value, 33 after its first slices).
MAX_FLOAT_BUDGET_PARAMETERS = 5


def _float_budget_parameters(sources: dict[str, str]) -> list[str]:
    found = []
    for name, text in sources.items():
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                a = node.args
                found += [
                    f"{name}:{node.lineno}: {node.name}({arg.arg})"
                    for arg in (*a.posonlyargs, *a.args, *a.kwonlyargs)
                    if arg.arg in FLOAT_BUDGET_NAMES
                ]
    return found


def test_float_budget_parameters_only_go_down() -> None:
    """Issue 23, item 5: one ``Budget`` value replaces ``time_limit``, ``deadline`` and ``time_budget`` floats."""
    found = _float_budget_parameters({n: p.read_text(encoding="utf-8") for n, p in MODULES.items()})
    assert len(found) <= MAX_FLOAT_BUDGET_PARAMETERS, "use a Budget (semidp.accountant.core.budget):\n" + "\n".join(
        found
    )
    planted = {"verify.x": "def f(a, *, time_limit=1.0):\n    def g(deadline): ...\nasync def h(time_budget): ...\n"}
    assert len(_float_budget_parameters(planted)) == 3  # the rule sees each form


def _kind_dispatch(name: str, text: str, kind_names: set[str]) -> list[str]:
    """Comparisons of a ``kind`` (``m.kind``, ``spec.mechanism.kind``, a name ``kind``) with a mechanism kind's name."""
    bad = []
    for node in ast.walk(ast.parse(text)):
        if not isinstance(node, ast.Compare):
            continue
        sides = [node.left, *node.comparators]
        on_kind = any(
            (isinstance(s, ast.Attribute) and s.attr == "kind") or (isinstance(s, ast.Name) and s.id == "kind")
            for s in sides
        )
        names = {
            c.value for s in sides for c in ast.walk(s) if isinstance(c, ast.Constant) and isinstance(c.value, str)
        }
        if on_kind and names & kind_names:
            bad.append(f"{name}:{node.lineno}: {ast.unparse(node)}")
    return bad


def _kinds_per_module(name: str, text: str) -> list[str]:
    """The ``mechanism.kind`` names a module declares (the first argument of each ``KindInfo(...)``)."""
    return [
        ast.literal_eval(node.args[0])
        for node in ast.walk(ast.parse(text))
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "KindInfo"
        and node.args
        and isinstance(node.args[0], ast.Constant)
    ]


def test_kinds_are_plugins_one_per_module_without_string_dispatch() -> None:
    """Issue 23, item 4: each module of ``verify/kinds`` declares at most one kind (its ``KindInfo``), every
    registered kind is declared so, and no module there compares a kind with a kind's name (dispatch goes through
    the registry and the kind's own values)."""
    from semidp.verify.registry import kind_names

    names = set(kind_names())
    kind_modules = {n: p.read_text(encoding="utf-8") for n, p in MODULES.items() if n.startswith("verify.kinds")}
    dispatch = [v for n, t in kind_modules.items() for v in _kind_dispatch(n, t, names)]
    assert dispatch == []
    declared = {n: _kinds_per_module(n, t) for n, t in kind_modules.items()}
    assert {n: d for n, d in declared.items() if len(d) > 1} == {}
    assert sorted(k for d in declared.values() for k in d) == sorted(names)
    # the rules see a planted violation
    planted = 'GAUSS = KindInfo("gaussian", S)\nLAP = KindInfo("laplace", S)\nif m.kind == "laplace":\n    pass\n'
    assert len(_kind_dispatch("verify.kinds.x", planted, names)) == 1
    assert len(_kinds_per_module("verify.kinds.x", planted)) == 2
    assert _kind_dispatch("verify.kinds.x", 'if spec.invariant.kind == "none":\n    pass\n', names) == []


def test_no_passed_validation_errors() -> None:
    """Issue 23, item 3: a spec type with "exactly one of" fields is a tagged union the loader validates once
    (``mechanism.noise`` on ``cnd``), and a key a kind requires is read with ``Context.required`` (an invalid spec
    naming the key); no kind re-checks its validation with ``raise TypeError("... passed validation")``."""
    bad = [
        f"{n}:{i}"
        for n, p in MODULES.items()
        for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
        if "passed validation" in line
    ]
    assert bad == []


# ------------------------------------------------- "exactly one of" is parsed, not re-checked (Step 14.3, H53)

#: Problem texts of a choice between keys or forms of one table.
CHOICE_PHRASES = ("exactly one of", "exactly one form", "only allowed when", "required when")
#: Where such a text may be written: the loader (tagged and keyed unions) and a keyed union's ``choice_problem``.
CHOICE_PARSERS = ("verify.load",)
#: The remaining runtime checks, each with why it is not (yet) a union of the loader: shrink, never grow.
CHOICE_ALLOWED = {
    # not a spec key: the header row of the measurements file the spec names
    ("verify.workload_spec", "_columns"): "the CSV header's rho | sigma2 | scale column",
}


def _choice_checks(name: str, text: str) -> list[tuple[str, str, int]]:
    """``(module, enclosing function, line)`` of each string holding a :data:`CHOICE_PHRASES` that may be a problem
    text: not a docstring or any other bare string statement, not a field's documentation (``documented(...)``)."""
    tree = ast.parse(text)
    prose = {id(n.value) for n in ast.walk(tree) if isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant)}
    prose |= {
        id(a)
        for n in ast.walk(tree)
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "documented"
        for a in ast.walk(n)
    }
    found: list[tuple[str, str, int]] = []

    def visit(node: ast.AST, func: str) -> None:
        for child in ast.iter_child_nodes(node):
            inner = child.name if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)) else func
            if (
                isinstance(child, ast.Constant)
                and isinstance(child.value, str)
                and id(child) not in prose
                and any(p in child.value for p in CHOICE_PHRASES)
            ):
                found.append((name, func, child.lineno))
            visit(child, inner)

    visit(tree, "")
    return found


def test_exactly_one_of_is_a_union_the_loader_parses() -> None:
    """Issue 23, item 3: a table written in exactly one of several forms is a tagged union (``[invariant]``,
    ``[query]``, ``mechanism.noise``: by ``kind``/``cnd``) or a keyed union (a guarantee, a recode, a measurements
    table's ``columns``: by the key held, :class:`~semidp.verify.spec.Alternatives`) that the loader parses once.
    Rule: a problem text naming such a choice (:data:`CHOICE_PHRASES`) is written only in the loader or in a keyed
    union's ``choice_problem``; the few runtime checks left are listed in :data:`CHOICE_ALLOWED` with the reason."""
    spec_side = {n: p for n, p in MODULES.items() if n.startswith("verify")}  # accountant/mechanisms: API arguments
    found = [c for n, p in spec_side.items() for c in _choice_checks(n, p.read_text(encoding="utf-8"))]
    bad = [
        f"{n}:{line} ({func})"
        for n, func, line in found
        if n not in CHOICE_PARSERS and func != "choice_problem" and (n, func) not in CHOICE_ALLOWED
    ]
    assert bad == []
    assert {(n, f) for n, f, _ in found if (n, f) in CHOICE_ALLOWED} == set(CHOICE_ALLOWED)  # no stale entry
    planted = 'def invariant_problems(spec):\n    return [Problem("invariant.sets", "required when kind = x")]\n'
    assert _choice_checks("verify.spec_checks", planted) == [("verify.spec_checks", "invariant_problems", 2)]
    prose = 'def f():\n    """Exactly one of a or b."""\n\nX: int = documented("exactly one of a or b")\n'
    assert _choice_checks("verify.x", prose) == []


def test_the_public_check_claim_is_one_function() -> None:
    """Issue 23, item 3: ``semidp.check_claim`` and ``semidp.verify.check_claim`` are the same function, the
    effective guarantee first and then the claim (a :class:`PrivacyClaim` or a guarantee)."""
    import inspect

    import semidp
    import semidp.verify

    assert semidp.check_claim is semidp.verify.check_claim
    assert list(inspect.signature(semidp.check_claim).parameters) == ["effective", "claim"]


# --- Issue 23, item 2: typed sections (H52) ---------------------------------------------------------------------

#: The most ``dict[str, Any]`` plus ``JSON`` type uses in ``verify/`` (AST: each ``dict[str, Any]`` subscript and each
#: load of the name ``JSON``). Main at 5a0362c had 133; typed sections brought it to the value below. It only goes
#: down: a new untyped JSON object belongs at a JSON boundary (reading or writing a file), not inside the report.
#: 91 after typed sections, plus 5 from the keyed unions' TOML-table readers (verify.load) and the schema writer's plugin
#: tables (verify.schema), both boundaries, landed in parallel.
MAX_UNTYPED_JSON = 58


def _untyped_json(modules: dict[str, str]) -> list[str]:
    """Each ``dict[str, Any]`` and each use of the ``JSON`` alias, as ``module:line``."""
    found = []
    for name, text in modules.items():
        for node in ast.walk(ast.parse(text)):
            dict_any = (
                isinstance(node, ast.Subscript)
                and isinstance(node.value, ast.Name)
                and node.value.id == "dict"
                and ast.unparse(node.slice) in ("str, Any", "(str, Any)")
            )
            alias = isinstance(node, ast.Name) and node.id == "JSON" and isinstance(node.ctx, ast.Load)
            if dict_any or alias:
                found.append(f"{name}:{getattr(node, 'lineno', 0)}")
    return found


def test_untyped_json_only_goes_down_and_one_json_alias() -> None:
    """Issue 23, item 2: report sections are typed dataclasses (:mod:`verify.json_walk` writes them); ``dict[str,
    Any]`` stays at JSON boundaries, under a ceiling that only goes down; ``JSON`` is defined once."""
    texts = {n: p.read_text(encoding="utf-8") for n, p in MODULES.items() if n.startswith("verify")}
    found = _untyped_json(texts)
    assert len(found) <= MAX_UNTYPED_JSON, "type it (a frozen dataclass, verify.json_walk):\n" + "\n".join(found)
    aliases = [
        n
        for n, t in texts.items()
        for node in ast.parse(t).body
        if isinstance(node, ast.Assign) and any(isinstance(x, ast.Name) and x.id == "JSON" for x in node.targets)
    ]
    assert aliases == ["verify.json_walk"]
    assert "class JsonSection" not in "".join(texts.values())  # every section is typed
    planted = {"verify.x": "from typing import Any\nJSON = dict[str, Any]\ndef f(x: JSON) -> dict[str, Any]: ...\n"}
    assert len(_untyped_json(planted)) == 3  # the rule sees the alias's definition, its use and a bare dict


# ------------------------------------------------------------ the release as data (Step 14.1)

#: Kind modules that describe a :class:`~semidp.accountant.releases.model.Release` (the runner accounts it).
RELEASE_KINDS = (
    "verify.kinds.calibrated",
    "verify.kinds.implementation",
    "verify.kinds.published",
    "verify.kinds.lattice",
    "verify.kinds.umpu",
)
#: The guarantee-building functions a kind that describes its release no longer calls.
ACCOUNTING_NAMES = {"semi_dp", "semi_dp_composition", "joint_release_dp", "compose_parts", "on_base"}
#: KindResult's fields besides the release, the audit evidence, checks, sections and artefacts: override hooks
#: (none are left: published workloads describe a MeasurementRelease) or guarantees a kind computed (none either).
KIND_RESULT_CORE = {
    "release",
    "audit",
    "checks",
    "final_checks",
    "sections",
    "seed",
    "samples",
    "plots",
}
MAX_KIND_RESULT_HOOKS = 0


def _builds_effective(text: str) -> list[str]:
    """Where a module hands ``KindResult`` its own ``advertised``/``effective`` or imports an accounting name."""
    out = []
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "KindResult":
            out += [f"KindResult({k.arg}=...)" for k in node.keywords if k.arg in ("advertised", "effective")]
        if isinstance(node, ast.ImportFrom):
            out += [f"import {a.name}" for a in node.names if a.name in ACCOUNTING_NAMES]
    return out


def test_converted_kinds_describe_a_release_and_build_no_guarantee() -> None:
    """Issue 23, item 1: a converted kind describes its release; the runner's interpreters
    (:mod:`accountant.releases.accounting`) compute advertised and effective, so no kind fakes a guarantee."""
    found = {n: _builds_effective(MODULES[n].read_text(encoding="utf-8")) for n in RELEASE_KINDS}
    assert {n: f for n, f in found.items() if f} == {}
    for n in RELEASE_KINDS:
        assert "release=" in MODULES[n].read_text(encoding="utf-8"), n
    planted = (
        "from semidp.accountant.guarantees.semidp import semi_dp\nKindResult(advertised=g, effective=semi_dp(g))\n"
    )
    assert sorted(_builds_effective(planted)) == [
        "KindResult(advertised=...)",
        "KindResult(effective=...)",
        "import semi_dp",
    ]


def test_kind_result_hooks_only_shrink() -> None:
    """Issue 23, item 1: KindResult keeps at most the hooks the unconverted kinds still need."""
    from dataclasses import fields

    from semidp.verify.context import KindResult

    hooks = sorted(f.name for f in fields(KindResult) if f.name not in KIND_RESULT_CORE)
    assert len(hooks) <= MAX_KIND_RESULT_HOOKS, hooks
    assert {"effective_at_lower", "calibrated_space"}.isdisjoint(hooks)  # removed: releases carry them
    assert {"semi_adjacent_check", "certify_advertised"}.isdisjoint(hooks)  # umpu describes its release


# ------------------------------------------------------------ accountant/ subpackages and their layers (Step 14.6)

#: ``- <subpackage>: <allowed>, ... -- <what it holds>`` lines of semidp.accountant's docstring
LAYER_LINE = re.compile(r"^- (\w+): ([\w, ()]+?) -- ", re.MULTILINE)


def _subpackage_layers() -> dict[str, set[str]]:
    """The table of semidp.accountant's docstring: subpackage -> the other subpackages it may import."""
    import semidp.accountant

    return {
        sub: set() if allowed.strip() == "(none)" else {a.strip() for a in allowed.split(",")}
        for sub, allowed in LAYER_LINE.findall(semidp.accountant.__doc__ or "")
    }


SUBPACKAGES = {
    n for n, p in MODULES.items() if n.count(".") == 1 and n.startswith("accountant.") and p.name == "__init__.py"
}


def _subpackage(module: str) -> str | None:
    """``accountant.pld.engine`` (or the package ``accountant.pld``) -> ``pld``; anything else -> None."""
    parts = module.split(".")
    return parts[1] if len(parts) >= 2 and ".".join(parts[:2]) in SUBPACKAGES else None


def _layer_violations(edges: list[Edge], layers: dict[str, set[str]]) -> list[str]:
    """Imports from a module of one subpackage into another subpackage its line does not name, or into the
    ``semidp.accountant`` package itself (whose ``__init__`` imports every subpackage)."""
    bad = []
    for e in edges:
        source, target = _subpackage(e.source), _subpackage(e.target)
        if source is None:
            continue
        if e.target == "accountant":
            bad.append(f"{e.source}:{e.line} imports the semidp.accountant package")
        elif target is not None and target != source and target not in layers.get(source, set()):
            bad.append(f"{e.source}:{e.line} imports {e.target} ({source} may import {sorted(layers.get(source, []))})")
    return bad


def test_accountant_subpackages_follow_their_layers() -> None:
    """Issue 23, item 6: accountant/ is in subpackages that name the concepts; semidp.accountant's docstring
    lists each with the subpackages it may import, that graph has no cycle, and every import follows it."""
    layers = _subpackage_layers()
    assert set(layers) == {s.split(".")[1] for s in SUBPACKAGES}  # the table names every subpackage, no other
    assert all(allowed <= set(layers) for allowed in layers.values())
    assert nx.is_directed_acyclic_graph(nx.DiGraph([(s, t) for s, ts in layers.items() for t in ts]))
    assert _layer_violations(EDGES, layers) == []
    # the check sees a planted upward import, and an import of the package from inside it
    planted = [
        Edge("accountant.core.errors", "accountant.pld.engine", (), 1),
        Edge("accountant.pld.grid", "accountant", ("x",), 2),
    ]
    assert len(_layer_violations(planted, layers)) == 2
    assert _layer_violations([Edge("accountant.pld.grid", "accountant.core.errors", ("E",), 1)], layers) == []
