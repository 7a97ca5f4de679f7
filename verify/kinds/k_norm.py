"""``mechanism.kind = "k-norm"``: the optimal K-norm mechanism with K = conv(S) [CA24, Alg. 2, Thm. 31].

:math:`\\varepsilon`-DP on :math:`(\\mathcal D_t, A_{a(t)})`, noise :math:`R\\,U` with
:math:`R\\sim\\Gamma(s+1, \\varepsilon)` and U uniform on K (an exact fan triangulation).
conv(S) comes in closed form for 2 x c tables (the type-A root polytope,
:mod:`accountant.geometry.root_polytope`), else from the symmetry-aware hull, cached on
disk and re-verified on every load (:mod:`accountant.geometry.knorm_cache`). When the
hull is refused (``SearchTooLarge``), the exact but NON-OPTIMAL fallback with the
smaller expected l2 error is used and labelled: the containing ball of
:func:`accountant.geometry.containing_ball.containing_ball`, or Laplace on :math:`\\Delta_1(S)` projected
onto span(S). The expected error is checked against an independent Monte Carlo
estimate.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
from numpy.typing import NDArray
from scipy.stats import norm

from semidp.accountant.core.errors import InvalidArgument, SearchTooLarge
from semidp.accountant.core.outcome import Outcome, Refuted, Verified
from semidp.accountant.core.progress import stage
from semidp.accountant.geometry.containing_ball import ContainingBall, containing_ball
from semidp.accountant.geometry.knorm import KNormBall
from semidp.accountant.geometry.knorm_cache import cached_knorm_ball
from semidp.accountant.geometry.root_polytope import RootPolytopeBall
from semidp.accountant.geometry.table_space_norms import TableSpaceNorms
from semidp.accountant.geometry.table_symmetry import TableSymmetry
from semidp.accountant.guarantees.definitions import PureDP
from semidp.accountant.guarantees.relations import SemiAdjacent
from semidp.accountant.sensitivity.spaces import SensitivitySpace
from semidp.mechanisms.knorm import KNormMechanism
from semidp.verify.context import Context
from semidp.verify.kinds.additive import build_projected_laplace, build_projected_laplace_from_norms, pure_target
from semidp.verify.kinds.calibrated import CALIBRATED_FRAMEWORKS, BuiltMechanism, CalibratedKind, CalibratedSpec
from semidp.verify.mechanism_section import (
    BallLoss,
    FallbackAlternatives,
    HullCacheInfo,
    KNormMechanismSection,
    LaplaceMechanismSection,
)
from semidp.verify.monte_carlo import LEVEL, mc_interval
from semidp.verify.registry import KindInfo
from semidp.verify.sections import ErrorSection, KNormErrorSection, MonteCarloMean, ReferenceEstimate

FloatArray = NDArray[np.float64]

#: Uniform draws for the independent K-norm reference estimate of E||noise||_2.
KNORM_REFERENCE_DRAWS = 200_000


def build_knorm(ctx: Context, m: CalibratedSpec, s_space: SensitivitySpace, semi: SemiAdjacent) -> BuiltMechanism:
    """``k-norm`` (Alg. 2, Thm. 31), or the labelled non-optimal containing ball when the hull is refused."""
    eps = pure_target(ctx, m)
    root = _root_polytope(ctx, s_space, semi)
    cache_info: HullCacheInfo | None = None
    try:
        optimal: KNormBall | RootPolytopeBall
        if root is not None:  # 2 x c under both margins: conv(S) in closed form, no hull
            optimal = root
        else:
            stage(f"{ctx.spec.name}: optimal K-norm ball conv(S) (hull up to symmetry, cached on disk)")
            optimal, cache = cached_knorm_ball(
                s_space, relation=semi, symmetry=_table_symmetry(ctx, s_space), budget=ctx.budget
            )
            cache_info = HullCacheInfo(
                cache.status,
                str(cache.path),
                cache.seconds,
                "hulls are cached on disk (SEMIDP_CACHE_DIR) and fully re-verified on every load",
                cache.reason or None,  # e.g. a recursively triangulated ball, which is rebuilt, not stored
            )
        ball: KNormBall | ContainingBall | RootPolytopeBall = optimal
        label = f"OPTIMAL K-norm ball conv(S) ({optimal.method})"
    except SearchTooLarge as e:
        ball = containing_ball(s_space, relation=semi)
        label = f"{ball.label}; the optimal hull was refused: {e.summary}"
        # The other exact, invariant-keeping candidate: projected Laplace on Delta_1(S). Pick the smaller
        # expected l2 error (upper bounds on both sides, so the choice is never made on an optimistic number).
        lap = build_projected_laplace(ctx, m, s_space, semi)
        lap_info = _laplace_info(lap)
        lap_upper = math.sqrt(lap_info.expected_squared_error)  # Jensen
        ball_upper = _containing_ball_mean_upper(ball, eps)
        if lap_upper < ball_upper:
            return _as_fallback(
                lap,
                FallbackAlternatives(ball.kind, ball_upper, lap_upper),
                f"NON-OPTIMAL fallback for k-norm: {lap_info.label}; chosen over the containing "
                f"{ball.kind} (E||noise||_2 <= {lap_upper:.4g} vs {ball_upper:.4g}); the optimal hull "
                f"was refused: {e.summary}",
            )
        label += f"; chosen over projected Laplace (E||noise||_2 = {ball_upper:.4g} vs <= {lap_upper:.4g})"
    knorm = KNormMechanism(ball, eps)
    info = KNormMechanismSection(
        kind=m.kind,
        epsilon=eps,
        noise_dimension=knorm.dimension,
        optimal=knorm.optimal,
        label=label,
        hull_cache=cache_info,
        loss=BallLoss(ball.loss.volume_ratio_upper, ball.loss.norm_ratio_upper, ball.loss.how)
        if isinstance(ball, ContainingBall)
        else None,
        fallback="containing-ball" if isinstance(ball, ContainingBall) else None,
    )

    def check(norms: FloatArray, seed: int) -> tuple[ErrorSection, Outcome]:
        mean, se, lo, hi = mc_interval(norms)
        ref = knorm.expected_l2_norm_mc(rng=np.random.default_rng([seed, 1]), draws=KNORM_REFERENCE_DRAWS, level=LEVEL)
        z = float(norm.ppf(0.5 + LEVEL / 2))
        ref_se = (ref.upper - ref.lower) / (2 * z)
        tol = z * math.hypot(se, ref_se)
        sec = KNormErrorSection(
            MonteCarloMean("E||noise||_2", mean, se, LEVEL, (lo, hi), len(norms)),
            ReferenceEstimate(
                ref.estimate,
                (ref.lower, ref.upper),
                KNORM_REFERENCE_DRAWS,
                "(s+1)/epsilon E||U||_2, U uniform on the ball (independent stream)",
            ),
            mean * eps,
            (
                "docs/reference/semi-dp.md T-K1 (moves-only hull, shape s+1): epsilon E||noise||_2 = "
                "2.000 (2x2), 6.05 (3x3); the exact S here may contain 3-cycles, which enlarge K"
            )
            if knorm.optimal
            else None,
        )
        if abs(mean - ref.estimate) <= tol:
            return sec, Verified(
                f"Monte Carlo mean {mean:.6g} of the draws agrees with the independent estimate "
                f"{ref.estimate:.6g} (difference {abs(mean - ref.estimate):.3g} <= {tol:.3g}, "
                f"{LEVEL:.2%})"
            )
        return sec, Refuted(
            f"Monte Carlo mean {mean:.6g} of the draws differs from the independent estimate "
            f"{ref.estimate:.6g} by {abs(mean - ref.estimate):.3g} > {tol:.3g} ({LEVEL:.2%})"
        )

    return BuiltMechanism(knorm, semi, PureDP(eps, semi), info, True, check)


def build_knorm_from_norms(
    ctx: Context, m: CalibratedSpec, norms: TableSpaceNorms, semi: SemiAdjacent
) -> BuiltMechanism:
    """The labelled NON-OPTIMAL fallback when S is too large to list (so conv(S) is out of reach too):
    projected Laplace on the closed-form Delta_1(S) and span(S) (:mod:`accountant.geometry.table_space_norms`)."""
    eps = pure_target(ctx, m)
    lap = build_projected_laplace_from_norms(ctx, m, norms, semi)
    lap_info = _laplace_info(lap)
    lap_upper = math.sqrt(lap_info.expected_squared_error)  # Jensen
    # The containing l2-ball of radius Delta_2 in span(S): E||R U||_2 = (s+1)/eps * s/(s+1) * r = s r / eps.
    ball_upper = norms.rank * norms.l2 / eps
    smaller = "smaller" if lap_upper <= ball_upper else "larger, but the ball is not built without listing S"
    return _as_fallback(
        lap,
        FallbackAlternatives("l2-ball", ball_upper, lap_upper),
        f"NON-OPTIMAL fallback for k-norm: {lap_info.label}; E||noise||_2 <= {lap_upper:.4g}, {smaller} "
        f"than the containing l2-ball's {ball_upper:.4g}; the optimal hull needs S listed, and S "
        f"({norms.size} vectors) was not",
    )


def _laplace_info(lap: BuiltMechanism) -> LaplaceMechanismSection:
    """The report fields of a projected-Laplace mechanism built for ``k-norm``'s fallback."""
    if not isinstance(lap.info, LaplaceMechanismSection):  # pragma: no cover - the Laplace builders build it
        raise TypeError(f"projected Laplace built a {type(lap.info).__name__}")
    return lap.info


