"""No message contradicts another, and user input never reads as "internal error ... please report it"
(issue Step 18.5)."""

from __future__ import annotations

from pathlib import Path

import pytest

from semidp.accountant.core.errors import InvalidSpec
from semidp.verify.cli import main
from semidp.verify.load import loads

WORKLOAD = """
version = 1
name = "x"
[data]
features = [{ name = "state", levels = 3 }]
[invariant]
kind = "margins"
margins = [["state"]]
[mechanism]
kind = "published"
nosie = "gaussian"
measurements = "m.csv"
"""


def _problems(text: str) -> list[str]:
    with pytest.raises(InvalidSpec) as e:
        loads(text)
    return list(e.value.problems)


def test_a_mistyped_required_key_is_reported_once_as_the_typo() -> None:
    probs = _problems(WORKLOAD)
    assert "mechanism.nosie: unknown key; did you mean 'noise'?" in probs
    assert not any(p.startswith("mechanism.noise:") for p in probs), probs  # not also "required"
    assert any(p.startswith("data.geography: required") for p in probs)  # other problems stay


def test_a_required_key_without_a_typo_is_still_required() -> None:
    probs = _problems(WORKLOAD.replace('nosie = "gaussian"\n', ""))
    assert "mechanism.noise: required with mechanism.measurements" in probs


def test_a_mistyped_required_field_of_a_table_is_reported_once() -> None:
    text = WORKLOAD.replace('nosie = "gaussian"\nmeasurements = "m.csv"\n', "guarantee = { zcdp = 1 }\n")
    probs = _problems(text.replace('kind = "margins"', 'knid = "margins"'))
    assert "invariant.knid: unknown key; did you mean 'kind'?" in probs
    assert not any(p.startswith("invariant.kind:") for p in probs), probs


def test_the_cli_prints_only_the_typo(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    spec = tmp_path / "x.toml"
    spec.write_text(WORKLOAD)
    assert main(["audit", str(spec)]) == 2
    err = capsys.readouterr().err
    assert "did you mean 'noise'?" in err and "mechanism.noise: required" not in err


CENSUS_TOTAL = Path(__file__).resolve().parents[1] / "specs" / "census-2020-total.toml"


def test_a_data_space_too_large_to_index_is_a_located_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Levels multiplying past what numpy can index were an "internal error ... please report it"."""
    text = CENSUS_TOTAL.read_text(encoding="utf-8")
    assert '{ name = "state", levels = 52 }' in text
    spec = tmp_path / "huge.toml"
    spec.write_text(text.replace('{ name = "state", levels = 52 }', '{ name = "state", levels = 1000000000000000000 }'))
    assert main(["audit", str(spec), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert (
        "data.features: the data space has 2.016e+21 cells" in err and "at most 2^40" in err and "internal" not in err
    )


def test_too_many_draws_is_a_located_error() -> None:
    text = CENSUS_TOTAL.read_text(encoding="utf-8") + "\n[audit]\nsamples = 1000000000000000000000000000000\n"
    assert any(p == "audit.samples: must be at most 2^40, got 1e+30" for p in _problems(text))


def test_a_spec_that_is_not_utf8_is_a_located_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    spec = tmp_path / "latin1.toml"
    spec.write_bytes(CENSUS_TOTAL.read_bytes().replace(b"# ", "# é ".encode("latin-1"), 1))
    assert main(["audit", str(spec), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "not UTF-8 text" in err and "internal" not in err


def test_a_workload_without_report_deltas_is_a_located_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An empty ``report.deltas`` was an IndexError in the workload report ("internal error")."""
    specs = CENSUS_TOTAL.parent
    text = (specs / "census-2020-pl94-units-us.toml").read_text(encoding="utf-8")
    for data in specs.glob("census-2020-pl94-units-us*.csv"):
        (tmp_path / data.name).write_bytes(data.read_bytes())
    lines = [("deltas = []" if ln.startswith("deltas = ") else ln) for ln in text.splitlines()]
    assert "deltas = []" in lines
    (tmp_path / "w.toml").write_text("\n".join(lines) + "\n")
    assert main(["audit", str(tmp_path / "w.toml"), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "report.deltas: needs at least one delta with mechanism.measurements" in err and "internal" not in err
