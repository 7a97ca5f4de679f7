"""Brute-force cross-check of the certified PLD bracket of ``compose_plds`` on small discrete compositions.

The reference is independent of semidp's grids, FFTs and closed forms: every part's exact
privacy-loss distribution (PLD) is written down atom by atom in mpmath at 50 digits, the parts
are composed by exact sparse convolution (losses kept as exact rationals, so equal losses merge
exactly), and the privacy profile is read off the composed atoms.

Convention (``accountant/pld/parts.py``): the PLD of a pair ``(P, Q)`` is the law of
``L = log(dQ/dP)`` under ``Q``, with mass at ``+inf`` where ``P = 0``, and
``delta(eps) = E_Q[(1 - e^{eps - L})_+] + Q(L = inf)``.

Every check is one-sided: ``lower <= truth <= upper`` with a relative slack of ``1e-9`` plus the
Q-mass the reference drops (atoms below ``1e-45`` and the discrete Gaussian's far tails), which
can only make the reference's ``delta`` too small, by at most that mass.
"""

from __future__ import annotations

import bisect
import dataclasses
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import mpmath
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from semidp.accountant.pld import parts as pld_parts
from semidp.accountant.pld.engine import PLDBracket, compose_plds
from semidp.accountant.pld.parts import (
    ApproxDPPart,
    DiscreteGaussianPart,
    DiscreteLaplacePart,
    RandomizedResponsePart,
)

MP = mpmath.MPContext()
MP.dps = 50

Mpf = Any  # mpmath ships no stubs
DiscretePart = DiscreteGaussianPart | DiscreteLaplacePart | RandomizedResponsePart | ApproxDPPart
Item = tuple[DiscretePart, int]

#: Atoms of Q-mass below this are dropped from the reference (their mass goes to its error term).
PRUNE = MP.mpf(10) ** -45
#: Rounding of the 50-digit reference (sums of a few thousand terms of size <= 1): far above it.
ROUNDING = MP.mpf(10) ** -44
#: Relative slack of every comparison.
SLACK = MP.mpf(10) ** -9
#: Most atoms the composed reference may need (product of the distinct parts' atom counts).
ATOM_BUDGET = 5000
#: Coarse explicit grids (stress the rounding) and the automatic one.
GRIDS: tuple[float | None, ...] = (None, 2.0**-3, 2.0**-4)
DELTAS = (1e-3, 1e-6, 1e-10)
FIXED_EPS = (-2.0, -0.5, -0.0625, 0.0, 0.0625, 0.3, 1.0, 2.5)

#: Ulps the upper bound of epsilon(delta) may fall below the true epsilon: none. This file found
#: ``PLDBracket._eps_side`` rounding its final sum ``grid point + log1p(...)`` to nearest (half an ulp below the
#: truth just below the top loss of a pure-DP composition); it now rounds up, and
#: :func:`test_epsilon_upper_is_rounded_up_near_a_pure_dp_top` keeps that case.
EPS_UPPER_ULPS = 0

brute = settings(max_examples=80, deadline=None, derandomize=True)


# ---------------------------------------------------------------- the reference


def mpq(x: Fraction) -> Mpf:
    """``x`` in the 50-digit context."""
    return MP.mpf(x.numerator) / x.denominator


