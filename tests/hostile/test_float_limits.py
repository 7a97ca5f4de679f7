"""Hostile floats in every shipped spec (issue 21, Step 17.1 and 17.5): overflow, underflow, -0.0 and huge
privacy parameters end as a located invalid spec (exit 2 naming the key) or as an honest verdict, never as an
"internal error", a traceback or a NaN in a report.

Every number literal of every shipped spec (the first :data:`SITES_PER_SPEC`, and every parameter-named integer
such as ``rho = 1``) is replaced in turn by each of :data:`VALUES`. The fast test validates every mutant and audits
the mutants that pass validation of the specs where fuzzing found internal errors (a composed ``(epsilon, delta)``
component of epsilon >= 30 made the PLD engine take log 0; component mu = 1e10 and claim epsilon = 1e6 left the
certified arithmetic's range; a generalized-laplace epsilon of 1e30 and a Tulap epsilon of 0 were refused only
mid-run, unlocated). The slow test audits every valid mutant of every shipped spec.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from semidp.accountant.core.errors import InvalidSpec
from semidp.verify.load import loads
from semidp.verify.spec_job import JobOptions, run_spec

ROOT = Path(__file__).resolve().parents[2]
SPECS = ROOT / "specs"
VALUES = ("1e308", "1e-308", "5e-324", "1e30", "-0.0", "1e300", "inf", "1e999999999")
SITES_PER_SPEC = 16
#: The fast test's share (validating a mutant of a workload spec takes ~0.3 s): the values past each limit.
FAST_VALUES, FAST_SITES = ("1e308", "5e-324", "1e30", "-0.0"), 8
#: Specs whose valid mutants the fast test audits (each had an internal error before the limits).
AUDITED = ("release-mixed-components", "umpu-odds-ratio", "county-state-total-generalized-laplace")

_FLOAT = re.compile(r'(?<![\w."-])(-?\d[\d_]*\.\d[\d_]*(?:[eE][+-]?\d+)?|-?\d+[eE][+-]?\d+)(?![\w."])')
_PARAM_INT = re.compile(r"\b(?:epsilon|rho|zcdp|mu|sigma|scale|delta|alpha|theta0)\s*=\s*(-?\d+)(?![\w.])")


def _code(line: str) -> str:
    """``line`` with its strings and comment blanked (same length up to the comment): where numbers are code."""
    out, quote = [], None
    for ch in line:
        if quote:
            out.append(" ")
            quote = None if ch == quote else quote
        elif ch in "\"'":
            quote = ch
            out.append(" ")
        elif ch == "#":
            break
        else:
            out.append(ch)
    return "".join(out)


def _sites(text: str, most: int = SITES_PER_SPEC) -> list[tuple[int, int, int]]:
    """``(line, start, end)`` of the number literals to replace: two per line at most, :data:`SITES_PER_SPEC` in
    all (a data table's hundreds of numbers add nothing)."""
    found: list[tuple[int, int, int]] = []
    for i, line in enumerate(text.splitlines(keepends=True)):
        code = _code(line)
        spans = [m.span(1) for m in _FLOAT.finditer(code)] + [m.span(1) for m in _PARAM_INT.finditer(code)]
        found += [(i, a, b) for a, b in sorted(spans)[:2]]
    return found[:most]


def _mutants(spec: Path, *, fast: bool = False) -> list[tuple[str, str]]:
    """``(label, text)`` of every mutant of ``spec`` (``fast``: :data:`FAST_VALUES` at :data:`FAST_SITES`)."""
    lines = spec.read_text().splitlines(keepends=True)
    out = []
    for i, a, b in _sites(spec.read_text(), FAST_SITES if fast else SITES_PER_SPEC):
        for v in FAST_VALUES if fast else VALUES:
            text = "".join(lines[:i] + [lines[i][:a] + v + lines[i][b:]] + lines[i + 1 :])
            out.append((f"{spec.stem}:{i + 1}:{lines[i][a:b]}->{v}", text))
    return out


def _valid(spec: Path, folder: Path, *, fast: bool = False) -> list[tuple[str, Path]]:
    """The mutants of ``spec`` that pass validation, written into ``folder`` (a copy of specs/); every other one
    must be a located :class:`InvalidSpec` (each problem names a dotted key)."""
    keep = []
    for n, (label, text) in enumerate(_mutants(spec, fast=fast)):
        path = folder / f"{spec.stem}-m{n}.toml"
        try:
            loads(text, str(path))
        except InvalidSpec as e:
            problems = str(e).splitlines()[1:]
            assert problems and all(re.match(r"  - [\w.\[\]-]+: ", p) for p in problems), (label, str(e))
            continue
        path.write_text(text)
        keep.append((label, path))
    return keep


def _audit(label: str, path: Path, *, located: bool = False) -> None:
    """Audit one valid mutant: no internal error (``located``: nor an unlocated "cannot be evaluated", exit 2
    without the key, which a range the spec layer could check ends as), no traceback, no NaN."""
    got = run_spec(str(path), JobOptions(time_limit=2.0, seed=1))
    assert got.kind != "internal", (label, got.message)
    assert not located or got.kind != "toolkit", (label, got.message)
    assert "Traceback" not in got.message, (label, got.message)
    assert got.status in ("ok", "error", "timeout", "memory"), label
    if got.value is not None:
        assert "NaN" not in json.dumps(got.value.to_json()), label


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of specs/ (the mutants' files, such as measurement CSVs, resolve inside it)."""
    dst = tmp_path_factory.mktemp("specs") / "specs"
    shutil.copytree(SPECS, dst)
    return dst


def test_the_walk_reaches_the_keys_that_failed() -> None:
    labels = [label for label, _ in _mutants(SPECS / "release-mixed-components.toml")]
    assert any(":24:0.25->1e30" in x for x in labels) and any(":25:0.5->1e30" in x for x in labels)
    assert len(_sites((SPECS / "wikimedia-pageviews-year.toml").read_text())) == SITES_PER_SPEC


@pytest.mark.parametrize("spec", sorted(SPECS.glob("*.toml")), ids=lambda p: p.stem)
def test_every_hostile_float_is_located_or_audited(spec: Path, folder: Path) -> None:
    valid = _valid(spec, folder, fast=spec.stem not in AUDITED)
    if spec.stem in AUDITED:
        assert valid, "no mutant passed validation: the audit half of the test would be vacuous"
        for label, path in valid:
            _audit(label, path, located=True)


@pytest.mark.slow
@pytest.mark.parametrize("spec", sorted(SPECS.glob("*.toml")), ids=lambda p: p.stem)
def test_every_valid_hostile_float_is_audited_honestly(spec: Path, folder: Path) -> None:
    for label, path in _valid(spec, folder):
        _audit(label, path)


@pytest.mark.parametrize(
    ("old", "new", "key"),
    [
        ("{ epsilon = 0.25, delta = 1e-9 }", "{ epsilon = 20000.0, delta = 1e-9 }", "mechanism.components[1].epsilon"),
        ("{ mu = 0.5 }", "{ mu = 1e10 }", "mechanism.components[2].mu"),
        ("guarantee = { epsilon = 8.0,", "guarantee = { epsilon = 1e6,", "claim.guarantee.epsilon"),
    ],
)
def test_guarantees_beyond_the_stated_limits_are_refused_naming_the_key(old: str, new: str, key: str) -> None:
    text = (SPECS / "release-mixed-components.toml").read_text()
    assert old in text
    with pytest.raises(InvalidSpec, match=re.escape(key) + r": must be at most (10000|1e\+24), got"):
        loads(text.replace(old, new))


def test_a_composed_component_whose_doubled_delta_reaches_one_is_answered(folder: Path) -> None:
    """Semi-DP doubles a component's (eps, delta) to (2 eps, e^eps delta) -> (60, 1): a law with no finite mass,
    whose tilt was log 0 (NaN). The profile is 1 at every epsilon: the 8-epsilon claim is refuted."""
    text = (SPECS / "release-mixed-components.toml").read_text().replace("epsilon = 0.25, delta", "epsilon = 30, delta")
    path = folder / "doubled-delta-one.toml"
    path.write_text(text)
    got = run_spec(str(path), JobOptions(time_limit=30.0, seed=1))
    assert got.status == "ok" and got.value is not None, got.message
    assert got.value.verdict == "fails"


def test_a_huge_rho_whose_delta_bound_overflows_is_compared_not_crashed(folder: Path) -> None:
    """``zcdp = 1e15`` on a workload spec: the claim's delta bound overflowed to inf and the exact comparison
    raised OverflowError (an internal error); inf now compares as itself: the (1, 1e-7) claim is refuted."""
    text = (SPECS / "wikimedia-pageviews-daily.toml").read_text()
    assert "guarantee = { zcdp = 0.015 }" in text
    path = folder / "huge-rho.toml"
    path.write_text(text.replace("guarantee = { zcdp = 0.015 }", "guarantee = { zcdp = 1e15 }"))
    got = run_spec(str(path), JobOptions(time_limit=30.0, seed=1))
    assert got.status == "ok" and got.value is not None, got.message
    assert got.value.verdict == "fails"
