"""Measurement workloads: the query-level Semi-DP worst case (brute force), the DG lemma, the census goldens.

Sources: the Bureau's production certificate for the 2020 P.L. 94-171 persons run
(DAS-PL94171-PRODUCTION-RUN1A-202106241420-US-Persons, pp. 5-7; figures copied in
docs/reference/census-2020.md), which rounds to nearest at two decimals.
"""

from __future__ import annotations

import itertools
import json
from collections import Counter
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from semidp.accountant.pld.engine import compose_plds
from semidp.accountant.pld.parts import DiscreteGaussianPart, PLDPart
from semidp.accountant.workloads.accounting import WorkloadMeasurement, workload_parts, workload_rho
from semidp.verify.cli import main

SPEC = "specs/census-2020-pl94-persons-us.toml"


# --------------------------------------------------------------------------------------
# the discrete Gaussian lemma N_Z(2) >= N_Z(1) x N_Z(1), by exact sums
# --------------------------------------------------------------------------------------


def _dg_profile(sigma2: float, shifts: tuple[int, ...], eps: np.ndarray) -> np.ndarray:
    """delta(eps) of independent discrete Gaussians with the given shifts (exact sums, truncated far out)."""
    t = int(60 * np.sqrt(sigma2)) + 10
    x = np.arange(-t, t + 1, dtype=np.float64)
    w = np.exp(-(x * x) / (2 * sigma2))
    w /= w.sum()
    losses: dict[float, float] = {0.0: 1.0}
    for d in shifts:  # Q-law of the loss of one cell: y = d + x, loss (2 y d - d^2) / (2 sigma2)
        cell = (2 * (x + d) * d - d * d) / (2 * sigma2)
        new: Counter[float] = Counter()
        for l0, p0 in losses.items():
            for l1, p1 in zip(cell, w):
                if p1 > 1e-300:
                    new[round(l0 + l1, 9)] += p0 * p1
        losses = dict(new)
    ls = np.array(list(losses)), np.array(list(losses.values()))
    return np.array([np.sum(ls[1] * np.maximum(0.0, -np.expm1(e - ls[0]))) for e in eps])


@pytest.mark.parametrize("sigma2", [0.3, 1.0, 2.5])
def test_dg_shift_two_dominates_two_shifts_of_one(sigma2: float) -> None:
    eps = np.linspace(0.0, 12.0 / sigma2, 40)
    one = _dg_profile(sigma2, (2,), eps)
    two = _dg_profile(sigma2, (1, 1), eps)
    assert np.all(two <= one * (1 + 1e-9) + 1e-15)
    assert np.any(two < one * (1 - 1e-3))  # strictly: not the same experiment


# --------------------------------------------------------------------------------------
# brute force over every semi-adjacent pair of a tiny geography
# --------------------------------------------------------------------------------------

# geography US > State (2) > Block (2 per state); one feature f with 3 levels and a recode r = [0, 0, 1]
BLOCKS = [(s, b) for s in range(2) for b in range(2)]
LEVELS = 3
RECODE = [0, 0, 1]
# (label, key of a record at that measurement, sigma2, fixed by the State-totals invariant)
MEASUREMENTS = [
    ("US: detailed", lambda blk, f: (0, f), Fraction(3)),
    ("State: total", lambda blk, f: (blk[0],), Fraction(1, 2)),
    ("State: f", lambda blk, f: (blk[0], f), Fraction(2)),
    ("Block: total", lambda blk, f: (blk,), Fraction(5, 4)),
    ("Block: r", lambda blk, f: (blk, RECODE[f]), Fraction(7, 3)),
]
FIXED = {"State: total"}
RECORDS = [(blk, f) for blk in BLOCKS for f in range(LEVELS)]


def _shift(before: tuple[int, ...], after: tuple[int, ...], key) -> tuple[int, ...]:  # type: ignore[no-untyped-def]
    c: Counter[object] = Counter()
    for i in before:
        c[key(*RECORDS[i])] -= 1
    for i in after:
        c[key(*RECORDS[i])] += 1
    return tuple(sorted(abs(v) for v in c.values() if v))


def _states(d: tuple[int, ...]) -> list[int]:
    return sorted(RECORDS[i][0][0] for i in d)


def _signatures(radius: int, invariant: bool) -> set[tuple[tuple[int, ...], ...]]:
    """Per-measurement sorted |shift| multisets of every pair at replace-one distance <= radius (n = 2 records)."""
    out = set()
    datasets = list(itertools.combinations_with_replacement(range(len(RECORDS)), 2))
    for d0, d1 in itertools.product(datasets, repeat=2):
        if d0 == d1:
            continue
        dist = 2 - sum((Counter(d0) & Counter(d1)).values())
        if dist > radius:
            continue
        if invariant and _states(d0) != _states(d1):
            continue
        out.add(tuple(_shift(d0, d1, key) for _, key, _ in MEASUREMENTS))
    return out


def _values(fixed: bool = True) -> list[WorkloadMeasurement]:
    return [WorkloadMeasurement(lab, s2, fixed and lab in FIXED) for lab, _, s2 in MEASUREMENTS]


