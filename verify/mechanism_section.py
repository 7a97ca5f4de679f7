"""The ``mechanism`` object of the kinds that build and draw from a mechanism, one frozen dataclass per shape.

Each kind writes its own keys in its own order (contract: ``specs/README.md``, "Report (JSON) fields"), so each
shape is its own dataclass whose fields are those keys in that order, written by the one walk of
:mod:`verify.json_walk`; the text and Markdown blocks are :class:`~verify.sections.MechanismSection`'s. The calibrated kinds
(:mod:`verify.kinds.calibrated`) share the leading keys of :class:`CalibratedMechanismSection` (the kind and the
sensitivity space S the calibration used):

- :class:`GaussianMechanismSection`: ``gaussian`` and ``projected-gaussian`` (sigma, Delta_2);
- :class:`LaplaceMechanismSection`: ``laplace`` and ``projected-laplace``, and ``k-norm``'s projected-Laplace
  fallback (then with ``alternatives`` and ``fallback``);
- :class:`SubspaceGaussianMechanismSection`, :class:`SubspaceLaplaceMechanismSection`: Gao, Gong & Yu's
  mechanisms under ``claim.framework = "subspace-dp"`` [GGY22];
- :class:`DiscreteLaplaceMechanismSection`: ``discrete-laplace`` (the exact rational scale as a string);
- :class:`KNormMechanismSection`: ``k-norm`` (the optimal ball or the labelled containing-ball fallback);

and :class:`LatticeMechanismSection` is the lattice kinds' (:mod:`verify.kinds.lattice`), with the sampler's record
(:class:`ExactSamplerInfo` or :class:`McmcSamplerInfo`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Literal

from semidp.verify.json_walk import INTERNAL, OMIT_NONE, Walked, to_json
from semidp.verify.sections import MechanismSection

#: The section key of every shape (an internal field: not written).
KEY = "mechanism"


@dataclass(frozen=True)
class CalibratedMechanismSection(MechanismSection):
    """The keys every calibrated kind writes first: ``kind``, then the sensitivity space S it was calibrated on.

    The sensitivity keys are absent for a subspace-DP mechanism (calibrated on the base relation, S not needed);
    ``sensitivity_not_listed`` says why S's closed-form superset was used instead of S listed at the table.
    The fields are keyword-only so that each shape's own fields follow them without defaults.
    """

    kind: str = field(kw_only=True)
    sensitivity_space: str | None = field(default=None, kw_only=True, metadata=OMIT_NONE)
    """The label of S (or of its closed-form superset)."""
    sensitivity_exact: bool | None = field(default=None, kw_only=True, metadata=OMIT_NONE)
    sensitivity_not_listed: str | None = field(default=None, kw_only=True, metadata=OMIT_NONE)
    key: str = field(default=KEY, kw_only=True, metadata=INTERNAL)

    def noise_parameter(self) -> tuple[str, float, str]:
        """``(name, value, exact text)`` of the calibrated noise parameter (the ``[design]`` section's)."""
        raise NotImplementedError


@dataclass(frozen=True)
class GaussianMechanismSection(CalibratedMechanismSection):
    """``gaussian`` / ``projected-gaussian``: sigma = Delta_2(S)/mu, in every cell or in span(S) [CA24, Alg. 1]."""

    calibration: str
    sigma: float
    """The noise standard deviation per coordinate (histogram units)."""
    l2_sensitivity: float
    """Delta_2(S), rounded up."""
    l2_sensitivity_squared: int
    """Delta_2(S)^2, exact."""
    noise_dimension: int
    optimal: bool | None
    label: str

    def calibration_text(self) -> str:
        """The target and how sigma follows from it."""
        return self.calibration

    def l2_sensitivity_shown(self) -> float | None:
        """Delta_2(S)."""
        return self.l2_sensitivity

    def optimality(self) -> bool | None:
        """No optimality claim."""
        return self.optimal

    def noise_parameter(self) -> tuple[str, float, str]:
        """sigma."""
        return "sigma", float(self.sigma), repr(float(self.sigma))


@dataclass(frozen=True)
class FallbackAlternatives:
    """``alternatives`` of ``k-norm``'s projected-Laplace fallback: the upper bounds on E||noise||_2 it chose from."""

    ball_kind: str
    """The containing ball's kind (``l2-ball``, a cube)."""
    ball_expected_l2_upper: float
    laplace_expected_l2_upper: float

    def to_json(self) -> dict[str, object]:
        """``{"containing-ball": {kind, expected_l2_upper}, "projected-laplace": {expected_l2_upper}}``."""
        return {
            "containing-ball": {"kind": self.ball_kind, "expected_l2_upper": self.ball_expected_l2_upper},
            "projected-laplace": {"expected_l2_upper": self.laplace_expected_l2_upper},
        }


@dataclass(frozen=True)
class LaplaceMechanismSection(CalibratedMechanismSection):
    """``laplace`` / ``projected-laplace``: Lap(b), b = Delta_1(S)/epsilon (or given), in every cell or projected;
    also ``k-norm``'s NON-OPTIMAL projected-Laplace fallback, with ``alternatives`` and ``fallback``."""

    calibration: str
    scale: float
    """b (histogram units)."""
    l1_sensitivity: float
    """Delta_1(S) (an integer at the table; the closed form's when S was not listed)."""
    noise_dimension: int
    optimal: bool | None
    expected_squared_error: float
    """E||noise||_2^2 = 2 b^2 k (squared histogram units)."""
    label: str
    alternatives: FallbackAlternatives | None = field(default=None, metadata=OMIT_NONE)
    fallback: str | None = field(default=None, metadata=OMIT_NONE)

    def calibration_text(self) -> str:
        """The target (or the given scale) and how b follows from it."""
        return self.calibration

    def optimality(self) -> bool | None:
        """``False`` as ``k-norm``'s fallback, else no claim."""
        return self.optimal

    def noise_parameter(self) -> tuple[str, float, str]:
        """b."""
        return "b", float(self.scale), str(self.scale)


@dataclass(frozen=True)
class VarianceRange(Walked):
    """The smallest and largest per-cell noise variance (squared histogram units)."""

    min: float
    max: float


#: ``framework`` of the subspace-DP shapes.
SUBSPACE_FRAMEWORK = "subspace-dp (Gao, Gong & Yu 2022, Def 2.6)"


@dataclass(frozen=True)
class SubspaceGaussianMechanismSection(CalibratedMechanismSection):
    """GGY's projected Gaussian [GGY22, Cor. 3.5]: sigma = c_{eps,delta} Delta_2, induced subspace DP."""

    calibration: str
    sigma: float
    l2_sensitivity: float
    """Delta_2 of the histogram on the base relation."""
    noise_dimension: int
    optimal: bool | None
    label: str
    expected_squared_error: float
    per_cell_variance: VarianceRange
    framework: str = SUBSPACE_FRAMEWORK

    def calibration_text(self) -> str:
        """(epsilon, delta) and the sigma it gives."""
        return self.calibration

    def l2_sensitivity_shown(self) -> float | None:
        """Delta_2 on the base relation."""
        return self.l2_sensitivity

    def optimality(self) -> bool | None:
        """No optimality claim."""
        return self.optimal

    def noise_parameter(self) -> tuple[str, float, str]:
        """sigma."""
        return "sigma", float(self.sigma), repr(float(self.sigma))


@dataclass(frozen=True)
class SubspaceLaplaceMechanismSection(CalibratedMechanismSection):
    """GGY's projected Laplace [GGY22, Cor. 3.8]: b = Delta_1/epsilon, induced subspace DP."""

    calibration: str
    scale: float
    l1_sensitivity: float
    """Delta_1 of the histogram on the base relation."""
    noise_dimension: int
    optimal: bool | None
    label: str
    expected_squared_error: float
    per_cell_variance: VarianceRange
    framework: str = SUBSPACE_FRAMEWORK

    def calibration_text(self) -> str:
        """epsilon and the b it gives."""
        return self.calibration

    def optimality(self) -> bool | None:
        """No optimality claim."""
        return self.optimal

    def noise_parameter(self) -> tuple[str, float, str]:
        """b."""
        return "b", float(self.scale), str(self.scale)


@dataclass(frozen=True)
class DiscreteLaplaceMechanismSection(CalibratedMechanismSection):
    """``discrete-laplace``: Lap_Z(t) per cell, t = Delta_1(S)/epsilon exact [CKS20, Alg. 2]."""

    calibration: str
    scale: str
    """t, the exact rational (``"5/2"``)."""
    ratio: float
    """a = e^(-1/t)."""
    l1_sensitivity: int
    noise_dimension: int
    optimal: bool | None
    expected_squared_error: float
    label: str

    def calibration_text(self) -> str:
        """The target (or the given t) and how t follows from it."""
        return self.calibration

    def optimality(self) -> bool | None:
        """No optimality claim."""
        return self.optimal

    def noise_parameter(self) -> tuple[str, float, str]:
        """t (exact text: the rational)."""
        return "t", float(self.scale), self.scale


@dataclass(frozen=True)
class HullCacheInfo(Walked):
    """``hull_cache``: the on-disk cache of conv(S) (hit, miss or rebuilt; re-verified on every load)."""

    status: str
    path: str
    seconds: float
    note: str
    reason: str | None = field(default=None, metadata=OMIT_NONE)
    """Why the ball was rebuilt rather than stored (e.g. recursively triangulated)."""


@dataclass(frozen=True)
class BallLoss(Walked):
    """``loss`` of the containing-ball fallback against the optimal K-norm ball (upper bounds)."""

    volume_ratio_upper: float
    norm_ratio_upper: float
    how: str


@dataclass(frozen=True)
class KNormMechanismSection(CalibratedMechanismSection):
    """``k-norm`` [CA24, Alg. 2, Thm. 31]: the optimal ball conv(S), or the labelled containing-ball fallback."""

    epsilon: float
    noise_dimension: int
    optimal: bool
    label: str
    hull_cache: HullCacheInfo | None = field(default=None, metadata=OMIT_NONE)
    loss: BallLoss | None = field(default=None, metadata=OMIT_NONE)
    fallback: str | None = field(default=None, metadata=OMIT_NONE)

    def target_text(self) -> str:
        """``epsilon = ...`` (no calibration key)."""
        return f"epsilon = {self.epsilon:g}"

    def optimality(self) -> bool | None:
        """``True`` for conv(S), ``False`` for the containing ball."""
        return self.optimal

    def noise_parameter(self) -> tuple[str, float, str]:
        """1/epsilon, the norm ball's scale."""
        return "1/epsilon (the norm ball's scale)", 1 / self.epsilon, f"1/{self.epsilon!r}"


@dataclass(frozen=True)
class LatticeBasisInfo(Walked):
    """``lattice``: the certified integer basis of the invariant's kernel lattice."""

    method: str
    dimension: int
    gram_determinant: int
    reduced: bool
    note: str


@dataclass(frozen=True)
class ExactSamplerInfo:
    """``sampler`` of exact draws: the method, its label and the exact sampler's own diagnostics, flat.

    ``diagnostics`` is :meth:`mechanisms.lattice_exact.ExactLatticeSampler.diagnostics` (JSON-ready: the
    parameters, the split, acceptance counts); empty, with no label, when the exact sampler was refused.
    """

    method: Literal["exact"] = "exact"
    label: str | None = None
    diagnostics: Mapping[str, object] = field(default_factory=lambda: MappingProxyType({}))

    def to_json(self) -> dict[str, object]:
        """``{"method": "exact", "label": ..., **diagnostics}``."""
        out: dict[str, object] = {"method": self.method}
        if self.label is not None:
            out["label"] = self.label
        out.update({k: to_json(v) for k, v in self.diagnostics.items()})
        return out


@dataclass(frozen=True)
class CouplingInfo(Walked):
    """``coupling``: the L-lag coupling of ``pairs`` chains [BJV19] (meeting times once it ran)."""

    pairs: int
    lag: int
    kind: str
    tv_target: float
    seconds: float | None = field(default=None, metadata=OMIT_NONE)
    meeting_time_quantiles: Mapping[int, int] | None = field(default=None, metadata=OMIT_NONE)
    """Percentile (50, 90, 99, 100) -> meeting time (sweeps)."""


@dataclass(frozen=True)
class BurnInInfo(Walked):
    """``burn_in``: the sweeps chosen from the TV bound (a Monte Carlo estimate, not a certificate)."""

    t: int
    tv_estimate: float
    tv_upper: float
    criterion: str
    confidence: float
    note: str


@dataclass(frozen=True)
class McmcSamplerInfo(Walked):
    """``sampler`` of MCMC draws: Gibbs-within-Metropolis after a burn-in from the L-lag coupling."""

    method: Literal["mcmc"]
    label: str
    why_not_exact: str | None = field(metadata=OMIT_NONE)
    ratio: tuple[float, ...]
    coupling: CouplingInfo
    burn_in: BurnInInfo | None = field(default=None, metadata=OMIT_NONE)


SamplerInfo = ExactSamplerInfo | McmcSamplerInfo


@dataclass(frozen=True)
class SemiDpDistance(Walked):
    """``semi_dp_distance``: D = Delta_p(S) on the Semi-DP pairs (or its upper bound) and how it was obtained."""

    value: float
    how: str


@dataclass(frozen=True)
class LatticeMechanismSection(MechanismSection):
    """The lattice kinds' ``mechanism`` [DGGY23]: norm, kernel lattice, sampler record and charged TV distance."""

    kind: str
    norm: str
    noise_dimension: int
    calibration: str
    lattice: LatticeBasisInfo
    sampler: SamplerInfo
    delta_tv_charged: float
    """The sampler's TV distance charged as delta' (0 for exact draws)."""
    semi_dp_distance: SemiDpDistance
    label: str
    key: str = field(default=KEY, metadata=INTERNAL)

    def calibration_text(self) -> str:
        """The law's calibration."""
        return self.calibration


__all__ = [
    "BallLoss",
    "BurnInInfo",
    "CalibratedMechanismSection",
    "CouplingInfo",
    "DiscreteLaplaceMechanismSection",
    "ExactSamplerInfo",
    "FallbackAlternatives",
    "GaussianMechanismSection",
    "HullCacheInfo",
    "KNormMechanismSection",
    "LaplaceMechanismSection",
    "LatticeBasisInfo",
    "LatticeMechanismSection",
    "McmcSamplerInfo",
    "SUBSPACE_FRAMEWORK",
    "SamplerInfo",
    "SemiDpDistance",
    "SubspaceGaussianMechanismSection",
    "SubspaceLaplaceMechanismSection",
    "VarianceRange",
]