def part_atoms(part: DiscretePart) -> tuple[Fraction, dict[int, Mpf], Mpf]:
    """One part's exact PLD: losses ``c * unit`` (``c`` an integer key) with their Q-masses, and the mass at ``+inf``.

    Masses below :data:`PRUNE` are left out (their mass is accounted for by :meth:`RefPLD.err`).
    """
    atoms: dict[int, Mpf] = {}
    inf = MP.mpf(0)
    if isinstance(part, DiscreteGaussianPart):
        # Q = N_Z(D, s2), P = N_Z(0, s2); y = D + x has loss (2yD - D^2)/(2 s2) = (2x + D) * D/(2 s2).
        # Z = sum_x e^{-x^2/(2 s2)} = theta_3(0, e^{-1/(2 s2)}) exactly (Jacobi theta function).
        d, s2 = part.sensitivity, MP.mpf(part.sigma2)
        unit = Fraction(d) / (2 * Fraction(part.sigma2))
        z = MP.jtheta(3, 0, MP.exp(-1 / (2 * s2)))
        # e^{-x^2/(2 s2)} / Z < 1e-46 beyond |x| = t (Z >= 1): everything dropped there is < PRUNE
        t = int(math.ceil(math.sqrt(2 * part.sigma2 * 46 * math.log(10)))) + 2
        for x in range(-t, t + 1):
            q = MP.exp(-MP.mpf(x * x) / (2 * s2)) / z
            if q >= PRUNE:
                atoms[2 * x + d] = q
        return unit, atoms, inf
    if isinstance(part, DiscreteLaplacePart):
        # pmf e^{-|x|/t} / Z, Z = (1 + r)/(1 - r), r = e^{-1/t}; Q centred at D, P at 0.
        # y <= 0: loss -D/t, Q-mass r^D / ((1 - r) Z); y >= D: loss D/t, Q-mass 1 / ((1 - r) Z);
        # 0 < y < D: loss (2y - D)/t, Q-mass r^{D - y} / Z.
        d = part.sensitivity
        unit = 1 / Fraction(part.t)
        r = MP.exp(-1 / MP.mpf(part.t))
        z = (1 + r) / (1 - r)
        atoms[-d] = r**d / ((1 - r) * z)
        atoms[d] = 1 / ((1 - r) * z)
        for y in range(1, d):
            atoms[2 * y - d] = r ** (d - y) / z
        return unit, atoms, inf
    if isinstance(part, RandomizedResponsePart):
        e, k = MP.mpf(part.epsilon), part.k
        den = MP.exp(e) + k - 1
        atoms[1] = MP.exp(e) / den
        atoms[-1] = 1 / den
        if k > 2:
            atoms[0] = (k - 2) / den
        return Fraction(part.epsilon), atoms, inf
    e, dl = MP.mpf(part.epsilon), MP.mpf(part.delta)
    atoms[1] = (1 - dl) * MP.exp(e) / (1 + MP.exp(e))
    atoms[-1] = (1 - dl) / (1 + MP.exp(e))
    return Fraction(part.epsilon), {c: q for c, q in atoms.items() if q > 0}, dl


def convolve(a: dict[Any, Mpf], b: dict[Any, Mpf]) -> dict[Any, Mpf]:
    """Sparse convolution of two atom maps (keys add, masses multiply); atoms below :data:`PRUNE` dropped."""
    out: dict[Any, Mpf] = {}
    for ka, qa in a.items():
        for kb, qb in b.items():
            k = ka + kb
            out[k] = out.get(k, 0) + qa * qb
    return {k: q for k, q in out.items() if q >= PRUNE}


@dataclass(frozen=True)
class RefPLD:
    """A composed PLD: finite atoms sorted by loss, suffix sums for O(log n) profile evaluation."""

    loss: list[Mpf]
    """Distinct finite losses, increasing."""
    exact_loss: list[Fraction]
    """The same losses, exactly."""
    suffix_q: list[Mpf]
    """``suffix_q[i] = sum_{j >= i} q_j`` (length ``n + 1``)."""
    suffix_p: list[Mpf]
    """``suffix_p[i] = sum_{j >= i} q_j e^{-l_j}`` (the P-masses; length ``n + 1``)."""
    inf_mass: Mpf
    """Q-mass at ``+inf``."""
    err: Mpf
    """Bound of ``truth - reference`` (dropped Q-mass plus rounding); the reference is never above the truth."""

    def delta(self, eps: Mpf) -> Mpf:
        """``sum_{l > eps} q (1 - e^{eps - l}) + inf_mass``: the reference profile (a lower bound, within ``err``)."""
        i = bisect.bisect_right(self.loss, eps)
        finite = self.suffix_q[i] - MP.exp(eps) * self.suffix_p[i]
        return max(finite, MP.mpf(0)) + self.inf_mass

    def epsilon(self, target: Mpf, extra: Mpf = 0) -> Mpf:
        """Smallest ``eps >= 0`` with ``delta(eps) + extra <= target``, by bisection (``inf`` if none).

        ``delta`` is continuous and non-increasing, and equals ``inf_mass`` from the largest loss on.
        """
        if self.inf_mass + extra > target:
            return MP.inf
        if self.delta(MP.mpf(0)) + extra <= target:
            return MP.mpf(0)
        lo, hi = MP.mpf(0), self.loss[-1]
        for _ in range(240):  # 2^-240 of the loss range: below the working precision
            mid = (lo + hi) / 2
            if self.delta(mid) + extra <= target:
                hi = mid
            else:
                lo = mid
        return hi


