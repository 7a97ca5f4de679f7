"""Hostile spec values and files: every bad input is exit 2 naming its key, quickly (issue Step 17, deliverable 5).

Sizes and exponents are checked before any arithmetic (``Fraction("1e999999999")`` computes 10^999999999 and
burned CPU until the hard stop: exit 3 after the whole budget), problems are capped (a million bad rows
printed 98 MB), and non-UTF-8 files and data spaces too large for an array are located input errors, not
"internal error". "Quickly" is asserted as exit 2 under a generous ``--time-limit``: a CPU sink ends at the
hard stop with exit 3 instead.
"""

from __future__ import annotations

import contextlib
import io
from fractions import Fraction
from pathlib import Path

import pytest

from semidp.verify.cli import main
from semidp.verify.spec_numbers import MAX_DECIMAL_EXPONENT, NumberRefused, exact_number

ROOT = Path(__file__).resolve().parents[2]
UNITS_SPEC = ROOT / "specs" / "census-2020-pl94-units-us.toml"
UNITS_CSV = ROOT / "specs" / "census-2020-pl94-units-us.csv"
CSV_NAME = "census-2020-pl94-units-us.csv"

MINIMAL = """version = 1
name = "toy"
[data]
features = [{ name = "state", levels = 3 }]
[invariant]
kind = "margins"
margins = [["state"]]
[mechanism]
kind = "published"
guarantee = { zcdp = 0.5 }
"""


def _cli(spec: Path, *extra: str) -> tuple[int, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["audit", str(spec), "--quiet", "--time-limit", "20", *extra])
    return code, out.getvalue() + err.getvalue()


def _spec(tmp_path: Path, text: str) -> Path:
    spec = tmp_path / "spec.toml"
    spec.write_text(text)
    return spec


def _workload(tmp_path: Path, csv_bytes: bytes) -> Path:
    (tmp_path / CSV_NAME).write_bytes(csv_bytes)
    return _spec(tmp_path, UNITS_SPEC.read_text())


@pytest.mark.parametrize(
    "value", ['"1e999999999"', '"1e-999999999"', '"-1E+999999999"', '"1_0e9_9999_9999"', "1e999999999"]
)
def test_a_huge_exponent_is_refused_before_any_arithmetic(tmp_path: Path, value: str) -> None:
    spec = _spec(tmp_path, MINIMAL.replace("zcdp = 0.5", f"zcdp = {value}"))
    code, text = _cli(spec)
    assert code == 2, text  # the CPU sink ran until the hard stop: exit 3
    assert "mechanism.guarantee.zcdp: " in text
    assert "decimal exponent beyond +-400" in text or "inf is not a finite number" in text


def test_a_huge_exponent_in_a_measurements_cell_is_refused_with_its_line_and_column(tmp_path: Path) -> None:
    lines = UNITS_CSV.read_text().splitlines()
    lines[2] = "State,detailed,1e999999999"
    code, text = _cli(_workload(tmp_path, ("\n".join(lines) + "\n").encode()))
    assert code == 2, text
    assert f"{CSV_NAME}, line 3, column rho: '1e999999999' has a decimal exponent beyond +-400" in text


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ('"1e400"', "out of range"),  # within the exponent bound, beyond the float range
        ('"1e-400"', "out of range"),  # would round to 0.0: an optimistic delta or rho
        ("1e-320", "out of range"),  # a subnormal TOML float
        ('"' + "1" * 401 + '"', "at most 400"),
        ("1" + "0" * 400, "beyond 1e+300"),  # a TOML integer of 401 digits
    ],
)
def test_magnitudes_outside_the_float_range_are_refused(tmp_path: Path, value: str, message: str) -> None:
    spec = _spec(tmp_path, MINIMAL.replace("zcdp = 0.5", f"zcdp = {value}"))
    code, text = _cli(spec)
    assert code == 2 and "mechanism.guarantee.zcdp: " in text and message in text, text


