r"""Allocation design: the per-measurement zCDP that minimises total weighted variance under a zCDP budget.

Step 13, ``vary = "allocation"`` (issue 26), at the accountant level. A release answers measurements
:math:`m=1..M` with independent noise; measurement :math:`m` gets the zCDP coefficient :math:`\rho_m` of
the measurements file (replace-one, :math:`\ell_2^2` shift 2, so :math:`\sigma_m^2=1/\rho_m` for the Gaussian
kinds; :mod:`accountant.workloads.accounting`). On each worst pair :math:`j` of the chosen framework the release is
:math:`\sum_m C_{jm}\rho_m`-zCDP [BS16, Lemma 2.3], where :math:`C_{jm}\ge0` is the measurement's zCDP
coefficient on that pair (:func:`workload_coefficients`): under the advertised guarantee :math:`C_m=1` (shift
:math:`\ell_2^2=2`); under query-level Semi-DP (a(t) = 2) :math:`C_m=4` (shift :math:`(2,-2)`,
:math:`\ell_2^2=8`) for a measurement that is not fixed and :math:`C_m=0` for a fixed one.

The problem
-----------
.. math:: \min_{\rho>0}\ \sum_m \frac{w_m v_m}{\rho_m}\quad\text{s.t.}\quad \max_j \sum_m C_{jm}\rho_m\le\rho_{\rm total},

where :math:`w_m` is the measurement's weight (the ``weight`` column, default 1) and :math:`v_m/\rho_m` its
per-cell noise variance (:func:`variance_law`). It is convex (:math:`1/\rho` is convex on
:math:`\rho>0`, the constraints linear), solved with cvxpy. With one row the KKT conditions give the closed
form [Boyd & Vandenberghe, *Convex Optimization*, Sec. 5.5.3]: stationarity
:math:`-a_m/\rho_m^2+\lambda C_m=0` (:math:`a_m=w_mv_m`) and the active constraint give

.. math:: \rho_m=\rho_{\rm total}\,\frac{\sqrt{a_m/C_m}}{S},\qquad S=\sum_m\sqrt{a_mC_m},\qquad
   \text{objective}=\frac{S^2}{\rho_{\rm total}},

and by Cauchy-Schwarz :math:`S^2\le(\sum_m a_m/\rho^0_m)(\sum_m C_m\rho^0_m)`: never worse than scaling a
starting allocation :math:`\rho^0` uniformly to the same budget. :func:`design_allocation` cross-checks the
solver against this closed form whenever there is one row.

Fixed measurements
------------------
A measurement whose column of :math:`C` is zero (its cells are unions of invariant cells under Semi-DP)
changes on no worst pair: its noise costs no privacy, so the problem has no minimiser in it (its
:math:`\rho` could grow without bound). It keeps its given :math:`\rho` (the publisher's choice, not
ours); :attr:`AllocationResult.kept` lists them and their constant term stays in both objectives.

Exactness
---------
The solver's floats are made exact: each :math:`\rho_m` is converted to a :class:`~fractions.Fraction`,
scaled exactly so that the largest row of :math:`C\rho` equals the budget (the optimum spends it), and rounded *down* to
:data:`SIGNIFICANT_DIGITS` significant decimal digits. As :math:`C\ge0`, rounding down never raises a
constraint, and the constraint is then re-checked in exact arithmetic
(:attr:`AllocationResult.constraint` :math:`\le\rho_{\rm total}`; a failure raises
:class:`~accountant.core.errors.VerificationError`).

The allocation only gives the *shape* (the ratios between the :math:`\rho_m`): the zCDP budget is a proxy.
:func:`allocated_measurements` turns it into :class:`~accountant.workloads.accounting.WorkloadMeasurement` values, on
which the common-scale search of ``[design] vary = "scale"`` refines one factor :math:`c` with the exact PLD
guarantee until the (epsilon, delta) target is met tightly.

Example (census PL94 persons, ``specs/census-2020-pl94-persons-us.csv``, discrete Gaussian, query-level
Semi-DP under the state totals: 65 measurements, 1 fixed (``State: total``); uniform weights; budget = the
zCDP of the production allocation on the query-level worst pair, :math:`4\sum_{m\ \rm free}\rho^0_m=6.9169`,
which is what uniform scaling keeps): objective (sum over measurements of the per-cell variance bound
:math:`1/\rho_m`) 109 281.5 before (= uniform), 2 369.9 after (-97.8 %). With equal weights and equal
:math:`C_m` the optimum gives every free measurement the same rho (6.9169/256 = 0.027019): the production
allocation's smallest rho (``Block: votingage * hispanic``, 0.000126, variance 7 962 per cell) dominates an
unweighted sum that counts each measurement once whatever its number of cells; the ``weight`` column says
what matters. CLARABEL, about 0.5-0.9 s on a loaded machine; closed-form gap 8e-12; exact constraint 6.91690931544
<= 6.91690931546. Followed by a common-scale bisection on the certified PLD upper end (query level,
:func:`~accountant.workloads.accounting.workload_bracket`) to epsilon = 17.14 at delta = 1e-10, to 0.1 %: both shapes
need c = 0.3957 (for Gaussian kinds the worst pair's PLD depends on the total rho only), and the sum of
per-cell variances at the target is 276 157 with the production shape, 5 988.8 with the allocation's.

References
----------
[BS16]  Bun & Steinke, "Concentrated Differential Privacy", TCC 2016, Lemma 2.3 (composition), Prop. 1.4.
[CKS20] Canonne, Kamath & Steinke, "The Discrete Gaussian for Differential Privacy", NeurIPS 2020, Sec. 2.1
        (the variance of :math:`N_{\mathbb Z}(0,\sigma^2)` is below :math:`\sigma^2`).
"""

