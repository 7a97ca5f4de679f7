r"""``mechanism.kind = "implementation"``: a black-box statistical audit of someone's release function.

The spec names a callable ``"package.module:function"`` (or ``"file.py:function"``, relative to the spec),
called as ``function(histogram, rng) -> release`` (``histogram``: the row-major cells as a read-only
``numpy.int64`` array; ``release``: a 1-D array over the same cells), or with ``size=`` for a batch when it
takes that keyword. Importing it runs code named by the spec, so it needs ``--allow-code``. Pairs may also
carry pre-recorded releases (``.npy``, ``(draws, cells)``), which need no code.

The audit (:mod:`verify.audit_pairs`, :mod:`verify.threshold_audit`): pairs the claim covers (Semi-DP:
invariant-conforming pairs at the semi-adjacent radius, from the a(t) witness and the extremes of the exact
sensitivity space at ``data.table``; DP: ordinary neighbours), draws on both sides, threshold tests on
low-dimensional statistics chosen on one half of the draws and measured on the other, Clopper–Pearson
bounds [CP34] with a Bonferroni correction. The claim is **refuted** when a measured point lies below the
claimed tradeoff curve; otherwise it is *not refuted at this sample size* (unknown: a statistical audit never
verifies). Every audited release is also checked to keep the invariant (exactly for integer releases).

Anytime and sequential: the draws come in rounds (10**4 per side, then x4, up to ``draws``), with the tests
chosen and measured after each round and the error ``1 - confidence`` spent across the looks (linear
alpha-spending [LD83] with a Bonferroni bound over the looks; :mod:`verify.threshold_audit`). The audit stops
at the first refutation (``refuted``), when the planned draws are made (``samples``), or when the budget
runs out (``budget``: ``--time-limit`` less a reserve for measuring and reporting), and then measures what
it has; ``memory`` when the function ran out of memory. The looks are budgeted too (:mod:`verify.audit_looks`):
a round is drawn only while its look is predicted (from the last look's seconds per row) to end before the
report's reserve, and a look that still runs past it is given up, the previous look standing; so an audit
ends by its own budget, never by the supervisor's hard stop. The release function runs only in worker processes
(:mod:`verify.release_pool`); its failures are invalid specs naming it (exit 2).
"""

from __future__ import annotations

import io
import time
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Optional

import numpy as np
from numpy.typing import NDArray

from semidp.accountant.core.budget import Budget
from semidp.accountant.core.errors import InvalidSpec, SearchTooLarge
from semidp.accountant.core.outcome import Outcome, Refuted, Unknown, Verified
from semidp.accountant.geometry.knorm import KNormBall
from semidp.accountant.geometry.knorm_cache import cached_knorm_ball
from semidp.accountant.guarantees.conversion_routes import epsilon_delta, to_tradeoff
from semidp.accountant.guarantees.conversions import rdp_to_approx_dp
from semidp.accountant.guarantees.definitions import RDP, Guarantee
from semidp.accountant.guarantees.relations import Relation, SemiAdjacent
from semidp.accountant.profiles.tradeoff import TradeoffCurve
from semidp.accountant.releases.accounting import AuditEvidence
from semidp.accountant.releases.model import BlackBox
from semidp.accountant.releases.model import Release as ReleaseData
from semidp.verify.audit_evidence import Evidence, refutation_evidence
from semidp.verify.audit_looks import Drawn, Look, OutOfTime, look_cost
from semidp.verify.audit_looks import look as look_at
from semidp.verify.audit_pairs import AuditPair, check_pair, distance_of, dp_pairs, pair_statistics, semi_pairs
from semidp.verify.audit_report import (
    AuditCandidate,
    AuditDraws,
    AuditPairRow,
    AuditRound,
    AuditSection,
    AuditSpending,
    EpsilonDeltaRow,
    TradeoffPoint,
    audit_plot,
)
from semidp.verify.context import Context, KindResult
from semidp.verify.dask_client import run_tasks
from semidp.verify.registry import KindDefaults, KindInfo, Problem
from semidp.verify.release_pool import (
    ReleaseFailure,
    ReleasePool,
    Task,
    call_release,
    default_processes,
    load_function,
    seed_globals,
    stream,
    takes_size,
)
from semidp.verify.report import Check
from semidp.verify.spec import MechanismSpec, Spec, cell_count, documented
from semidp.verify.spec_files import SpecFileRefused, excerpt, read_bytes
from semidp.verify.spec_values import guarantee_of
from semidp.verify.supervisor import memory_limit
from semidp.verify.threshold_audit import (
    GROWTH,
    Measured,
    Statistic,
    epsilon_lower,
    per_bound_level,
    round_sizes,
    spending,
)

