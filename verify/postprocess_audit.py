r"""The ``[postprocess]`` study: bias and variance of projecting the noisy histogram onto the invariant [ZVF21].

A mechanism that adds i.i.d. noise :math:`\eta` in every cell (``laplace``,
``gaussian``, ``discrete-laplace``) releases :math:`\tilde x=x+\eta`; the public
invariant :math:`Ax=b` is then imposed by post-processing (free of privacy cost):

* ``project`` -- program (P) :math:`\hat x=\arg\min_{Av=b}\|v-\tilde x\|_2=x+\Pi_{\ker A}\eta`,
  unbiased for any noise symmetric about x [ZVF21, Thm. 3]; this is Gao, Gong &
  Yu's projected mechanism [GGY22, Cor. 3.2/11];
* ``project-nonneg`` -- program (P+) with :math:`v\ge0` as well, biased near zero counts
  [ZVF21, Thm. 4].

:func:`run_study` draws ``postprocess.draws`` noise vectors (batched, seeded generator),
applies the raw release, (P) and, for ``project-nonneg``, (P+) to the **same** draws
(common random numbers), and accumulates per-cell bias, variance and
:math:`\|\text{error}\|_2` with normal-theory intervals. How (P+) is computed
(:func:`projector_for`):

* one total (a single row of ones): sort-and-threshold simplex projection
  (:func:`mechanisms.projection.project_simplex`), exact up to float rounding;
* nested partitions (0/1 rows whose *atoms* -- cells with the same column of A -- all
  have their totals fixed, i.e. rank A = number of atoms): one simplex projection per
  atom (:class:`mechanisms.projection.HierarchicalTotals`, one level of atoms). Proof [D]:
  each 0/1 row is a union of atoms and, when rank A equals the number of atoms, each
  atom's indicator lies in row(A), so :math:`\{Av=b\}` equals the set with every atom's sum fixed;
* otherwise: batched ADMM with a per-draw KKT stop (:func:`mechanisms.nonneg_projection.project_nonneg`);
  whether every draw converged is reported.

Closed forms reported beside the Monte Carlo values: the (P) per-cell variance
:math:`\operatorname{Var}\eta_i\cdot(\Pi_{\ker A})_{ii}` (:math:`\operatorname{Cov}(\Pi\eta)=\operatorname{Var}\eta_i\,\Pi`
for i.i.d. :math:`\eta`; one total: :math:`(1-1/n)\operatorname{Var}\eta_i`, [ZVF21, Thm. 5]); the
Thm. 4 bound :math:`C'\Pr(\|\eta\|_1>r_m)` and the ball probability
:math:`\Pr(\|\eta\|_1\le r_m)` of [ZVF21, Lemma 2] (Laplace and double geometric only).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from statistics import NormalDist
from typing import Any

import numpy as np
from numpy.typing import NDArray

from semidp.accountant.core.budget import Budget
from semidp.accountant.core.errors import InvalidArgument
from semidp.accountant.lattice.integer_matrix import independent_rows
from semidp.mechanisms.nonneg_projection import project_nonneg
from semidp.mechanisms.postprocess_noise import (
    DoubleGeometricNoise,
    GaussianNoise,
    LaplaceNoise,
    NoiseLaw,
    double_geometric_l1_ball_probability,
    laplace_l1_ball_probability,
)
from semidp.mechanisms.projection import AffineConstraint, HierarchicalTotals, project_simplex
from semidp.mechanisms.projection_bias import bias_bound, max_deviation_lp, max_deviation_total
from semidp.verify.json_walk import OMIT_NONE, Walked

FloatArray = NDArray[np.float64]

#: Largest ``postprocess.draws x cells`` accepted (validation refuses more, naming ``postprocess.draws``):
#: 2e7 float64 numbers per program, about 4 s of Laplace draws plus projection on one core.
MAX_DRAW_CELLS = 20_000_000
#: Numbers per batch (draws x cells): bounds the memory of one batch to a few arrays of 16 MB.
BATCH_CELLS = 2_000_000
#: Confidence level of the reported intervals (``bias_ci``, ``expected_l2_error_ci``).
REPORT_LEVEL = 0.95
#: Family-wise confidence level of the checks (Bonferroni over cells): a correct run fails once in 10^4.
CHECK_LEVEL = 0.9999
#: The general-A Thm. 4 constant C' costs 2n linear programs; above this many cells it is not computed.
MAX_LP_CELLS = 400


@dataclass(frozen=True)
class Projector:
    """The (P) and (P+) maps of one invariant at the true counts, and how they are computed."""

    method: str
    """``sort-and-threshold`` (one total), ``hierarchical-totals`` (atoms of nested partitions) or ``admm``."""
    project: Callable[[FloatArray], FloatArray]
    """(P) on draws ``(m, n)``."""
    project_nonneg: Callable[[FloatArray], tuple[FloatArray, NDArray[np.bool_] | None, FloatArray | None]]
    """(P+) on draws ``(m, n)``: the projections and, for ADMM, per-draw convergence and KKT residuals."""
    projector_diagonal: FloatArray
    r""":math:`\operatorname{diag}\Pi_{\ker A}`."""
    max_deviation: Callable[[], tuple[float | None, str]]
    r""":math:`C'=\sup_{\mathcal K}\|v-x\|_\infty` (or ``None``) and how it was obtained."""


def _atoms(a: NDArray[np.int64]) -> tuple[NDArray[np.int64], int] | None:
    """Atom labels of the cells (equal columns of A) when A is 0/1 and rank A = number of atoms, else None."""
    if a.size == 0 or not np.all((a == 0) | (a == 1)):
        return None
    _, labels = np.unique(a.T, axis=0, return_inverse=True)
    labels = np.asarray(labels, dtype=np.int64).reshape(-1)
    count = int(labels.max()) + 1
    if np.any(a[:, np.unique(labels, return_index=True)[1]].sum(axis=0) == 0):
        return None  # an atom in no row: its cells are free (only v >= 0 binds them)
    rank = len(independent_rows(a.tolist()))
    return (labels, count) if rank == count else None


def projector_for(a_mat: NDArray[np.int64], counts: FloatArray) -> Projector:
    """The fastest exact path for A (module docstring), with b = A x at the true counts x."""
    a = np.asarray(a_mat, dtype=np.int64)
    a = a[np.any(a != 0, axis=1)]
    x = np.asarray(counts, dtype=np.float64)
    n = x.size
    if a.shape[0] == 0:
        raise InvalidArgument("the invariant has no nonzero row: there is nothing to project onto")
    constraint = AffineConstraint.of(a.astype(np.float64), a.astype(np.float64) @ x)
    diag = constraint.subspace.projector_diagonal()
    uniq = np.unique(a, axis=0)
    if uniq.shape[0] == 1 and np.all(uniq == 1):
        total = float(math.fsum(x.tolist()))
        return Projector(
            "sort-and-threshold",
            constraint.project,
            lambda d: (project_simplex(d, total), None, None),
            diag,
            lambda: (max_deviation_total(x, total), "b - r_m (one total) [ZVF21, Thm. 4]"),
        )
    atoms = _atoms(a)
    if atoms is not None:
        h = HierarchicalTotals.from_counts([atoms[0]], x)
        return Projector(
            "hierarchical-totals",
            h.project,
            lambda d: (h.project_nonneg(d), None, None),
            diag,
            lambda: (h.max_deviation(x), "max_i max(x_i, T_g(i) - x_i) over the atoms' totals [ZVF21, Thm. 4]"),
        )

    def admm(d: FloatArray) -> tuple[FloatArray, NDArray[np.bool_] | None, FloatArray | None]:
        r = project_nonneg(constraint, d)
        return r.solution, r.converged, r.kkt_residual

    def lp() -> tuple[float | None, str]:
        if n > MAX_LP_CELLS:
            return None, f"not computed: {n} cells > {MAX_LP_CELLS} (2n linear programs)"
        try:
            dev = max_deviation_lp(constraint, x)
        except InvalidArgument as e:
            return None, f"not computed: {e}"
        return dev.upper, f"2n linear programs (HiGHS), LP value {dev.value!r} padded up [ZVF21, Thm. 4]"

    return Projector("admm", constraint.project, admm, diag, lp)


@dataclass
class _Moments:
    """Running per-cell moments of an error about a fixed shift, and of its per-draw l2 norm."""

    shift: FloatArray
    s: list[FloatArray] = field(default_factory=list)
    l2: list[float] = field(default_factory=lambda: [0.0, 0.0, 0.0])  # sum |e|, sum |e|^2, sum |e|^4

    def add(self, err: FloatArray) -> None:
        d = err - self.shift
        d2 = d * d
        parts = [d.sum(axis=0), d2.sum(axis=0), (d2 * d).sum(axis=0), (d2 * d2).sum(axis=0)]
        self.s = parts if not self.s else [a + b for a, b in zip(self.s, parts)]
        sq = np.einsum("ij,ij->i", err, err)
        self.l2 = [
            self.l2[0] + float(np.sqrt(sq).sum()),
            self.l2[1] + float(sq.sum()),
            self.l2[2] + float((sq**2).sum()),
        ]

    def summary(self, draws: int, counts: FloatArray) -> dict[str, Any]:
        """Bias, variance (with their CI half-widths at REPORT_LEVEL and the checks' level) and the l2 error."""
        k = draws
        s1, s2, s3, s4 = self.s
        mu = s1 / k
        m2 = s2 / k - mu**2
        m4 = s4 / k - 4 * mu * s3 / k + 6 * mu**2 * s2 / k - 3 * mu**4
        var = np.maximum(m2, 0.0) * k / (k - 1)
        bias = self.shift + mu
        se_b = np.sqrt(var / k)
        se_v = np.sqrt(np.maximum(m4 - m2**2, 0.0) / k)
        z = NormalDist().inv_cdf(0.5 + REPORT_LEVEL / 2)
        mean_l2 = self.l2[0] / k
        var_l2 = max(self.l2[1] / k - mean_l2**2, 0.0) * k / (k - 1)
        mean_sq = self.l2[1] / k
        var_sq = max(self.l2[2] / k - mean_sq**2, 0.0) * k / (k - 1)
        return {
            "bias": bias,
            "bias_se": se_b,
            "variance": var,
            "variance_se": se_v,
            "bias_ci": np.stack([bias - z * se_b, bias + z * se_b], axis=1),
            "expected_l2_error": mean_l2,
            "expected_l2_error_ci": [mean_l2 - z * math.sqrt(var_l2 / k), mean_l2 + z * math.sqrt(var_l2 / k)],
            "expected_squared_l2_error": mean_sq,
            "expected_squared_l2_error_se": math.sqrt(var_sq / k),
        }


@dataclass(frozen=True)
class Study:
    """What :func:`run_study` measured (arrays per cell; ``programs`` keyed ``none``, ``P``, ``P+``)."""

    counts: FloatArray
    method: str
    programs: dict[str, dict[str, Any]]
    draws_requested: int
    draws_done: int
    seconds: float
    stopped_early: bool
    ball_hits: int
    """Draws with :math:`\\|\\eta\\|_1\\le r_m` (Monte Carlo of Lemma 2)."""
    not_converged: int | None
    """ADMM draws that missed the KKT tolerance (``None``: an exact path, no iteration)."""
    max_kkt_residual: float | None
    projector_diagonal: FloatArray
    max_deviation: tuple[float | None, str]


def run_study(
    counts: FloatArray,
    a_mat: NDArray[np.int64],
    noise: NoiseLaw,
    nonneg: bool,
    draws: int,
    *,
    rng: np.random.Generator,
    budget: Budget,
) -> Study:
    """Draw ``draws`` noise vectors in batches until done or ``budget`` (a wall-clock Budget) would run out.

    The first batch always runs (at least 2 draws); a later batch starts only if the time per batch
    so far says it ends within ``budget``.
    """
    x = np.asarray(counts, dtype=np.float64)
    n = x.size
    proj = projector_for(a_mat, x)
    r_m = float(x.min())
    batch = max(2, min(draws, BATCH_CELLS // max(n, 1)))
    start = time.monotonic()
    acc: dict[str, _Moments] = {}
    done, hits, bad, worst = 0, 0, 0, 0.0
    while done < draws:
        m = min(batch, draws - done)
        eta = noise.sample((m, n), rng=rng)
        noisy = x + eta
        errs = {"none": eta, "P": proj.project(noisy) - x}
        if nonneg:
            sol, conv, kkt = proj.project_nonneg(noisy)
            errs["P+"] = sol - x
            if conv is not None and kkt is not None:
                bad += int(np.count_nonzero(~conv))
                worst = max(worst, float(kkt.max(initial=0.0)))
        for key, e in errs.items():
            if key not in acc:
                acc[key] = _Moments(e.mean(axis=0))
            acc[key].add(e)
        hits += int(np.count_nonzero(np.abs(eta).sum(axis=1) <= r_m))
        done += m
        elapsed = time.monotonic() - start
        if done < draws and not budget.allows(elapsed / done * min(batch, draws - done)):
            break
    admm = proj.method == "admm" and nonneg
    return Study(
        counts=x,
        method=proj.method,
        programs={k: v.summary(done, x) for k, v in acc.items()},
        draws_requested=draws,
        draws_done=done,
        seconds=time.monotonic() - start,
        stopped_early=done < draws,
        ball_hits=hits,
        not_converged=bad if admm else None,
        max_kkt_residual=worst if admm else None,
        projector_diagonal=proj.projector_diagonal,
        max_deviation=proj.max_deviation() if nonneg else (None, "not computed: (P) is unbiased [ZVF21, Thm. 3]"),
    )


@dataclass(frozen=True)
class NoiseDescription(Walked):
    """The report's ``postprocess.noise``: the law, its scale (``sigma`` for Gaussian noise) and per-cell variance."""

    law: str
    sigma: float | None = field(default=None, kw_only=True, metadata=OMIT_NONE)
    """Gaussian noise's standard deviation (histogram units)."""
    scale: float | str | None = field(default=None, kw_only=True, metadata=OMIT_NONE)
    """Laplace b, or double-geometric t as an exact rational string."""
    ratio: float | None = field(default=None, kw_only=True, metadata=OMIT_NONE)
    """Double-geometric a = e^(-1/t)."""
    variance: float
    """Per-cell variance (squared histogram units)."""

    def scale_text(self) -> str:
        """``sigma = 2`` or ``scale = 5.0``."""
        return f"sigma = {self.sigma:g}" if self.sigma is not None else f"scale = {self.scale}"


def noise_description(noise: NoiseLaw) -> NoiseDescription:
    """``{law, scale | sigma, variance}`` of the noise law."""
    if isinstance(noise, LaplaceNoise):
        return NoiseDescription("laplace", scale=noise.scale, variance=noise.variance)
    if isinstance(noise, GaussianNoise):
        return NoiseDescription("gaussian", sigma=noise.sigma, variance=noise.variance)
    return NoiseDescription("double-geometric", scale=str(noise.scale), ratio=noise.ratio, variance=noise.variance)


def ball_probability(noise: NoiseLaw, n: int, r_m: float) -> tuple[float | None, str]:
    r""":math:`\Pr(\|\eta\|_1\le r_m)` by [ZVF21, Lemma 2] (``None`` for Gaussian noise, which has no closed form)."""
    if isinstance(noise, LaplaceNoise):
        return laplace_l1_ball_probability(n, r_m, noise.scale), "Pr[Gamma(n, lambda) <= r_m] [ZVF21, Lemma 2]"
    if isinstance(noise, DoubleGeometricNoise):
        return (
            double_geometric_l1_ball_probability(n, math.floor(r_m), math.exp(-1.0 / float(noise.scale))),
            "1 - 2a^(r+1)/(1+a) sum_{i<n} h_i(r) ((1-a)/(1+a))^i, a = e^(-1/t) [ZVF21, Lemma 2]",
        )
    return None, "no closed form for Gaussian noise ([ZVF21, Lemma 2] covers Laplace and double geometric)"


def thm4_bound(noise: NoiseLaw, counts: FloatArray, c_prime: float | None) -> tuple[float | None, str]:
    r"""[ZVF21, Thm. 4] :math:`C'\Pr(\|\eta\|_1>r_m)`, rounded up, or ``None`` with the reason."""
    if c_prime is None:
        return None, "C' not available"
    if isinstance(noise, (LaplaceNoise, DoubleGeometricNoise)):
        return bias_bound(counts, noise, c_prime), "C' Pr(||eta||_1 > r_m), rounded up [ZVF21, Thm. 4]"
    return None, "no Lemma 2 form for Gaussian noise: the Monte Carlo bias is the only estimate"


__all__ = [
    "BATCH_CELLS",
    "CHECK_LEVEL",
    "MAX_DRAW_CELLS",
    "Projector",
    "REPORT_LEVEL",
    "Study",
    "ball_probability",
    "NoiseDescription",
    "noise_description",
    "projector_for",
    "run_study",
    "thm4_bound",
]
