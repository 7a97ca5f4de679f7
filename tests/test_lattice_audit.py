"""Audits of integer lattice mechanisms (issue 5, deliverables 4 and 6): generalized Laplace / Gaussian specs."""

from __future__ import annotations

import dataclasses
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from accountant import InvalidSpec
from accountant.guarantees import ApproxDP
from verify.lattice_audit import LatticeAudit, audit_lattice
from verify.spec import SamplerSpec, Spec, load, loads

ROOT = Path(__file__).resolve().parents[1]
DELINQUENT = ROOT / "specs" / "delinquent-children-4x4-generalized-laplace.toml"


def _check(report: dict[str, object], name: str) -> dict[str, object]:
    checks = report["checks"]
    assert isinstance(checks, list)
    return next(c for c in checks if c["name"] == name)


def _small(spec: Spec, samples: int = 200, **sampler: object) -> Spec:
    smp = dataclasses.replace(spec.mechanism.sampler or SamplerSpec(), **sampler)  # type: ignore[arg-type]
    return dataclasses.replace(spec, mechanism=dataclasses.replace(spec.mechanism, sampler=smp),
                               audit=dataclasses.replace(spec.audit, samples=samples))  # type: ignore[type-var]


@pytest.fixture(scope="module")
def delinquent() -> LatticeAudit:
    return audit_lattice(_small(load(DELINQUENT), pairs=100, lag=1000, tv=Fraction(1, 10)), seed=5)


def test_mcmc_releases_are_integer_with_exact_margins(delinquent: LatticeAudit) -> None:
    assert delinquent.samples is not None and delinquent.samples.shape == (200, 16)
    y = delinquent.samples
    assert np.array_equal(y, np.round(y))                                  # integer-valued
    t = np.asarray(load(DELINQUENT).data.table).reshape(4, 4)
    yt = y.reshape(-1, 4, 4)
    assert np.array_equal(yt.sum(axis=2), np.broadcast_to(t.sum(axis=1), (200, 4)))
    assert np.array_equal(yt.sum(axis=1), np.broadcast_to(t.sum(axis=0), (200, 4)))
    assert _check(delinquent.report, "invariant-preserved")["status"] == "pass"
    assert _check(delinquent.report, "lattice-basis")["status"] == "pass"


def test_mcmc_delta_prime_is_charged(delinquent: LatticeAudit) -> None:
    mech = delinquent.report["mechanism"]
    assert isinstance(mech, dict) and mech["sampler"]["method"] == "mcmc"
    burn = mech["sampler"]["burn_in"]
    assert burn["tv_upper"] <= 0.1 and burn["t"] > 1000                 # T-I8: converges after ~10^3..10^4
    d_tv = mech["delta_tv_charged"]
    assert d_tv == burn["tv_upper"] > 0
    eff = delinquent.effective
    assert isinstance(eff, ApproxDP) and eff.epsilon == 0.25
    assert eff.delta >= (1 + np.exp(0.25)) * d_tv                         # (1 + e^eps) delta'
    assert delinquent.tv_curve is not None and delinquent.tv_curve[0][0] == 0
    vals = [v for _, v in delinquent.tv_curve]
    assert all(a >= b for a, b in zip(vals, vals[1:]))                    # non-increasing


def test_mean_l1_norm_matches_T_I7(delinquent: LatticeAudit) -> None:
    """Reference T-I7 (4x4, eps = 0.25, l1): E||z||_1 = 35.07 +- 0.04 (MC); here 200 draws, 99.99% interval."""
    mc = delinquent.report["expected_l2_error"]["monte_carlo"]  # type: ignore[index]
    lo, hi = mc["interval"]
    assert lo <= 35.07 <= hi


def test_semi_dp_statement_scales_with_the_exact_sensitivity(delinquent: LatticeAudit) -> None:
    """Semi-DP on (D_t, A_3): eps * Delta_1(S); S has 3-cycles with ||s||_1 = 6, so 6 x 0.25 = 1.5."""
    mech = delinquent.report["mechanism"]
    assert isinstance(mech, dict) and mech["semi_dp_distance"]["value"] == 6.0
    semi = delinquent.report["guarantees"]["semi_dp"]  # type: ignore[index]
    assert semi["epsilon"] == 1.5


def test_budget_exhaustion_is_inconclusive_not_a_crash() -> None:
    spec = _small(load(DELINQUENT), samples=10, pairs=50, lag=1000, time_limit=Fraction(1, 100))
    res = audit_lattice(spec, seed=1)
    assert _check(res.report, "sampler")["status"] == "skip"
    assert res.report["verdict"] == "inconclusive" and res.samples is None


def test_loader_checks_lattice_keys() -> None:
    text = DELINQUENT.read_text(encoding="utf-8")
    with pytest.raises(InvalidSpec, match="mechanism.sampler.tv"):
        loads(text.replace("tv = 0.05", "tv = 1.5"))
    with pytest.raises(InvalidSpec, match="mechanism.epsilon"):
        loads(text.replace("epsilon = 0.25\nnorm", "norm"))
    with pytest.raises(InvalidSpec, match="mechanism.rho"):
        loads(text.replace('kind = "generalized-laplace"', 'kind = "generalized-gaussian"').replace(
            'norm = "l1"\n', ""))
