r"""Coupled lattice MCMC and L-lag convergence bounds (Biswas, Jacob & Vanetti 2019; DGGY 2023 Alg. 2-3).

* :class:`CoupledKernel` -- a coupling :math:`\bar K` of two copies of the
  :class:`~mechanisms.lattice_mcmc.LatticeSampler` kernel :math:`K`: the two
  proposals :math:`s+e,\ s'+e'` come from a coupling of the increment laws, and
  **one** uniform drives both accept tests. Three increment couplings:

  - ``"maximal"``: coordinate-wise maximal coupling of
    :math:`s_j+\mathrm{DG}(a_j)` and :math:`s'_j+\mathrm{DG}(a_j)` (rejection form,
    reference §3.5), which maximises :math:`\Pr[s^\star_j=s'^\star_j]`;
  - ``"crn"``: common random numbers, :math:`e'=e` (the difference
    :math:`s-s'` only changes when exactly one chain accepts);
  - ``"hybrid"`` (default): CRN while :math:`\|s-s'\|_\infty>` ``threshold``,
    the maximal coupling when the pair is that close.

  **Why every choice is a valid coupling.** Given the current pair, each rule
  draws :math:`e\sim\bigotimes_j\mathrm{DG}(a_j)` and :math:`e'\sim\bigotimes_j\mathrm{DG}(a_j)`
  marginally (CRN trivially; the maximal coupling by construction), and one
  :math:`V\sim U(0,1]` for both accept tests, which marginally is each chain's own
  accept uniform. The hybrid's choice between the two depends only on the
  current pair, so conditionally on the whole past each chain makes one step of
  :math:`K`: each marginal chain *is* the MH chain. All three are **faithful**:
  when :math:`s=s'` both give :math:`e=e'`, the same proposal and the same
  decision, so the chains stay together.
* :func:`meeting_times` -- BJV Alg. 1 [DGGY23, Alg. 3]: :math:`X_0,Y_0\sim\pi_0`
  independent, :math:`X` advanced by :math:`L` steps, then
  :math:`(X_t,Y_{t-L})\sim\bar K` until they meet at :math:`\tau`.
* :func:`tv_bound`, :func:`tv_bound_curve`, :func:`choose_burn_in` -- BJV
  Thm 2.5: :math:`d_{TV}(\pi_t,\pi)\le\mathbb E[\max(0,\lceil(\tau-L-t)/L\rceil)]`.

**What is and is not certified.** The inequality above is a theorem (given a
valid, faithful coupling and finite meeting times). The *number* reported is
its Monte Carlo estimate: the average over ``R`` independent meeting times
(``estimate``). ``upper`` adds a one-sided confidence adjustment (Hoeffding's
KL/Chernoff bound for the mean of [0, b]-valued variables, 1963 Thm 1) with
``b = max(1, largest observed term)``; it is a valid confidence bound **only if**
the terms never exceed that observed ``b``, which the sample suggests but
cannot prove (meeting times have unbounded support). Neither number is a
certificate; report ``R``, ``L``, the seed and the criterion with any
:math:`\delta'` charged through :func:`mechanisms.lattice_privacy.approximate_sampler_delta`.
The proposal pmfs used inside the maximal coupling are the exact DG formulas,
while the proposals come from a float sampler; the mismatch is at float
rounding level (~1e-16 per step).

References
----------
[BJV19] N. Biswas, P. E. Jacob, P. Vanetti, "Estimating Convergence of Markov
chains with L-Lag Couplings", NeurIPS 2019, arXiv:1905.09971: Alg. 1, Thm 2.5.
[DGGY23] Dharangutte, Gao, Gong, Yu, "Integer Subspace Differential Privacy",
AAAI-23, arXiv:2212.00936: Alg. 2-3 (reconstructed, docs/reference/subspace-integer-postprocessing.md §3.5).
[Hoe63] W. Hoeffding, "Probability inequalities for sums of bounded random
variables", JASA 58, 1963, Thm 1.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
from numpy.typing import NDArray

from semidp.accountant.core.arguments import check_in_interval, check_int
from semidp.accountant.core.budget import Budget, budget_argument
from semidp.accountant.core.errors import InvalidArgument
from semidp.accountant.core.progress import Progress
from semidp.mechanisms.lattice_mcmc import BudgetExhausted, LatticeSampler

__all__ = [
    "BurnIn",
    "CoupledKernel",
    "MeetingTimes",
    "TVBound",
    "choose_burn_in",
    "meeting_times",
    "tv_bound",
    "tv_bound_curve",
]

Coupling = Literal["hybrid", "maximal", "crn"]


class _Pairs:
    """Mutable state of coupled pairs: lattice coordinates, noise and energies of both chains."""

    def __init__(self, kernel: CoupledKernel, sx: NDArray[np.int64], sy: NDArray[np.int64]) -> None:
        t = kernel.sampler.target
        self.sx, self.sy = sx.astype(np.int64), sy.astype(np.int64)
        self.zx, self.zy = t.noise(self.sx), t.noise(self.sy)
        self.ex, self.ey = t.energy(self.zx), t.energy(self.zy)

    def keep(self, mask: NDArray[np.bool_]) -> None:
        for name in ("sx", "sy", "zx", "zy", "ex", "ey"):
            setattr(self, name, getattr(self, name)[mask])


@dataclass(frozen=True, eq=False)
class CoupledKernel:
    r"""Coupled MH kernel :math:`\bar K` on pairs of lattice states ([DGGY23, Alg. 2] as reconstructed; BJV19 §2).

    See the module docstring for the three increment couplings and why each
    keeps both marginals equal to the MH kernel and is faithful.

    Default hybrid threshold: ``max(2, ceil(6 sd))``, ``sd`` = the largest proposal
    s.d. :math:`\sqrt{2a}/(1-a)` (9 at :math:`a=e^{-1}`, 6 at :math:`e^{-1.5}`). On the
    4x4 table (200 pairs, L = 2000), threshold 3 doubled the meeting times, 9 matched
    the pure maximal coupling for l1, and for l2 the hybrid's bound at
    :math:`t=2\cdot10^4` was 0.15 against 1.7-1.9 for the pure maximal coupling. A
    joint maximal coupling of the whole proposal was tried and was far slower for l2.

    Examples
    --------
    >>> import numpy as np
    >>> from semidp.mechanisms.lattice_mcmc import LatticeLaplaceTarget, LatticeSampler
    >>> k = CoupledKernel(LatticeSampler(LatticeLaplaceTarget(np.array([[1], [-1]]), 0.25)))
    >>> s = np.array([[4], [0]])
    >>> x, y = k.step(s, s.copy(), rng=np.random.default_rng(1))
    >>> bool(np.array_equal(x, y))                          # faithful
    True
    """

    sampler: LatticeSampler
    """The single-chain sampler (target and proposal ratios)."""
    coupling: Coupling = "hybrid"
    """``"hybrid"``, ``"maximal"`` or ``"crn"``."""
    threshold: int = field(default=0)
    """Hybrid: use the maximal coupling when ``max_j |s_j - s'_j| <= threshold`` (lattice coordinates)."""

    def __init__(self, sampler: LatticeSampler, coupling: Coupling = "hybrid", threshold: int | None = None) -> None:
        if not isinstance(sampler, LatticeSampler):
            raise InvalidArgument(f"sampler={sampler!r} must be a LatticeSampler.")
        if coupling not in ("hybrid", "maximal", "crn"):
            raise InvalidArgument(f"coupling={coupling!r} must be 'hybrid', 'maximal' or 'crn'.")
        if threshold is None:
            a = sampler.ratio
            sd = float(np.max(np.sqrt(2.0 * a) / (1.0 - a)))  # proposal s.d. per coordinate
            threshold = max(2, math.ceil(6.0 * sd))
        object.__setattr__(self, "sampler", sampler)
        object.__setattr__(self, "coupling", coupling)
        object.__setattr__(self, "threshold", check_int("threshold", threshold))

    def step(
        self, sx: NDArray[np.int64], sy: NDArray[np.int64], *, rng: np.random.Generator
    ) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
        """One coupled step for every pair (rows of ``sx``, ``sy``: pairs x m); returns the new states."""
        m = self.sampler.target.m
        x, y = np.asarray(sx), np.asarray(sy)
        ok = x.dtype.kind == y.dtype.kind == "i" and x.ndim == 2 and x.shape[1] == m
        if not ok or x.shape != y.shape:
            raise InvalidArgument(f"sx, sy must be integer (pairs x {m}) arrays of one shape.")
        st = _Pairs(self, x, y)
        self._advance(st, rng)
        return st.sx, st.sy

    def _maximal(
        self,
        px: NDArray[np.int64],
        sx: NDArray[np.int64],
        sy: NDArray[np.int64],
        rng: np.random.Generator,
    ) -> NDArray[np.int64]:
        """Coordinate-wise maximal coupling: given X = px ~ sx + DG, return Y ~ sy + DG with P[X=Y] maximal."""
        log_a = self.sampler.log_ratio
        # Accept Y = X iff W p(X) <= q(X), p, q the DG pmfs centred at sx, sy (common constants cancel).
        logw = np.log1p(-rng.random(px.shape))
        same = logw <= log_a * (np.abs(px - sy) - np.abs(px - sx))
        py = px.copy()
        rows, cols = np.nonzero(~same)
        while rows.size:  # rejection: Y ~ q until W' q(Y) > p(Y)
            y = sy[rows, cols] + self.sampler.propose_coordinates(cols, rng=rng)
            logw2 = np.log1p(-rng.random(rows.size))
            good = logw2 > log_a[cols] * (np.abs(y - sx[rows, cols]) - np.abs(y - sy[rows, cols]))
            py[rows[good], cols[good]] = y[good]
            rows, cols = rows[~good], cols[~good]
        return py

    def _advance(self, st: _Pairs, rng: np.random.Generator) -> None:
        """One coupled step in place."""
        t = self.sampler.target
        n = st.sx.shape[0]
        e = self.sampler.propose(n, rng=rng)
        px = st.sx + e
        py = st.sy + e  # CRN
        if self.coupling != "crn":
            if self.coupling == "maximal":
                rows = np.arange(n)
            else:
                rows = np.flatnonzero(np.abs(st.sx - st.sy).max(axis=1) <= self.threshold)
            if rows.size:
                py[rows] = self._maximal(px[rows], st.sx[rows], st.sy[rows], rng)
        zxp = st.zx + t.increments(e)
        zyp = st.zy + t.increments(py - st.sy)
        exp_, eyp = t.energy(zxp), t.energy(zyp)
        thr = -np.log1p(-rng.random(n)) / t.scale  # one uniform for both accept tests
        okx = (exp_ - st.ex) <= thr
        oky = (eyp - st.ey) <= thr
        st.sx = np.where(okx[:, None], px, st.sx)
        st.zx = np.where(okx[:, None], zxp, st.zx)
        st.ex = np.where(okx, exp_, st.ex)
        st.sy = np.where(oky[:, None], py, st.sy)
        st.zy = np.where(oky[:, None], zyp, st.zy)
        st.ey = np.where(oky, eyp, st.ey)