from __future__ import annotations

import math
import time
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, replace
from fractions import Fraction
from numbers import Rational
from typing import Literal

from semidp.accountant.core.errors import InvalidArgument, SearchTooLarge, VerificationError
from semidp.accountant.workloads.accounting import GAUSSIAN_NOISES, NOISES, WorkloadMeasurement

#: Most measurements one allocation accepts (the solver's problem grows with pairs x measurements).
MAX_MEASUREMENTS = 10_000
#: Most entries of the coefficient matrix (pairs x measurements).
MAX_COEFFICIENTS = 1_000_000
#: Significant decimal digits kept when a rho is rounded down to an exact rational.
SIGNIFICANT_DIGITS = 12
#: Largest relative gap between cvxpy's objective and the closed form's (one constraint row) before it is an error.
CLOSED_FORM_TOLERANCE = 1e-4

Framework = Literal["dp", "semi-dp"]
FRAMEWORKS: tuple[str, ...] = ("dp", "semi-dp")


@dataclass(frozen=True, slots=True)
class VarianceLaw:
    """Per-cell noise variance of one noise kind as ``factor / rho`` (``rho`` the file's zCDP coefficient).

    ``exact`` is False when ``factor / rho`` is an upper bound on the variance, not the variance.
    """

    noise: str
    factor: Fraction
    exact: bool
    why: str


def variance_law(noise: str) -> VarianceLaw:
    """The variance of a cell's noise against the file's ``rho`` (zCDP of one :math:`\\ell_2^2=2` shift).

    * ``gaussian``: :math:`\\sigma^2=1/\\rho` [CKS20, Prop. 5 with :math:`\\Delta_2^2=2`]: exactly ``1/rho``.
    * ``discrete-gaussian``: :math:`\\mathrm{Var}\\,N_{\\mathbb Z}(0,\\sigma^2)<\\sigma^2=1/\\rho` [CKS20, Sec. 2.1]:
      ``1/rho`` is an upper bound (2e-7 relative above it at :math:`\\sigma=1`, 14 % at :math:`\\sigma^2=1/4`).
    * ``laplace``: the file's rho is :math:`(\\|v\\|_1/b)^2/2=2/b^2` [BS16, Prop. 1.4] and the variance is
      :math:`2b^2=4/\\rho`, exactly.
    * ``discrete-laplace`` (scale ``t``): variance :math:`2q/(1-q)^2=1/(2\\sinh^2(1/(2t)))\\le2t^2=4/\\rho`
      (:math:`q=e^{-1/t}`, :math:`\\sinh x\\ge x`): an upper bound.

    Units: variance in counts squared per cell.
    """
    if noise == "gaussian":
        return VarianceLaw(noise, Fraction(1), True, "sigma^2 = 1/rho")
    if noise == "discrete-gaussian":
        return VarianceLaw(noise, Fraction(1), False, "Var N_Z(0, sigma^2) < sigma^2 = 1/rho")
    if noise == "laplace":
        return VarianceLaw(noise, Fraction(4), True, "2 b^2 = 4/rho with rho = 2/b^2")
    if noise == "discrete-laplace":
        return VarianceLaw(noise, Fraction(4), False, "2q/(1-q)^2 <= 2 t^2 = 4/rho with rho = 2/t^2")
    raise InvalidArgument(f"noise={noise!r} is not one of {list(NOISES)}.")


