"""Claims and workload reports refine their PLD brackets (issue 26, Step 13 item 3): a claim undecided on the
default grid is decided on a finer one, within the budget, and the report says when refinement stopped short.

The verdict rule is kept: refuted only from the refined lower end, verified only from the refined upper end.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from semidp.accountant.core.budget import Budget
from semidp.accountant.core.outcome import Refuted, Unknown, Verified
from semidp.accountant.guarantees.definitions import GDP, PureDP
from semidp.accountant.guarantees.relations import Replace
from semidp.accountant.pld.engine import compose_plds
from semidp.accountant.pld.parts import ApproxDPPart, GaussianPart
from semidp.accountant.pld.refine import refine_bracket
from semidp.verify.claims import check_composed_claim
from semidp.verify.cli import main
from tests.claim_forms import claim

R = Replace()
ROOT = Path(__file__).resolve().parents[1]
CENSUS = ROOT / "specs" / "census-2020-pl94-persons-us.toml"

# 20 000 pure (0.01)-DP parts (randomized responses) at epsilon = 8: the default grid gives
# delta in [7.8097e-8, 8.3733e-8]; 2^19 points give [7.8097e-8, 7.8150e-8].
RR = [PureDP(0.01, R)] * 20000
RR_EPS, RR_CLAIM = 8.0, 8.0e-8
# 1 000 pure (0.02)-DP parts and 100 0.05-GDP parts at epsilon = 2.5: the default grid gives delta in
# [2.42e-4, 6.98e-4] (mixed lattices: the lower end floored); finer grids raise it above 6.8e-4.
MIXED = [PureDP(0.02, R)] * 1000 + [GDP(0.05, R)] * 100
MIXED_EPS, MIXED_CLAIM = 2.5, 5e-4


def _default(parts: list[PureDP | GDP], eps: float) -> tuple[float, float]:
    pp = [ApproxDPPart(p.epsilon, 0.0) if isinstance(p, PureDP) else GaussianPart(1.0, p.mu) for p in parts]
    iv = compose_plds(pp).delta(eps)
    return iv.lower, iv.upper


def test_the_claims_are_undecided_on_the_default_grid() -> None:
    """The premise of the two tests below: each claimed delta lies strictly inside the default bracket."""
    lo, up = _default(RR, RR_EPS)
    assert lo < RR_CLAIM < up
    lo, up = _default(MIXED, MIXED_EPS)
    assert lo < MIXED_CLAIM < up


def test_a_composed_claim_is_verified_after_refinement_and_not_without_it() -> None:
    c = claim("epsilon", RR_EPS, RR_CLAIM)
    out = check_composed_claim(RR, c)
    assert out is not None and isinstance(out[0], Verified), out
    assert out[1].upper <= RR_CLAIM and "grid points" in out[0].certificate
    stopped = check_composed_claim(RR, c, budget=Budget.of(0.0))
    assert stopped is not None and isinstance(stopped[0], Unknown)
    assert "refinement stopped: budget" in stopped[0].reason
    assert stopped[1].lower < RR_CLAIM < stopped[1].upper


def test_a_composed_claim_is_refuted_only_from_the_refined_lower_end() -> None:
    c = claim("epsilon", MIXED_EPS, MIXED_CLAIM)
    out = check_composed_claim(MIXED, c)
    assert out is not None and isinstance(out[0], Refuted), out
    assert out[1].lower > MIXED_CLAIM  # the refuting value is a certified lower end
    assert isinstance(check_composed_claim(MIXED, c, budget=Budget.of(0.0))[0], Unknown)  # type: ignore[index]


def test_refinement_stops_once_the_claim_is_decided() -> None:
    """With a target, refinement goes past the width only while the target is inside the bracket."""
    pp = [(ApproxDPPart(0.01, 0.0), 20000)]
    far = refine_bracket(pp, epsilon=RR_EPS, target=1.0)  # decided at once; the width goes on to 1e-3
    near = refine_bracket(pp, epsilon=RR_EPS, target=RR_CLAIM)
    assert far.reached and near.reached and near.points == far.points
    tight = refine_bracket(pp, epsilon=RR_EPS, rel_width=1.0, target=RR_CLAIM)  # any width, but undecided
    assert tight.points is not None and tight.interval.upper <= RR_CLAIM


def test_shortfall_says_why() -> None:
    r = refine_bracket([(ApproxDPPart(0.01, 0.0), 20000)], epsilon=RR_EPS, budget=Budget.of(0.0))
    assert not r.reached and r.stopped_by == "budget" and r.points is None
    assert r.shortfall() == f"bracket width {r.rel_width:.2g} > 0.001: budget"
    capped = refine_bracket([(ApproxDPPart(0.01, 0.0), 20000)], epsilon=RR_EPS, max_points=2**15)
    assert capped.stopped_by == "grid cap" and capped.shortfall() is not None and "grid cap" in capped.shortfall()
    assert refine_bracket([(ApproxDPPart(0.01, 0.0), 20000)], epsilon=RR_EPS).shortfall() is None


# ---------------------------------------------------------------- the census workload (README: [29.9871, 29.9957])


def _census_with_claim(tmp_path: Path, epsilon: float) -> Path:
    shutil.copy(CENSUS.with_suffix(".csv"), tmp_path / CENSUS.with_suffix(".csv").name)
    text = CENSUS.read_text().replace("epsilon = 17.14, delta = 1e-10", f"epsilon = {epsilon}, delta = 1e-10")
    assert f"epsilon = {epsilon}" in text
    spec = tmp_path / CENSUS.name
    spec.write_text(text)
    return spec


def _audit(spec: Path, capsys: pytest.CaptureFixture[str], *extra: str) -> tuple[int, dict]:  # type: ignore[type-arg]
    code = main(["audit", str(spec), "--json", *extra])
    return code, json.loads(capsys.readouterr().out)


@pytest.mark.parametrize(
    ("epsilon", "code", "verdict"),
    [
        (29.99, 1, "fail"),  # default lower end 29.98711 < 29.99; 2^19 points: lower end 29.99274
        (29.99562, 0, "pass"),  # default upper end 29.99564 > 29.99562; 2^19 points: upper end 29.99561
        (29.9953, 3, "skip"),  # inside the bracket on every grid up to the cap: [29.99482, 29.99561]
    ],
)
def test_a_census_claim_inside_the_default_bracket_is_decided(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], epsilon: float, code: int, verdict: str
) -> None:
    got, report = _audit(_census_with_claim(tmp_path, epsilon), capsys)
    check = next(c for c in report["checks"] if c["name"] == "claim")
    assert got == code and check["status"] == verdict, check
    lo, up = check["bounds"]["lower"], check["bounds"]["upper"]
    if code == 3:  # never refuted from the upper end, never verified from the lower end
        assert lo <= epsilon < up and "refinement stopped: grid cap" in check["detail"], check
    else:
        assert "grid points" in check["detail"]
        assert (lo > epsilon) if code == 1 else (up <= epsilon)
    assert 29.9871 < lo <= up < 29.9957  # tighter than the default bracket on both ends


def test_the_workload_report_refines_its_brackets_and_says_when_the_budget_stopped_it() -> None:
    """200 Laplace measurements with scales 50 and 37 (two lattices): 0.9 % wide on the default grid."""
    from fractions import Fraction

    from semidp.accountant.data.invariants import NoInvariant
    from semidp.accountant.guarantees.relations import Replace
    from semidp.accountant.releases.accounting import BracketAccount
    from semidp.accountant.releases.measurements import measurement_release
    from semidp.accountant.workloads.accounting import WorkloadMeasurement, workload_bracket
    from semidp.verify.workload_accounting import pld_entries

    values = tuple(WorkloadMeasurement(f"m{i}", Fraction(50 if i < 100 else 37)) for i in range(200))
    first = workload_bracket(list(values), "laplace")
    assert first is not None
    default = first.epsilon(1e-10)
    assert (default.upper - default.lower) / default.upper > 5e-3

    release = measurement_release(Replace(), NoInvariant(), values, "laplace")

    def accounted() -> BracketAccount:
        return BracketAccount(Fraction(1), first, release=release)

    stopped = pld_entries(accounted().evaluated([1e-10], Budget.of(0.0)), [1e-10])[0]
    assert (stopped.lower, stopped.upper) == (default.lower, default.upper)
    assert stopped.bracket_note is not None and stopped.bracket_note.endswith("> 0.001: budget")
    assert stopped.to_json()["bracket_note"] == stopped.bracket_note
    acc = accounted().evaluated([1e-10], Budget.unlimited())
    refined = pld_entries(acc, [1e-10])[0]
    assert default.lower < refined.lower <= refined.upper <= default.upper
    assert refined.upper - refined.lower < (default.upper - default.lower) / 4
    assert refined.bracket_note is None or refined.bracket_note.endswith(": grid cap")
    assert len(acc.finer) == 1  # only the finest grid is kept (memory)
    # a claim goes on from the finest grid, even with no budget left: its bracket is the refined one
    r = acc.decide_at(1e-10, refined.lower, Budget.of(0.0))
    assert (r.interval.lower, r.interval.upper) == (refined.lower, refined.upper) and r.points == max(acc.finer)
