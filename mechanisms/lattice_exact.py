r"""Exact generalized Laplace (l1) / Gaussian noise on an integer kernel lattice by rejection (DGGY 2023, Def 9, Def 13).

Target: :math:`q(z)\propto\prod_i p(z_i)\,\mathbb 1[\mathbf Az=0]`, :math:`z\in\mathbb Z^d`, with
:math:`p(x)=e^{-\varepsilon|x|}` (the l1 generalized Laplace, [DGGY23, Def. 9]) or
:math:`p(x)=e^{-x^2/(2\sigma^2)}` (the generalized Gaussian with centre 0, [DGGY23, Def. 13]);
:math:`p(0)=1=\max p`. Both are **separable** over cells, which the l2 Laplace is not.

**Free coordinates.** :func:`~accountant.lattice.split.search_free_split` picks independent rows ``R`` of ``A``
(rank ``r``) and ``r`` cells ``D`` with :math:`|\det\mathbf A_{R,D}|=g`, ``g`` the gcd of the
maximal minors of :math:`\mathbf A_R` (``g = 1``: :math:`\mathbf A_{R,D}` unimodular). Then
:math:`\mathbf M=-\mathbf A_{R,D}^{-1}\mathbf A_{R,F}` is an integer matrix and
:math:`z_F\mapsto(z_F,\mathbf Mz_F)` is a bijection :math:`\mathbb Z^{F}\to\Lambda`
(``|det| = g`` is also necessary). The split is accepted only after
:func:`accountant.lattice.kernel.certify` has checked exactly that ``C = [I; M]`` is a basis of
:math:`\Lambda=\mathbb Z^d\cap\ker\mathbf A`.

**Rejection** (exact, no :math:`\delta'`): propose :math:`z_F` i.i.d. from the normalised
1-D law :math:`p/\sum p` (CKS exact samplers), set :math:`z_D=\mathbf Mz_F` in integers, accept
with probability :math:`\prod_{i\in D}p(z_i)\le1`. The accepted law is :math:`q` exactly;
the acceptance rate is :math:`Z_\Lambda/Z_1^{|F|}` with :math:`Z_\Lambda=\sum_{z\in\Lambda}\prod_ip(z_i)`,
:math:`Z_1=\sum_{x\in\mathbb Z}p(x)` -- the same for every valid split. For a single total
over ``d`` cells (l1) it is :math:`\Pr[S_d=0]/\Pr[\mathrm{DG}=0]`, :math:`S_d` a sum of ``d``
i.i.d. :math:`\mathrm{DG}(e^{-\varepsilon})`. The accept factor is split into independent
Bernoulli factors, one per group of dependent cells, tested as soon as the free cells they
depend on are drawn (early rejection; the product of independent Bernoullis is the
Bernoulli of the product, so the law is unchanged).

**Exactness.** Parameters are exact rationals (:math:`\varepsilon=p/q`, :math:`\sigma^2=p/q`).
A float is read as its shortest decimal (``0.192`` -> ``24/125``) or, if that is out of
range, as the nearest dyadic rational on the side of more noise; the rational used is stored
(``epsilon`` / ``sigma2``) and ``epsilon_upper`` / ``sigma_lower`` round it for accounting.
Proposals are CKS Alg. 2/3 (integer arithmetic only); energies :math:`k=\sum_D|z_i|` or
:math:`\sum_Dz_i^2` are exact int64; the accept coin is CKS Alg. 1,
:math:`\mathrm{Bern}(e^{-kp/q})` from uniform integers (``mechanisms.discrete``, vectorised;
Python integers when ``kp`` exceeds int64) -- not the float test ``U < exp(-eps k)``, whose
law is off by float rounding of ``exp``; the exact coin costs about 10% of a run (the
proposals dominate). The product ``z_F M^T`` runs in float64 only when every partial sum
is an integer below :math:`2^{53}`, hence exactly. Not hardened against timing side
channels (Jin et al. 2022): research and auditing use.

**Cost.** Acceptance: 4x4 margins, eps = 1/4: 1.036e-3; 102-cell total, eps = 0.192:
0.0563 (``benchmarks/lattice.py`` prints draws per second). The acceptance
falls geometrically with the lattice dimension (5x5 margins: 3.5e-5; 6x6: ~3.5e-6, refused
under the default budget); :meth:`ExactLatticeSampler.run` refuses up front
(:class:`~accountant.core.errors.SearchTooLarge`) when a pilot shows the budget is too small.

References
----------
[DGGY23] P. Dharangutte, J. Gao, R. Gong, F.-Y. Yu, "Integer Subspace Differential
Privacy", AAAI-23, arXiv:2212.00936: Def 9, Def 13, Prop 8.
[CKS20] C. L. Canonne, G. Kamath, T. Steinke, "The Discrete Gaussian for Differential
Privacy", NeurIPS 2020, arXiv:2004.00010: Alg. 1-3.
"""