def workload_coefficients(
    measurements: Sequence[WorkloadMeasurement], framework: str, *, semi_radius: int = 2
) -> tuple[tuple[Fraction, ...], ...]:
    """The coefficient matrix ``C`` (one row: the worst pair) of a census-style workload, in units of the file's rho.

    ``framework="dp"``: :math:`C_m=1` for every measurement (shift :math:`\\ell_2^2=2`, the advertised guarantee).
    ``framework="semi-dp"``: at ``semi_radius=2`` (query level) :math:`C_m=4` (shift :math:`(2,-2)`) for a
    measurement that is not fixed, at ``semi_radius=1`` :math:`C_m=1`; 0 for fixed ones. Both are the worst
    pairs proved in :mod:`accountant.workloads.accounting` (for every noise kind: the Laplace kinds' zCDP
    :math:`(\\|v\\|_1/b)^2/2` also grows by :math:`(4/2)^2=4`).
    """
    if framework not in FRAMEWORKS:
        raise InvalidArgument(f"framework={framework!r} is not one of {list(FRAMEWORKS)}.")
    if framework == "dp":
        return (tuple(Fraction(1) for _ in measurements),)
    if semi_radius not in (1, 2):
        raise InvalidArgument(f"semi_radius={semi_radius!r}: the query-level analysis covers a(t) in {{1, 2}}.")
    c = Fraction(4 if semi_radius == 2 else 1)
    return (tuple(Fraction(0) if m.fixed else c for m in measurements),)


def measurement_rho_coefficient(m: WorkloadMeasurement, noise: str) -> Fraction:
    """The file's rho of a measurement (zCDP of one :math:`\\ell_2^2=2` shift) from its noise parameter.

    Gaussian kinds: :math:`1/\\sigma^2`. Laplace kinds: :math:`2/b^2`. Exact.
    """
    if noise not in NOISES:
        raise InvalidArgument(f"noise={noise!r} is not one of {list(NOISES)}.")
    if noise in GAUSSIAN_NOISES:
        return 1 / m.scale
    return Fraction(2) / (m.scale * m.scale)


@dataclass(frozen=True, slots=True)
class AllocationResult:
    """The allocation found by :func:`design_allocation` (every rho exact; objectives in variance units)."""

    rhos: tuple[Fraction, ...]
    """The allocated rho per measurement (the file's zCDP coefficient), rounded down, exact."""
    kept: tuple[int, ...]
    """Indices of measurements whose column of ``C`` is zero: their rho is the given one, unchanged."""
    objective_before: float
    """:math:`\\sum_m w_mv_m/\\rho^0_m` of the starting allocation, as given (counts squared)."""
    objective_uniform: float
    """The same after scaling the starting allocation's free measurements by one factor to meet the budget."""
    objective_after: float
    """:math:`\\sum_m w_mv_m/\\rho_m` of :attr:`rhos`, fixed measurements included (their term is unchanged)."""
    constraint: Fraction
    """:math:`\\max_j\\sum_m C_{jm}\\rho_m` of :attr:`rhos`, exact."""
    budget: Fraction
    """:math:`\\rho_{\\rm total}`."""
    constraint_holds: bool
    """``constraint <= budget``, checked with Fractions (always True: a failure raises)."""
    solver: str
    """The cvxpy solver used (or ``"none"`` when nothing was free to allocate)."""
    status: str
    """The solver's status."""
    method: str
    """Where :attr:`rhos` come from: ``"closed-form"`` (one constraint row: the KKT optimum, the solver's
    answer cross-checked against it) or ``"cvxpy"`` (several rows: the solver's default tolerances leave each
    rho about 1e-4 relative off the optimum, the objective about 1e-8, since it is flat there)."""
    closed_form_gap: float | None
    """With one constraint row: relative gap of cvxpy's objective (its answer scaled to spend the budget
    exactly) to the KKT closed form's (at most
    :data:`CLOSED_FORM_TOLERANCE`); else ``None``."""
    seconds: float


