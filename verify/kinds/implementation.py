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
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any, Optional

import numpy as np
from numpy.typing import NDArray

from semidp.accountant.conversion_routes import epsilon_delta, to_tradeoff
from semidp.accountant.conversions import rdp_to_approx_dp
from semidp.accountant.errors import InvalidSpec, SearchTooLarge
from semidp.accountant.guarantees import RDP, Guarantee
from semidp.accountant.knorm import KNormBall
from semidp.accountant.knorm_cache import cached_knorm_ball
from semidp.accountant.outcome import Outcome, Refuted, Unknown, Verified
from semidp.accountant.relations import Relation, SemiAdjacent
from semidp.accountant.tradeoff import TradeoffCurve
from semidp.verify.audit_pairs import AuditPair, check_pair, distance_of, dp_pairs, pair_statistics, semi_pairs
from semidp.verify.audit_report import AuditSection, audit_plot
from semidp.verify.context import Context, KindResult
from semidp.verify.dask_client import run_tasks
from semidp.verify.registry import Problem
from semidp.verify.report import Check
from semidp.verify.spec import MechanismSpec, Spec, cell_count, documented
from semidp.verify.spec_values import guarantee_of
from semidp.verify.threshold_audit import (
    Candidate,
    Measured,
    choose,
    epsilon_lower,
    measure,
    per_bound_level,
    select,
    split_sizes,
)

FloatArray = NDArray[np.float64]
Release = Callable[..., Any]

#: Defaults of the audit keys.
DEFAULT_CONFIDENCE = Fraction(95, 100)
DEFAULT_SELECTION = Fraction(1, 2)
DEFAULT_TOLERANCE = Fraction(1, 10**9)


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
    invariant_tolerance: Optional[Fraction] = documented(
        "Relative tolerance of the invariant check for float releases (default 1e-9; integers: exact).",
        default=None,
    )
    pairs: tuple[PairSpec, ...] = documented("Pairs to audit besides (or instead of) the built ones.", default=())


def _callable_problems(name: str) -> list[Problem]:
    mod, sep, fn = name.rpartition(":")
    if not sep or not mod or not fn.isidentifier():
        return [Problem("mechanism.callable", f"{name!r} is not 'package.module:function' or 'file.py:function'")]
    return []


@dataclass(frozen=True)
class ImplementationKind:
    """The ``implementation`` kind (module docstring)."""

    name: str = "implementation"
    spec_type: type[ImplementationSpec] = ImplementationSpec
    frameworks: tuple[str, ...] = ("dp", "semi-dp")
    reports_sensitivity: bool = False

    def default_framework(self, spec: Spec) -> str:
        """``semi-dp``."""
        return "semi-dp"

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
        for name, count, low in (("draws", m.draws, 2), ("max_pairs", m.max_pairs, 1), ("tests", m.tests, 1)):
            if count is not None and count < low:
                probs.append(Problem(f"mechanism.{name}", f"must be >= {low}, got {count}"))
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
    """Import ``mechanism.callable``; without ``--allow-code`` raise :class:`InvalidSpec` naming key and flag."""
    if not allow_code:
        raise InvalidSpec(
            spec_path,
            [
                f"mechanism.callable = {name!r} names code to import and run; rerun with --allow-code if you "
                "trust it (a spec never runs code without it)"
            ],
        )
    mod_name, _, fn_name = name.rpartition(":")
    try:
        if mod_name.endswith(".py"):
            file = Path(mod_name)
            if not file.is_absolute():
                file = Path(spec_path).parent / file
            loader_spec = importlib.util.spec_from_file_location(f"semidp_audited_{file.stem}", file)
            if loader_spec is None or loader_spec.loader is None:
                raise ImportError(f"cannot load {file}")
            module = importlib.util.module_from_spec(loader_spec)
            loader_spec.loader.exec_module(module)
        else:
            if "" not in sys.path and str(Path.cwd()) not in sys.path:  # like `python -m`: the working directory
                sys.path.append(str(Path.cwd()))
            module = importlib.import_module(mod_name)
        fn = getattr(module, fn_name)
    except (ImportError, AttributeError, OSError) as e:
        raise InvalidSpec(spec_path, [f"mechanism.callable = {name!r} cannot be imported: {e}"]) from None
    if not callable(fn):
        raise InvalidSpec(spec_path, [f"mechanism.callable = {name!r} is not callable"])
    return fn  # type: ignore[no-any-return]