@dataclass(frozen=True, eq=False)
class MeetingTimes:
    """L-lag meeting times of ``pairs`` independent coupled pairs (BJV19 Alg. 1)."""

    tau: NDArray[np.int64]
    """Meeting times (X-chain index t at which X_t = Y_{t-L}); for censored pairs, the last t run."""
    met: NDArray[np.bool_]
    """True where the pair met within the budget."""
    lag: int
    """The lag L."""
    coupling: str
    """Increment coupling used (``hybrid`` / ``maximal`` / ``crn``)."""
    threshold: int
    """Hybrid threshold (l-infinity distance in lattice coordinates)."""
    seconds: float
    """Wall time of the run."""

    @property
    def pairs(self) -> int:
        """Number of independent pairs R."""
        return int(self.tau.size)

    @classmethod
    def concatenate(cls, parts: Sequence[MeetingTimes]) -> MeetingTimes:
        """Independent batches of the same coupling as one sample (pairs in batch order; seconds summed)."""
        if not parts:
            raise InvalidArgument("concatenate needs at least one batch of meeting times.")
        first = parts[0]
        if any((p.lag, p.coupling, p.threshold) != (first.lag, first.coupling, first.threshold) for p in parts):
            raise InvalidArgument("batches of meeting times must share lag, coupling and threshold.")
        return cls(
            np.concatenate([p.tau for p in parts]),
            np.concatenate([p.met for p in parts]),
            first.lag,
            first.coupling,
            first.threshold,
            float(sum(p.seconds for p in parts)),
        )

    @property
    def censored(self) -> int:
        """Pairs that had not met when the budget ran out."""
        return int(np.sum(~self.met))


