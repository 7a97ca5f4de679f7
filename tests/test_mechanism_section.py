"""The typed ``mechanism`` section (verify/mechanism_section.py, issue 23 item 2): each shape writes the contract's
keys in the order the kinds wrote them as dictionaries before they were typed, leaves out what they left out, and
renders from its attributes.

The key orders below are copied from the dictionaries the kinds built (``verify/kinds/*.py`` at 285fa70); the shipped
specs' reports are compared byte for byte in ``tests/test_report_golden.py``. These pin the shapes no shipped golden
report shows (the containing-ball fallback, the subspace-DP mechanisms, discrete Laplace, the MCMC sampler record).
"""

from __future__ import annotations

import json
from types import SimpleNamespace
from typing import Any, cast

import pytest

from semidp.verify.json_walk import to_json
from semidp.verify.mechanism_section import (
    BallLoss,
    BurnInInfo,
    CouplingInfo,
    DiscreteLaplaceMechanismSection,
    ExactSamplerInfo,
    FallbackAlternatives,
    GaussianMechanismSection,
    HullCacheInfo,
    KNormMechanismSection,
    LaplaceMechanismSection,
    LatticeBasisInfo,
    LatticeMechanismSection,
    McmcSamplerInfo,
    SemiDpDistance,
    SubspaceGaussianMechanismSection,
    SubspaceLaplaceMechanismSection,
    VarianceRange,
)
from semidp.verify.report import Report
from semidp.verify.sections import MechanismSection

GAUSS = GaussianMechanismSection(
    kind="projected-gaussian",
    sensitivity_space="S",
    sensitivity_exact=True,
    calibration="mu = 1.0",
    sigma=2.5,
    l2_sensitivity=2.5,
    l2_sensitivity_squared=6,
    noise_dimension=4,
    optimal=None,
    label="Semi-DP Gaussian",
)
LAP_FALLBACK = LaplaceMechanismSection(
    kind="k-norm",
    sensitivity_space="closed form",
    sensitivity_exact=False,
    sensitivity_not_listed="S was not listed",
    calibration="epsilon = 1.0",
    scale=6.0,
    l1_sensitivity=6,
    noise_dimension=121,
    optimal=False,
    expected_squared_error=8712.0,
    label="NON-OPTIMAL fallback for k-norm: ...",
    alternatives=FallbackAlternatives("l2-ball", 120.5, 93.3),
    fallback="projected-laplace",
)
SUB_GAUSS = SubspaceGaussianMechanismSection(
    kind="projected-gaussian",
    calibration="(epsilon, delta) = (0.5, 1e-06) -> sigma = ...",
    sigma=3.0,
    l2_sensitivity=1.4142135623730951,
    noise_dimension=4,
    optimal=None,
    label="GGY projected Gaussian",
    expected_squared_error=36.0,
    per_cell_variance=VarianceRange(3.5, 4.5),
)
SUB_LAP = SubspaceLaplaceMechanismSection(
    kind="projected-laplace",
    calibration="epsilon = 1.0 -> b = 2.0",
    scale=2.0,
    l1_sensitivity=2.0,
    noise_dimension=4,
    optimal=None,
    label="GGY projected Laplace",
    expected_squared_error=32.0,
    per_cell_variance=VarianceRange(3.0, 5.0),
)
DLAP = DiscreteLaplaceMechanismSection(
    kind="discrete-laplace",
    sensitivity_space="S",
    sensitivity_exact=True,
    calibration="epsilon = 1 -> t = 6 (exact rational)",
    scale="6",
    ratio=0.846,
    l1_sensitivity=6,
    noise_dimension=9,
    optimal=None,
    expected_squared_error=641.9,
    label="discrete Laplace",
)
KNORM_BALL = KNormMechanismSection(
    kind="k-norm",
    sensitivity_space="S",
    sensitivity_exact=True,
    epsilon=0.5,
    noise_dimension=16,
    optimal=False,
    label="containing l2-ball",
    hull_cache=HullCacheInfo("miss", "/c/x.npz", 1.5, "hulls are cached", "rebuilt"),
    loss=BallLoss(3.0, 1.7, "volume ratio"),
    fallback="containing-ball",
)
MCMC = McmcSamplerInfo(
    "mcmc",
    "Gibbs-within-Metropolis",
    "the exact sampler was refused (budget)",
    (0.5,),
    CouplingInfo(64, 50, "hybrid", 0.01, 2.0, {50: 10, 90: 20, 99: 30, 100: 31}),
    BurnInInfo(40, 0.001, 0.004, "upper", 0.95, "not a certificate"),
)
LATTICE = LatticeMechanismSection(
    "generalized-gaussian",
    "l2",
    9,
    "rho = 0.125",
    LatticeBasisInfo("block", 9, 16, False, ""),
    MCMC,
    0.004,
    SemiDpDistance(2.0, "Delta_2(S)"),
    "generalized-gaussian on the kernel lattice of the invariant (mcmc draws)",
)