FloatArray = NDArray[np.float64]
Release = Callable[..., Any]

#: Defaults of the audit keys.
DEFAULT_CONFIDENCE = Fraction(95, 100)
DEFAULT_SELECTION = Fraction(1, 2)
DEFAULT_TOLERANCE = Fraction(1, 10**9)
#: The draws stop this long before the spec's deadline (at least :data:`RESERVE_SECONDS`, else this share of
#: ``--time-limit``), leaving the time to measure what was drawn and write the report.
RESERVE_SECONDS = 3.0
#: After the last look, this long (at least :data:`REPORT_SECONDS`, else this share of ``--time-limit``) is kept
#: for the invariant check, the evidence and the report: a look that would run into it is not made.
REPORT_SECONDS = 2.0
REPORT_SHARE = 0.05
#: Values of ``mechanism.statistics``.
STATISTICS = ("likelihood-ratio", "all")
RESERVE_SHARE = 0.15


@dataclass(frozen=True)
class SamplesSpec:
    """Pre-recorded releases of a pair: ``.npy`` files, shape ``(draws, cells)``, relative to the spec."""

    x: str = documented("Releases drawn at x (.npy, shape (draws, cells)), relative to the spec.")
    x_prime: str = documented("Releases drawn at x_prime (.npy, same shape), relative to the spec.")


@dataclass(frozen=True)
class PairSpec:
    """A pair of histograms the claim covers, optionally with pre-recorded releases."""

    x: tuple[int, ...] = documented("Histogram x (row-major cells).")
    x_prime: tuple[int, ...] = documented("Histogram x' (row-major cells); a pair of the claim's relation.")
    samples: Optional[SamplesSpec] = documented("Pre-recorded releases (else the callable is run).", default=None)


@dataclass(frozen=True)
class ImplementationSpec(MechanismSpec):
    """``[mechanism]`` of ``implementation``: a release function audited as a black box."""

    callable: Optional[str] = documented(
        "'package.module:function' or 'file.py:function' (relative to the spec), called as "
        "function(histogram, rng) -> 1-D release (or with size= for a batch). Needs --allow-code.",
        default=None,
    )
    draws: Optional[int] = documented("Releases per side of each pair (default: [audit] samples).", default=None)
    confidence: Optional[Fraction] = documented("Joint confidence of the audit's bounds (default 0.95).", default=None)
    max_pairs: int = documented("Pairs built from data.table (default 4).", default=4)
    tests: int = documented("Tests measured (the Bonferroni family; default 3).", default=3)
    selection: Optional[Fraction] = documented(
        "Share of the draws that chooses the tests; the rest measures them (default 1/2).", default=None
    )
    batch: int = documented("Draws per call when the callable takes size= (default 10000).", default=10_000)
    processes: Optional[int] = documented(
        "Worker processes that run the callable (default: all cores); the draws do not depend on it.", default=None
    )
    invariant_tolerance: Optional[Fraction] = documented(
        "Relative tolerance of the invariant check for float releases (default 1e-9; integers: exact).",
        default=None,
    )
    pairs: tuple[PairSpec, ...] = documented("Pairs to audit besides (or instead of) the built ones.", default=())
    statistics: str = documented(
        "'likelihood-ratio' (default): the likelihood-ratio statistics of the usual noise families; 'all': also "
        "a logistic-regression classifier fitted on the selection rows (DP-Sniper [BV21]).",
        default="likelihood-ratio",
    )


def _callable_problems(name: str) -> list[Problem]:
    mod, sep, fn = name.rpartition(":")
    if not sep or not mod or not fn.isidentifier():
        return [Problem("mechanism.callable", f"{name!r} is not 'package.module:function' or 'file.py:function'")]
    return []


