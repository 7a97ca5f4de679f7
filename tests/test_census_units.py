"""The 2020 Census P.L. 94-171 housing-units release (US): certificate goldens, exact DP, query-level Semi-DP.

Source of the certificate figures: DAS-PL94171-PRODUCTION-RUN1A-202106241420-US-Units certificate, via
docs/reference/census-2020.md (section "Units, US" and the certificate table; CKS on summed rho at
delta = 1e-10, printed at two decimals, rounded to nearest). The spec and its CSV are
specs/census-2020-pl94-units-us.{toml,csv}; the spec is run through the CLI entry point exactly as
tests/test_workload.py runs the persons spec.

The exact-composition (PLD) and Semi-DP values are goldens obtained from semidp itself and checked
independently here: the discrete Gaussians at these variances (sigma^2 >= 31) compose like continuous
Gaussians, so the continuous Gaussian's exact epsilon (mu-GDP, Balle & Wang 2018) must lie in the
certified PLD bracket to within 1e-5. Under the block housing-unit invariant a(t) = 2 (a unit of one
block impersonating a unit of another needs a compensating move, Cho & Awan Def. 13), no measurement is
a union of invariant cells, and the worst semi-adjacent pair (two units of one block both changing
occupancy) shifts every measurement by (-2, +2): the query-level Semi-DP rho is exactly 4 x rho.
"""

from __future__ import annotations

import contextlib
import io
import json
import math
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
from scipy.optimize import brentq
from scipy.stats import norm

from semidp.verify.cli import main

ROOT = Path(__file__).resolve().parents[1]
SPEC = ROOT / "specs" / "census-2020-pl94-units-us.toml"
CSV = ROOT / "specs" / "census-2020-pl94-units-us.csv"

TOTAL_RHO = Fraction(3379, 12343) ** 2  # = 11417641/152349649
SHARES = {  # geolevel shares of the production settings (Units, US)
    "US": Fraction(1, 205),
    "State": Fraction(1, 205),
    "County": Fraction(7, 82),
    "Tract": Fraction(364, 1025),
    "Block_Group": Fraction(1759, 4100),
    "Block": Fraction(99, 820),
}
LEVELS = list(SHARES)  # coarse to fine
DELTA = 1e-10

# (figure, printed on the certificate at two decimals, rounded to nearest)
CERTIFICATE = [
    (("total",), 2.47),
    (("per_geolevel", "Block_Group"), 0.82),
    (("per_geolevel", "Tract"), 1.81),
    (("per_geolevel", "County"), 2.35),
    (("per_geolevel", "State"), 2.46),
    (("per_geolevel", "US"), 2.47),
]


def _audit(spec: Path, *extra: str) -> tuple[int, dict[str, Any]]:
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        code = main(["audit", str(spec), "--json", "--quiet", *extra])
    report: dict[str, Any] = json.loads(buf.getvalue())
    return code, report


@pytest.fixture(scope="module")
def units() -> dict[str, Any]:
    code, report = _audit(SPEC)
    assert code == 1  # the certificate's 2.47, claimed for the joint release, does not hold under Semi-DP
    return report


def _entry(obj: dict[str, Any], method: str) -> dict[str, Any]:
    entry: dict[str, Any] = next(e for e in obj["epsilon_delta"] if e["method"] == method and e["delta"] == DELTA)
    return entry


def _gdp_epsilon(mu: float, delta: float) -> float:
    """Exact epsilon of mu-GDP at delta (Balle & Wang 2018, Thm. 8; Dong, Roth & Su Cor. 2.13)."""

    def excess(eps: float) -> float:
        return float(norm.cdf(-eps / mu + mu / 2) - math.exp(eps) * norm.cdf(-eps / mu - mu / 2)) - delta

    return float(brentq(excess, 0.0, 50.0, xtol=1e-14, rtol=1e-14))


# --------------------------------------------------------------------------------------
# the spec's inputs: exact rationals
# --------------------------------------------------------------------------------------


def test_csv_rows_are_the_exact_production_rhos() -> None:
    lines = CSV.read_text().splitlines()
    assert lines[0] == "geolevel,query,rho"
    rows = {g: (q, Fraction(r)) for g, q, r in (line.split(",") for line in lines[1:])}
    assert list(rows) == LEVELS
    assert sum(SHARES.values()) == 1
    for level, share in SHARES.items():
        assert rows[level] == ("detailed", TOTAL_RHO * share)
    assert sum(r for _, r in rows.values()) == TOTAL_RHO == Fraction(11417641, 152349649)


# --------------------------------------------------------------------------------------
# the certificate (CKS on summed rho)
# --------------------------------------------------------------------------------------


@pytest.mark.parametrize(("where", "printed"), CERTIFICATE, ids=["-".join(w) for w, _ in CERTIFICATE])
def test_certificate_figures(units: dict[str, Any], where: tuple[str, ...], printed: float) -> None:
    obj = units["advertised"] if where == ("total",) else units["advertised"][where[0]][where[1]]
    eps = float(_entry(obj, "canonne-kamath-steinke")["epsilon"])
    assert round(eps, 2) == printed  # the certificate rounds to nearest: same two digits
    assert abs(eps - printed) <= 0.005


