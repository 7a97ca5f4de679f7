"""A corpus of malformed and hostile specs and options (issue Step 7): each exits 2, names what is wrong,
prints no traceback, and answers at once.

Every case edits one valid spec; the expected text is the key (or option) the message must name.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from semidp.verify.cli import main

BASE = """version = 1
name = "base"
[data]
features = [{ name = "A", levels = 3 }, { name = "B", levels = 3 }]
adjacency = "replace-one"
table = [1, 1, 0, 0, 0, 1, 1, 0, 0]
[invariant]
kind = "margins"
margins = [["A"], ["B"]]
[query]
kind = "histogram"
[mechanism]
kind = "projected-gaussian"
mu = 1.0
[claim]
framework = "semi-dp"
guarantee = { mu = 1.0 }
[report]
deltas = [1e-6]
[audit]
samples = 50
seed = 7
"""
PUBLISHED = BASE.replace('kind = "projected-gaussian"\nmu = 1.0', 'kind = "published"\nguarantee = { zcdp = 0.5 }')


def _sub(old: str, new: str, base: str = BASE) -> str:
    assert old in base, old
    return base.replace(old, new, 1)


#: (id, spec text, text the message must contain)
CASES: list[tuple[str, str, str]] = [
    ("not-toml", "version = 1\nname = [", "not valid TOML"),
    ("empty", "", "version: missing"),
    ("version-2", _sub("version = 1", "version = 2"), "version: must be 1"),
    ("version-string", _sub("version = 1", 'version = "1"'), "version: expected an integer"),
    ("name-caps", _sub('name = "base"', 'name = "Base Spec"'), "name:"),
    ("name-missing", _sub('name = "base"\n', ""), "name: missing"),
    ("unknown-top-key", "colour = 1\n" + BASE, "colour: unknown key"),
    ("data-missing", re.sub(r"\[data\].*?(?=\[invariant\])", "", BASE, flags=re.S), "data: missing"),
    (
        "features-empty",
        _sub('features = [{ name = "A", levels = 3 }, { name = "B", levels = 3 }]', "features = []"),
        "data.features",
    ),
    (
        "features-not-array",
        _sub('features = [{ name = "A", levels = 3 }, { name = "B", levels = 3 }]', 'features = "A"'),
        "data.features: expected an array",
    ),
    ("levels-zero", _sub('{ name = "B", levels = 3 }', '{ name = "B", levels = 0 }'), "data.features[1].levels"),
    (
        "levels-float",
        _sub('{ name = "B", levels = 3 }', '{ name = "B", levels = 3.5 }'),
        "data.features[1].levels: expected an integer",
    ),
    ("levels-bool", _sub('{ name = "B", levels = 3 }', '{ name = "B", levels = true }'), "data.features[1].levels"),
    ("feature-dup", _sub('{ name = "B", levels = 3 }', '{ name = "A", levels = 3 }'), "data.features"),
    (
        "feature-typo-key",
        _sub('{ name = "B", levels = 3 }', '{ name = "B", level = 3 }'),
        "data.features[1].level: unknown key; did you mean 'levels'?",
    ),
    ("adjacency-typo", _sub('adjacency = "replace-one"', 'adjacency = "replace"'), "data.adjacency"),
    ("adjacency-key-typo", _sub("adjacency =", "adjacncy ="), "data.adjacncy: unknown key; did you mean 'adjacency'?"),
    ("table-short", _sub("table = [1, 1, 0, 0, 0, 1, 1, 0, 0]", "table = [1, 1, 0]"), "data.table: has 3 counts"),
    (
        "table-negative",
        _sub("table = [1, 1, 0, 0, 0, 1, 1, 0, 0]", "table = [1, -1, 0, 0, 0, 1, 1, 0, 0]"),
        "data.table: counts must be >= 0",
    ),
    (
        "table-float",
        _sub("table = [1, 1, 0, 0, 0, 1, 1, 0, 0]", "table = [1.5, 1, 0, 0, 0, 1, 1, 0, 0]"),
        "data.table[0]: expected an integer",
    ),
    ("records-mismatch", _sub('adjacency = "replace-one"', 'adjacency = "replace-one"\nrecords = 7'), "data.records"),
    ("records-negative", _sub('adjacency = "replace-one"', 'adjacency = "replace-one"\nrecords = -1'), "data.records"),
    ("invariant-kind", _sub('kind = "margins"', 'kind = "marginal"'), "invariant.kind"),
    (
        "margins-unknown-feature",
        _sub('margins = [["A"], ["B"]]', 'margins = [["A"], ["C"]]'),
        "invariant.margins: unknown feature 'C'",
    ),
    ("margins-missing", _sub('margins = [["A"], ["B"]]\n', ""), "invariant.margins: required"),
    (
        "matrix-with-margins",
        _sub('margins = [["A"], ["B"]]', 'margins = [["A"], ["B"]]\nmatrix = [[1]]'),
        "invariant.matrix: only allowed",
    ),
    (
        "linear-short-row",
        _sub('kind = "margins"\nmargins = [["A"], ["B"]]', 'kind = "linear"\nmatrix = [[1, 1]]'),
        "invariant.matrix[0]: has 2 entries",
    ),
    (
        "counting-out-of-range",
        _sub('kind = "margins"\nmargins = [["A"], ["B"]]', 'kind = "counting"\nsets = [[0, 9]]'),
        "invariant.sets[0]: cell indices [9]",
    ),
    (
        "mechanism-kind-unknown",
        _sub('kind = "projected-gaussian"', 'kind = "projected-gausian"'),
        "mechanism.kind: 'projected-gausian' is not one of",
    ),
    ("mechanism-kind-missing", _sub('kind = "projected-gaussian"\n', ""), "mechanism.kind: missing"),
    ("mechanism-kind-number", _sub('kind = "projected-gaussian"', "kind = 3"), "mechanism.kind"),
    ("mechanism-foreign-key", _sub("mu = 1.0\n", "mu = 1.0\ntheta0 = 1.0\n"), "mechanism.theta0: unknown key"),
    ("mu-negative", _sub("mu = 1.0\n", "mu = -1.0\n"), "mechanism.mu: must be > 0"),
    ("mu-and-epsilon", _sub("mu = 1.0\n", "mu = 1.0\nepsilon = 1.0\ndelta = 1e-6\n"), "mechanism.mu"),
    ("epsilon-without-delta", _sub("mu = 1.0\n", "epsilon = 1.0\n"), "mechanism.delta"),
    ("mu-string", _sub("mu = 1.0\n", 'mu = "one"\n'), "mechanism.mu"),
    ("mu-bad-fraction", _sub("mu = 1.0\n", 'mu = "1/0"\n'), "mechanism.mu"),
    ("table-missing-for-draws", _sub("table = [1, 1, 0, 0, 0, 1, 1, 0, 0]\n", ""), "data.table: required"),
    (
        "laplace-with-delta",
        _sub('kind = "projected-gaussian"\nmu = 1.0', 'kind = "laplace"\nepsilon = 1.0\ndelta = 0.1'),
        "mechanism.epsilon",
    ),
    (
        "query-linear-for-draws",
        _sub('kind = "histogram"', 'kind = "linear"\nmatrix = [[1, 0, 0, 0, 0, 0, 0, 0, 0]]'),
        "query.kind",
    ),
    (
        "published-both",
        _sub("guarantee = { zcdp = 0.5 }", "guarantee = { zcdp = 0.5 }\ncomponents = [{ mu = 1 }]", PUBLISHED),
        "mechanism.guarantee",
    ),
    ("published-none", _sub("guarantee = { zcdp = 0.5 }\n", "", PUBLISHED), "mechanism.guarantee"),
    (
        "guarantee-two-forms",
        _sub("guarantee = { zcdp = 0.5 }", "guarantee = { zcdp = 0.5, mu = 1 }", PUBLISHED),
        "exactly one form",
    ),
    (
        "guarantee-delta-alone",
        _sub("guarantee = { zcdp = 0.5 }", "guarantee = { delta = 0.1 }", PUBLISHED),
        "delta goes with epsilon",
    ),
    (
        "guarantee-delta-big",
        _sub("guarantee = { zcdp = 0.5 }", "guarantee = { epsilon = 1, delta = 2 }", PUBLISHED),
        "mechanism.guarantee.delta: must be in [0, 1]",
    ),
    (
        "rdp-alpha-one",
        _sub("guarantee = { zcdp = 0.5 }", "guarantee = { rdp = { alpha = 1, epsilon = 1 } }", PUBLISHED),
        "mechanism.guarantee.rdp.alpha: must be > 1",
    ),
    ("components-empty", _sub("guarantee = { zcdp = 0.5 }", "components = []", PUBLISHED), "mechanism.components"),
    ("claim-framework", _sub('framework = "semi-dp"', 'framework = "semi"'), "claim.framework"),
    (
        "claim-unsupported-framework",
        _sub('framework = "semi-dp"', 'framework = "integer-subspace-dp"'),
        "claim.framework",
    ),
    ("claim-guarantee-missing", _sub("guarantee = { mu = 1.0 }\n", ""), "claim.guarantee: missing"),
    ("deltas-zero", _sub("deltas = [1e-6]", "deltas = [0]"), "report.deltas[0]: must be in (0, 1)"),
    ("deltas-one", _sub("deltas = [1e-6]", "deltas = [1.0]"), "report.deltas[0]"),
    ("samples-zero", _sub("samples = 50", "samples = 0"), "audit.samples: must be >= 1"),
    ("seed-string", _sub("seed = 7", 'seed = "seven"'), "audit.seed: expected an integer"),
    (
        "umpu-not-2x2",
        _sub(
            'kind = "projected-gaussian"\nmu = 1.0',
            'kind = "umpu-odds-ratio"\nnoise = { cnd = "tulap", epsilon = 1.0 }',
        ),
        "data.features",
    ),
    (
        "umpu-noise-missing",
        _sub('kind = "projected-gaussian"\nmu = 1.0', 'kind = "umpu-odds-ratio"'),
        "mechanism.noise",
    ),
    (
        "lattice-rho-missing",
        _sub('kind = "projected-gaussian"\nmu = 1.0', 'kind = "generalized-gaussian"'),
        "mechanism.rho",
    ),
    (
        "lattice-sampler-tv",
        _sub(
            'kind = "projected-gaussian"\nmu = 1.0', 'kind = "generalized-laplace"\nepsilon = 1.0\nsampler = { tv = 2 }'
        ),
        "mechanism.sampler.tv",
    ),
]


@pytest.mark.parametrize("text, named", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_malformed_spec_exits_2_naming_the_problem(
    text: str, named: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = tmp_path / "bad.toml"
    spec.write_text(text, encoding="utf-8")
    assert main(["audit", str(spec), "--time-limit", "20"]) == 2
    out = capsys.readouterr()
    assert named in out.err, out.err
    assert "Traceback" not in out.err + out.out


def test_the_corpus_is_large() -> None:
    assert len(CASES) >= 50 and len({c[0] for c in CASES}) == len(CASES)


@pytest.mark.parametrize(
    "argv, named",
    [
        (["audit"], "the following arguments are required"),
        (["audit", "missing.toml"], "cannot read the file"),
        (["audit", "x.toml", "--seed", "-3"], "--seed"),
        (["audit", "x.toml", "--time-limit", "-1"], "--time-limit"),
        (["audit", "x.toml", "--time-limit", "inf"], "--time-limit"),
        (["frobnicate"], "invalid choice"),
    ],
)
def test_bad_command_lines_exit_2(argv: list[str], named: str, capsys: pytest.CaptureFixture[str]) -> None:
    try:
        code = main(argv)
    except SystemExit as e:  # argparse exits 2 itself
        code = int(e.code or 0)
    assert code == 2
    err = capsys.readouterr().err
    assert named in err and "Traceback" not in err
