"""The shared run of the lattice kinds: integer noise on the kernel lattice [DGGY23].

The kinds are ``generalized-laplace`` (:mod:`verify.kinds.generalized_laplace`) and ``generalized-gaussian``
(:mod:`verify.kinds.generalized_gaussian`); each hands :class:`LatticeKind` its :class:`LatticeLaw` (target,
exact sampler, guarantees), and this module does the rest.

Dharangutte, Gao, Gong & Yu (2023): integer noise on the kernel lattice
:math:`\\Lambda=\\{z\\in\\mathbb Z^d: Az=0\\}` of the counting invariant, so every
release is an integer histogram with the invariant exact.

Steps:

1. the lattice basis of :math:`\\Lambda` (:func:`accountant.lattice.kernel.basis_for`),
   certified exactly (A C = 0, rank, saturation);
2. the target: generalized Laplace :math:`q(z)\\propto e^{-\\varepsilon\\|z\\|_p}` (Def 9;
   ``mechanism.epsilon`` per unit of ``mechanism.norm``), or generalized Gaussian
   :math:`q(z)\\propto e^{-\\|z\\|_2^2/2\\sigma^2}` (Def 13) with
   :math:`\\sigma=1/\\sqrt{2\\rho}` from ``mechanism.rho`` -- the reference's flagged
   alternative calibration (zCDP on equivalent pairs, :math:`\\rho D^2` at
   :math:`\\ell_2` distance D), **not** the paper's constant, which is not recovered;
3. the draws: by the exact rejection sampler from free coordinates when the target
   is separable and the invariant admits a unimodular split
   (:mod:`mechanisms.lattice_exact`), else by MCMC [DGGY23, Alg. 1] after a burn-in
   chosen from the L-lag coupling TV bound (Biswas, Jacob & Vanetti 2019); the
   bound's value :math:`\\delta'` is charged as :math:`(1+e^{\\varepsilon D})\\delta'`
   (docs/reference/subspace-integer-postprocessing.md §3.5). ``[mechanism.sampler]`` sets the method and budgets;
4. the release (:class:`~accountant.releases.model.Release`, one part: the kind's noise law with the query's
   shift 1 per unit norm and D on the Semi-DP pairs), accounted by the runner; its guarantees: per unit norm
   on equivalent histograms
   (:class:`~accountant.guarantees.relations.IntegerSubspace`, ``claim.framework =
   "integer-subspace-dp"``), and Semi-DP on :math:`(D_t, A_{a(t)})` with
   :math:`D=\\Delta_p(S)` of the exact sensitivity space (or the bound
   :math:`2a(t)` / :math:`\\sqrt2\\,a(t)` for replace-one, :math:`a(t)` for add-remove,
   when S is too large to enumerate, labelled);
5. checks: the basis certificate, every draw integral with :math:`Ax` exact (integer
   arithmetic), the sampler (exact, or the TV bound reached within budget --
   inconclusive otherwise), conversions re-certified, the claim.

The TV bound is a Monte Carlo estimate with a heuristic confidence adjustment
(:mod:`mechanisms.coupling` says exactly what is and is not certified); the
report labels it so.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Literal, Optional, Protocol

import numpy as np
from numpy.typing import NDArray

from semidp.accountant.core.budget import Budget
from semidp.accountant.core.directed import sqrt_up, up, up_exact
from semidp.accountant.core.errors import BudgetExhausted, InvalidArgument, SearchTooLarge, UnsupportedRelease
from semidp.accountant.core.outcome import Outcome, Refuted, Unknown, Verified
from semidp.accountant.data.dataspace import DataSpace
from semidp.accountant.data.invariants import Invariant
from semidp.accountant.guarantees.definitions import Guarantee
from semidp.accountant.guarantees.relations import AddRemove, IntegerSubspace, SemiAdjacent
from semidp.accountant.lattice.kernel import LatticeBasis, basis_for
from semidp.accountant.releases.accounting import part_guarantee
from semidp.accountant.releases.model import Part, PluginLaw, Release, Shift
from semidp.accountant.sensitivity.search import semi_sensitivity_search
from semidp.mechanisms.coupling import MeetingTimes, choose_burn_in, meeting_times, tv_bound, tv_bound_curve
from semidp.mechanisms.lattice_mcmc import LatticeGaussianTarget, LatticeLaplaceTarget, LatticeSampler
from semidp.verify.context import Context, KindResult, Plot
from semidp.verify.dask_client import run_tasks
from semidp.verify.invariant_certificate import certify_lattice_basis
from semidp.verify.mechanism_section import (
    BurnInInfo,
    CouplingInfo,
    ExactSamplerInfo,
    LatticeBasisInfo,
    LatticeMechanismSection,
    McmcSamplerInfo,
    SamplerInfo,
    SemiDpDistance,
)
from semidp.verify.monte_carlo import LEVEL, mc_interval
from semidp.verify.plots_mcmc import plot_tv
from semidp.verify.registry import KindDefaults, KindInfo, Problem
from semidp.verify.report import Check, GuaranteeSummary, Section
from semidp.verify.sections import (
    Heuristic,
    LatticeErrorSection,
    LatticeGuaranteesSection,
    McmcSection,
    MonteCarloMean,
    SamplesSection,
)
from semidp.verify.spec import MechanismSpec, Spec, documented
from semidp.verify.spec_checks import table_required

#: The largest ``mechanism.epsilon`` of generalized-laplace, exclusive: the exact sampler draws with numerator and
#: denominator below 2^31 (:func:`mechanisms.lattice_exact.ExactLatticeLaplace`).
MAX_LAPLACE_EPSILON = 2**31


@dataclass(frozen=True)
class SamplerSpec:
    """generalized-laplace / generalized-gaussian (extension): how the lattice noise is drawn."""

    method: Literal["auto", "exact", "mcmc"] = documented(
        "auto: exact rejection from free coordinates when the target is separable (l1, Gaussian) and "
        "the invariant admits a unimodular split, else MCMC; exact / mcmc: force one.",
        default="auto",
    )
    ratio: Optional[Fraction] = documented(
        "MCMC proposal ratio a of DG(a) (default: the sampler's rule).", default=None
    )
    tv: Fraction = documented(
        "MCMC: largest TV distance to the target accepted at the burn-in (delta'_TV, charged to the guarantee).",
        default=Fraction(1, 20),
    )
    pairs: int = documented("MCMC: coupled chain pairs for the L-lag TV bound.", default=200)
    lag: int = documented("MCMC: lag L of the coupling.", default=2000)
    time_limit: Fraction = documented(
        "Seconds for the coupling diagnostics and the sampling each.", default=Fraction(120)
    )
    batches: int = documented(
        "MCMC: split the coupled pairs into this many batches, each seeded by SeedSequence.spawn; with --workers "
        "or --scheduler they run on Dask, and the result is the same wherever they run.",
        default=1,
    )


@dataclass(frozen=True)
class LatticeSpec(MechanismSpec):
    """``[mechanism]`` of ``generalized-laplace`` (epsilon, norm) or ``generalized-gaussian`` (rho)."""

    epsilon: Optional[Fraction] = documented(
        "generalized-laplace: epsilon per unit of norm (DGGY Def 9).", default=None
    )
    rho: Optional[Fraction] = documented(
        "generalized-gaussian: zCDP rho per unit l2 distance between equivalent histograms; sigma = 1/sqrt(2 rho).",
        default=None,
    )
    norm: Optional[Literal["l1", "l2"]] = documented(
        "generalized-laplace: norm in the exponent (default l1).", default=None
    )
    sampler: Optional[SamplerSpec] = documented("How the lattice noise is drawn (extension).", default=None)


@dataclass(frozen=True)
class LatticeParams:
    """The noise parameters of a lattice spec, as floats (0.0 where the law does not use one)."""

    eps: float
    """``mechanism.epsilon`` (generalized Laplace)."""
    rho: float
    """``mechanism.rho`` (generalized Gaussian)."""
    sigma: float
    """sigma = 1/sqrt(2 rho) rounded up (generalized Gaussian)."""
    norm: str
    """``mechanism.norm`` or the law's default."""


