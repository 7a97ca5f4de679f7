"""The shared run of the mechanisms semidp builds, calibrates and draws from at ``data.table``.

Steps [CA24]: a(t) at the confidential table (the runner); the exact Semi-DP
sensitivity space S of the histogram at radius a(t)
(:func:`accountant.sensitivity.search.semi_sensitivity_search`); the mechanism
calibrated by the kind's builder on ``SemiAdjacent(base, invariant, a(t))`` (every
kind on the same relation, so their expected errors compare directly); then
``[audit] samples`` releases drawn with ``numpy.random.default_rng(seed)`` (the
seed is recorded) and checked: every draw keeps the invariant, and the mean
error agrees with its expectation. The builders live in
:mod:`verify.kinds.additive` (Gaussian and Laplace, projected or not, and Gao,
Gong & Yu's subspace-DP mechanisms), :mod:`verify.kinds.k_norm` and
:mod:`verify.kinds.discrete_laplace`.

The kinds that add i.i.d. noise in every cell (``laplace``, ``gaussian``,
``discrete-laplace``) also take ``mechanism.scale`` instead of a calibration
target (the guarantee is then computed from the scale, not targeted) and a
``[postprocess]`` table: :func:`postprocess_part` runs the projection study of
:mod:`verify.postprocess_audit` on the same noise law with its own generator,
``default_rng(SeedSequence(seed, spawn_key=(1,)))``, and adds the ``postprocess``
section, its checks and its plot [ZVF21].
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, ClassVar, Optional

import numpy as np
from numpy.typing import NDArray

from semidp.accountant.core.errors import BudgetExhausted, SearchTooLarge
from semidp.accountant.core.outcome import NotApplicable, Outcome, Refuted, Unknown, Verified
from semidp.accountant.core.progress import stage
from semidp.accountant.geometry.table_space_norms import TableSpaceNorms
from semidp.accountant.guarantees.definitions import GDP, ZCDP, ApproxDP, Guarantee, PureDP
from semidp.accountant.guarantees.relations import Relation, SemiAdjacent
from semidp.accountant.profiles.gaussian import gdp_delta
from semidp.accountant.releases.model import PURE_ONLY_NOISE, KnownGuarantee, Part, Release, Shift
from semidp.accountant.sensitivity.results import one_way_table
from semidp.accountant.sensitivity.search import semi_sensitivity_search
from semidp.accountant.sensitivity.spaces import SensitivitySpace
from semidp.mechanisms.postprocess_noise import NoiseLaw
from semidp.mechanisms.protocol import Mechanism
from semidp.verify.context import Context, KindResult, Plot
from semidp.verify.design_calibrated import calibrated_design_problems, designed_mechanism, with_calibrated_design
from semidp.verify.invariant_certificate import certify_noise_support
from semidp.verify.mechanism_section import CalibratedMechanismSection
from semidp.verify.monte_carlo import LEVEL, mc_interval
from semidp.verify.plots_postprocess import plot_postprocess_bias
from semidp.verify.postprocess_audit import run_study
from semidp.verify.postprocess_section import build as build_postprocess
from semidp.verify.postprocess_section import postprocess_of
from semidp.verify.registry import KindDefaults, KindInfo, Problem
from semidp.verify.report import Check, Section, detail_of
from semidp.verify.sections import (
    ErrorSection,
    ExactErrorSection,
    MonteCarloMean,
    SamplesSection,
)
from semidp.verify.spec import Alternatives, MechanismSpec, Spec, UnionForm, documented, own_keys
from semidp.verify.spec_checks import table_required

FloatArray = NDArray[np.float64]

#: The frameworks of a calibrated kind; ``subspace-dp`` is added for a kind with a subspace builder.
CALIBRATED_FRAMEWORKS = ("dp", "semi-dp")

#: Above this many entries (vectors x cells) of the closed-form S, a kind with a norms builder does not list S
#: at the table (a 8x8 table: 2.5e6; 7x7: 7.6e5); the closed form is a superset, so this is conservative.
NORMS_FIRST_ENTRIES = 1_000_000
#: Relative tolerance of the invariant check (times the scale of A x).
INVARIANT_RTOL = 1e-9
#: Share of the remaining budget the ``[postprocess]`` study may use (the runner's checks follow it).
POSTPROCESS_SHARE = 0.8


#: The calibration targets of ``[mechanism]``, in the order the problems name them.
TARGET_ORDER = ("epsilon", "mu", "rho", "scale")

_TARGET_DOCS = {
    "epsilon": "Calibration target epsilon (with delta for the Gaussian kinds).",
    "mu": "Calibration target mu (GDP).",
    "rho": "Calibration target rho (zCDP): mu = sqrt(2 rho), rounded down.",
}


@dataclass(frozen=True)
class CalibratedSpec(MechanismSpec, UnionForm, Alternatives):
    """``[mechanism]`` of a mechanism semidp calibrates: the calibration target.

    A keyed union (:class:`~semidp.verify.spec.Alternatives`) in one of the forms its family declares
    (:data:`FORMS`): one target key each (``epsilon``, and for some kinds ``mu``, ``rho`` or ``scale``), or none
    when ``[design]`` gives the target. ``delta`` is a key of every form (checked by the kind: it goes with
    ``epsilon``). This base is also the family of the kinds calibrated to ``epsilon`` alone.
    """

    UNION_KEYS: ClassVar[tuple[str, ...]] = ("epsilon", "delta")
    FORMS: ClassVar[tuple[type, ...]] = ()
    """The forms of this family (declared explicitly: a family's subclasses are not its forms)."""
    KIND: ClassVar[str] = ""
    """The kind of a family that only one kind uses (named in its choice problem)."""

    delta: Optional[Fraction] = documented(
        "Calibration target delta (Gaussian kinds; 0 or absent otherwise).", default=None
    )

    @classmethod
    def choice_key(cls, given: Sequence[str]) -> str:
        """``scale`` when it is among the targets ``given``, else the first target key of the family."""
        return "scale" if "scale" in given else "mu"

    @classmethod
    def choice_problem(cls, given: Sequence[str]) -> str:
        """Two targets: ``give exactly one of a calibration target or the noise scale, not both ...`` (with
        ``scale``), else ``<kind> needs exactly one calibration target: mu, epsilon with delta, rho``."""
        if "scale" in given:
            others = ", ".join(f"mechanism.{k}" for k in TARGET_ORDER if k in given and k != "scale")
            return f"give exactly one of a calibration target or the noise scale, not both ({others} is also set)"
        scaled = "scale" in cls.UNION_KEYS
        return f"{cls.KIND} needs exactly one calibration target: mu, epsilon with delta, rho" + (
            ", or scale" if scaled else ""
        )

    @classmethod
    def of(cls, **keys: Any) -> CalibratedSpec:
        """A ``[mechanism]`` of this family built in Python (as the loader would): the form whose target key is
        given (a target given as ``None`` is left out), or the form without one; two targets: ``ValueError``."""
        family: type[CalibratedSpec] = next(
            c for c in cls.__mro__ if issubclass(c, CalibratedSpec) and c.__dict__.get("FORMS")
        )
        keys = {k: v for k, v in keys.items() if not (k in TARGET_ORDER and v is None)}
        given = [k for k in TARGET_ORDER if k in keys]
        if len(given) > 1:
            raise ValueError(f"mechanism: {family.choice_problem(given)}")
        form = next(f for f in family.FORMS if given == [n for n in own_keys(f, family.FORMS)])
        out: CalibratedSpec = form(**keys)
        return out

    def with_target(self, key: str, value: Fraction, delta: Fraction | None = None) -> CalibratedSpec:
        """This ``[mechanism]`` in its family's form for the target ``key`` (``[design]`` gives the target)."""
        return type(self).of(kind=self.kind, delta=delta, **{key: value})


@dataclass(frozen=True)
class GaussianSpec(CalibratedSpec):
    """``[mechanism]`` of ``projected-gaussian``: one of mu, epsilon with delta, or rho."""

    UNION_KEYS: ClassVar[tuple[str, ...]] = ("epsilon", "delta", "mu", "rho")
    KIND: ClassVar[str] = "projected-gaussian"


#: The ``mechanism.scale`` key, shared by the Laplace kinds and ``gaussian``.
SCALE_DOC = (
    "The noise scale per cell instead of a calibration target (laplace: b; discrete-laplace: t, exact "
    "rational; gaussian: sigma); the guarantee is then computed from it."
)


@dataclass(frozen=True)
class ScaledSpec(CalibratedSpec):
    """``[mechanism]`` of ``laplace`` / ``discrete-laplace``: ``epsilon``, or the noise ``scale`` instead."""

    UNION_KEYS: ClassVar[tuple[str, ...]] = ("epsilon", "delta", "scale")


@dataclass(frozen=True)
class ScaledGaussianSpec(GaussianSpec):
    """``[mechanism]`` of ``gaussian``: one of mu, epsilon with delta, rho, or the noise ``scale`` (sigma)."""

    UNION_KEYS: ClassVar[tuple[str, ...]] = ("epsilon", "delta", "mu", "rho", "scale")
    KIND: ClassVar[str] = "gaussian"


def _declare_forms(family: type[CalibratedSpec], keys: tuple[str, ...]) -> None:
    """The forms of ``family``: one per target key of ``keys`` (a required key of its own), and the form without
    one (the target comes from ``[design]``); each a module attribute under its name (so a spec pickles)."""
    docs = {**_TARGET_DOCS, "scale": SCALE_DOC}
    forms: list[type] = [
        dataclasses.make_dataclass(
            f"{family.__name__}FromDesign",
            [],
            bases=(family,),
            frozen=True,
            namespace={"__doc__": f"{family.__doc__.splitlines()[0] if family.__doc__ else ''} (no target: [design])"},
        )
    ]
    forms += [
        dataclasses.make_dataclass(
            f"{family.__name__}{k.capitalize()}",
            [(k, Fraction, documented(docs[k], kw_only=True))],
            bases=(family,),
            frozen=True,
            namespace={"__doc__": f"The calibration target {k}."},
        )
        for k in keys
    ]
    for form in forms:
        form.__module__ = __name__
        globals()[form.__name__] = form
    family.FORMS = tuple(forms)


_declare_forms(CalibratedSpec, ("epsilon",))
_declare_forms(ScaledSpec, ("epsilon", "scale"))
_declare_forms(GaussianSpec, ("mu", "epsilon", "rho"))
_declare_forms(ScaledGaussianSpec, ("mu", "epsilon", "rho", "scale"))


@dataclass(frozen=True)
class BuiltMechanism:
    """A calibrated mechanism (any :class:`~mechanisms.protocol.Mechanism`), ready to draw from and to check."""

    mechanism: Mechanism
    """Drawn from and accounted through the mechanism protocol only."""
    relation: Relation
    """The relation its privacy map is read on (the Semi-DP relation, or the base one for subspace DP)."""
    advertised: Guarantee
    """The calibration target."""
    info: CalibratedMechanismSection
    """Its ``mechanism`` section (the run adds the sensitivity space S it was calibrated on)."""
    keeps_invariant: bool
    error_check: Callable[[FloatArray, int], tuple[ErrorSection, Outcome]]
    """``(noise norms, seed) -> (expected_l2_error section, outcome)``."""
    noise: NoiseLaw | None = None
    """The i.i.d. per-cell noise law, for the kinds that add noise in every cell (``[postprocess]``)."""

    @property
    def guarantee(self) -> Guarantee:
        """The mechanism's privacy map on :attr:`relation`."""
        return self.mechanism.privacy_map(self.relation)


Builder = Callable[[Context, CalibratedSpec, SensitivitySpace, SemiAdjacent], BuiltMechanism]
"""Builds a kind's mechanism on the exact Semi-DP sensitivity space S."""
NormsBuilder = Callable[[Context, CalibratedSpec, TableSpaceNorms, SemiAdjacent], BuiltMechanism]
"""Builds a kind's mechanism from the closed-form norms and span of S when S is too large to list."""
SubspaceBuilder = Callable[[Context, CalibratedSpec], BuiltMechanism]
"""Builds a kind's subspace-DP mechanism (``claim.framework = "subspace-dp"``) on the base relation."""


def invariant_check(a_mat: NDArray[np.int64], table: FloatArray, draws: FloatArray) -> Outcome:
    """Every draw's A x equals the table's, within INVARIANT_RTOL times the scale of A x."""
    if a_mat.shape[0] == 0:
        return Verified(f"no invariant rows; {len(draws)} draws trivially keep it")
    if len(draws) == 0:  # nothing drawn: nothing checked, so nothing passes
        return Unknown("no release was drawn: the invariant was not checked")
    target = a_mat @ table
    got = draws @ a_mat.T.astype(np.float64)
    dev = np.abs(got - target[None, :])
    scale = max(1.0, float(np.abs(a_mat).sum(axis=1).max()) * float(np.abs(draws).max(initial=0.0)))
    tol = INVARIANT_RTOL * scale
    worst = float(dev.max(initial=0.0))
    bad = int(np.count_nonzero(dev.max(axis=1) > tol)) if len(draws) else 0
    head = f"max |A y - A x| = {worst:.3g} over {len(draws)} draws (tolerance {tol:.3g} = 1e-9 x {scale:.3g})"
    return (
        Verified(f"{head}; every draw keeps the invariant")
        if bad == 0
        else Refuted(f"{head}; {bad} draws break the invariant")
    )


def mean_check(what: str, exact: float, formula: str, values: FloatArray) -> tuple[ExactErrorSection, Outcome]:
    """The draws' mean of ``what`` against its exact expectation, at confidence LEVEL."""
    mean, se, lo, hi = mc_interval(values)
    sec = ExactErrorSection(MonteCarloMean(what, mean, se, LEVEL, (lo, hi), len(values)), exact, what, formula)
    if lo <= exact <= hi:
        return sec, Verified(
            f"exact {what} = {exact:.6g}; Monte Carlo mean {mean:.6g}, {LEVEL:.2%} interval "
            f"[{lo:.6g}, {hi:.6g}] contains it"
        )
    return sec, Refuted(
        f"exact {what} = {exact:.6g} outside the {LEVEL:.2%} interval [{lo:.6g}, {hi:.6g}] "
        f"of the {len(values)} draws (a correct sampler fails this for {1 - LEVEL:.2%} of seeds)"
    )


def implies(g: Guarantee, target: Guarantee) -> bool:
    """``g`` implies the calibration ``target`` (GDP -> approx DP through the exact GDP profile [BW18])."""
    if isinstance(g, GDP) and isinstance(target, ApproxDP):
        return gdp_delta(g.mu, target.epsilon) <= target.delta
    if isinstance(g, GDP) and isinstance(target, ZCDP):  # mu-GDP gives mu^2/2-zCDP [BS16, Prop. 1.6]
        return Fraction(g.mu) ** 2 / 2 <= Fraction(target.rho)
    if isinstance(g, GDP) and isinstance(target, GDP):
        return g.dominates(target)
    if isinstance(g, PureDP) and isinstance(target, PureDP):
        return g.dominates(target)
    return False


@dataclass(frozen=True)
class CalibratedKind(KindDefaults):
    """A kind whose mechanism semidp builds with ``builder`` and draws from (see the module docstring)."""

    accepts_design: ClassVar[bool] = True
    """``[design]`` gives its calibration target (:mod:`verify.design_calibrated`)."""
    info: KindInfo
    """Its name, dataclass, frameworks (``subspace-dp`` too with a subspace builder) and ``postprocess`` among
    its sections when it adds i.i.d. noise in every cell (it then also accepts ``mechanism.scale``)."""
    builder: Builder
    subspace_builder: SubspaceBuilder | None = None
    """Set for the kinds that also run as Gao, Gong & Yu's mechanisms (``subspace-dp`` in ``info.frameworks``)."""
    norms_builder: NormsBuilder | None = None
    """Set for the kinds that can be calibrated from S's norms and span alone: used for a table under both
    one-way margins whose S is too large to list within the budget (:mod:`accountant.geometry.table_space_norms`)."""

    def validate(self, spec: Spec) -> list[Problem]:
        """A table to draw at, a histogram query, and exactly one calibration target of the kind's form."""
        m = spec.mechanism
        if not isinstance(m, CalibratedSpec):
            return []
        probs = table_required(spec, "the releases are drawn at the confidential histogram")
        if spec.design is not None:  # [design] gives the target (verify.design_calibrated)
            design_probs = calibrated_design_problems(spec)
            if design_probs:
                return probs + design_probs
            m = designed_mechanism(m, spec.design)
        if spec.query is not None and spec.query.kind != "histogram":
            probs.append(
                Problem(
                    "query.kind",
                    f"mechanism.kind = {m.kind!r} releases the histogram; "
                    f"{spec.query.kind!r} is not supported for it (use 'histogram')",
                )
            )
        targets = {k: getattr(m, k, None) for k in TARGET_ORDER}
        for k, v in targets.items():
            if v is not None and not v > 0:
                probs.append(Problem(f"mechanism.{k}", f"must be > 0, got {float(v)!r}"))
        # one target at most: the loader parsed the form (CalibratedSpec.choice_problem); here, none is a problem
        if targets["scale"] is not None:
            if m.delta not in (None, 0):
                probs.append(Problem("mechanism.delta", f"{m.kind} with scale: delta goes with epsilon"))
        elif isinstance(m, GaussianSpec):
            if all(v is None for v in targets.values()):
                alts = "mu, epsilon with delta, rho" + (", or scale" if isinstance(m, ScaledGaussianSpec) else "")
                probs.append(Problem("mechanism.mu", f"{m.kind} needs exactly one calibration target: {alts}"))
            elif m.epsilon is not None and not (m.delta is not None and 0 < m.delta < 1):
                probs.append(Problem("mechanism.delta", f"{m.kind} with epsilon needs 0 < delta < 1"))
            elif m.epsilon is None and m.delta is not None:
                probs.append(Problem("mechanism.delta", f"{m.kind}: delta goes with epsilon"))
        elif m.epsilon is None or m.delta not in (None, 0):
            alt = " or scale" if isinstance(m, ScaledSpec) else ""
            probs.append(Problem("mechanism.epsilon", f"{m.kind} needs epsilon{alt} (pure DP: no mu, no delta)"))
        return probs

    @staticmethod
    def _norms(ctx: Context) -> TableSpaceNorms | None:
        """The closed-form norms of S for a table under both one-way margins (radius a(t) <= 3), else None."""
        rc = one_way_table(ctx.space, ctx.invariant)
        return None if rc is None or ctx.a.value > 3 else TableSpaceNorms(rc[0], rc[1], ctx.a.value)

    def run(self, ctx: Context) -> KindResult:
        """Build, calibrate, draw and check (see the module docstring)."""
        m = ctx.mechanism(CalibratedSpec)
        if ctx.spec.design is not None:
            m = designed_mechanism(m, ctx.spec.design)
        started = time.monotonic()
        space, inv, a = ctx.space, ctx.invariant, ctx.a
        table_list = ctx.required(ctx.table, "data.table")
        table = np.asarray(table_list, dtype=np.float64)
        semi = SemiAdjacent(ctx.relation, inv, a.value)
        s_space: SensitivitySpace | None = None
        res_exact = False
        norms_used: TableSpaceNorms | None = None  # the closed-form span, for the invariant certificate
        if ctx.framework == "subspace-dp" and self.subspace_builder is not None:
            built = self.subspace_builder(ctx, m)  # calibrated on the base relation: S is not needed
            mechanism_info = built.info
        else:
            norms = self._norms(ctx) if self.norms_builder is not None else None
            res = None
            why = ""
            if norms is not None and norms.size * norms.dimension > NORMS_FIRST_ENTRIES:
                why = (
                    f"{norms.size} vectors of {norms.dimension} cells; the closed form gives the norms and span "
                    "the calibration needs"
                )
            else:
                stage(f"{ctx.spec.name}: exact sensitivity space S at the table (radius {a.value})")
                try:
                    res = semi_sensitivity_search(space, inv, a.value, table=table_list, query=None, budget=ctx.budget)
                except (SearchTooLarge, BudgetExhausted, MemoryError) as e:  # MemoryError: the supervisor's guard
                    if norms is None:
                        raise
                    why = (
                        e.summary
                        if isinstance(e, SearchTooLarge)
                        else "listing it exceeded the memory limit"
                        if isinstance(e, MemoryError)
                        else str(e)
                    )
            if res is None:
                if norms is None or self.norms_builder is None:  # pragma: no cover - res is set or we raised
                    raise TypeError("no sensitivity space and no closed form")
                built, norms_used = self.norms_builder(ctx, m, norms, semi), norms
                mechanism_info = dataclasses.replace(
                    built.info,
                    sensitivity_space=norms.label,
                    sensitivity_exact=False,
                    sensitivity_not_listed=f"S at the table was not listed ({why}); its closed-form superset is used",
                )
            else:
                s_space, res_exact = res.space, res.exact
                built = self.builder(ctx, m, s_space, semi)
                mechanism_info = dataclasses.replace(
                    built.info, sensitivity_space=s_space.label, sensitivity_exact=res.exact
                )
        calibration_seconds = time.monotonic() - started
        mech_g, advertised = built.guarantee, built.advertised
        shifts = () if s_space is None else (Shift(semi, s_space.l1, s_space.l2_squared, exact=res_exact),)
        law = KnownGuarantee(mech_g, pure_only=PURE_ONLY_NOISE if isinstance(mech_g, (PureDP, ApproxDP)) else "")
        release = Release(ctx.relation, inv, (Part(law, shifts, label=m.kind),), advertised=advertised)

        used_seed = ctx.draw_seed()
        n = ctx.draw_count()
        stage(f"{ctx.spec.name}: drawing {n} releases from {m.kind} (seed {used_seed}) and checking them")
        draws = built.mechanism.sample(table, rng=np.random.default_rng(used_seed), size=n)
        draws = np.ascontiguousarray(draws, dtype=np.float64).reshape(n, space.n_cells)

        inv_outcome = invariant_check(inv.matrix(space), table, draws)
        if not built.keeps_invariant:  # not applicable: neither a failure nor inconclusive
            inv_outcome = NotApplicable(
                f"mechanism.kind = {m.kind!r} adds noise in every cell and does not keep the invariant (it is "
                f"published separately; the Semi-DP guarantee covers both): {detail_of(inv_outcome)}"
            )
        inv_cert = certify_noise_support(
            inv.matrix(space), projector=ctx.framework == "subspace-dp", space=s_space, norms=norms_used
        )
        if not built.keeps_invariant:
            inv_cert = NotApplicable(f"mechanism.kind = {m.kind!r} adds noise in every cell")
        err, err_outcome = built.error_check(np.linalg.norm(draws - table[None, :], axis=1), used_seed)
        target: Outcome = (
            Verified(f"the calibrated mechanism's guarantee implies the target ({type(advertised).__name__})")
            if implies(mech_g, advertised)
            else Refuted("BUG: the calibrated mechanism does not meet its calibration target")
        )
        samples = SamplesSection(n, used_seed, (n, space.n_cells), "float64", "row-major cells")
        checks = [
            Check("calibration", target),
            Check("invariant-preserved", inv_outcome),
            Check("invariant-certified", inv_cert),
            Check("expected-l2-error", err_outcome),
        ]
        sections: list[Section] = [
            mechanism_info,
            samples,
            err,
        ]
        plots: tuple[Plot, ...] = ()
        if postprocess_of(ctx.spec) is not None and built.noise is not None:
            section, pp_checks, plot = postprocess_part(ctx, built.noise, table, used_seed)
            sections.append(section)
            checks += pp_checks
            plots = (plot,)
        result = KindResult(
            release=release,  # the mechanism known by its privacy map on SemiAdjacent at a(t), and its shift S
            seed=used_seed,
            checks=tuple(checks),
            sections=tuple(sections),
            samples=draws,
            plots=plots,
        )
        return with_calibrated_design(ctx.spec, result, m.kind, mech_g, mechanism_info, err, calibration_seconds)


def postprocess_part(ctx: Context, noise: NoiseLaw, table: FloatArray, seed: int) -> tuple[Section, list[Check], Plot]:
    """The ``[postprocess]`` study [ZVF21] at the table: section, checks and the bias plot (module docstring)."""
    pp = postprocess_of(ctx.spec)
    if pp is None:
        raise TypeError("postprocess_part called without [postprocess]")
    rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(1,)))
    budget = ctx.budget.split(POSTPROCESS_SHARE)
    a_mat = ctx.invariant.matrix(ctx.space)
    study = run_study(table, a_mat, noise, pp.kind == "project-nonneg", pp.draws, rng=rng, budget=budget)
    how = f"numpy.random.default_rng(SeedSequence({seed}, spawn_key=(1,)))"
    section, checks = build_postprocess(study, noise, pp.kind, seed, how)
    plot = Plot(
        "postprocess",
        "bias of projection post-processing",
        lambda path, title: plot_postprocess_bias(section, path, title),
    )
    return section, checks, plot


__all__ = [
    "CALIBRATED_FRAMEWORKS",
    "BuiltMechanism",
    "CalibratedKind",
    "CalibratedSpec",
    "TARGET_ORDER",
    "GaussianSpec",
    "POSTPROCESS_SHARE",
    "ScaledGaussianSpec",
    "ScaledSpec",
    "implies",
    "invariant_check",
    "mean_check",
    "postprocess_part",
]
