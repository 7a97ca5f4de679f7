r"""Numerical composition of tradeoff functions through privacy-loss distributions (PLDs).

The composition theorem of f-DP [DRS22, Thm. 3.2] says that running
mechanisms that are :math:`f_i`-DP (adaptively) is
:math:`f_1\otimes\cdots\otimes f_k`-DP, where
:math:`T(P_1,Q_1)\otimes T(P_2,Q_2)=T(P_1\times P_2,Q_1\times Q_2)`. This
module computes a **lower bound** of that tensor product for piecewise-linear
curves (:class:`~accountant.profiles.tradeoff.TradeoffCurve`) and Gaussian parts.

Which module serves what: this one takes *tradeoff curves* (any f-DP mechanism given as a
piecewise-linear curve, few atoms each) and returns a certified lower *tradeoff curve* of the
composition (f-DP output, used by :mod:`accountant.guarantees.composition`); sparse shift-and-add, no FFT.
For ``delta(eps)`` / ``epsilon(delta)`` brackets of compositions of known mechanisms (thousands of
Laplace, Gaussian, randomized-response parts: workloads, claims, designs) use the FFT engine
:mod:`accountant.pld.engine` (``compose_plds``, ``refine_bracket``), which is tight on both ends.

Method
------
1. *Curve to PLD* (:func:`loss_atoms`). A PL tradeoff function (std
   convention) with vertices :math:`(\alpha_j,\beta_j)` is :math:`T(P,Q)` for
   discrete :math:`P,Q`: each segment is one outcome with
   :math:`p_j=\alpha_{j+1}-\alpha_j`, :math:`q_j=\beta_j-\beta_{j+1}` and
   privacy loss :math:`L_j=\log(q_j/p_j)`; if :math:`\beta_0<1` an outcome with
   :math:`p=0`, :math:`q=1-\beta_0` (:math:`L=+\infty`). Outcomes with
   :math:`q=0` have no Q-mass and are dropped. Then
   :math:`\delta(\varepsilon)=\mathbb E_Q[(1-e^{\varepsilon-L})_+]=\sum_j(q_j-e^\varepsilon p_j)_+
   + q_\infty` [DRS22, Prop. 2.12], the same as
   :meth:`~accountant.profiles.tradeoff.TradeoffCurve.privacy_profile`.
2. *Composition.* Under :math:`Q_1\times\cdots\times Q_k` the losses add and
   are independent, so the Q-law of the total loss is the convolution of the
   factors' laws; mass at :math:`+\infty` composes as :math:`1-\prod_i(1-m_i)`.
3. *Pessimistic discretisation* (the idea of Meiser & Mohammadi [MM18] and
   Koskela et al. [KJH20], used by Google's ``dp_accounting`` with
   ``pessimistic_estimate=True``; no code copied): every finite loss is
   rounded **up** to the grid :math:`h\mathbb Z`. Since
   :math:`(1-e^{\varepsilon-L})_+` is non-decreasing in :math:`L`, the rounded
   law gives a larger :math:`\delta(\varepsilon)` for every :math:`\varepsilon`:
   it *dominates* the true one. Masses are likewise only ever rounded up or
   moved up: after each convolution the lowest losses carrying Q-mass
   ``<= tail_mass`` are moved up to a lower cap; only if the array exceeds
   ``max_points`` is the heaviest window kept and the rest moved up (below
   it) or to :math:`+\infty` (above it). Otherwise losses are never cut from
   the top, so pure-DP compositions keep ``delta = 0`` beyond the largest loss. A measure that dominates in every upper tail stays
   dominating under convolution, so every step is conservative. Each factor has
   few atoms, so convolution is sparse shift-and-add (no FFT, whose rounding
   noise can create negative masses and has no cheap certified error bound);
   the cost is about ``sum_i atoms_i * N_i`` for running support length ``N_i``.
4. *Gaussian part, exact.* All GDP parts combine exactly into one
   :math:`\mu=\sqrt{\sum\mu_i^2}` [DRS22, Cor. 3.3]; it is not discretised:
   :math:`\delta(\varepsilon)=\sum_j\omega_j\,\delta_\mu(\varepsilon-\ell_j)+\omega_\infty`
   with the certified Gaussian profile
   :func:`~accountant.profiles.gaussian.gdp_delta_array` [BW18, Thm. 8] (valid for
   negative arguments).
5. *Evaluation.* At grid :math:`\varepsilon=ih`, losses within a window
   around :math:`\varepsilon` are summed directly against a kernel table;
   losses far above use :math:`\delta_\mu(-d)=1-e^{-d}+e^{-d}\delta_\mu(d)`
   (suffix sums, bounded above), losses far below use
   :math:`\delta_\mu(\varepsilon-\ell)\le\delta_\mu(D)` (window half-width
   :math:`D=\mu^2/2+11\mu`, :math:`\delta_\mu(D)<10^{-27}`). For large
   :math:`\mu` the grid is coarsened (losses rounded up again) to keep the
   kernel table below :data:`KERNEL_MAX_POINTS`.
6. *Output.* :math:`\delta` is evaluated (rounded up) on an adaptive grid of
   :math:`\varepsilon` and turned into the tradeoff curve
   :math:`\max_i f_{\varepsilon_i,\delta_i}`
   (:meth:`~accountant.profiles.tradeoff.TradeoffCurve.from_profile`), a lower bound of
   the true composition. ``from_profile`` also adds each line's reflection,
   which is valid because the true composition of symmetric tradeoff functions
   is symmetric (the inputs may be slightly asymmetric lower bounds of
   symmetric functions; see :mod:`accountant.profiles.tradeoff`).

Floating-point error budget (all bounds are stated where applied): masses carry
a relative budget grown by :math:`(3a+4)u` per factor with :math:`a` atoms
(``u = 2**-53``; sums of positive terms in any order have relative error
:math:`\le n u/(1-nu)`); dot products and suffix sums add :math:`(n+4)u`;
kernel tables (``expm1``) carry a relative pad of :data:`KERNEL_REL_PAD`;
possible underflow adds :math:`2^{-1074}` per operation. The final
:math:`\delta` is multiplied by the accumulated factor and stepped one ulp up.

References
----------
[DRS22] Dong, Roth & Su, "Gaussian Differential Privacy", JRSS-B 2022,
        arXiv:1905.02383 (Prop. 2.12, Thm. 3.2, Cor. 3.3).
[BW18]  Balle & Wang, ICML 2018, Thm. 8 (Gaussian privacy profile).
[KOV15] Kairouz, Oh & Viswanath, "The Composition Theorem for Differential
        Privacy", ICML 2015, Thm. 3.3 (exact composition of pure DP, used in tests).
[MM18]  Meiser & Mohammadi, "Tight on Budget? Tight Bounds for r-Fold
        Approximate Differential Privacy", CCS 2018 (pessimistic buckets).
[KJH20] Koskela, Jälkö & Honkela, "Computing Tight Differential Privacy
        Guarantees Using FFT", AISTATS 2020.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import overload

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import signal

from semidp.accountant.core.arguments import check_in_interval, check_int, check_nonnegative, check_positive
from semidp.accountant.core.directed import MP, down, down_exact, up, up_exact
from semidp.accountant.core.errors import InvalidArgument
from semidp.accountant.profiles.gaussian import gdp_delta_array
from semidp.accountant.profiles.tradeoff import TradeoffCurve

__all__ = [
    "DEFAULT_GRID",
    "DEFAULT_N_EPS",
    "LossAtoms",
    "compose",
    "epsilon",
    "loss_atoms",
    "profile",
]

#: Default privacy-loss grid spacing (rounded down to a power of two: ``2**-14``).
DEFAULT_GRID = 1e-4
#: Default number of epsilons at which the composed profile is evaluated for the output curve.
DEFAULT_N_EPS = 1200
#: Default Q-mass below which the lower tail of the running loss law is moved up to a cap.
DEFAULT_TAIL_MASS = 1e-30
#: Default cap on the length of the dense loss array (memory: 8 bytes per point).
DEFAULT_MAX_POINTS = 2**23
#: Largest Gaussian kernel table (points); beyond it the loss grid is coarsened (large mu).
KERNEL_MAX_POINTS = 2**21
#: Lines of the output curve stop where ``delta(eps) - delta(inf)`` falls below this.
DELTA_FLOOR = 1e-18
#: Relative pad on float kernels (numpy ``expm1``/``log`` are accurate to a few ulps,
#: about 1e-15; the pad is three orders of magnitude above that).
KERNEL_REL_PAD = 1e-12
#: Relative+absolute pad on float losses ``log(q/p)`` (same reasoning as above).
LOSS_PAD = 1e-13

_U = 2.0**-53
_TINY = 2.0**-1074
_BLOCK = 32768  # output block length of the blocked shift-and-add
_BLOCKED_MIN_ATOMS = 8  # factors with at least this many atoms use the blocked loop
_RATIO_MAX = Fraction(2) ** 1000  # q/p above this: loss computed in mpmath (float overflow)
_EPS_CLAMP = 1e6  # |eps| beyond this is clamped (conservatively) before indexing the grid


# --------------------------------------------------------------------------------------
# curve -> atoms
# --------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class LossAtoms:
    r"""The privacy-loss distribution of a PL tradeoff curve, as finitely many atoms.

    Atom ``j`` is one segment of the curve (std convention); the law of the
    loss ``L = log(dQ/dP)`` under ``Q`` has mass ``q[j]`` at ``loss[j]`` and
    ``inf_mass`` at ``+inf``. All fields are rounded **outward** for an upper
    bound on ``delta``: ``q`` and ``inf_mass`` up, ``p`` down, ``loss`` up.
    """

    loss: tuple[float, ...]
    """Privacy loss ``log(q_j/p_j)`` of each atom, rounded up."""
    p: tuple[float, ...]
    """P-mass ``alpha_{j+1} - alpha_j``, rounded down."""
    q: tuple[float, ...]
    """Q-mass ``beta_j - beta_{j+1}``, rounded up."""
    inf_mass: float
    """Q-mass at loss ``+inf`` (``1 - f(0)``), rounded up."""

    def __post_init__(self) -> None:
        n = len(self.loss)
        if len(self.p) != n or len(self.q) != n:
            raise InvalidArgument(f"loss, p and q must have equal lengths; got {n}, {len(self.p)}, {len(self.q)}.")
        for name, vals in (("p", self.p), ("q", self.q)):
            for j, v in enumerate(vals):
                if not (math.isfinite(v) and v >= 0.0):
                    raise InvalidArgument(f"{name}[{j}]={v!r} must be finite and >= 0.")
        for j, v in enumerate(self.loss):
            if not math.isfinite(v):
                raise InvalidArgument(f"loss[{j}]={v!r} must be finite (use inf_mass for +inf).")
        check_in_interval("inf_mass", self.inf_mass, 0.0, 1.0)

    @overload
    def delta(self, eps: float) -> float: ...
    @overload
    def delta(self, eps: NDArray[np.float64]) -> NDArray[np.float64]: ...

    def delta(self, eps: ArrayLike) -> float | NDArray[np.float64]:
        r"""Privacy profile :math:`\sum_j(q_j-e^\varepsilon p_j)_+ + q_\infty`, rounded up.

        Equal (up to rounding) to the curve's
        :meth:`~accountant.profiles.tradeoff.TradeoffCurve.privacy_profile`.
        ``e^eps`` is rounded down (mpmath); each term is padded by
        ``3u (q_j + E p_j)``, the sum by ``(n+2)u``.
        """
        e = np.asarray(eps, dtype=np.float64)
        if not np.all(np.isfinite(e)):
            raise InvalidArgument(f"eps={eps!r} must be finite.")
        ea = np.atleast_1d(e)
        big = np.array([_exp_down(float(v)) for v in ea.ravel()]).reshape(ea.shape)
        q = np.asarray(self.q, dtype=np.float64)
        p = np.asarray(self.p, dtype=np.float64)
        ep = big[..., None] * p
        terms = np.maximum(q - ep + 3 * _U * (q + ep), 0.0)
        s = terms.sum(axis=-1) * (1 + (len(q) + 2) * _U) + self.inf_mass
        out = np.clip(np.nextafter(s, np.inf), 0.0, 1.0)
        return float(out[0]) if e.ndim == 0 else out.reshape(e.shape)


def _exp_down(x: float) -> float:
    return 1.0 if x == 0.0 else min(down(MP.exp(MP.mpf(x))), float(np.finfo(np.float64).max))


def loss_atoms(curve: TradeoffCurve) -> LossAtoms:
    r"""The privacy-loss atoms of a PL tradeoff curve (std convention) [DRS22, Prop. 2.12].

    Segment ``j`` from :math:`(\alpha_j,\beta_j)` to
    :math:`(\alpha_{j+1},\beta_{j+1})` becomes an atom with
    :math:`p=\alpha_{j+1}-\alpha_j`, :math:`q=\beta_j-\beta_{j+1}`,
    :math:`L=\log(q/p)`; :math:`1-\beta_0` is the mass at :math:`+\infty`;
    flat segments (``q = 0``) carry no Q-mass and are dropped.

    ``p``/``q`` are exact differences of floats rounded down/up; the loss is
    ``math.log`` of the exact ratio ``q/p`` rounded up, padded up by
    :data:`LOSS_PAD` ``* (1 + |L|)`` (exactly ``0.0`` when ``q = p``; in mpmath,
    rounded up, when ``q/p`` exceeds the float range).

    Examples
    --------
    >>> at = loss_atoms(TradeoffCurve.from_approx_dp(1.0, 0.1))
    >>> [round(x, 9) for x in at.loss], round(at.inf_mass, 12)
    ([1.0, -1.0], 0.1)
    """
    if not isinstance(curve, TradeoffCurve):
        raise InvalidArgument(f"curve={curve!r} must be a TradeoffCurve.")
    a, b = curve.alphas, curve.betas
    ps: list[float] = []
    qs: list[float] = []
    losses: list[float] = []
    for j in range(len(a) - 1):
        q = Fraction(b[j]) - Fraction(b[j + 1])
        if q == 0:
            continue
        p = Fraction(a[j + 1]) - Fraction(a[j])
        ps.append(down_exact(p))
        qs.append(up_exact(q))
        ratio = q / p
        if ratio == 1:
            losses.append(0.0)
        elif ratio < _RATIO_MAX:
            lg = math.log(up_exact(ratio))
            losses.append(lg + LOSS_PAD * (1.0 + abs(lg)))
        else:  # q/p beyond the float range (p subnormal): certified log in mpmath
            losses.append(up(MP.log(MP.mpf(ratio.numerator) / MP.mpf(ratio.denominator))))
    inf_mass = up_exact(1 - Fraction(b[0]))
    return LossAtoms(tuple(losses), tuple(ps), tuple(qs), inf_mass)


# --------------------------------------------------------------------------------------
# the dominating grid PLD
# --------------------------------------------------------------------------------------


def _grid_spacing(grid: float | None) -> float:
    """Largest power of two ``<= grid`` (so that every ``i*h`` and difference is exact)."""
    g = check_positive("grid", DEFAULT_GRID if grid is None else grid)
    if not 1.0 / CONVOLUTION_MAX_POINTS <= g <= 1.0:  # finer: the kernel table alone needs 1/h > 2^25 points
        raise InvalidArgument(f"grid={grid!r} must be in [2^-25, 1]; typical values are 1e-4..1e-2.")
    h = 2.0 ** math.floor(math.log2(g))
    while h > g:
        h /= 2
    return h


@dataclass
class _GridPLD:
    """Dominating discrete loss law: mass ``masses[i]`` at loss ``(offset + i) * h``.

    Guarantee: the true Q-law's finite part is dominated in every upper tail by
    ``masses * (1 + rel)`` plus an absolute ``n_ops * 2**-1074`` (underflow),
    and its mass at ``+inf`` is ``<= inf_mass``.
    """

    h: float
    mu: float
    offset: int
    masses: NDArray[np.float64]
    inf_mass: float
    rel: float
    n_ops: int
    # derived in __post_init__
    d_above: float = field(init=False)
    d_below: float = field(init=False)
    j_above: int = field(init=False)
    j_below: int = field(init=False)
    kernel: NDArray[np.float64] = field(init=False, repr=False)
    s0: NDArray[np.float64] = field(init=False, repr=False)
    s1: NDArray[np.float64] = field(init=False, repr=False)
    prefix: NDArray[np.float64] = field(init=False, repr=False)
    c_far: float = field(init=False)
    far_above_extra: float = field(init=False)
    far_below_k: float = field(init=False)
    sum_rel: float = field(init=False)
    abs_pad: float = field(init=False)

    def __post_init__(self) -> None:
        n = len(self.masses)
        h, mu = self.h, self.mu
        # window of direct summation: losses within [eps - d_below, eps + d_above]
        self.d_above = max(1.0, mu * mu / 2 + 11.0 * mu) if mu > 0 else 1.0
        self.d_below = mu * mu / 2 + 11.0 * mu if mu > 0 else 0.0
        self.j_above = math.ceil(self.d_above / h)
        self.j_below = math.ceil(self.d_below / h)
        m = np.arange(-self.j_below, self.j_above + 1, dtype=np.float64) * h  # d = loss - eps
        if mu > 0:
            kern = gdp_delta_array(mu, -m)  # delta_mu(eps - loss), already padded up
        else:
            with np.errstate(over="ignore"):
                kern = np.where(m > 0, -np.expm1(-np.maximum(m, 0.0)), 0.0)
            kern = kern * (1 + KERNEL_REL_PAD)
        self.kernel = np.asarray(kern, dtype=np.float64)  # kernel[t] for d = (t - j_below) * h
        # suffix sums for the far-above part: S0[p] = sum_{p'>=p} m, S1[p] = sum m r^(p'-p)
        rev = self.masses[::-1]
        self.s0 = np.append(np.cumsum(rev)[::-1], 0.0)
        r_down = down(MP.exp(-MP.mpf(h)))
        s1 = np.asarray(signal.lfilter([1.0], [1.0, -r_down], rev), dtype=np.float64)
        self.s1 = np.append(s1[::-1], 0.0)
        self.c_far = down(MP.exp(-MP.mpf(h) * (self.j_above + 1)))  # e^{-(J+1)h}, rounded down
        self.prefix = np.concatenate(([0.0], np.cumsum(self.masses)))
        if mu > 0:
            far = float(gdp_delta_array(mu, np.array([self.d_above]))[0])
            self.far_above_extra = far * math.exp(-self.d_above) * (1 + 1e-9)
            self.far_below_k = float(gdp_delta_array(mu, np.array([self.d_below]))[0])
        else:
            self.far_above_extra = 0.0
            self.far_below_k = 0.0
        self.sum_rel = (2 * n + 8) * _U * 1.01  # cumsum / lfilter / dot (positive terms)
        self.abs_pad = (self.n_ops + 4 * n + 16) * _TINY * 4

    @property
    def top(self) -> int:
        """Largest grid index carrying (possibly) finite mass."""
        return self.offset + len(self.masses) - 1

    def delta_index(self, i: int) -> float:
        r"""Upper bound on :math:`\delta(i h)` of the true composition."""
        off, n = self.offset, len(self.masses)
        m = self.masses
        jb, ja = self.j_below, self.j_above
        # direct window: absolute indices j in [i - jb, i + ja]  (mu = 0: kernel is 0 for j <= i)
        lo = max(i - jb - off, 0)
        hi = min(i + ja - off, n - 1)
        near = 0.0
        if hi >= lo:
            k0 = lo + off - i + jb
            # einsum, not np.dot: BLAS dot spawns threads that busy-wait on a loaded machine
            near = float(np.einsum("i,i->", m[lo : hi + 1], self.kernel[k0 : k0 + hi - lo + 1]))
            near *= 1 + (hi - lo + 4) * _U
        # far above: absolute j >= i + ja + 1
        p0 = max(i + ja + 1 - off, 0)
        far = 0.0
        if p0 < n:
            t0 = self.s0[p0] * (1 + self.sum_rel)
            # e^{-(j - i) h} for j = off + p0 + t is e^{-(off + p0 - i) h} r^t; lower-bound it
            shift = off + p0 - i
            c = self.c_far if shift == ja + 1 else down(MP.exp(-MP.mpf(self.h) * shift))
            t1 = c * self.s1[p0] * (1 - self.sum_rel)
            far = (t0 - t1) * (1 + 2 * _U) + self.far_above_extra * t0
        # far below (Gaussian only): absolute j <= i - jb - 1
        below = 0.0
        if self.mu > 0:
            pb = min(i - jb - off, n)  # number of entries strictly below the window
            if pb > 0:
                below = self.prefix[pb] * (1 + self.sum_rel) * self.far_below_k
        total = (near + far + below) * (1 + self.rel) * (1 + 4 * _U)
        if self.mu > 0 or self.top > i:
            total += self.abs_pad
        if total == 0.0:
            return self.inf_mass  # no finite mass above eps: exactly the (rounded-up) mass at +inf
        return min(math.nextafter(total + self.inf_mass, math.inf), 1.0)


def _shift_add(masses: NDArray[np.float64], shifts: list[int], weights: list[float]) -> NDArray[np.float64]:
    """Sparse convolution ``out[i] = sum_j weights[j] * masses[i - shifts[j]]`` (shifts >= 0).

    Each output entry is a sum of positive products accumulated in the order of
    ``shifts`` (relative error <= (a+1)u for ``a`` atoms). Many-atom factors are
    processed in output blocks of :data:`_BLOCK` entries so the block stays in
    cache (about 3x faster; same arithmetic, same result).
    """
    n = len(masses)
    out = np.zeros(n + shifts[-1], dtype=np.float64)
    if len(shifts) < _BLOCKED_MIN_ATOMS:
        tmp = np.empty(n, dtype=np.float64)
        for k, wj in zip(shifts, weights):
            np.multiply(masses, wj, out=tmp)
            out[k : k + n] += tmp
        return out
    size = len(out)
    tmp = np.empty(_BLOCK, dtype=np.float64)
    for s in range(0, size, _BLOCK):
        e = min(s + _BLOCK, size)
        blk = out[s:e]
        for k, wj in zip(shifts, weights):
            lo, hi = max(s - k, 0), min(e - k, n)
            if hi <= lo:
                continue
            t = tmp[: hi - lo]
            np.multiply(masses[lo:hi], wj, out=t)
            blk[lo + k - s : hi + k - s] += t
    return out


def _build(curves: Sequence[TradeoffCurve], mu: float, h: float, tail_mass: float, max_points: int) -> _GridPLD:
    masses = np.ones(1, dtype=np.float64)
    offset = 0
    inf = 0.0
    rel_log = 0.0
    n_ops = 0
    for idx, c in enumerate(curves):
        if not isinstance(c, TradeoffCurve):
            raise InvalidArgument(f"curves[{idx}]={c!r} must be a TradeoffCurve.")
        at = loss_atoms(c)
        # mass at +inf: 1 - (1 - inf)(1 - m_i), exact then rounded up
        inf = min(1.0, up_exact(1 - (1 - Fraction(inf)) * (1 - Fraction(at.inf_mass))))
        if not at.loss:
            masses = np.zeros(1, dtype=np.float64)
            continue
        # pessimistic discretisation: ceil(L/h)*h >= L (L/h is exact: h is a power of two)
        kidx = _grid_indices(at.loss, h, len(masses), max_points, idx)  # size-checked before any allocation
        uk, inv = np.unique(kidx, return_inverse=True)
        w = np.bincount(inv, weights=np.asarray(at.q, dtype=np.float64))
        n = len(masses)
        masses = _shift_add(masses, (uk - uk[0]).tolist(), w.tolist())
        offset += int(uk[0])
        # per entry: <= a products and a sums of positive terms, plus the bincount merge
        rel_log += (3 * len(uk) + 4) * _U * 1.01
        n_ops += 2 * len(uk) * n
        # lower tail: move the smallest losses (total Q-mass <= tail_mass) up to a cap
        if tail_mass > 0 and len(masses) > 1:
            cs = np.cumsum(masses[:-1])
            cut = int(np.searchsorted(cs, tail_mass, side="right"))
            if cut > 0:
                moved = float(cs[cut - 1]) * (1 + (cut + 2) * _U)
                masses = masses[cut:].copy()
                masses[0] += moved
                offset += cut
                rel_log += 2 * _U
        # size cap: keep the max_points consecutive losses carrying the most mass; move the
        # losses below that window up to its first point and those above it to +inf (both
        # conservative; the moved mass bounds the extra delta).
        if len(masses) > max_points:
            size = len(masses)
            cs = np.concatenate(([0.0], np.cumsum(masses)))
            start = int(np.argmax(cs[max_points:] - cs[: size - max_points + 1]))
            # prefix sums of positive terms: relative error <= (size + 2) u; a difference of
            # two of them is off by at most (size + 2) u * total in absolute terms
            err = (size + 2) * _U * float(cs[size]) * 1.01
            below = float(cs[start]) * (1 + (size + 2) * _U * 1.01)
            above = max(float(cs[size] - cs[start + max_points]) + 2 * err, 0.0)
            masses = masses[start : start + max_points].copy()
            masses[0] += below
            offset += start
            # true masses are <= computed * (1 + rel so far): scale before moving them to +inf
            above *= 1 + math.expm1(rel_log * 1.01) + 2 * _U
            inf = min(1.0, up_exact(Fraction(inf) + Fraction(above)))
            rel_log += 2 * _U

    # The Gaussian kernel table spans about 2 (mu^2/2 + 11 mu) / h points; for large mu
    # coarsen the grid (by a power of two) so that it stays below KERNEL_MAX_POINTS.
    # Rebinning moves every loss up to the next coarse grid point: conservative.
    if mu > 0:
        span = 2 * (mu * mu / 2 + 11.0 * mu)
        r = 1
        while span / (h * r) > KERNEL_MAX_POINTS:
            r *= 2
        if r > 1:
            j = offset + np.arange(len(masses), dtype=np.int64)
            coarse = -((-j) // r)  # ceil(j / r)
            new_off = int(coarse[0])
            masses = np.asarray(np.bincount(coarse - new_off, weights=masses), dtype=np.float64)
            offset, h = new_off, h * r
            rel_log += (r + 2) * _U * 1.01
    rel = math.expm1(rel_log * 1.01)
    return _GridPLD(h, mu, offset, masses, inf, rel, n_ops)


def _prepare(
    curves: Sequence[TradeoffCurve],
    gaussian_mu: float,
    grid: float | None,
    tail_mass: float,
    max_points: int,
) -> _GridPLD:
    if isinstance(curves, TradeoffCurve) or not isinstance(curves, Sequence):
        raise InvalidArgument(f"curves={curves!r} must be a sequence of TradeoffCurve.")
    mu = check_nonnegative("gaussian_mu", gaussian_mu)
    h = _grid_spacing(grid)
    tm = check_in_interval("tail_mass", tail_mass, 0.0, 1e-6)
    mp = check_int("max_points", max_points, minimum=16)
    return _build(list(curves), mu, h, tm, mp)


def _first_below(pld: _GridPLD, lo: int, hi: int, level: float) -> int:
    """Smallest ``i`` in ``[lo, hi]`` with ``delta(i) - delta(inf) <= level`` (``hi`` if none);
    bisection, as ``delta`` is non-increasing in ``eps``."""
    base = pld.inf_mass
    if pld.delta_index(lo) - base <= level:
        return lo
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if pld.delta_index(mid) - base <= level:
            hi = mid
        else:
            lo = mid
    return hi


def _delta_at(pld: _GridPLD, eps: float) -> float:
    """Upper bound on ``delta(eps)`` for any real ``eps`` (rounded down to the grid)."""
    if eps < -_EPS_CLAMP:
        return 1.0  # delta <= 1 always
    # delta is non-increasing, so evaluating at min(eps, clamp) rounded down is conservative
    return pld.delta_index(math.floor(min(eps, _EPS_CLAMP) / pld.h))


def _top_index(pld: _GridPLD) -> int:
    """A grid index beyond which ``delta`` no longer decreases noticeably."""
    top = max(pld.top, 0)
    if pld.mu > 0:
        top += math.ceil((pld.mu * pld.mu / 2 + 9.5 * pld.mu) / pld.h)
    return top


# --------------------------------------------------------------------------------------
# public API
# --------------------------------------------------------------------------------------


def compose(
    curves: Sequence[TradeoffCurve],
    gaussian_mu: float = 0.0,
    *,
    grid: float | None = None,
    n_eps: int = DEFAULT_N_EPS,
    tail_mass: float = DEFAULT_TAIL_MASS,
    max_points: int = DEFAULT_MAX_POINTS,
) -> TradeoffCurve:
    r"""Lower bound of :math:`f_1\otimes\cdots\otimes f_k\otimes G_\mu` [DRS22, Thm. 3.2].

    Parameters
    ----------
    curves:
        PL lower bounds of the symmetric tradeoff functions of the parts.
    gaussian_mu:
        Combined GDP parameter of all Gaussian parts,
        :math:`\mu=\sqrt{\sum_i\mu_i^2}` [DRS22, Cor. 3.3] (the caller rounds it
        up); handled exactly, not discretised.
    grid:
        Privacy-loss grid spacing ``h`` in ``[2^-25, 1]`` (``None``: :data:`DEFAULT_GRID`),
        rounded down to a power of two. Each
        part's loss is rounded up by less than ``h``, so the result is never
        looser than the exact composition evaluated at ``epsilon - k h``.
        Cost grows like ``1/h``. With a Gaussian part of large ``mu`` the grid
        is coarsened (by a power of two, losses rounded up again) so that the
        Gaussian kernel table has at most :data:`KERNEL_MAX_POINTS` points
        (``mu > ~5`` at the default grid).
    n_eps:
        Number of epsilons whose ``(epsilon, delta(epsilon))`` lines form the
        output curve: two thirds equally spaced from 0 to where ``delta`` stops
        decreasing (``delta - delta(inf) <= 1e-18``), one third equally spaced
        where ``delta - delta(inf)`` is between ``1e-2`` and ``1e-14``. Without a
        Gaussian part also the largest loss (``delta = delta(inf)``) and, if
        there are at most ``n_eps`` of them, every grid loss carrying mass (each
        such line contains a whole segment of the discretised curve, so
        compositions of pure/approximate DP parts are reproduced exactly up to
        the loss rounding). Between two such
        epsilons the curve's profile is bounded by the one at the smaller.
    tail_mass:
        After each convolution, the lowest losses carrying at most this Q-mass
        are moved up to a cap (conservative; limits the array length).
    max_points:
        Cap on the dense array length; beyond it only the window of
        ``max_points`` consecutive grid losses with the most mass is kept, the
        losses below it moved up to it and those above it to ``+inf``
        (conservative, looser by at most the moved mass).

    Returns
    -------
    TradeoffCurve
        :math:`\max_i f_{\varepsilon_i,\delta_i}` with every :math:`\delta_i`
        an upper bound of the true profile: a lower bound of the composition.

    Raises
    ------
    InvalidArgument
        If an argument is out of its domain.

    Examples
    --------
    >>> f = TradeoffCurve.from_approx_dp(1.0, 0.0)
    >>> g = compose([f, f])
    >>> abs(g.epsilon(0.0) - 2.0) < 1e-3        # pure DP composes to 2 epsilon (up to 2 grid steps)
    True
    >>> g.dominates(compose([f, f, f]))          # composing more never helps
    True
    """
    n = check_int("n_eps", n_eps, minimum=2)
    pld = _prepare(curves, gaussian_mu, grid, tail_mass, max_points)
    if pld.mu == 0.0 and pld.top <= 0 and pld.inf_mass == 0.0:
        return TradeoffCurve.identity()  # all loss mass at or below 0: perfect privacy
    top = _top_index(pld)
    # Two thirds of the epsilons cover [0, eps_cut] (delta(eps_cut) - delta(inf) <= DELTA_FLOOR)
    # evenly (the shape of the curve), one third the range where delta - delta(inf) is in
    # [1e-14, 1e-2] (where (eps, delta) pairs are usually reported).
    cut = _first_below(pld, 0, top, DELTA_FLOOR)
    lo = _first_below(pld, 0, cut, 1e-2)
    hi = _first_below(pld, lo, cut, 1e-14)
    idx = np.union1d(
        np.round(np.linspace(0, cut, n - n // 3)).astype(np.int64),
        np.round(np.linspace(lo, hi, n // 3)).astype(np.int64),
    )
    if pld.mu == 0.0:
        idx = np.union1d(idx, [top])  # delta(top) = inf_mass exactly: pure-DP endpoint
        # A discrete loss law gives a PL curve whose segment slopes are -e^{loss}: a line at
        # eps = loss contains that whole segment. Sparse supports (pure-DP parts) are taken whole.
        support = np.nonzero(pld.masses)[0] + pld.offset
        support = support[support >= 0]
        if len(support) <= n:
            idx = np.union1d(idx, support)
    eps = idx.astype(np.float64) * pld.h
    deltas = [pld.delta_index(int(i)) for i in idx]
    return TradeoffCurve.from_profile(eps, deltas)


@overload
def profile(
    curves: Sequence[TradeoffCurve],
    gaussian_mu: float,
    eps: float,
    *,
    grid: float | None = ...,
    tail_mass: float = ...,
    max_points: int = ...,
) -> float: ...
@overload
def profile(
    curves: Sequence[TradeoffCurve],
    gaussian_mu: float,
    eps: NDArray[np.float64],
    *,
    grid: float | None = ...,
    tail_mass: float = ...,
    max_points: int = ...,
) -> NDArray[np.float64]: ...


def profile(
    curves: Sequence[TradeoffCurve],
    gaussian_mu: float,
    eps: ArrayLike,
    *,
    grid: float | None = None,
    tail_mass: float = DEFAULT_TAIL_MASS,
    max_points: int = DEFAULT_MAX_POINTS,
) -> float | NDArray[np.float64]:
    r"""Upper bound on the privacy profile :math:`\delta(\varepsilon)` of the composition.

    Same discretisation as :func:`compose`, evaluated directly (no detour through
    a curve): ``eps`` is rounded **down** to the grid (``delta`` is
    non-increasing), then :math:`\delta` is bounded as described in the module
    docstring. Use this for precise :math:`(\varepsilon,\delta)` reporting.

    Examples
    --------
    >>> f = TradeoffCurve.from_approx_dp(1.0, 1e-6)
    >>> d = profile([f] * 3, 0.0, 3.01)    # only the mass at +inf is left above the max loss 3
    >>> 1 - (1 - 1e-6) ** 3 <= d < 1 - (1 - 1e-6) ** 3 + 1e-12
    True
    """
    pld = _prepare(curves, gaussian_mu, grid, tail_mass, max_points)
    e = np.asarray(eps, dtype=np.float64)
    if not np.all(np.isfinite(e)):
        raise InvalidArgument(f"eps={eps!r} must be finite.")
    ea = np.atleast_1d(e)
    out = np.array([_delta_at(pld, float(x)) for x in ea.ravel()])
    out = out.reshape(ea.shape)
    return float(out[0]) if e.ndim == 0 else out


def epsilon(
    curves: Sequence[TradeoffCurve],
    gaussian_mu: float,
    delta: float,
    *,
    grid: float | None = None,
    tail_mass: float = DEFAULT_TAIL_MASS,
    max_points: int = DEFAULT_MAX_POINTS,
) -> float:
    r"""Smallest grid :math:`\varepsilon\ge0` with :math:`\delta(\varepsilon)\le\delta` (upper bound).

    Bisection over grid indices with the same certified :math:`\delta` as
    :func:`profile`; the result is a multiple of the grid spacing, never below
    the exact minimal epsilon. Returns ``math.inf`` when the mass at
    :math:`+\infty` alone exceeds ``delta``.

    Examples
    --------
    >>> f = TradeoffCurve.from_approx_dp(0.5, 0.0)
    >>> 1.5 <= epsilon([f] * 3, 0.0, 0.0) <= 1.5 + 3 * 2**-14
    True
    """
    d = check_in_interval("delta", delta, 0.0, 1.0)
    pld = _prepare(curves, gaussian_mu, grid, tail_mass, max_points)
    if pld.delta_index(0) <= d:
        return 0.0
    hi = _top_index(pld)
    for _ in range(64):
        if pld.delta_index(hi) <= d:
            break
        if pld.mu == 0.0:
            return math.inf
        hi = 2 * hi + 1
    else:
        return math.inf
    lo = 0
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if pld.delta_index(mid) <= d:
            hi = mid
        else:
            lo = mid
    return hi * pld.h


# --------------------------------------------------------------------------------------
# size check of one convolution (before anything is allocated)
# --------------------------------------------------------------------------------------

#: Largest dense array one convolution may produce before the size cap (2^25 points, 256 MiB; or ``2 max_points``
#: if larger): a part whose losses need more grid points than that is refused (use a coarser grid). Also the
#: finest grid is ``1 / CONVOLUTION_MAX_POINTS``: the kernel table of the direct window has ``1 / h`` points.
CONVOLUTION_MAX_POINTS = 2**25


def _grid_indices(loss: Sequence[float], h: float, n: int, max_points: int, idx: int) -> NDArray[np.int64]:
    """``ceil(loss / h)`` (grid indices; exact integers: ``h >= 2^-25`` is a power of two and every loss of a curve
    lies within +-745, the log of a ratio of doubles) after checking the size they imply: ``n`` (the running law's
    length) plus the part's grid span is the convolution's length, at most ``max(CONVOLUTION_MAX_POINTS,
    2 max_points)`` points. Raises :class:`InvalidArgument` naming the grid otherwise."""
    kidx = np.ceil(np.asarray(loss, dtype=np.float64) / h)
    limit = max(CONVOLUTION_MAX_POINTS, 2 * max_points)
    need = n + float(kidx.max() - kidx.min())
    if need > limit:
        raise InvalidArgument(
            f"grid (spacing {h!r}) too fine for curves[{idx}], whose losses lie in [{min(loss):.6g}, {max(loss):.6g}]: "
            f"{need:.0f} grid points in one convolution (at most {limit}); use a coarser grid."
        )
    return kidx.astype(np.int64)
