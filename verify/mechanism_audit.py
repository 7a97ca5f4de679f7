"""Audit of a mechanism semidp builds: ``mechanism.kind`` in :data:`MECHANISM_KINDS`.

Steps (Cho & Awan 2024): a(t) at the confidential table; the exact Semi-DP
sensitivity space S of the histogram at radius a(t)
(:func:`accountant.sensitivity_search.semi_sensitivity_search`); the mechanism
calibrated to the spec's target on the relation ``SemiAdjacent(base, invariant, a(t))``
(every kind on the same relation, so their expected errors compare directly):

* ``projected-gaussian`` (Alg. 1): noise (Delta_2/mu) Q xi, xi ~ N(0, I_s), Q an
  orthonormal basis of span(S); mu-GDP on (D_t, A_a(t)) (Prop. 28). Target
  ``mechanism.mu``, or ``mechanism.epsilon`` + ``delta`` through
  :func:`accountant.gaussian.gdp_mu_for`.
* ``gaussian``: the same sigma in every cell
  (:class:`mechanisms.semi_additive.SemiGaussianMechanism`); does not keep the
  invariant (the invariant check is then a ``skip``, not applicable).
* ``laplace`` / ``projected-laplace``: Lap(Delta_1(S)/epsilon) in every cell, or
  projected onto span(S) so the invariant is kept
  (:class:`mechanisms.semi_additive.SemiLaplaceMechanism`); epsilon-DP on (D_t, A_a(t)).
* ``k-norm`` (Alg. 2, Thm. 31): the optimal K-norm mechanism with K = conv(S),
  epsilon-DP on (D_t, A_a(t)); when the hull is refused (``SearchTooLarge``), the
  exact but NON-OPTIMAL containing ball of :func:`accountant.knorm.containing_ball`.

Then ``[audit] samples`` releases are drawn with ``numpy.random.default_rng(seed)``
(the seed is recorded) and checked: every draw keeps the invariant, and the
mean error agrees with its expectation (exact E||noise||_2 for the Gaussians,
T-G1; exact E||noise||_2^2 = 2 b^2 k for Laplace; an independent Monte Carlo
estimate for K-norm). The draws are returned in
:attr:`MechanismAudit.samples` (float64, shape (samples, cells), row-major
cells) for the contract's ``DIR/<name>.samples.npy``.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray
from scipy.stats import norm

from accountant.errors import InvalidArgument, SearchTooLarge, UnsupportedRelease
from accountant.gaussian import gdp_mu_for
from accountant.guarantees import GDP, ApproxDP, Guarantee, PureDP
from accountant.knorm import ContainingBall, KNormBall, TableSymmetry, containing_ball
from accountant.knorm_cache import cached_knorm_ball
from accountant.relations import BaseRelation, SemiAdjacent
from accountant.root_polytope import RootPolytopeBall
from accountant.semiadjacent import semi_adjacent_parameter
from accountant.semidp import NoFiniteGuarantee, joint_release_dp
from accountant.sensitivity import SensitivitySpace
from accountant.sensitivity_search import semi_sensitivity_search
from mechanisms.knorm import KNormMechanism
from mechanisms.projected_gaussian import ProjectedGaussianMechanism, expected_chi
from mechanisms.semi_additive import SemiGaussianMechanism, SemiLaplaceMechanism
from mechanisms.subspace import ProjectedGaussian, ProjectedLaplace
from verify.audit import (
    _check,
    check_semi_adjacent,
    claim_check,
    invariant_of,
    relation_of,
    report_footer,
    report_header,
    space_of,
    summarize,
)
from verify.certify import certify_summary
from verify.draws import DEFAULT_SAMPLES, LEVEL, MechanismAudit, audit_seed, draw_count, mc_interval
from verify.outcome import Outcome, Refuted, Verified, detail_of
from verify.spec import Spec

FloatArray = NDArray[np.float64]

#: Mechanism kinds audited here.
MECHANISM_KINDS = ("gaussian", "projected-gaussian", "laplace", "projected-laplace", "k-norm")
#: Relative tolerance of the invariant check (times the scale of A x).
INVARIANT_RTOL = 1e-9
#: Uniform draws for the independent K-norm reference estimate of E||noise||_2.
KNORM_REFERENCE_DRAWS = 200_000


def _invariant_check(a_mat: NDArray[np.int64], table: FloatArray, draws: FloatArray) -> Outcome:
    """Every draw's A x equals the table's, within INVARIANT_RTOL times the scale of A x."""
    if a_mat.shape[0] == 0:
        return Verified(f"no invariant rows; {len(draws)} draws trivially keep it")
    target = a_mat @ table
    got = draws @ a_mat.T.astype(np.float64)
    dev = np.abs(got - target[None, :])
    scale = max(1.0, float(np.abs(a_mat).sum(axis=1).max()) * float(np.abs(draws).max(initial=0.0)))
    tol = INVARIANT_RTOL * scale
    worst = float(dev.max(initial=0.0))
    bad = int(np.count_nonzero(dev.max(axis=1) > tol)) if len(draws) else 0
    head = f"max |A y - A x| = {worst:.3g} over {len(draws)} draws (tolerance {tol:.3g} = 1e-9 x {scale:.3g})"
    return Verified(f"{head}; every draw keeps the invariant") if bad == 0 else Refuted(
        f"{head}; {bad} draws break the invariant")


@dataclass(frozen=True)
class _Built:
    """A calibrated mechanism, ready to draw from and to check."""

    sample: Callable[[FloatArray, np.random.Generator, int], FloatArray]
    advertised: Guarantee
    """The calibration target, on the Semi-DP relation."""
    guarantee: Guarantee
    """The mechanism's privacy map on the Semi-DP relation."""
    info: dict[str, Any]
    keeps_invariant: bool
    error_check: Callable[[FloatArray, int], tuple[dict[str, Any], Outcome]]
    """``(noise norms, seed) -> (expected_l2_error section, outcome)``."""


