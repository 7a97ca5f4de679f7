r"""Generalized Laplace / Gaussian noise on an integer lattice by MCMC (Dharangutte et al. 2023).

The noise lattice of an integer-subspace-DP release is
:math:`\Lambda=\{\mathbf Cs: s\in\mathbb Z^m\}` for an integer basis matrix
``C`` (d x m, columns = basis vectors of :math:`\ker\mathbf A\cap\mathbb Z^d`;
``docs/reference/subspace-integer-postprocessing.md`` §3.2). Targets, in lattice
coordinates :math:`s` (``z = C s``), defined in :mod:`mechanisms.lattice_targets`
and re-exported here:

* :class:`LatticeLaplaceTarget` -- :math:`q_\varepsilon(z)\propto e^{-\varepsilon\|z\|_p}`,
  :math:`p\in\{1,2\}` ([DGGY23, Def. 9], the generalized Laplace mechanism);
* :class:`LatticeGaussianTarget` -- :math:`\propto e^{-\|z\|_2^2/(2\sigma^2)}`, centre 0
  ([DGGY23, Def. 13], the generalized Gaussian mechanism).

:class:`LatticeSampler` is [DGGY23, Alg. 1] as reconstructed in reference §3.5
("Gibbs-within-Metropolis"): the proposal is :math:`s^\star=s+e` with
independent :math:`e_j\sim\mathrm{DG}(a_j)` (all coordinates drawn at once, the
"Gibbs sweep"), followed by **one** Metropolis accept/reject per sweep with
probability :math:`\min(1,\pi(s^\star)/\pi(s))`. The proposal is symmetric, so
only the target ratio enters; it charges every lattice point, so the chain is
irreducible and aperiodic on :math:`\Lambda` and :math:`\pi` is its unique
invariant law. The chain is only *approximately* at :math:`\pi` after a finite
burn-in: use :mod:`mechanisms.coupling` to bound the total variation and
:mod:`mechanisms.lattice_privacy` to charge the resulting :math:`\delta`.

Numerics
--------
* States ``s`` and noise ``z`` are exact ``int64``; ``z`` is updated
  incrementally (``z += C e``), and every block of iterations is checked
  against an int64-safe magnitude bound before it runs (InvalidArgument if a
  chain could leave it).
* Proposals use a *floating-point* double-geometric sampler
  (:func:`double_geometric_float`): the magnitude is an inversion of one uniform,
  the sign an independent fair bit, so the proposal is **exactly symmetric**
  (what Metropolis needs) while its magnitude law equals :math:`\mathrm{DG}(a)`
  only up to float rounding (~1e-16 relative), which affects efficiency, not
  the invariant law. The accept test ``energy(s*) - energy(s) <= -log(V)/scale``
  (``V`` uniform on (0, 1]) is evaluated in float64; energies are exact
  integers for the l1 and Gaussian targets.

Samplers are for research and auditing: not hardened against timing or
floating-point side channels (Jin et al. 2022).

References
----------
[DGGY23] P. Dharangutte, J. Gao, R. Gong, F.-Y. Yu, "Integer Subspace
Differential Privacy", AAAI-23, arXiv:2212.00936 (AAAI numbering): Def 9,
Def 13, Alg. 1 (reconstructed, reference §3.5).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import ArrayLike, NDArray

from semidp.accountant.core.arguments import check_int, check_positive, check_rng
from semidp.accountant.core.budget import Budget, budget_argument
from semidp.accountant.core.errors import BudgetExhausted, InvalidArgument
from semidp.accountant.core.progress import Progress
from semidp.mechanisms.lattice_targets import LatticeGaussianTarget, LatticeLaplaceTarget, LatticeTarget

__all__ = [
    "BudgetExhausted",
    "ChainRun",
    "LatticeGaussianTarget",
    "LatticeLaplaceTarget",
    "LatticeSampler",
    "LatticeTarget",
    "double_geometric_float",
    "release_histogram",
]

#: Bound on -log V for the uniform V >= 2**-54 of the float DG sampler: magnitudes are
#: below _LOG_UMIN / (-log a).
_LOG_UMIN = 54.0 * math.log(2.0) + 1.0
#: Elements per block of pre-drawn proposals (blocks trade memory for fewer numpy calls).
_BLOCK_ELEMENTS = 1 << 17


# --------------------------------------------------------------------------- proposals


def _dg_float(log_a: NDArray[np.float64], shape: tuple[int, ...], rng: np.random.Generator) -> NDArray[np.float64]:
    """Float DG(a) draws as float64 integers; ``log_a`` broadcasts against ``shape`` (last axis).

    One raw 64-bit word per draw: bit 0 is the sign, bits 11..63 give
    ``V`` in (0, 1] (exactly independent of the sign bit, so the law is exactly
    symmetric); magnitude ``floor(log(V (1+a)/2) / log a)``, i.e.
    ``P(|e| >= k) = 2a^k/(1+a)`` for ``k >= 1`` (up to float rounding).
    """
    raw = rng.bit_generator.random_raw(math.prod(shape)).view(np.int64).reshape(shape)
    v = (raw >> 11).astype(np.float64)  # in [-2**52, 2**52)
    v += 2.0**52 + 0.5
    v *= 2.0**-53  # in (0, 1]
    np.log(v, out=v)
    v += np.log1p(np.exp(log_a)) - math.log(2.0)
    v /= log_a  # >= 0
    np.floor(v, out=v)
    bits = v.view(np.int64)
    bits ^= raw << 63  # flip the float sign bit where bit 0 of raw is set
    v += 0.0  # turn -0.0 into 0.0
    return v


def _dg_draw(log_a: NDArray[np.float64], shape: tuple[int, ...], rng: np.random.Generator) -> NDArray[np.int64]:
    """:func:`_dg_float` as int64."""
    return _dg_float(log_a, shape, rng).astype(np.int64)


def double_geometric_float(ratio: float, size: int | tuple[int, ...], *, rng: np.random.Generator) -> NDArray[np.int64]:
    r"""Fast floating-point draws of :math:`\mathrm{DG}(a)`, :math:`\Pr[x]=\frac{1-a}{1+a}a^{|x|}`.

    The proposal sampler of :class:`LatticeSampler` (reference §3.5: a float
    sampler is fine for MCMC proposals). Exactly symmetric (independent sign
    bit); the magnitude law matches DG(a) up to float rounding. For an exact
    sampler use :func:`mechanisms.discrete.double_geometric`.

    Parameters
    ----------
    ratio:
        :math:`a\in(0,1)`; variance :math:`2a/(1-a)^2`, :math:`\Pr[0]=(1-a)/(1+a)`.
    size:
        Output shape.
    rng:
        The random generator.
    """
    a = _check_ratio("ratio", ratio)
    shape = (size,) if isinstance(size, int) else tuple(size)
    if any(k < 0 for k in shape):
        raise InvalidArgument(f"size={size!r} must be non-negative.")
    return _dg_draw(np.full(shape[-1:] or (1,), math.log(a)), shape, check_rng(rng))


def _check_ratio(name: str, value: object) -> float:
    a = check_positive(name, value)
    if not a < 1.0:
        raise InvalidArgument(f"{name}={value!r} must be in (0, 1).")
    return a


# --------------------------------------------------------------------------- sampler


@dataclass(frozen=True, eq=False)
class ChainRun:
    """Output of :meth:`LatticeSampler.run` (all arrays exact int64)."""

    states: NDArray[np.int64]
    """Final lattice coordinates ``s`` (chains x m)."""
    noise: NDArray[np.int64]
    """Final noise ``z = C s`` (chains x d)."""
    draws: NDArray[np.int64]
    """Recorded noise ``z`` (records x chains x d), iterations ``burn_in + thin*k``, k >= 1."""
    iterations: int
    """Iterations completed (less than requested only if ``stopped_early``)."""
    acceptance_rate: float
    """Fraction of accepted proposals over all chains and iterations."""
    stopped_early: bool
    """True if the time budget ran out first."""
    ratio: NDArray[np.float64] = field(repr=False)
    """Proposal ratios a_j used (length m)."""


@dataclass(frozen=True, eq=False)
class LatticeSampler:
    r"""Gibbs-within-Metropolis sampler for a lattice target ([DGGY23, Alg. 1], reconstructed in reference §3.5).

    One iteration, for every chain at once: :math:`e_j\sim\mathrm{DG}(a_j)`
    independently, :math:`s^\star=s+e`, accept with probability
    :math:`\min(1,\exp(\log\pi(s^\star)-\log\pi(s)))`. Vectorised over chains;
    proposals are drawn in blocks. Initial law :math:`\pi_0` = the proposal law
    (:math:`s_{0,j}\sim\mathrm{DG}(a_j)`), as in the paper's experiments.

    Examples
    --------
    >>> import numpy as np
    >>> C = np.array([[1, 0], [-1, 1], [0, -1]])          # single total, d = 3
    >>> smp = LatticeSampler(LatticeLaplaceTarget(C, 0.25))
    >>> z = smp.sample(5, burn_in=200, rng=np.random.default_rng(0))
    >>> z.shape, bool(np.all(z.sum(axis=1) == 0))
    ((5, 3), True)
    """

    target: LatticeTarget
    """The lattice target."""
    ratio: NDArray[np.float64] = field(repr=False)
    """Proposal ratios a_j in (0, 1), one per lattice coordinate."""

    def __init__(self, target: LatticeTarget, ratio: float | ArrayLike | None = None) -> None:
        if not isinstance(target, LatticeTarget):
            raise InvalidArgument(f"target={target!r} must be a LatticeTarget.")
        if ratio is None:
            arr = np.full(target.m, target.default_ratio())
        else:
            arr = np.broadcast_to(np.asarray(ratio, dtype=np.float64), (target.m,)).copy()
            for j, a in enumerate(arr):
                _check_ratio(f"ratio[{j}]", float(a))
        arr.setflags(write=False)
        object.__setattr__(self, "target", target)
        object.__setattr__(self, "ratio", arr)
        step = math.ceil(_LOG_UMIN / float(np.min(-np.log(arr))))
        row = int(np.abs(target.C).sum(axis=1).max())
        if step * row >= 2**52:
            raise InvalidArgument("ratio too close to 1: proposal steps could exceed 2**52.")

    @property
    def log_ratio(self) -> NDArray[np.float64]:
        """log a_j (negative)."""
        return np.log(self.ratio)

    @property
    def max_step(self) -> int:
        """A bound on ``max_i |(C e)_i|`` for any single proposal ``e`` the float sampler can return."""
        step = math.ceil(_LOG_UMIN / float(np.min(-self.log_ratio)))
        return step * int(np.abs(self.target.C).sum(axis=1).max())

    def initial_states(self, chains: int, *, rng: np.random.Generator) -> NDArray[np.int64]:
        """``chains`` independent draws from pi_0 = the proposal law (chains x m)."""
        n = check_int("chains", chains, minimum=1)
        return _dg_draw(self.log_ratio, (n, self.target.m), check_rng(rng))

    def propose(self, n: int, *, rng: np.random.Generator) -> NDArray[np.int64]:
        """``n`` proposal increments ``e`` (n x m), ``e_j ~ DG(a_j)`` (float sampler)."""
        return _dg_draw(self.log_ratio, (n, self.target.m), rng)

    def propose_coordinates(self, cols: NDArray[np.intp], *, rng: np.random.Generator) -> NDArray[np.int64]:
        """One increment ``e ~ DG(a_c)`` for each coordinate index ``c`` in ``cols``."""
        return _dg_draw(self.log_ratio[cols], (cols.shape[0],), rng)

    def run(
        self,
        states: NDArray[np.int64],
        iterations: int,
        *,
        rng: np.random.Generator,
        burn_in: int = 0,
        thin: int = 0,
        budget: Budget | None = None,
        progress: bool = True,
        **legacy: float | None,
    ) -> ChainRun:
        """Advance ``states`` (chains x m) by ``iterations`` MH steps.

        Parameters
        ----------
        states:
            Initial lattice coordinates (not modified).
        iterations:
            Number of sweeps.
        burn_in, thin:
            With ``thin >= 1``, record ``z`` after iterations ``burn_in + thin*k``
            (``k >= 1``); ``thin = 0`` records nothing.
        budget:
            The wall-clock :class:`~semidp.accountant.core.budget.Budget` (default unlimited; the deprecated
            ``time_budget=`` seconds still works for one release); stop early (``stopped_early=True``) when it
            expires.
        progress:
            Show a progress line on a TTY (``accountant.core.progress``).
        """
        g = check_rng(rng)
        n_it = check_int("iterations", iterations)
        b = check_int("burn_in", burn_in)
        th = check_int("thin", thin)
        budget = budget_argument(budget, legacy, where="LatticeSampler.run", old="time_budget", zero_ok=True)
        t = self.target
        s0 = np.asarray(states)
        if s0.ndim != 2 or s0.shape[1] != t.m or not np.issubdtype(s0.dtype, np.integer):
            raise InvalidArgument(f"states must be an integer (chains x {t.m}) array; got {s0.shape}.")
        n = s0.shape[0]
        s = s0.astype(np.int64, copy=True)
        z = t.noise(s)
        energy = t.energy(z)
        n_rec = (n_it - b) // th if th and n_it > b else 0
        draws = np.empty((n_rec, n, t.d), dtype=np.int64)
        log_a = self.log_ratio
        inv_scale = 1.0 / t.scale
        max_step = self.max_step
        block = max(1, min(1024, _BLOCK_ELEMENTS // max(1, n * t.m)))
        zp = np.empty_like(z)
        work = np.empty_like(z)
        ep = energy.copy()
        diff = energy.copy()
        accepted = 0
        done = 0
        rec = 0
        stopped = False
        with Progress("lattice MCMC", total=n_it) as bar:
            while done < n_it:
                if budget.expired:
                    stopped = True
                    break
                k_blk = min(block, n_it - done)
                if int(np.abs(z).max(initial=0)) + k_blk * max_step > t.magnitude_limit:
                    raise InvalidArgument(
                        f"noise magnitude could exceed the int64-safe limit {t.magnitude_limit}; "
                        "the target is too wide for exact int64 arithmetic."
                    )
                e = _dg_float(log_a, (k_blk, n, t.m), g)
                ce = t.increments(e.reshape(-1, t.m)).reshape(k_blk, n, t.d)  # exact: < 2**52
                thr = np.log1p(-g.random((k_blk, n)))
                thr *= -inv_scale  # accept iff energy(s*) - energy(s) <= -log(V) / scale
                oks = np.empty((k_blk, n), dtype=np.bool_)
                for k in range(k_blk):
                    np.add(z, ce[k], out=zp)
                    t.energy_into(zp, work, ep)
                    np.subtract(ep, energy, out=diff)
                    ok = oks[k]
                    np.less_equal(diff, thr[k], out=ok)
                    np.copyto(z, zp, where=ok[:, None])
                    np.copyto(energy, ep, where=ok)
                    it = done + k + 1
                    if th and it > b and (it - b) % th == 0 and rec < n_rec:
                        draws[rec] = z
                        rec += 1
                s += np.einsum("kc,kcm->cm", oks.astype(np.float64), e).astype(np.int64)
                accepted += int(oks.sum())
                done += k_blk
                if progress:
                    bar.update(done, f"acceptance {accepted / max(1, done * n):.3f}")
        return ChainRun(
            states=s,
            noise=z,
            draws=draws[:rec],
            iterations=done,
            acceptance_rate=accepted / max(1, done * n),
            stopped_early=stopped,
            ratio=np.asarray(self.ratio),
        )

    def sample(
        self,
        n: int,
        *,
        burn_in: int,
        rng: np.random.Generator,
        chains: int | None = None,
        thin: int = 1,
        budget: Budget | None = None,
        progress: bool = True,
        **legacy: float | None,
    ) -> NDArray[np.int64]:
        """``n`` noise vectors (n x d) after ``burn_in`` sweeps from pi_0.

        Runs ``chains`` independent chains (default ``n``: one draw per chain,
        i.e. independent draws from the time-``burn_in`` law) and keeps every
        ``thin``-th state after the burn-in. Raises :class:`BudgetExhausted` if the
        time budget ends before ``n`` draws are recorded (``budget`` as for :meth:`run`).
        """
        budget = budget_argument(budget, legacy, where="LatticeSampler.sample", old="time_budget", zero_ok=True)
        t0 = time.monotonic()
        total = check_int("n", n, minimum=1)
        c = total if chains is None else check_int("chains", chains, minimum=1)
        th = check_int("thin", thin, minimum=1)
        per_chain = -(-total // c)
        res = self.run(
            self.initial_states(c, rng=rng),
            burn_in + per_chain * th,
            rng=rng,
            burn_in=burn_in,
            thin=th,
            budget=budget,
            progress=progress,
        )
        if res.stopped_early:
            raise BudgetExhausted(
                f"time budget ended after {time.monotonic() - t0:.3g} s and {res.iterations} of "
                f"{burn_in + per_chain * th} iterations; no draws returned.",
                res.iterations,
            )
        out = res.draws.transpose(1, 0, 2).reshape(-1, self.target.d)
        return np.asarray(out[:total], dtype=np.int64)


def release_histogram(
    x: ArrayLike,
    sampler: LatticeSampler,
    *,
    burn_in: int,
    rng: np.random.Generator,
    budget: Budget | None = None,
    **legacy: float | None,
) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    r"""Release ``x + z`` with ``z`` the state of one chain after ``burn_in`` sweeps ([DGGY23, Def. 9] / Def 13).

    Returns ``(release, z)``. ``z`` lies in the lattice exactly, so every
    invariant :math:`\mathbf A` with :math:`\mathbf A\mathbf C=0` is kept:
    :math:`\mathbf A(x+z)=\mathbf Ax`. Privacy: the chain's law at ``burn_in`` is
    only within some TV distance :math:`\delta'` of the target; charge it with
    :func:`mechanisms.lattice_privacy.approximate_sampler_delta`. ``budget``: as for :meth:`LatticeSampler.run`.
    """
    budget = budget_argument(budget, legacy, where="release_histogram", old="time_budget", zero_ok=True)
    arr = np.asarray(x)
    d = sampler.target.d
    if arr.shape != (d,) or not np.issubdtype(arr.dtype, np.integer):
        raise InvalidArgument(f"x must be an integer vector of length {d}; got shape {arr.shape}.")
    z = sampler.sample(1, burn_in=burn_in, rng=rng, budget=budget, progress=False)[0]
    return arr.astype(np.int64) + z, z
