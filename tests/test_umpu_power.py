"""Exact power curves: Semi-DP UMPU vs Fisher vs naive group-privacy DP (issue 6, Step 5.3)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from semidp.accountant.core.errors import InvalidArgument
from semidp.accountant.profiles.tradeoff import TradeoffCurve
from semidp.mechanisms.cnd import GaussianCND, Tulap, cnd_from_tradeoff
from semidp.mechanisms.umpu import TableMargins
from semidp.mechanisms.umpu_power import (
    FisherConditionalTest,
    group_inequality_holds,
    naive_group_noise,
    power_curves,
)

MARGINS = [
    TableMargins((50, 50), (40, 60)),
    TableMargins((5, 5), (4, 6)),
    TableMargins((30, 70), (45, 55)),
    TableMargins((200, 120), (90, 230)),
    TableMargins((3, 8), (6, 5)),
]
NOISES = [Tulap(1.0), Tulap(0.3), Tulap(2.0, 1e-3), GaussianCND(1.0), GaussianCND(0.5)]
GRID = np.exp2(np.linspace(0.0, 4.0, 17))  # theta >= theta0 = 1
CASES = [(m, n) for m in MARGINS for n in NOISES]


@pytest.mark.parametrize(("margins", "noise"), CASES)
def test_exact_size_monotone_and_ordered(margins: TableMargins, noise: object) -> None:
    assert isinstance(noise, (Tulap, GaussianCND))
    pc = power_curves(margins, noise, alpha=0.05, thetas=GRID)
    assert pc.thetas[0] == 1.0
    for curve in (pc.semi_dp, pc.fisher, pc.naive):
        assert abs(curve[0] - 0.05) <= 1e-9  # exact size at theta0
        assert np.all(np.diff(curve) >= -1e-12)  # non-decreasing in theta
        assert np.all((curve >= 0.0) & (curve <= 1.0 + 1e-12))
    tol = 1e-12
    assert np.all(pc.fisher >= pc.semi_dp - tol)  # privacy costs power
    assert np.all(pc.semi_dp >= pc.naive - tol)  # Semi-DP UMPU beats naive group privacy
    # strictly better somewhere on the grid when the support is not tiny
    lo, hi = margins.support()
    if hi - lo >= 4:
        assert np.max(pc.semi_dp - pc.naive) > 1e-3


@pytest.mark.parametrize("theta0", [0.5, 2.0])
def test_other_null(theta0: float) -> None:
    m = TableMargins((50, 50), (40, 60))
    pc = power_curves(m, Tulap(1.0), theta0=theta0, alpha=0.1, thetas=theta0 * GRID)
    for curve in (pc.semi_dp, pc.fisher, pc.naive):
        assert abs(curve[0] - 0.1) <= 1e-9
    assert np.all(pc.fisher >= pc.semi_dp - 1e-12) and np.all(pc.semi_dp >= pc.naive - 1e-12)


def test_below_null_powers_below_alpha_and_default_grid() -> None:
    pc = power_curves(TableMargins((50, 50), (40, 60)), GaussianCND(1.0))
    i0 = int(np.nonzero(pc.thetas == 1.0)[0][0])
    for curve in (pc.semi_dp, pc.fisher, pc.naive):
        assert abs(curve[i0] - 0.05) <= 1e-9
        assert np.all(curve[:i0] < 0.05) and np.all(np.diff(curve) >= -1e-12)


def test_fisher_test_structure() -> None:
    m = TableMargins((50, 50), (40, 60))
    t = FisherConditionalTest(m, alpha=0.05)
    null = m.null(1.0)
    assert float(null.sf(t.c)) <= 0.05 < float(null.sf(t.c - 1))
    assert 0.0 <= t.gamma < 1.0
    lo, hi = m.support()
    xs = np.arange(lo, hi + 1)
    for th in (0.7, 1.0, 3.0):
        direct = math.fsum((m.null(th).pmf(xs) * t.phi(xs)).tolist())
        assert t.power(th) == pytest.approx(direct, rel=1e-12, abs=1e-15)
    # cross-check the non-randomised part against scipy
    from scipy import stats

    sp = stats.nchypergeom_fisher(100, 50, 40, 2.0)
    assert t.power(2.0) == pytest.approx(sp.sf(t.c) + t.gamma * sp.pmf(t.c), rel=1e-9)


def test_fisher_degenerate_support() -> None:
    t = FisherConditionalTest(TableMargins((3, 0), (2, 1)), alpha=0.05)  # X11 = 2 always
    assert t.c == 2 and t.gamma == pytest.approx(0.05) and t.size() == pytest.approx(0.05)


@pytest.mark.parametrize("eps", [0.1, 0.5, 1.0, 2.0, 5.0])
def test_group_tradeoff_inequality_pure(eps: float) -> None:
    # f_{eps/3,0}^{o3} >= f_{eps,0} (paper convention), on an alpha grid and via .dominates
    g = TradeoffCurve.from_approx_dp(eps / 3, 0.0).group(3)
    f = TradeoffCurve.from_approx_dp(eps, 0.0)
    a = np.linspace(0.0, 1.0, 2001)
    assert np.all(g.paper(a) >= f.paper(a) - 1e-14)
    assert g.dominates(TradeoffCurve.from_approx_dp(eps * (1 + 1e-9), 1e-9))
    assert group_inequality_holds(eps)
    # and it is strict in the middle: the naive calibration wastes privacy budget
    assert float(np.max(g.paper(a) - f.paper(a))) > 1e-3
    # sanity: f_{eps/3,0} alone (distance 1) is more private than f_{eps,0}
    assert TradeoffCurve.from_approx_dp(eps / 3, 0.0).dominates(f)


@pytest.mark.parametrize(("eps", "delta"), [(1.0, 1e-3), (2.0, 0.05), (0.5, 1e-6)])
def test_group_tradeoff_inequality_approx(eps: float, delta: float) -> None:
    n = naive_group_noise(Tulap(eps, delta))
    assert isinstance(n, Tulap)
    g = TradeoffCurve.from_approx_dp(n.epsilon, n.delta).group(3)
    f = TradeoffCurve.from_approx_dp(eps, delta)
    a = np.linspace(0.0, 1.0, 2001)
    assert np.all(g.paper(a) >= f.paper(a) - 1e-14)
    assert group_inequality_holds(eps, delta)


def test_gaussian_group_is_exact() -> None:
    # G_{mu/3}^{o3} = G_mu: the CND shift tradeoff of mu/3 composed 3 times equals that of mu
    n, big = naive_group_noise(GaussianCND(1.2)), GaussianCND(1.2)
    assert isinstance(n, GaussianCND) and n.mu == pytest.approx(0.4)
    a = np.linspace(0.01, 0.99, 99)
    g = np.asarray(a)
    for _ in range(3):
        g = np.asarray(n.shift_tradeoff(g, convention="paper"))
    assert np.allclose(g, np.asarray(big.shift_tradeoff(a, convention="paper")), atol=1e-12)


def test_errors() -> None:
    m = TableMargins((5, 5), (4, 6))
    with pytest.raises(InvalidArgument):
        power_curves(m, Tulap(1.0), thetas=[0.0, 1.0])
    with pytest.raises(InvalidArgument):
        naive_group_noise(cnd_from_tradeoff(TradeoffCurve.from_approx_dp(1.0, 0.0)))
    with pytest.raises(InvalidArgument):
        FisherConditionalTest(m, alpha=1.0)
    # explicit naive noise makes any CND usable
    cnd = cnd_from_tradeoff(TradeoffCurve.from_approx_dp(1.0, 0.0))
    pc = power_curves(m, cnd, thetas=[1.0, 3.0], naive_noise=Tulap(1.0 / 3))
    assert abs(pc.semi_dp[0] - 0.05) <= 1e-9


def test_plot_power(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    from semidp.verify.plots_power import plot_power

    pc = power_curves(TableMargins((50, 50), (40, 60)), Tulap(1.0))
    out = plot_power(pc, tmp_path / "sub" / "power.png", "Tulap eps=1")
    assert out.exists() and out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