def _gaussian_target(spec: Spec, semi: SemiAdjacent) -> tuple[float, Guarantee, str]:
    """mu, the advertised guarantee and a description, from ``mechanism.mu`` or ``epsilon`` + ``delta``."""
    m = spec.mechanism
    if m.mu is not None and m.epsilon is None:
        mu = float(m.mu)
        return mu, GDP(mu, semi), f"mu = {mu!r}"
    if m.mu is None and m.epsilon is not None and m.delta is not None and 0 < m.delta < 1:
        mu = gdp_mu_for(float(m.epsilon), float(m.delta))
        return mu, ApproxDP(float(m.epsilon), float(m.delta), semi), (
            f"(epsilon, delta) = ({float(m.epsilon)!r}, {float(m.delta)!r}) -> mu = {mu!r} "
            "(analytic Gaussian, gdp_mu_for)")
    raise UnsupportedRelease(f"{spec.path}: mechanism.kind = {m.kind!r} needs mechanism.mu, "
                             "or mechanism.epsilon with 0 < mechanism.delta < 1.")


def _pure_target(spec: Spec) -> float:
    m = spec.mechanism
    if m.epsilon is None or m.mu is not None or (m.delta is not None and m.delta != 0):
        raise UnsupportedRelease(f"{spec.path}: mechanism.kind = {m.kind!r} needs mechanism.epsilon "
                                 "(pure DP: no delta, no mu).")
    return float(m.epsilon)


def _mean_check(what: str, exact: float, formula: str, values: FloatArray) -> tuple[dict[str, Any], Outcome]:
    """The draws' mean of ``what`` against its exact expectation, at confidence LEVEL."""
    mean, se, lo, hi = mc_interval(values)
    sec: dict[str, Any] = {"monte_carlo": {"quantity": what, "mean": mean, "std_error": se, "level": LEVEL,
                                           "interval": [lo, hi], "draws": len(values)},
                           "exact": exact, "quantity": what, "formula": formula}
    if lo <= exact <= hi:
        return sec, Verified(f"exact {what} = {exact:.6g}; Monte Carlo mean {mean:.6g}, {LEVEL:.2%} interval "
                             f"[{lo:.6g}, {hi:.6g}] contains it")
    return sec, Refuted(f"exact {what} = {exact:.6g} outside the {LEVEL:.2%} interval [{lo:.6g}, {hi:.6g}] "
                        f"of the {len(values)} draws (a correct sampler fails this for {1 - LEVEL:.2%} of seeds)")