from __future__ import annotations

import math
import numbers
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, ClassVar

import numpy as np
from numpy.typing import NDArray
from scipy import stats

from semidp.accountant.core.arguments import check_int, check_rng
from semidp.accountant.core.budget import Budget, budget_argument
from semidp.accountant.core.directed import down_exact, up_exact
from semidp.accountant.core.errors import InvalidArgument, SearchTooLarge, UnsupportedRelease
from semidp.accountant.core.progress import Progress
from semidp.accountant.lattice.split import (
    MAX_CELLS,
    MAX_SPLIT_NODES,
    FreeSplit,
    NoFreeSplit,
    exact_product,
    free_coordinates,
    search_free_split,
)
from semidp.mechanisms.discrete import (
    bernoulli_exp_unchecked,
    bernoulli_exp_vectorised,
    discrete_gaussian_array,
    discrete_laplace_array,
)
from semidp.mechanisms.lattice_mcmc import BudgetExhausted

__all__ = [
    "MAX_CELLS",
    "MAX_PROPOSALS",
    "MAX_SPLIT_NODES",
    "ExactLatticeGaussian",
    "ExactLatticeLaplace",
    "ExactLatticeSampler",
    "ExactRun",
    "FreeSplit",
    "NoFreeSplit",
    "free_coordinates",
    "search_free_split",
]

#: Default cap on proposals in one run (the 4x4 table at eps = 1/4 uses ~10^3 per sample).
MAX_PROPOSALS = 10**8
#: Accepted pilot draws before the point estimate of the acceptance rate is trusted.
PILOT_ACCEPTS = 20
_CELLS_PER_BATCH = 1 << 20  # free-cell draws per full batch
_FIRST_BATCH = 4096  # proposals in the first (pilot) batch
_I62 = 2**62