@dataclass(frozen=True)
class ImplementationKind(KindDefaults):
    """The ``implementation`` kind (module docstring)."""

    info: KindInfo = KindInfo("implementation", ImplementationSpec)

    def semi_adjacent_method(self, spec: Spec) -> str:
        """``auto``: the pairs start from a(t) at the table."""
        return "auto"

    def validate(self, spec: Spec) -> list[Problem]:
        """A claim to audit, something to draw from, sane audit parameters, pairs of the right length."""
        m = spec.mechanism
        if not isinstance(m, ImplementationSpec):
            return []
        probs: list[Problem] = []
        if spec.claim is None:
            probs.append(Problem("claim", "an implementation is audited against a claim: add a [claim] table"))
        if m.callable is not None:
            probs += _callable_problems(m.callable)
            if spec.data.table is None:
                probs.append(Problem("data.table", "required with mechanism.callable: pairs are built from it"))
        elif not m.pairs or any(p.samples is None for p in m.pairs):
            probs.append(
                Problem("mechanism.callable", "required unless every mechanism.pairs entry has samples (.npy files)")
            )
        for key, val in (("confidence", m.confidence), ("selection", m.selection)):
            if val is not None and not 0 < val < 1:
                probs.append(Problem(f"mechanism.{key}", f"must be in (0, 1), got {float(val)!r}"))
        if m.invariant_tolerance is not None and not m.invariant_tolerance >= 0:
            probs.append(Problem("mechanism.invariant_tolerance", "must be >= 0"))
        counts = (
            ("draws", m.draws, 2),
            ("max_pairs", m.max_pairs, 1),
            ("tests", m.tests, 1),
            ("processes", m.processes, 1),
        )
        for name, count, low in counts:
            if count is not None and count < low:
                probs.append(Problem(f"mechanism.{name}", f"must be >= {low}, got {count}"))
        if m.statistics not in STATISTICS:
            probs.append(
                Problem("mechanism.statistics", f"must be one of {', '.join(STATISTICS)}; got {m.statistics!r}")
            )
        if m.batch < 1:
            probs.append(Problem("mechanism.batch", f"must be >= 1, got {m.batch}"))
        cells = cell_count(spec)
        for i, p in enumerate(m.pairs):
            for k in ("x", "x_prime"):
                if len(getattr(p, k)) != cells:
                    probs.append(Problem(f"mechanism.pairs[{i}].{k}", f"has {len(getattr(p, k))} cells, not {cells}"))
        return probs

    def run(self, ctx: Context) -> KindResult:
        """Pairs, draws, tests, bounds, checks (module docstring)."""
        return run_audit(ctx)


def load_callable(name: str, spec_path: str, allow_code: bool) -> Release:
    """Import ``mechanism.callable`` here; without ``--allow-code`` raise :class:`InvalidSpec` naming key and flag.

    The audit itself never imports it in its own process (:mod:`verify.release_pool` runs it in workers); this
    is for callers that want the function.
    """
    _need_code(name, spec_path, allow_code)
    try:
        return load_function(name, spec_path)
    except ReleaseFailure as e:
        raise _failure(spec_path, name, e) from None


def _need_code(name: str, spec_path: str, allow_code: bool) -> None:
    if not allow_code:
        raise InvalidSpec(
            spec_path,
            [
                f"mechanism.callable = {name!r} names code to import and run; rerun with --allow-code if you "
                "trust it (a spec never runs code without it)"
            ],
        )


def _failure(spec_path: str, name: str, e: ReleaseFailure) -> InvalidSpec:
    """The audited function's own failure as an invalid spec naming it (exit 2; never an internal error)."""
    return InvalidSpec(spec_path, [f"mechanism.callable = {name!r} {e.message}"])


def draw_task(
    callable_name: str, spec_path: str, histogram: tuple[int, ...], seed: int, key: tuple[int, ...], n: int
) -> NDArray[Any]:
    """``n`` releases of the named callable at ``histogram`` from ``SeedSequence(seed, spawn_key=key)`` (module
    level: a Dask task; the parent checked ``--allow-code`` before any task was made). The same stream as a
    :class:`verify.release_pool.ReleasePool` worker's, so the draws do not depend on where they ran."""
    try:
        seed_globals(seed, key)
        return call_release(load_function(callable_name, spec_path), histogram, stream(seed, key), n)
    except ReleaseFailure as e:
        raise _failure(spec_path, callable_name, e) from None


