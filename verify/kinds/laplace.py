"""``mechanism.kind = "laplace"``: Lap(Delta_1(S)/epsilon) in every cell, calibrated on :math:`(D_t, A_{a(t)})`.

Or the noise ``mechanism.scale`` b given and epsilon = Delta_1(S)/b computed. Does not keep the invariant
(published separately); its noise law is handed to ``[postprocess]``. Builders: :mod:`verify.kinds.additive`.
"""

from __future__ import annotations

from semidp.verify.kinds.additive import build_laplace, build_laplace_from_norms
from semidp.verify.kinds.calibrated import CALIBRATED_FRAMEWORKS, CalibratedKind, ScaledSpec
from semidp.verify.registry import KindInfo

LAPLACE = CalibratedKind(
    KindInfo(
        "laplace", ScaledSpec, frameworks=CALIBRATED_FRAMEWORKS, reports_sensitivity=True, sections=("postprocess",)
    ),
    build_laplace,
    norms_builder=build_laplace_from_norms,
)

__all__ = ["LAPLACE"]
