"""A spec fuzzer (issue Step 7): random valid and invalid specs never produce a traceback, and the exit code
agrees with the verdict of the JSON report.

Specs are small (at most two features of at most three levels) so each audit takes well under a second;
values include the edges of their domains and beyond (0, negatives, huge numbers, NaN, strings).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from semidp.verify.cli import main

EXIT_OF = {"holds": 0, "fails": 1, "inconclusive": 3}

valid_numbers = st.one_of(st.floats(min_value=1e-6, max_value=50).map(repr), st.sampled_from(["1", "0.5", '"1/3"']))
edge_numbers = st.sampled_from(["0", "1e-300", "1e300", "-1", "nan", "inf", '"x"', "true"])
numbers = st.one_of(valid_numbers, valid_numbers, valid_numbers, edge_numbers)
deltas = st.sampled_from(["1e-10", "1e-6", "0.5", "1e-10", "1e-6", "0", "1", "-0.1"])
guarantee = st.one_of(
    numbers.map(lambda v: f"{{ zcdp = {v} }}"),
    numbers.map(lambda v: f"{{ mu = {v} }}"),
    st.tuples(numbers, deltas).map(lambda t: f"{{ epsilon = {t[0]}, delta = {t[1]} }}"),
    numbers.map(lambda v: f"{{ epsilon = {v} }}"),
    st.tuples(numbers, numbers).map(lambda t: f"{{ rdp = {{ alpha = {t[0]}, epsilon = {t[1]} }} }}"),
    st.sampled_from(["{}", "{ zcdp = 1, mu = 1 }", '"loose"']),
)


@st.composite
def specs(draw: st.DrawFn) -> str:
    levels = draw(st.lists(st.sampled_from([1, 2, 2, 3, 3, 0]), min_size=1, max_size=2))
    names = ["A", "B"][: len(levels)]
    feats = ", ".join(f'{{ name = "{n}", levels = {k} }}' for n, k in zip(names, levels))
    cells = 1
    for k in levels:
        cells *= max(k, 1)
    inv = draw(st.sampled_from(["none", "total", "margins", "margins", "margins-bad"]))
    inv_text = {
        "none": 'kind = "none"',
        "total": 'kind = "total"',
        "margins": f'kind = "margins"\nmargins = [["{names[0]}"]]',
        "margins-bad": 'kind = "margins"\nmargins = [["Z"]]',
    }[inv]
    table = draw(
        st.one_of(st.none(), st.lists(st.sampled_from([0, 1, 2, 3, 1, 2, -1]), min_size=cells, max_size=cells))
    )
    table_text = "" if table is None else f"table = {table}\n"
    adjacency = draw(st.sampled_from(["replace-one", "replace-one", "add-remove", "swap"]))
    framework = draw(st.sampled_from(["dp", "semi-dp", "semi-dp", "subspace-dp"]))
    claim = "" if draw(st.booleans()) else f'[claim]\nframework = "{framework}"\nguarantee = {draw(guarantee)}\n'
    return (
        f'version = 1\nname = "fuzz"\n[data]\nfeatures = [{feats}]\nadjacency = "{adjacency}"\n{table_text}'
        f'[invariant]\n{inv_text}\n[mechanism]\nkind = "published"\nguarantee = {draw(guarantee)}\n'
        f"{claim}[report]\ndeltas = [{draw(deltas)}]\n"
    )


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=specs())
def test_fuzzed_specs_never_crash_and_exit_codes_match_verdicts(
    text: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = tmp_path / "fuzz.toml"
    spec.write_text(text, encoding="utf-8")
    code = main(["audit", str(spec), "--json", "--time-limit", "5"])
    out = capsys.readouterr()
    assert "Traceback" not in out.err + out.out
    assert "internal error" not in out.err, f"{out.err}\n{text}"
    assert code in (0, 1, 2, 3)
    if code == 2:
        assert out.err.startswith("semidp: ")
    else:
        assert EXIT_OF[json.loads(out.out)["verdict"]] == code