def distinct(items: Sequence[Item]) -> list[Item]:
    """Equal parts merged, counts summed (as :func:`compose_plds` does)."""
    counted: dict[DiscretePart, int] = {}
    for part, k in items:
        counted[part] = counted.get(part, 0) + k
    return list(counted.items())


def reference(items: Sequence[Item]) -> RefPLD:
    """The exact composed PLD of ``items`` (``(part, count)`` pairs)."""
    composed: dict[Fraction, Mpf] = {Fraction(0): MP.mpf(1)}
    finite_total = MP.mpf(1)  # product of the parts' finite masses: 1 - (composed mass at +inf)
    for part, count in distinct(items):
        unit, atoms, inf = part_atoms(part)
        power: dict[int, Mpf] = {0: MP.mpf(1)}
        for _ in range(count):
            power = convolve(power, atoms)
        losses: dict[Fraction, Mpf] = {}
        for c, q in power.items():  # keys c * unit may coincide (unit 0: an epsilon = 0 part)
            losses[c * unit] = losses.get(c * unit, 0) + q
        composed = convolve(composed, losses)
        finite_total *= (1 - inf) ** count
    exact_loss = sorted(composed)
    loss = [mpq(x) for x in exact_loss]
    q = [composed[x] for x in exact_loss]
    n = len(q)
    suffix_q = [MP.mpf(0)] * (n + 1)
    suffix_p = [MP.mpf(0)] * (n + 1)
    for i in range(n - 1, -1, -1):
        suffix_q[i] = suffix_q[i + 1] + q[i]
        suffix_p[i] = suffix_p[i + 1] + q[i] * MP.exp(-loss[i])
    # the true masses sum to 1: what the kept atoms miss is the dropped mass (>= 0 up to rounding)
    dropped = max(finite_total - suffix_q[0], MP.mpf(0))
    return RefPLD(loss, exact_loss, suffix_q, suffix_p, 1 - finite_total, dropped + ROUNDING)


def estimated_atoms(part: DiscretePart, count: int) -> int:
    """An upper estimate of the atoms of the ``count``-fold part (after pruning at :data:`PRUNE`)."""
    if isinstance(part, DiscreteGaussianPart):
        return 2 * int(math.sqrt(2 * count * part.sigma2 * 46 * math.log(10))) + 3
    if isinstance(part, DiscreteLaplacePart):
        return count * part.sensitivity + 1
    if isinstance(part, RandomizedResponsePart):
        return count + 1 if part.k == 2 else 2 * count + 1
    return count + 1


# ---------------------------------------------------------------- the check


def eps_values(ref: RefPLD, bracket: object) -> list[float]:
    """Query points: fixed ones (negative, 0, positive), quantiles of the profile, and the top of the loss range."""
    out = set(FIXED_EPS)
    for level in (MP.mpf("1e-2"), MP.mpf("1e-5"), MP.mpf("1e-9")):
        e = ref.epsilon(level + ref.inf_mass)
        if MP.isfinite(e):
            out.add(float(e))
    # the largest few finite losses (where delta vanishes, or is the top atom's tail), their neighbours, midpoints
    top = [float(x) for x in ref.exact_loss[-3:]]
    for x in top:
        out.update({x, math.nextafter(x, -math.inf), math.nextafter(x, math.inf), x - 1e-3, x * (1 - 1e-12)})
    out.update((a + b) / 2 for a, b in zip(top, top[1:]))
    cap = getattr(bracket, "loss_cap", math.inf)
    if math.isfinite(cap):
        out.update({cap, math.nextafter(cap, -math.inf), cap + 1e-9})
    return sorted(v for v in out if -1e6 <= v <= 1e6)