def exact_invariant_check(a_mat: NDArray[np.int64], hist: tuple[int, ...], draws: NDArray[Any]) -> Outcome:
    """A y = A x for every integer release, in exact integer arithmetic (int64 when no sum can overflow it,
    else Python ints)."""
    if a_mat.shape[0] == 0:
        return Verified(f"no invariant rows; {len(draws)} releases trivially keep it")
    big = max(hist, default=0)
    if draws.size:  # Python ints: abs(int64 min) overflows in numpy
        big = max(big, int(draws.max()), -int(draws.min()))
    if big * int(np.abs(a_mat).sum(axis=1).max()) < 2**62:  # every partial sum fits in int64
        target64 = a_mat @ np.array(hist, dtype=np.int64)
        got64 = draws.astype(np.int64) @ a_mat.T
        bad = int(np.count_nonzero((got64 != target64[None, :]).any(axis=1)))
    else:
        target = a_mat.astype(object) @ np.array(hist, dtype=object)
        got = draws.astype(object) @ a_mat.T.astype(object)
        bad = int(sum(1 for row in got if any(g != t for g, t in zip(row, target))))
    if bad:
        return Refuted(f"{bad} of {len(draws)} integer releases have A y != A x (exact integer arithmetic)")
    return Verified(f"A y = A x exactly for all {len(draws)} integer releases")


def load_samples(spec_path: str, key: str, file: str, cells: int) -> NDArray[Any]:
    """A pre-recorded ``.npy`` of releases, ``(draws, cells)``; :class:`InvalidSpec` naming ``key`` otherwise."""
    try:  # inside the spec's folder, a regular file, size-capped (verify.spec_files)
        arr: NDArray[Any] = np.asarray(np.load(io.BytesIO(read_bytes(spec_path, key, file)), allow_pickle=False))
    except SpecFileRefused as e:
        raise InvalidSpec(spec_path, [str(e)]) from None
    except (OSError, ValueError, EOFError) as e:
        raise InvalidSpec(spec_path, [f"{key} = {excerpt(file)}: not a readable .npy array: {str(e)[:120]}"]) from None
    if arr.ndim != 2 or arr.shape[1] != cells or arr.shape[0] < 2:
        raise InvalidSpec(spec_path, [f"{key} = {file!r}: shape {arr.shape}; expected (draws >= 2, {cells})"])
    if not (np.issubdtype(arr.dtype, np.integer) or np.issubdtype(arr.dtype, np.floating)):
        raise InvalidSpec(spec_path, [f"{key} = {file!r}: dtype {arr.dtype} is not numeric"])
    return arr


def claimed_curve(g: Guarantee) -> TradeoffCurve:
    """A lower bound of the claim's tradeoff function (any form converts; RDP through its (eps, delta) profile)."""
    t = to_tradeoff(g)
    if t is not None:
        return t.curve
    if isinstance(g, RDP):
        deltas = np.logspace(-12, -0.5, 48)
        eps = [rdp_to_approx_dp(g, float(d)).epsilon for d in deltas]
        return TradeoffCurve.from_profile(eps, deltas)
    raise TypeError(f"no tradeoff route for the claim {g!r}")  # every spec guarantee form has one


def _ball(ctx: Context, res: object) -> KNormBall | None:
    """K = conv(S) at the table when its facets are available in time (for the K-norm statistic)."""
    space = getattr(res, "cell_space", None)
    if space is None or space.rank == 0:
        return None
    try:
        ball, _ = cached_knorm_ball(space, budget=Budget.of(max(1.0, 0.2 * ctx.remaining())))
    except (SearchTooLarge, MemoryError):
        return None
    return ball if ball.symmetry is None or len(ball.facets) == ball.facet_count else None


def _draw_reserve(ctx: Context) -> float:
    """Seconds of the budget kept for measuring what was drawn, the invariant check and the report (before the
    first look's cost is known; later rounds also keep the predicted cost of their look, :func:`_look_cost`)."""
    return max(RESERVE_SECONDS, RESERVE_SHARE * ctx.time_limit)


def _report_reserve(ctx: Context) -> float:
    """Seconds of the budget kept after the last look for the invariant check, the evidence and the report."""
    return max(REPORT_SECONDS, REPORT_SHARE * ctx.time_limit)


def run_audit(ctx: Context) -> KindResult:
    """The ``implementation`` kind's run (module docstring): the release function's workers start first (they
    import it while the pairs are built) and are ended, with everything they forked, however the run ends."""
    m = ctx.mechanism(ImplementationSpec)
    if m.callable is not None:
        _need_code(m.callable, ctx.spec.path, ctx.options.allow_code)
    pool = None
    if m.callable is not None and ctx.options.scheduler is None:
        processes = m.processes if m.processes is not None else default_processes()
        pool = ReleasePool(m.callable, ctx.spec.path, ctx.draw_seed(), processes, memory_limit=memory_limit())
        pool.start()
    try:
        return _run_audit(ctx, pool)
    finally:
        if pool is not None:
            pool.close()


