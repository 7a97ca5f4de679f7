"""Audits of built mechanisms (issue 4, deliverable 5): projected Gaussian and K-norm on a 3x3 table."""

from __future__ import annotations

import dataclasses
import math
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from semidp.accountant import InvalidSpec
from semidp.accountant.core.budget import Budget
from semidp.accountant.guarantees.definitions import GDP, PureDP
from semidp.mechanisms.projected_gaussian import expected_chi
from semidp.verify.load import load, loads
from semidp.verify.registry import REGISTRY
from semidp.verify.runner import Audit, audit
from semidp.verify.spec import Spec

ROOT = Path(__file__).resolve().parents[1]
GAUSS = ROOT / "specs" / "table-3x3-projected-gaussian.toml"
KNORM = ROOT / "specs" / "table-3x3-k-norm.toml"


def _check(report: dict[str, object], name: str) -> dict[str, object]:
    checks = report["checks"]
    assert isinstance(checks, list)
    return next(c for c in checks if c["name"] == name)


@pytest.fixture(scope="module")
def gauss() -> Audit:
    return audit(load(GAUSS), seed=None, budget=Budget.of(30.0))


@pytest.fixture(scope="module")
def knorm() -> Audit:
    return audit(load(KNORM), seed=None, budget=Budget.of(30.0))


def _margins(x: np.ndarray) -> np.ndarray:
    t = x.reshape(-1, 3, 3)
    return np.concatenate([t.sum(axis=2), t.sum(axis=1)], axis=1)


@pytest.mark.parametrize("which", ["gauss", "knorm"])
def test_every_draw_keeps_the_margins(which: str, request: pytest.FixtureRequest) -> None:
    res: Audit = request.getfixturevalue(which)
    spec = load(GAUSS if which == "gauss" else KNORM)
    assert spec.data.table is not None and spec.audit is not None
    table = np.asarray(spec.data.table, dtype=np.float64)
    assert res.samples is not None
    assert res.samples.shape == (spec.audit.samples, 9) and res.samples.dtype == np.float64
    dev = np.abs(_margins(res.samples) - _margins(table))
    assert dev.max() <= 1e-9 * 10
    assert not np.allclose(res.samples, table)  # noise was added
    assert _check(res.report, "invariant-preserved")["status"] == "pass"
    assert res.report["seed"] == 7  # [audit] seed, recorded
    assert res.report["verdict"] == "holds"


def test_gaussian_sensitivity_is_sqrt6_from_the_three_cycles(gauss: Audit) -> None:
    mech = gauss.report["mechanism"]
    assert isinstance(mech, dict)
    assert mech["l2_sensitivity_squared"] == 6  # not 4 (Prop. 32's moves only)
    assert mech["l2_sensitivity"] == pytest.approx(math.sqrt(6), rel=1e-15)
    assert mech["l2_sensitivity"] >= math.sqrt(6)  # rounded up
    assert mech["noise_dimension"] == 4
    assert mech["sigma"] >= mech["l2_sensitivity"] / 1.0
    assert isinstance(gauss.effective, GDP) and gauss.effective.mu <= 1.0


def test_gaussian_expected_error_is_exact_and_inside_the_interval(gauss: Audit) -> None:
    err = gauss.report["expected_l2_error"]
    assert isinstance(err, dict)
    assert err["exact"] == pytest.approx(math.sqrt(6) * expected_chi(4), rel=1e-12)
    # E chi_4 = 3 sqrt(pi) / (2 sqrt 2)  (Gamma(5/2) = 3 sqrt(pi)/4, Gamma(2) = 1)
    assert expected_chi(4) == pytest.approx(3 * math.sqrt(math.pi) / (2 * math.sqrt(2)), rel=1e-14)
    lo, hi = err["monte_carlo"]["interval"]
    assert lo <= err["exact"] <= hi
    assert _check(gauss.report, "expected-l2-error")["status"] == "pass"
    assert _check(gauss.report, "claim")["status"] == "pass"


