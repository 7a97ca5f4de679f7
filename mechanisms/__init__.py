"""semidp.mechanisms: samplers with explicit privacy maps and explicit ``rng=`` (house style R4).

Every sampler takes a keyword-only ``numpy.random.Generator``; nothing seeds a
global generator. Samplers are for research and auditing and are not hardened
against floating-point side channels.

Public API: exact discrete samplers (Canonne, Kamath & Steinke 2020)
:func:`discrete_laplace`, :func:`discrete_gaussian` (and vectorised ``*_array``),
:func:`double_geometric`, :func:`bernoulli_exp`; :class:`GaussianMechanism`; the Semi-DP Gaussian
:class:`ProjectedGaussianMechanism` [CA24, Alg. 1]; subspace DP (Gao, Gong & Yu):
:class:`ProjectedGaussian`, :class:`ExtendedGaussian`, :class:`ProjectedLaplace`,
:class:`ExtendedLaplace`; the optimal K-norm mechanism
:class:`KNormMechanism` (exact sampler :func:`uniform_in_ball`, baseline
:class:`CubeRejectionSampler`); canonical noise distributions
:class:`GaussianCND`, :class:`Tulap`, :func:`cnd_from_tradeoff`; the exact
Fisher noncentral hypergeometric null :class:`FisherNoncentralHypergeometric`;
the Semi-DP UMPU odds-ratio test :class:`SemiDPOddsRatioTest`,
:func:`umpu_odds_ratio_test`, :class:`UMPUTestResult`, :class:`TableMargins`; the DP UMP
test for a binomial proportion (Awan & Slavković 2018) :class:`BinomialUMPTest`,
:func:`binomial_ump_test`, :func:`binomial_pvalue`; projection post-processing [ZVF21]:
:class:`AffineConstraint` (program P), :func:`project_simplex` and :class:`HierarchicalTotals`
(P+ by sort-and-threshold), :func:`project_nonneg` (batched ADMM) and :func:`project_nonneg_cvxpy`
(per-draw reference), noise laws :class:`LaplaceNoise`, :class:`GaussianNoise`,
:class:`DoubleGeometricNoise`, and :func:`monte_carlo_bias`, :func:`bias_bound`,
:func:`sum_projection_variance`, :func:`max_deviation_total`, :func:`max_deviation_lp`.
"""

from semidp.mechanisms.binomial_ump import BinomialTestResult, BinomialUMPTest, binomial_pvalue, binomial_ump_test
from semidp.mechanisms.cnd import GaussianCND, Tulap, cnd_from_tradeoff
from semidp.mechanisms.correlated_gaussian import EllipsoidGaussian, SubspaceCorrelatedGaussian
from semidp.mechanisms.coupling import CoupledKernel, choose_burn_in, meeting_times, tv_bound, tv_bound_curve
from semidp.mechanisms.discrete import (
    bernoulli_exp,
    discrete_gaussian,
    discrete_gaussian_array,
    discrete_laplace,
    discrete_laplace_array,
    double_geometric,
)
from semidp.mechanisms.distributed import Agent, Share, assemble, distributed_release
from semidp.mechanisms.fnch import FisherNoncentralHypergeometric
from semidp.mechanisms.gaussian import GaussianMechanism
from semidp.mechanisms.knorm import CubeRejectionSampler, KNormMechanism, uniform_in_ball
from semidp.mechanisms.lattice_exact import ExactLatticeGaussian, ExactLatticeLaplace, ExactLatticeSampler
from semidp.mechanisms.lattice_mcmc import (
    LatticeGaussianTarget,
    LatticeLaplaceTarget,
    LatticeSampler,
    release_histogram,
)
from semidp.mechanisms.mvee import EnclosingEllipsoid, mvee, mvee_khachiyan
from semidp.mechanisms.nonneg_projection import project_nonneg, project_nonneg_cvxpy
from semidp.mechanisms.postprocess_noise import DoubleGeometricNoise, GaussianNoise, LaplaceNoise
from semidp.mechanisms.projected_gaussian import ProjectedGaussianMechanism
from semidp.mechanisms.projection import AffineConstraint, HierarchicalTotals, project_simplex
from semidp.mechanisms.projection_bias import (
    bias_bound,
    max_deviation_lp,
    max_deviation_total,
    monte_carlo_bias,
    sum_projection_variance,
)
from semidp.mechanisms.semi_additive import SemiGaussianMechanism, SemiLaplaceMechanism
from semidp.mechanisms.subspace import ExtendedGaussian, ExtendedLaplace, ProjectedGaussian, ProjectedLaplace
from semidp.mechanisms.umpu import SemiDPOddsRatioTest, TableMargins, UMPUTestResult, umpu_odds_ratio_test

if __name__ != "semidp.mechanisms":  # one identity per module (issue 23, item 8)
    raise ImportError(
        f"import semidp.mechanisms, not {__name__!r}: the repository's mechanisms/ folder is the package "
        "semidp.mechanisms; a second import name would load second copies of its classes, which semidp rejects."
    )

__all__ = [
    "BinomialTestResult",
    "BinomialUMPTest",
    "binomial_pvalue",
    "binomial_ump_test",
    "Agent",
    "EllipsoidGaussian",
    "EnclosingEllipsoid",
    "Share",
    "SubspaceCorrelatedGaussian",
    "assemble",
    "distributed_release",
    "mvee",
    "mvee_khachiyan",
    "CoupledKernel",
    "ExactLatticeGaussian",
    "ExactLatticeLaplace",
    "ExactLatticeSampler",
    "LatticeGaussianTarget",
    "LatticeLaplaceTarget",
    "LatticeSampler",
    "choose_burn_in",
    "meeting_times",
    "release_histogram",
    "tv_bound",
    "tv_bound_curve",
    "CubeRejectionSampler",
    "ExtendedGaussian",
    "ExtendedLaplace",
    "FisherNoncentralHypergeometric",
    "GaussianCND",
    "GaussianMechanism",
    "KNormMechanism",
    "ProjectedGaussian",
    "ProjectedGaussianMechanism",
    "ProjectedLaplace",
    "SemiDPOddsRatioTest",
    "SemiGaussianMechanism",
    "SemiLaplaceMechanism",
    "TableMargins",
    "Tulap",
    "UMPUTestResult",
    "bernoulli_exp",
    "cnd_from_tradeoff",
    "discrete_gaussian",
    "discrete_gaussian_array",
    "discrete_laplace",
    "discrete_laplace_array",
    "double_geometric",
    "umpu_odds_ratio_test",
    "uniform_in_ball",
    "AffineConstraint",
    "DoubleGeometricNoise",
    "GaussianNoise",
    "HierarchicalTotals",
    "LaplaceNoise",
    "bias_bound",
    "max_deviation_lp",
    "max_deviation_total",
    "monte_carlo_bias",
    "project_nonneg",
    "project_nonneg_cvxpy",
    "project_simplex",
    "sum_projection_variance",
]
