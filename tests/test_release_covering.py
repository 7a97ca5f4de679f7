"""A release known on semi-adjacent pairs at a fixed radius (the UMPU odds-ratio test on A_3, [CA24, Thm. 37]):
the covering rule, the accounting of a release that advertises nothing else, and the runner's a(t) <= R check."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from semidp.accountant.combinatorics.semiadjacent import semi_adjacent_parameter
from semidp.accountant.core.errors import UnsupportedRelease
from semidp.accountant.data.dataspace import DataSpace
from semidp.accountant.data.invariants import Margins
from semidp.accountant.guarantees.definitions import PureDP
from semidp.accountant.guarantees.relations import Replace, SemiAdjacent
from semidp.accountant.releases.accounting import account, covering_radius, semi_dp_grouping, states_base
from semidp.accountant.releases.model import KnownGuarantee, Part, Release
from semidp.verify.load import load
from semidp.verify.runner import audit

ROOT = Path(__file__).resolve().parents[1]
SPACE = DataSpace.of(("a", 2), ("b", 2))
INV = Margins((("a",), ("b",)))
BASE = Replace()
A3 = SemiAdjacent(BASE, INV, 3)
G3 = PureDP(1.0, A3)


def _release(covers: str = "Cho & Awan Thm. 37") -> Release:
    return Release(BASE, INV, (Part(KnownGuarantee(G3, covers=covers)),))


def test_a_guarantee_on_a3_covers_smaller_radii_only() -> None:
    """A_r is a subset of A_3 for r <= 3: the guarantee holds there (an upper bound); never at a larger radius,
    and never for a refutation's lower end (covering=False) unless the radius is 3 itself."""
    rel = _release()
    assert covering_radius(rel) == 3 and not states_base(rel)
    assert semi_dp_grouping(rel, 3) is not None and semi_dp_grouping(rel, 3, covering=False) is not None
    two = semi_dp_grouping(rel, 2)
    assert two is not None and two.guarantee == G3
    assert semi_dp_grouping(rel, 2, covering=False) is None
    assert semi_dp_grouping(rel, 4) is None
    uncovered = _release(covers="")  # a privacy map at one radius is not regrouped
    assert covering_radius(uncovered) is None and semi_dp_grouping(uncovered, 2) is None


def test_a_release_that_advertises_nothing_else_reports_its_guarantee_as_both() -> None:
    rel = _release()
    a = semi_adjacent_parameter(SPACE, INV, BASE, table=[3, 14, 16, 0])
    assert a.exact and a.value <= 3
    acct = account(rel, "semi-dp", a, SPACE)
    assert acct.advertised == acct.effective == G3 and acct.advertised_is_effective
    bounded = dataclasses.replace(a, value=3, exact=False, search=None)  # closed-form bound: a(t) in [0, 3]
    assert account(rel, "semi-dp", bounded, SPACE).effective_at_lower is None  # A_3 is not tight below
    with pytest.raises(UnsupportedRelease, match="semi-dp framework only"):
        account(rel, "dp", a, SPACE)


def test_umpu_report_checks_a_t_against_the_covered_radius() -> None:
    """The UMPU kind describes its release; the runner's a(t) check is a(t) <= 3 with its source, and the
    advertised block is the effective one (framework included), both certified."""
    res = audit(load(ROOT / "specs" / "umpu-odds-ratio.toml"), seed=0)
    report = res.typed.to_json()
    first = report["checks"][0]
    assert first["name"] == "semi-adjacent-parameter" and first["outcome"] == "verified"
    assert "<= 3: the (D_t, A_3) guarantee covers every semi-adjacent pair (Cho & Awan Thm. 37)" in first["detail"]
    assert report["advertised"] == report["effective"] and report["advertised"]["framework"] == "semi-dp"
    assert res.advertised == res.effective and isinstance(res.effective, type(res.advertised))
    assert report["verdict"] == "holds"