def test_certificate_rhos_are_exact(units: dict[str, Any]) -> None:
    adv = units["advertised"]
    assert Fraction(adv["rho_exact"]) == TOTAL_RHO
    assert Fraction(adv["per_attribute"]["occupancy"]["rho_exact"]) == TOTAL_RHO  # `detailed` splits occupancy
    assert list(adv["per_geolevel"]) == ["Block_Group", "Tract", "County", "State", "US"]  # finest X first
    for x in adv["per_geolevel"]:  # Block-within-X: the measurements strictly finer than X
        finer = LEVELS[LEVELS.index(x) + 1 :]
        assert Fraction(adv["per_geolevel"][x]["rho_exact"]) == TOTAL_RHO * sum(SHARES[g] for g in finer)
        assert adv["per_geolevel"][x]["measurements"] == len(finer)


# --------------------------------------------------------------------------------------
# new: the exact composition (PLD) and the query-level Semi-DP guarantee
# --------------------------------------------------------------------------------------


def test_exact_composition_pld(units: dict[str, Any]) -> None:
    pld = _entry(units["advertised"], "pld")
    lower, upper = pld["bracket"]["lower"], pld["bracket"]["upper"]
    assert lower <= pld["epsilon"] == upper
    # golden: bracket [2.36304, 2.36320] at the workload's 2**17 PLD grid points
    assert 2.3629 <= lower <= upper <= 2.3634
    # independent: the continuous Gaussian with mu^2 = sum over cells of shift^2 / sigma^2 = 2 rho
    gdp = _gdp_epsilon(math.sqrt(2 * float(TOTAL_RHO)), DELTA)  # 2.3632031
    assert lower - 1e-5 <= gdp <= upper + 1e-5
    # below the certificate's CKS 2.4747 (the PLD is exact, CKS is a bound)
    assert upper < float(_entry(units["advertised"], "canonne-kamath-steinke")["epsilon"]) - 0.1


def test_query_level_semi_dp(units: dict[str, Any]) -> None:
    a = units["semi_adjacent_parameter"]
    assert (a["value"], a["exact"]) == (2, True)
    assert units["workload"]["fixed"] == []  # no measurement is a union of whole blocks
    eff = units["effective"]
    assert (eff["framework"], eff["method"]) == ("semi-dp", "query-level")
    assert Fraction(eff["rho_exact"]) == 4 * TOTAL_RHO  # every measurement shifts by (-2, +2)
    assert eff["coarse"]["zcdp"] == pytest.approx(4 * float(TOTAL_RHO), rel=1e-12)
    pld = _entry(eff, "pld")
    lower, upper = pld["bracket"]["lower"], pld["bracket"]["upper"]
    assert lower <= pld["epsilon"] == upper
    # golden: bracket [4.95483, 4.95515] at 2**17 PLD grid points; a (-1, +1) shift would give the advertised 2.3632
    assert 4.9546 <= lower <= upper <= 4.9553
    gdp = _gdp_epsilon(math.sqrt(8 * float(TOTAL_RHO)), DELTA)  # 4.9551521
    assert lower - 1e-5 <= gdp <= upper + 1e-5
    cks = float(_entry(eff, "canonne-kamath-steinke")["epsilon"])
    assert upper < 5.1796 <= cks <= 5.1797  # CKS on 4 rho: 5.17964
    # Block-within-Block_Group under Semi-DP: golden bracket [1.61060, 1.61072] (2**17 points)
    bg = _entry(eff["per_geolevel"]["Block_Group"], "pld")
    assert 1.6050 <= bg["bracket"]["lower"] <= bg["bracket"]["upper"] <= 1.6108
    # the claim (the certificate's 2.47 for the joint release) is refuted from the PLD lower bound
    claim = next(c for c in units["checks"] if c["name"] == "claim")
    assert (claim["status"], claim["outcome"]) == ("fail", "refuted")


# --------------------------------------------------------------------------------------
# the same release written with a sigma2 column
# --------------------------------------------------------------------------------------


def test_sigma2_column_gives_the_same_report(units: dict[str, Any], tmp_path: Path) -> None:
    lines = CSV.read_text().splitlines()
    rows = [line.split(",") for line in lines[1:]]
    text = "geolevel,query,sigma2\n" + "".join(f"{g},{q},{1 / Fraction(r)}\n" for g, q, r in rows)
    (tmp_path / "units-sigma2.csv").write_text(text)
    spec = SPEC.read_text().replace("census-2020-pl94-units-us.csv", "units-sigma2.csv")
    (tmp_path / "units-sigma2.toml").write_text(spec)
    code, report = _audit(tmp_path / "units-sigma2.toml")
    assert code == 1
    assert report["advertised"]["rho_exact"] == units["advertised"]["rho_exact"]
    assert report["effective"]["rho_exact"] == units["effective"]["rho_exact"]
    for side in ("advertised", "effective"):
        assert _entry(report[side], "pld")["epsilon"] == pytest.approx(_entry(units[side], "pld")["epsilon"], abs=1e-9)
