r"""The ``discrete-laplace`` kind: exact double geometric noise in every cell, on the Semi-DP relation.

:class:`mechanisms.semi_discrete_laplace.SemiDiscreteLaplaceMechanism` at the exact Semi-DP
sensitivity space S (run by :class:`verify.kinds.calibrated.CalibratedKind`): noise
:math:`\mathrm{Lap}_{\mathbb Z}(t)` per cell ([CKS20], Alg. 2, exact; the geometric mechanism of
Ghosh, Roughgarden & Sundararajan 2009). ``mechanism.scale = t`` (an exact rational): the
guarantee is computed, :math:`\varepsilon=\Delta_1(S)/t` rounded up; or ``mechanism.epsilon``:
:math:`t=\Delta_1(S)/\varepsilon` exactly. S is integer, so the releases of neighbours share
their support (the reason for the integer sensitivity). The release does not keep the
invariant (published separately); ``[postprocess]`` studies projecting it back [ZVF21].
The expected error is exact: :math:`\mathbb E\|k\|_2^2=2da/(1-a)^2`, :math:`a=e^{-1/t}`.
"""

from __future__ import annotations

from fractions import Fraction

from semidp.accountant.core.errors import UnsupportedRelease
from semidp.accountant.core.outcome import Outcome
from semidp.accountant.guarantees.definitions import Guarantee, PureDP
from semidp.accountant.guarantees.relations import SemiAdjacent
from semidp.accountant.sensitivity.spaces import SensitivitySpace
from semidp.mechanisms.postprocess_noise import DoubleGeometricNoise
from semidp.mechanisms.semi_discrete_laplace import MAX_SCALE_PART, SemiDiscreteLaplaceMechanism
from semidp.verify.context import Context
from semidp.verify.kinds.calibrated import (
    CALIBRATED_FRAMEWORKS,
    BuiltMechanism,
    CalibratedKind,
    CalibratedSpec,
    FloatArray,
    ScaledSpec,
    mean_check,
)
from semidp.verify.mechanism_section import DiscreteLaplaceMechanismSection
from semidp.verify.registry import KindInfo, Problem
from semidp.verify.sections import ErrorSection
from semidp.verify.spec import Spec
from semidp.verify.spec_checks import NOISE_SCALE_RANGE


def build_discrete_laplace(
    ctx: Context, m: CalibratedSpec, s_space: SensitivitySpace, semi: SemiAdjacent
) -> BuiltMechanism:
    """``discrete-laplace``: Lap_Z(t) per cell, t = ``mechanism.scale`` or Delta_1(S)/epsilon (exact)."""
    scale = m.scale if isinstance(m, ScaledSpec) else None
    advertised: Guarantee
    if scale is not None:
        mech = SemiDiscreteLaplaceMechanism.for_scale(s_space, scale, semi)
        advertised = mech.privacy_map(semi)
        how = f"scale t = {scale} -> epsilon = Delta_1(S)/t = {s_space.l1}/{scale} (computed, not targeted)"
    elif m.epsilon is not None:
        mech = SemiDiscreteLaplaceMechanism.for_epsilon(s_space, m.epsilon, semi)
        advertised = PureDP(float(m.epsilon), semi)
        how = f"epsilon = {m.epsilon} -> t = Delta_1(S)/epsilon = {mech.scale} (exact rational)"
    else:
        raise UnsupportedRelease(f"{ctx.spec.path}: mechanism.kind = 'discrete-laplace' needs epsilon or scale.")
    info = DiscreteLaplaceMechanismSection(
        kind=m.kind,
        calibration=how,
        scale=str(mech.scale),
        ratio=mech.ratio,
        l1_sensitivity=mech.sensitivity,
        noise_dimension=mech.dimension,
        optimal=None,
        expected_squared_error=mech.expected_squared_error(),
        label=(
            "discrete Laplace (double geometric) noise in every cell, exact sampler (Canonne, Kamath & Steinke "
            "Alg. 2); does not keep the invariant, which is published separately"
        ),
    )
    exact = mech.expected_squared_error()

    def check(norms: FloatArray, seed: int) -> tuple[ErrorSection, Outcome]:
        return mean_check("E||noise||_2^2", exact, "2 d a/(1-a)^2, a = e^(-1/t), d = cells", norms**2)

    return BuiltMechanism(mech, semi, advertised, info, False, check, DoubleGeometricNoise(mech.scale))


class DiscreteLaplaceKind(CalibratedKind):
    """:class:`CalibratedKind` with the exact sampler's limit on ``mechanism.scale``."""

    def validate(self, spec: Spec) -> list[Problem]:
        """The calibrated kinds' problems, and a scale the vectorised exact sampler takes."""
        probs = super().validate(spec)
        m = spec.mechanism
        lo, hi = NOISE_SCALE_RANGE  # beyond it the shared check names the range (and no 600-digit fraction)
        if isinstance(m, ScaledSpec) and m.scale is not None and lo <= m.scale <= hi:
            t = Fraction(m.scale)
            if t.numerator >= MAX_SCALE_PART or t.denominator >= MAX_SCALE_PART:
                shown = str(t) if len(str(t)) <= 40 else f"{float(t)!r} = {t.numerator:.3g}/{t.denominator:.3g}"
                probs.append(Problem("mechanism.scale", f"{shown}: numerator and denominator must be < 2**31"))
        return probs


DISCRETE_LAPLACE = DiscreteLaplaceKind(
    KindInfo(
        "discrete-laplace",
        ScaledSpec,
        frameworks=CALIBRATED_FRAMEWORKS,
        reports_sensitivity=True,
        sections=("postprocess",),
    ),
    build_discrete_laplace,
)

__all__ = ["DISCRETE_LAPLACE", "DiscreteLaplaceKind", "build_discrete_laplace"]
