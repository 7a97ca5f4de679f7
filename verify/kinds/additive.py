"""The builders of additive noise, shared by the kinds ``gaussian``, ``projected-gaussian``, ``laplace``,
``projected-laplace`` (one module each: :mod:`verify.kinds.gaussian`, ...) and ``k-norm``.

Each kind is calibrated on :math:`(\\mathcal D_t, A_{a(t)})` to the exact Semi-DP
sensitivity space S (:mod:`verify.kinds.calibrated` runs them):

* ``projected-gaussian`` [CA24, Alg. 1, Prop. 28]: noise :math:`(\\Delta_2/\\mu) Q\\xi`,
  :math:`\\xi\\sim N(0, I_s)`, Q an orthonormal basis of span(S); :math:`\\mu`-GDP. Target
  ``mechanism.mu``, ``mechanism.epsilon`` + ``delta`` (through
  :func:`accountant.profiles.gaussian.gdp_mu_for`), or ``mechanism.rho`` (:math:`\\mu=\\sqrt{2\\rho}`).
* ``gaussian``: the same sigma in every cell
  (:class:`mechanisms.semi_additive.SemiGaussianMechanism`); does not keep the
  invariant (its check is then not applicable).
* ``laplace`` / ``projected-laplace``: Lap(:math:`\\Delta_1(S)/\\varepsilon`) in every cell, or
  projected onto span(S) so the invariant is kept
  (:class:`mechanisms.semi_additive.SemiLaplaceMechanism`); :math:`\\varepsilon`-DP.

``laplace`` and ``gaussian`` also take ``mechanism.scale`` instead of a target: noise of that
scale in every cell, and the guarantee computed from it, not targeted: ``laplace``
:math:`\\varepsilon=\\Delta_1(S)/b` (exact rational, rounded up), ``gaussian``
:math:`\\mu=\\Delta_2(S)/\\sigma` (GDP, [DRS22, Thm. 2.7]); their noise law is handed to ``[postprocess]``.

With ``claim.framework = "subspace-dp"`` the projected kinds run as Gao, Gong &
Yu's mechanisms [GGY22, Cor. 3.5, 3.8] on the base relation (:func:`build_subspace`).
Expected errors are exact: :math:`\\mathbb E\\|\\cdot\\|_2` for the Gaussians (T-G1),
:math:`\\mathbb E\\|\\cdot\\|_2^2=2b^2k` for Laplace.
"""

from __future__ import annotations

import dataclasses
import math
from fractions import Fraction

import numpy as np
from numpy.typing import NDArray

from semidp.accountant.core.directed import sqrt_up
from semidp.accountant.core.errors import InvalidArgument, UnsupportedRelease
from semidp.accountant.core.outcome import Outcome
from semidp.accountant.geometry.knorm_certificates import certified_span
from semidp.accountant.geometry.table_space_norms import TableSpaceNorms
from semidp.accountant.guarantees.definitions import GDP, ZCDP, ApproxDP, Guarantee, PureDP
from semidp.accountant.guarantees.relations import Relation, SemiAdjacent
from semidp.accountant.profiles.gaussian import gdp_mu_for
from semidp.accountant.sensitivity.spaces import SensitivitySpace
from semidp.mechanisms.postprocess_noise import GaussianNoise, LaplaceNoise
from semidp.mechanisms.projected_gaussian import ProjectedGaussianMechanism, expected_chi
from semidp.mechanisms.semi_additive import SemiGaussianMechanism, SemiLaplaceMechanism
from semidp.mechanisms.subspace import ProjectedGaussian, ProjectedLaplace
from semidp.verify.context import Context
from semidp.verify.kinds.calibrated import (
    BuiltMechanism,
    CalibratedSpec,
    GaussianSpec,
    ScaledGaussianSpec,
    ScaledSpec,
    mean_check,
)
from semidp.verify.mechanism_section import (
    GaussianMechanismSection,
    LaplaceMechanismSection,
    SubspaceGaussianMechanismSection,
    SubspaceLaplaceMechanismSection,
    VarianceRange,
)
from semidp.verify.sections import ErrorSection

