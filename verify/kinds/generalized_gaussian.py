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
from typing import Any

import numpy as np
from numpy.typing import NDArray

from semidp.accountant.core.directed import up
from semidp.accountant.core.errors import UnsupportedRelease
from semidp.accountant.guarantees.conversions import zcdp_to_approx_dp
from semidp.accountant.guarantees.definitions import ZCDP, ApproxDP, Guarantee
from semidp.accountant.guarantees.relations import IntegerSubspace, SemiAdjacent
from semidp.accountant.lattice.kernel import LatticeBasis
from semidp.mechanisms.lattice_mcmc import LatticeGaussianTarget
from semidp.mechanisms.lattice_privacy import gaussian_zcdp_rho
from semidp.verify.kinds.lattice import LATTICE_FRAMEWORKS, LatticeKind, LatticeParams, LatticeSpec
from semidp.verify.registry import KindInfo, Problem
from semidp.verify.sections import Heuristic


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

    def guarantees(
        self,
        p: LatticeParams,
        d_semi: float,
        delta_tv: float,
        unit: IntegerSubspace,
        semi: SemiAdjacent,
        delta0: float,
    ) -> tuple[Guarantee, Guarantee, Guarantee]:
        """rho-zCDP per unit l2, rho D^2 on the Semi-DP pairs; for MCMC draws converted at ``delta0`` and charged
        delta0 + (1 + e^eps) delta_tv."""
        target: Guarantee = ZCDP(p.rho, unit)
        g_unit, g_semi = ZCDP(gaussian_zcdp_rho(p.sigma, 1.0), unit), ZCDP(gaussian_zcdp_rho(p.sigma, d_semi), semi)
        if delta_tv == 0:
            return target, g_unit, g_semi
        out: list[Guarantee] = []
        for g in (g_unit, g_semi):
            e = zcdp_to_approx_dp(g, delta0).epsilon
            out.append(ApproxDP(e, min(1.0, up(delta0 + (1 + math.exp(e)) * delta_tv)), g.relation))
        return target, out[0], out[1]

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

__all__ = ["GENERALIZED_GAUSSIAN", "GeneralizedGaussianLaw"]
