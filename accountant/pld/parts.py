r"""Mechanism parts of the scalable PLD engine and their certified grid discretisations.

Each part is a frozen description of one mechanism (house style R1/R3); the
engine (:mod:`semidp.accountant.pld.engine`) asks it for two laws on the grid
:math:`h\mathbb Z` of privacy losses, one that *dominates* the true privacy-loss
distribution (PLD) and one that *is dominated* by it (:class:`GridLaw`).

Conventions
-----------
* The PLD of a pair :math:`(P,Q)` is the law of :math:`L=\log\frac{dQ}{dP}` under
  :math:`Q` (mass at :math:`+\infty` where :math:`P=0`); the privacy profile is
  :math:`\delta(\varepsilon)=\mathbb E_Q[(1-e^{\varepsilon-L})_+]+Q(L=\infty)`
  [DRS22, Prop. 2.12], [KJH20, Eq. (3)].
* ``sensitivity`` is the largest change of the query between two neighbouring
  datasets **under the relation the caller uses**: for replace-one it is the
  replace-one sensitivity, for add/remove the add/remove one. Every part here
  is symmetric: the reflection :math:`x\mapsto\Delta-x` maps the pair
  :math:`(M(0),M(\Delta))` onto :math:`(M(\Delta),M(0))`, so both orderings
  have the same PLD and "the worse of the two orderings" (what
  ``dp_accounting`` computes for add/remove) is that common PLD.

Discretisation (losses in units of the grid spacing ``h``)
----------------------------------------------------------
* **Pessimistic** ("connect the dots", [DGKKM22, Sec. 4]): the Q-mass of every
  loss cell :math:`[ah,(a+1)h]` (Q-mass :math:`q`, P-mass :math:`p`) is split
  between the two cell ends so that both :math:`q` and :math:`p` are kept:
  :math:`\omega_{a+1}=(q-pe^{ah})/(1-e^{-h})`, :math:`\omega_a=q-\omega_{a+1}`.
  In :math:`u=e^{-L}` this is a mean-preserving spread, and
  :math:`u\mapsto(1-e^{\varepsilon}u)_+` is convex, so :math:`\delta(\varepsilon)`
  can only grow (Jensen), for *every* :math:`\varepsilon`; nested convexity
  makes it survive composition. Float errors are absorbed by moving mass
  **up** (``omega_{a+1}`` padded up, losses rounded up, masses rounded up);
  truncated upper tails go to :math:`+\infty`, lower tails to the lowest cell.
* **Optimistic**: a post-processing of the true pair, so it is dominated by it
  (:func:`_merge_down`): outputs are gathered by loss cell, and part of each cell
  is relabelled with the cell above so that every label's likelihood ratio is
  at least its grid point's, where it is then put (rounding a loss down keeps the
  law dominated); masses rounded down; the truncated lower tail is dropped, the
  upper tail put on the top cell (below its true place). Plain flooring loses up
  to :math:`h` per part; the relabelling leaves a second-order error wherever the
  mass below a label balances it (an atom alone above empty cells, e.g. the
  Laplace atom at :math:`\Delta/b` off the grid, still floors).
* **Optimistic on a lattice** (``lattice_law``, :func:`lattice_from_atoms`): parts whose atoms lie on
  ``shift + g Z`` (:class:`Lattice`) label them on ``shift + (g/N) Z`` instead, so the atoms keep their
  place; the labels' exact excess over the true losses is the law's ``slack`` (the engine adds it back).

Float inputs of the closed forms (``scipy.special.log_ndtr``, ``expm1``) are
trusted to the relative accuracy :data:`REL_PAD` (a few ulps measured; the
pad is orders of magnitude above it), as in :mod:`semidp.accountant.profiles.gaussian`.

References
----------
[DRS22]  Dong, Roth & Su, "Gaussian Differential Privacy", JRSS-B 2022, arXiv:1905.02383, Prop. 2.12.
[KJH20]  Koskela, Jälkö & Honkela, "Computing Tight Differential Privacy Guarantees Using FFT", AISTATS 2020.
[DGKKM22] Doroshenko, Ghazi, Kamath, Kumar & Manurangsi, "Connect the Dots: Tighter Discrete
         Approximations of Privacy Loss Distributions", PETS 2022, arXiv:2207.04380v1, Sec. 4.
[CKS20]  Canonne, Kamath & Steinke, "The Discrete Gaussian for Differential Privacy", NeurIPS 2020.
[KOV15]  Kairouz, Oh & Viswanath, "The Composition Theorem for Differential Privacy", ICML 2015, Thm. 2.4
         (the dominating pair of an (epsilon, delta)-DP mechanism).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import NamedTuple, Protocol, runtime_checkable

import numpy as np
from numpy.typing import NDArray
from scipy import special

from semidp.accountant.core.arguments import check_in_interval, check_int, check_nonnegative, check_positive
from semidp.accountant.core.errors import InvalidArgument

__all__ = [
    "DEFAULT_TAIL_MASS",
    "REL_PAD",
    "ApproxDPPart",
    "DiscreteGaussianPart",
    "DiscreteLaplacePart",
    "GaussianPart",
    "GridLaw",
    "LaplacePart",
    "Lattice",
    "PLDPart",
    "RandomizedResponsePart",
    "grid_from_atoms",
]

#: Relative accuracy trusted for float closed forms (log_ndtr, exp, expm1): a pad far above a few ulps.
REL_PAD = 1e-9
#: Relative pad on float losses from closed forms (a few ulps; correctly rounded ops have error <= u).
LOSS_PAD = 16 * 2.0**-53
#: Default Q-mass of each truncated tail of an unbounded part (moved to +inf, pessimistic; dropped, optimistic).
DEFAULT_TAIL_MASS = 1e-30
#: Largest number of grid cells one part may occupy.
MAX_PART_POINTS = 2**24

_U = 2.0**-53


@dataclass(frozen=True, slots=True)
class GridLaw:
    """A PLD on the grid ``h * (offset + i)``: ``masses[i]`` plus ``inf_mass`` at ``+inf``.

    Produced by :meth:`PLDPart.grid_law`; a pessimistic law dominates the true PLD
    (larger ``delta(eps)`` for every ``eps``), an optimistic one is dominated by it.
    """

    offset: int
    """Grid index of ``masses[0]``."""
    masses: NDArray[np.float64]
    """Non-negative Q-masses of consecutive grid points."""
    inf_mass: float
    """Q-mass at loss ``+inf``."""
    h: float
    """Grid spacing (a power of two, except for a lattice law: see :meth:`Lattice`)."""
    shift: float = 0.0
    """Loss of grid index 0 (a lattice law's labels are ``shift + h * (offset + i)``, exact reals)."""
    slack: float = 0.0
    """A lattice law's labels exceed the (dominated) true losses by at most this (``0`` on the plain grid)."""

    def delta(self, eps: float) -> float:
        r"""``sum_i masses[i] (1 - e^{eps - l_i})_+ + inf_mass`` (plain float; for tests and single parts)."""
        loss = self.shift - self.slack + self.h * (self.offset + np.arange(self.masses.size))
        sel = loss > eps
        return float(np.sum(self.masses[sel] * -np.expm1(eps - loss[sel]))) + self.inf_mass


class Lattice(NamedTuple):
    r"""The finite losses of a part that are point masses lie on ``shift + spacing * Z`` (exact reals).

    The engine's lower end puts every part of a composition whose lattices share ``spacing`` on the grid
    ``shift + (spacing / N) Z`` (:meth:`LaplacePart.lattice_law` and the others), so those atoms are not floored
    (the plain power-of-two grid floors each by up to one grid step per composed mechanism).
    """

    shift: float
    """Loss of the lowest atom (a float: its exact value)."""
    spacing: float
    """Distance between neighbouring lattice points (> 0)."""
    continuous: bool
    """Whether the part also has a density between its atoms (then the grid refines the lattice)."""


@runtime_checkable
class PLDPart(Protocol):
    """One mechanism for :func:`semidp.accountant.pld.engine.compose_plds`."""

    def grid_law(self, h: float, *, pessimistic: bool, tail_mass: float = DEFAULT_TAIL_MASS) -> GridLaw:
        """The dominating (``pessimistic=True``) or dominated law on the grid ``h Z``."""
        ...

    def loss_scale(self) -> float:
        """A typical spread (standard deviation) of the loss, to choose grids."""
        ...

    def support_width(self) -> float:
        """Width of the loss range the discretisation covers (finite part), to choose grids."""
        ...

    def max_loss(self) -> Fraction | None:
        """An exact upper bound of every finite privacy loss (the pure-DP epsilon), ``None`` if unbounded.

        Losses add under composition, so the composed profile is at most its mass at ``+inf`` from
        the sum of these bounds on (used to cap the grid's upper bound, which rounds losses up).
        """
        ...


# --------------------------------------------------------------------------------------
# shared discretisers
# --------------------------------------------------------------------------------------


def _pad_up(x: NDArray[np.float64]) -> NDArray[np.float64]:
    return np.asarray(x * (1.0 + REL_PAD) + 0.0, dtype=np.float64)


def _pad_down(x: NDArray[np.float64]) -> NDArray[np.float64]:
    return np.asarray(np.maximum(x * (1.0 - REL_PAD), 0.0), dtype=np.float64)


def _accumulate(idx: NDArray[np.int64], w: NDArray[np.float64], lo: int, hi: int) -> NDArray[np.float64]:
    out = np.zeros(hi - lo + 1, dtype=np.float64)
    np.add.at(out, idx - lo, w)
    # np.add.at sums in float: pad the (positive) sums by their relative error bound
    return out


def grid_from_atoms(
    loss: NDArray[np.float64],
    q: NDArray[np.float64],
    inf_mass: float,
    h: float,
    *,
    pessimistic: bool,
    exact: NDArray[np.bool_] | None = None,
    cells: tuple[int, NDArray[np.float64], NDArray[np.float64]] | None = None,
) -> GridLaw:
    r"""Put point masses ``q`` at losses ``loss`` on the grid ``h Z`` (connect-the-dots up, or floor down).

    ``loss`` and ``q`` are the exact values up to :data:`REL_PAD`; the pessimistic
    law rounds them up (by :data:`LOSS_PAD` relative, except where ``exact`` is true: losses that
    are exactly the float given) before splitting :math:`\omega_{a+1}=q(1-e^{ah-l})/(1-e^{-h})`
    [DGKKM22, Sec. 4]; the optimistic law gathers the atoms by grid cell (with the optional ``cells``
    ``(a0, q, pe)`` of a continuous part, as for :func:`_grid_from_cells`) and relabels them onto the
    grid by the post-processing of :func:`_merge_down`, Q-masses rounded down.
    """
    loss = np.asarray(loss, dtype=np.float64)
    q = np.asarray(q, dtype=np.float64)
    if pessimistic:
        lu = loss + LOSS_PAD * np.abs(loss) + 1e-300
        if exact is not None:
            lu = np.where(exact, loss, lu)
        _check_points(float(np.max(lu) - np.min(lu)) / h + 2, "grid_from_atoms")  # before allocating
        a = np.floor(lu / h).astype(np.int64)
        frac = np.clip(lu - a * h, 0.0, h)  # lu in [a h, (a+1) h]; exact for h a power of two up to rounding
        qu = _pad_up(q)
        wb = _pad_up(qu * (-np.expm1(-frac)) / (-math.expm1(-h)))  # mass to a+1, rounded up
        wb = np.minimum(wb, qu)
        wa = (qu - wb) * (1.0 + 4 * _U)  # the float subtraction may lose u: add it back
        lo, hi = int(a.min()), int(a.max()) + 1
        m = _accumulate(a, wa, lo, hi) + _accumulate(a + 1, wb, lo, hi)
        m = m * (1.0 + (loss.size + 2) * 2 * _U)  # summation error of positive terms, rounded up
        return GridLaw(lo, m, min(1.0, inf_mass * (1.0 + 4 * _U)), h)
    ld = loss - LOSS_PAD * np.abs(loss) - 1e-300
    if exact is not None:
        ld = np.where(exact, loss, ld)
    _check_points(float(np.max(ld) - np.min(ld)) / h + 2, "grid_from_atoms")
    a = np.floor(ld / h).astype(np.int64)  # a h <= true loss (ld is rounded down)
    lo, hi = int(a.min()), int(a.max())
    if cells is not None:
        lo, hi = min(lo, cells[0]), max(hi, cells[0] + cells[1].size - 1)
    # P-mass times e^{a h} of each atom: q e^{a h - l} (<= q); its relative error: REL_PAD on q, the loss's
    # LOSS_PAD relative error times |l|, a few ulps of exp, the sums of the cells
    rel = REL_PAD + LOSS_PAD * (float(np.max(np.abs(loss))) + 1.0) + (loss.size + 8) * 2 * _U
    cell_q = _accumulate(a, _pad_down(q), lo, hi) * (1.0 - (loss.size + 2) * 2 * _U)
    cell_w = _accumulate(a, q * np.exp(np.minimum(a * h - loss, 0.0)), lo, hi)
    if cells is not None:
        c0, cq, cw = cells
        cell_q[c0 - lo : c0 - lo + cq.size] += _pad_down(cq)
        cell_w[c0 - lo : c0 - lo + cw.size] += cw
        cell_q *= 1.0 - 2 * _U
    law = _merge_down(lo, cell_q, cell_w, h, rel)
    return GridLaw(law.offset, law.masses, inf_mass * (1.0 - 4 * _U), h)


#: An atom within this fraction of a step below a lattice label takes that label (its distance goes to ``slack``).
SNAP = 1e-6


def lattice_from_atoms(
    loss: NDArray[np.float64],
    q: NDArray[np.float64],
    inf_mass: float,
    h: float,
    shift: float,
    *,
    exact: NDArray[np.bool_],
    cells: tuple[int, NDArray[np.float64], NDArray[np.float64], float] | None = None,
) -> GridLaw:
    r"""The optimistic (dominated) law of atoms ``q`` at ``loss`` on the labels ``shift + h Z`` (any ``h > 0``).

    Each atom takes the label ``j = floor((loss - shift) / h + SNAP)``; an atom that sits on the lattice up
    to float error thus keeps its place instead of dropping a whole step. The label's excess over the true
    loss is computed exactly (``Fraction``; plus :data:`LOSS_PAD` for a loss that is not the float given) and
    its maximum over the atoms (and the ``cells``' own, their fourth entry) is the law's ``slack``. With
    ``w = q e^{min(label - loss, 0)}`` every label's likelihood ratio is at least ``e^{label - slack}``, and
    :func:`_merge_down` keeps that through its relabelling (its deficits use the labels' distances, which
    differ from the levels' by at most the slack, far inside its ``REL_PAD`` margins): the law of
    ``label - slack`` is a post-processing of the true pair, so the labelled law evaluated at
    ``eps + slack`` is a lower bound of the true profile at ``eps`` (the engine adds the composed slack).
    ``cells`` is ``(a0, q, pe, slack)`` of a continuous part, ``pe`` the P-mass times ``e^{edge}``.
    """
    loss = np.asarray(loss, dtype=np.float64)
    q = np.asarray(q, dtype=np.float64)
    j = np.floor((loss - shift) / h + SNAP).astype(np.int64)
    _check_points(float(j.max() - j.min()) + 2, "lattice_from_atoms")
    fs, fh = Fraction(shift), Fraction(h)
    slack = Fraction(0) if cells is None else Fraction(cells[3])
    labels = []
    for ji, li, ei in zip(j.tolist(), loss.tolist(), exact.tolist(), strict=True):
        label = fs + ji * fh
        labels.append(label)
        over = label - Fraction(li) + (0 if ei else Fraction(LOSS_PAD * abs(li) + 1e-300))
        slack = max(slack, over)
    lo, hi = int(j.min()), int(j.max())
    if cells is not None:
        lo, hi = min(lo, cells[0]), max(hi, cells[0] + cells[1].size - 1)
    # label - loss (<= the slack), as a float rounded up: min(., 0) then only lowers w (the level e^{min(label,
    # loss)}); relative error of w as in grid_from_atoms
    gap = np.array([float(lab - Fraction(li)) for lab, li in zip(labels, loss.tolist(), strict=True)])
    rel = REL_PAD + LOSS_PAD * (float(np.max(np.abs(loss))) + 1.0) + (loss.size + 8) * 2 * _U
    cell_q = _accumulate(j, _pad_down(q), lo, hi) * (1.0 - (loss.size + 2) * 2 * _U)
    cell_w = _accumulate(j, q * np.exp(np.minimum(gap, 0.0)), lo, hi)
    if cells is not None:
        c0, cq, cw, _ = cells
        cell_q[c0 - lo : c0 - lo + cq.size] += _pad_down(cq)
        cell_w[c0 - lo : c0 - lo + cw.size] += cw
        cell_q *= 1.0 - 2 * _U
    law = _merge_down(lo, cell_q, cell_w, h, rel)
    slack_up = float(slack)
    if Fraction(slack_up) < slack:
        slack_up = math.nextafter(slack_up, math.inf)
    return GridLaw(law.offset, law.masses, inf_mass * (1.0 - 4 * _U), h, shift, max(0.0, slack_up))


def _merge_down(a0: int, q: NDArray[np.float64], w: NDArray[np.float64], h: float, rel: float) -> GridLaw:
    r"""The optimistic law of cells ``[a h, (a+1) h]``, ``a = a0 + i``, by a post-processing that lands on the grid.

    ``q[i]`` is cell ``i``'s Q-mass (already rounded down) and ``w[i]`` its P-mass times :math:`e^{ah}`,
    both true to relative ``rel``; every loss of cell ``i`` lies in :math:`[ah,(a+1)h]`. Take the
    non-empty cells in order; cell ``i`` has excess :math:`E_i=q_i-w_i\ge0` over its own label
    :math:`a_i` and deficit :math:`D_{i-1}=e^{(a_i-a_{i-1})h}w_{i-1}-q_{i-1}\ge0` under it for the
    non-empty cell below. A fraction :math:`x_{i-1}` of that cell's outputs (Q- and P-mass alike) is
    relabelled :math:`a_i`, the rest keeps :math:`a_{i-1}`: a randomised post-processing, so the
    relabelled pair is dominated by the true one (data processing). Going down from the top cell
    (:math:`x=0`), :math:`x_{i-1}=\min(1,(1-x_i)E_i^-/D_{i-1}^+)(1-10^{-12})` with certified bounds
    :math:`E^-\le E`, :math:`D^+\ge D`, so every label's likelihood ratio stays :math:`\ge e^{a_ih}` and
    the label may be put at loss :math:`a_ih` (rounding a loss down keeps the law dominated). Flooring
    alone loses up to :math:`h` per part; here a label sits exactly on the grid wherever the mass below
    can balance it (second-order error, like "connect the dots" [DGKKM22, Sec. 4] run backwards).
    """
    nz = np.flatnonzero(q > 0)
    if nz.size == 0:
        return GridLaw(a0, np.zeros(1), 0.0, h)
    qs, ws = q[nz], w[nz]
    e_lo = np.maximum(qs - ws - 2 * rel * (qs + ws), 0.0)  # lower bounds of the excesses: E - 2 rel (q + w)
    gap = np.diff(nz).astype(np.float64) * h  # loss distance to the next non-empty label above (exact)
    with np.errstate(over="ignore", invalid="ignore"):
        up_w = np.exp(gap) * (1 + 8 * _U) * ws[:-1]
        d_hi = up_w - qs[:-1] + 2 * rel * (up_w + qs[:-1])  # upper bounds of the deficits: D + 2 rel (up_w + q)
    # a P-mass that underflowed (w = 0: its relative error is unbounded) or an e^gap that overflowed: the
    # deficit is not bounded, so that cell never moves (x = 0)
    d_hi = np.where((ws[:-1] > 0) & np.isfinite(d_hi), d_hi, np.inf)
    xs = _relabel_fractions(np.asarray(e_lo), np.asarray(d_hi))
    m = np.zeros(q.size)
    m[nz] += (1.0 - xs) * qs
    m[nz[1:]] += xs[:-1] * qs[:-1]  # moved up to the next non-empty label
    return GridLaw(a0, np.maximum(m * (1.0 - 8 * _U), 0.0), 0.0, h)  # Q-masses rounded down


#: Up to this many non-empty cells the relabelling fractions are the exact greedy (a Python loop);
#: beyond, the one-pass alternating choice (see :func:`_relabel_fractions`).
GREEDY_CELLS = 1024


def _relabel_fractions(e_lo: NDArray[np.float64], d_hi: NDArray[np.float64]) -> NDArray[np.float64]:
    r"""Fractions :math:`x` (the top one 0) with :math:`x_{i-1}D_{i-1}^+\le(1-x_i)E_i^-` for every ``i``.

    With :math:`r_i=E_i^-/D_{i-1}^+` (times :math:`1-10^{-12}`, above the rounding of the product),
    the greedy takes :math:`x_{i-1}=\min(1,(1-x_i)r_i)` from the top down: a sequential loop, used up to
    :data:`GREEDY_CELLS` cells (atoms: a few hundred). Beyond, cells at odd distance below the top move
    :math:`x_{i-1}=\min(1,r_i)` into the label above, whose own cell stays (:math:`x_i=0`): valid in one
    array pass, and close to the greedy for a smooth density, where :math:`r_i\approx1` makes the
    greedy alternate the same way.
    """
    n = e_lo.size
    with np.errstate(divide="ignore", invalid="ignore"):
        r = np.where(d_hi > 0.0, e_lo[1:] / d_hi, np.inf) * (1.0 - 1e-12)
    r = np.where(e_lo[1:] > 0.0, r, 0.0)  # no excess: nothing to absorb with
    x = np.zeros(n)
    if n <= GREEDY_CELLS:
        rs = r.tolist()
        xs = [0.0] * n
        for i in range(n - 1, 0, -1):
            xs[i - 1] = min(1.0, (1.0 - xs[i]) * rs[i - 1])
        return np.asarray(xs)
    mover = (n - 1 - np.arange(n - 1)) % 2 == 1  # at odd distance below the top cell
    x[:-1] = np.where(mover, np.minimum(1.0, r), 0.0)
    return x


def _grid_from_cells(
    a0: int, q: NDArray[np.float64], pe: NDArray[np.float64], h: float, *, pessimistic: bool
) -> GridLaw:
    """Cells ``[ (a0+i) h, (a0+i+1) h ]`` with Q-mass ``q[i]`` and ``pe[i] = P-mass * e^{(a0+i) h}`` (both
    trusted to :data:`REL_PAD`): connect-the-dots (pessimistic) or :func:`_merge_down` (optimistic)."""
    if pessimistic:
        qu = _pad_up(q)
        err = REL_PAD * (q + pe)  # absolute error of q - pe (both trusted to REL_PAD)
        wb = (q - pe + 2 * err) / (-math.expm1(-h))
        wb = np.clip(_pad_up(wb), 0.0, qu)
        wa = (qu - wb) * (1.0 + 4 * _U)
        m = np.zeros(q.size + 1)
        m[:-1] += wa
        m[1:] += wb
        return GridLaw(a0, m * (1.0 + 4 * _U), 0.0, h)
    return _merge_down(a0, _pad_down(q), pe, h, REL_PAD)


def _merge(laws: list[GridLaw], *, pessimistic: bool) -> GridLaw:
    h = laws[0].h
    lo = min(g.offset for g in laws)
    hi = max(g.offset + g.masses.size - 1 for g in laws)
    m = np.zeros(hi - lo + 1)
    for g in laws:
        m[g.offset - lo : g.offset - lo + g.masses.size] += g.masses
    fac = (1.0 + 2 * len(laws) * _U) if pessimistic else (1.0 - 2 * len(laws) * _U)
    return GridLaw(lo, m * fac, sum(g.inf_mass for g in laws) * fac, h)


def _log_cell_masses(z: NDArray[np.float64]) -> NDArray[np.float64]:
    """``log(Phi(z[i+1]) - Phi(z[i]))`` for increasing ``z``, without cancellation in either tail.

    Cells above the median use the upper tail ``Phi(-z)``, the others ``Phi(z)``; each
    ``log_ndtr`` is evaluated once per edge.
    """
    lo_t = special.log_ndtr(z)  # log Phi(z)
    up_t = special.log_ndtr(-z)  # log Phi(-z)
    upper = z[:-1] > 0
    a = np.where(upper, up_t[:-1], lo_t[1:])
    b = np.where(upper, up_t[1:], lo_t[:-1])
    with np.errstate(divide="ignore"):
        return np.asarray(a + np.log(-np.expm1(b - a)), dtype=np.float64)


def _is_exact_ratio(num: float, den: float, value: float) -> bool:
    """Whether the float ``value`` equals the real ``num / den`` exactly."""
    return Fraction(num) / Fraction(den) == Fraction(value)


def _check_h(h: float) -> float:
    h = check_positive("h", h)
    if math.frexp(h)[0] != 0.5:
        raise InvalidArgument(f"h={h!r} must be a power of two (exact grid arithmetic).")
    return h


def _check_points(n: float, what: str) -> None:
    if n > MAX_PART_POINTS:
        raise InvalidArgument(f"{what} needs {n:.3g} grid points (> {MAX_PART_POINTS}); use a coarser grid h.")


# --------------------------------------------------------------------------------------
# parts
# --------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class GaussianPart:
    r"""Gaussian mechanism :math:`N(f(x),\sigma^2)`: PLD :math:`N(\mu^2/2,\mu^2)`, :math:`\mu=\Delta/\sigma` [DRS22, Thm. 2.7].

    Examples
    --------
    >>> g = GaussianPart(sigma=1.0).grid_law(2.0**-8, pessimistic=True)
    >>> 0.126 < g.delta(1.0) < 0.1275   # exact 0.126936 [BW18, Thm. 8]
    True
    """

    sigma: float
    """Noise standard deviation (> 0)."""
    sensitivity: float = 1.0
    """L2 sensitivity under the caller's neighbouring relation (> 0)."""

    def __post_init__(self) -> None:
        check_positive("sigma", self.sigma)
        check_positive("sensitivity", self.sensitivity)

    def loss_scale(self) -> float:
        return self.sensitivity / self.sigma

    def support_width(self) -> float:
        return 24.0 * self.sensitivity / self.sigma

    def max_loss(self) -> Fraction | None:
        return None  # the loss is unbounded

    def grid_law(self, h: float, *, pessimistic: bool, tail_mass: float = DEFAULT_TAIL_MASS) -> GridLaw:
        h = _check_h(h)
        check_in_interval("tail_mass", tail_mass, 0.0, 0.5, lo_open=True, hi_open=True)
        mu = self.sensitivity / self.sigma
        m = mu * mu / 2.0
        z = -float(special.ndtri(tail_mass))
        a0 = math.floor((m - z * mu) / h)
        a1 = math.ceil((m + z * mu) / h)
        _check_points(a1 - a0, "GaussianPart")
        edges = h * np.arange(a0, a1 + 1, dtype=np.float64)  # exact (h a power of two)
        q = np.exp(_log_cell_masses((edges - m) / mu))  # Q: N(m, mu^2)
        pe = np.exp(_log_cell_masses((edges + m) / mu) + edges[:-1])  # P: N(-m, mu^2), times e^{a h}
        law = _grid_from_cells(a0, q, pe, h, pessimistic=pessimistic)
        low_tail = float(special.ndtr((edges[0] - m) / mu))
        high_tail = float(special.ndtr(-(edges[-1] - m) / mu))
        mass = law.masses.copy()
        if pessimistic:
            mass[0] += low_tail * (1 + REL_PAD)  # the tails' closed forms trusted to REL_PAD: padded up
            return GridLaw(a0, mass, min(1.0, high_tail * (1 + REL_PAD)), h)
        mass[-1] += high_tail * (1 - REL_PAD)  # padded down, on the top cell (optimistic: none at +inf)
        return GridLaw(a0, mass, 0.0, h)


def _laplace_cells(edges: NDArray[np.float64], d: float) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """The cell masses ``(q, pe)`` of a Laplace part's privacy loss between consecutive ``edges`` (clipped to
    ``[-D, D]``), as :meth:`LaplacePart.grid_law` and :meth:`LaplacePart.lattice_law` take them [KJH20, Sec. 6]."""
    l1 = np.maximum(edges[:-1], -d)
    l2 = np.minimum(edges[1:], d)
    dm = -np.expm1(-np.maximum(l2 - l1, 0.0) / 2.0)
    return 0.5 * np.exp(-(d - l2) / 2.0) * dm, 0.5 * np.exp(-(d + l1) / 2.0 + edges[:-1]) * dm


@dataclass(frozen=True, slots=True)
class LaplacePart:
    r"""Laplace mechanism :math:`f(x)+\mathrm{Lap}(b)`: loss :math:`(|y|-|y-\Delta|)/b\in[-D,D]`, :math:`D=\Delta/b`.

    Under :math:`Q=\mathrm{Lap}(\Delta,b)`: atom :math:`\tfrac12` at :math:`D`, atom
    :math:`\tfrac12e^{-D}` at :math:`-D`, and on :math:`(-D,D)` Q-mass
    :math:`\tfrac12e^{-(D-l)/2}\,dl/2` (P-mass :math:`e^{-l}` times that) [KJH20, Sec. 6].
    It is :math:`D`-pure DP, so the composed profile vanishes beyond :math:`kD`.
    """

    b: float
    """Laplace scale (> 0)."""
    sensitivity: float = 1.0
    """L1 sensitivity under the caller's neighbouring relation (> 0)."""

    def __post_init__(self) -> None:
        check_positive("b", self.b)
        check_positive("sensitivity", self.sensitivity)

    def loss_scale(self) -> float:
        return self.sensitivity / self.b

    def support_width(self) -> float:
        return 2.0 * self.sensitivity / self.b

    def max_loss(self) -> Fraction | None:
        return Fraction(self.sensitivity) / Fraction(self.b)  # D = Delta / b, exactly

    def grid_law(self, h: float, *, pessimistic: bool, tail_mass: float = DEFAULT_TAIL_MASS) -> GridLaw:
        h = _check_h(h)
        d = self.sensitivity / self.b
        a0, a1 = math.floor(-d / h), math.ceil(d / h)
        _check_points(a1 - a0, "LaplacePart")
        edges = h * np.arange(a0, a1 + 1, dtype=np.float64)
        q, pe = _laplace_cells(edges, d)
        ex = _is_exact_ratio(self.sensitivity, self.b, d)
        atom_loss, atom_q, atom_exact = np.array([-d, d]), np.array([0.5 * math.exp(-d), 0.5]), np.array([ex, ex])
        if not pessimistic:  # atoms and cells relabelled together: the atoms balance the cells below them
            return grid_from_atoms(atom_loss, atom_q, 0.0, h, pessimistic=False, exact=atom_exact, cells=(a0, q, pe))
        cells = _grid_from_cells(a0, q, pe, h, pessimistic=True)
        atoms = grid_from_atoms(atom_loss, atom_q, 0.0, h, pessimistic=True, exact=atom_exact)
        return _merge([cells, atoms], pessimistic=True)

    def lattice(self) -> Lattice:
        """The atoms ``-D`` and ``D``: ``Lattice(-D, 2D, continuous=True)``."""
        d = self.sensitivity / self.b
        return Lattice(-d, 2.0 * d, True)

    def lattice_law(self, h: float, shift: float) -> GridLaw:
        """The optimistic law on the labels ``shift + h Z`` (:func:`lattice_from_atoms`): the cells between the
        float edges ``shift + h a`` are put on their labels by :func:`_merge_down` with the atoms."""
        h = check_positive("h", h)
        d = self.sensitivity / self.b
        a0, a1 = math.floor((-d - shift) / h) - 1, math.ceil((d - shift) / h) + 1
        _check_points(a1 - a0, "LaplacePart")
        edges = shift + h * np.arange(a0, a1 + 1, dtype=np.float64)  # floats: the cells' exact boundaries
        # each float edge is within 2u (|shift| + |h a|) of its label shift + h a
        cell_slack = 4 * _U * (abs(shift) + h * max(abs(a0), abs(a1))) + 1e-300
        q, pe = _laplace_cells(edges, d)
        ex = _is_exact_ratio(self.sensitivity, self.b, d)
        return lattice_from_atoms(
            np.array([-d, d]),
            np.array([0.5 * math.exp(-d), 0.5]),
            0.0,
            h,
            shift,
            exact=np.array([ex, ex]),
            cells=(a0, q, pe, cell_slack),
        )


@dataclass(frozen=True, slots=True)
class DiscreteGaussianPart:
    r"""Discrete Gaussian :math:`N_{\mathbb Z}(0,\sigma^2)` on an integer query [CKS20, Def. 1].

    Outcome :math:`y` has loss :math:`(2y\Delta-\Delta^2)/(2\sigma^2)` and Q-mass
    :math:`e^{-(y-\Delta)^2/(2\sigma^2)}/Z` (the exact pmf, :math:`Z` summed over the kept range;
    the remaining tail is bounded geometrically and moved to :math:`+\infty` / the lowest loss
    (pessimistic) or dropped (optimistic)).
    """

    sigma2: float
    """Variance parameter :math:`\\sigma^2` (> 0)."""
    sensitivity: int = 1
    """Integer sensitivity :math:`\\Delta\\ge1` under the caller's neighbouring relation."""

    def __post_init__(self) -> None:
        check_positive("sigma2", self.sigma2)
        check_int("sensitivity", self.sensitivity, minimum=1)

    def loss_scale(self) -> float:
        return self.sensitivity / math.sqrt(self.sigma2)

    def support_width(self) -> float:
        return 24.0 * self.sensitivity / math.sqrt(self.sigma2)

    def max_loss(self) -> Fraction | None:
        return None  # the loss is unbounded

    def grid_law(self, h: float, *, pessimistic: bool, tail_mass: float = DEFAULT_TAIL_MASS) -> GridLaw:
        h = _check_h(h)
        check_in_interval("tail_mass", tail_mass, 0.0, 0.5, lo_open=True, hi_open=True)
        s2, dl = self.sigma2, self.sensitivity
        sigma = math.sqrt(s2)
        t = math.ceil(sigma * math.sqrt(2.0 * math.log(1.0 / tail_mass) + 4.0)) + 1  # e^{-t^2/2s2} << tail
        _check_points(2 * t + 1, "DiscreteGaussianPart")
        x = np.arange(-t, t + 1, dtype=np.float64)  # offset from the centre of Q (y = Delta + x)
        w = np.exp(-(x * x) / (2.0 * s2))
        zsum = float(np.sum(w))
        # tail sum_{|x| > t} e^{-x^2/2s2} <= 2 e^{-(t+1)^2/2s2} / (1 - e^{-(t+1)/s2}) (geometric bound)
        tail = 2.0 * math.exp(-((t + 1) ** 2) / (2.0 * s2)) / -math.expm1(-(t + 1) / s2)
        y = x + dl
        loss = (2.0 * y * dl - dl * dl) / (2.0 * s2)
        if pessimistic:
            q = w / (zsum * (1 - (x.size + 4) * _U))  # Z >= partial sum (rounded down): masses up
            law = grid_from_atoms(loss, q, 0.0, h, pessimistic=True)
            ztail = tail / (zsum * (1 - (x.size + 4) * _U)) * (1 + REL_PAD)
            m = law.masses.copy()
            m[0] += ztail / 2.0  # half the padded tail bound on the lowest point, half at +inf (next line)
            return GridLaw(law.offset, m, min(1.0, ztail / 2.0 + law.inf_mass), h)
        q = w / ((zsum + tail) * (1 + (x.size + 4) * _U))  # Z <= partial sum + tail bound, rounded up: masses down
        return grid_from_atoms(loss, q, 0.0, h, pessimistic=False)


@dataclass(frozen=True, slots=True)
class DiscreteLaplacePart:
    r"""Discrete Laplace :math:`\Pr[X=x]\propto e^{-|x|/t}` on an integer query (``t`` the scale).

    Under :math:`Q`: loss :math:`\Delta/t` w.p. :math:`1/(1+e^{-1/t})`, :math:`-\Delta/t` w.p.
    :math:`e^{-\Delta/t}/(1+e^{-1/t})`, and :math:`(2y-\Delta)/t` w.p.
    :math:`e^{-(\Delta-y)/t}\tanh(1/2t)` for :math:`0<y<\Delta` (closed forms of the geometric sums).
    """

    t: float
    """Scale (> 0); the mechanism is ``sensitivity/t``-pure DP."""
    sensitivity: int = 1
    """Integer L1 sensitivity under the caller's neighbouring relation."""

    def __post_init__(self) -> None:
        check_positive("t", self.t)
        check_int("sensitivity", self.sensitivity, minimum=1)

    def loss_scale(self) -> float:
        return self.sensitivity / self.t

    def support_width(self) -> float:
        return 2.0 * self.sensitivity / self.t

    def max_loss(self) -> Fraction | None:
        return Fraction(self.sensitivity) / Fraction(self.t)  # Delta / t, exactly

    def _atoms(self) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.bool_]]:
        t, dl = self.t, self.sensitivity
        c = 1.0 / (1.0 + math.exp(-1.0 / t))
        y = np.arange(1, dl, dtype=np.float64)
        loss = np.concatenate([[-dl / t, dl / t], (2.0 * y - dl) / t])
        q = np.concatenate([[math.exp(-dl / t) * c, c], np.exp(-(dl - y) / t) * math.tanh(0.5 / t)])
        ex = np.array([_is_exact_ratio(2 * v - dl, t, float(lv)) for v, lv in zip([0, dl, *range(1, dl)], loss)])
        return loss, q, ex

    def grid_law(self, h: float, *, pessimistic: bool, tail_mass: float = DEFAULT_TAIL_MASS) -> GridLaw:
        h = _check_h(h)
        loss, q, ex = self._atoms()
        return grid_from_atoms(loss, q, 0.0, h, pessimistic=pessimistic, exact=ex)

    def lattice(self) -> Lattice:
        """The losses ``(2y - Delta) / t``: ``Lattice(-Delta / t, 2 / t, continuous=False)``."""
        return Lattice(-self.sensitivity / self.t, 2.0 / self.t, False)

    def lattice_law(self, h: float, shift: float) -> GridLaw:
        """The optimistic law on the labels ``shift + h Z`` (:func:`lattice_from_atoms`)."""
        loss, q, ex = self._atoms()
        return lattice_from_atoms(loss, q, 0.0, check_positive("h", h), shift, exact=ex)


