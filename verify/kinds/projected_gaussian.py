"""``mechanism.kind = "projected-gaussian"``: Gaussian noise in span(S) [CA24, Alg. 1, Prop. 28]; mu-GDP.

Keeps the invariant. With ``claim.framework = "subspace-dp"`` it runs as Gao, Gong & Yu's projected Gaussian
[GGY22, Cor. 3.5] on the base relation. Builders: :mod:`verify.kinds.additive`.
"""

from __future__ import annotations

from semidp.verify.kinds.additive import build_projected_gaussian, build_subspace_gaussian
from semidp.verify.kinds.calibrated import CALIBRATED_FRAMEWORKS, CalibratedKind, GaussianSpec
from semidp.verify.registry import KindInfo

PROJECTED_GAUSSIAN = CalibratedKind(
    KindInfo(
        "projected-gaussian",
        GaussianSpec,
        frameworks=CALIBRATED_FRAMEWORKS + ("subspace-dp",),
        reports_sensitivity=True,
    ),
    build_projected_gaussian,
    subspace_builder=build_subspace_gaussian,
)

__all__ = ["PROJECTED_GAUSSIAN"]
