"""Composition of k identical (epsilon, delta)-DP parts: the optimal composition [KOV15, Thm. 3.3] in closed form,
the zCDP sum of pure parts [BS16, Prop. 1.4, Lemma 2.3], and deltas reached only by composing the deltas.

References are computed here independently: the binomial sum at 50 digits with mpmath (term by term, its root by
mpmath's findroot), and Google's dp_accounting PLD accountant.
"""

from __future__ import annotations

import contextlib
import io
import json
import math
from pathlib import Path
from typing import Any

import mpmath
import pytest

from semidp.verify.cli import main

SPECS = Path(__file__).resolve().parent.parent / "specs"
_MP = mpmath.MPContext()
_MP.dps = 50


def _kov_delta(eps0: float, delta0: float, k: int, eps: Any) -> Any:
    """delta(eps) of k-fold (eps0, delta0)-DP at 50 digits: 1 - (1 - delta0)^k (1 - delta_RR(eps)), the binomial
    summed term by term [KOV15, Thm. 3.3]."""
    e0, e = _MP.mpf(eps0), _MP.mpf(eps)
    p = _MP.exp(e0) / (1 + _MP.exp(e0))
    rr = _MP.fsum(
        _MP.binomial(k, j) * p ** (k - j) * (1 - p) ** j * (1 - _MP.exp(e - (k - 2 * j) * e0))
        for j in range(k + 1)
        if (k - 2 * j) * e0 > e
    )
    return 1 - (1 - _MP.mpf(delta0)) ** k * (1 - rr)


def _kov_root(eps0: float, delta0: float, k: int, delta: float, bracket: tuple[float, float]) -> Any:
    return _MP.findroot(lambda e: _kov_delta(eps0, delta0, k, e) - _MP.mpf(delta), bracket, solver="anderson")


def _audit(path: Path) -> tuple[int, dict[str, Any]]:
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        code = main(["audit", str(path), "--json", "--quiet"])
    report: dict[str, Any] = json.loads(buf.getvalue())
    return code, report


def _entry(section: dict[str, Any], delta: float) -> float | None:
    value: float | None = next(e["epsilon"] for e in section["epsilon_delta"] if e["delta"] == delta)
    return value


def test_365_days_of_epsilon_1_golden() -> None:
    """365 x epsilon = 1 at delta = 1e-7: 250.95394234365... [KOV15], not the sum 365; sound, and within 1e-9."""
    from semidp.accountant.guarantees.composition import homogeneous_epsilon
    from semidp.accountant.guarantees.definitions import PureDP

    ref = _kov_root(1.0, 0.0, 365, 1e-7, (250.0, 252.0))
    assert abs(ref - _MP.mpf("250.953942343655")) < 1e-11
    got = homogeneous_epsilon(PureDP(1.0), 365, 1e-7)
    assert got is not None and ref <= got <= ref + 1e-9
    assert _kov_delta(1.0, 0.0, 365, got) <= 1e-7


def test_golden_against_dp_accounting() -> None:
    """Google's PLD accountant (exact on the loss grid, float arithmetic) agrees to 1e-6 on both catalog cases."""
    from dp_accounting.pld import privacy_loss_distribution as pld

    from semidp.accountant.guarantees.composition import homogeneous_epsilon
    from semidp.accountant.guarantees.definitions import ApproxDP, PureDP

    for part, k, delta in ((PureDP(1.0), 365, 1e-7), (ApproxDP(2.19, 1e-5), 7, 1e-3), (ApproxDP(2.19, 1e-5), 7, 7e-5)):
        d0 = part.delta if isinstance(part, ApproxDP) else 0.0
        params = pld.common.DifferentialPrivacyParameters(part.epsilon, d0)
        theirs = pld.from_privacy_parameters(params, value_discretization_interval=1e-3).self_compose(k)
        ours = homogeneous_epsilon(part, k, delta)
        assert ours == pytest.approx(theirs.get_epsilon_for_delta(delta), abs=1e-6)


def test_small_k_below_the_f_dp_route() -> None:
    """For small k the numerical f-DP composition (a sound upper bound) is at or above the exact value, and close."""
    from semidp.accountant.guarantees.composition import compose_tradeoffs, homogeneous_epsilon
    from semidp.accountant.guarantees.conversions import tradeoff_to_approx_dp
    from semidp.accountant.guarantees.definitions import ApproxDP, PureDP

    for part, k in ((PureDP(0.5), 5), (ApproxDP(1.0, 1e-6), 4)):
        for delta in (1e-3, 1e-5):
            ours = homogeneous_epsilon(part, k, delta)
            fdp = tradeoff_to_approx_dp(compose_tradeoffs([part] * k), delta)
            assert ours is not None and fdp is not None
            assert ours <= fdp.epsilon + 1e-9 and fdp.epsilon - ours < 0.02
            assert _kov_delta(part.epsilon, getattr(part, "delta", 0.0), k, ours) <= delta