def meeting_times(
    sampler: LatticeSampler,
    *,
    lag: int,
    pairs: int,
    rng: np.random.Generator,
    coupling: Coupling = "hybrid",
    threshold: int | None = None,
    max_iterations: int = 10**6,
    budget: Budget | None = None,
    censor: bool = False,
    progress: bool = True,
    **legacy: float | None,
) -> MeetingTimes:
    r"""Sample ``pairs`` independent L-lag meeting times (BJV19 Alg. 1; [DGGY23, Alg. 3]).

    :math:`X_0,Y_0\sim\pi_0` (the proposal law) independently; :math:`X_1..X_L` by
    :math:`K`; then :math:`(X_t,Y_{t-L})\sim\bar K` for :math:`t=L+1,\dots` until
    :math:`X_t=Y_{t-L}`; :math:`\tau=t`. All pairs run vectorised; met pairs drop
    out.

    Parameters
    ----------
    lag:
        L >= 1.
    max_iterations, budget:
        Budget on t (X-chain index) and the wall-clock :class:`~semidp.accountant.core.budget.Budget` (default
        unlimited; the deprecated ``time_budget=`` seconds still works for one release).
    censor:
        If the budget ends first: ``False`` raises :class:`BudgetExhausted`,
        ``True`` returns a result with ``met == False`` for the censored pairs
        (which the TV functions refuse).
    """
    g = rng
    if not isinstance(g, np.random.Generator):
        raise InvalidArgument(f"rng={rng!r} must be a numpy.random.Generator.")
    L = check_int("lag", lag, minimum=1)
    R = check_int("pairs", pairs, minimum=1)
    t_max = check_int("max_iterations", max_iterations, minimum=L + 1)
    budget = budget_argument(budget, legacy, where="meeting_times", old="time_budget", zero_ok=True)
    kernel = CoupledKernel(sampler, coupling, threshold)
    t0 = time.monotonic()
    x0 = sampler.initial_states(R, rng=g)
    y0 = sampler.initial_states(R, rng=g)
    xl = sampler.run(x0, L, rng=g, progress=False).states
    st = _Pairs(kernel, xl, y0)
    tau = np.full(R, L, dtype=np.int64)
    met = np.zeros(R, dtype=np.bool_)
    active = np.arange(R)
    t = L
    with Progress(f"L-lag meeting times (L={L})", total=R) as bar:
        while active.size and t < t_max:
            if t % 64 == 0 and budget.expired:
                break
            t += 1
            kernel._advance(st, g)
            now = np.all(st.sx == st.sy, axis=1)
            if now.any():
                tau[active[now]] = t
                met[active[now]] = True
                keep = ~now
                active = active[keep]
                st.keep(keep)
            if progress and t % 256 == 0:
                bar.update(R - active.size, f"t={t}")
    tau[active] = t
    seconds = time.monotonic() - t0
    if active.size and not censor:
        raise BudgetExhausted(
            f"{active.size} of {R} pairs had not met at t={t} (max_iterations={t_max}, "
            f"{time.monotonic() - t0:.3g} s of the time budget); increase the budget, or pass censor=True to get "
            "the censored meeting times (which cannot bound the TV distance).",
            t,
        )
    return MeetingTimes(tau, met, L, kernel.coupling, kernel.threshold, seconds)