def _build_gaussian(spec: Spec, s_space: SensitivitySpace, semi: SemiAdjacent) -> _Built:
    """``projected-gaussian`` (Cho & Awan Alg. 1, Prop. 28) or ``gaussian`` (noise in every cell)."""
    mu, advertised, how = _gaussian_target(spec, semi)
    mech: ProjectedGaussianMechanism | SemiGaussianMechanism
    if spec.mechanism.kind == "projected-gaussian":
        mech = ProjectedGaussianMechanism.for_gdp(s_space, mu, semi)
        label, dim = "Semi-DP Gaussian (Cho & Awan Alg. 1, Prop. 28)", mech.dimension
    else:
        mech = SemiGaussianMechanism.for_gdp(s_space, mu, semi)
        label = ("Gaussian noise in every cell, sigma = Delta_2(S)/mu (Dong, Roth & Su Thm. 2.7 on the "
                 "Semi-DP relation); does not keep the invariant, which is published separately")
        dim = mech.dimension
    info = {"calibration": how, "sigma": mech.sigma, "l2_sensitivity": mech.sensitivity,
            "l2_sensitivity_squared": s_space.l2_squared, "noise_dimension": dim, "optimal": None, "label": label}
    exact = mech.expected_l2_norm()

    def check(norms: FloatArray, seed: int) -> tuple[dict[str, Any], Outcome]:
        sec, out = _mean_check("E||noise||_2", exact, "sigma E chi_k = sigma sqrt(2) Gamma((k+1)/2)/Gamma(k/2), "
                               "k = noise dimension (T-G1)", norms)
        sec.update(k=dim, e_chi_k=expected_chi(dim))
        return sec, out

    return _Built(lambda t, rng, n: mech.sample(t, rng=rng, size=n), advertised, mech.privacy_map(semi), info,
                  spec.mechanism.kind == "projected-gaussian", check)


def _build_laplace(spec: Spec, s_space: SensitivitySpace, semi: SemiAdjacent) -> _Built:
    """``laplace`` / ``projected-laplace``: Lap(Delta_1(S)/epsilon) per cell, projected onto span(S) or not."""
    eps = _pure_target(spec)
    projected = spec.mechanism.kind == "projected-laplace"
    mech = SemiLaplaceMechanism.for_epsilon(s_space, eps, semi, projected=projected)
    label = ("Laplace noise projected onto span(S) (keeps the invariant; post-processing pair by pair)"
             if projected else
             "Laplace noise in every cell; does not keep the invariant, which is published separately")
    info = {"calibration": f"epsilon = {eps!r}", "scale": mech.scale, "l1_sensitivity": mech.sensitivity,
            "noise_dimension": mech.noise_dimension, "optimal": None,
            "expected_squared_error": mech.expected_squared_error(),
            "label": label + f"; b = Delta_1(S)/epsilon = {mech.sensitivity}/{eps!r}"}
    exact = mech.expected_squared_error()

    def check(norms: FloatArray, seed: int) -> tuple[dict[str, Any], Outcome]:
        return _mean_check("E||noise||_2^2", exact, "2 b^2 k, k = noise dimension", norms**2)

    return _Built(lambda t, rng, n: mech.sample(t, rng=rng, size=n), PureDP(eps, semi), mech.privacy_map(semi),
                  info, projected, check)