def test_rounding_direction() -> None:
    """The reported epsilon is at or above the exact root, so its exact delta is <= the target; a twin that rounds
    the root down (or lands 1e-12 below it) breaks that check."""
    from semidp.accountant.core.directed import down
    from semidp.accountant.guarantees.composition import homogeneous_epsilon
    from semidp.accountant.guarantees.definitions import ApproxDP, PureDP

    for part, k, delta, bracket in (
        (PureDP(1.0), 365, 1e-7, (250.0, 252.0)),
        (ApproxDP(2.19, 1e-5), 7, 1e-3, (15.0, 15.33)),
    ):
        d0 = part.delta if isinstance(part, ApproxDP) else 0.0
        got = homogeneous_epsilon(part, k, delta)
        assert got is not None and _kov_delta(part.epsilon, d0, k, got) <= delta
        root = _kov_root(part.epsilon, d0, k, delta, bracket)
        assert _kov_delta(part.epsilon, d0, k, down(root)) > delta or down(root) == root
        assert _kov_delta(part.epsilon, d0, k, got - 1e-12 * got) > delta


def test_historical_year_report_and_rho() -> None:
    """The Wikimedia historical year reports 250.954 at 1e-7 (the sum 365 stays as epsilon) and rho = 365/2 =
    182.5 (each part 1/2-zCDP, zCDP adds), not (365)^2/2 = 66612.5; every figure re-certified."""
    code, report = _audit(SPECS / "wikimedia-pageviews-historical-year.toml")
    assert code == 0
    adv = report["advertised"]
    assert adv["epsilon"] == pytest.approx(365.0, abs=1e-9)
    assert adv["zcdp"] == pytest.approx(182.5, abs=1e-9) and adv["zcdp"] >= 182.5
    got = _entry(adv, 1e-7)
    assert got is not None and got == pytest.approx(250.953942, abs=1e-6)
    assert _kov_delta(1.0, 0.0, 365, got) <= 1e-7
    certified = next(c for c in report["checks"] if c["name"] == "conversions-certified")
    assert certified["outcome"] == "verified"


def test_mixed_pure_parts_rho_and_no_kov() -> None:
    """Pure parts 1 and 2: rho = 1/2 + 2 = 2.5 (not 9/2); not identical, so epsilon stays the closed-form profile."""
    from semidp.accountant.guarantees.conversion_routes import epsilon_delta, native_forms
    from semidp.accountant.guarantees.definitions import PureDP
    from semidp.verify.spec_values import compose_parts

    g = compose_parts([PureDP(1.0), PureDP(2.0)])
    assert native_forms(g) == {"epsilon": 3.0, "zcdp": 2.5}
    [e] = epsilon_delta(g, 1e-6)
    assert e.epsilon == pytest.approx(math.log(math.exp(3) - 1e-6 * (1 + math.exp(3))), abs=1e-12)


def test_delta_reached_only_by_composing_deltas() -> None:
    """7 x (2.19, 1e-5) at delta = 7e-5: 1 - (1 - 1e-5)^7 = 6.99979e-5 <= 7e-5, so an epsilon <= 15.33 holds (was
    "no finite epsilon"); just below 1 - (1 - 1e-5)^7 none does."""
    code, report = _audit(SPECS / "google-vaccination-search-week.toml")
    assert code == 0
    got = _entry(report["advertised"], 7e-5)
    assert got is not None and got <= 15.33 + 1e-9 and _kov_delta(2.19, 1e-5, 7, got) <= 7e-5
    from semidp.accountant.guarantees.composition import homogeneous_epsilon
    from semidp.accountant.guarantees.definitions import ApproxDP

    floor = 1 - (1 - 1e-5) ** 7
    assert homogeneous_epsilon(ApproxDP(2.19, 1e-5), 7, floor * (1 - 1e-9)) is None
    assert homogeneous_epsilon(ApproxDP(2.19, 1e-5), 7, floor * (1 + 1e-9)) is not None


@pytest.mark.parametrize(("claimed", "code"), [(251.0, 0), (250.96, 0), (250.9, 1)])
def test_verdict_direction(tmp_path: Path, claimed: float, code: int) -> None:
    """Claims at delta = 1e-7 for the 365 days agree with the reported 250.954: above it verified (exit 0), below
    it refuted (exit 1) from the proven lower bound of the parts' dominating pairs, never the other way round."""
    text = (SPECS / "wikimedia-pageviews-historical-year.toml").read_text(encoding="utf-8")
    spec = tmp_path / "claimed.toml"
    spec.write_text(
        text + f'\n[claim]\nframework = "dp"\nguarantee = {{ epsilon = {claimed}, delta = 1e-7 }}\n', encoding="utf-8"
    )
    got, report = _audit(spec)
    assert got == code, report["verdict"]
    reported = _entry(report["advertised"], 1e-7)
    assert reported is not None and (reported <= claimed) == (code == 0)


def test_semi_first_keeps_the_parts() -> None:
    """Cho & Awan Prop. 21, semi-first: four 0.5-DP parts grouped at radius 2 are 1-DP each, so rho = 4 x 1/2 = 2
    (not 4^2/2 = 8) and the epsilon at 1e-3 is the optimal composition of four 1-DP parts, below the sum 4."""
    from semidp.accountant.data.invariants import Total
    from semidp.accountant.guarantees.conversion_routes import epsilon_delta, native_forms
    from semidp.accountant.guarantees.definitions import PureDP
    from semidp.accountant.guarantees.semidp import semi_dp_composition

    first = semi_dp_composition([PureDP(0.5)] * 4, Total(), 2).semi_first
    assert native_forms(first) == {"epsilon": 4.0, "zcdp": 2.0}
    [e] = epsilon_delta(first, 1e-3)
    ref = _kov_root(1.0, 0.0, 4, 1e-3, (2.0, 3.99))
    assert e.epsilon is not None and ref <= e.epsilon <= ref + 1e-9