class LatticeLaw(Protocol):
    """What a lattice kind's noise law adds to the shared run: its calibration, samplers and guarantees."""

    def target_problems(self, m: LatticeSpec) -> list[Problem]:
        """Problems of the calibration keys, each naming its key."""
        ...

    def params(self, m: LatticeSpec) -> LatticeParams:
        """The noise parameters of ``m`` (the law's default norm when ``mechanism.norm`` is absent)."""
        ...

    def exact_sampler(self, m: LatticeSpec, a_mat: NDArray[np.int64], norm: str) -> tuple[Any, str]:
        """The exact rejection sampler at the spec's exact rationals, or ``(None, why not)``."""
        ...

    def mcmc_target(self, basis: LatticeBasis, p: LatticeParams) -> LatticeLaplaceTarget | LatticeGaussianTarget:
        """The MCMC target on the lattice coordinates."""
        ...

    def target(self, p: LatticeParams, unit: IntegerSubspace) -> Guarantee:
        """The calibration target per unit norm (the release's advertised guarantee)."""
        ...

    def noise(self, p: LatticeParams, delta_tv: float, delta0: float) -> PluginLaw:
        """The drawn noise as a release noise law (its interpreter, registered by the kind's module, charges
        delta' = (1 + e^{eps D}) delta_tv on a pair at distance D; ``delta0``: the zCDP conversion's delta)."""
        ...

    def calibration(self, p: LatticeParams) -> str:
        """The report's ``calibration`` text."""
        ...

    def heuristic(self, basis: LatticeBasis, p: LatticeParams) -> Heuristic | None:
        """A sanity figure of the expected error (not a check), or ``None``."""
        ...


