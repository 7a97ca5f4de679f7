"""``mechanism.kind = "generalized-gaussian"``: integer noise :math:`q(z)\\propto e^{-\\|z\\|_2^2/2\\sigma^2}` on the
kernel lattice of the invariant [DGGY23, Def. 13].

:math:`\\sigma=1/\\sqrt{2\\rho}` from ``mechanism.rho`` -- the reference's flagged alternative calibration (zCDP on
equivalent pairs, :math:`\\rho D^2` at :math:`\\ell_2` distance D), **not** the paper's constant. The target is
separable, so the exact sampler of :mod:`mechanisms.lattice_exact` draws it where the invariant has a
free-coordinate split, else MCMC. The shared run is :func:`verify.kinds.lattice.run_lattice`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np
from numpy.typing import NDArray

from semidp.accountant.core.directed import sqrt_up, up
from semidp.accountant.core.errors import UnsupportedRelease
from semidp.accountant.guarantees.conversions import zcdp_to_approx_dp
from semidp.accountant.guarantees.definitions import ZCDP, ApproxDP, Guarantee
from semidp.accountant.guarantees.relations import IntegerSubspace
from semidp.accountant.lattice.kernel import LatticeBasis
from semidp.accountant.releases.accounting import register_law
from semidp.accountant.releases.model import PluginLaw, Shift
from semidp.mechanisms.lattice_mcmc import LatticeGaussianTarget
from semidp.mechanisms.lattice_privacy import gaussian_zcdp_rho
from semidp.verify.kinds.lattice import LATTICE_FRAMEWORKS, LatticeKind, LatticeParams, LatticeSpec
from semidp.verify.registry import KindInfo, Problem
from semidp.verify.sections import Heuristic


@dataclass(frozen=True, slots=True)
class GeneralizedGaussianNoise(PluginLaw):
    r"""Integer noise :math:`q(z)\propto e^{-\|z\|_2^2/2\sigma^2}` on the kernel lattice [DGGY23, Def. 13], drawn
    within TV distance ``delta_tv`` of it (0: exactly); a release noise law (interpreter: :func:`gaussian_guarantee`)."""

    sigma: float
    """Noise scale (rounded down for accounting)."""
    delta_tv: float
    """TV distance of the draws from the target (an MCMC burn-in's bound; 1: not bounded)."""
    delta0: float
    """With ``delta_tv > 0``: the delta at which the zCDP guarantee is converted before delta' is charged."""

    @property
    def upper_bound_only(self) -> bool:
        """MCMC draws (``delta_tv > 0``): delta' is charged from the TV bound, so the guarantee is an upper bound."""
        return self.delta_tv > 0


def gaussian_guarantee(law: PluginLaw, shift: Shift) -> Guarantee:
    """The law's guarantee on a pair at ``shift``'s l2 distance D: rho = D^2 / (2 sigma^2)-zCDP (the reference's
    alternative calibration, :func:`mechanisms.lattice_privacy.gaussian_zcdp_rho`); for draws within TV delta_tv,
    converted at delta0 and charged delta0 + (1 + e^eps) delta_tv (reference §3.5), capped at 1."""
    if not isinstance(law, GeneralizedGaussianNoise):  # pragma: no cover - registered for this law only
        raise TypeError(f"gaussian_guarantee interprets GeneralizedGaussianNoise, not {type(law).__name__}")
    g = ZCDP(gaussian_zcdp_rho(law.sigma, sqrt_up(Fraction(shift.l2_squared))), shift.relation)
    if law.delta_tv == 0:
        return g
    e = zcdp_to_approx_dp(g, law.delta0).epsilon
    return ApproxDP(e, min(1.0, up(law.delta0 + (1 + math.exp(e)) * law.delta_tv)), shift.relation)


register_law(GeneralizedGaussianNoise, gaussian_guarantee)


@dataclass(frozen=True)
class GeneralizedGaussianLaw:
    """The generalized Gaussian law of :class:`~verify.kinds.lattice.LatticeKind` (module docstring)."""

    default_norm: str = "l2"

    def target_problems(self, m: LatticeSpec) -> list[Problem]:
        """``rho > 0`` and the l2 norm."""
        probs: list[Problem] = []
        if m.rho is None or not m.rho > 0:
            probs.append(
                Problem(
                    "mechanism.rho",
                    "generalized-gaussian needs rho > 0 (zCDP per unit l2 "
                    "distance between equivalent histograms; sigma = 1/sqrt(2 rho))",
                )
            )
        if m.norm not in (None, "l2"):
            probs.append(Problem("mechanism.norm", "generalized-gaussian uses the l2 norm"))
        return probs

    def params(self, m: LatticeSpec) -> LatticeParams:
        """rho as a float and sigma = 1/sqrt(2 rho) rounded up."""
        eps = float(m.epsilon) if m.epsilon is not None else 0.0
        rho = float(m.rho) if m.rho is not None else 0.0
        return LatticeParams(eps, rho, up(1.0 / math.sqrt(2.0 * rho)), m.norm or self.default_norm)

    def exact_sampler(self, m: LatticeSpec, a_mat: NDArray[np.int64], norm: str) -> tuple[Any, str]:
        """:class:`mechanisms.lattice_exact.ExactLatticeGaussian` at sigma^2 = 1/(2 rho) exactly."""
        from semidp.mechanisms.lattice_exact import ExactLatticeGaussian

        try:  # the sampler searches the free-coordinate split itself and refuses, with the reason, without one
            assert m.rho is not None
            return ExactLatticeGaussian.from_sigma2(a_mat, 1 / (2 * float(m.rho))), ""
        except UnsupportedRelease as e:
            return None, str(e)

    def mcmc_target(self, basis: LatticeBasis, p: LatticeParams) -> LatticeGaussianTarget:
        """e^{-||C u||_2^2 / 2 sigma^2} on the lattice coordinates u."""
        return LatticeGaussianTarget(basis.matrix, p.sigma)

    def target(self, p: LatticeParams, unit: IntegerSubspace) -> Guarantee:
        """rho-zCDP per unit l2 (the alternative calibration, labelled)."""
        return ZCDP(p.rho, unit)

    def noise(self, p: LatticeParams, delta_tv: float, delta0: float) -> GeneralizedGaussianNoise:
        """The drawn law: sigma, TV distance ``delta_tv`` from the target, converted at ``delta0`` when > 0."""
        return GeneralizedGaussianNoise(p.sigma, delta_tv, delta0)

    def calibration(self, p: LatticeParams) -> str:
        """``rho = ... -> sigma = ...`` (the alternative calibration, labelled)."""
        return (
            f"rho = {p.rho!r} per unit l2^2 -> sigma = {p.sigma!r} (alternative calibration, "
            "docs/reference/subspace-integer-postprocessing.md §3.4: zCDP on equivalent pairs; NOT the paper's constant)"
        )

    def heuristic(self, basis: LatticeBasis, p: LatticeParams) -> Heuristic | None:
        """None."""
        return None


GENERALIZED_GAUSSIAN = LatticeKind(
    KindInfo("generalized-gaussian", LatticeSpec, frameworks=LATTICE_FRAMEWORKS), GeneralizedGaussianLaw()
)

__all__ = ["GENERALIZED_GAUSSIAN", "GeneralizedGaussianLaw", "GeneralizedGaussianNoise", "gaussian_guarantee"]
