"""accountant/workloads/allocation.py: the weighted-variance allocation under a zCDP budget (Step 13, vary = allocation).

Golden cases are solved by hand from the KKT closed form (module docstring; Boyd & Vandenberghe, Sec. 5.5.3):
rho_m = B sqrt(a_m / C_m) / S, objective S^2 / B, S = sum sqrt(a_m C_m).
"""

from __future__ import annotations

import math
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from semidp.accountant.core.errors import InvalidArgument, InvalidSpec, SearchTooLarge, VerificationError
from semidp.accountant.workloads import allocation as da
from semidp.accountant.workloads.accounting import WorkloadMeasurement, measurement_rho, workload_rho
from semidp.accountant.workloads.allocation import (
    MAX_MEASUREMENTS,
    allocated_measurements,
    closed_form_allocation,
    design_allocation,
    design_workload_allocation,
    measurement_rho_coefficient,
    variance_law,
    workload_coefficients,
)

ROOT = Path(__file__).resolve().parents[1]


def load(c: list[list[Fraction]], rhos: tuple[Fraction, ...]) -> Fraction:
    """max_j sum_m C_jm rho_m, exact (independent of the module's own check)."""
    return max(sum((cj * r for cj, r in zip(row, rhos)), Fraction(0)) for row in c)


def test_golden_one_row_by_hand() -> None:
    # a = (1, 4, 9), C = (1, 1, 1), B = 6: S = 1 + 2 + 3 = 6, rho = (1, 2, 3), objective 36 / 6 = 6.
    r = design_allocation([[1, 1, 1]], [1, 1, 1], [1, 4, 9], 6, [1, 1, 1])
    assert [float(x) for x in r.rhos] == pytest.approx([1, 2, 3], rel=1e-7)
    assert r.objective_after == pytest.approx(6, rel=1e-9)
    assert r.objective_before == 14  # 1/1 + 4/1 + 9/1
    assert r.objective_uniform == pytest.approx(14 / 2)  # start load 3, budget 6: every rho doubled
    assert sum(r.rhos) <= 6 and r.constraint == sum(r.rhos) and r.constraint_holds
    assert r.closed_form_gap is not None and 0 <= r.closed_form_gap < 1e-6  # cvxpy's answer is never better
    assert r.status == "optimal" and r.solver and r.method == "closed-form"


def test_golden_unequal_coefficients_and_a_fixed_measurement() -> None:
    # a = (1, 1), C = (1, 4), B = 3: S = 1 + 2 = 3, rho = (1, 1/2), objective 9 / 3 = 3; third column fixed (C = 0).
    r = design_allocation([[1, 4, 0]], [1, 1, 4], [1, 1, 1], 3, [1, 1, Fraction(1, 2)])
    assert [float(x) for x in r.rhos[:2]] == pytest.approx([1, 0.5], rel=1e-7)
    assert r.rhos[2] == Fraction(1, 2) and r.kept == (2,)
    assert r.objective_after == pytest.approx(3 + 8, rel=1e-9)  # the fixed term 4 / (1/2) = 8 stays
    assert r.objective_before == 1 + 1 + 8
    assert r.rhos[0] + 4 * r.rhos[1] <= 3


def test_golden_two_rows_separable() -> None:
    # C = I, B = 1: each rho_m <= 1 alone, and 1/rho is decreasing: rho = (1, 1), objective a1 + a2 = 5.
    r = design_allocation([[1, 0], [0, 1]], [1, 1], [2, 3], 1, [Fraction(1, 4), Fraction(1, 2)])
    assert [float(x) for x in r.rhos] == pytest.approx([1, 1], rel=1e-3)  # cvxpy's tolerance (AllocationResult)
    assert r.objective_after == pytest.approx(5, rel=1e-6)
    assert r.method == "cvxpy"
    assert r.closed_form_gap is None  # two rows: no closed form
    assert all(x <= 1 for x in r.rhos)


def test_closed_form_function() -> None:
    rhos, obj = closed_form_allocation([1, 1], [1, 4], 3)
    assert rhos == pytest.approx([1, 0.5]) and obj == pytest.approx(3)


