"""Hostile noise parameters (issue 21, Step 17.5): every noise column of a measurements file (``scale``, ``sigma2``,
``rho``) and every float key of the Laplace kinds (``mechanism.scale``, ``mechanism.epsilon``) ends as a located
invalid spec naming the key (file, line and column for a file) and the limit, or as an honest verdict; never an
internal error, a NaN or a hang.

Before: a Laplace ``scale`` row of 1e-13 .. 1e-300 was an internal OverflowError (the PLD tilt's exp); the rho limit
(1e8, sigma2 >= 1e-8) had no Laplace counterpart. ``mechanism.scale = 1e-300`` ended "rho=inf must be finite" (laplace)
or "epsilon=inf" (gaussian) naming no key, or echoed a 600-digit fraction (discrete-laplace); ``mechanism.epsilon =
1e-300`` was an internal OverflowError; a discrete-laplace epsilon such as 0.1 (the float's 2^-55 fraction) or
1e30 ended "cannot be evaluated" naming no key.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from semidp.verify.report import Report
from semidp.verify.spec_job import JobOptions, run_spec
from semidp.verify.supervisor import Supervised
from semidp.verify.workload_spec import MIN_LAPLACE_SCALE

ROOT = Path(__file__).resolve().parents[2]
UNITS = "census-2020-pl94-units-us"
NOISE = 'noise = "discrete-gaussian"'


def _workload(folder: Path, noise: str, column: str, cell: str, *, every: bool = False) -> Path:
    """The units spec with ``noise``, its measurements in ``column`` (1, or 1/100 for rho) and ``cell`` on line 3
    (``every``: on every row)."""
    text = (ROOT / "specs" / f"{UNITS}.toml").read_text()
    assert NOISE in text
    spec = folder / f"{UNITS}.toml"
    spec.write_text(text.replace(NOISE, f'noise = "{noise}"'))
    rows = (ROOT / "specs" / f"{UNITS}.csv").read_text().splitlines()[1:]
    base = "1/100" if column == "rho" else "1"
    cells = [cell if every or i == 1 else base for i in range(len(rows))]
    lines = [f"geolevel,query,{column}"] + [",".join(r.split(",")[:2] + [c]) for r, c in zip(rows, cells)]
    spec.with_suffix(".csv").write_text("\n".join(lines) + "\n")
    return spec


def _honest(got: object) -> None:
    """A report with no NaN, or a located invalid spec; never an internal error or an unlocated one."""
    assert getattr(got, "kind", None) not in ("internal", "toolkit"), got
    value = getattr(got, "value", None)
    if value is not None:
        assert "NaN" not in json.dumps(value.to_json())


def _audited(spec: Path, time_limit: float = 30.0) -> Supervised[Report]:
    """The spec audited as ``semidp audit`` runs it (``--time-limit``, seed 1)."""
    return run_spec(str(spec), JobOptions(time_limit=time_limit, seed=1))


@pytest.mark.parametrize(
    ("noise", "column", "cell", "limit"),
    [
        # Laplace scale below the limit (1e-13 and below were internal OverflowErrors)
        ("laplace", "scale", "1e-300", "scale must be at least 1e-08"),
        ("laplace", "scale", "1e-20", "scale must be at least 1e-08"),
        ("laplace", "scale", "99999999/10000000000000000", "scale must be at least 1e-08"),
        ("discrete-laplace", "scale", "1e-300", "scale must be at least 1e-08"),
        ("discrete-laplace", "scale", "1e-9", "scale must be at least 1e-08"),
        # below every float, beyond the number range, or not a number
        ("laplace", "scale", "5e-324", "must lie in [1e-300, 1e+300]"),
        ("laplace", "scale", "1e999999999", "1e999999999"),
        ("laplace", "scale", "nan", "is not a number"),
        ("laplace", "scale", "inf", "is not a number"),
        ("laplace", "scale", "-0", "must be > 0"),
        ("laplace", "scale", "1/0", "is not a number"),
        ("discrete-gaussian", "sigma2", "1e-300", "rho = 1/sigma2 must be at most 1e+08"),
        ("discrete-gaussian", "sigma2", "5e-324", "must lie in [1e-300, 1e+300]"),
        ("discrete-gaussian", "sigma2", "nan", "is not a number"),
        ("gaussian", "rho", "5e-324", "must lie in [1e-300, 1e+300]"),
        ("gaussian", "rho", "1e300", "rho must be at most 1e+08"),
        ("gaussian", "rho", "inf", "is not a number"),
    ],
)
def test_a_noise_cell_beyond_its_limit_names_file_line_column_and_limit(
    tmp_path: Path, noise: str, column: str, cell: str, limit: str
) -> None:
    got = _audited(_workload(tmp_path, noise, column, cell))
    assert got.status == "error" and got.kind == "invalid", (got.kind, got.message)
    assert f"mechanism.measurements: {tmp_path / UNITS}.csv, line 3, column {column}: " in got.message
    assert limit in got.message, got.message


@pytest.mark.parametrize(
    ("noise", "column", "cell"),
    [
        ("laplace", "scale", "1e300"),  # that row protects everything; the others decide
        ("discrete-laplace", "scale", "1e300"),
        ("discrete-gaussian", "sigma2", "1e300"),
        ("gaussian", "rho", "1e-300"),
    ],
)
def test_a_huge_noise_cell_is_audited_honestly(tmp_path: Path, noise: str, column: str, cell: str) -> None:
    got = _audited(_workload(tmp_path, noise, column, cell))
    assert got.status == "ok" and got.value is not None, (got.kind, got.message)
    _honest(got)


@pytest.mark.parametrize("noise", ["laplace", "discrete-laplace"])
def test_every_laplace_row_at_the_limit_is_audited(tmp_path: Path, noise: str) -> None:
    # epsilon = Delta/scale ~ 2e8 per row: the claim cannot hold; refuted (or inconclusive under load), never "holds"
    got = _audited(_workload(tmp_path, noise, "scale", str(MIN_LAPLACE_SCALE), every=True), time_limit=60.0)
    assert got.status == "ok" and got.value is not None, (got.kind, got.message)
    _honest(got)
    assert got.value.verdict in ("fails", "inconclusive")


SPEC = """version = 1
name = "noise-keys"
[data]
features = [{{ name = "A", levels = 3 }}, {{ name = "B", levels = 3 }}]
adjacency = "replace-one"
table = [1, 1, 0, 0, 0, 1, 1, 0, 0]
[invariant]
kind = "total"
[mechanism]
kind = "{kind}"
{key} = {value}
[claim]
framework = "semi-dp"
guarantee = {{ epsilon = 1.0 }}
[report]
deltas = [1e-6]
[audit]
samples = 1000
seed = 7
"""


def _keyed(folder: Path, kind: str, key: str, value: str) -> Path:
    path = folder / "noise-keys.toml"
    path.write_text(SPEC.format(kind=kind, key=key, value=value))
    return path


@pytest.mark.parametrize(
    ("kind", "key", "value", "said"),
    [
        ("laplace", "scale", "1e-300", "must lie in [1e-08, 1e+08], got 1e-300"),
        ("laplace", "scale", "1e-9", "must lie in [1e-08, 1e+08], got 1e-09"),
        ("laplace", "scale", "100000001", "must lie in [1e-08, 1e+08], got 100000001.0"),
        ("laplace", "scale", "5e-324", "a nonzero magnitude must lie in [1e-300, 1e+300]"),
        ("laplace", "scale", "1e300", "a nonzero magnitude must lie in [1e-300, 1e+300]"),
        ("laplace", "scale", "-0.0", "must be > 0"),
        ("discrete-laplace", "scale", "1e-300", "must lie in [1e-08, 1e+08], got 1e-300"),
        ("discrete-laplace", "scale", "1e-8", "1e-08 = 3.02e+15/3.02e+23: numerator and denominator must be < 2**31"),
        ("gaussian", "scale", "1e-300", "must lie in [1e-08, 1e+08], got 1e-300"),
        ("laplace", "epsilon", "1e-300", "must lie in [1e-08, 10000], got 1e-300"),
        ("laplace", "epsilon", "10001", "must lie in [1e-08, 10000], got 10001.0"),
        ("laplace", "epsilon", "1e30", "must lie in [1e-08, 10000], got 1e+30"),
        ("discrete-laplace", "epsilon", "1e-300", "must lie in [1e-08, 10000], got 1e-300"),
        ("discrete-laplace", "epsilon", "1e30", "must lie in [1e-08, 10000], got 1e+30"),
        ("discrete-laplace", "epsilon", "0.1", "0.1 is not a short exact rational (denominator 3.6e+16 >= 2**31)"),
        ("discrete-laplace", "epsilon", "5e-324", "a nonzero magnitude must lie in [1e-300, 1e+300]"),
    ],
)
def test_a_laplace_kind_key_beyond_its_limit_is_exit_2_naming_key_and_limit(
    tmp_path: Path, kind: str, key: str, value: str, said: str
) -> None:
    got = _audited(_keyed(tmp_path, kind, key, value))
    assert got.status == "error" and got.kind == "invalid", (got.kind, got.message)
    assert f"  - mechanism.{key}: " in got.message and said in got.message, got.message
    assert len(got.message) < 600, got.message  # no 600-digit fraction echoed


@pytest.mark.parametrize(
    ("kind", "key", "value"),
    [
        ("laplace", "scale", "1e-8"),
        ("laplace", "scale", "1e8"),
        ("discrete-laplace", "scale", '"1/100000000"'),
        ("discrete-laplace", "scale", "1e8"),
        ("gaussian", "scale", "1e-8"),
        ("laplace", "epsilon", "1e-8"),
        ("laplace", "epsilon", "1e4"),
        ("discrete-laplace", "epsilon", '"1/100000000"'),
        ("discrete-laplace", "epsilon", "1e4"),
    ],
)
def test_a_laplace_kind_key_at_its_limit_is_audited_honestly(tmp_path: Path, kind: str, key: str, value: str) -> None:
    got = _audited(_keyed(tmp_path, kind, key, value))
    assert got.status == "ok" and got.value is not None, (got.kind, got.message)
    _honest(got)
