"""Huge zCDP parameters (issue 21, Step 17.5): a rho between 1e15 and the spec limit 1e24 is decided or refused
naming its key and the limit, never "cannot be evaluated" without a key nor an internal error.

Before: ``mechanism.guarantee = { zcdp = 1e17 .. 1e24 }`` on a workload spec ended exit 2 "an interval end beyond
2^16384" (the CKS bound's exponent left the exact arithmetic's range) naming no key; a measurements row with
``rho = 1e13`` or more was an internal OverflowError in the PLD engine.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from semidp.verify.spec_job import JobOptions, run_spec
from semidp.verify.workload_spec import MAX_MEASUREMENT_RHO

ROOT = Path(__file__).resolve().parents[2]
SPECS = ROOT / "specs"
UNITS = "census-2020-pl94-units-us"
ROW = "State,detailed,11417641/31231678045"


@pytest.mark.parametrize("rho", ["1e17", "1e20", "1e24"])
def test_a_huge_published_zcdp_is_refuted_from_the_gaussian_lower_bound(tmp_path: Path, rho: str) -> None:
    # the CKS upper bound exceeds 1 (delta <= 1 trivially); the Gaussian with mu = sqrt(2 rho) gives delta(1) ~ 1
    text = (SPECS / "wikimedia-pageviews-daily.toml").read_text()
    assert "guarantee = { zcdp = 0.015 }" in text
    path = tmp_path / "huge.toml"
    path.write_text(text.replace("guarantee = { zcdp = 0.015 }", f"guarantee = {{ zcdp = {rho} }}"))
    got = run_spec(str(path), JobOptions(time_limit=30.0, seed=1))
    assert got.status == "ok" and got.value is not None, (got.kind, got.message)
    assert got.value.verdict == "fails"


def _units(tmp_path: Path, row: str) -> Path:
    folder = tmp_path / "specs"
    shutil.copytree(SPECS, folder, ignore=shutil.ignore_patterns("*.npz", "*.npy"))
    csv = (folder / f"{UNITS}.csv").read_text()
    assert ROW in csv
    (folder / f"{UNITS}.csv").write_text(csv.replace(ROW, row, 1))
    return folder / f"{UNITS}.toml"


@pytest.mark.parametrize(
    ("row", "shown"),
    [
        ("State,detailed,1e14", "rho must be at most 1e+08"),
        ("State,detailed,1e300", "rho must be at most 1e+08"),
        ("State,detailed,100000001", "rho must be at most 1e+08"),
    ],
)
def test_a_measurement_rho_beyond_the_limit_names_file_line_column_and_limit(
    tmp_path: Path, row: str, shown: str
) -> None:
    got = run_spec(str(_units(tmp_path, row)), JobOptions(time_limit=30.0, seed=1))
    assert got.status == "error" and got.kind == "invalid", (got.kind, got.message)
    assert "mechanism.measurements: " in got.message and f"{UNITS}.csv, line 3, column rho: " in got.message
    assert shown in got.message and "out of range" in got.message


def test_a_sigma2_below_the_limit_is_refused_like_its_rho(tmp_path: Path) -> None:
    spec = _units(tmp_path, ROW)
    csv = spec.with_suffix(".csv")
    lines = csv.read_text().splitlines()
    lines = ["geolevel,query,sigma2"] + [",".join(line.split(",")[:2] + ["1"]) for line in lines[1:]]
    lines[2] = "State,detailed,1e-14"
    csv.write_text("\n".join(lines) + "\n")
    got = run_spec(str(spec), JobOptions(time_limit=30.0, seed=1))
    assert got.kind == "invalid", (got.kind, got.message)
    assert "line 3, column sigma2: '1e-14' is out of range: rho = 1/sigma2 must be at most 1e+08" in got.message


def test_every_row_at_the_limit_is_audited(tmp_path: Path) -> None:
    # was: from about 1e13 an internal OverflowError; at the limit an honest verdict (the CLI refutes the claim at
    # epsilon >= 4.93; here the PLD bracket's lower end may be 0 under load: inconclusive, never "holds")
    spec = _units(tmp_path, ROW)
    csv = spec.with_suffix(".csv")
    lines = csv.read_text().splitlines()
    csv.write_text("\n".join([lines[0]] + [",".join(x.split(",")[:2] + [str(MAX_MEASUREMENT_RHO)]) for x in lines[1:]]))
    got = run_spec(str(spec), JobOptions(time_limit=60.0, seed=1))
    assert got.status == "ok" and got.value is not None, (got.kind, got.message)
    assert got.value.verdict in ("fails", "inconclusive")