def _run_audit(ctx: Context, pool: ReleasePool | None) -> KindResult:
    m = ctx.mechanism(ImplementationSpec)
    spec = ctx.spec
    claim_spec = ctx.required(spec.claim, "claim")  # validate() requires it
    semi = ctx.framework == "semi-dp"
    a_mat = ctx.invariant.matrix(ctx.space)
    cells = ctx.space.n_cells
    radius = ctx.a.value if ctx.a.exact else ctx.a.lower
    pairs: list[AuditPair] = []
    recorded: dict[int, tuple[NDArray[Any], NDArray[Any]]] = {}
    for i, p in enumerate(m.pairs):
        why = check_pair(p.x, p.x_prime, a_mat, ctx.relation, semi=semi, radius=radius)
        if why is not None:
            raise InvalidSpec(spec.path, [f"mechanism.pairs[{i}]: not a pair of the claim's relation: {why}"])
        if p.samples is not None:
            key = f"mechanism.pairs[{i}].samples"
            recorded[len(pairs)] = (
                load_samples(spec.path, f"{key}.x", p.samples.x, cells),
                load_samples(spec.path, f"{key}.x_prime", p.samples.x_prime, cells),
            )
        pairs.append(AuditPair(p.x, p.x_prime, "spec", distance_of(p.x, p.x_prime, ctx.relation)))
    res: object = None
    table = ctx.table
    if m.callable is not None and table is not None:
        if semi:
            built, radius, res = semi_pairs(
                ctx.space, ctx.invariant, ctx.relation, ctx.a, table, max_pairs=m.max_pairs, budget=ctx.budget
            )
        else:
            built = dp_pairs(table, ctx.relation, max_pairs=m.max_pairs)
        pairs += built
    if not pairs:
        raise InvalidSpec(spec.path, ["mechanism: no pair to audit (a(t) = 0: D_t has one dataset, nothing to test)"])
    relation: Relation = SemiAdjacent(ctx.relation, ctx.invariant, radius) if semi else ctx.relation
    claim = guarantee_of(claim_spec.guarantee, relation)
    curve = claimed_curve(claim)
    ball = _ball(ctx, res) if semi else None

    seed = ctx.draw_seed()
    n = m.draws if m.draws is not None else ctx.draw_count()
    conf = float(m.confidence if m.confidence is not None else DEFAULT_CONFIDENCE)
    sel = float(m.selection if m.selection is not None else DEFAULT_SELECTION)
    tol = float(m.invariant_tolerance if m.invariant_tolerance is not None else DEFAULT_TOLERANCE)
    todo = [k for k in range(len(pairs)) if k not in recorded]
    if todo:  # pairs without samples exist only with a callable (validate)
        ctx.required(m.callable, "mechanism.callable")
    sizes = round_sizes(n) if todo else [0]  # recorded releases only: one look
    alphas = spending(1.0 - conf, sizes) if todo else [1.0 - conf]
    stats_of = [pair_statistics(p, ball) for p in pairs]
    drawn = [Drawn.empty() for _ in pairs]
    for k, (yx, yxp) in recorded.items():
        drawn[k].add(0, yx, sel)
        drawn[k].add(1, yxp, sel)
    look_deadline = ctx.deadline - _report_reserve(ctx)
    per_row: float | None = None  # seconds per drawn row of the last look

    start = time.perf_counter()
    draw_seconds = 0.0
    rounds: list[AuditRound] = []
    history: list[list[Measured]] = []
    stop, note = "samples", ""
    look = Look([], [], per_bound_level(conf, m.tests), stats_of)
    repro: bool | None = None  # the first batch drawn twice from its stream gave the same releases
    batch_no = 0
    for r, target in enumerate(sizes):
        before = sizes[r - 1] if r else 0
        spans = [(lo, min(lo + m.batch, target)) for lo in range(before, target, m.batch)]
        tasks = [
            Task((k, side, batch_no + j), pairs[k].x if side == 0 else pairs[k].x_prime, hi - lo)
            for j, (lo, hi) in enumerate(spans)
            for k in todo
            for side in (0, 1)
        ]
        batch_no += len(spans)
        rows = 2 * target * len(pairs)
        draw_deadline = min(ctx.deadline - _draw_reserve(ctx), look_deadline - look_cost(per_row, rows))
        had = sum(d.count(0) + d.count(1) for d in drawn)
        t0 = time.perf_counter()
        stopped: str | None = None
        if tasks and time.monotonic() >= draw_deadline:
            stopped = "budget"
        elif tasks and pool is not None:
            try:
                got = pool.run(tasks, Budget.until(draw_deadline))
            except ReleaseFailure as e:
                raise _failure(spec.path, m.callable or "", e) from None
            stopped, note = got.stopped, got.note
            for i, t in enumerate(tasks):
                if i in got.done:
                    drawn[t.key[0]].add(t.key[1], got.done[i], sel)
            if r == 0 and 0 in got.done and stopped is None:  # the first batch again, from the same stream
                again = pool.run(tasks[:1], Budget.until(draw_deadline))
                repro = _same(got.done[0], again.done[0]) if 0 in again.done else None
        elif tasks:
            outs = run_tasks(
                draw_task,
                [(m.callable, spec.path, t.histogram, seed, t.key, t.n) for t in tasks],
                ctx.options.scheduler,
                deadline=draw_deadline,
            )
            for t, y in zip(tasks, outs):
                drawn[t.key[0]].add(t.key[1], y, sel)
            if r == 0 and outs:  # the first batch again, on the cluster (two copies: one task would run here)
                t = tasks[0]
                first = (m.callable, spec.path, t.histogram, seed, t.key, t.n)
                repro = _same(
                    outs[0], run_tasks(draw_task, [first, first], ctx.options.scheduler, deadline=draw_deadline)[0]
                )
        draw_seconds += time.perf_counter() - t0
        if stopped is not None and sum(d.count(0) + d.count(1) for d in drawn) == had:
            stop = stopped  # nothing new to look at: the previous look stands
            break
        t1 = time.monotonic()
        try:
            look = look_at(
                drawn,
                stats_of,
                curve.std,
                m.tests,
                alphas[r],
                cells,
                pairs if m.statistics == "all" else None,
                budget=Budget.until(look_deadline),
            )
        except OutOfTime:  # the previous look's bounds stand (each look is valid on its own)
            rounds.append(_round_row(r, target, drawn, todo, alphas[r], None, time.perf_counter() - start))
            stop = "budget"
            break
        per_row = (time.monotonic() - t1) / max(1, sum(d.count(0) + d.count(1) for d in drawn))
        history.append(look.measured)
        refuted = any(p.refutes for p in look.measured)
        rounds.append(_round_row(r, target, drawn, todo, alphas[r], look, time.perf_counter() - start))
        if refuted:
            stop = "refuted"
            break
        if stopped is not None:
            stop = stopped
            break
        nxt = 2 * sizes[r + 1] * len(pairs) if r + 1 < len(sizes) else 0
        if r + 1 < len(sizes) and time.monotonic() >= look_deadline - look_cost(per_row, nxt):
            stop = "budget"
            break
    if pool is not None:
        pool.close()  # nothing of the audited code runs past the draws
    measured, cands = look.measured, look.candidates
    seconds = time.perf_counter() - start
    samples = [(d.releases(0, cells), d.releases(1, cells)) for d in drawn]
    inv_outcome = _invariant_outcome(a_mat, pairs, samples, tol)

    evidence = _evidence(measured, look.stats, drawn, cells)
    outcome = _decide(measured, conf, m.tests, stop, note, evidence)
    total = sum(len(a) + len(b) for a, b in samples)
    eps_rows = []
    lows: list[tuple[float, float]] = []  # (delta, epsilon lower bound): the audit interpreter's evidence
    for d in ctx.deltas:
        lower = max((epsilon_lower(p.alpha_upper, p.beta_upper, d) for p in measured), default=0.0)
        lows.append((d, lower))
        ups = [e.epsilon for e in epsilon_delta(claim, d) if e.epsilon is not None]
        upper = min(ups) if ups else None
        eps_rows.append(
            EpsilonDeltaRow(
                d, lower, upper, None if upper is None else upper - lower,
                "claim (certified conversion of the claimed guarantee)",
            )
        )  # fmt: skip
    pair_rows = tuple(
        AuditPairRow.of(ap, (len(samples[k][0]), len(samples[k][1])), "recorded" if k in recorded else stop)
        for k, ap in enumerate(pairs)
    )
    section = AuditSection(
        method=(
            "threshold tests on a selection/measurement split, one-sided Clopper-Pearson bounds with a "
            "Bonferroni correction over the measured tests and the sequential looks [CP34, JUO20, NST21, LD83]"
        ),
        callable=m.callable,
        refuted=isinstance(outcome, Refuted),
        stop=stop,
        confidence=conf,
        tests=len(measured),
        per_bound_level=look.level,
        rounds=tuple(rounds),
        spending=AuditSpending(
            rule="linear alpha-spending (Lan-DeMets) with a Bonferroni bound over the looks: round k spends "
            "(1 - confidence) (N_k - N_(k-1)) / N of the error, each of its 2 x tests bounds a share of it",
            first_round=sizes[0],
            growth=GROWTH,
            planned_per_side=tuple(sizes),
            alphas=tuple(alphas),
        ),
        tradeoff_points=tuple(TradeoffPoint.of(p) for p in measured),
        epsilon_delta=tuple(eps_rows),
        draws=AuditDraws(
            per_side=n,
            drawn_per_side=min((min(len(a), len(b)) for a, b in samples), default=0),
            selection_share=sel,
            total=total,
            seconds=seconds,
            draw_seconds=draw_seconds,
            per_second=total / draw_seconds if draw_seconds > 0 else None,
        ),
        pairs=pair_rows,
        candidates=tuple(AuditCandidate.of(c) for c in cands),
        evidence=evidence,
        reproducible=repro,
        reproducibility=REPRODUCIBILITY[repro],
        claimed_curve="lower bound of the claim's tradeoff function (standard convention), "
        + f"{curve.n_vertices} vertices",
        note="a statistical audit refutes with confidence or does not refute; it never verifies",
    )
    return KindResult(
        release=ReleaseData(ctx.relation, ctx.invariant, black_box=BlackBox(claim, m.callable or "recorded releases")),
        audit=AuditEvidence(outcome, tuple(lows)),
        seed=seed,
        checks=(Check("statistical-audit", outcome), Check("invariant-preserved", inv_outcome)),
        sections=(section,),
        plots=(audit_plot(curve, measured, conf, history),),
    )