#: Accepted magnitude of every nonzero number given: sums of products like :math:`w_mv_m/\\rho_m` and
#: :math:`\\sqrt{a_mC_m}` over :data:`MAX_MEASUREMENTS` terms stay within the float range (never inf or NaN).
NUMBER_RANGE = (1e-100, 1e100)


def _rational(name: str, x: object, *, positive: bool) -> Fraction:
    """``x`` as an exact Fraction (int, Fraction or finite float), nonnegative or positive, nonzero values within
    :data:`NUMBER_RANGE`, or InvalidArgument naming ``name``."""
    if isinstance(x, bool) or not isinstance(x, (Rational, float)):
        raise InvalidArgument(f"{name}={x!r}: expected an int, Fraction or finite float.")
    if isinstance(x, float) and not math.isfinite(x):
        raise InvalidArgument(f"{name}={x!r}: must be finite.")
    f = Fraction(x)
    if f < 0 or (positive and f == 0):
        raise InvalidArgument(f"{name}={x!r}: must be {'> 0' if positive else '>= 0'}.")
    low, high = Fraction(1, 10**100), Fraction(10**100)  # NUMBER_RANGE, exactly
    if f and not low <= f <= high:
        side = "below" if f < low else "above"
        raise InvalidArgument(f"{name}: {side} the accepted range [{NUMBER_RANGE[0]:g}, {NUMBER_RANGE[1]:g}] (or 0).")
    return f


def _unit(x: Fraction, digits: int) -> Fraction:
    """One unit in the last of ``digits`` significant decimal digits of ``x > 0``, exact."""
    exp = math.floor(math.log10(x.numerator) - math.log10(x.denominator))
    while Fraction(10) ** exp > x:  # the float log may be off by one at a power of 10
        exp -= 1
    while Fraction(10) ** (exp + 1) <= x:
        exp += 1
    return Fraction(10) ** (exp - digits + 1)


