"""``mechanism.kind = "umpu-odds-ratio"``: the Semi-DP UMPU test of the odds ratio of a 2x2 table [CA24, Thm. 37].

The confidential 2x2 table's one-way margins are the invariant; the release is
``Z = x11 + N`` with ``N`` a canonical noise distribution [AV23], f-DP on
:math:`(\\mathcal D_t, A_3)`. The report carries the contract's ``test`` object
(statistic, pvalue, reject, m, size = alpha exactly) and the guarantee satisfied;
checks: a(t) <= 3 (so the A_3 guarantee covers the semi-adjacent pairs), the
exact size, the certified conversions, and the claim if the spec states one.
With the one-sided alternative the report also has exact power curves against
the non-private Fisher test and a naive group-privacy DP test (plotted by ``--out``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Literal, Optional, Union

import numpy as np

from semidp.accountant.core.outcome import Outcome, Refuted, Verified
from semidp.accountant.releases.model import KnownGuarantee, Part, Release
from semidp.mechanisms.cnd import CanonicalNoise, GaussianCND, Tulap
from semidp.mechanisms.umpu import SemiDPOddsRatioTest, TableMargins
from semidp.mechanisms.umpu_power import power_curves
from semidp.verify.context import Context, KindResult, Plot
from semidp.verify.plots_power import plot_power
from semidp.verify.registry import KindDefaults, KindInfo, Problem
from semidp.verify.report import Check, GuaranteeSummary
from semidp.verify.sections import MarginTotals, PowerAt, PowerComparison, TestSection
from semidp.verify.spec import MechanismSpec, Spec, documented

#: Largest table (records) whose a(t) is searched exactly; above it the Thm. 16 bound (3) is used.
SEARCH_MAX_RECORDS = 10_000
#: Relative tolerance for "size equals alpha": the threshold m is a double (mechanisms.umpu notes).
SIZE_RTOL = 1e-9


@dataclass(frozen=True)
class TulapNoiseSpec:
    """Noise of a private test: the Tulap canonical noise distribution."""

    cnd: Literal["tulap"] = documented("Canonical noise distribution.")
    epsilon: Fraction = documented("Tulap epsilon.")
    delta: Optional[Fraction] = documented("Tulap delta.", default=None)


@dataclass(frozen=True)
class GaussianNoiseSpec:
    """Noise of a private test: the Gaussian canonical noise distribution."""

    cnd: Literal["gaussian"] = documented("Canonical noise distribution.")
    mu: Fraction = documented("Gaussian mu.")


NoiseSpec = Union[TulapNoiseSpec, GaussianNoiseSpec]
"""``mechanism.noise``: a tagged union on ``cnd`` (the loader picks the variant and checks its keys)."""


@dataclass(frozen=True)
class UmpuSpec(MechanismSpec):
    """``[mechanism]`` of ``umpu-odds-ratio``."""

    theta0: Optional[Fraction] = documented("Null odds ratio (default 1).", default=None)
    alpha: Optional[Fraction] = documented("Level (default 0.05).", default=None)
    noise: NoiseSpec = documented(
        "The noise: { cnd = 'tulap', epsilon = .. } or { cnd = 'gaussian', mu = .. }.", kw_only=True
    )
    alternative: Optional[Literal["greater", "less", "two-sided"]] = documented(
        "H1 theta > theta0 (greater, Thm. 37), < (less), or the documented two-sided variant (extension).", default=None
    )
    released: Optional[Fraction] = documented("An already released Z (its p-value is reported).", default=None)


def noise_of(m: UmpuSpec) -> CanonicalNoise:
    """The CND of ``mechanism.noise`` (the loader picked its variant and checked its keys)."""
    n = m.noise
    if isinstance(n, TulapNoiseSpec):
        return Tulap(float(n.epsilon), float(n.delta or 0))
    return GaussianCND(float(n.mu))


@dataclass(frozen=True)
class UmpuKind(KindDefaults):
    """The kind object of ``umpu-odds-ratio`` (see the module docstring)."""

    info: KindInfo = KindInfo("umpu-odds-ratio", UmpuSpec, frameworks=("semi-dp",))

    def semi_adjacent_method(self, spec: Spec) -> str:
        """The test needs only a(t) <= 3, which [CA24, Thm. 16] proves for every 2x2 table: above
        :data:`SEARCH_MAX_RECORDS` records the closed-form bound is used instead of searching the fiber."""
        table = spec.data.table
        return "auto" if table is not None and sum(table) <= SEARCH_MAX_RECORDS else "closed-form"

    def validate(self, spec: Spec) -> list[Problem]:
        """A 2x2 table, a noise with its parameter, alpha in (0, 1), theta0 > 0."""
        m = spec.mechanism
        if not isinstance(m, UmpuSpec):
            return []
        probs: list[Problem] = []
        if spec.data.table is None:
            probs.append(
                Problem(
                    "data.table",
                    "umpu-odds-ratio needs the 2x2 table (or mechanism.released with the margins in data.table)",
                )
            )
        if [f.levels for f in spec.data.features] != [2, 2]:
            probs.append(
                Problem("data.features", "umpu-odds-ratio needs two features with 2 levels each (a 2x2 table)")
            )
        if m.alpha is not None and not (0 < m.alpha < 1):
            probs.append(Problem("mechanism.alpha", f"must be in (0, 1), got {float(m.alpha)!r}"))
        if m.theta0 is not None and not m.theta0 > 0:
            probs.append(Problem("mechanism.theta0", f"must be > 0, got {float(m.theta0)!r}"))
        # the ranges of the noise's parameters (else the test raises mid-run, unlocated)
        n = m.noise
        v, k = (n.epsilon, "epsilon") if isinstance(n, TulapNoiseSpec) else (n.mu, "mu")
        if not v > 0:
            probs.append(Problem(f"mechanism.noise.{k}", f"must be > 0, got {float(v)!r}"))
        if isinstance(n, TulapNoiseSpec) and n.delta is not None and not (0 <= n.delta < 1):
            probs.append(Problem("mechanism.noise.delta", f"must be in [0, 1), got {float(n.delta)!r}"))
        return probs

    def run(self, ctx: Context) -> KindResult:
        """Run the test at the table (or on the released Z) and check it."""
        m = ctx.mechanism(UmpuSpec)
        space = ctx.space
        table = np.asarray(ctx.required(ctx.table, "data.table"), dtype=np.int64).reshape(2, 2)
        margins = TableMargins.from_table(table, (space.names[0], space.names[1]))
        alpha = float(m.alpha) if m.alpha is not None else 0.05
        theta0 = float(m.theta0) if m.theta0 is not None else 1.0
        test = SemiDPOddsRatioTest(margins, noise_of(m), theta0, alpha, m.alternative or "greater")
        used_seed: int | None = None
        if m.released is not None:
            z = float(m.released)
        else:
            used_seed = ctx.draw_seed()
            z = test.release(int(table[0, 0]), rng=np.random.default_rng(used_seed))
        result = test.result(z)
        # The release: Z, known by its f-DP guarantee on (D_t, A_3) [CA24, Thm. 37], which covers every a(t) <= 3
        # (the runner checks a(t) <= 3 and accounts it; nothing else is advertised).
        release = Release(
            ctx.relation,
            ctx.invariant,
            (Part(KnownGuarantee(result.guarantee, covers="Cho & Awan Thm. 37"), label="released Z"),),
        )
        size: Outcome = (
            Verified(f"exact conditional size {result.size:.15g} = alpha at the margins")
            if math.isclose(result.size, alpha, rel_tol=SIZE_RTOL)
            else Refuted(f"exact size {result.size!r} differs from alpha = {alpha!r}")
        )
        eff_summary = GuaranteeSummary.of(result.guarantee, ctx.deltas, framework="semi-dp")
        power: PowerComparison | None = None
        plots: tuple[Plot, ...] = ()
        if test.alternative == "greater":
            curves = power_curves(margins, test.noise, theta0=theta0, alpha=alpha)
            pick = [i for i, th in enumerate(curves.thetas) if th in (2 * theta0, 4 * theta0)]
            power = PowerComparison(
                "exact power: Semi-DP UMPU (Thm 37) vs the non-private randomised Fisher test vs a "
                "naive DP test calibrated by group privacy (f_{eps/3}, so f^{o3} >= f on A_3)",
                repr(curves.naive_noise),
                tuple(
                    PowerAt(
                        float(curves.thetas[i]),
                        float(curves.fisher[i]),
                        float(curves.semi_dp[i]),
                        float(curves.naive[i]),
                    )
                    for i in pick
                ),
            )
            plots = (
                Plot("power", "power against the odds ratio", lambda path, title: plot_power(curves, path, title)),
            )
        test_section = TestSection(
            result.statistic,
            result.pvalue,
            result.reject,
            result.m,
            result.m_lower,
            result.size,
            alpha,
            theta0,
            result.alternative,
            MarginTotals(tuple(margins.rows), tuple(margins.cols)),
            m.released is not None,
            eff_summary,
            power,
        )
        return KindResult(
            release=release,
            seed=used_seed,
            checks=(Check("size-exact", size),),
            sections=(test_section,),
            plots=plots,
        )


KIND = UmpuKind()

__all__ = ["GaussianNoiseSpec", "KIND", "NoiseSpec", "TulapNoiseSpec", "UmpuKind", "UmpuSpec", "noise_of"]
