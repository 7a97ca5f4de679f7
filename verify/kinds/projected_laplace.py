"""``mechanism.kind = "projected-laplace"``: Lap(Delta_1(S)/epsilon) noise projected onto span(S); epsilon-DP.

Keeps the invariant. With ``claim.framework = "subspace-dp"`` it runs as Gao, Gong & Yu's projected Laplace
[GGY22, Cor. 3.8] on the base relation. Builders: :mod:`verify.kinds.additive`.
"""

from __future__ import annotations

from semidp.verify.kinds.additive import (
    build_projected_laplace,
    build_projected_laplace_from_norms,
    build_subspace_laplace,
)
from semidp.verify.kinds.calibrated import CALIBRATED_FRAMEWORKS, CalibratedKind, CalibratedSpec
from semidp.verify.registry import KindInfo

PROJECTED_LAPLACE = CalibratedKind(
    KindInfo(
        "projected-laplace",
        CalibratedSpec,
        frameworks=CALIBRATED_FRAMEWORKS + ("subspace-dp",),
        reports_sensitivity=True,
    ),
    build_projected_laplace,
    subspace_builder=build_subspace_laplace,
    norms_builder=build_projected_laplace_from_norms,
)

__all__ = ["PROJECTED_LAPLACE"]