FloatArray = NDArray[np.float64]


def gdp_mu_for_zcdp(rho: Fraction) -> float:
    """The largest float mu with mu^2/2 <= rho exactly: a Gaussian with it is rho-zCDP [BS16, Prop. 1.6]."""
    mu = math.sqrt(2 * float(rho))
    while Fraction(mu) ** 2 / 2 > rho:  # round down: the calibrated noise may only be larger
        mu = math.nextafter(mu, 0.0)
    return mu


def _gaussian_target(ctx: Context, m: CalibratedSpec, semi: SemiAdjacent) -> tuple[float, Guarantee, str]:
    """mu, the advertised guarantee and a description, from ``mechanism.mu``, ``epsilon`` + ``delta`` or ``rho``."""
    if not isinstance(m, GaussianSpec):
        raise UnsupportedRelease(f"{ctx.spec.path}: mechanism.kind = {m.kind!r} is not a Gaussian kind.")
    if m.rho is not None and m.mu is None and m.epsilon is None:
        mu = gdp_mu_for_zcdp(m.rho)
        return (
            mu,
            ZCDP(float(m.rho), semi),
            (
                f"rho = {float(m.rho)!r} -> mu = {mu!r} (mu = sqrt(2 rho) rounded "
                "down, so mu^2/2 <= rho [BS16, Prop. 1.6])"
            ),
        )
    if m.mu is not None and m.epsilon is None:
        mu = float(m.mu)
        return mu, GDP(mu, semi), f"mu = {mu!r}"
    if m.mu is None and m.epsilon is not None and m.delta is not None and 0 < m.delta < 1:
        mu = gdp_mu_for(float(m.epsilon), float(m.delta))
        return (
            mu,
            ApproxDP(float(m.epsilon), float(m.delta), semi),
            (
                f"(epsilon, delta) = ({float(m.epsilon)!r}, {float(m.delta)!r}) -> mu = {mu!r} "
                "(analytic Gaussian, gdp_mu_for)"
            ),
        )
    raise UnsupportedRelease(
        f"{ctx.spec.path}: mechanism.kind = {m.kind!r} needs mechanism.mu, "
        "mechanism.epsilon with 0 < mechanism.delta < 1, or mechanism.rho."
    )


def pure_target(ctx: Context, m: CalibratedSpec) -> float:
    """The pure-DP calibration target ``mechanism.epsilon`` (no delta)."""
    if m.epsilon is None or isinstance(m, GaussianSpec) or (m.delta is not None and m.delta != 0):
        raise UnsupportedRelease(
            f"{ctx.spec.path}: mechanism.kind = {m.kind!r} needs mechanism.epsilon (pure DP: no delta, no mu)."
        )
    return float(m.epsilon)


def _scale_of(m: CalibratedSpec) -> Fraction | None:
    """``mechanism.scale`` of the kinds that take it (else None)."""
    return m.scale if isinstance(m, (ScaledSpec, ScaledGaussianSpec)) else None


def _scaled_gaussian(s_space: SensitivitySpace, sigma: Fraction, semi: SemiAdjacent) -> SemiGaussianMechanism:
    """``gaussian`` with ``mechanism.scale = sigma``: mu = Delta_2(S)/sigma computed, rounded up [DRS22, Thm. 2.7]."""
    if s_space.size == 0 or s_space.l2_squared == 0:
        raise InvalidArgument("the sensitivity space is {0}: nothing to privatise; release h(X) directly.")
    return SemiGaussianMechanism(float(sigma), sqrt_up(Fraction(s_space.l2_squared)), s_space.dimension, semi)


