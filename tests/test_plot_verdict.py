"""Plots that show the verdict (Step 18.3): on every shipped spec, a refuted claim's violation is inside both
panels of the privacy plot, the proven point is marked, and the title states the verdict.

Tested through :func:`verify.plots.privacy_view` (the ranges, curves and marks the plot draws), not pixels.
The specs whose audit searches a(t) by integer program or draws from an MCMC sampler are marked slow, as
in ``test_shipped_specs``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from semidp.accountant.core.budget import Budget
from semidp.accountant.guarantees.definitions import GDP, ZCDP, ApproxDP
from semidp.accountant.guarantees.relations import Replace
from semidp.verify.load import load
from semidp.verify.plots import guarantee_profile, privacy_view
from semidp.verify.privacy_view import ALPHA_DEFAULT, GAP_FACTOR, ClaimPoint, ProvenPoint, choose_view
from semidp.verify.run_options import RunOptions
from semidp.verify.runner import audit
from semidp.verify.spec_values import guarantee_of
from tests.peer_specs import shipped_spec_params

SLOW = {
    "census-2020-pl94-persons-us-design",  # its design: tests/test_design.py
    "delinquent-children-4x4-generalized-gaussian",
    "delinquent-children-4x4-generalized-laplace",
    "intersecting-constraints-generalized-laplace",
    "table-2x13-k-norm",
    "table-3x7-k-norm",
    "table-4x4-k-norm",
    "table-5x5-k-norm",
}
R = Replace()


@pytest.mark.parametrize("path", shipped_spec_params(SLOW))
def test_the_privacy_plot_shows_the_verdict(path: Path) -> None:
    spec = load(str(path))
    res = audit(spec, seed=1, budget=Budget.of(120.0), options=RunOptions(allow_code=True))
    r = res.typed
    claim = None
    if spec.claim is not None:
        claim = ("claim", guarantee_of(spec.claim.guarantee, (res.effective or res.advertised).relation))
    view, labels, _ = privacy_view(  # a black box has no effective curve (none certified)
        [("advertised", res.advertised)] + ([("effective", res.effective)] if res.effective is not None else []),
        claim=claim,
        deltas=tuple(float(d) for d in spec.report.deltas),
        report=r,
    )
    assert r.verdict.upper() in view.headline
    refuted = [c for c in r.checks if c.name == "claim" and c.status == "fail"]
    if not refuted:
        if r.verdict == "holds":  # nothing drawn may contradict a verified claim
            assert view.violation is None and view.gap_alpha is None and view.proven is None
        return
    assert "FAILS" in view.headline and labels[-1].startswith("claim")
    if spec.mechanism.kind == "implementation":
        # a black-box audit refutes from a measured test point (its confidence box is drawn on the audit plot,
        # verify/audit_report.audit_plot); the privacy plot's curves are the claimed law's, so only the title says FAILS
        return
    k = view.subject
    # the violation is visible in both panels, inside the plotted ranges
    assert np.any(view.powers[k] > view.powers[-1] * GAP_FACTOR), "power panel shows no violation"
    assert np.any(view.profiles[k] > view.profiles[-1] * GAP_FACTOR), "profile panel shows no violation"
    assert view.gap_alpha is not None and view.alpha[0] <= view.gap_alpha <= 1.0
    assert view.violation is not None and view.violation[1] >= view.alpha[0]
    bounds = refuted[0].bounds
    if bounds is not None and spec.claim is not None and spec.claim.guarantee.delta:
        assert view.proven is not None and view.proven.lower == bounds.lower
        assert view.eps[0] <= view.proven.lower <= view.eps[-1]
        assert "proven epsilon >=" in view.headline


def test_census_pl94_violation_below_the_old_range_is_in_view() -> None:
    """The issue's case: the census claim (17.14, 1e-10) is violated down to type-I errors near 1e-24, below the old
    fixed range (1e-14); the chosen range reaches below where the curves cross, and the proven point is marked."""
    spec = load("specs/census-2020-pl94-persons-us.toml")
    res = audit(spec)
    claim = ("claim", guarantee_of(spec.claim.guarantee, res.effective.relation))  # type: ignore[union-attr]
    view, _, _ = privacy_view(
        [("advertised", res.advertised), ("effective", res.effective)], claim=claim, report=res.typed
    )
    assert view.violation is not None and view.violation[0] < 1e-20
    assert view.alpha[0] <= view.violation[0] < ALPHA_DEFAULT
    assert view.proven is not None and 29.98 < view.proven.lower < 29.9957
    assert view.headline.startswith("claim (claim) FAILS: proven epsilon >= 29.9871 > 17.14 at delta = 1e-10")


def _claim(eps: float, delta: float) -> ClaimPoint:
    p = guarantee_profile(ApproxDP(eps, delta, R))
    assert p is not None
    return ClaimPoint("c", p, eps, delta)


def test_choose_view_finds_a_violation_at_tiny_alpha_and_none_for_a_met_claim() -> None:
    eff = guarantee_profile(ZCDP(6.9, R))
    assert eff is not None
    bad = choose_view([eff], claim=_claim(17.14, 1e-10), verdict="fails", proven=ProvenPoint(29.0, 1e-10))
    assert bad.violation is not None and bad.alpha[0] < min(ALPHA_DEFAULT, bad.violation[0])
    assert bad.proven == ProvenPoint(29.0, 1e-10) and bad.gap_eps is not None
    ok = choose_view([eff], claim=_claim(40.0, 1e-10), verdict="holds")
    assert ok.violation is None and ok.gap_alpha is None and ok.alpha[0] == ALPHA_DEFAULT
    assert ok.headline == "claim (c) HOLDS"
    # a proven point that does not exceed the claim, or a verdict that is not "fails", is never marked
    assert (
        choose_view([eff], claim=_claim(40.0, 1e-10), verdict="holds", proven=ProvenPoint(29.0, 1e-10)).proven is None
    )


def test_no_finite_guarantee_is_a_violation_at_every_alpha_without_a_runaway_range() -> None:
    from semidp.accountant.guarantees.semidp import NoFiniteGuarantee

    none = guarantee_profile(NoFiniteGuarantee("the invariant is deterministic", R))
    assert none is not None
    v = choose_view([none], claim=_claim(1.0, 1e-6), verdict="fails")
    assert v.alpha[0] == ALPHA_DEFAULT and v.violation is not None and v.gap_alpha is not None


def test_power_bound_is_the_gaussian_tradeoff() -> None:
    """The power panel is 1 - f: for mu-GDP it must match 1 - G_mu(alpha) = Phi(Phi^-1(alpha) + mu)."""
    from scipy.stats import norm

    prof = guarantee_profile(GDP(1.0, R))
    assert prof is not None
    v = choose_view([prof], points=400, reach=6.0)
    exact = norm.cdf(norm.ppf(v.alpha) + 1.0)
    mid = (v.alpha > 1e-10) & (v.alpha < 0.5)
    assert np.all(v.powers[0] >= exact * (1 - 1e-9))  # an upper bound
    assert np.all(v.powers[0][mid] <= exact[mid] * 1.5)  # and a close one


@pytest.mark.parametrize("g", [ZCDP(1e-300, R), ZCDP(1e24, R), ZCDP(1e300, R), GDP(1e-300, R), GDP(1e6, R)])
def test_extreme_guarantees_give_a_view(tmp_path: Path, g: object) -> None:
    """``--out`` with ``zcdp = 1e-300`` was an internal error (the tradeoff curve's root finding did not converge)."""
    from semidp.verify.plots import plot_privacy

    view, _, _ = privacy_view([("advertised", g), ("effective", g)], claim=("c", g))  # type: ignore[list-item]
    assert view.violation is None and all(np.all((p >= 0) & (p <= 1)) for p in view.powers)
    assert plot_privacy([("a", g)], tmp_path / "p.png", "t").exists()  # type: ignore[list-item]