def bracket_violations(
    items: Sequence[Item],
    ref: RefPLD,
    grid: float | None,
    *,
    compose: Callable[..., Any] = compose_plds,
    eps_upper_ulps: int = EPS_UPPER_ULPS,
) -> list[str]:
    """Every query where ``compose(items, grid=grid)`` (:func:`compose_plds`) brackets the reference the wrong way.

    Strict (up to :data:`SLACK` on delta and the reference's error) except that the upper bound of
    ``epsilon(delta)`` may be ``eps_upper_ulps`` ulps below the truth (:data:`EPS_UPPER_ULPS`).
    """
    bracket = compose(list(items), grid=grid)
    bad: list[str] = []
    where = f"items={list(items)!r} grid={grid!r}"
    for eps in eps_values(ref, bracket):
        lo, up = bracket.delta(eps)
        truth = ref.delta(MP.mpf(eps))  # truth in [truth, truth + err]
        if MP.mpf(lo) > (truth + ref.err) * (1 + SLACK):
            bad.append(
                f"{where}: delta({eps!r}).lower={lo!r} > truth={MP.nstr(truth, 20)} (+err {MP.nstr(ref.err, 3)})"
            )
        if MP.mpf(up) < truth * (1 - SLACK):
            bad.append(f"{where}: delta({eps!r}).upper={up!r} < truth={MP.nstr(truth, 20)}")
    for d in DELTAS:
        lo, up = bracket.epsilon(d)
        dd = MP.mpf(d)
        # the true epsilon lies in [e_min, e_max]: delta_ref <= delta_true <= delta_ref + err, with the slack on delta
        e_min = ref.epsilon(dd * (1 + SLACK))
        e_max = ref.epsilon(dd * (1 - SLACK), ref.err)
        up_slack = up
        for _ in range(eps_upper_ulps):
            up_slack = math.nextafter(up_slack, math.inf)
        if MP.mpf(up_slack) < e_min:
            bad.append(f"{where}: epsilon({d!r}).upper={up!r} < true epsilon >= {MP.nstr(e_min, 20)}")
        if MP.mpf(lo) > e_max:
            bad.append(f"{where}: epsilon({d!r}).lower={lo!r} > true epsilon <= {MP.nstr(e_max, 20)}")
        if isinstance(bracket, PLDBracket) and up > bracket.loss_cap and ref.inf_mass == 0:
            bad.append(f"{where}: epsilon({d!r}).upper={up!r} above the pure-DP cap {bracket.loss_cap!r}")
    return bad


# ---------------------------------------------------------------- strategies


def param(lo: float, hi: float) -> st.SearchStrategy[float]:
    """A float in ``[lo, hi]``, often a dyadic one: losses then fall on the grid, where rounding is tightest."""
    dyadic = [v for v in (0.0, 0.125, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0) if lo <= v <= hi]
    return st.one_of(st.sampled_from(dyadic), st.floats(lo, hi))


def part_strategy(kind: str, *, pure: bool) -> st.SearchStrategy[DiscretePart]:
    sens = st.integers(1, 3)
    if kind == "dg":
        return st.builds(DiscreteGaussianPart, param(0.5, 20.0), sens)
    if kind == "dl":
        return st.builds(DiscreteLaplacePart, param(0.5, 5.0), sens)
    if kind == "rr":
        return st.builds(RandomizedResponsePart, param(0.05, 2.0), st.sampled_from([2, 3, 4]))
    deltas = [0.0] if pure else [0.0, 1e-6, 1e-3]
    return st.builds(ApproxDPPart, param(0.0, 2.0), st.sampled_from(deltas))


@st.composite
def compositions(draw: st.DrawFn, *, pure: bool = False) -> list[Item]:
    """2 to 5 parts with counts 1 to 3, the composed reference within :data:`ATOM_BUDGET` atoms.

    A part that would exceed the budget is taken once; if it still does, it is left out (the first
    two parts always fit: one part has at most a few hundred atoms and an (eps, delta) part two).
    """
    kinds = ["dl", "rr", "adp"] if pure else ["dg", "dl", "rr", "adp"]
    items: list[Item] = []
    size = 1
    for _ in range(draw(st.integers(2, 5))):
        part = draw(st.sampled_from(kinds).flatmap(lambda k: part_strategy(k, pure=pure)))
        count = draw(st.integers(1, 3))
        if size * estimated_atoms(part, count) > ATOM_BUDGET:
            count = 1
        if size * estimated_atoms(part, count) > ATOM_BUDGET:
            part = draw(part_strategy("adp", pure=pure))
        if size * estimated_atoms(part, count) > ATOM_BUDGET:
            continue
        size *= estimated_atoms(part, count)
        items.append((part, count))
    return items


# ---------------------------------------------------------------- tests


@pytest.mark.parametrize(
    "items",
    [
        [(RandomizedResponsePart(0.3, 2), 3)],
        [(DiscreteLaplacePart(1.5, 2), 2), (ApproxDPPart(0.7, 1e-3), 1)],
        [(DiscreteGaussianPart(2.0, 1), 2), (RandomizedResponsePart(1.1, 3), 1)],
    ],
)
def test_reference_is_a_probability_law(items: list[Item]) -> None:
    """The reference keeps all but its (tiny) error term of the Q-mass; the P-mass of the Q-support is at most 1."""
    ref = reference(items)
    assert 0 <= ref.err < MP.mpf(10) ** -40
    assert abs(ref.suffix_q[0] + ref.inf_mass - 1) <= ref.err
    assert ref.suffix_p[0] <= 1 + ROUNDING  # (an (eps, delta) part's P puts delta where Q = 0)