def build_gaussian(ctx: Context, m: CalibratedSpec, s_space: SensitivitySpace, semi: SemiAdjacent) -> BuiltMechanism:
    """``gaussian``: the same sigma in every cell, from a calibration target or ``mechanism.scale``."""
    mech: SemiGaussianMechanism
    advertised: Guarantee
    scale = _scale_of(m)
    if scale is not None:
        mech = _scaled_gaussian(s_space, scale, semi)
        computed = mech.privacy_map(semi)
        advertised = computed
        how = f"scale sigma = {float(scale)!r} -> mu = Delta_2(S)/sigma = {computed.mu!r} (computed, not targeted)"
        label = (
            "Gaussian noise of the given sigma in every cell; mu = Delta_2(S)/sigma (Dong, Roth & Su Thm. 2.7 on "
            "the Semi-DP relation); does not keep the invariant, which is published separately"
        )
    else:
        mu, advertised, how = _gaussian_target(ctx, m, semi)
        mech = SemiGaussianMechanism.for_gdp(s_space, mu, semi)
        label = (
            "Gaussian noise in every cell, sigma = Delta_2(S)/mu (Dong, Roth & Su Thm. 2.7 on the "
            "Semi-DP relation); does not keep the invariant, which is published separately"
        )
    return _gaussian_built(m.kind, mech, s_space, semi, advertised, how, label, keeps_invariant=False)


def build_projected_gaussian(
    ctx: Context, m: CalibratedSpec, s_space: SensitivitySpace, semi: SemiAdjacent
) -> BuiltMechanism:
    """``projected-gaussian`` [CA24, Alg. 1, Prop. 28]: noise in span(S), so the invariant is kept."""
    mu, advertised, how = _gaussian_target(ctx, m, semi)
    mech = ProjectedGaussianMechanism.for_gdp(s_space, mu, semi)
    label = "Semi-DP Gaussian (Cho & Awan Alg. 1, Prop. 28)"
    return _gaussian_built(m.kind, mech, s_space, semi, advertised, how, label, keeps_invariant=True)


def _gaussian_built(
    kind: str,
    mech: ProjectedGaussianMechanism | SemiGaussianMechanism,
    s_space: SensitivitySpace,
    semi: SemiAdjacent,
    advertised: Guarantee,
    how: str,
    label: str,
    *,
    keeps_invariant: bool,
) -> BuiltMechanism:
    """The report fields and the E||noise||_2 check of a Gaussian mechanism (T-G1)."""
    dim = mech.dimension
    info = GaussianMechanismSection(
        kind=kind,
        calibration=how,
        sigma=mech.sigma,
        l2_sensitivity=mech.sensitivity,
        l2_sensitivity_squared=s_space.l2_squared,
        noise_dimension=dim,
        optimal=None,
        label=label,
    )
    exact = mech.expected_l2_norm()

    def check(norms: FloatArray, seed: int) -> tuple[ErrorSection, Outcome]:
        sec, out = mean_check(
            "E||noise||_2",
            exact,
            "sigma E chi_k = sigma sqrt(2) Gamma((k+1)/2)/Gamma(k/2), k = noise dimension (T-G1)",
            norms,
        )
        return dataclasses.replace(sec, k=dim, e_chi_k=expected_chi(dim)), out

    noise = GaussianNoise(mech.sigma) if isinstance(mech, SemiGaussianMechanism) else None
    return BuiltMechanism(mech, semi, advertised, info, keeps_invariant, check, noise)


def build_laplace(ctx: Context, m: CalibratedSpec, s_space: SensitivitySpace, semi: SemiAdjacent) -> BuiltMechanism:
    """``laplace``: Lap(Delta_1(S)/epsilon) in every cell; with ``mechanism.scale``: Lap(scale), epsilon =
    Delta_1(S)/scale computed."""
    return _laplace_on_space(ctx, m, s_space, semi, projected=False)


def build_projected_laplace(
    ctx: Context, m: CalibratedSpec, s_space: SensitivitySpace, semi: SemiAdjacent
) -> BuiltMechanism:
    """``projected-laplace``: Lap(Delta_1(S)/epsilon) per cell projected onto span(S) (keeps the invariant)."""
    return _laplace_on_space(ctx, m, s_space, semi, projected=True)