def _build_knorm(spec: Spec, s_space: SensitivitySpace, semi: SemiAdjacent) -> _Built:
    """``k-norm`` (Alg. 2, Thm. 31), or the labelled non-optimal containing ball when the hull is refused."""
    eps = _pure_target(spec)
    root = _root_polytope(spec, s_space, semi)
    cache_info: dict[str, Any] | None = None
    try:
        optimal: KNormBall | RootPolytopeBall
        if root is not None:       # 2 x c under both margins: conv(S) in closed form, no hull
            optimal = root
        else:
            optimal, cache = cached_knorm_ball(s_space, relation=semi, symmetry=_table_symmetry(spec, s_space))
            cache_info = {"status": cache.status, "path": str(cache.path), "seconds": cache.seconds,
                          "note": "hulls are cached on disk (SEMIDP_CACHE_DIR) and fully re-verified on every load"}
            if cache.reason:            # e.g. a recursively triangulated ball, which is rebuilt, not stored
                cache_info["reason"] = cache.reason
        ball: KNormBall | ContainingBall | RootPolytopeBall = optimal
        label = f"OPTIMAL K-norm ball conv(S) ({optimal.method})"
    except SearchTooLarge as e:
        ball = containing_ball(s_space, relation=semi)
        label = f"{ball.label}; the optimal hull was refused: {e}"
        # The other exact, invariant-keeping candidate: projected Laplace on Delta_1(S). Pick the smaller
        # expected l2 error (upper bounds on both sides, so the choice is never made on an optimistic number).
        lap = _build_laplace(dataclasses.replace(spec, mechanism=dataclasses.replace(
            spec.mechanism, kind="projected-laplace")), s_space, semi)
        lap_upper = math.sqrt(lap.info["expected_squared_error"])            # Jensen
        ball_upper = _containing_ball_mean_upper(ball, eps)
        alternatives = {"containing-ball": {"kind": ball.kind, "expected_l2_upper": ball_upper},
                        "projected-laplace": {"expected_l2_upper": lap_upper}}
        if lap_upper < ball_upper:
            lap.info.update(
                optimal=False, alternatives=alternatives, fallback="projected-laplace",
                label=(f"NON-OPTIMAL fallback for k-norm: {lap.info['label']}; chosen over the containing "
                       f"{ball.kind} (E||noise||_2 <= {lap_upper:.4g} vs {ball_upper:.4g}); the optimal hull "
                       f"was refused: {e}"))
            return lap
        label += (f"; chosen over projected Laplace (E||noise||_2 = {ball_upper:.4g} vs <= {lap_upper:.4g})")
    knorm = KNormMechanism(ball, eps)
    info: dict[str, Any] = {"epsilon": eps, "noise_dimension": knorm.dimension, "optimal": knorm.optimal,
                            "label": label}
    if cache_info is not None:
        info["hull_cache"] = cache_info
    if isinstance(ball, ContainingBall):
        info["loss"] = {"volume_ratio_upper": ball.loss.volume_ratio_upper,
                        "norm_ratio_upper": ball.loss.norm_ratio_upper, "how": ball.loss.how}
        info["fallback"] = "containing-ball"

    def check(norms: FloatArray, seed: int) -> tuple[dict[str, Any], Outcome]:
        mean, se, lo, hi = mc_interval(norms)
        ref = knorm.expected_l2_norm_mc(rng=np.random.default_rng([seed, 1]), draws=KNORM_REFERENCE_DRAWS,
                                        level=LEVEL)
        z = float(norm.ppf(0.5 + LEVEL / 2))
        ref_se = (ref.upper - ref.lower) / (2 * z)
        tol = z * math.hypot(se, ref_se)
        sec: dict[str, Any] = {
            "monte_carlo": {"quantity": "E||noise||_2", "mean": mean, "std_error": se, "level": LEVEL,
                            "interval": [lo, hi], "draws": len(norms)},
            "reference": {"estimate": ref.estimate, "interval": [ref.lower, ref.upper],
                          "draws": KNORM_REFERENCE_DRAWS,
                          "formula": "(s+1)/epsilon E||U||_2, U uniform on the ball (independent stream)"},
            "epsilon_times_mean": mean * eps}
        if knorm.optimal:
            sec["note"] = ("reference semi-dp.md T-K1 (moves-only hull, shape s+1): epsilon E||noise||_2 = "
                           "2.000 (2x2), 6.05 (3x3); the exact S here may contain 3-cycles, which enlarge K")
        if abs(mean - ref.estimate) <= tol:
            return sec, Verified(f"Monte Carlo mean {mean:.6g} of the draws agrees with the independent estimate "
                                 f"{ref.estimate:.6g} (difference {abs(mean - ref.estimate):.3g} <= {tol:.3g}, "
                                 f"{LEVEL:.2%})")
        return sec, Refuted(f"Monte Carlo mean {mean:.6g} of the draws differs from the independent estimate "
                            f"{ref.estimate:.6g} by {abs(mean - ref.estimate):.3g} > {tol:.3g} ({LEVEL:.2%})")

    return _Built(lambda t, rng, n: knorm.sample(t, rng=rng, size=n), PureDP(eps, semi), knorm.privacy_map(semi),
                  info, True, check)