def test_exact_rounding_is_down_and_short() -> None:
    r = design_allocation([[1, 1]], [1, 1], [1, 2], 1, [1, 1])  # rho proportional to (1, sqrt 2): irrational
    assert r.constraint <= 1 and 1 - r.constraint < Fraction(1, 10**10)
    for x in r.rhos:  # 12 significant digits: a decimal with a power-of-10 denominator
        assert 10**20 % x.denominator == 0


def round_up(x: Fraction, digits: int = da.SIGNIFICANT_DIGITS) -> Fraction:
    """The wrong twin of _round_down: rounds up."""
    unit = da._unit(x, digits)
    return -(-x // unit) * unit


def test_wrong_twin_rounding_up_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    # rounding up the budget-spending solution breaks the constraint by ~1e-12: the exact check must refuse it
    monkeypatch.setattr(da, "_round_down", round_up)
    with pytest.raises(VerificationError, match="exceeds the budget"):
        design_allocation([[1, 1]], [1, 1], [1, 2], 1, [1, 1])


def test_wrong_twin_closed_form_check_is_live(monkeypatch: pytest.MonkeyPatch) -> None:
    # a solver answer off the optimum (every x equal) must be caught by the closed-form cross-check
    real = da._solve

    def flat(*args: object, **kw: object) -> tuple[list[float], str, str]:
        x, name, status = real(*args, **kw)  # type: ignore[arg-type]
        return [1.0] * len(x), name, status

    monkeypatch.setattr(da, "_solve", flat)
    with pytest.raises(VerificationError, match="closed form"):
        design_allocation([[1, 1, 1]], [1, 1, 1], [1, 4, 9], 6, [1, 1, 1])


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(
        st.tuples(
            st.fractions(Fraction(1, 100), 100),  # weight
            st.sampled_from([0, 1, 2, 4]),  # coefficient (0: fixed)
            st.fractions(Fraction(1, 1000), 10),  # start rho
        ),
        min_size=1,
        max_size=12,
    ),
    st.fractions(Fraction(1, 100), 100),
)
def test_property_never_worse_than_uniform_scaling(
    rows: list[tuple[Fraction, int, Fraction]], budget: Fraction
) -> None:
    w = [r[0] for r in rows]
    c = [[Fraction(r[1]) for r in rows]]
    start = [r[2] for r in rows]
    res = design_allocation(c, [1] * len(rows), w, budget, start)
    assert load(c, res.rhos) <= budget  # exact, recomputed here
    assert res.objective_after <= res.objective_uniform * (1 + 1e-9)
    for m in res.kept:
        assert res.rhos[m] == start[m] and c[0][m] == 0
    if any(x > 0 for x in c[0]):
        assert res.closed_form_gap is not None and abs(res.closed_form_gap) < 1e-6


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.integers(2, 6).flatmap(
        lambda n: st.tuples(
            st.lists(st.lists(st.sampled_from([0, 1, 3]), min_size=n, max_size=n), min_size=2, max_size=3),
            st.lists(st.fractions(Fraction(1, 10), 10), min_size=n, max_size=n),
        )
    )
)
def test_property_several_rows(case: tuple[list[list[int]], list[Fraction]]) -> None:
    c_int, w = case
    c = [[Fraction(x) for x in row] for row in c_int]
    res = design_allocation(c, [1] * len(w), w, 1, [Fraction(1, 10)] * len(w))
    assert load(c, res.rhos) <= 1
    assert res.objective_after <= res.objective_uniform * (1 + 1e-6)