REPRODUCIBILITY = {
    True: "the first batch drawn again from its stream (--seed, pair, side, batch) gave the same releases: "
    "--seed reproduces the draws",
    False: "the first batch drawn again from its stream gave other releases: the function does not draw (only) "
    "from the rng it is given (e.g. the operating system's entropy, as OpenDP does), so "
    "--seed does not reproduce the draws or the verdict; the bounds hold at their confidence all the same",
    None: "not checked (recorded releases only, or the budget ran out before the first batch could be redrawn)",
}
"""``audit_lower_bound.reproducibility`` by ``audit_lower_bound.reproducible``."""


def _same(a: NDArray[Any], b: NDArray[Any]) -> bool:
    """The two batches hold the same releases, bit for bit (NaN equal to NaN)."""
    return a.shape == b.shape and a.dtype == b.dtype and bool(np.array_equal(a, b, equal_nan=a.dtype.kind == "f"))


def _round_row(
    r: int, target: int, drawn: list[Drawn], todo: list[int], alpha: float, look: Look | None, seconds: float
) -> AuditRound:
    """The report's ``rounds[]`` entry of round ``r`` (``look`` ``None``: its look was not made in time)."""
    return AuditRound(
        round=r + 1,
        planned_per_side=target,
        draws_per_side=min((drawn[k].count(s) for k in todo for s in (0, 1)), default=target),
        alpha=alpha,
        per_bound_level=None if look is None else look.level,
        refuted=False if look is None else any(p.refutes for p in look.measured),
        measured=look is not None,
        seconds=seconds,
    )


