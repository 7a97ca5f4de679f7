"""Measurement files as published: the table form ``{ file, columns, where }`` (issue Step 15, deliverable 1).

The four DHC specs read the Bureau's strategy file unchanged (specs/census-2020-dhc-strategy-rho.csv; sources
and SHA-256 in docs/reference/census-2020.md). Their headline figures are checked against an
independent computation: the zCDP total summed here by exact Fractions from the file, the CKS conversion
[CKS20, Cor. 13] minimised here with mpmath, the exact composition of the discrete Gaussians bracketed by
the continuous Gaussian composition it approaches (GDP with mu^2 = 2 rho [DRS22]), and the query-level
Semi-DP total 4 rho (no DHC query is fixed by a State or Block total: every measurement shifts by (-2, +2)
at the worst semi-adjacent pair, l2^2 = 8 instead of 2) [CA24, Prop. 15].
"""

from __future__ import annotations

import contextlib
import csv
import hashlib
import io
import json
import re
from fractions import Fraction
from pathlib import Path
from typing import Any

import mpmath
import pytest

from semidp.verify.cli import main

ROOT = Path(__file__).resolve().parents[1]
SPECS = ROOT / "specs"
DHC_CSV = SPECS / "census-2020-dhc-strategy-rho.csv"
DELTA = Fraction(1, 10**10)

#: spec -> (strategy, rows): the Bureau's four DHC production strategies.
DHC = {
    "census-2020-dhc-persons-us": ("DecompTestStrategyDHCP_20220922_exp_iteration_23_1", 80),
    "census-2020-dhc-persons-pr": ("DecompTestStrategyDHCP_PR_20220922_exp_iteration_23_1", 70),
    "census-2020-dhc-units-us": ("DecompTestStrategyDHCH_20220922_exp_iteration_23_1", 72),
    "census-2020-dhc-units-pr": ("DecompTestStrategyDHCH_PR_20220922_exp_iteration_23_1", 63),
}


def _cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main([*argv, "--quiet"])
    return code, out.getvalue(), err.getvalue()


def _strategy_rho(strategy: str) -> Fraction:
    """The strategy's total rho, summed here from the file by exact Fractions (independent of semidp's reader)."""
    with DHC_CSV.open(newline="") as f:
        return sum((Fraction(r["rho(exact)"]) for r in csv.DictReader(f) if r["strategy"] == strategy), Fraction(0))


def _cks_epsilon(rho: Fraction, delta: Fraction) -> float:
    """CKS20 Cor. 13, minimised over the order: eps = a rho + (a log(1 - 1/a) - log(a - 1) - log delta) / (a - 1)."""
    mpmath.mp.dps = 40
    r, d = mpmath.mpf(rho.numerator) / rho.denominator, mpmath.mpf(delta.numerator) / delta.denominator

    def eps(a: Any) -> Any:
        return a * r + (a * mpmath.log(1 - 1 / a) - mpmath.log(a - 1) - mpmath.log(d)) / (a - 1)

    grid = [1 + mpmath.mpf(2) ** (k / 8) for k in range(-160, 160)]
    best = min(grid, key=eps)
    lo, hi = best / 1.1 if best / 1.1 > 1 else (1 + best) / 2, best * 1.1
    for _ in range(200):  # golden-section refinement (eps is unimodal in the order)
        m1, m2 = lo + (hi - lo) * 0.382, lo + (hi - lo) * 0.618
        lo, hi = (lo, m2) if eps(m1) < eps(m2) else (m1, hi)
    return float(eps((lo + hi) / 2))