def _root_polytope(spec: Spec, s_space: SensitivitySpace, semi: SemiAdjacent) -> RootPolytopeBall | None:
    """The closed-form conv(S) of a 2 x c table under both margins, when S is exactly its moves set."""
    feats = spec.data.features
    if len(feats) != 2 or feats[0].levels != 2:
        return None
    try:
        return RootPolytopeBall.from_space(s_space, relation=semi)
    except InvalidArgument:
        return None


def _table_symmetry(spec: Spec, s_space: SensitivitySpace) -> TableSymmetry | None:
    """The row/column symmetry of a two-way table when S is invariant under it (it need not be at small t)."""
    feats = spec.data.features
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
    mean_u = (s / (s + 1) * float(ball.transform[0, 0]) if ball.kind == "l2-ball"
              else float(np.linalg.norm(ball.transform)) / math.sqrt(3))
    return (s + 1) / eps * mean_u


#: Kinds that also run as Gao, Gong & Yu's subspace-DP mechanisms (``claim.framework = "subspace-dp"``).
_SUBSPACE_KINDS = ("projected-gaussian", "projected-laplace")


def _build_subspace(spec: Spec, constraint: NDArray[np.int64], rel: BaseRelation) -> _Built:
    """GGY's projected Gaussian (Cor 3.5/14, their c_{eps,delta}, eps < 1) or projected Laplace (Cor 3.8/17).

    Calibrated on the base relation with the histogram's Delta_p; the guarantee is
    induced subspace DP w.r.t. the invariant matrix (``Subspace`` relation), not DP of
    the joint release and not Semi-DP.
    """
    m = spec.mechanism
    if m.kind == "projected-gaussian":
        if m.epsilon is None or m.delta is None or m.mu is not None:
            raise UnsupportedRelease(f"{spec.path}: claim.framework = 'subspace-dp' with projected-gaussian needs "
                                     "mechanism.epsilon and mechanism.delta (GGY's c_eps_delta, both in (0, 1)).")
        eps, delta = float(m.epsilon), float(m.delta)
        try:
            g = ProjectedGaussian.calibrate(constraint, eps, delta, relation=rel)
        except InvalidArgument as e:
            raise UnsupportedRelease(f"{spec.path}: mechanism: {e}") from e
        info: dict[str, Any] = {"calibration": f"(epsilon, delta) = ({eps!r}, {delta!r}) -> sigma = c_eps_delta "
                                f"* Delta_2 = {g.sigma!r}", "sigma": g.sigma, "l2_sensitivity": g.sensitivity}
        advertised: Guarantee = ApproxDP(eps, delta, g.privacy_map(rel).relation)
        mech: ProjectedGaussian | ProjectedLaplace = g
        label = "GGY projected Gaussian (Cor 3.5/14): induced subspace DP, not DP of the joint release"
    else:
        eps = _pure_target(spec)
        lap = ProjectedLaplace.calibrate(constraint, eps, relation=rel)
        info = {"calibration": f"epsilon = {eps!r} -> b = Delta_1/epsilon = {lap.scale!r}", "scale": lap.scale,
                "l1_sensitivity": lap.sensitivity}
        advertised = PureDP(eps, lap.privacy_map(rel).relation)
        mech = lap
        label = "GGY projected Laplace (Cor 3.8/17): induced subspace DP, not DP of the joint release"
    exact = mech.expected_squared_error()
    k = mech.subspace.null_dimension
    var = (mech.marginal_variances() if isinstance(mech, ProjectedLaplace) else
           mech.sigma**2 * mech.subspace.projector_diagonal())
    info.update(noise_dimension=k, optimal=None, label=label, expected_squared_error=exact,
                per_cell_variance={"min": float(var.min()), "max": float(var.max())},
                framework="subspace-dp (Gao, Gong & Yu 2022, Def 2.6)")

    def check(norms: FloatArray, seed: int) -> tuple[dict[str, Any], Outcome]:
        return _mean_check("E||noise||_2^2", exact, f"(n - rank C) x per-coordinate variance, n - rank C = {k}",
                           norms**2)

    return _Built(lambda t, rng, n: mech.sample(t, rng=rng, size=n), advertised, mech.privacy_map(rel), info,
                  True, check)