def test_reference_epsilon_zero_part() -> None:
    """An (eps = 0, delta) part: both finite atoms sit at loss 0 and must merge, not overwrite each other."""
    ref = reference([(ApproxDPPart(0.0, 1e-3), 2), (RandomizedResponsePart(0.5, 2), 1)])
    assert ref.err < MP.mpf(10) ** -40
    assert abs(ref.inf_mass - (1 - (1 - MP.mpf(1e-3)) ** 2)) < MP.mpf(10) ** -45


def test_reference_matches_binomial_closed_form() -> None:
    """k-fold randomized response against the binomial closed form [KOV15, Thm. 3.3]."""
    eps0, k = 0.3, 3
    ref = reference([(RandomizedResponsePart(eps0, 2), k)])
    p = MP.exp(MP.mpf(eps0)) / (1 + MP.exp(MP.mpf(eps0)))
    for eps in (MP.mpf(-1), MP.mpf(0), MP.mpf("0.45"), MP.mpf("0.9")):
        exact = MP.fsum(
            max(MP.binomial(k, i) * (p ** (k - i) * (1 - p) ** i - MP.exp(eps) * p**i * (1 - p) ** (k - i)), 0)
            for i in range(k + 1)
        )
        assert abs(ref.delta(eps) - exact) < MP.mpf(10) ** -40


def test_reference_discrete_gaussian_pair() -> None:
    """One discrete Gaussian against the profile summed over the pmf pair directly: sum_y (Q(y) - e^eps P(y))_+."""
    s2, d = MP.mpf(1.7), 2  # the float 1.7, as the part holds it
    ref = reference([(DiscreteGaussianPart(1.7, d), 1)])
    z = MP.jtheta(3, 0, MP.exp(-1 / (2 * s2)))
    for eps in (MP.mpf(-0.5), MP.mpf(0), MP.mpf(1), MP.mpf(3)):
        direct = MP.fsum(
            max(MP.exp(-((y - d) ** 2) / (2 * s2)) / z - MP.exp(eps) * MP.exp(-(y**2) / (2 * s2)) / z, 0)
            for y in range(-60, 61)
        )
        assert abs(ref.delta(eps) - direct) < MP.mpf(10) ** -40


@brute
@given(compositions())
def test_bracket_contains_truth(items: list[Item]) -> None:
    """Heterogeneous discrete compositions: ``lower <= truth <= upper`` for delta(eps) and epsilon(delta)."""
    ref = reference(items)
    assert ref.err < MP.mpf(10) ** -40  # the reference is (almost) the whole law: the checks are not vacuous
    bad = [v for grid in GRIDS for v in bracket_violations(items, ref, grid)]
    assert not bad, "\n".join(bad[:10])


@brute
@given(compositions(pure=True))
def test_bracket_contains_truth_pure_dp(items: list[Item]) -> None:
    """Pure-DP compositions (the loss cap bounds the upper end): the same checks, and the cap is the summed max loss."""
    ref = reference(items)
    assert ref.inf_mass == 0 and ref.err < MP.mpf(10) ** -40
    for grid in GRIDS:
        b = compose_plds(items, grid=grid)
        assert isinstance(b, PLDBracket)
        cap = sum((k * Fraction(p.max_loss() or 0) for p, k in items), Fraction(0))
        assert Fraction(b.loss_cap) >= cap >= ref.exact_loss[-1]
    bad = [v for grid in GRIDS for v in bracket_violations(items, ref, grid)]
    assert not bad, "\n".join(bad[:10])


def test_loss_cap_binds() -> None:
    """On a coarse grid the top atom rounds up past the summed max loss: the cap sets epsilon's upper bound."""
    items: list[Item] = [(RandomizedResponsePart(0.3, 2), 3), (DiscreteLaplacePart(1.3, 1), 2)]
    b = compose_plds(items, grid=2.0**-3)
    assert isinstance(b, PLDBracket)
    uncapped = dataclasses.replace(b, loss_cap=math.inf)
    assert uncapped.epsilon(1e-10).upper > b.epsilon(1e-10).upper == b.loss_cap
    assert not bracket_violations(items, reference(items), 2.0**-3)