def _laplace_on_space(
    ctx: Context, m: CalibratedSpec, s_space: SensitivitySpace, semi: SemiAdjacent, *, projected: bool
) -> BuiltMechanism:
    """:func:`build_laplace` (``projected=False``) or :func:`build_projected_laplace`."""
    scale = _scale_of(m)
    if scale is not None:
        if s_space.size == 0 or s_space.l1 == 0:
            raise InvalidArgument("the sensitivity space is {0}: nothing to privatise; release h(X) directly.")
        basis = np.asarray(certified_span(s_space).orthonormal, dtype=np.float64)
        return _laplace_built(m.kind, SemiLaplaceMechanism(float(scale), s_space.l1, basis, False, semi), None, semi)
    eps = pure_target(ctx, m)
    mech = SemiLaplaceMechanism.for_epsilon(s_space, eps, semi, projected=projected)
    return _laplace_built(m.kind, mech, eps, semi)


def build_laplace_from_norms(
    ctx: Context, m: CalibratedSpec, norms: TableSpaceNorms, semi: SemiAdjacent
) -> BuiltMechanism:
    """``laplace`` when S is too large to list: Delta_1 and span(S) in closed form
    (:class:`accountant.geometry.table_space_norms.TableSpaceNorms`, a superset of S at the table: conservative)."""
    return _laplace_from_norms(ctx, m, norms, semi, projected=False)


def build_projected_laplace_from_norms(
    ctx: Context, m: CalibratedSpec, norms: TableSpaceNorms, semi: SemiAdjacent
) -> BuiltMechanism:
    """``projected-laplace`` when S is too large to list (as :func:`build_laplace_from_norms`)."""
    return _laplace_from_norms(ctx, m, norms, semi, projected=True)


def _laplace_from_norms(
    ctx: Context, m: CalibratedSpec, norms: TableSpaceNorms, semi: SemiAdjacent, *, projected: bool
) -> BuiltMechanism:
    """:func:`build_laplace_from_norms` (``projected=False``) or :func:`build_projected_laplace_from_norms`."""
    basis = norms.orthonormal_basis()
    scale = _scale_of(m)
    if scale is not None:
        return _laplace_built(m.kind, SemiLaplaceMechanism(float(scale), norms.l1, basis, False, semi), None, semi)
    eps = pure_target(ctx, m)
    mech = SemiLaplaceMechanism.from_norms(norms.l1, basis, eps, semi, projected=projected)
    return _laplace_built(m.kind, mech, eps, semi)


def _laplace_built(kind: str, mech: SemiLaplaceMechanism, eps: float | None, semi: SemiAdjacent) -> BuiltMechanism:
    """The report fields and the E||noise||_2^2 check of a Laplace mechanism (``eps = None``: given scale)."""
    projected = mech.projected
    label = (
        "Laplace noise projected onto span(S) (keeps the invariant; post-processing pair by pair)"
        if projected
        else "Laplace noise in every cell; does not keep the invariant, which is published separately"
    )
    advertised = PureDP(eps, semi) if eps is not None else mech.privacy_map(semi)
    calibration = (
        f"epsilon = {eps!r}"
        if eps is not None
        else f"scale b = {mech.scale!r} -> epsilon = Delta_1(S)/b = {advertised.epsilon!r} (computed, not targeted)"
    )
    info = LaplaceMechanismSection(
        kind=kind,
        calibration=calibration,
        scale=mech.scale,
        l1_sensitivity=mech.sensitivity,
        noise_dimension=mech.noise_dimension,
        optimal=None,
        expected_squared_error=mech.expected_squared_error(),
        label=label + (f"; b = Delta_1(S)/epsilon = {mech.sensitivity}/{eps!r}" if eps is not None else "; b given"),
    )
    exact = mech.expected_squared_error()

    def check(norms: FloatArray, seed: int) -> tuple[ErrorSection, Outcome]:
        return mean_check("E||noise||_2^2", exact, "2 b^2 k, k = noise dimension", norms**2)

    noise = None if projected else LaplaceNoise(mech.scale)
    return BuiltMechanism(mech, semi, advertised, info, projected, check, noise)