def _pld_of(sig: tuple[tuple[int, ...], ...]) -> float:
    parts: list[PLDPart] = [
        DiscreteGaussianPart(float(s2), d) for (_, _, s2), shifts in zip(MEASUREMENTS, sig) for d in shifts
    ]
    return float(compose_plds(parts, points=2**15).epsilon(1e-6).upper) if parts else 0.0


def test_semi_dp_worst_pair_by_brute_force() -> None:
    sigs = _signatures(radius=2, invariant=True)
    zcdp = {s: sum(Fraction(sum(d * d for d in sh), 2) / s2 for sh, (_, _, s2) in zip(s, MEASUREMENTS)) for s in sigs}
    ours = workload_rho(_values(), "discrete-gaussian", semi_radius=2)
    assert max(zcdp.values()) == ours  # the worst pair's zCDP, attained
    worst = tuple(() if lab in FIXED else (2, 2) for lab, _, _ in MEASUREMENTS)
    assert worst in sigs  # the pair of the proof exists
    assert all(sh == () for s in sigs for sh, (lab, _, _) in zip(s, MEASUREMENTS) if lab in FIXED)
    # the whole profile: no pair's composed PLD is worse than the proof's pair
    b = compose_plds(workload_parts(_values(), "discrete-gaussian", semi_radius=2), points=2**15).epsilon(1e-6)
    assert abs(_pld_of(worst) - b.upper) < 1e-9
    for s in sigs:
        assert _pld_of(s) <= b.upper * (1 + 1e-9)
    # the lemma is needed: the zCDP ranking alone would not order {2,1,1} against {1,1,1,1} profiles
    assert {(1, 1, 1, 1), (1, 1, 2), (2, 2)} <= {sh for s in sigs for sh in s}


def test_code_that_ignores_the_invariant_is_caught() -> None:
    sigs = _signatures(radius=2, invariant=True)
    best = max(sum(Fraction(sum(d * d for d in sh), 2) / s2 for sh, (_, _, s2) in zip(s, MEASUREMENTS)) for s in sigs)
    assert workload_rho(_values(fixed=False), "discrete-gaussian", semi_radius=2) > best


def test_advertised_worst_pair_by_brute_force() -> None:
    sigs = _signatures(radius=1, invariant=False)
    zcdp = max(sum(Fraction(sum(d * d for d in sh), 2) / s2 for sh, (_, _, s2) in zip(s, MEASUREMENTS)) for s in sigs)
    assert zcdp == workload_rho(_values(), "discrete-gaussian")
    assert zcdp == sum(1 / s2 for _, _, s2 in MEASUREMENTS)  # rho_m = 1 / sigma_m^2 each


# --------------------------------------------------------------------------------------
# the census: certificate goldens, exact DP, query-level Semi-DP
# --------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def census(tmp_path_factory: pytest.TempPathFactory) -> dict:  # type: ignore[type-arg]
    out = tmp_path_factory.mktemp("census")
    import contextlib
    import io

    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        code = main(["audit", SPEC, "--json", "--out", str(out)])
    assert code == 1  # the certificate's 17.14 does not hold for the joint release
    report: dict = json.loads(buf.getvalue())  # type: ignore[type-arg]
    report["_out"] = str(out)
    return report


def _eps(obj: dict, method: str) -> float:  # type: ignore[type-arg]
    return float(next(e["epsilon"] for e in obj["epsilon_delta"] if e["method"] == method))


# (figure, printed on the certificate at two decimals, rounded to nearest)
CERTIFICATE = [
    (("total",), 17.14),
    (("per_attribute", "hhgq"), 7.24),
    (("per_attribute", "votingage"), 7.57),
    (("per_attribute", "hispanic"), 10.04),
    (("per_attribute", "cenrace"), 10.08),
    (("per_geolevel", "Block_Group"), 2.93),
    (("per_geolevel", "Tract"), 9.38),
    (("per_geolevel", "County"), 11.70),
    (("per_geolevel", "State"), 13.05),
    (("per_geolevel", "US"), 16.89),
]


@pytest.mark.parametrize(("where", "printed"), CERTIFICATE, ids=["-".join(w) for w, _ in CERTIFICATE])
def test_certificate_figures(census: dict, where: tuple[str, ...], printed: float) -> None:  # type: ignore[type-arg]
    obj = census["advertised"] if where == ("total",) else census["advertised"][where[0]][where[1]]
    eps = _eps(obj, "canonne-kamath-steinke")
    assert round(eps, 2) == printed  # the certificate rounds to nearest: same two digits
    assert abs(eps - printed) <= 0.005