@dataclass(frozen=True)
class TVBound:
    """BJV19 Thm 2.5 bound at one iteration ``t`` (see the module docstring for what it certifies)."""

    t: int
    """Iteration (burn-in) of the chain."""
    estimate: float
    """Mean over pairs of max(0, ceil((tau - L - t)/L)): the Monte Carlo estimate of the bound."""
    upper: float
    """KL-Hoeffding upper confidence bound at ``confidence`` with range ``b`` (heuristic: b is observed)."""
    b: int
    """Range used: max(1, largest observed term)."""
    pairs: int
    """R, the number of meeting times."""
    lag: int
    """L."""
    confidence: float
    """One-sided confidence level of ``upper``."""


def _terms(mt: MeetingTimes, t: NDArray[np.int64]) -> NDArray[np.int64]:
    """max(0, ceil((tau - L - t)/L)) as an (len(t) x R) integer array."""
    if mt.censored:
        raise InvalidArgument(
            f"{mt.censored} of {mt.pairs} meeting times are censored; the TV bound needs all of "
            "them (a censored tau only gives a lower bound). Rerun meeting_times with a larger budget."
        )
    num = mt.tau[None, :] - mt.lag - t[:, None]
    return np.asarray(np.maximum(0, -((-num) // mt.lag)), dtype=np.int64)


def _kl_ucb(mean: float, n: int, confidence: float) -> float:
    """Largest q >= mean with n kl(mean, q) <= log(1/(1-confidence)) (Hoeffding 1963 Thm 1), by bisection."""
    if mean >= 1.0:
        return 1.0
    target = math.log(1.0 / (1.0 - confidence)) / n

    def kl(p: float, q: float) -> float:
        out = -(1.0 - p) * math.log1p(-q) + (1.0 - p) * math.log1p(-p) if p < 1 else 0.0
        return out + (p * math.log(p / q) if p > 0 else 0.0)

    lo, hi = mean, 1.0
    for _ in range(80):
        mid = 0.5 * (lo + hi)
        if mid >= 1.0 or kl(mean, mid) > target:
            hi = mid
        else:
            lo = mid
    return hi


def _bound(mt: MeetingTimes, t: int, terms: NDArray[np.int64], confidence: float) -> TVBound:
    est = float(terms.mean())
    b = max(1, int(terms.max(initial=0)))
    upper = min(float(b), b * _kl_ucb(est / b, mt.pairs, confidence))
    return TVBound(t, est, upper, b, mt.pairs, mt.lag, confidence)


def tv_bound(mt: MeetingTimes, t: int, *, confidence: float = 0.95) -> TVBound:
    r"""BJV19 Thm 2.5 at iteration ``t``: :math:`d_{TV}(\pi_t,\pi)\le\mathbb E\max(0,\lceil(\tau-L-t)/L\rceil)`.

    Returns the Monte Carlo estimate and a (heuristic) upper confidence bound;
    see the module docstring. Values above 1 are possible (the bound is then
    uninformative).
    """
    tt = check_int("t", t)
    c = check_in_interval("confidence", confidence, 0.0, 1.0, lo_open=True, hi_open=True)
    return _bound(mt, tt, _terms(mt, np.array([tt], dtype=np.int64))[0], c)


def tv_bound_curve(mt: MeetingTimes, ts: NDArray[np.int64]) -> NDArray[np.float64]:
    """The estimate of :func:`tv_bound` at every ``t`` in ``ts`` (non-increasing in t)."""
    arr = np.asarray(ts)
    if arr.ndim != 1 or not np.issubdtype(arr.dtype, np.integer) or np.any(arr < 0):
        raise InvalidArgument("ts must be a 1-D array of non-negative integers.")
    return np.asarray(_terms(mt, arr.astype(np.int64)).mean(axis=1), dtype=np.float64)


@dataclass(frozen=True)
class BurnIn:
    """Burn-in chosen by :func:`choose_burn_in`."""

    t: int
    """The burn-in t*."""
    bound: TVBound
    """The BJV bound at t* (its ``criterion`` field is <= the requested delta)."""
    criterion: str
    """``"upper"`` (confidence-adjusted) or ``"estimate"``."""
    delta_tv: float
    """The requested TV level delta'."""


def choose_burn_in(
    mt: MeetingTimes,
    delta_tv: float,
    *,
    criterion: Literal["upper", "estimate"] = "upper",
    confidence: float = 0.95,
) -> BurnIn:
    r"""Smallest t whose BJV bound is <= ``delta_tv`` (bisection on t).

    ``criterion="upper"`` (default, the conservative choice) uses the
    confidence-adjusted value; with all terms zero it is
    :math:`1-(1-\mathrm{confidence})^{1/R}`, so ``delta_tv`` below that needs more
    pairs (the error says how many). ``"estimate"`` uses the plain Monte Carlo
    estimate (monotone in t, so the bisection finds the exact smallest t). For
    ``"upper"`` the bisection assumes monotonicity, and the returned t always
    satisfies the criterion. Neither is a certificate (module docstring).
    """
    d = check_in_interval("delta_tv", delta_tv, 0.0, 1.0, lo_open=True)
    c = check_in_interval("confidence", confidence, 0.0, 1.0, lo_open=True, hi_open=True)
    if criterion not in ("upper", "estimate"):
        raise InvalidArgument(f"criterion={criterion!r} must be 'upper' or 'estimate'.")

    def value(t: int) -> TVBound:
        return _bound(mt, t, _terms(mt, np.array([t], dtype=np.int64))[0], c)

    def ok(t: int) -> bool:
        bd = value(t)
        return (bd.upper if criterion == "upper" else bd.estimate) <= d

    hi = max(0, int(mt.tau.max()) - mt.lag)  # every term is 0 from here on
    if not ok(hi):
        floor = 1.0 - (1.0 - c) ** (1.0 / mt.pairs)
        need = math.ceil(math.log(1.0 - c) / math.log1p(-d))
        raise InvalidArgument(
            f"delta_tv={delta_tv} is below what {mt.pairs} pairs can show at confidence {c} "
            f"(smallest upper bound {floor:.4g}); use at least {need} pairs or criterion='estimate'."
        )
    lo = -1  # ok(lo) false or lo = -1
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if ok(mid):
            hi = mid
        else:
            lo = mid
    return BurnIn(hi, value(hi), criterion, d)