def takes_size(fn: Release) -> bool:
    """Whether ``fn`` accepts a ``size=`` keyword (then it is called in batches)."""
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False
    return "size" in params or any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())


def draw(
    fn: Release, histogram: tuple[int, ...], rng: np.random.Generator, n: int, *, batch: int, path: str, name: str
) -> NDArray[Any]:
    """``n`` releases at ``histogram`` as an ``(n, cells)`` array (batched when ``fn`` takes ``size=``)."""
    h = np.array(histogram, dtype=np.int64)
    h.flags.writeable = False
    d = h.size

    def bad(what: str) -> InvalidSpec:
        return InvalidSpec(path, [f"mechanism.callable = {name!r} {what}"])

    if takes_size(fn):
        parts = []
        for start in range(0, n, batch):
            b = min(batch, n - start)
            out = np.asarray(fn(h, rng, size=b))
            if out.shape != (b, d):
                raise bad(f"returned shape {out.shape} for size={b}; expected ({b}, {d})")
            parts.append(out)
        res = np.concatenate(parts) if parts else np.empty((0, d))
    else:
        rows = [np.asarray(fn(h, rng)) for _ in range(n)]
        if rows and any(r.shape != (d,) for r in rows):
            raise bad(f"returned shape {next(r.shape for r in rows if r.shape != (d,))}; expected ({d},)")
        res = np.stack(rows) if rows else np.empty((0, d))
    if not (np.issubdtype(res.dtype, np.integer) or np.issubdtype(res.dtype, np.floating)):
        raise bad(f"returned dtype {res.dtype}; expected integers or floats")
    if np.issubdtype(res.dtype, np.floating) and not np.all(np.isfinite(res)):
        raise bad("returned a non-finite value")
    return res


def draw_task(
    callable_name: str, spec_path: str, histogram: tuple[int, ...], seed: tuple[int, ...], n: int, batch: int
) -> NDArray[Any]:
    """``n`` releases of the named callable at ``histogram`` from ``default_rng(seed)`` (module level: a Dask
    task; the parent checked ``--allow-code`` before any task was made)."""
    fn = load_callable(callable_name, spec_path, True)
    return draw(fn, histogram, np.random.default_rng(list(seed)), n, batch=batch, path=spec_path, name=callable_name)


def exact_invariant_check(a_mat: NDArray[np.int64], hist: tuple[int, ...], draws: NDArray[Any]) -> Outcome:
    """A y = A x for every integer release, in exact integer arithmetic (Python ints: no overflow)."""
    if a_mat.shape[0] == 0:
        return Verified(f"no invariant rows; {len(draws)} releases trivially keep it")
    target = a_mat.astype(object) @ np.array(hist, dtype=object)
    got = draws.astype(object) @ a_mat.T.astype(object)
    bad = int(sum(1 for row in got if any(g != t for g, t in zip(row, target))))
    if bad:
        return Refuted(f"{bad} of {len(draws)} integer releases have A y != A x (exact integer arithmetic)")
    return Verified(f"A y = A x exactly for all {len(draws)} integer releases")


def load_samples(spec_path: str, key: str, file: str, cells: int) -> NDArray[Any]:
    """A pre-recorded ``.npy`` of releases, ``(draws, cells)``; :class:`InvalidSpec` naming ``key`` otherwise."""
    p = Path(file)
    if not p.is_absolute():
        p = Path(spec_path).parent / p
    try:
        arr: NDArray[Any] = np.asarray(np.load(p, allow_pickle=False))
    except (OSError, ValueError) as e:
        raise InvalidSpec(spec_path, [f"{key} = {file!r}: cannot be read: {e}"]) from None
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
        ball, _ = cached_knorm_ball(space, time_limit=max(1.0, 0.2 * ctx.remaining()))
    except (SearchTooLarge, MemoryError):
        return None
    return ball if ball.symmetry is None or len(ball.facets) == ball.facet_count else None