def test_census_exact_values(census: dict) -> None:  # type: ignore[type-arg]
    adv, eff = census["advertised"], census["effective"]
    assert Fraction(adv["rho_exact"]) == Fraction(293764, 114921)  # (542/339)^2
    state_total = Fraction(177339451520, 214437516707)  # State total, the only measurement fixed by the invariant
    assert Fraction(eff["rho_exact"]) == 4 * (Fraction(293764, 114921) - state_total)
    assert census["workload"]["fixed"] == ["State: total"]
    assert eff["coarse"]["zcdp"] == pytest.approx(4 * 293764 / 114921, rel=1e-12)
    pld = next(e for e in adv["epsilon_delta"] if e["method"] == "pld")
    assert pld["bracket"]["lower"] <= pld["epsilon"] == pld["bracket"]["upper"]
    assert 16.46 < pld["bracket"]["lower"] and pld["epsilon"] < 16.47  # exact DP, below the CKS 17.1436
    semi = next(e for e in eff["epsilon_delta"] if e["method"] == "pld")
    assert 29.98 < semi["bracket"]["lower"] and semi["epsilon"] < 30.0  # query-level Semi-DP
    assert semi["epsilon"] < _eps(eff, "canonne-kamath-steinke") < _eps(eff["coarse"], "canonne-kamath-steinke")
    assert Path(census["_out"], "census-2020-pl94-persons-us.workload.png").exists() or census.get("plots")


# --------------------------------------------------------------------------------------
# bad input: exit 2 naming the file, line and column
# --------------------------------------------------------------------------------------


def _spec(tmp_path: Path, csv_text: str, **subs: str) -> Path:
    text = Path(SPEC).read_text()
    for a, b in subs.items():
        text = text.replace(a, b)
    (tmp_path / "census-2020-pl94-persons-us.csv").write_text(csv_text)
    p = tmp_path / "w.toml"
    p.write_text(text)
    return p


@pytest.mark.parametrize(
    ("csv_text", "expected"),
    [
        ("geolevel,query,rho\nState,total,1/2\nCounty,votingage,abc\n", "line 3, column rho"),
        ("geolevel,query,rho\nStat,total,1/2\n", "line 2, column geolevel"),
        ("geolevel,query,rho\nState,votingage * hhgqq,1\n", "line 2, column query"),
        ("geolevel,query,rho\nState,total,-1\n", "line 2, column rho: must be > 0"),
        ("geolevel,query,rho\nState,total,1\nState,total,2\n", "line 3, column query"),
        ("geolevel,query\nState,total\n", "line 1: needs exactly one of the columns"),
        ("geolevel,query,rho\nState,total\n", "line 2: has 2 fields"),
    ],
)
def test_bad_rows_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str], csv_text: str, expected: str) -> None:
    assert main(["audit", str(_spec(tmp_path, csv_text))]) == 2
    err = capsys.readouterr().err
    assert "census-2020-pl94-persons-us.csv" in err and expected in err and "Traceback" not in err


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        ('noise = "discrete-gaussian"\n', "", "mechanism.noise"),
        ('of = "hhgq"', 'of = "hhgg"', "data.recodes[0].of"),
        ("map = [0, 1, 1, 1, 1, 2, 2, 2]", "map = [0, 1]", "data.recodes[0].map"),
        ('margins = [["State"]]', 'margins = [["Stat"]]', "did you mean 'State'"),
        ('"Block_Group", "Block"]', '"Block_Group", "Block", "hhgq"]', "data.geography"),
    ],
)
def test_bad_keys_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str], old: str, new: str, expected: str) -> None:
    csv_text = Path("specs/census-2020-pl94-persons-us.csv").read_text()
    assert main(["audit", str(_spec(tmp_path, csv_text, **{old: new}))]) == 2
    err = capsys.readouterr().err
    assert expected in err and "Traceback" not in err


def test_set_aside_bracket_contains_the_full_composition(monkeypatch: pytest.MonkeyPatch) -> None:
    """A measurement set aside (forced here on a workload the grid can hold) is bounded from above by the dominating
    pair of its (eps0, 1e-20)-DP guarantee [BS16, Prop. 1.3; KOV15, Thm. 2.4] and dropped from below: the bracket
    must overlap the full composition's, and the twin without the dominating pair falls below it."""
    from semidp.accountant.workloads import accounting as workload
    from semidp.accountant.workloads.accounting import SetAsideBracket, workload_bracket, workload_pld

    ms = [WorkloadMeasurement(f"m{i}", Fraction(s)) for i, s in enumerate((4, 9, 100))]
    full = workload_pld(ms, "discrete-gaussian")
    assert full is not None
    original = workload.workload_pld

    def refuse_all_three(values: list[WorkloadMeasurement], *args: object, **kw: object) -> object:
        if len(values) == 3:
            raise workload.InvalidArgument("stand-in: too many grid points")
        return original(values, *args, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(workload, "workload_pld", refuse_all_three)
    b = workload_bracket(ms, "discrete-gaussian")
    assert isinstance(b, SetAsideBracket) and b.set_aside == (2,)  # sigma^2 = 100 lies farthest from the median
    for delta in (1e-3, 1e-10):
        lo, up = b.epsilon(delta)
        f_lo, f_up = full.epsilon(delta)
        assert lo <= f_up and f_lo <= up and lo <= up
        assert b.kept is not None and b.kept.epsilon(delta).upper < f_lo  # the twin: kept only, no pair on top
