"""``mechanism.kind = "gaussian"``: the same Gaussian sigma in every cell, calibrated on :math:`(D_t, A_{a(t)})`.

sigma = Delta_2(S)/mu for a target ``mechanism.mu`` (or ``epsilon`` + ``delta``, or ``rho``), or the noise
``mechanism.scale`` given and mu = Delta_2(S)/sigma computed [DRS22, Thm. 2.7]. Does not keep the invariant
(published separately); its noise law is handed to ``[postprocess]``. Builder: :func:`verify.kinds.additive.build_gaussian`.
"""

from __future__ import annotations

from semidp.verify.kinds.additive import build_gaussian
from semidp.verify.kinds.calibrated import CALIBRATED_FRAMEWORKS, CalibratedKind, ScaledGaussianSpec
from semidp.verify.registry import KindInfo

GAUSSIAN = CalibratedKind(
    KindInfo(
        "gaussian",
        ScaledGaussianSpec,
        frameworks=CALIBRATED_FRAMEWORKS,
        reports_sensitivity=True,
        sections=("postprocess",),
    ),
    build_gaussian,
)

__all__ = ["GAUSSIAN"]