@dataclass(frozen=True)
class LatticeKind(KindDefaults):
    """A lattice kind: its :class:`~verify.registry.KindInfo` and its noise law (see the module docstring)."""

    info: KindInfo
    law: LatticeLaw

    def default_framework(self, spec: Spec) -> str:
        """``integer-subspace-dp``."""
        return "integer-subspace-dp"

    def validate(self, spec: Spec) -> list[Problem]:
        """A table, the calibration of the kind, and sampler budgets in range."""
        m = spec.mechanism
        if not isinstance(m, LatticeSpec):
            return []
        probs = table_required(spec, "the integer releases are drawn at the confidential histogram")
        probs += self.law.target_problems(m)
        smp = m.sampler
        if smp is not None:
            if not 0 < smp.tv < 1:
                probs.append(Problem("mechanism.sampler.tv", f"must be in (0, 1), got {float(smp.tv)!r}"))
            if smp.ratio is not None and not 0 < smp.ratio < 1:
                probs.append(Problem("mechanism.sampler.ratio", f"must be in (0, 1), got {float(smp.ratio)!r}"))
            if smp.pairs < 2 or smp.lag < 1 or not smp.time_limit > 0:
                probs.append(Problem("mechanism.sampler", "needs pairs >= 2, lag >= 1 and time_limit > 0"))
            if not 1 <= smp.batches <= smp.pairs:
                probs.append(
                    Problem("mechanism.sampler.batches", f"must be in [1, pairs = {smp.pairs}], got {smp.batches}")
                )
        return probs

    def run(self, ctx: Context) -> KindResult:
        """Build, draw from and check the lattice mechanism (see the module docstring)."""
        return run_lattice(ctx, self.law)


#: The frameworks of the lattice kinds.
LATTICE_FRAMEWORKS = ("dp", "integer-subspace-dp", "semi-dp")


#: Points of the TV-bound curve kept in the report (and plotted).
CURVE_POINTS = 60