def test_knorm_is_optimal_and_its_error_check_passes(knorm: Audit) -> None:
    mech = knorm.report["mechanism"]
    assert isinstance(mech, dict) and mech["optimal"] is True and "OPTIMAL" in mech["label"]
    assert isinstance(knorm.effective, PureDP) and knorm.effective.epsilon == 1.0
    assert _check(knorm.report, "expected-l2-error")["status"] == "pass"
    assert _check(knorm.report, "claim")["status"] == "pass"
    assert _check(knorm.report, "sensitivity")["status"] == "pass"


def test_seed_argument_overrides_and_reproduces() -> None:
    spec = dataclasses.replace(load(GAUSS), audit=dataclasses.replace(load(GAUSS).audit, samples=50))  # type: ignore[type-var]
    a = audit(spec, seed=123)
    b = audit(spec, seed=123)
    assert a.report["seed"] == 123
    assert a.samples is not None and b.samples is not None and a.samples.shape == (50, 9)
    assert np.array_equal(a.samples, b.samples)


def test_epsilon_delta_calibration_meets_its_target() -> None:
    base = load(GAUSS)
    spec = dataclasses.replace(
        base,
        claim=None,
        audit=dataclasses.replace(base.audit, samples=50),  # type: ignore[type-var]
        mechanism=type(base.mechanism).of(kind=base.mechanism.kind, epsilon=Fraction(1), delta=Fraction(1, 10**6)),  # type: ignore[attr-defined]
    )
    res = audit(spec, seed=1)
    assert _check(res.report, "calibration")["status"] == "pass"
    assert _check(res.report, "invariant-preserved")["status"] == "pass"


def test_missing_table_is_refused() -> None:
    spec: Spec = dataclasses.replace(load(KNORM), data=dataclasses.replace(load(KNORM).data, table=None))
    with pytest.raises(InvalidSpec, match="data.table"):
        audit(spec)


def test_bad_table_size_is_rejected_by_the_loader() -> None:
    text = GAUSS.read_text(encoding="utf-8").replace("1, 0, 0]", "1, 0]")
    with pytest.raises(InvalidSpec, match="data.table"):
        loads(text)


def test_knorm_falls_back_to_a_labelled_non_optimal_ball(monkeypatch: pytest.MonkeyPatch) -> None:
    from semidp.accountant.core.errors import SearchTooLarge
    from semidp.accountant.geometry.knorm import KNormBall

    def refuse(*args: object, **kwargs: object) -> KNormBall:
        raise SearchTooLarge("convex hull (test)", 1e12, 1e9)

    import semidp.verify.kinds.k_norm as ma

    monkeypatch.setattr(ma, "cached_knorm_ball", refuse)  # the build (cached or not) is refused
    base = load(KNORM)
    spec = dataclasses.replace(base, audit=dataclasses.replace(base.audit, samples=200))  # type: ignore[type-var]
    res = audit(spec, seed=3)
    mech = res.report["mechanism"]
    assert isinstance(mech, dict) and mech["optimal"] is False
    assert "NON-OPTIMAL" in mech["label"] and mech["loss"]["norm_ratio_upper"] >= 1
    assert _check(res.report, "invariant-preserved")["status"] == "pass"
    assert _check(res.report, "expected-l2-error")["status"] == "pass"
    assert isinstance(res.effective, PureDP) and res.effective.epsilon == 1.0


def test_loader_requires_a_table_and_a_target() -> None:
    text = GAUSS.read_text(encoding="utf-8")
    no_table = text.replace("table = [1, 1, 0,\n         0, 0, 1,\n         1, 0, 0]\n", "")
    with pytest.raises(InvalidSpec, match="data.table"):
        loads(no_table)
    with pytest.raises(InvalidSpec, match="mechanism.mu"):
        loads(text.replace("mu = 1.0\n\n[claim]", "\n[claim]"))
    with pytest.raises(InvalidSpec, match="mechanism.epsilon"):
        loads(KNORM.read_text(encoding="utf-8").replace("epsilon = 1.0\n\n[claim]", "mu = 1.0\n\n[claim]"))