def _gdp_epsilon(mu: float, delta: float) -> float:
    """The exact (eps, delta) of mu-GDP [DRS22, Cor. 2.13], solved for eps with mpmath."""
    mpmath.mp.dps = 40
    m = mpmath.mpf(mu)

    def delta_at(e: Any) -> Any:
        return mpmath.ncdf(-e / m + m / 2) - mpmath.exp(e) * mpmath.ncdf(-e / m - m / 2)

    lo, hi = mpmath.mpf(0), mpmath.mpf(400)
    for _ in range(200):  # delta(eps) decreases in eps: bisection
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if delta_at(mid) > delta else (lo, mid)
    return float(hi)


def test_the_shipped_census_files_are_the_bureaus_unchanged() -> None:
    """Every Bureau file listed in docs/reference/census-2020.md has the SHA-256 recorded there."""
    note = (ROOT / "docs" / "reference" / "census-2020.md").read_text(encoding="utf-8")
    digests = dict(re.findall(r"^\| `(specs/[\w.-]+\.csv)` \| `([0-9a-f]{64})` \|$", note, flags=re.MULTILINE))
    assert set(digests) == {"specs/census-2020-pl94-persons-us.csv", DHC_CSV.relative_to(ROOT).as_posix()}
    for name, digest in digests.items():
        assert hashlib.sha256((ROOT / name).read_bytes()).hexdigest() == digest, name


def test_cks_reproduces_the_pl94_certificate() -> None:
    """The independent CKS minimiser gives the P.L. 94-171 persons certificate's 17.14 on rho = (542/339)^2."""
    assert _cks_epsilon(Fraction(542, 339) ** 2, DELTA) == pytest.approx(17.14, abs=0.005)


@pytest.fixture(scope="module")
def dhc_reports() -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for name in DHC:
        code, text, err = _cli("audit", str(SPECS / f"{name}.toml"), "--json", "--time-limit", "120")
        assert code in (0, 3), err  # no claim: figures only (3 only if a breakdown PLD ran out of time)
        out[name] = json.loads(text)
    return out


@pytest.mark.parametrize("name", list(DHC))
def test_dhc_headline_figures_match_an_independent_computation(
    name: str, dhc_reports: dict[str, dict[str, Any]]
) -> None:
    strategy, rows = DHC[name]
    r = dhc_reports[name]
    rho = _strategy_rho(strategy)
    assert r["workload"]["count"] == rows and r["workload"]["fixed"] in (0, [], None)
    adv = r["advertised"]
    # the certificate's accounting: the zCDP total (exact) and its CKS conversion
    assert Fraction(adv["rho_exact"]) == rho
    eds = {e["method"]: e for e in adv["epsilon_delta"] if e["delta"] == pytest.approx(1e-10)}
    cks = _cks_epsilon(rho, DELTA)
    assert cks <= eds["canonne-kamath-steinke"]["epsilon"] <= cks * (1 + 1e-9)  # rounded up, never down
    # the exact composition: a certified bracket, inside CKS, around the continuous-Gaussian value
    pld = eds["pld"]
    lo, up = pld["bracket"]["lower"], pld["bracket"]["upper"]
    gdp = _gdp_epsilon(float(2 * rho) ** 0.5, 1e-10)
    assert lo <= up <= cks and up - lo <= 0.01 * up
    assert abs(up - gdp) <= 1e-3 * gdp  # discrete Gaussians with sigma^2 >= 2 compose almost like Gaussians
    # query-level Semi-DP: every measurement shifts by (-2, +2): rho x 4
    eff = r["effective"]
    assert eff["method"] == "query-level" and Fraction(eff["rho_exact"]) == 4 * rho
    qeds = {e["method"]: e for e in eff["epsilon_delta"] if e["delta"] == pytest.approx(1e-10)}
    q_lo, q_up = qeds["pld"]["bracket"]["lower"], qeds["pld"]["bracket"]["upper"]
    q_gdp = _gdp_epsilon(float(8 * rho) ** 0.5, 1e-10)
    assert q_lo <= q_up <= _cks_epsilon(4 * rho, DELTA) and abs(q_up - q_gdp) <= 1e-3 * q_gdp