def test_exact_number_bounds() -> None:
    assert exact_number(f"1e{MAX_DECIMAL_EXPONENT - 100}") == Fraction(10) ** 300
    assert exact_number("1e-300") == Fraction(1, 10**300) and exact_number(0) == 0 and exact_number("-0.0") == 0
    for bad in (f"1e{MAX_DECIMAL_EXPONENT + 1}", "nan", "inf", "1/0", "", float("inf"), True, None):
        with pytest.raises(NumberRefused):
            exact_number(bad)


def test_a_toml_integer_beyond_pythons_digit_limit_is_invalid_toml_not_internal(tmp_path: Path) -> None:
    spec = _spec(tmp_path, MINIMAL.replace("levels = 3", "levels = " + "9" * 5000))
    code, text = _cli(spec)
    assert code == 2 and "not valid TOML" in text and "internal error" not in text


def test_many_bad_rows_print_the_first_20_problems_and_a_count(tmp_path: Path) -> None:
    """The probe: 10^6 bad rows printed 98 MB of problems. 10^5 here (the cap does not depend on the count)."""
    rows = 100_000
    body = "geolevel,query,rho\n" + "Nowhere,detailed,1/2\n" * rows
    code, text = _cli(_workload(tmp_path, body.encode()))
    assert code == 2
    assert text.count("column geolevel: 'Nowhere' is not in data.geography") == 20
    assert f"{rows - 20} more problem(s) not listed (the first 20 are)" in text
    assert len(text) < 10_000  # not megabytes


def test_a_spec_with_many_problems_lists_20_and_counts_the_rest(tmp_path: Path) -> None:
    feats = ", ".join(f'{{ name = "f{i}", levels = 0 }}' for i in range(30))
    spec = _spec(tmp_path, MINIMAL.replace('{ name = "state", levels = 3 }', feats).replace('"state"', '"f0"'))
    code, text = _cli(spec)
    assert code == 2 and "must be >= 1" in text
    assert text.count("  - ") == 21 and "more problem(s), not listed" in text


def test_a_non_utf8_measurements_file_is_a_located_input_error(tmp_path: Path) -> None:
    body = UNITS_CSV.read_bytes().replace(b"State,detailed", b"St\xe4te,detailed")  # Latin-1
    code, text = _cli(_workload(tmp_path, body))
    assert code == 2 and "internal error" not in text
    assert "mechanism.measurements: file 'census-2020-pl94-units-us.csv': line 3, byte" in text
    assert "not UTF-8 text" in text


def test_a_non_utf8_spec_is_a_located_input_error(tmp_path: Path) -> None:
    spec = tmp_path / "spec.toml"
    spec.write_bytes(MINIMAL.replace('"toy"', '"to\xffy"').encode("latin-1"))
    code, text = _cli(spec)
    assert code == 2 and "internal error" not in text and "line 2, byte" in text and "not UTF-8" in text


def test_a_nul_byte_in_a_measurements_file_is_a_located_input_error(tmp_path: Path) -> None:
    body = UNITS_CSV.read_bytes().replace(b"County,detailed", b"County\x00,detailed")
    code, text = _cli(_workload(tmp_path, body))
    assert code == 2 and "internal error" not in text
    assert f"{CSV_NAME}, line 4, column geolevel: 'County\\x00' is not in data.geography" in text


def test_a_data_space_too_large_for_an_array_is_a_located_input_error(tmp_path: Path) -> None:
    feats = '{ name = "a", levels = 1000000000000 }, { name = "b", levels = 1000000000000 }'
    spec = _spec(tmp_path, MINIMAL.replace('{ name = "state", levels = 3 }', feats).replace('"state"', '"a"'))
    code, text = _cli(spec)
    assert code == 2 and "internal error" not in text
    assert "data.features: the data space has 1e+24 cells" in text


def test_a_count_beyond_an_int64_is_a_located_input_error(tmp_path: Path) -> None:
    """A ``data.table`` count of 10^30 was cast to int64: "internal error: OverflowError"."""
    spec = _spec(tmp_path, MINIMAL.replace("levels = 3 }]", "levels = 3 }]\ntable = [" + "1" + "0" * 30 + ", 0, 0]"))
    code, text = _cli(spec)
    assert code == 2 and "internal error" not in text
    assert "data.table: counts must be at most 2^53" in text