def _round_down(x: Fraction, digits: int = SIGNIFICANT_DIGITS) -> Fraction:
    """The largest decimal of ``digits`` significant digits that is ``<= x`` (``x > 0``), exact."""
    unit = _unit(x, digits)
    return (x // unit) * unit


def _objective(a: Sequence[Fraction], rhos: Sequence[Fraction]) -> float:
    """:math:`\\sum_ma_m/\\rho_m`, rounded to a float (``inf`` beyond the float range, never NaN)."""
    total = sum((ai / r for ai, r in zip(a, rhos)), Fraction(0))
    try:
        return float(total)
    except OverflowError:
        return math.inf


def _constraint(c: Sequence[Sequence[Fraction]], rhos: Sequence[Fraction]) -> Fraction:
    return max((sum((cj * r for cj, r in zip(row, rhos)), Fraction(0)) for row in c), default=Fraction(0))


def closed_form_allocation(a: Sequence[float], c: Sequence[float], budget: float) -> tuple[list[float], float]:
    """The KKT optimum of :math:`\\min\\sum_m a_m/\\rho_m` s.t. :math:`\\sum_m c_m\\rho_m\\le B` (all ``c_m > 0``).

    Returns ``(rhos, objective)`` as floats: :math:`\\rho_m=B\\sqrt{a_m/c_m}/S`, objective :math:`S^2/B`,
    :math:`S=\\sum_m\\sqrt{a_mc_m}` (module docstring).
    """
    if not a or len(a) != len(c) or any(x <= 0 for x in (*a, *c)) or budget <= 0:
        raise InvalidArgument("closed_form_allocation: a and c must be equally long, nonempty and > 0; budget > 0.")
    s = math.fsum(math.sqrt(ai) * math.sqrt(ci) for ai, ci in zip(a, c))
    return [budget * (math.sqrt(ai) / math.sqrt(ci) / s) for ai, ci in zip(a, c)], s * (s / budget)


def design_allocation(
    coefficients: Sequence[Sequence[object]],
    variance_factors: Sequence[object],
    weights: Sequence[object],
    budget: object,
    start: Sequence[object],
    *,
    solver: str | None = None,
) -> AllocationResult:
    """Choose each measurement's rho to minimise :math:`\\sum_m w_mv_m/\\rho_m` s.t. :math:`\\max_j(C\\rho)_j\\le`
    ``budget`` (module docstring: the problem, the closed form, fixed measurements, exactness).

    Parameters (numbers: int, Fraction or finite float, read exactly)
    ----------
    coefficients:
        ``C``, one row per worst pair, one column per measurement, entries >= 0 (:func:`workload_coefficients`).
    variance_factors:
        :math:`v_m > 0`: the per-cell variance is :math:`v_m/\\rho_m` (:func:`variance_law`).
    weights:
        :math:`w_m > 0` (the ``weight`` column).
    budget:
        :math:`\\rho_{\\rm total} > 0`, in the units of ``C @ rho`` (zCDP, nats).
    start:
        :math:`\\rho^0_m > 0`: the starting allocation (objective before; the rho kept for fixed measurements).
    solver:
        A cvxpy solver name (default: cvxpy's choice).

    Raises :class:`~accountant.core.errors.InvalidArgument` naming the bad argument,
    :class:`~accountant.core.errors.SearchTooLarge` beyond :data:`MAX_MEASUREMENTS` / :data:`MAX_COEFFICIENTS`
    (checked before any conversion), :class:`~accountant.core.errors.VerificationError` when the solver fails or
    disagrees with the closed form (never a silently worse or infeasible allocation).
    """
    t0 = time.perf_counter()
    n = len(start)
    if n == 0:
        raise InvalidArgument("start: no measurements.")
    if n > MAX_MEASUREMENTS:
        raise SearchTooLarge("design_allocation: measurements", n, MAX_MEASUREMENTS)
    if not coefficients:
        raise InvalidArgument("coefficients: needs at least one row (one per worst pair).")
    if len(coefficients) * n > MAX_COEFFICIENTS:
        raise SearchTooLarge(
            "design_allocation: coefficients (pairs x measurements)", len(coefficients) * n, MAX_COEFFICIENTS
        )
    for name, seq in (("variance_factors", variance_factors), ("weights", weights)):
        if len(seq) != n:
            raise InvalidArgument(f"{name}: has {len(seq)} entries; start has {n} measurements.")
    c: list[tuple[Fraction, ...]] = []
    for j, row in enumerate(coefficients):
        if len(row) != n:
            raise InvalidArgument(f"coefficients[{j}]: has {len(row)} entries; start has {n} measurements.")
        c.append(tuple(_rational(f"coefficients[{j}][{m}]", x, positive=False) for m, x in enumerate(row)))
    v = [_rational(f"variance_factors[{m}]", x, positive=True) for m, x in enumerate(variance_factors)]
    w = [_rational(f"weights[{m}]", x, positive=True) for m, x in enumerate(weights)]
    rho0 = [_rational(f"start[{m}]", x, positive=True) for m, x in enumerate(start)]
    total = _rational("budget", budget, positive=True)
    a = [wi * vi for wi, vi in zip(w, v)]

    free = [m for m in range(n) if any(row[m] > 0 for row in c)]
    free_set = set(free)
    kept = tuple(m for m in range(n) if m not in free_set)
    before = _objective(a, rho0)
    start_load = _constraint(c, rho0)
    uniform = [r * total / start_load if m in free_set else r for m, r in enumerate(rho0)] if start_load else rho0
    if not free:
        return AllocationResult(
            tuple(rho0),
            kept,
            before,
            before,
            before,
            Fraction(0),
            total,
            True,
            "none",
            "nothing to allocate",
            "none",
            None,
            time.perf_counter() - t0,
        )
    x, solver_name, status = _solve(c, a, free, total, solver)
    fc = [[row[m] for m in free] for row in c]
    xs = [Fraction(xi) for xi in x]
    spent = _constraint(fc, xs)  # the solver's answer scaled to spend the budget exactly: a feasible objective
    solved = _objective([a[m] for m in free], [xi * total / spent for xi in xs])
    gap: float | None = None
    method = "cvxpy"
    if len(c) == 1:  # the KKT closed form is the optimum; the solver's answer must agree with it
        closed, best = closed_form_allocation([float(a[m]) for m in free], [float(c[0][m]) for m in free], float(total))
        gap = (solved - best) / best
        if abs(gap) > CLOSED_FORM_TOLERANCE:
            raise VerificationError(
                f"design_allocation: cvxpy's objective {solved!r} differs from the KKT closed form's {best!r} "
                f"by {gap:.3g} relative (tolerance {CLOSED_FORM_TOLERANCE:g}); solver {solver_name} status {status}."
            )
        x, method = [r / float(total) for r in closed], "closed-form"
    rhos = list(rho0)
    exact = [Fraction(xi) * total for xi in x]
    load = _constraint(fc, exact)
    # the optimum spends the budget: scale exactly so the largest row is the budget (down if the solver
    # overshoots by its tolerance, up if it stopped short), then round every rho down
    exact = [e * total / load for e in exact]
    for m, e in zip(free, exact):
        rhos[m] = _round_down(e)
    constraint = _constraint(c, rhos)
    if constraint > total:  # rounding down with C >= 0 cannot raise a constraint: a failure is a bug
        raise VerificationError(f"design_allocation: exact constraint {constraint} exceeds the budget {total}.")
    after = _objective(a, rhos)
    return AllocationResult(
        tuple(rhos),
        kept,
        before,
        _objective(a, uniform),
        after,
        constraint,
        total,
        constraint <= total,
        solver_name,
        status,
        method,
        gap,
        time.perf_counter() - t0,
    )


def _solve(
    c: Sequence[Sequence[Fraction]], a: Sequence[Fraction], free: Sequence[int], total: Fraction, solver: str | None
) -> tuple[list[float], str, str]:
    """cvxpy on the free measurements, preconditioned; returns :math:`x_m=\\rho_m/\\rho_{\\rm total}`.

    With :math:`k_m=\\max_jC_{jm}`, :math:`p_m=\\sqrt{a_mk_m}/\\sum_i\\sqrt{a_ik_i}` and :math:`q_{jm}=C_{jm}/k_m\\in[0,1]`,
    the substitution :math:`x_m=p_my_m/k_m` turns the problem into
    :math:`\\min\\sum_mp_m/y_m` s.t. :math:`\\sum_mq_{jm}p_my_m\\le1` (a positive multiple of the objective):
    with one row (or every row's :math:`C_{jm}` equal to :math:`k_m`) the optimum is :math:`y=1`, so the
    solver works near 1 whatever the spread of the weights.
    """
    import cvxpy as cp  # noqa: PLC0415 - heavy import, only for a design
    import numpy as np  # noqa: PLC0415

    k = [max(row[m] for row in c) for m in free]
    roots = [math.sqrt(float(a[m])) * math.sqrt(float(km)) for m, km in zip(free, k)]
    t = math.fsum(roots)
    pw = np.array([r / t for r in roots])
    rows = [[row[m] / km for m, km in zip(free, k)] for row in c]
    q = np.array([[float(x) for x in r] for r in rows if any(x > 0 for x in r)])
    y = cp.Variable(len(free), pos=True)
    objective = cp.Minimize(pw @ cp.inv_pos(y))  # type: ignore[attr-defined]
    constraint = y.__rmatmul__(q * pw) <= 1.0
    problem = cp.Problem(objective, [constraint])
    with warnings.catch_warnings():  # "solution may be inaccurate": the status says it, and the result is checked
        warnings.simplefilter("ignore")
        try:
            problem.solve(solver=solver)  # type: ignore[no-untyped-call]
        except cp.error.SolverError as e:
            raise InvalidArgument(f"solver={solver!r}: cvxpy failed: {e}") from e
    name = str(problem.solver_stats.solver_name) if problem.solver_stats else str(solver)
    status = str(problem.status)
    value = y.value
    if status not in ("optimal", "optimal_inaccurate") or value is None or not np.all(np.isfinite(value)):
        raise VerificationError(f"design_allocation: solver {name} ended with status {status!r}.")
    out = [float(p_m) * max(float(y_m), 0.0) / float(km) for p_m, y_m, km in zip(pw, value, k)]
    if min(out) <= 0 or not all(math.isfinite(x) for x in out):
        raise VerificationError(f"design_allocation: solver {name} returned a rho <= 0 or not finite.")
    return out, name, status


def design_workload_allocation(
    measurements: Sequence[WorkloadMeasurement],
    noise: str,
    budget: object,
    *,
    framework: str = "semi-dp",
    semi_radius: int = 2,
    weights: Sequence[object] | None = None,
    solver: str | None = None,
) -> AllocationResult:
    """:func:`design_allocation` for a census-style workload: ``C`` from :func:`workload_coefficients`, :math:`v_m`
    from :func:`variance_law`, the start from the measurements' own noise (:func:`measurement_rho_coefficient`).

    ``budget`` is the zCDP of the worst pair (nats); the measurements' current value is
    ``workload_rho(measurements, noise, semi_radius=2)`` for query-level Semi-DP (``semi_radius=None`` for
    the advertised one), the budget that uniform scaling keeps. ``weights`` default to 1 (the ``weight`` column
    is :attr:`verify.workload_spec.Measurement.weight`). Follow with :func:`allocated_measurements`.
    """
    n = len(measurements)
    if weights is not None and len(weights) != n:
        raise InvalidArgument(f"weights: has {len(weights)} entries; there are {n} measurements.")
    law = variance_law(noise)
    return design_allocation(
        workload_coefficients(measurements, framework, semi_radius=semi_radius),
        [law.factor] * n,
        list(weights) if weights is not None else [1] * n,
        budget,
        [measurement_rho_coefficient(m, noise) for m in measurements],
        solver=solver,
    )


def allocated_measurements(
    measurements: Sequence[WorkloadMeasurement], rhos: Sequence[Fraction], noise: str
) -> tuple[WorkloadMeasurement, ...]:
    """The measurements with the allocated rhos: the shape the common-scale search refines.

    Gaussian kinds: :math:`\\sigma^2=1/\\rho` (exact). Laplace kinds: :math:`b=\\sqrt{2/\\rho}`, rounded *up*
    to :data:`SIGNIFICANT_DIGITS` digits (more noise: the zCDP is at most ``rho``, conservative for privacy).
    Labels and ``fixed`` are kept. The scale search multiplies every rho by one factor ``c``; ``c = 1`` is
    this allocation's zCDP budget.
    """
    if len(rhos) != len(measurements):
        raise InvalidArgument(f"rhos: has {len(rhos)} entries; there are {len(measurements)} measurements.")
    if noise not in NOISES:
        raise InvalidArgument(f"noise={noise!r} is not one of {list(NOISES)}.")
    out: list[WorkloadMeasurement] = []
    for i, (m, r) in enumerate(zip(measurements, rhos)):
        rho = _rational(f"rhos[{i}]", r, positive=True)
        if noise in GAUSSIAN_NOISES:
            scale = 1 / rho
        else:
            scale = _sqrt_up(Fraction(2) / rho)
        out.append(replace(m, scale=scale))
    return tuple(out)


def _sqrt_up(x: Fraction) -> Fraction:
    """A decimal of :data:`SIGNIFICANT_DIGITS` significant digits that is ``>= sqrt(x)`` (``x > 0``), exact."""
    r = Fraction(math.sqrt(x))
    unit = _unit(r, SIGNIFICANT_DIGITS)
    r = -(-r // unit) * unit  # rounded up to the grid of that unit
    while r * r < x:  # the float sqrt is within an ulp: at most a step or two
        r += unit
    return r


__all__ = [
    "CLOSED_FORM_TOLERANCE",
    "FRAMEWORKS",
    "MAX_COEFFICIENTS",
    "MAX_MEASUREMENTS",
    "NUMBER_RANGE",
    "SIGNIFICANT_DIGITS",
    "AllocationResult",
    "Framework",
    "VarianceLaw",
    "allocated_measurements",
    "closed_form_allocation",
    "design_allocation",
    "design_workload_allocation",
    "measurement_rho_coefficient",
    "variance_law",
    "workload_coefficients",
]