def _copy_table_spec(tmp_path: Path, csv_text: str, table: str) -> Path:
    (tmp_path / "m.csv").write_text(csv_text)
    text = (SPECS / "census-2020-pl94-units-us.toml").read_text()
    spec = tmp_path / "spec.toml"
    spec.write_text(text.replace('"census-2020-pl94-units-us.csv"', table))
    return spec


PUBLISHED = """release,level,what,rho(exact),rho,notes
A,US,detailed,1/3,0.333,first (the rounded column differs: it is not the one named)
A,State,detailed,1/5,0.2,"second, with a comma"
B,US,detailed,7/10,0.7,other release
A,County,detailed,1/20,0.05,
"""
TABLE = '{ file = "m.csv", columns = { geolevel = "level", query = "what", rho = "rho(exact)" }, where = { release = "A" } }'


def test_the_table_form_reads_named_columns_and_filtered_rows(tmp_path: Path) -> None:
    code, out, err = _cli("audit", str(_copy_table_spec(tmp_path, PUBLISHED, TABLE)), "--json")
    assert code != 2, err
    r = json.loads(out)
    assert [(m["line"], m["geolevel"]) for m in r["measurements"]] == [(2, "US"), (3, "State"), (5, "County")]
    assert Fraction(r["advertised"]["rho_exact"]) == Fraction(1, 3) + Fraction(1, 5) + Fraction(1, 20)
    assert r["workload"]["file"] == "m.csv"


@pytest.mark.parametrize(
    ("table", "message"),
    [
        (TABLE.replace('rho = "rho(exact)"', 'rho = "rho (exact)"'), "line 1, column 'rho (exact)': missing column"),
        (TABLE.replace('geolevel = "level"', 'geolevel = "geo"'), "line 1, column 'geo': missing column"),
        (TABLE.replace('release = "A"', 'release = "C"'), "mechanism.measurements.where: "),
        (TABLE.replace('{ release = "A" }', '{ edition = "A" }'), "line 1, column 'edition': missing column"),
        (TABLE.replace('rho = "rho(exact)"', 'rho = "rho", sigma2 = "notes"'), "name exactly one of rho"),
        (TABLE.replace('{ release = "A" }', "{ release = 1 }"), "mechanism.measurements.where: expected a table"),
        ("5", "mechanism.measurements: expected a str or a table"),
    ],
)
def test_table_form_errors_name_the_file_line_and_column(tmp_path: Path, table: str, message: str) -> None:
    code, _, err = _cli("audit", str(_copy_table_spec(tmp_path, PUBLISHED, table)))
    assert code == 2 and message in err, err


def test_a_filter_selecting_no_row_names_the_file_line_and_column(tmp_path: Path) -> None:
    code, _, err = _cli("audit", str(_copy_table_spec(tmp_path, PUBLISHED, TABLE.replace('"A"', '"C"'))))
    assert code == 2 and "m.csv, line 1, column(s) ['release']: no row has 'release' = 'C'" in err


def test_a_duplicate_geolevel_query_in_the_selected_rows_names_both_lines(tmp_path: Path) -> None:
    dup = PUBLISHED + "A,State,detailed,1/7,0.14,again\n"
    code, _, err = _cli("audit", str(_copy_table_spec(tmp_path, dup, TABLE)))
    assert code == 2 and "m.csv, line 6, column 'what': State 'detailed' repeats line 3" in err
    # the same pair in a row the filter drops is no duplicate
    other = PUBLISHED + "B,State,detailed,1/7,0.14,again\n"
    assert _cli("audit", str(_copy_table_spec(tmp_path, other, TABLE)))[0] != 2


def test_the_string_form_still_refuses_unknown_columns(tmp_path: Path) -> None:
    code, _, err = _cli("audit", str(_copy_table_spec(tmp_path, PUBLISHED, '"m.csv"')))
    assert code == 2 and "unknown column(s)" in err and "table form" in err