#: The keys, in order, of the dictionaries the kinds built before the section was typed.
LEGACY_KEYS: list[tuple[MechanismSection, list[str]]] = [
    (
        GAUSS,
        ["kind", "sensitivity_space", "sensitivity_exact", "calibration", "sigma", "l2_sensitivity"]
        + ["l2_sensitivity_squared", "noise_dimension", "optimal", "label"],
    ),
    (
        LAP_FALLBACK,
        ["kind", "sensitivity_space", "sensitivity_exact", "sensitivity_not_listed", "calibration", "scale"]
        + ["l1_sensitivity", "noise_dimension", "optimal", "expected_squared_error", "label", "alternatives"]
        + ["fallback"],
    ),
    (
        SUB_GAUSS,
        ["kind", "calibration", "sigma", "l2_sensitivity", "noise_dimension", "optimal", "label"]
        + ["expected_squared_error", "per_cell_variance", "framework"],
    ),
    (
        SUB_LAP,
        ["kind", "calibration", "scale", "l1_sensitivity", "noise_dimension", "optimal", "label"]
        + ["expected_squared_error", "per_cell_variance", "framework"],
    ),
    (
        DLAP,
        ["kind", "sensitivity_space", "sensitivity_exact", "calibration", "scale", "ratio", "l1_sensitivity"]
        + ["noise_dimension", "optimal", "expected_squared_error", "label"],
    ),
    (
        KNORM_BALL,
        ["kind", "sensitivity_space", "sensitivity_exact", "epsilon", "noise_dimension", "optimal", "label"]
        + ["hull_cache", "loss", "fallback"],
    ),
    (
        LATTICE,
        ["kind", "norm", "noise_dimension", "calibration", "lattice", "sampler", "delta_tv_charged"]
        + ["semi_dp_distance", "label"],
    ),
]


@pytest.mark.parametrize("section,keys", LEGACY_KEYS, ids=lambda x: type(x).__name__ if not isinstance(x, list) else "")
def test_each_shape_writes_the_legacy_keys_in_order(section: MechanismSection, keys: list[str]) -> None:
    out = section.to_json()
    assert list(out) == keys
    assert section.key == "mechanism"
    json.dumps(out)  # JSON-ready as it is (the report writer has no default= hook)


def test_nested_objects_keep_their_legacy_keys_and_values() -> None:
    lap = to_json(LAP_FALLBACK)
    assert lap["alternatives"] == {
        "containing-ball": {"kind": "l2-ball", "expected_l2_upper": 120.5},
        "projected-laplace": {"expected_l2_upper": 93.3},
    }
    assert to_json(SUB_GAUSS)["per_cell_variance"] == {"min": 3.5, "max": 4.5}
    assert to_json(SUB_GAUSS)["framework"] == "subspace-dp (Gao, Gong & Yu 2022, Def 2.6)"
    kn = to_json(KNORM_BALL)
    assert kn["hull_cache"] == {
        "status": "miss",
        "path": "/c/x.npz",
        "seconds": 1.5,
        "note": "hulls are cached",
        "reason": "rebuilt",
    }
    assert list(kn["loss"]) == ["volume_ratio_upper", "norm_ratio_upper", "how"]
    assert "reason" not in to_json(HullCacheInfo("hit", "/c/x.npz", 0.1, "n"))
    lat = to_json(LATTICE)
    assert lat["lattice"] == {"method": "block", "dimension": 9, "gram_determinant": 16, "reduced": False, "note": ""}
    assert lat["semi_dp_distance"] == {"value": 2.0, "how": "Delta_2(S)"}
    smp = lat["sampler"]
    assert list(smp) == ["method", "label", "why_not_exact", "ratio", "coupling", "burn_in"]
    assert smp["ratio"] == [0.5]
    assert list(smp["coupling"]) == ["pairs", "lag", "kind", "tv_target", "seconds", "meeting_time_quantiles"]
    assert json.loads(json.dumps(smp["coupling"]["meeting_time_quantiles"])) == {
        "50": 10,
        "90": 20,
        "99": 30,
        "100": 31,
    }
    assert list(smp["burn_in"]) == ["t", "tv_estimate", "tv_upper", "criterion", "confidence", "note"]