def run_audit(ctx: Context) -> KindResult:
    """The ``implementation`` kind's run (module docstring)."""
    m = ctx.mechanism(ImplementationSpec)
    spec = ctx.spec
    if spec.claim is None:  # validate() requires it
        raise TypeError("an implementation spec without a claim passed validation")
    semi = ctx.framework == "semi-dp"
    a_mat = ctx.invariant.matrix(ctx.space)
    cells = ctx.space.n_cells
    radius = ctx.a.value if ctx.a.exact else ctx.a.lower
    fn = load_callable(m.callable, spec.path, ctx.allow_code) if m.callable is not None else None
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
    if fn is not None and table is not None:
        if semi:
            built, radius, res = semi_pairs(
                ctx.space, ctx.invariant, ctx.relation, ctx.a, table, max_pairs=m.max_pairs, time_limit=ctx.remaining()
            )
        else:
            built = dp_pairs(table, ctx.relation, max_pairs=m.max_pairs)
        pairs += built
    if not pairs:
        raise InvalidSpec(spec.path, ["mechanism: no pair to audit (a(t) = 0: D_t has one dataset, nothing to test)"])
    relation: Relation = SemiAdjacent(ctx.relation, ctx.invariant, radius) if semi else ctx.relation
    claim = guarantee_of(spec.claim.guarantee, relation)
    curve = claimed_curve(claim)
    ball = _ball(ctx, res) if semi else None

    seed = ctx.draw_seed()
    n = m.draws if m.draws is not None else ctx.draw_count()
    conf = float(m.confidence if m.confidence is not None else DEFAULT_CONFIDENCE)
    sel = float(m.selection if m.selection is not None else DEFAULT_SELECTION)
    tol = float(m.invariant_tolerance if m.invariant_tolerance is not None else DEFAULT_TOLERANCE)
    level = per_bound_level(conf, m.tests)

    start = time.perf_counter()
    todo = [k for k in range(len(pairs)) if k not in recorded]
    if todo and (fn is None or m.callable is None):  # pairs without samples exist only with a callable (validate)
        raise TypeError("a pair without samples and no callable passed validation")
    # one task per (pair, side), seeded [seed, pair, side]: the draws do not depend on where they run
    tasks = [
        (m.callable, spec.path, h, (seed, k, side), n, m.batch)
        for k in todo
        for side, h in enumerate((pairs[k].x, pairs[k].x_prime))
    ]
    drawn = iter(run_tasks(draw_task, tasks, ctx.scheduler, deadline=ctx.deadline))
    samples: list[tuple[NDArray[Any], NDArray[Any]]] = [
        recorded[k] if k in recorded else (next(drawn), next(drawn)) for k in range(len(pairs))
    ]
    draw_seconds = time.perf_counter() - start

    inv_outcome = _invariant_outcome(a_mat, pairs, samples, tol)

    cands: list[Candidate] = []
    stats_of = [pair_statistics(p, ball) for p in pairs]
    splits = []
    for k, (yx, yxp) in enumerate(samples):
        fx, fxp = yx.astype(np.float64), yxp.astype(np.float64)
        s0, m0 = split_sizes(len(fx), sel)
        s1, m1 = split_sizes(len(fxp), sel)
        splits.append((fx[s0:], fxp[s1:]))
        cands += select(k, stats_of[k], fx[:s0], fxp[:s1], curve.std, n_measure=min(m0, m1), level=level)
    chosen = choose(cands, m.tests)
    measured: list[Measured] = []
    for c in chosen:
        stat = next(s for s in stats_of[c.pair] if s.name == c.statistic)
        measured.append(measure(c, stat, splits[c.pair][0], splits[c.pair][1], curve.std, level=level))
    seconds = time.perf_counter() - start

    outcome = _decide(measured, conf, len(chosen))
    total = sum(len(a) + len(b) for a, b in samples)
    eps_rows = []
    for d in ctx.deltas:
        lower = max((epsilon_lower(p.alpha_upper, p.beta_upper, d) for p in measured), default=0.0)
        ups = [e.epsilon for e in epsilon_delta(claim, d) if e.epsilon is not None]
        upper = min(ups) if ups else None
        eps_rows.append(
            {
                "delta": d,
                "epsilon_lower": lower,
                "epsilon_upper": upper,
                "gap": None if upper is None else upper - lower,
                "upper_source": "claim (certified conversion of the claimed guarantee)",
            }
        )
    section = {
        "method": (
            "threshold tests on a selection/measurement split, one-sided Clopper-Pearson bounds with a "
            "Bonferroni correction over the measured tests [CP34, JUO20, NST21]"
        ),
        "callable": m.callable,
        "refuted": isinstance(outcome, Refuted),
        "confidence": conf,
        "tests": len(chosen),
        "per_bound_level": level,
        "tradeoff_points": [p.to_json() for p in measured],
        "epsilon_delta": eps_rows,
        "draws": {
            "per_side": n,
            "selection_share": sel,
            "total": total,
            "seconds": seconds,
            "draw_seconds": draw_seconds,
            "per_second": total / draw_seconds if draw_seconds > 0 else None,
        },
        "pairs": [p.to_json() for p in pairs],
        "candidates": [
            {"pair": c.pair, "statistic": c.statistic, "threshold": c.threshold, "predicted_gap": c.predicted_gap}
            for c in cands
        ],
        "claimed_curve": "lower bound of the claim's tradeoff function (standard convention), "
        + f"{curve.n_vertices} vertices",
        "note": "a statistical audit refutes with confidence or does not refute; it never verifies",
    }
    return KindResult(
        advertised=claim,
        effective=claim,
        seed=seed,
        checks=(Check("statistical-audit", outcome), Check("invariant-preserved", inv_outcome)),
        sections=(AuditSection(section),),
        claim_override=outcome,
        certify_advertised=False,
        effective_extra={"source": "the claim: a black box has no certified guarantee; the audit bounds it below"},
        plots=(audit_plot(curve, measured, conf),),
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


def _decide(measured: list[Measured], conf: float, tests: int) -> Outcome:
    """Refuted when a measured point lies below the claimed curve; else not refuted at this sample size."""
    below = [p for p in measured if p.refutes]
    if below:
        p = min(below, key=lambda q: q.beta_upper - q.claimed_beta)
        return Refuted(
            f"a threshold test on pair {p.candidate.pair} ({p.candidate.statistic}, {p.draws} measured draws per "
            f"side) has alpha <= {p.alpha_upper:.4g} and beta <= {p.beta_upper:.4g} < {p.claimed_beta:.4g}, the "
            f"least type-II error the claim allows there; jointly at confidence {conf:g} over {tests} tests "
            "(Clopper-Pearson, Bonferroni)"
        )
    best = max(measured, key=lambda q: q.claimed_beta - q.beta_upper)
    return Unknown(
        f"not refuted at this sample size: no measured test lies below the claimed curve at confidence {conf:g} "
        f"(closest: pair {best.candidate.pair}, {best.candidate.statistic}: beta <= {best.beta_upper:.4g} vs "
        f"claimed {best.claimed_beta:.4g} at alpha <= {best.alpha_upper:.4g}); a statistical audit never verifies"
    )


IMPLEMENTATION = ImplementationKind()

__all__ = [
    "IMPLEMENTATION",
    "ImplementationKind",
    "ImplementationSpec",
    "PairSpec",
    "SamplesSpec",
    "claimed_curve",
    "draw",
    "exact_invariant_check",
    "load_callable",
    "run_audit",
    "takes_size",
]