def _rational(name: str, value: object, *, square: bool, up: bool, ok: Callable[[Fraction], bool]) -> Fraction:
    """``value`` (or its square) as an exact positive Fraction accepted by ``ok``.

    ints and Fractions are taken as given (refused if ``ok`` fails); a float is read as its
    shortest decimal (``0.192`` -> ``24/125``) and, if that is refused, replaced by the nearest
    dyadic rational on the safe side of its binary value (``up=False``: below, for epsilon;
    ``up=True``: above, for sigma^2), i.e. at least as much noise as asked for.
    """
    if isinstance(value, bool) or not isinstance(value, (numbers.Integral, Fraction, float)):
        raise InvalidArgument(f"{name}={value!r} must be an int, Fraction or float.")
    if isinstance(value, float) and not math.isfinite(value):
        raise InvalidArgument(f"{name}={value!r} must be finite.")
    x = Fraction(repr(float(value))) if isinstance(value, float) else Fraction(value)
    if not x > 0:
        raise InvalidArgument(f"{name}={value!r} must be > 0.")
    x = x * x if square else x
    if ok(x):
        return x
    if isinstance(value, float):
        b = Fraction(value) ** (2 if square else 1)
        for k in range(62, -1, -1):
            num = -((-b.numerator << k) // b.denominator) if up else (b.numerator << k) // b.denominator
            if num > 0 and ok(Fraction(num, 1 << k)):
                return Fraction(num, 1 << k)
    raise InvalidArgument(
        f"{name}={value!r}: the exact rational {x} is out of range for the exact vectorised "
        "samplers (numerator/denominator too large); pass a nearby Fraction."
    )


def _check_energy(zd: NDArray[np.int64], *, squared: bool) -> None:
    """Refuse dependent cells so large that the int64 energy (sum of |z| or z^2) could overflow."""
    big = int(np.abs(zd).max(initial=0))
    if (big * big if squared else big) > _I62 // max(1, zd.shape[1]):
        raise InvalidArgument(f"|z_D| = {big} is too large for an exact int64 energy; the target is too wide.")


@dataclass(frozen=True, eq=False)
class ExactRun:
    """Output and record of :meth:`ExactLatticeSampler.run`."""

    noise: NDArray[np.int64]
    """``n x d`` exact draws of the target (``A z = 0`` exactly)."""
    proposals: int
    """Proposals made (including surplus accepted draws discarded at the end)."""
    accepted: int
    """Proposals accepted (``>= n``)."""
    seconds: float
    """Wall-clock time of the run."""

    @property
    def acceptance_rate(self) -> float:
        """``accepted / proposals`` (an unbiased estimate of ``Z_Lambda / Z_1^|F|``)."""
        return self.accepted / self.proposals if self.proposals else 1.0


# --------------------------------------------------------------------------- samplers


@dataclass(frozen=True, eq=False)
class ExactLatticeSampler:
    r"""Exact rejection sampler from free coordinates for a separable lattice target ([DGGY23, Def. 9] / Def 13).

    ``ExactLatticeSampler(A, epsilon=...)`` (l1 Laplace) builds an :class:`ExactLatticeLaplace`,
    ``ExactLatticeSampler(A, sigma=...)`` an :class:`ExactLatticeGaussian`. The sampler records
    its runs (:meth:`diagnostics`: proposals, acceptance, time). Not hardened against timing
    side channels (research / auditing use).

    Raises
    ------
    UnsupportedRelease
        No free-coordinate split (reason included), or ``norm="l2"`` (not separable).
    InvalidArgument
        Not exactly one of ``epsilon`` / ``sigma``, or a parameter out of range.

    Examples
    --------
    >>> type(ExactLatticeSampler([[1, 1]], sigma=2)).__name__
    'ExactLatticeGaussian'
    """

    split: FreeSplit = field(repr=False)
    """The certified free-coordinate split of the lattice."""
    _stages: tuple[tuple[int, int, NDArray[np.int64]], ...] = field(repr=False, init=False)
    _order: NDArray[np.intp] = field(repr=False, init=False)
    _mat: NDArray[np.int64] = field(repr=False, init=False)
    _log: dict[str, float] = field(repr=False, init=False)
    kind: ClassVar[str] = ""

    def __new__(cls, *args: Any, **kwargs: Any) -> ExactLatticeSampler:  # noqa: PYI034 (a subclass)
        if cls is not ExactLatticeSampler:
            return object.__new__(cls)
        return cls._dispatch(*args, **kwargs)

    @staticmethod
    def _dispatch(
        A: object,
        epsilon: Fraction | float | None = None,
        norm: str = "l1",
        *,
        sigma: Fraction | float | None = None,
        max_nodes: int = MAX_SPLIT_NODES,
    ) -> ExactLatticeSampler:
        if (epsilon is None) == (sigma is None) or (sigma is not None and norm != "l1"):
            raise InvalidArgument(
                "give exactly one of epsilon= (generalized Laplace, with norm=) or sigma= (Gaussian, no norm)."
            )
        return object.__new__(ExactLatticeLaplace if sigma is None else ExactLatticeGaussian)

    def __init__(
        self,
        A: object,
        epsilon: Fraction | float | None = None,
        norm: str = "l1",
        *,
        sigma: Fraction | float | None = None,
        max_nodes: int = MAX_SPLIT_NODES,
    ) -> None:
        raise NotImplementedError  # pragma: no cover (__new__ returns a subclass, whose __init__ runs)

    def _setup(self, A: object, max_nodes: int) -> None:
        res = search_free_split(A, max_nodes=max_nodes)
        if isinstance(res, NoFreeSplit):
            raise UnsupportedRelease(f"{self.kind}: no free-coordinate split of the lattice: {res.reason}")
        object.__setattr__(self, "split", res)
        object.__setattr__(self, "_log", {"runs": 0, "draws": 0, "proposals": 0, "accepted": 0, "seconds": 0.0})
        # early rejection: order the free cells so that dependent cells complete early (greedy)
        mat = res.matrix
        supp = {i: set(np.flatnonzero(mat[i]).tolist()) for i in range(mat.shape[0])}
        supp = {i: s for i, s in supp.items() if s}
        order: list[int] = []
        stages: list[tuple[int, int, NDArray[np.int64]]] = []
        while supp:
            i0 = min(supp, key=lambda i: (len(supp[i] - set(order)), i))
            start = len(order)
            order += sorted(supp[i0] - set(order))
            done = [i for i, s in supp.items() if s <= set(order)]
            for i in done:
                del supp[i]
            stages.append((start, len(order), np.asarray(done, dtype=np.int64)))
        rest = [f for f in range(mat.shape[1]) if f not in order]
        if rest:
            stages.append((len(order), len(order) + len(rest), np.zeros(0, dtype=np.int64)))
            order += rest
        object.__setattr__(self, "_order", np.asarray(order, dtype=np.intp))
        object.__setattr__(self, "_mat", mat[:, order])
        object.__setattr__(self, "_stages", tuple(stages))

    # hooks: the 1-D exact proposal, the integer energy k of z_D, and (num, den) with
    # accept probability exp(-k num / den)
    def _draw(self, size: int, rng: np.random.Generator) -> NDArray[np.int64]:
        raise NotImplementedError

    def _energy(self, zd: NDArray[np.int64]) -> NDArray[np.int64]:
        raise NotImplementedError

    def _rate(self) -> tuple[int, int]:
        raise NotImplementedError

    def _params(self) -> dict[str, str]:
        raise NotImplementedError

    def _accept(self, k: NDArray[np.int64], rng: np.random.Generator) -> NDArray[np.bool_]:
        """Exact Bern(exp(-k num/den)) per element (CKS Alg. 1; Python ints beyond int64)."""
        num, den = self._rate()
        small = k <= (_I62 - 1) // num
        out = np.zeros(k.shape[0], dtype=np.bool_)
        ks = k[small]
        out[small] = bernoulli_exp_vectorised(ks * num, np.full(ks.shape[0], den, dtype=np.int64), rng)
        for i in np.flatnonzero(~small):
            out[i] = bernoulli_exp_unchecked(Fraction(int(k[i]) * num, den), rng)
        return out

    def _batch(self, rows: int, rng: np.random.Generator) -> NDArray[np.int64]:
        """``rows`` independent proposals; the accepted ones as lattice points (accepted x d)."""
        zf = np.zeros((rows, self._order.shape[0]), dtype=np.int64)
        alive = np.arange(rows)
        for start, end, dep in self._stages:
            if alive.size == 0:
                break
            zf[alive, start:end] = self._draw(alive.size * (end - start), rng).reshape(-1, end - start)
            if dep.size:
                zd = exact_product(zf[alive, :end], self._mat[dep, :end])
                alive = alive[self._accept(self._energy(zd), rng)]
        z = np.zeros((alive.size, self.split.cells), dtype=np.int64)
        z[:, np.asarray(self.split.free, dtype=np.intp)[self._order]] = zf[alive]
        z[:, list(self.split.dependent)] = exact_product(zf[alive], self._mat)
        return z

    def run(
        self,
        n: int,
        *,
        rng: np.random.Generator,
        budget: Budget | None = None,
        max_proposals: int | None = MAX_PROPOSALS,
        progress: bool = True,
        **legacy: float | None,
    ) -> ExactRun:
        """``n`` exact draws with their record (proposals, acceptance, time).

        The first batches are a pilot: while fewer than :data:`PILOT_ACCEPTS` draws are
        accepted, the run is refused once even the 99.9% Clopper-Pearson upper bound on the
        acceptance rate implies more than ``max_proposals`` (``None``: no cap) proposals for
        ``n`` draws; after that, once, if the point estimate does. Pilot draws are kept (the
        refusal depends only on accept indicators, so accepted values stay i.i.d. from the
        target). A progress line is shown on a TTY. ``budget``: the wall-clock
        :class:`~semidp.accountant.core.budget.Budget` (default unlimited; the deprecated ``time_budget=`` seconds
        still works for one release).

        Raises
        ------
        SearchTooLarge
            Expected proposals for ``n`` draws exceed ``max_proposals`` (both numbers named).
        BudgetExhausted
            ``max_proposals`` proposals made or ``budget`` expired before ``n`` draws.
        """
        total = check_int("n", n, minimum=0)
        check_rng(rng)
        budget = budget_argument(budget, legacy, where="ExactLatticeSampler.run", old="time_budget", zero_ok=True)
        cap = math.inf if max_proposals is None else check_int("max_proposals", max_proposals, minimum=1)
        t0 = time.monotonic()
        m = len(self.split.free)
        out: list[NDArray[np.int64]] = [np.zeros((0, self.split.cells), dtype=np.int64)]
        got = props = 0
        if m == 0:  # the lattice is {0}
            out, got, props = [np.zeros((total, self.split.cells), dtype=np.int64)], total, total
        checked = False
        big = max(1, _CELLS_PER_BATCH // max(m, 1))
        rows = min(_FIRST_BATCH, big)
        with Progress(f"exact lattice {self.kind}", total=total) as bar:
            while got < total:
                if budget.expired:
                    raise BudgetExhausted(
                        f"time budget ended after {time.monotonic() - t0:.3g} s and {props} proposals "
                        f"with {got} of {total} draws accepted.",
                        got,
                    )
                if props >= cap:
                    raise BudgetExhausted(
                        f"max_proposals={max_proposals} reached with {got} of {total} draws accepted.", got
                    )
                rows = int(min(rows, cap - props))
                z = self._batch(rows, rng)
                props += rows
                got += z.shape[0]
                out.append(z)
                if got >= total:
                    break
                if got < PILOT_ACCEPTS:
                    upper = 1.0 if got == props else float(stats.beta.ppf(1 - 1e-3, got + 1, props - got))
                    if total / upper > cap:
                        raise self._refusal(total, total / upper, cap, got, props, "at least ")
                    rows = min(big, 4 * rows)
                else:
                    if not checked and total * props / got > cap:
                        raise self._refusal(total, total * props / got, cap, got, props, "")
                    checked = True
                    rows = int(min(big, max(_FIRST_BATCH, 1.1 * (total - got) * props / got + 16)))
                if progress:
                    bar.update(got, f"acceptance {got / props:.3g}, {props} proposals")
        res = ExactRun(np.concatenate(out)[:total], props, got, time.monotonic() - t0)
        for key, val in (
            ("runs", 1),
            ("draws", total),
            ("proposals", props),
            ("accepted", got),
            ("seconds", res.seconds),
        ):
            self._log[key] += val
        return res

    def _refusal(self, n: int, expected: float, cap: float, got: int, props: int, pre: str) -> SearchTooLarge:
        return SearchTooLarge(
            f"exact lattice {self.kind}: expected proposals for n={n} draws (pilot: {got} accepted of "
            f"{props}, acceptance {got / props:.3g}; {pre}{expected:.4g} needed)",
            expected,
            cap,
            "Raise max_proposals (None = no cap), ask for fewer draws, or use the MCMC sampler "
            "mechanisms.lattice_mcmc.LatticeSampler and charge delta' (mechanisms.coupling).",
        )

    def sample(
        self,
        n: int,
        *,
        rng: np.random.Generator,
        budget: Budget | None = None,
        max_proposals: int | None = MAX_PROPOSALS,
        **legacy: float | None,
    ) -> NDArray[np.int64]:
        """``n x d`` int64 exact noise vectors (``A z = 0``); see :meth:`run` for budgets and errors."""
        budget = budget_argument(budget, legacy, where="ExactLatticeSampler.sample", old="time_budget", zero_ok=True)
        return self.run(n, rng=rng, budget=budget, max_proposals=max_proposals).noise

    def diagnostics(self) -> dict[str, Any]:
        """JSON-ready record: exact parameters, the split, and totals over all runs so far."""
        log = self._log
        return {
            "sampler": f"exact rejection from free coordinates ({self.kind})",
            **self._params(),
            "free_cells": len(self.split.free),
            "dependent_cells": list(self.split.dependent),
            "split_nodes": self.split.nodes,
            "runs": int(log["runs"]),
            "draws": int(log["draws"]),
            "proposals": int(log["proposals"]),
            "accepted": int(log["accepted"]),
            "acceptance_rate": log["accepted"] / log["proposals"] if log["proposals"] else None,
            "seconds": log["seconds"],
        }


def _laplace_ok(x: Fraction) -> bool:
    return x.numerator < 2**31 and x.denominator < 2**31


def _gaussian_ok(s2: Fraction) -> bool:
    t = math.isqrt(s2.numerator // s2.denominator) + 1
    return 2 * s2.numerator * s2.denominator * t * t < _I62


@dataclass(frozen=True, eq=False)
class ExactLatticeLaplace(ExactLatticeSampler):
    r"""Exact l1 generalized Laplace noise :math:`q(z)\propto e^{-\varepsilon\|z\|_1}`, :math:`z\in\Lambda` [DGGY23, Def. 9].

    Free cells are proposed from :math:`\mathrm{Lap}_{\mathbb Z}(1/\varepsilon)` (CKS Alg. 2),
    accepted with probability :math:`e^{-\varepsilon\sum_D|z_i|}` (CKS Alg. 1). ``epsilon`` is per
    unit of l1 norm; the exact rational used is :attr:`epsilon` (see :func:`_rational`). The l2
    norm is refused: :math:`\|z\|_2` is not a sum over cells, so there is no product form to
    reject from; use :class:`mechanisms.lattice_mcmc.LatticeSampler` with
    ``LatticeLaplaceTarget(C, epsilon, "l2")`` and charge :math:`\delta'`.

    Examples
    --------
    >>> import numpy as np
    >>> smp = ExactLatticeLaplace([[1, 1, 1, 1]], 0.25)
    >>> z = smp.sample(3, rng=np.random.default_rng(0))
    >>> z.shape, bool(np.all(z.sum(axis=1) == 0)), smp.epsilon
    ((3, 4), True, Fraction(1, 4))
    """

    epsilon: Fraction = Fraction(1)
    """The exact epsilon used (per unit of l1 norm)."""
    kind: ClassVar[str] = "Laplace (l1)"

    def __init__(
        self,
        A: object,
        epsilon: Fraction | float | None = None,
        norm: str = "l1",
        *,
        sigma: None = None,
        max_nodes: int = MAX_SPLIT_NODES,
    ) -> None:
        if norm == "l2":
            raise UnsupportedRelease(
                "norm='l2': the l2 generalized Laplace target exp(-eps ||z||_2) is not separable over "
                "cells, so the free-coordinate rejection sampler does not apply. Use "
                "mechanisms.lattice_mcmc.LatticeSampler(LatticeLaplaceTarget(C, eps, 'l2')) and "
                "charge delta' from semidp.mechanisms.coupling."
            )
        if norm != "l1":
            raise InvalidArgument(f"norm={norm!r} must be 'l1' ('l2' needs the MCMC sampler).")
        if epsilon is None or sigma is not None:
            raise InvalidArgument("ExactLatticeLaplace takes epsilon (and no sigma).")
        object.__setattr__(self, "epsilon", _rational("epsilon", epsilon, square=False, up=False, ok=_laplace_ok))
        self._setup(A, max_nodes)

    @property
    def epsilon_upper(self) -> float:
        """Smallest float >= the exact epsilon (for privacy accounting, rounded up)."""
        return up_exact(self.epsilon)

    def _draw(self, size: int, rng: np.random.Generator) -> NDArray[np.int64]:
        return discrete_laplace_array(1 / self.epsilon, size, rng=rng)

    def _energy(self, zd: NDArray[np.int64]) -> NDArray[np.int64]:
        _check_energy(zd, squared=False)
        return np.asarray(np.abs(zd).sum(axis=1), dtype=np.int64)

    def _rate(self) -> tuple[int, int]:
        return self.epsilon.numerator, self.epsilon.denominator

    def _params(self) -> dict[str, str]:
        return {"epsilon": str(self.epsilon), "norm": "l1"}

    def __repr__(self) -> str:
        return f"ExactLatticeLaplace(<{len(self.split.rows)}x{self.split.cells}>, epsilon={self.epsilon!r})"


@dataclass(frozen=True, eq=False)
class ExactLatticeGaussian(ExactLatticeSampler):
    r"""Exact lattice Gaussian :math:`\propto e^{-\|z\|_2^2/(2\sigma^2)}`, centre 0, :math:`z\in\Lambda` [DGGY23, Def. 13].

    Free cells from :math:`N_{\mathbb Z}(0,\sigma^2)` (CKS Alg. 3), accepted with probability
    :math:`e^{-\sum_Dz_i^2/(2\sigma^2)}` (CKS Alg. 1). The exact :math:`\sigma^2` used is
    :attr:`sigma2` (a float ``sigma`` is read as its decimal, else :math:`\sigma^2` is rounded
    up); :meth:`from_sigma2` takes :math:`\sigma^2` itself.

    Examples
    --------
    >>> import numpy as np
    >>> z = ExactLatticeGaussian([[1, 1, 0, 0], [0, 0, 1, 1]], 2).sample(2, rng=np.random.default_rng(1))
    >>> bool(np.all(z[:, 0] == -z[:, 1]) and np.all(z[:, 2] == -z[:, 3]))
    True
    """

    sigma2: Fraction = Fraction(1)
    """The exact sigma^2 used."""
    kind: ClassVar[str] = "Gaussian"

    def __init__(
        self,
        A: object,
        sigma: Fraction | float | None = None,
        *,
        max_nodes: int = MAX_SPLIT_NODES,
        _sigma2: Fraction | None = None,
    ) -> None:
        if (sigma is None) == (_sigma2 is None):
            raise InvalidArgument("ExactLatticeGaussian takes sigma (or use from_sigma2).")
        s2 = _sigma2 if _sigma2 is not None else _rational("sigma", sigma, square=True, up=True, ok=_gaussian_ok)
        object.__setattr__(self, "sigma2", s2)
        self._setup(A, max_nodes)

    @classmethod
    def from_sigma2(
        cls, A: object, sigma2: Fraction | float, *, max_nodes: int = MAX_SPLIT_NODES
    ) -> ExactLatticeGaussian:
        """The same sampler from :math:`\\sigma^2` (e.g. ``Fraction(9, 2)``)."""
        s2 = _rational("sigma2", sigma2, square=False, up=True, ok=_gaussian_ok)
        return cls(A, max_nodes=max_nodes, _sigma2=s2)

    @property
    def sigma_lower(self) -> float:
        """Largest float whose square is <= the exact sigma^2 (noise scale, rounded down)."""
        f = math.sqrt(down_exact(self.sigma2))
        while Fraction(f) ** 2 > self.sigma2:
            f = math.nextafter(f, 0.0)
        return f

    def _draw(self, size: int, rng: np.random.Generator) -> NDArray[np.int64]:
        return discrete_gaussian_array(self.sigma2, size, rng=rng)

    def _energy(self, zd: NDArray[np.int64]) -> NDArray[np.int64]:
        _check_energy(zd, squared=True)
        return np.asarray((zd * zd).sum(axis=1), dtype=np.int64)

    def _rate(self) -> tuple[int, int]:
        return self.sigma2.denominator, 2 * self.sigma2.numerator

    def _params(self) -> dict[str, str]:
        return {"sigma2": str(self.sigma2)}

    def __repr__(self) -> str:
        return f"ExactLatticeGaussian(<{len(self.split.rows)}x{self.split.cells}>, sigma2={self.sigma2!r})"