def _variant(kind: str, samples: int = 400, **mech: object) -> Spec:
    """The 3x3 K-norm spec with another mechanism kind (same table, margins, relation).

    A Gaussian kind drops the pure 1-DP claim (no Gaussian mechanism meets it).
    """
    base = load(KNORM)
    family = REGISTRY[kind].spec_type  # each kind has its own [mechanism] forms (a keyed union)
    keep = {"epsilon": base.mechanism.epsilon, "delta": base.mechanism.delta}  # type: ignore[attr-defined]
    m = family.of(**{**keep, "kind": kind, **mech})  # type: ignore[attr-defined]
    claim = None if "gaussian" in kind else base.claim
    return dataclasses.replace(base, mechanism=m, claim=claim, audit=dataclasses.replace(base.audit, samples=samples))  # type: ignore[type-var]


def _spec(name: str, *, samples: int) -> Spec:
    """``specs/<name>.toml`` with ``samples`` audit draws (fewer than the spec's, to keep the test fast)."""
    spec = load(ROOT / "specs" / f"{name}.toml")
    return dataclasses.replace(spec, audit=dataclasses.replace(spec.audit, samples=samples))  # type: ignore[type-var]


def test_projected_laplace_keeps_margins_with_exact_second_moment() -> None:
    res = audit(_variant("projected-laplace"), seed=11)
    mech = res.report["mechanism"]
    assert isinstance(mech, dict)
    assert mech["l1_sensitivity"] == 6  # the 3-cycles of S: |u|_1 = 6 (moves: 4)
    assert mech["scale"] == 6.0 and mech["noise_dimension"] == 4
    err = res.report["expected_l2_error"]
    assert isinstance(err, dict) and err["exact"] == 2 * 36 * 4  # 2 b^2 s
    assert err["quantity"] == "E||noise||_2^2"
    assert _check(res.report, "expected-l2-error")["status"] == "pass"
    assert _check(res.report, "invariant-preserved")["status"] == "pass"
    assert res.samples is not None
    assert np.abs(_margins(res.samples) - _margins(np.asarray(load(KNORM).data.table, dtype=float))).max() < 1e-9
    assert isinstance(res.effective, PureDP) and res.effective.epsilon == 1.0
    assert res.report["verdict"] == "holds"


@pytest.mark.parametrize(
    "kind, extra, noise_dim", [("laplace", {}, 9), ("gaussian", {"epsilon": None, "mu": Fraction(1)}, 9)]
)
def test_full_dimensional_kinds_do_not_keep_the_invariant_but_hold(
    kind: str, extra: dict[str, object], noise_dim: int
) -> None:
    res = audit(_variant(kind, **extra), seed=5)
    mech = res.report["mechanism"]
    assert isinstance(mech, dict) and mech["noise_dimension"] == noise_dim
    inv = _check(res.report, "invariant-preserved")
    assert inv["status"] == "skip" and inv["outcome"] == "not-applicable"
    assert "break the invariant" in str(inv["detail"])  # the draws really do break it
    assert _check(res.report, "expected-l2-error")["status"] == "pass"
    assert res.report["verdict"] == "holds"  # a not-applicable skip is not inconclusive


def test_the_cost_order_on_the_3x3_table() -> None:
    """Same target (1-DP on (D_t, A_3)): projected Laplace beats Laplace by the factor d/s = 9/4 in E||.||^2."""
    full = audit(_variant("laplace", samples=50), seed=1).report["expected_l2_error"]
    proj = audit(_variant("projected-laplace", samples=50), seed=1).report["expected_l2_error"]
    assert isinstance(full, dict) and isinstance(proj, dict)
    assert full["exact"] / proj["exact"] == pytest.approx(9 / 4, rel=1e-15)