def _as_fallback(lap: BuiltMechanism, alternatives: FallbackAlternatives, label: str) -> BuiltMechanism:
    """The projected-Laplace mechanism labelled as ``k-norm``'s NON-OPTIMAL fallback, with the bounds it beat."""
    info = dataclasses.replace(
        _laplace_info(lap), optimal=False, alternatives=alternatives, fallback="projected-laplace", label=label
    )
    return dataclasses.replace(lap, info=info)


def _root_polytope(ctx: Context, s_space: SensitivitySpace, semi: SemiAdjacent) -> RootPolytopeBall | None:
    """The closed-form conv(S) of a 2 x c table under both margins, when S is exactly its moves set."""
    feats = ctx.spec.data.features
    if len(feats) != 2 or feats[0].levels != 2:
        return None
    try:
        return RootPolytopeBall.from_space(s_space, relation=semi)
    except InvalidArgument:
        return None


def _table_symmetry(ctx: Context, s_space: SensitivitySpace) -> TableSymmetry | None:
    """The row/column symmetry of a two-way table when S is invariant under it (it need not be at small t)."""
    feats = ctx.spec.data.features
    if len(feats) != 2:
        return None
    sym = TableSymmetry(feats[0].levels, feats[1].levels)
    try:
        sym.check_invariant(s_space)
    except InvalidArgument:
        return None
    return sym


def _containing_ball_mean_upper(ball: ContainingBall, eps: float) -> float:
    r"""Upper bound on :math:`\mathbb E\|RU\|_2=\frac{s+1}{\varepsilon}\mathbb E\|U\|_2` for a containing ball.

    Exact for ``l2-ball`` (:math:`\mathbb E\|U\|_2=\frac{s}{s+1}r`); the Jensen bound
    :math:`\|T\|_F/\sqrt3` for the cubes.
    """
    s = ball.dimension
    mean_u = (
        s / (s + 1) * float(ball.transform[0, 0])
        if ball.kind == "l2-ball"
        else float(np.linalg.norm(ball.transform)) / math.sqrt(3)
    )
    return (s + 1) / eps * mean_u


K_NORM = CalibratedKind(
    KindInfo("k-norm", CalibratedSpec, frameworks=CALIBRATED_FRAMEWORKS, reports_sensitivity=True),
    build_knorm,
    norms_builder=build_knorm_from_norms,
)

__all__ = ["KNORM_REFERENCE_DRAWS", "K_NORM", "build_knorm", "build_knorm_from_norms"]