def test_keys_absent_before_stay_absent() -> None:
    """The optional keys are left out, not written as null (the dictionaries never had them)."""
    assert "sensitivity_space" not in to_json(SUB_LAP) and "sensitivity_not_listed" not in to_json(GAUSS)
    plain = to_json(LaplaceMechanismSection(**{**_fields(LAP_FALLBACK), "alternatives": None, "fallback": None}))
    assert "alternatives" not in plain and "fallback" not in plain
    optimal = to_json(
        KNormMechanismSection(**{**_fields(KNORM_BALL), "hull_cache": None, "loss": None, "fallback": None})
    )
    assert list(optimal)[-1] == "label"
    assert to_json(ExactSamplerInfo()) == {"method": "exact"}  # the refused exact sampler
    diag = {"sampler": "exact rejection", "epsilon": "24/125", "dependent_cells": [0], "acceptance_rate": None}
    exact = to_json(ExactSamplerInfo("exact", "exact rejection from free coordinates", diag))
    assert list(exact) == ["method", "label", "sampler", "epsilon", "dependent_cells", "acceptance_rate"]
    assert exact["dependent_cells"] == [0] and exact["acceptance_rate"] is None
    first = McmcSamplerInfo("mcmc", "Gibbs", None, (0.5,), CouplingInfo(64, 50, "hybrid", 0.01))
    assert to_json(first) == {
        "method": "mcmc",
        "label": "Gibbs",
        "ratio": [0.5],
        "coupling": {"pairs": 64, "lag": 50, "kind": "hybrid", "tv_target": 0.01},
    }


def _fields(section: object) -> dict[str, Any]:
    return {k: getattr(section, k) for k in section.__dataclass_fields__ if k != "key"}  # type: ignore[attr-defined]


def _report(samples_file: str | None = None) -> Report:
    """A stand-in with what the mechanism block reads: no other section, and the samples file."""
    return cast(Report, SimpleNamespace(section=lambda key: None, samples_file=samples_file))


def test_text_and_markdown_read_the_attributes() -> None:
    rep = _report()
    assert GAUSS.text_lines(rep)[1] == (
        "mechanism: Semi-DP Gaussian, mu = 1.0, noise in a 4-dimensional subspace, Delta_2 = 2.5"
    )
    assert (
        KNORM_BALL.text_lines(rep)[1]
        == "mechanism: containing l2-ball, epsilon = 0.5, noise in a 16-dimensional subspace"
    )
    assert SUB_LAP.text_lines(rep)[1].endswith("epsilon = 1.0 -> b = 2.0, noise in a 4-dimensional subspace")
    md = KNORM_BALL.markdown_lines(_report("x.samples.npy"))
    assert md[2] == "- kind: `k-norm` (NON-OPTIMAL fallback)"
    assert not any(line.startswith("- calibration") for line in md)  # k-norm has no calibration key
    assert md[-2] == "- samples: `x.samples.npy`"
    assert LAP_FALLBACK.markdown_lines(rep)[2] == "- kind: `k-norm` (NON-OPTIMAL fallback)"
    assert GAUSS.markdown_lines(rep)[2] == "- kind: `projected-gaussian` (not an optimality claim)"
    lat = LATTICE.markdown_lines(rep)
    assert lat[2] == "- kind: `generalized-gaussian` (not an optimality claim)"  # no optimal key at all
    assert "- calibration: rho = 0.125" in lat
    optimal = KNormMechanismSection(**{**_fields(KNORM_BALL), "optimal": True})
    assert optimal.markdown_lines(rep)[2] == "- kind: `k-norm` (optimal)"


def test_design_reads_the_noise_parameter_of_each_shape() -> None:
    """``[design]`` names the calibrated parameter (verify/design_calibrated.py)."""
    assert GAUSS.noise_parameter() == ("sigma", 2.5, "2.5")
    assert SUB_GAUSS.noise_parameter() == ("sigma", 3.0, "3.0")
    assert LAP_FALLBACK.noise_parameter() == ("b", 6.0, "6.0")
    assert SUB_LAP.noise_parameter() == ("b", 2.0, "2.0")
    assert DLAP.noise_parameter() == ("t", 6.0, "6")
    assert KNORM_BALL.noise_parameter() == ("1/epsilon (the norm ball's scale)", 2.0, "1/0.5")
    assert GAUSS.calibration_text() == "mu = 1.0" and KNORM_BALL.calibration_text() == ""