def build_subspace_gaussian(ctx: Context, m: CalibratedSpec) -> BuiltMechanism:
    """GGY's projected Gaussian (Cor 3.5/14, their c_{eps,delta}, eps < 1), on the base relation.

    Calibrated with the histogram's Delta_2; the guarantee is induced subspace DP w.r.t. the invariant matrix
    (``Subspace`` relation), not DP of the joint release and not Semi-DP.
    """
    spec, rel = ctx.spec, ctx.relation
    constraint = ctx.invariant.matrix(ctx.space)
    if m.epsilon is None or m.delta is None or getattr(m, "mu", None) is not None:
        raise UnsupportedRelease(
            f"{spec.path}: claim.framework = 'subspace-dp' with projected-gaussian needs "
            "mechanism.epsilon and mechanism.delta (GGY's c_eps_delta, both in (0, 1))."
        )
    eps, delta = float(m.epsilon), float(m.delta)
    try:
        g = ProjectedGaussian.calibrate(constraint, eps, delta, relation=rel)
    except InvalidArgument as e:
        raise UnsupportedRelease(f"{spec.path}: mechanism: {e}") from e
    advertised = ApproxDP(eps, delta, g.privacy_map(rel).relation)
    label = "GGY projected Gaussian (Cor 3.5/14): induced subspace DP, not DP of the joint release"
    info = SubspaceGaussianMechanismSection(
        kind=m.kind,
        calibration=f"(epsilon, delta) = ({eps!r}, {delta!r}) -> sigma = c_eps_delta * Delta_2 = {g.sigma!r}",
        sigma=g.sigma,
        l2_sensitivity=g.sensitivity,
        noise_dimension=g.subspace.null_dimension,
        optimal=None,
        label=label,
        expected_squared_error=g.expected_squared_error(),
        per_cell_variance=_variance_range(g.sigma**2 * g.subspace.projector_diagonal()),
    )
    return _subspace_built(g, rel, advertised, info)


def build_subspace_laplace(ctx: Context, m: CalibratedSpec) -> BuiltMechanism:
    """GGY's projected Laplace (Cor 3.8/17), on the base relation (as :func:`build_subspace_gaussian`, Delta_1)."""
    rel = ctx.relation
    constraint = ctx.invariant.matrix(ctx.space)
    eps = pure_target(ctx, m)
    lap = ProjectedLaplace.calibrate(constraint, eps, relation=rel)
    advertised = PureDP(eps, lap.privacy_map(rel).relation)
    label = "GGY projected Laplace (Cor 3.8/17): induced subspace DP, not DP of the joint release"
    info = SubspaceLaplaceMechanismSection(
        kind=m.kind,
        calibration=f"epsilon = {eps!r} -> b = Delta_1/epsilon = {lap.scale!r}",
        scale=lap.scale,
        l1_sensitivity=lap.sensitivity,
        noise_dimension=lap.subspace.null_dimension,
        optimal=None,
        label=label,
        expected_squared_error=lap.expected_squared_error(),
        per_cell_variance=_variance_range(lap.marginal_variances()),
    )
    return _subspace_built(lap, rel, advertised, info)


def _variance_range(var: FloatArray) -> VarianceRange:
    """The smallest and largest per-cell variance."""
    return VarianceRange(float(var.min()), float(var.max()))


def _subspace_built(
    mech: ProjectedGaussian | ProjectedLaplace,
    rel: Relation,
    advertised: Guarantee,
    info: SubspaceGaussianMechanismSection | SubspaceLaplaceMechanismSection,
) -> BuiltMechanism:
    """The E||noise||_2^2 check of a GGY subspace mechanism."""
    exact = mech.expected_squared_error()
    k = mech.subspace.null_dimension

    def check(norms: FloatArray, seed: int) -> tuple[ErrorSection, Outcome]:
        return mean_check(
            "E||noise||_2^2", exact, f"(n - rank C) x per-coordinate variance, n - rank C = {k}", norms**2
        )

    return BuiltMechanism(mech, rel, advertised, info, True, check)


__all__ = [
    "build_gaussian",
    "build_laplace",
    "build_laplace_from_norms",
    "build_projected_gaussian",
    "build_projected_laplace",
    "build_projected_laplace_from_norms",
    "build_subspace_gaussian",
    "build_subspace_laplace",
    "gdp_mu_for_zcdp",
    "pure_target",
]