@dataclass(frozen=True)
class _Draws:
    noise: NDArray[np.int64]
    method: Literal["exact", "mcmc"]
    delta_tv: float
    """TV distance charged (0 for exact draws)."""
    info: SamplerInfo
    outcome: Outcome
    curve: tuple[tuple[int, float, float], ...] | None
    """``(t, TV bound estimate, its confidence-adjusted upper value)`` at the plotted iterations."""
    sigma: float | None = None
    """Exact Gaussian draws: the noise scale for accounting (sigma rounded down)."""
    epsilon: float | None = None
    """Exact Laplace draws: the sampler's epsilon rounded up."""


def _semi_distance(
    space: DataSpace, inv: Invariant, semi: SemiAdjacent, table: list[int], norm: str, budget: Budget
) -> tuple[Shift, float, str]:
    """The histogram's shift on the Semi-DP pairs ``semi`` and D = Delta_p(S) of the exact Semi-DP sensitivity
    space (searched within ``budget``), or the triangle-inequality bound (a shift marked inexact)."""
    rel, a = semi.base, semi.radius
    try:
        s = semi_sensitivity_search(space, inv, a, table=table, query=None, budget=budget).space
        d = float(s.l1) if norm == "l1" else sqrt_up(Fraction(s.l2_squared))
        shift = Shift(semi, float(s.l1), float(s.l2_squared))
        return shift, d, f"Delta_{norm[1]}(S) of the exact sensitivity space ({s.size} vectors)"
    except SearchTooLarge as e:
        # add-remove: one record changes one cell by 1; replace-one: two cells by 1 each
        per_step = 1.0 if isinstance(rel, AddRemove) else (2.0 if norm == "l1" else math.sqrt(2.0))
        d = up(per_step * a) if norm == "l2" else per_step * a
        l1_step, l2sq_step = (1, 1) if isinstance(rel, AddRemove) else (2, 2)
        shift = Shift(semi, float(l1_step * a), float(l2sq_step * a * a), exact=False)
        return (
            shift,
            d,
            (
                f"upper bound {per_step:g} x a(t) (each of a(t) = {a} {rel.spec_name} steps moves the "
                f"histogram by at most {per_step:g} in {norm}); the exact S was refused: {e.summary}"
            ),
        )


def _coupled_pairs(
    sampler: LatticeSampler, smp: SamplerSpec, rng: np.random.Generator, budget: float, scheduler: str | None
) -> MeetingTimes:
    """The L-lag meeting times of ``smp.pairs`` coupled pairs [BJV19]: in one vectorised run, or in
    ``smp.batches`` batches seeded by ``SeedSequence.spawn`` (here one after the other, each with its share of
    the budget, or on a Dask scheduler), concatenated in batch order."""
    if smp.batches == 1:
        return meeting_times(sampler, lag=smp.lag, pairs=smp.pairs, rng=rng, budget=Budget.of(budget))
    children = np.random.SeedSequence(int(rng.integers(2**63))).spawn(smp.batches)
    sizes = [len(b) for b in np.array_split(np.arange(smp.pairs), smp.batches)]
    each = budget if scheduler is not None else budget / smp.batches
    args = [(sampler, smp.lag, size, child, each) for size, child in zip(sizes, children)]
    return MeetingTimes.concatenate(run_tasks(meeting_times_batch, args, scheduler))


def meeting_times_batch(
    sampler: LatticeSampler, lag: int, pairs: int, seed: np.random.SeedSequence, budget: float
) -> MeetingTimes:
    """One batch of :func:`_coupled_pairs` (module level: a Dask task)."""
    return meeting_times(
        sampler, lag=lag, pairs=pairs, rng=np.random.default_rng(seed), budget=Budget.of(budget), progress=False
    )


