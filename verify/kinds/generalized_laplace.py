"""``mechanism.kind = "generalized-laplace"``: integer noise :math:`q(z)\\propto e^{-\\varepsilon\\|z\\|_p}` on the
kernel lattice of the invariant [DGGY23, Def. 9, Thm. 10].

``mechanism.epsilon`` per unit of ``mechanism.norm`` (default l1). The l1 target is separable, so the exact
rejection sampler of :mod:`mechanisms.lattice_exact` draws it where the invariant has a free-coordinate split;
the l2 one is drawn by MCMC. The shared run (basis, draws, checks) is :func:`verify.kinds.lattice.run_lattice`.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np
from numpy.typing import NDArray

from semidp.accountant.core.directed import sqrt_up
from semidp.accountant.core.errors import UnsupportedRelease
from semidp.accountant.guarantees.definitions import ApproxDP, Guarantee, PureDP
from semidp.accountant.guarantees.relations import IntegerSubspace
from semidp.accountant.lattice.kernel import LatticeBasis
from semidp.accountant.releases.accounting import register_law
from semidp.accountant.releases.model import PURE_ONLY_NOISE, PluginLaw, Shift
from semidp.mechanisms.lattice_mcmc import LatticeLaplaceTarget
from semidp.mechanisms.lattice_privacy import approximate_sampler_delta, laplace_pair_epsilon
from semidp.verify.kinds.lattice import (
    LATTICE_FRAMEWORKS,
    MAX_LAPLACE_EPSILON,
    LatticeKind,
    LatticeParams,
    LatticeSpec,
)
from semidp.verify.registry import KindInfo, Problem
from semidp.verify.sections import Heuristic


@dataclass(frozen=True, slots=True)
class GeneralizedLaplaceNoise(PluginLaw):
    r"""Integer noise :math:`q(z)\propto e^{-\varepsilon\|z\|_p}` on the kernel lattice [DGGY23, Def. 9], drawn
    within TV distance ``delta_tv`` of it (0: exactly); a release noise law (interpreter: :func:`laplace_guarantee`)."""

    epsilon: float
    """Per unit of ``norm`` (rounded up)."""
    norm: str
    """``l1`` or ``l2``: the norm of the exponent, and of the shift it is charged on."""
    delta_tv: float
    """TV distance of the draws from the target (an MCMC burn-in's bound; 1: not bounded)."""

    @property
    def upper_bound_only(self) -> bool:
        """MCMC draws (``delta_tv > 0``): delta' is charged from the TV bound, so the guarantee is an upper bound."""
        return self.delta_tv > 0

    @property
    def pure_only(self) -> str:
        """Lattice Laplace noise reaches its pure epsilon on the worst pair (the lattice points where the triangle
        inequality is an equality carry mass), not the four-point pair's (epsilon, delta) profile."""
        return PURE_ONLY_NOISE


def laplace_guarantee(law: PluginLaw, shift: Shift) -> Guarantee:
    """The law's guarantee on a pair at ``shift``'s distance D in its norm: (eps D)-DP [DGGY23, Thm. 10], with
    delta' = (1 + e^{eps D}) delta_tv charged for draws within TV delta_tv (reference §3.5), capped at 1."""
    if not isinstance(law, GeneralizedLaplaceNoise):  # pragma: no cover - registered for this law only
        raise TypeError(f"laplace_guarantee interprets GeneralizedLaplaceNoise, not {type(law).__name__}")
    d = shift.l1 if law.norm == "l1" else sqrt_up(Fraction(shift.l2_squared))
    e = laplace_pair_epsilon(law.epsilon, d)
    if law.delta_tv == 0:
        return PureDP(e, shift.relation)
    return ApproxDP(e, min(1.0, approximate_sampler_delta(law.epsilon, d, law.delta_tv)), shift.relation)


register_law(GeneralizedLaplaceNoise, laplace_guarantee)


@dataclass(frozen=True)
class GeneralizedLaplaceLaw:
    """The generalized Laplace law of :class:`~verify.kinds.lattice.LatticeKind` (module docstring)."""

    default_norm: str = "l1"

    def target_problems(self, m: LatticeSpec) -> list[Problem]:
        """``epsilon`` in (0, 2^31) (the exact sampler's integer range, :mod:`mechanisms.lattice_exact`); no rho."""
        probs: list[Problem] = []
        if m.epsilon is None or not m.epsilon > 0:
            probs.append(
                Problem("mechanism.epsilon", "generalized-laplace needs epsilon > 0 (per unit of mechanism.norm)")
            )
        elif m.epsilon >= MAX_LAPLACE_EPSILON:
            probs.append(
                Problem(
                    "mechanism.epsilon",
                    f"must be < 2^31 = {MAX_LAPLACE_EPSILON} (the exact lattice sampler's range), "
                    f"got {float(m.epsilon)!r}",
                )
            )
        if m.rho is not None:
            probs.append(Problem("mechanism.rho", "generalized-laplace is calibrated by epsilon, not rho"))
        return probs

    def params(self, m: LatticeSpec) -> LatticeParams:
        """epsilon as a float, ``mechanism.norm`` (default l1)."""
        eps = float(m.epsilon) if m.epsilon is not None else 0.0
        rho = float(m.rho) if m.rho is not None else 0.0
        return LatticeParams(eps, rho, 0.0, m.norm or self.default_norm)

    def exact_sampler(self, m: LatticeSpec, a_mat: NDArray[np.int64], norm: str) -> tuple[Any, str]:
        """:class:`mechanisms.lattice_exact.ExactLatticeSampler` for l1; ``None`` for l2 (not separable)."""
        if norm != "l1":
            return None, "the l2 generalized Laplace is not separable over cells"
        from semidp.mechanisms.lattice_exact import ExactLatticeSampler

        try:  # the sampler searches the free-coordinate split itself and refuses, with the reason, without one
            assert m.epsilon is not None
            # a float is read as its shortest decimal (0.192 -> 24/125); the accounting uses the larger of
            # that and the spec's value, rounded up (epsilon_upper)
            return ExactLatticeSampler(a_mat, epsilon=float(m.epsilon), norm="l1"), ""
        except UnsupportedRelease as e:
            return None, str(e)

    def mcmc_target(self, basis: LatticeBasis, p: LatticeParams) -> LatticeLaplaceTarget:
        """e^{-eps ||C u||_p} on the lattice coordinates u."""
        return LatticeLaplaceTarget(basis.matrix, p.eps, "l1" if p.norm == "l1" else "l2")

    def target(self, p: LatticeParams, unit: IntegerSubspace) -> Guarantee:
        """epsilon-DP per unit norm [DGGY23, Thm. 10]."""
        return PureDP(p.eps, unit)

    def noise(self, p: LatticeParams, delta_tv: float, delta0: float) -> GeneralizedLaplaceNoise:
        """The drawn law: epsilon per unit norm, TV distance ``delta_tv`` from the target."""
        return GeneralizedLaplaceNoise(p.eps, p.norm, delta_tv)

    def calibration(self, p: LatticeParams) -> str:
        """``epsilon = ... per unit <norm>``."""
        return f"epsilon = {p.eps!r} per unit {p.norm} (DGGY Def 9, Thm 10)"

    def heuristic(self, basis: LatticeBasis, p: LatticeParams) -> Heuristic | None:
        """(d - r)/epsilon: the continuum's mean norm."""
        return Heuristic(
            basis.dimension / p.eps,
            "(d - r)/epsilon: ||z|| ~ Gamma(d - r, 1/epsilon) in the continuum "
            "(docs/reference/subspace-integer-postprocessing.md §3.3 (b)); a sanity figure, not a check",
        )


GENERALIZED_LAPLACE = LatticeKind(
    KindInfo("generalized-laplace", LatticeSpec, frameworks=LATTICE_FRAMEWORKS), GeneralizedLaplaceLaw()
)

__all__ = ["GENERALIZED_LAPLACE", "GeneralizedLaplaceLaw", "GeneralizedLaplaceNoise", "laplace_guarantee"]
