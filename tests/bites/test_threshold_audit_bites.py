"""Fast guards of the audit's decision (verify/threshold_audit.py): the Clopper-Pearson side, the Bonferroni count,
the selection/measurement split and the round spending, each pinned to exact small cases.

Issue Step 16: flipping any single comparison, side or constant of the decision fails a test here (judged by
``python benchmarks/mutation.py verify/threshold_audit.py``). Oracles are closed forms (the Clopper-Pearson bound
at ``k = 0`` is ``1 - level^(1/n)`` [CP34]) or brute force over every threshold, never the code under test.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import beta as beta_dist

from semidp.accountant.core.errors import InvalidArgument
from semidp.verify.audit_report import TradeoffPoint
from semidp.verify.threshold_audit import (
    FIRST_ROUND,
    GROWTH,
    THRESHOLDS,
    Candidate,
    Measured,
    Statistic,
    batch_split,
    choose,
    cp_upper,
    epsilon_lower,
    measure,
    per_bound_level,
    round_sizes,
    select,
    spending,
    split_sizes,
)

IDENTITY = Statistic("identity", lambda x: np.asarray(x[:, 0], dtype=np.float64))


def _col(values: list[float]) -> np.ndarray:
    return np.asarray(values, dtype=np.float64).reshape(-1, 1)


def _perfect(a: np.ndarray) -> np.ndarray:
    """The tradeoff function of perfect privacy, 1 - alpha."""
    return np.asarray(1.0 - a, dtype=np.float64)


def test_constants() -> None:
    assert (FIRST_ROUND, GROWTH, THRESHOLDS) == (10_000, 4, 256)


# --- Clopper-Pearson: the upper side, padded up, and 1 at k = n -------------------------------------------------


@pytest.mark.parametrize("n, level", [(100, 0.05), (7, 0.01), (1, 0.2)])
def test_cp_upper_at_zero_successes_is_the_closed_form_padded_up(n: int, level: float) -> None:
    exact = 1.0 - level ** (1.0 / n)  # Beta(1, n) quantile at 1 - level
    got = float(cp_upper(0, n, level))
    assert exact < got <= exact * (1 + 3e-12)


def test_cp_upper_is_the_upper_quantile_not_the_lower() -> None:
    exact = float(beta_dist.ppf(0.95, 4, 7))  # k = 3 of n = 10: Beta(k + 1, n - k) at 1 - level
    got = float(cp_upper(3, 10, 0.05))
    assert exact < got <= exact * (1 + 3e-12)
    assert got > 0.3  # above the point estimate 3/10: the upper side
    lower_side = float(beta_dist.ppf(0.05, 4, 7))
    assert lower_side < 0.3 < got


def test_cp_upper_is_vectorised_and_one_at_full_counts() -> None:
    got = cp_upper(np.array([0.0, 5.0, 10.0]), 10, 0.1)
    assert got.shape == (3,)
    assert got[2] == 1.0
    assert float(cp_upper(5, 5, 0.05)) == 1.0
    assert float(cp_upper(6, 5, 0.05)) == 1.0
    assert got[0] < got[1] < 1.0
    assert abs(got[1] - beta_dist.ppf(0.9, 6, 5)) <= 3e-12 * got[1]


def test_cp_upper_never_returns_zero() -> None:
    # level 1: the quantile at 0 is 0; the pad keeps the bound strictly positive
    assert 0.0 < float(cp_upper(0, 10, 1.0)) <= 1e-299


def test_cp_upper_fractional_counts_interpolate() -> None:
    assert float(cp_upper(2.0, 10, 0.05)) < float(cp_upper(2.5, 10, 0.05)) < float(cp_upper(3.0, 10, 0.05))


# --- epsilon lower bound: both inequalities of DRS22 Prop. 2.5, rounded down ------------------------------------


def test_epsilon_lower_first_branch_rounded_down() -> None:
    assert epsilon_lower(0.05, 0.5, 0.0) == math.nextafter(math.log(0.5 / 0.05), 0.0)
    assert epsilon_lower(0.3, 0.4, 0.0) == math.nextafter(math.log((1.0 - 0.4) / 0.3), 0.0)  # below 1


def test_epsilon_lower_second_branch_wins_when_larger() -> None:
    assert epsilon_lower(0.3, 0.01, 0.0) == math.nextafter(math.log((1.0 - 0.0 - 0.3) / 0.01), 0.0)


def test_epsilon_lower_subtracts_delta() -> None:
    assert epsilon_lower(0.05, 0.5, 0.1) == math.nextafter(math.log((1.0 - 0.1 - 0.5) / 0.05), 0.0)
    assert epsilon_lower(0.05, 0.5, 0.1) < epsilon_lower(0.05, 0.5, 0.0)


def test_epsilon_lower_is_zero_without_evidence() -> None:
    assert epsilon_lower(0.5, 0.5, 0.0) == 0.0  # on the perfect-privacy line
    assert epsilon_lower(0.6, 0.7, 0.0) == 0.0  # above it
    assert epsilon_lower(0.5, 0.5, 0.5) == 0.0  # numerator exactly 0 on both branches
    assert epsilon_lower(0.2, 0.9, 0.2) == 0.0  # numerator negative on the first branch, ratio < 1 on the second


def test_epsilon_lower_skips_a_zero_alpha() -> None:
    # alpha_U = 0 cannot occur for a Clopper-Pearson bound, but must not divide by zero: the other branch counts
    assert epsilon_lower(0.0, 0.5, 0.0) == math.nextafter(math.log(1.0 / 0.5), 0.0)
    assert epsilon_lower(0.5, 0.0, 0.0) == math.nextafter(math.log(1.0 / 0.5), 0.0)


# --- the refutation rule --------------------------------------------------------------------------------------


def _measured(beta_upper: float, claimed: float) -> Measured:
    cand = Candidate(pair=2, statistic="projection", threshold=0.25, predicted_gap=0.1)
    return Measured(cand, 0.1, 0.2, 0.15, beta_upper, claimed, 40)


def test_refutes_only_strictly_below_the_claimed_curve() -> None:
    assert _measured(0.49, 0.5).refutes
    assert not _measured(0.5, 0.5).refutes
    assert not _measured(0.51, 0.5).refutes


def test_tradeoff_point_json_reports_the_upper_bounds() -> None:
    assert TradeoffPoint.of(_measured(0.49, 0.5)).to_json() == {
        "pair": 2,
        "statistic": "projection",
        "threshold": 0.25,
        "alpha": 0.15,
        "beta": 0.49,
        "alpha_hat": 0.1,
        "beta_hat": 0.2,
        "claimed_beta": 0.5,
        "below_claim": True,
        "draws_per_side": 40,
    }
    assert TradeoffPoint.of(_measured(0.5, 0.5)).to_json()["below_claim"] is False


# --- the split ------------------------------------------------------------------------------------------------


def test_split_sizes() -> None:
    assert split_sizes(2, 0.5) == (1, 1)
    assert split_sizes(10, 0.5) == (5, 5)
    assert split_sizes(10, 0.3) == (3, 7)
    assert split_sizes(10, 0.99) == (9, 1)  # at least one measures
    assert split_sizes(10, 1.0) == (9, 1)
    assert split_sizes(10, 0.01) == (1, 9)  # at least one selects
    with pytest.raises(InvalidArgument, match="at least 2 draws"):
        split_sizes(1, 0.5)


def test_batch_split() -> None:
    assert batch_split(0, 0.5) == 0
    assert batch_split(1, 0.5) == 0  # a single draw measures
    assert batch_split(2, 0.5) == 1
    assert batch_split(2, 0.01) == 1
    assert batch_split(10, 0.3) == 3
    assert batch_split(10, 0.99) == 9
    assert batch_split(10, 0.01) == 1
    assert batch_split(10, 1.0) == 9  # at least one measures
    assert batch_split(2, 1.0) == 1


# --- the Bonferroni count and the rounds' spending ------------------------------------------------------------


def test_per_bound_level_is_the_bonferroni_share_of_two_bounds_per_test() -> None:
    assert per_bound_level(0.95, 3) == (1.0 - 0.95) / 6
    assert per_bound_level(0.9, 1) == (1.0 - 0.9) / 2
    assert per_bound_level(0.9, 0) == (1.0 - 0.9) / 2  # at least one test


def test_round_sizes_grow_by_the_factor_and_end_at_n() -> None:
    assert round_sizes(10_000) == [10_000]
    assert round_sizes(10_001) == [10_000, 10_001]
    assert round_sizes(40_000) == [10_000, 40_000]
    assert round_sizes(1) == [1]
    assert round_sizes(10, first=1, growth=2) == [1, 2, 4, 8, 10]
    assert round_sizes(9, first=3, growth=3) == [3, 9]


@pytest.mark.parametrize("n, first, growth", [(0, 1, 2), (5, 0, 2), (5, 1, 1)])
def test_round_sizes_refuses_degenerate_plans(n: int, first: int, growth: int) -> None:
    with pytest.raises(InvalidArgument, match="round_sizes"):
        round_sizes(n, first, growth)


def test_spending_is_linear_in_information_and_rounded_down() -> None:
    got = spending(0.05, [1, 3, 4])
    assert got == [
        math.nextafter(0.05 * 1 / 4, 0.0),
        math.nextafter(0.05 * 2 / 4, 0.0),
        math.nextafter(0.05 * 1 / 4, 0.0),
    ]
    assert sum(got) <= 0.05
    assert spending(0.1, [7]) == [math.nextafter(0.1, 0.0)]


# --- selection, measurement and the choice of tests -----------------------------------------------------------


def _brute_gap(s0: np.ndarray, s1: np.ndarray, tau: float, n_measure: int, level: float) -> float:
    p0 = float(np.sum(s0 > tau)) / len(s0)
    q1 = float(np.sum(s1 <= tau)) / len(s1)
    a_u = float(cp_upper(p0 * n_measure, n_measure, level))
    b_u = float(cp_upper(q1 * n_measure, n_measure, level))
    return 1.0 - a_u - b_u


def test_select_finds_the_best_threshold_at_the_measurements_size() -> None:
    # overlapping scores with outliers on both sides: the best threshold has positive counts on both sides
    s0 = np.concatenate([np.arange(100.0), np.full(5, 1000.0)])
    s1 = np.concatenate([np.arange(110.0) + 30.0, np.full(5, -10.0)])
    n_measure, level = 1000, 0.01
    (cand,) = select(3, [IDENTITY], _col(list(s0)), _col(list(s1)), _perfect, n_measure=n_measure, level=level)
    assert cand.pair == 3 and cand.statistic == "identity"
    pooled = np.unique(np.concatenate([s0, s1]))
    best = max(_brute_gap(s0, s1, float(t), n_measure, level) for t in pooled)
    assert best > 0.05
    assert 0 < np.sum(s0 > cand.threshold) < len(s0) and 0 < np.sum(s1 <= cand.threshold) < len(s1)
    assert cand.predicted_gap == pytest.approx(best, rel=1e-12)
    assert _brute_gap(s0, s1, cand.threshold, n_measure, level) == pytest.approx(best, rel=1e-12)
    # at the selection's own size the bounds are much wider: the prediction uses n_measure
    small = max(_brute_gap(s0, s1, float(t), 10, level) for t in pooled)
    assert small < best - 0.1


def test_select_one_candidate_per_statistic() -> None:
    neg = Statistic("negated", lambda x: np.asarray(-x[:, 0], dtype=np.float64))
    s0, s1 = _col([0.0, 1.0, 2.0, 3.0]), _col([4.0, 5.0, 6.0, 7.0])
    out = select(0, [IDENTITY, neg], s0, s1, _perfect, n_measure=500, level=0.05)
    assert [c.statistic for c in out] == ["identity", "negated"]
    assert out[0].predicted_gap > 0.9 and out[1].predicted_gap < 0.0
    assert 3.0 <= out[0].threshold < 4.0


def test_measure_counts_strictly_above_for_alpha_and_at_or_below_for_beta() -> None:
    cand = Candidate(1, "identity", 2.0, 0.3)
    meas_x = _col([0.0, 1.0, 2.0, 2.0, 3.0])  # one above 2.0
    meas_xp = _col([2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0])  # one at or below 2.0
    level = 0.05
    m = measure(cand, IDENTITY, meas_x, meas_xp, lambda a: np.asarray(0.9 - a, dtype=np.float64), level=level)
    assert m.candidate is cand
    assert m.alpha_hat == 1 / 5 and m.beta_hat == 1 / 7
    assert m.alpha_upper == float(cp_upper(1, 5, level))
    assert m.beta_upper == float(cp_upper(1, 7, level))
    assert m.claimed_beta == 0.9 - m.alpha_upper
    assert m.draws == 5


def test_choose_ranks_by_predicted_gap_then_pair_then_statistic() -> None:
    a = Candidate(0, "b", 0.0, 0.2)
    b = Candidate(1, "a", 0.0, 0.5)
    c = Candidate(0, "a", 0.0, 0.2)
    d = Candidate(1, "a", 0.0, -0.1)
    assert choose([a, b, c, d], 3) == [b, c, a]
    assert choose([a, b, c, d], 1) == [b]
    assert choose([a, b, c, d], 0) == [b]  # at least one test
    assert choose([d, a], 5) == [a, d]


def test_the_decision_records_are_frozen() -> None:
    import dataclasses

    cand = Candidate(0, "a", 0.0, 0.1)
    for obj, field in [(cand, "threshold"), (IDENTITY, "name"), (_measured(0.1, 0.2), "beta_upper")]:
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(obj, field, 0)


def test_select_tries_the_midpoints_of_the_quantile_grid() -> None:
    # 513 pooled scores: the grid (i + 1/2) / 256 lands on the odd order statistics, where the perfect split
    # (after the 258th score) lies; a grid i / 256 would land on the even ones only and miss it
    s0, s1 = np.arange(258.0), np.arange(258.0, 513.0)
    (cand,) = select(0, [IDENTITY], _col(list(s0)), _col(list(s1)), _perfect, n_measure=100, level=0.05)
    assert cand.threshold == 257.0
    assert cand.predicted_gap == pytest.approx(1.0 - 2 * float(cp_upper(0, 100, 0.05)), rel=1e-12)