@pytest.mark.parametrize(
    ("kwargs", "names"),
    [
        ({"coefficients": [[1, -1]]}, "coefficients[0][1]"),
        ({"coefficients": [[1]]}, "coefficients[0]"),
        ({"coefficients": []}, "coefficients"),
        ({"weights": [1, float("nan")]}, "weights[1]"),
        ({"weights": [1, 0]}, "weights[1]"),
        ({"variance_factors": [1]}, "variance_factors"),
        ({"budget": 0}, "budget"),
        ({"budget": float("inf")}, "budget"),
        ({"start": [1, "2"]}, "start[1]"),
        ({"start": [True, 1]}, "start[0]"),
        ({"start": [Fraction(1, 10**101), 1]}, "start[0]: below"),
        ({"weights": [1, 10**400]}, "weights[1]: above"),
    ],
)
def test_bad_arguments_are_named(kwargs: dict[str, object], names: str) -> None:
    args: dict[str, object] = {
        "coefficients": [[1, 1]],
        "variance_factors": [1, 1],
        "weights": [1, 1],
        "budget": 1,
        "start": [1, 1],
    }
    args.update(kwargs)
    with pytest.raises(InvalidArgument) as e:
        design_allocation(**args)  # type: ignore[arg-type]
    assert names in str(e.value)


def test_size_checked_first() -> None:
    n = MAX_MEASUREMENTS + 1
    with pytest.raises(SearchTooLarge, match="measurements"):
        design_allocation([[1] * n], [1] * n, [1] * n, 1, [1] * n)


def test_nothing_free_keeps_everything() -> None:
    r = design_allocation([[0, 0]], [1, 1], [1, 1], 1, [Fraction(1, 2), 2])
    assert r.rhos == (Fraction(1, 2), Fraction(2)) and r.kept == (0, 1) and r.solver == "none"
    assert r.objective_after == r.objective_before == 2.5


def test_variance_laws_against_sums() -> None:
    # discrete Gaussian: Var N_Z(0, s2) < s2 (= 1/rho); discrete Laplace: 2q/(1-q)^2 <= 2 t^2 (= 4/rho)
    for s2, deficit in ((0.25, 0.13995), (1.0, 2.1123e-7), (4.0, 0.0), (50.0, 0.0)):  # deficits from mpmath
        ys = range(-2000, 2001)
        p = [math.exp(-y * y / (2 * s2)) for y in ys]
        var = math.fsum(y * y * q for y, q in zip(ys, p)) / math.fsum(p)
        assert var <= s2 * float(variance_law("discrete-gaussian").factor)
        assert (s2 - var) / s2 == pytest.approx(deficit, rel=1e-3, abs=1e-12)
    for t in (0.3, 1.0, 7.0):
        q = math.exp(-1 / t)
        rho = Fraction(2) / Fraction(t) ** 2
        assert 2 * q / (1 - q) ** 2 <= float(variance_law("discrete-laplace").factor / rho) * (1 + 1e-12)
    assert variance_law("gaussian").exact and variance_law("laplace").factor == 4
    assert not variance_law("discrete-gaussian").exact
    with pytest.raises(InvalidArgument, match="noise"):
        variance_law("uniform")


def test_coefficients_and_rho_of_workload() -> None:
    ms = [WorkloadMeasurement("a", Fraction(4)), WorkloadMeasurement("b", Fraction(2), fixed=True)]
    assert workload_coefficients(ms, "semi-dp") == ((Fraction(4), Fraction(0)),)
    assert workload_coefficients(ms, "semi-dp", semi_radius=1) == ((Fraction(1), Fraction(0)),)
    assert workload_coefficients(ms, "dp") == ((Fraction(1), Fraction(1)),)
    for noise in ("discrete-gaussian", "laplace"):  # C times the file's rho is the worst pair's zCDP
        rho = [measurement_rho_coefficient(m, noise) for m in ms]
        c = workload_coefficients(ms, "semi-dp")[0]
        assert sum(ci * r for ci, r in zip(c, rho)) == workload_rho(ms, noise, semi_radius=2)
        assert sum(rho) == workload_rho(ms, noise)
    with pytest.raises(InvalidArgument, match="framework"):
        workload_coefficients(ms, "renyi")


def test_allocated_measurements_are_exact_or_conservative() -> None:
    ms = [WorkloadMeasurement("a", Fraction(4)), WorkloadMeasurement("b", Fraction(2), fixed=True)]
    rhos = (Fraction(1, 3), Fraction(2, 7))
    g = allocated_measurements(ms, rhos, "discrete-gaussian")
    assert [m.scale for m in g] == [3, Fraction(7, 2)] and g[1].fixed and g[0].label == "a"
    lap = allocated_measurements(ms, rhos, "laplace")
    for m, r in zip(lap, rhos):
        got = measurement_rho(m, "laplace", 2)  # the zCDP of the Laplace scale chosen: at most rho, barely
        assert got <= r and float(r - got) / float(r) < 1e-10
    with pytest.raises(InvalidArgument, match="rhos"):
        allocated_measurements(ms, rhos[:1], "gaussian")