@dataclass(frozen=True, slots=True)
class RandomizedResponsePart:
    r"""k-ary randomized response: the true value w.p. :math:`e^\varepsilon/(e^\varepsilon+k-1)`, else uniform other.

    PLD: loss :math:`\varepsilon` w.p. :math:`e^\varepsilon/(e^\varepsilon+k-1)`, :math:`-\varepsilon`
    w.p. :math:`1/(e^\varepsilon+k-1)`, 0 w.p. :math:`(k-2)/(e^\varepsilon+k-1)`.
    """

    epsilon: float
    """Pure-DP parameter (>= 0)."""
    k: int = 2
    """Number of categories (>= 2)."""

    def __post_init__(self) -> None:
        check_nonnegative("epsilon", self.epsilon)
        check_int("k", self.k, minimum=2)

    def loss_scale(self) -> float:
        return max(self.epsilon, 1e-6)

    def support_width(self) -> float:
        return max(2.0 * self.epsilon, 1e-6)

    def max_loss(self) -> Fraction | None:
        return Fraction(self.epsilon)

    def grid_law(self, h: float, *, pessimistic: bool, tail_mass: float = DEFAULT_TAIL_MASS) -> GridLaw:
        h = _check_h(h)
        e, k = self.epsilon, self.k
        small = math.exp(-e)  # the masses over e^e, so a large epsilon does not overflow
        den = 1.0 + (k - 1) * small
        loss = np.array([e, -e, 0.0])
        q = np.array([1.0 / den, small / den, (k - 2) * small / den])
        return grid_from_atoms(loss, q, 0.0, h, pessimistic=pessimistic, exact=np.ones(3, dtype=bool))

    def lattice(self) -> Lattice | None:
        """The losses ``-eps, (0,) eps``: spacing ``2 eps`` (``eps`` for ``k > 2``); ``None`` for ``eps = 0``."""
        if self.epsilon == 0.0:
            return None
        return Lattice(-self.epsilon, self.epsilon if self.k > 2 else 2.0 * self.epsilon, False)

    def lattice_law(self, h: float, shift: float) -> GridLaw:
        """The optimistic law on the labels ``shift + h Z`` (:func:`lattice_from_atoms`)."""
        e, k = self.epsilon, self.k
        small = math.exp(-e)
        den = 1.0 + (k - 1) * small
        q = np.array([1.0 / den, small / den, (k - 2) * small / den])
        return lattice_from_atoms(
            np.array([e, -e, 0.0]), q, 0.0, check_positive("h", h), shift, exact=np.ones(3, dtype=bool)
        )