def _draw(
    spec: Spec,
    m: LatticeSpec,
    law: LatticeLaw,
    basis: LatticeBasis,
    a_mat: NDArray[np.int64],
    n: int,
    rng: np.random.Generator,
    p: LatticeParams,
    remaining: float,
    scheduler: str | None = None,
) -> _Draws:
    """Draw the noise: exact where possible, else MCMC after a certified burn-in; within
    ``min(mechanism.sampler.time_limit, remaining)`` seconds (``remaining``: what ``--time-limit`` left)."""
    smp = m.sampler if m.sampler is not None else SamplerSpec()
    budget = min(float(smp.time_limit), remaining)
    fallback = ""
    if smp.method in ("auto", "exact"):
        ex, fallback = law.exact_sampler(m, a_mat, p.norm)
        noise = None
        if ex is not None:
            try:
                noise = np.asarray(ex.sample(n, rng=rng, budget=Budget.of(budget)), dtype=np.int64)
            except (SearchTooLarge, BudgetExhausted) as e:  # acceptance too low for the budget
                if smp.method == "exact":
                    return _Draws(
                        np.zeros((0, basis.cells), dtype=np.int64),
                        "exact",
                        1.0,
                        ExactSamplerInfo(),
                        Unknown(f"the exact sampler was refused: {e}"),
                        None,
                    )
                fallback = f"the exact sampler was refused ({e})"
        if noise is not None:
            ex_info = ExactSamplerInfo(
                "exact", "exact rejection from free coordinates (no MCMC, no delta')", ex.diagnostics()
            )
            return _Draws(
                noise,
                "exact",
                0.0,
                ex_info,
                Verified(
                    "exact sampler: proposals on the free coordinates (exact discrete samplers), dependent cells "
                    "solved in integers, accepted by an exact Bernoulli(exp(-energy)) coin; the accepted law is "
                    "the target exactly, at the spec's rational parameters"
                ),
                None,
                getattr(ex, "sigma_lower", None),
                getattr(ex, "epsilon_upper", None),
            )
        if smp.method == "exact":
            raise UnsupportedRelease(f"{spec.path}: mechanism.sampler.method = 'exact' is not possible: {fallback}.")
    target = law.mcmc_target(basis, p)
    sampler = LatticeSampler(target, None if smp.ratio is None else float(smp.ratio))
    info = McmcSamplerInfo(
        "mcmc",
        "Gibbs-within-Metropolis on lattice coordinates (DGGY Alg 1)",
        fallback or None,
        tuple(float(x) for x in np.exp(sampler.log_ratio))[:1],
        CouplingInfo(smp.pairs, smp.lag, "hybrid (CRN far, maximal near)", float(smp.tv)),
    )
    try:
        mt = _coupled_pairs(sampler, smp, rng, budget, scheduler)
    except BudgetExhausted as e:
        return _Draws(
            np.zeros((0, basis.cells), dtype=np.int64),
            "mcmc",
            1.0,
            info,
            Unknown(
                f"the L-lag coupling did not finish within {budget:g} s (mechanism.sampler.time_limit, or what --time-limit "
                f"left) ({e}); "
                "no burn-in can be certified from it, so no release was drawn"
            ),
            None,
        )
    taus = mt.tau
    coupling = dataclasses.replace(
        info.coupling,
        seconds=mt.seconds,
        meeting_time_quantiles={q: int(np.quantile(taus, q / 100)) for q in (50, 90, 99, 100)},
    )
    info = dataclasses.replace(info, coupling=coupling)
    try:
        burn = choose_burn_in(mt, float(smp.tv), criterion="upper")
    except InvalidArgument as e:
        return _Draws(
            np.zeros((0, basis.cells), dtype=np.int64),
            "mcmc",
            1.0,
            info,
            Unknown(f"the TV bound cannot reach mechanism.sampler.tv = {float(smp.tv):g} with {smp.pairs} pairs: {e}"),
            None,
        )
    t_max = int(max(burn.t, int(taus.max()))) + 1
    ts = np.unique(np.append(np.linspace(0, t_max, CURVE_POINTS).astype(np.int64), burn.t))
    conf = burn.bound.confidence
    # the estimate and the confidence-adjusted bound, which chose the burn-in (criterion "upper")
    curve = tuple(
        (int(t), float(v), float(tv_bound(mt, int(t), confidence=conf).upper))
        for t, v in zip(ts, tv_bound_curve(mt, ts))
    )
    burn_in = BurnInInfo(
        burn.t,
        burn.bound.estimate,
        burn.bound.upper,
        burn.criterion,
        burn.bound.confidence,
        "Monte Carlo estimate of the BJV Thm 2.5 bound over the coupled pairs, with a "
        "heuristic one-sided adjustment (see mechanisms.coupling); not a certificate",
    )
    info = dataclasses.replace(info, burn_in=burn_in)
    try:
        noise = sampler.sample(n, burn_in=burn.t, rng=rng, budget=Budget.of(budget))
    except BudgetExhausted as e:
        return _Draws(
            np.zeros((0, basis.cells), dtype=np.int64),
            "mcmc",
            burn.bound.upper,
            info,
            Unknown(f"drawing {n} releases after a burn-in of {burn.t} sweeps ran out of time: {e}"),
            curve,
        )
    delta_tv = float(burn.bound.upper)
    return _Draws(
        noise,
        "mcmc",
        delta_tv,
        info,
        Verified(
            f"burn-in {burn.t} sweeps from the L-lag coupling ({smp.pairs} pairs, L = {smp.lag}): TV bound "
            f"estimate {burn.bound.estimate:.3g}, adjusted {delta_tv:.3g} <= target {float(smp.tv):g}; charged as delta'"
        ),
        curve,
    )