def test_census_pl94_persons_query_level() -> None:
    """The measured case of the module docstring: uniform weights, budget = the production allocation's zCDP."""
    from semidp.verify.load import load as load_spec
    from semidp.verify.workload_spec import read_measurements

    spec = load_spec(ROOT / "specs" / "census-2020-pl94-persons-us.toml")
    mech: Any = spec.mechanism
    got, probs = read_measurements(spec, mech.measurements, mech.noise)
    assert not probs
    ms = [m.accountant_value() for m in got]
    noise = "discrete-gaussian"
    start = [measurement_rho_coefficient(m, noise) for m in ms]
    budget = workload_rho(ms, noise, semi_radius=2)
    res = design_workload_allocation(ms, noise, budget, weights=[m.weight for m in got])
    assert len(ms) == 65 and res.kept == (next(i for i, m in enumerate(ms) if m.fixed),)
    assert res.objective_before == pytest.approx(109281.51, rel=1e-6) == res.objective_uniform
    fixed_term = 1 / float(start[res.kept[0]])
    assert res.objective_after == pytest.approx(128**2 / float(budget) + fixed_term, rel=1e-9)  # S = 64 * 2
    assert res.constraint <= budget and float(budget - res.constraint) < 1e-9
    free = [r for i, r in enumerate(res.rhos) if i not in res.kept]
    assert max(free) - min(free) < Fraction(1, 10**9)  # equal weights, equal C: equal rho


# --- the `weight` column of measurements files (verify/workload_spec.py) ---------------------------------------

UNITS_SPEC = ROOT / "specs" / "census-2020-pl94-units-us.toml"
UNITS_CSV = "census-2020-pl94-units-us.csv"


def _read(tmp_path: Path, csv_text: str, measurements: str | None = None) -> tuple[list[Any], list[str]]:
    """read_measurements on the units spec with ``csv_text`` (and ``mechanism.measurements`` replaced)."""
    from semidp.verify.load import load as load_spec
    from semidp.verify.workload_spec import read_measurements

    (tmp_path / UNITS_CSV).write_text(csv_text, encoding="utf-8")
    text = UNITS_SPEC.read_text()
    if measurements is not None:
        text = text.replace(f'measurements = "{UNITS_CSV}"', f"measurements = {measurements}")
    (tmp_path / "spec.toml").write_text(text)
    try:
        spec = load_spec(tmp_path / "spec.toml")  # the loader checks the file too
    except InvalidSpec as e:
        return [], e.problems
    mech: Any = spec.mechanism
    got, probs = read_measurements(spec, mech.measurements, mech.noise)
    return got, [str(p) for p in probs]


def _with_weights(weights: list[str], header: str = "weight") -> str:
    lines = (ROOT / "specs" / UNITS_CSV).read_text().splitlines()
    body = [f"{line},{w}" for line, w in zip(lines[1:], weights)]
    return "\n".join([f"{lines[0]},{header}", *body]) + "\n"


def test_weight_column_is_carried_exactly_and_defaults_to_one(tmp_path: Path) -> None:
    got, probs = _read(tmp_path, _with_weights(["1", "3/2", "0.25", "3/2", "1e3", "1"]))  # repeats: parsed once
    assert not probs
    assert [m.weight for m in got] == [1, Fraction(3, 2), Fraction(1, 4), Fraction(3, 2), 1000, 1]
    assert got[1].accountant_value() == WorkloadMeasurement(got[1].label, got[1].scale, got[1].fixed)
    plain, probs = _read(tmp_path, (ROOT / "specs" / UNITS_CSV).read_text())
    assert not probs and [m.weight for m in plain] == [1] * 6
    assert [m.scale for m in plain] == [m.scale for m in got]  # the accounting does not see the weights