@dataclass(frozen=True, slots=True)
class ApproxDPPart:
    r"""Any :math:`(\varepsilon,\delta)`-DP mechanism, through its dominating pair [KOV15, Thm. 2.4].

    PLD: :math:`+\infty` w.p. :math:`\delta`; :math:`\varepsilon` w.p. :math:`(1-\delta)e^\varepsilon/(1+e^\varepsilon)`;
    :math:`-\varepsilon` w.p. :math:`(1-\delta)/(1+e^\varepsilon)`.
    """

    epsilon: float
    """Epsilon (>= 0)."""
    delta: float = 0.0
    """Delta in [0, 1]."""

    def __post_init__(self) -> None:
        check_nonnegative("epsilon", self.epsilon)
        check_in_interval("delta", self.delta, 0.0, 1.0)

    def loss_scale(self) -> float:
        return max(self.epsilon, 1e-6)

    def support_width(self) -> float:
        return max(2.0 * self.epsilon, 1e-6)

    def max_loss(self) -> Fraction | None:
        return Fraction(self.epsilon)  # the finite losses are +-epsilon; delta sits at +inf

    def grid_law(self, h: float, *, pessimistic: bool, tail_mass: float = DEFAULT_TAIL_MASS) -> GridLaw:
        h = _check_h(h)
        e, d = self.epsilon, self.delta
        loss = np.array([e, -e])
        small = math.exp(-e)  # 1/(1+e^e) = e^-e/(1+e^-e): no overflow for a large epsilon
        q = (1.0 - d) * np.array([1.0 / (1.0 + small), small / (1.0 + small)])
        return grid_from_atoms(loss, q, d, h, pessimistic=pessimistic, exact=np.ones(2, dtype=bool))

    def lattice(self) -> Lattice | None:
        """The losses ``-eps, eps``: ``Lattice(-eps, 2 eps, continuous=False)``; ``None`` for ``eps = 0``."""
        if self.epsilon == 0.0:
            return None
        return Lattice(-self.epsilon, 2.0 * self.epsilon, False)

    def lattice_law(self, h: float, shift: float) -> GridLaw:
        """The optimistic law on the labels ``shift + h Z`` (:func:`lattice_from_atoms`)."""
        e, d = self.epsilon, self.delta
        small = math.exp(-e)
        q = (1.0 - d) * np.array([1.0 / (1.0 + small), small / (1.0 + small)])
        return lattice_from_atoms(np.array([e, -e]), q, d, check_positive("h", h), shift, exact=np.ones(2, dtype=bool))