def _invariant_outcome(
    a_mat: NDArray[np.int64], pairs: list[AuditPair], samples: list[tuple[NDArray[Any], NDArray[Any]]], tol: float
) -> Outcome:
    """The invariant check on every audited release (exact for integer releases, else within ``tol``)."""
    details: list[str] = []
    for k, (pair, (yx, yxp)) in enumerate(zip(pairs, samples)):
        for h, y in ((pair.x, yx), (pair.x_prime, yxp)):
            if np.issubdtype(y.dtype, np.integer):
                out = exact_invariant_check(a_mat, h, y)
            else:
                out = _float_check(a_mat, h, y, tol)
            if isinstance(out, Refuted):
                return Refuted(f"pair {k}: {out.counterexample}")
            details.append("exact" if np.issubdtype(y.dtype, np.integer) else "float")
    n = sum(len(a) + len(b) for a, b in samples)
    if n == 0:  # the budget stopped the draws before any: nothing was checked, so nothing passes
        return Unknown("no release was drawn before the budget ran out: the invariant was not checked")
    kinds = sorted(set(details))
    return Verified(f"all {n} audited releases keep the invariant ({' and '.join(kinds)} check, tolerance {tol:g})")


def _float_check(a_mat: NDArray[np.int64], h: tuple[int, ...], y: NDArray[Any], tol: float) -> Outcome:
    """Every float release's A y equals A x within ``tol`` times the scale of A y (as
    :func:`verify.kinds.calibrated.invariant_check`, at the spec's tolerance)."""
    if a_mat.shape[0] == 0:
        return Verified("no invariant rows")
    x = np.array(h, dtype=np.float64)
    dev = np.abs(y.astype(np.float64) @ a_mat.T.astype(np.float64) - (a_mat @ x)[None, :])
    scale = max(1.0, float(np.abs(a_mat).sum(axis=1).max()) * float(np.abs(y).max(initial=0.0)))
    bad = int(np.count_nonzero(dev.max(axis=1) > tol * scale))
    worst = float(dev.max(initial=0.0))
    head = f"max |A y - A x| = {worst:.3g} over {len(y)} releases (tolerance {tol:g} x {scale:.3g})"
    if bad:
        return Refuted(f"{head}; {bad} releases break the invariant")
    return Verified(head)