def run_lattice(ctx: Context, law: LatticeLaw) -> KindResult:
    """The lattice kinds' run with the kind's noise ``law``: basis, target, draws, guarantees and checks (see the
    module docstring)."""
    m = ctx.mechanism(LatticeSpec)
    spec = ctx.spec
    space, inv, rel, deltas, a = ctx.space, ctx.invariant, ctx.relation, ctx.deltas, ctx.a
    table = ctx.required(ctx.table, "data.table")
    x = np.asarray(table, dtype=np.int64)
    try:
        basis = basis_for(inv, space)
    except InvalidArgument as e:
        raise UnsupportedRelease(f"{spec.path}: invariant: no integer kernel lattice basis: {e}") from e
    a_mat = np.asarray(inv.matrix(space), dtype=np.int64)
    p = law.params(m)
    norm = p.norm

    semi = SemiAdjacent(rel, inv, a.value)
    unit = IntegerSubspace(norm, tuple(tuple(int(v) for v in row) for row in a_mat))
    semi_shift, d_semi, d_how = _semi_distance(space, inv, semi, table, norm, ctx.budget)

    used_seed = ctx.draw_seed()
    n = ctx.draw_count()
    draws = _draw(
        spec,
        m,
        law,
        basis,
        a_mat,
        n,
        np.random.default_rng(used_seed),
        p,
        ctx.remaining(),
        ctx.options.scheduler,
    )
    # Accounting at the parameters the noise really has, rounded the safe way: epsilon up (the spec's
    # exact rational), sigma down (the exact sampler's sigma^2 = 1/(2 rho); MCMC uses the float sigma).
    eps_acc = max(up_exact(m.epsilon) if m.epsilon is not None else 0.0, draws.epsilon or 0.0)
    sigma_acc = draws.sigma if draws.sigma is not None else p.sigma
    acc = LatticeParams(eps_acc, p.rho, sigma_acc, norm)
    # The release: one part, the drawn noise's law, shifted by 1 per unit norm on equivalent histograms and by
    # D on the Semi-DP pairs; the runner accounts it in the claim's framework (a sampler whose TV distance is not
    # bounded charges delta_tv = 1: the guarantee is vacuous and decides no claim).
    part = Part(law.noise(acc, draws.delta_tv, deltas[0]), (Shift(unit, 1.0, 1.0), semi_shift), label=f"{m.kind} noise")
    release = Release(rel, inv, (part,), advertised=law.target(acc, unit))
    eff_unit, eff_semi = part_guarantee(part, unit), part_guarantee(part, semi)
    if eff_unit is None or eff_semi is None:  # pragma: no cover - the part states both shifts
        raise TypeError("the lattice part states its shifts on the unit and the Semi-DP relations")

    releases = x[None, :] + draws.noise
    inv_outcome = _integer_invariant_check(a_mat, x, releases)
    norms = (
        np.abs(draws.noise).sum(axis=1) if norm == "l1" else np.linalg.norm(draws.noise.astype(np.float64), axis=1)
    ).astype(np.float64)
    quantity = f"E||noise||_{norm[1]}"
    mc: MonteCarloMean | None = None
    if len(norms) > 1:
        mean, se, lo, hi = mc_interval(norms)
        mc = MonteCarloMean(quantity, mean, se, LEVEL, (lo, hi), len(norms))
    err = LatticeErrorSection(quantity, mc, law.heuristic(basis, p))

    mechanism_info = LatticeMechanismSection(
        m.kind,
        norm,
        basis.dimension,
        law.calibration(p),
        LatticeBasisInfo(basis.method, basis.dimension, basis.gram_determinant, basis.reduced, basis.note),
        draws.info,
        draws.delta_tv,
        SemiDpDistance(d_semi, d_how),
        f"{m.kind} on the kernel lattice of the invariant ({draws.method} draws)",
    )
    samples = SamplesSection(
        len(releases), used_seed, (len(releases), space.n_cells), "float64 (integer-valued)", "row-major cells"
    )
    guarantees = LatticeGuaranteesSection(GuaranteeSummary.of(eff_unit, deltas), GuaranteeSummary.of(eff_semi, deltas))
    sections: list[Section] = [mechanism_info, samples, err, guarantees]
    plots: tuple[Plot, ...] = ()
    if draws.curve:
        curve = draws.curve
        estimate = [(t, v) for t, v, _ in curve]
        upper = [(t, u) for t, _, u in curve]
        sections.append(McmcSection(tuple(estimate), tuple(upper)))
        mcmc = draws.info if isinstance(draws.info, McmcSamplerInfo) else None
        burn_t = mcmc.burn_in.t if mcmc is not None and mcmc.burn_in is not None else None
        tv_target = mcmc.coupling.tv_target if mcmc is not None else None
        plots = (
            Plot(
                "tv",
                "L-lag coupling TV bound",
                lambda path, title: plot_tv(estimate, path, title, burn_in=burn_t, target=tv_target, upper=upper),
            ),
        )
    return KindResult(
        release=release,
        seed=used_seed,
        checks=(
            Check(
                "lattice-basis",
                Verified(
                    f"{basis.dimension} basis vectors by {basis.method}, certified exactly: A C = 0, rank "
                    f"{basis.dimension} = d - rank A, saturated (gcd of maximal minors 1); det(C^T C) = "
                    f"{basis.gram_determinant}"
                ),
            ),
            Check("invariant-preserved", inv_outcome),
            Check("invariant-certified", certify_lattice_basis(inv.matrix(space), basis.exact)),
            Check("sampler", draws.outcome),
        ),
        sections=tuple(sections),
        plots=plots,
        samples=releases.astype(np.float64) if len(releases) else None,
    )


def _integer_invariant_check(a_mat: NDArray[np.int64], x: NDArray[np.int64], releases: NDArray[np.int64]) -> Outcome:
    """Every release is an integer histogram with A y == A x exactly (int64, no tolerance)."""
    if len(releases) == 0:
        return Unknown("no releases were drawn")
    bad = int(np.count_nonzero(np.any(releases @ a_mat.T != (a_mat @ x)[None, :], axis=1)))
    neg = int(np.count_nonzero(releases.min(axis=1) < 0))
    note = f"; {neg} releases have negative cells (integer noise is unbiased; post-process if needed)" if neg else ""
    if bad:
        return Refuted(f"{bad} of {len(releases)} integer releases break A y = A x")
    return Verified(
        f"all {len(releases)} releases are integer histograms with A y = A x exactly "
        f"({a_mat.shape[0]} constraint rows, integer arithmetic){note}"
    )


__all__ = [
    "LATTICE_FRAMEWORKS",
    "LatticeKind",
    "LatticeLaw",
    "LatticeParams",
    "LatticeSpec",
    "MAX_LAPLACE_EPSILON",
    "SamplerSpec",
    "run_lattice",
]