def test_knorm_beyond_the_hull_picks_the_better_exact_fallback_5x5() -> None:
    """5x5 (s = 16): hull refused; projected Laplace (<= 6 sqrt(2*16) = 33.94) beats the l2 ball (16 sqrt 6 = 39.19)."""
    res = audit(_spec("table-5x5-k-norm", samples=300), seed=2)
    mech = res.report["mechanism"]
    assert isinstance(mech, dict)
    assert mech["optimal"] is False and mech["fallback"] == "projected-laplace"
    assert "NON-OPTIMAL" in mech["label"] and "refused" in mech["label"]
    alt = mech["alternatives"]
    assert alt["containing-ball"]["expected_l2_upper"] == pytest.approx(16 * math.sqrt(6), rel=1e-9)
    assert alt["projected-laplace"]["expected_l2_upper"] == pytest.approx(6 * math.sqrt(32), rel=1e-12)
    assert _check(res.report, "invariant-preserved")["status"] == "pass"
    assert _check(res.report, "expected-l2-error")["status"] == "pass"
    assert res.report["verdict"] == "holds"


def test_subspace_dp_projected_laplace_reproduces_T_G4() -> None:
    """GGY Cor 3.8/17 at epsilon = 0.192, add-remove, 102 counties: per-county variance 53.7216
    (docs/reference/subspace-integer-postprocessing.md T-G4)."""
    res = audit(_spec("county-state-total-projected-laplace", samples=500), seed=1)
    mech = res.report["mechanism"]
    assert isinstance(mech, dict)
    assert mech["per_cell_variance"]["max"] == pytest.approx(53.7216, abs=5e-5)
    assert mech["per_cell_variance"]["min"] == pytest.approx(53.7216, abs=5e-5)
    assert mech["noise_dimension"] == 101 and "sensitivity_space" not in mech  # S is not needed
    assert res.effective.relation.spec_name == "subspace"  # not DP, not Semi-DP
    assert _check(res.report, "invariant-preserved")["status"] == "pass"
    assert res.report["verdict"] == "holds"


def test_subspace_dp_projected_gaussian_uses_ggy_constant() -> None:
    """c(0.5, 1e-6) * Delta_2 = 13.715304 for the replace-one histogram (GGY Lemma 3.4/13; mechanisms.subspace doctest)."""
    spec = _variant("projected-gaussian", samples=200, epsilon=Fraction(1, 2), delta=Fraction(1, 10**6))
    spec = dataclasses.replace(spec, claim=dataclasses.replace(load(KNORM).claim, framework="subspace-dp"))  # type: ignore[type-var]
    res = audit(spec, seed=3)
    mech = res.report["mechanism"]
    assert isinstance(mech, dict) and round(mech["sigma"], 6) == 13.715304
    assert res.report["verdict"] == "fails"  # claim {epsilon = 1} is pure; a Gaussian gives (0.5, 1e-6) only
    assert _check(res.report, "expected-l2-error")["status"] == "pass"


def test_knorm_hull_is_cached_and_reverified(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SEMIDP_CACHE_DIR", str(tmp_path))
    spec = _variant("k-norm", samples=50)
    first = audit(spec, seed=1).report["mechanism"]
    second = audit(spec, seed=1).report["mechanism"]
    assert isinstance(first, dict) and isinstance(second, dict)
    assert first["hull_cache"]["status"] == "miss" and second["hull_cache"]["status"] == "hit"
    assert Path(second["hull_cache"]["path"]).parent == tmp_path


def test_knorm_2x13_is_optimal_in_closed_form() -> None:
    """s = 12, beyond the hull: the root polytope gives the optimal ball exactly (no hull, no fallback)."""
    spec = load(ROOT / "specs" / "table-2x13-k-norm.toml")
    res = audit(
        dataclasses.replace(spec, audit=dataclasses.replace(spec.audit, samples=300)),  # type: ignore[type-var]
        seed=2,
    )
    mech = res.report["mechanism"]
    assert isinstance(mech, dict) and mech["optimal"] is True and mech["noise_dimension"] == 12
    assert "root polytope" in mech["label"] and "hull_cache" not in mech
    assert _check(res.report, "invariant-preserved")["status"] == "pass"
    assert res.report["verdict"] == "holds"