STOPS = {
    "refuted": "a measured test refuted the claim",
    "samples": "every planned draw was made",
    "budget": "the time budget (--time-limit) ran out first",
    "memory": "the release function ran out of memory",
}
"""Why the draws stopped (``audit_lower_bound.stop`` and ``pairs[].stop``; recorded pairs: ``recorded``)."""


def _refuting(measured: list[Measured]) -> Measured | None:
    """The measured test furthest below the claimed curve, if any is below."""
    below = [p for p in measured if p.refutes]
    return min(below, key=lambda q: q.beta_upper - q.claimed_beta) if below else None


def _evidence(
    measured: list[Measured], stats_of: list[list[Statistic]], drawn: list[Drawn], cells: int
) -> Evidence | None:
    """What the refuting test counted (:mod:`verify.audit_evidence`), or ``None`` without a refutation."""
    p = _refuting(measured)
    if p is None:
        return None
    k = p.candidate.pair
    stat = next(s for s in stats_of[k] if s.name == p.candidate.statistic)
    return refutation_evidence(k, p, stat, drawn[k].measurement(0, cells), drawn[k].measurement(1, cells))


def _decide(
    measured: list[Measured], conf: float, tests: int, stop: str, note: str = "", evidence: Evidence | None = None
) -> Outcome:
    """Refuted when a measured point lies below the claimed curve; else not refuted at this sample size. A
    refutation names the outputs that carry it when ``evidence`` is given (:mod:`verify.audit_evidence`)."""
    p = _refuting(measured)
    if p is not None:
        why = f"; {evidence.sentence()}" if evidence is not None else ""
        return Refuted(
            f"a threshold test on pair {p.candidate.pair} ({p.candidate.statistic}, {p.draws} measured draws per "
            f"side) has alpha <= {p.alpha_upper:.4g} and beta <= {p.beta_upper:.4g} < {p.claimed_beta:.4g}, the "
            f"least type-II error the claim allows there; jointly at confidence {conf:g} over all tests and "
            f"sequential looks (Clopper-Pearson, Bonferroni, linear alpha-spending){why}"
        )
    why = STOPS.get(stop, stop) + (f" ({note})" if note else "")
    if not measured:
        return Unknown(
            f"not refuted: no test could be measured (stopped: {why}; a pair needs draws on both sides); a "
            "statistical audit never verifies"
        )
    best = max(measured, key=lambda q: q.claimed_beta - q.beta_upper)
    return Unknown(
        f"not refuted at this sample size ({best.draws} measured draws per side; stopped: {why}): no measured test "
        f"lies below the claimed curve at confidence {conf:g} (closest: pair {best.candidate.pair}, "
        f"{best.candidate.statistic}: beta <= {best.beta_upper:.4g} vs claimed {best.claimed_beta:.4g} at "
        f"alpha <= {best.alpha_upper:.4g}); a statistical audit never verifies"
    )


IMPLEMENTATION = ImplementationKind()

__all__ = [
    "IMPLEMENTATION",
    "ImplementationKind",
    "ImplementationSpec",
    "PairSpec",
    "SamplesSpec",
    "STOPS",
    "claimed_curve",
    "draw_task",
    "exact_invariant_check",
    "load_callable",
    "run_audit",
    "takes_size",
]