@pytest.mark.parametrize(
    ("cell", "why"),
    [("0", "a weight must be > 0, got '0'"), ("-2", "must be > 0"), ("abc", "'abc' is not a number"), ("", "not a")],
)
def test_a_bad_weight_is_located(tmp_path: Path, cell: str, why: str) -> None:
    got, probs = _read(tmp_path, _with_weights(["1", "1", cell, "1", "1", "1"]))
    assert len(probs) == 1, probs
    assert f"{UNITS_CSV}, line 4, column weight: " in probs[0] and why in probs[0]
    assert probs[0].startswith("mechanism.measurements: ")


def test_weight_column_in_the_table_form(tmp_path: Path) -> None:
    table = '{ file = "%s", columns = { rho = "rho", weight = "w" } }' % UNITS_CSV
    got, probs = _read(tmp_path, _with_weights(["2", "1", "1", "1", "1", "5/3"], header="w"), table)
    assert not probs and got[0].weight == 2 and got[5].weight == Fraction(5, 3)
    _, probs = _read(tmp_path, _with_weights(["2"] * 6, header="weights"), table)  # named but absent
    assert any("column 'w': missing column (the weight column)" in p for p in probs), probs
    bad, probs = _read(tmp_path, _with_weights(["1", "0", "1", "1", "1", "1"], header="w"), table)
    assert any("line 3, column 'w': a weight must be > 0" in p for p in probs), probs
    unnamed, probs = _read(tmp_path, _with_weights(["2"] * 6), '{ file = "%s" }' % UNITS_CSV)
    assert not probs and [m.weight for m in unnamed] == [1] * 6  # table form: columns not named are ignored


def test_bad_weight_exits_2_naming_file_line_and_column(tmp_path: Path) -> None:
    import contextlib
    import io

    from semidp.verify.cli import main

    (tmp_path / UNITS_CSV).write_text(_with_weights(["1", "1", "1", "1", "1", "nope"]), encoding="utf-8")
    (tmp_path / "spec.toml").write_text(UNITS_SPEC.read_text())
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
        code = main(["audit", str(tmp_path / "spec.toml"), "--quiet"])
    assert code == 2
    assert f"{UNITS_CSV}, line 7, column weight: 'nope' is not a number" in out.getvalue()
    assert "Traceback" not in out.getvalue()


@pytest.mark.parametrize("w", [Fraction(1, 10**8), Fraction(1, 10**20), Fraction(1, 10**100)])
def test_weights_spread_far_apart(w: Fraction) -> None:
    # rho proportional to sqrt(w) (down to 1e-50 of the other): the preconditioned solver must still agree with the closed form, and a
    # second row that is not active must not change the optimum's objective (min 1/x1 + 1/x2, x1 + 3 x2 <= 1)
    r = design_allocation([[1, 1]], [1, 1], [w, 1], 1, [1, 1])
    assert r.closed_form_gap is not None and abs(r.closed_form_gap) < 1e-6
    best = (math.sqrt(float(w)) + 1) ** 2
    assert r.objective_after == pytest.approx(best, rel=1e-9)
    two = design_allocation([[1, 1], [1, 0]], [1, 1], [w, 1], 1, [1, 1])
    assert two.objective_after == pytest.approx(best, rel=1e-6) and two.constraint <= 1


def test_golden_two_rows_one_inactive() -> None:
    # min 1/x1 + 1/x2 s.t. x1 + 3 x2 <= 1, 2 x1 <= 1: the first row alone gives x = (1, 1/sqrt 3) / (1 + sqrt 3)
    # (KKT), and 2 x1 = 0.732 <= 1 leaves the second inactive: objective (1 + sqrt 3)^2 = 7.4641.
    r = design_allocation([[1, 3], [2, 0]], [1, 1], [1, 1], 1, [1, 1])
    s3 = math.sqrt(3)
    assert [float(x) for x in r.rhos] == pytest.approx([1 / (1 + s3), 1 / s3 / (1 + s3)], rel=1e-3)
    assert r.objective_after == pytest.approx((1 + s3) ** 2, rel=1e-7)
    assert r.rhos[0] + 3 * r.rhos[1] <= 1 and 2 * r.rhos[0] <= 1