_BUILDERS: dict[str, Callable[[Spec, SensitivitySpace, SemiAdjacent], _Built]] = {
    "gaussian": _build_gaussian, "projected-gaussian": _build_gaussian,
    "laplace": _build_laplace, "projected-laplace": _build_laplace, "k-norm": _build_knorm,
}


def audit_mechanism(spec: Spec, *, seed: int | None = None, time_limit: float = 60.0) -> MechanismAudit:
    """Build, calibrate, draw from and check the spec's mechanism (see the module docstring).

    Raises
    ------
    UnsupportedRelease
        Not a kind of :data:`MECHANISM_KINDS`, no ``data.table``, a missing or
        inconsistent calibration target, or a claim framework other than
        ``semi-dp``/``dp``.
    """
    m = spec.mechanism
    if m.kind not in MECHANISM_KINDS:
        raise UnsupportedRelease(f"{spec.path}: audit_mechanism handles {list(MECHANISM_KINDS)}, not {m.kind!r}.")
    if spec.data.table is None:
        raise UnsupportedRelease(f"{spec.path}: data.table is required for mechanism.kind = {m.kind!r} "
                                 "(the releases are drawn at the confidential histogram).")
    if spec.query is not None and spec.query.kind != "histogram":
        raise UnsupportedRelease(f"{spec.path}: mechanism.kind = {m.kind!r} releases the histogram; "
                                 f"query.kind = {spec.query.kind!r} is not supported for it (use 'histogram').")
    framework = spec.claim.framework if spec.claim else "semi-dp"
    frameworks = ("dp", "semi-dp", "subspace-dp") if m.kind in _SUBSPACE_KINDS else ("dp", "semi-dp")
    if framework not in frameworks:
        raise UnsupportedRelease(f"{spec.path}: claim.framework = {framework!r} is not evaluated for "
                                 f"mechanism.kind = {m.kind!r} yet; supported: {list(frameworks)}.")
    space, inv, rel = space_of(spec), invariant_of(spec), relation_of(spec)
    table_list = [int(c) for c in spec.data.table]
    table = np.asarray(table_list, dtype=np.float64)
    deltas = [float(d) for d in spec.report.deltas]

    a = semi_adjacent_parameter(space, inv, rel, table=table_list, records=spec.data.records,
                                time_limit=time_limit)
    semi = SemiAdjacent(rel, inv, a.value)
    mechanism_info: dict[str, Any] = {"kind": m.kind}
    s_space: SensitivitySpace | None = None
    if framework == "subspace-dp":   # calibrated on the base relation: the Semi-DP space S is not needed
        built = _build_subspace(spec, inv.matrix(space), rel)
    else:
        res = semi_sensitivity_search(space, inv, a.value, table=table_list, query=None, time_limit=time_limit)
        s_space = res.space
        built = _BUILDERS[m.kind](spec, s_space, semi)
        mechanism_info.update(sensitivity_space=s_space.label, sensitivity_exact=res.exact)
    mechanism_info.update(built.info)
    mech_g, advertised = built.guarantee, built.advertised
    effective: Guarantee | NoFiniteGuarantee = mech_g
    if framework == "dp":   # the joint release with the invariant, on (D, A_1)
        on_base: Guarantee = (GDP(mech_g.mu, rel) if isinstance(mech_g, GDP) else
                              PureDP(mech_g.epsilon, rel) if isinstance(mech_g, PureDP) else mech_g)
        effective = joint_release_dp(on_base, inv, space)

    # -- draw -----------------------------------------------------------------------
    used_seed = audit_seed(spec, seed)
    n = draw_count(spec)
    draws = built.sample(table, np.random.default_rng(used_seed), n)
    draws = np.ascontiguousarray(draws, dtype=np.float64).reshape(n, space.n_cells)

    inv_outcome = _invariant_check(inv.matrix(space), table, draws)
    inv_check = _check("invariant-preserved", inv_outcome)
    if not built.keeps_invariant:   # not applicable: a skip that does not make the verdict inconclusive
        inv_check.update(status="skip", outcome="not-applicable", detail=(
            f"mechanism.kind = {m.kind!r} adds noise in every cell and does not keep the invariant (it is "
            f"published separately; the Semi-DP guarantee covers both): {detail_of(inv_outcome)}"))
    err, err_outcome = built.error_check(np.linalg.norm(draws - table[None, :], axis=1), used_seed)

    # -- report ---------------------------------------------------------------------
    adv_summary = summarize(advertised, deltas)
    eff_summary = {"framework": framework, **summarize(effective, deltas)}
    target: Outcome = (Verified(f"the calibrated mechanism's guarantee implies the target ({type(advertised).__name__})")
                       if _implies(mech_g, advertised) else
                       Refuted("BUG: the calibrated mechanism does not meet its calibration target"))
    checks = [
        _check("semi-adjacent-parameter", check_semi_adjacent(spec, space, inv, rel, a)),
        _check("calibration", target),
        inv_check,
        _check("expected-l2-error", err_outcome),
        _check("conversions-certified", certify_summary([adv_summary, eff_summary], advertised, effective)),
    ]
    checks += claim_check(spec, effective)
    sens: dict[str, Any] | None = None
    if spec.query is not None:
        from verify.sensitivity_report import sensitivity_section

        sens, sens_outcome = sensitivity_section(spec, space, inv, a, time_limit)
        checks.append(_check("sensitivity", sens_outcome if s_space is None else
                             _calibrated_to_exact(sens, sens_outcome, s_space)))
    report: dict[str, Any] = {
        **report_header(spec, space, rel, inv, a, used_seed),
        **({"sensitivity": sens} if sens is not None else {}),
        "mechanism": mechanism_info,
        "samples": {"count": n, "seed": used_seed, "shape": [n, space.n_cells], "dtype": "float64",
                    "order": "row-major cells"},
        "expected_l2_error": err,
        "advertised": adv_summary,
        "effective": eff_summary,
        **report_footer(spec, checks),
    }
    return MechanismAudit(report=report, advertised=advertised, effective=effective, samples=draws)


