"""Audit of a private hypothesis test spec: ``mechanism.kind = "umpu-odds-ratio"`` (Cho & Awan 2024, Thm. 37).

The confidential 2x2 table's one-way margins are the invariant; the release is
``Z = x11 + N`` with ``N`` a canonical noise distribution, f-DP on
``(D_t, A_3)``. The report carries the contract's ``test`` object (statistic,
pvalue, reject, m, size = alpha exactly) and the guarantee satisfied; checks:
a(t) <= 3 (so the A_3 guarantee covers the semi-adjacent pairs), the exact size,
the certified conversions, and the claim if the spec states one.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from accountant.semiadjacent import semi_adjacent_parameter
from mechanisms.cnd import CanonicalNoise, GaussianCND, Tulap
from mechanisms.umpu import SemiDPOddsRatioTest, TableMargins
from mechanisms.umpu_power import PowerCurves, power_curves
from verify.audit import (
    Audit, _check, claim_check, invariant_of, relation_of, report_footer, report_header, space_of,
    summarize,
)
from verify.certify import certify_summary
from verify.outcome import Outcome, Refuted, Verified
from verify.spec import Spec

@dataclass(frozen=True)
class TestAudit(Audit):
    """An audit of a private test, with its exact power curves (for the report's plot)."""

    power: PowerCurves | None = None
    """Semi-DP UMPU vs the non-private Fisher test vs the naive group-privacy test."""


#: Relative tolerance for "size equals alpha": the threshold m is a double (mechanisms.umpu notes).
SIZE_RTOL = 1e-9


def noise_of(spec: Spec) -> CanonicalNoise:
    """The CND of ``mechanism.noise``."""
    n = spec.mechanism.noise
    assert n is not None  # checked by the loader
    if n.cnd == "tulap":
        assert n.epsilon is not None
        return Tulap(float(n.epsilon), float(n.delta or 0))
    assert n.mu is not None
    return GaussianCND(float(n.mu))


def audit_umpu(spec: Spec, *, seed: int | None = None, time_limit: float = 60.0) -> Audit:
    """Run the spec's UMPU test and check it (see the module docstring)."""
    m = spec.mechanism
    space, inv, rel = space_of(spec), invariant_of(spec), relation_of(spec)
    assert spec.data.table is not None
    table = np.asarray(spec.data.table, dtype=np.int64).reshape(2, 2)
    names = (space.names[0], space.names[1])
    margins = TableMargins.from_table(table, names)
    alpha = float(m.alpha) if m.alpha is not None else 0.05
    theta0 = float(m.theta0) if m.theta0 is not None else 1.0
    test = SemiDPOddsRatioTest(margins, noise_of(spec), theta0, alpha, m.alternative or "greater")
    used_seed = None
    if m.released is not None:
        z = float(m.released)
    else:
        used_seed = seed if seed is not None else (spec.audit.seed if spec.audit is not None else None)
        if used_seed is None:
            entropy = np.random.SeedSequence().entropy
            assert isinstance(entropy, int)  # SeedSequence() draws an int from the OS
            used_seed = entropy % 2**63  # recorded in the report
        z = test.release(int(table[0, 0]), rng=np.random.default_rng(used_seed))
    result = test.result(z)
    effective = result.guarantee
    deltas = [float(d) for d in spec.report.deltas]

    a = semi_adjacent_parameter(space, inv, rel, table=table.ravel().tolist(), time_limit=time_limit)
    cover: Outcome = (
        Verified(f"a(t) = {a.value} by {a.method} <= 3: the (D_t, A_3) guarantee covers every "
                 "semi-adjacent pair (Cho & Awan Thm. 37)")
        if a.value <= 3 else Refuted(f"a(t) = {a.value} > 3: the A_3 guarantee does not cover A_a(t)")
    )
    size_ok = math.isclose(result.size, alpha, rel_tol=SIZE_RTOL)
    size: Outcome = (
        Verified(f"exact conditional size {result.size:.15g} = alpha at the margins")
        if size_ok else Refuted(f"exact size {result.size!r} differs from alpha = {alpha!r}")
    )
    eff_summary = {"framework": "semi-dp", **summarize(effective, deltas)}
    curves: PowerCurves | None = None
    power: dict[str, Any] | None = None
    if test.alternative == "greater":
        curves = power_curves(margins, test.noise, theta0=theta0, alpha=alpha)
        pick = [i for i, th in enumerate(curves.thetas) if th in (2 * theta0, 4 * theta0)]
        power = {
            "note": "exact power: Semi-DP UMPU (Thm 37) vs the non-private randomised Fisher test vs a "
                    "naive DP test calibrated by group privacy (f_{eps/3}, so f^{o3} >= f on A_3)",
            "naive_noise": repr(curves.naive_noise),
            "at": [{"theta": float(curves.thetas[i]), "fisher": float(curves.fisher[i]),
                    "semi_dp": float(curves.semi_dp[i]), "naive": float(curves.naive[i])} for i in pick],
        }
    checks = [
        _check("semi-adjacent-parameter", cover),
        _check("size-exact", size),
        _check("conversions-certified", certify_summary([eff_summary], effective, effective)),
    ]
    checks += claim_check(spec, effective)
    report: dict[str, Any] = {
        **report_header(spec, space, rel, inv, a, used_seed),
        "test": {
            "statistic": result.statistic, "pvalue": result.pvalue, "reject": result.reject,
            "m": result.m, "m_lower": result.m_lower, "size": result.size, "alpha": alpha,
            "theta0": theta0, "alternative": result.alternative,
            "margins": {"rows": list(margins.rows), "cols": list(margins.cols)},
            "released": m.released is not None,
            "guarantee": eff_summary,
            **({"power": power} if power is not None else {}),
        },
        "advertised": eff_summary,
        "effective": eff_summary,
        **report_footer(spec, checks),
    }
    return TestAudit(report=report, advertised=effective, effective=effective, power=curves)
