"""Audit of a mechanism semidp builds: ``mechanism.kind = "projected-gaussian"`` or ``"k-norm"``.

Steps (Cho & Awan 2024): a(t) at the confidential table; the exact Semi-DP
sensitivity space S of the histogram at radius a(t)
(:func:`accountant.sensitivity_search.semi_sensitivity_search`); the mechanism
calibrated to the spec's target on the relation ``SemiAdjacent(base, invariant, a(t))``:

* ``projected-gaussian`` (Alg. 1): noise (Delta_2/mu) Q xi, xi ~ N(0, I_s), Q an
  orthonormal basis of span(S); mu-GDP on (D_t, A_a(t)) (Prop. 28). Target
  ``mechanism.mu``, or ``mechanism.epsilon`` + ``delta`` through
  :func:`accountant.gaussian.gdp_mu_for`.
* ``k-norm`` (Alg. 2, Thm. 31): the optimal K-norm mechanism with K = conv(S),
  epsilon-DP on (D_t, A_a(t)); when the hull is refused (``SearchTooLarge``), the
  exact but NON-OPTIMAL containing ball of :func:`accountant.knorm.containing_ball`.

Then ``[audit] samples`` releases are drawn with ``numpy.random.default_rng(seed)``
(the seed is recorded) and checked: every draw keeps the invariant, and the
mean l2 error agrees with its expectation (exact for the Gaussian, T-G1; an
independent Monte Carlo estimate for K-norm). The draws are returned in
:attr:`MechanismAudit.samples` (float64, shape (samples, cells), row-major
cells) for the contract's ``DIR/<name>.samples.npy``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray
from scipy.stats import norm

from accountant.errors import SearchTooLarge, UnsupportedRelease
from accountant.gaussian import gdp_mu_for
from accountant.guarantees import GDP, ApproxDP, Guarantee, PureDP
from accountant.knorm import ContainingBall, KNormBall, containing_ball
from accountant.relations import SemiAdjacent
from accountant.semiadjacent import semi_adjacent_parameter
from accountant.semidp import NoFiniteGuarantee, joint_release_dp
from accountant.sensitivity_search import semi_sensitivity_search
from mechanisms.knorm import KNormMechanism
from mechanisms.projected_gaussian import ProjectedGaussianMechanism, expected_chi
from verify.audit import (
    Audit,
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
from verify.outcome import Outcome, Refuted, Verified
from verify.spec import Spec

FloatArray = NDArray[np.float64]

#: Mechanism kinds audited here.
MECHANISM_KINDS = ("projected-gaussian", "k-norm")
#: Draws when the spec has no ``[audit]`` section.
DEFAULT_SAMPLES = 200
#: Relative tolerance of the invariant check (times the scale of A x).
INVARIANT_RTOL = 1e-9
#: Confidence level of the Monte Carlo intervals of the expected l2 error.
LEVEL = 0.9999  # a correct sampler fails this check once in 10^4 audits, not once in 100
#: Uniform draws for the independent K-norm reference estimate of E||noise||_2.
KNORM_REFERENCE_DRAWS = 200_000


@dataclass(frozen=True)
class MechanismAudit(Audit):
    """An :class:`~verify.audit.Audit` that also carries the drawn releases."""

    samples: FloatArray | None = None
    """``(samples, cells)`` float64 releases, row-major cells (contract ``DIR/<name>.samples.npy``)."""


def _seed(spec: Spec, seed: int | None) -> int:
    used = seed if seed is not None else (spec.audit.seed if spec.audit is not None else None)
    if used is None:
        entropy = np.random.SeedSequence().entropy
        assert isinstance(entropy, int)  # SeedSequence() draws an int from the OS
        used = entropy % 2**63
    return int(used)


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


def _mc_interval(norms: FloatArray) -> tuple[float, float, float, float]:
    """Mean, its standard error, and the two-sided LEVEL interval."""
    n = len(norms)
    mean = float(norms.mean())
    se = float(norms.std(ddof=1)) / math.sqrt(n) if n > 1 else math.inf
    z = float(norm.ppf(0.5 + LEVEL / 2))
    return mean, se, mean - z * se, mean + z * se


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
    if framework not in ("semi-dp", "dp"):
        raise UnsupportedRelease(f"{spec.path}: claim.framework = {framework!r} is not evaluated for "
                                 f"mechanism.kind = {m.kind!r} yet; supported: ['dp', 'semi-dp'].")
    space, inv, rel = space_of(spec), invariant_of(spec), relation_of(spec)
    table_list = [int(c) for c in spec.data.table]
    table = np.asarray(table_list, dtype=np.float64)
    deltas = [float(d) for d in spec.report.deltas]

    a = semi_adjacent_parameter(space, inv, rel, table=table_list, records=spec.data.records,
                                time_limit=time_limit)
    semi = SemiAdjacent(rel, inv, a.value)
    res = semi_sensitivity_search(space, inv, a.value, table=table_list, query=None, time_limit=time_limit)
    s_space = res.space

    # -- calibrate ------------------------------------------------------------------
    mechanism_info: dict[str, Any] = {"kind": m.kind, "sensitivity_space": s_space.label,
                                      "sensitivity_exact": res.exact}
    knorm: KNormMechanism | None = None
    knorm_eps = 0.0
    gauss: ProjectedGaussianMechanism | None = None
    if m.kind == "projected-gaussian":
        if m.mu is not None and m.epsilon is None:
            mu = float(m.mu)
            advertised: Guarantee = GDP(mu, semi)
            mechanism_info["calibration"] = f"mu = {mu!r}"
        elif m.mu is None and m.epsilon is not None and m.delta is not None and 0 < m.delta < 1:
            mu = gdp_mu_for(float(m.epsilon), float(m.delta))
            advertised = ApproxDP(float(m.epsilon), float(m.delta), semi)
            mechanism_info["calibration"] = (f"(epsilon, delta) = ({float(m.epsilon)!r}, {float(m.delta)!r}) "
                                             f"-> mu = {mu!r} (analytic Gaussian, gdp_mu_for)")
        else:
            raise UnsupportedRelease(f"{spec.path}: mechanism.kind = 'projected-gaussian' needs mechanism.mu, "
                                     "or mechanism.epsilon with 0 < mechanism.delta < 1.")
        gauss = ProjectedGaussianMechanism.for_gdp(s_space, mu, semi)
        mech_g: Guarantee = gauss.privacy_map(semi)
        mechanism_info.update(sigma=gauss.sigma, l2_sensitivity=gauss.sensitivity,
                              l2_sensitivity_squared=s_space.l2_squared, noise_dimension=gauss.dimension,
                              optimal=None, label="Semi-DP Gaussian (Cho & Awan Alg. 1, Prop. 28)")
    else:
        if m.epsilon is None or m.mu is not None or (m.delta is not None and m.delta != 0):
            raise UnsupportedRelease(f"{spec.path}: mechanism.kind = 'k-norm' needs mechanism.epsilon "
                                     "(pure DP: no delta, no mu).")
        eps = knorm_eps = float(m.epsilon)
        advertised = PureDP(eps, semi)
        try:
            optimal_ball = KNormBall.from_space(s_space, relation=semi)
            ball: KNormBall | ContainingBall = optimal_ball
            label = f"OPTIMAL K-norm ball conv(S) ({optimal_ball.method})"
        except SearchTooLarge as e:
            ball = containing_ball(s_space, relation=semi)
            label = f"{ball.label}; the optimal hull was refused: {e}"
        knorm = KNormMechanism(ball, eps)
        mech_g = knorm.privacy_map(semi)
        mechanism_info.update(epsilon=eps, noise_dimension=knorm.dimension, optimal=knorm.optimal, label=label)
        if isinstance(ball, ContainingBall):
            mechanism_info["loss"] = {"volume_ratio_upper": ball.loss.volume_ratio_upper,
                                      "norm_ratio_upper": ball.loss.norm_ratio_upper, "how": ball.loss.how}
    effective: Guarantee | NoFiniteGuarantee = mech_g
    if framework == "dp":   # the joint release with the invariant, on (D, A_1)
        on_base: Guarantee = GDP(mech_g.mu, rel) if isinstance(mech_g, GDP) else PureDP(knorm_eps, rel)
        effective = joint_release_dp(on_base, inv, space)

    # -- draw -----------------------------------------------------------------------
    used_seed = _seed(spec, seed)
    n = spec.audit.samples if spec.audit is not None else DEFAULT_SAMPLES
    rng = np.random.default_rng(used_seed)
    if gauss is not None:
        draws = gauss.sample(table, rng=rng, size=n)
    else:
        assert knorm is not None
        draws = knorm.sample(table, rng=rng, size=n)
    draws = np.ascontiguousarray(draws, dtype=np.float64).reshape(n, space.n_cells)

    inv_outcome = _invariant_check(inv.matrix(space), table, draws)
    norms = np.linalg.norm(draws - table[None, :], axis=1)
    mean, se, lo, hi = _mc_interval(norms)
    err: dict[str, Any] = {"monte_carlo": {"mean": mean, "std_error": se, "level": LEVEL,
                                           "interval": [lo, hi], "draws": n}}
    if gauss is not None:
        exact = gauss.expected_l2_norm()
        err.update(exact=exact, formula="(Delta_2/mu) E chi_s = sigma sqrt(2) Gamma((s+1)/2)/Gamma(s/2) (T-G1)",
                   s=gauss.dimension, e_chi_s=expected_chi(gauss.dimension))
        err_outcome: Outcome = (
            Verified(f"exact E||noise||_2 = {exact:.6g}; Monte Carlo mean {mean:.6g}, {LEVEL:.0%} interval "
                     f"[{lo:.6g}, {hi:.6g}] contains it")
            if lo <= exact <= hi else
            Refuted(f"exact E||noise||_2 = {exact:.6g} outside the {LEVEL:.0%} interval [{lo:.6g}, {hi:.6g}] "
                    f"of the {n} draws (a correct sampler fails this for {1 - LEVEL:.0%} of seeds)"))
    else:
        assert knorm is not None
        ref = knorm.expected_l2_norm_mc(rng=np.random.default_rng([used_seed, 1]),
                                        draws=KNORM_REFERENCE_DRAWS, level=LEVEL)
        z = float(norm.ppf(0.5 + LEVEL / 2))
        ref_se = (ref.upper - ref.lower) / (2 * z)
        tol = z * math.hypot(se, ref_se)
        err.update(reference={"estimate": ref.estimate, "interval": [ref.lower, ref.upper],
                              "draws": KNORM_REFERENCE_DRAWS,
                              "formula": "(s+1)/epsilon E||U||_2, U uniform on the ball (independent stream)"},
                   epsilon_times_mean=mean * knorm.epsilon)
        if knorm.optimal:
            err["note"] = ("reference semi-dp.md T-K1 (moves-only hull, shape s+1): epsilon E||noise||_2 = "
                           "2.000 (2x2), 6.05 (3x3); the exact S here may contain 3-cycles, which enlarge K")
        err_outcome = (
            Verified(f"Monte Carlo mean {mean:.6g} of the draws agrees with the independent estimate "
                     f"{ref.estimate:.6g} (difference {abs(mean - ref.estimate):.3g} <= {tol:.3g}, {LEVEL:.0%})")
            if abs(mean - ref.estimate) <= tol else
            Refuted(f"Monte Carlo mean {mean:.6g} of the draws differs from the independent estimate "
                    f"{ref.estimate:.6g} by {abs(mean - ref.estimate):.3g} > {tol:.3g} ({LEVEL:.0%})"))

    # -- report ---------------------------------------------------------------------
    adv_summary = summarize(advertised, deltas)
    eff_summary = {"framework": framework, **summarize(effective, deltas)}
    target: Outcome = (Verified(f"the calibrated mechanism's guarantee implies the target ({type(advertised).__name__})")
                       if _implies(mech_g, advertised) else
                       Refuted("BUG: the calibrated mechanism does not meet its calibration target"))
    checks = [
        _check("semi-adjacent-parameter", check_semi_adjacent(spec, space, inv, rel, a)),
        _check("calibration", target),
        _check("invariant-preserved", inv_outcome),
        _check("expected-l2-error", err_outcome),
        _check("conversions-certified", certify_summary([adv_summary, eff_summary], advertised, effective)),
    ]
    checks += claim_check(spec, effective)
    sens: dict[str, Any] | None = None
    if spec.query is not None:
        from verify.sensitivity_report import sensitivity_section

        sens, sens_outcome = sensitivity_section(spec, space, inv, a, time_limit)
        checks.append(_check("sensitivity", _calibrated_to_exact(sens, sens_outcome, s_space.l2_squared)))
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


def _calibrated_to_exact(sens: dict[str, Any], outcome: Outcome, l2_squared: int) -> Outcome:
    """The sensitivity check for a mechanism calibrated to the exact space S.

    The section's independently computed l2 must equal the one the mechanism used.
    """
    l2 = sens.get("l2")
    if isinstance(l2, (int, float)) and not math.isclose(float(l2) ** 2, l2_squared, rel_tol=1e-12):
        return Refuted(f"BUG: the sensitivity section has l2 = {l2!r}, the mechanism was calibrated to "
                       f"sqrt({l2_squared})")
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