def _calibrated_to_exact(sens: dict[str, Any], outcome: Outcome, s_space: SensitivitySpace) -> Outcome:
    """The sensitivity check for a mechanism calibrated to the exact space S.

    The section's independently computed l1 and l2 must equal the ones of S the mechanism used.
    """
    l2 = sens.get("l2")
    if isinstance(l2, (int, float)) and not math.isclose(float(l2) ** 2, s_space.l2_squared, rel_tol=1e-12):
        return Refuted(f"BUG: the sensitivity section has l2 = {l2!r}, the mechanism was calibrated to "
                       f"sqrt({s_space.l2_squared})")
    l1 = sens.get("l1")
    if isinstance(l1, (int, float)) and float(l1) != s_space.l1:
        return Refuted(f"BUG: the sensitivity section has l1 = {l1!r}, the mechanism was calibrated to "
                       f"{s_space.l1}")
    return outcome


def _implies(g: Guarantee, target: Guarantee) -> bool:
    """``g`` implies the calibration ``target`` (GDP -> approx DP through the exact GDP profile)."""
    if isinstance(g, GDP) and isinstance(target, ApproxDP):
        from accountant.gaussian import gdp_delta

        return gdp_delta(g.mu, target.epsilon) <= target.delta
    if isinstance(g, GDP) and isinstance(target, GDP):
        return g.dominates(target)
    if isinstance(g, PureDP) and isinstance(target, PureDP):
        return g.dominates(target)
    return False


__all__ = ["DEFAULT_SAMPLES", "MECHANISM_KINDS", "MechanismAudit", "audit_mechanism"]