STEEP_TOP_ITEMS: list[Item] = [(DiscreteLaplacePart(1.0, 1), 2)]


def test_reference_two_fold_discrete_laplace() -> None:
    """The steep-top case below: the reference against its closed form, and the engine within one ulp of it.

    Losses 2, 0, -2 with Q-masses p^2, 2p(1-p), (1-p)^2, p = 1/(1 + e^{-1}): on (0, 2)
    delta(eps) = p^2 (1 - e^{eps - 2}), so epsilon(1e-10) = 2 + log(1 - 1e-10/p^2).
    """
    ref = reference(STEEP_TOP_ITEMS)
    p = 1 / (1 + MP.exp(-1))
    true_eps = 2 + MP.log(1 - MP.mpf(1e-10) / p**2)
    assert abs(ref.epsilon(MP.mpf(1e-10)) - true_eps) < MP.mpf(10) ** -40
    up = compose_plds(STEEP_TOP_ITEMS).epsilon(1e-10).upper
    assert MP.mpf(math.nextafter(up, math.inf)) >= true_eps


def test_epsilon_upper_is_rounded_up_near_a_pure_dp_top() -> None:
    """Two-fold discrete Laplace (t = 1, sensitivity 1) at delta = 1e-10, default grid (h = 2^-13).

    The PLD has losses 2, 0, -2 with Q-masses p^2, 2p(1-p), (1-p)^2, p = 1/(1 + e^{-1}), so on (0, 2)
    delta(eps) = p^2 (1 - e^{eps - 2}) and the true epsilon(1e-10) = 2 + log(1 - 1e-10/p^2) =
    1.99999999981289058342...; the chord step computes 1.99999999981289058966... (sound), but its sum with
    the grid point 1.9998779296875 used to round to nearest, 1.99999999981289056094..., 0.1 ulp below the
    truth (delta there 1.2e-7 relative too large); the sum is now rounded up.
    """
    p = 1 / (1 + MP.exp(-1))
    true_eps = 2 + MP.log(1 - MP.mpf(1e-10) / p**2)
    assert MP.mpf(compose_plds(STEEP_TOP_ITEMS).epsilon(1e-10).upper) >= true_eps


# ---------------------------------------------------------------- wrong twins: the check can fail

TWIN_CASES: list[list[Item]] = [
    [(RandomizedResponsePart(0.3, 2), 3), (DiscreteLaplacePart(1.3, 2), 2)],
    [(DiscreteGaussianPart(3.0, 1), 2), (ApproxDPPart(0.45, 1e-6), 1)],
    [(DiscreteLaplacePart(0.7, 1), 1), (RandomizedResponsePart(1.1, 3), 2), (ApproxDPPart(0.2, 0.0), 3)],
]


@pytest.mark.parametrize("items", TWIN_CASES)
@pytest.mark.parametrize("grid", GRIDS)
def test_wrong_twin_flipped_atom_rounding_is_detected(
    items: list[Item], grid: float | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Wrong twin: with the pessimistic and optimistic atom roundings swapped, the check reports violations."""
    ref = reference(items)
    assert not bracket_violations(items, ref, grid)  # the same case passes unbroken
    orig = pld_parts.grid_from_atoms

    def flipped(*args: Any, pessimistic: bool, **kw: Any) -> pld_parts.GridLaw:
        return orig(*args, pessimistic=not pessimistic, **kw)

    monkeypatch.setattr(pld_parts, "grid_from_atoms", flipped)
    assert bracket_violations(items, ref, grid)


def test_wrong_twin_loss_cap_too_low_is_detected() -> None:
    """Wrong twin: a pure-DP cap a hair below the summed max loss makes epsilon's upper bound unsound, and is caught."""
    items: list[Item] = [(RandomizedResponsePart(0.3, 2), 3), (DiscreteLaplacePart(1.3, 1), 2)]
    ref = reference(items)
    assert not bracket_violations(items, ref, 2.0**-3)

    def low_cap(*args: Any, **kw: Any) -> PLDBracket:
        b = compose_plds(*args, **kw)
        assert isinstance(b, PLDBracket)
        return dataclasses.replace(b, loss_cap=b.loss_cap * (1 - 1e-6))

    bad = bracket_violations(items, ref, 2.0**-3, compose=low_cap)
    assert any("epsilon(1e-10).upper" in v for v in bad), bad
