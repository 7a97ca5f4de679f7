"""Validation of the spec sections every kind shares; each problem names its dotted key (house style R13).

The loader (:mod:`verify.load`) runs these and the kind's own
:meth:`~verify.registry.Kind.validate`, and reports every problem at once.
"""

from __future__ import annotations

import difflib
import re
from fractions import Fraction

from semidp.accountant.core.errors import format_size
from semidp.verify.registry import Problem
from semidp.verify.spec import (
    SPEC_VERSION,
    EpsilonGuarantee,
    GuaranteeSpec,
    MuGuarantee,
    RdpGuarantee,
    Spec,
    ZcdpGuarantee,
    cell_count,
)
from semidp.verify.spec_matrices import invariant_matrix_problems, query_matrix_problems, records_problems

#: The largest count in ``data.table`` and ``data.records`` (2^53: exact as a float, and an int64).
MAX_COUNT = 2**53

#: The most cells (product of the features' levels) and the most draws (``audit.samples``) a spec may ask for.
#: Per-cell and per-draw arrays are materialized; far below this the memory limit stops an audit honestly
#: (inconclusive), beyond it numpy cannot even index the array (it would be an internal error, not a located one).
MAX_CELLS = MAX_SAMPLES = 2**40

#: The largest value of each form of a guarantee table (``mechanism.guarantee``, ``mechanism.components[i]``,
#: ``claim.guarantee``): far beyond any release that protects anyone (e^10000 is a likelihood ratio no float
#: holds). Fuzzing the shipped specs found claim epsilon = 1e6 (beyond the certified arithmetic's 2^16384) and
#: component mu = 1e10 (a NaN in the PLD grid) ending as errors. zcdp goes higher (a published 1e24 renders;
#: from about 1e17 the CKS delta bound exceeds 1 and is taken as 1, so the claim is decided by the Gaussian lower
#: bound). A measurements row's rho has its own, lower limit (verify.workload_spec.MAX_MEASUREMENT_RHO).
MAX_GUARANTEE = {"epsilon": 10**4, "mu": 10**4, "zcdp": 10**24}


#: The kinds whose ``mechanism.scale`` is a noise scale per cell (laplace: b; discrete-laplace: t; gaussian: sigma).
SCALED_KINDS = ("laplace", "discrete-laplace", "gaussian")
#: The Laplace kinds, whose ``mechanism.epsilon`` calibrates the scale (b or t = Delta_1(S)/epsilon).
LAPLACE_KINDS = ("laplace", "discrete-laplace")
#: Accepted ``mechanism.scale`` of :data:`SCALED_KINDS`, the same bounds as a measurements file's rows
#: (verify.workload_spec: 1/scale and rho at most 1e8). The hostile probe found scale = 1e-300 ending "rho=inf must
#: be finite" (laplace) or "epsilon=inf" (gaussian) naming no key, and discrete-laplace echoing a 600-digit
#: fraction. Within the range every guarantee is finite (a scale of 1e8 protects; one of 1e-8 protects no one).
NOISE_SCALE_RANGE = (Fraction(1, 10**8), Fraction(10**8))
#: The smallest ``mechanism.epsilon`` of :data:`LAPLACE_KINDS` (the scale Delta_1/epsilon within float range;
#: epsilon = 1e-300 was an internal OverflowError). The largest is ``MAX_GUARANTEE["epsilon"]``.
MIN_LAPLACE_EPSILON = Fraction(1, 10**8)
#: discrete-laplace: t = Delta_1(S)/epsilon is exact, and the exact sampler takes numerator and denominator below
#: this; the numerator of t is a multiple of epsilon's denominator, so that denominator must be below it too.
MAX_DISCRETE_LAPLACE_PART = 2**31


def noise_scale_problems(spec: Spec) -> list[Problem]:
    """``mechanism.scale`` and the Laplace kinds' ``mechanism.epsilon`` within their stated ranges.

    Units: the scale is the noise's own (Laplace b, discrete Laplace t, Gaussian sigma, in counts); epsilon is
    pure DP. The limits are checked on the exact values before any arithmetic (issue 21, Step 17.5).
    """
    m = spec.mechanism
    if m is None or m.kind not in SCALED_KINDS:
        return []
    probs: list[Problem] = []
    scale = getattr(m, "scale", None)
    lo, hi = NOISE_SCALE_RANGE
    if isinstance(scale, Fraction) and scale > 0 and not lo <= scale <= hi:
        probs.append(Problem("mechanism.scale", f"must lie in [{float(lo):g}, {float(hi):g}], got {float(scale)!r}"))
    eps = getattr(m, "epsilon", None)
    if m.kind in LAPLACE_KINDS and isinstance(eps, Fraction) and eps > 0:
        top = MAX_GUARANTEE["epsilon"]
        if not MIN_LAPLACE_EPSILON <= eps <= top:
            probs.append(
                Problem(
                    "mechanism.epsilon", f"must lie in [{float(MIN_LAPLACE_EPSILON):g}, {top:g}], got {float(eps)!r}"
                )
            )
        elif m.kind == "discrete-laplace" and eps.denominator >= MAX_DISCRETE_LAPLACE_PART:
            probs.append(
                Problem(
                    "mechanism.epsilon",
                    f"{float(eps)!r} is not a short exact rational (denominator {eps.denominator:.3g} >= 2**31): "
                    "t = Delta_1/epsilon is drawn exactly; write it as 'p/q' with p, q < 2**31",
                )
            )
    return probs


def guarantee_problems(g: GuaranteeSpec | None, key: str) -> list[Problem]:
    """Problems of a guarantee table's values: each within its range (its form, exactly one, and ``delta`` only with
    ``epsilon`` are checked where it is parsed: a keyed union, :class:`~verify.spec.GuaranteeForm`)."""
    probs: list[Problem] = []
    if isinstance(g, (EpsilonGuarantee, MuGuarantee, ZcdpGuarantee)):
        k = g.form()
        v = getattr(g, k)
        if v is not None and v < 0:
            probs.append(Problem(f"{key}.{k}", f"must be >= 0, got {float(v)!r}"))
        elif v is not None and v > MAX_GUARANTEE[k]:
            probs.append(Problem(f"{key}.{k}", f"must be at most {MAX_GUARANTEE[k]:g}, got {float(v)!r}"))
    if isinstance(g, EpsilonGuarantee) and g.delta is not None and not (0 <= g.delta <= 1):
        probs.append(Problem(f"{key}.delta", f"must be in [0, 1], got {float(g.delta)!r}"))
    if isinstance(g, RdpGuarantee) and g.rdp is not None:
        limit = MAX_GUARANTEE["epsilon"]
        if g.rdp.epsilon is not None and g.rdp.epsilon > limit:
            probs.append(Problem(f"{key}.rdp.epsilon", f"must be at most {limit:g}, got {float(g.rdp.epsilon)!r}"))
        if g.rdp.alpha is not None and g.rdp.alpha <= 1:
            probs.append(Problem(f"{key}.rdp.alpha", f"must be > 1, got {float(g.rdp.alpha)!r}"))
    return probs


def top_problems(spec: Spec) -> list[Problem]:
    """``version`` and ``name``."""
    probs: list[Problem] = []
    if spec.version != SPEC_VERSION:
        probs.append(Problem("version", f"must be {SPEC_VERSION}, got {spec.version!r}"))
    if not re.fullmatch(r"[a-z0-9-]+", spec.name):
        probs.append(Problem("name", f"{spec.name!r} must match [a-z0-9-]+ (it names output files)"))
    return probs


def data_problems(spec: Spec) -> list[Problem]:
    """``[data]``: features, records and the table."""
    d = spec.data
    probs: list[Problem] = []
    names = [f.name for f in d.features]
    if not names:
        probs.append(Problem("data.features", "needs at least one feature"))
    for i, f in enumerate(d.features):
        if f.levels < 1:
            probs.append(Problem(f"data.features[{i}].levels", f"must be >= 1, got {f.levels}"))
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        probs.append(Problem("data.features", f"feature names must be unique; repeated {dup}"))
    cells = cell_count(spec)
    if cells > MAX_CELLS:
        probs.append(
            Problem(
                "data.features",
                f"the data space has {format_size(cells)} cells (the product of the levels); at most 2^40 = "
                f"{format_size(MAX_CELLS)} are supported (per-cell arrays are materialized)",
            )
        )
    if d.records is not None and not 0 <= d.records <= MAX_COUNT:
        probs.append(Problem("data.records", f"must be in [0, 2^53], got {format_size(d.records)}"))
    if d.table is not None:
        if len(d.table) != cells:
            probs.append(Problem("data.table", f"has {len(d.table)} counts; the feature product has {cells} cells"))
        if any(c < 0 for c in d.table):
            probs.append(Problem("data.table", "counts must be >= 0"))
        if any(c > MAX_COUNT for c in d.table):
            probs.append(Problem("data.table", f"counts must be at most 2^53 = {MAX_COUNT}"))
        if d.records is not None and sum(d.table) != d.records:
            probs.append(Problem("data.records", f"is {d.records} but data.table sums to {sum(d.table)}"))
    return probs


def invariant_problems(spec: Spec) -> list[Problem]:
    """``[invariant]``: features exist, rows and sets fit the cells (each kind's own key is checked where it is
    parsed: a tagged union, :data:`~verify.spec.InvariantSpec`)."""
    names = [f.name for f in spec.data.features]
    cells = cell_count(spec)
    inv = spec.invariant
    probs: list[Problem] = []
    if inv is None:  # the table failed to parse (each kind's own key is checked there); its problem is listed
        return probs
    for m in inv.margins or ():
        for n in m:
            if n not in names:
                close = difflib.get_close_matches(n, names, n=1)
                hint = f"; did you mean {close[0]!r}?" if close else f"; features are {names}"
                probs.append(Problem("invariant.margins", f"unknown feature {n!r}{hint}"))
    for r, row in enumerate(inv.matrix or ()):
        if len(row) != cells:
            probs.append(Problem(f"invariant.matrix[{r}]", f"has {len(row)} entries; expected {cells} (one per cell)"))
    probs += records_problems(spec) + invariant_matrix_problems(spec)
    for r, s in enumerate(inv.sets or ()):
        bad = [c for c in s if not (0 <= c < cells)]
        if bad:
            probs.append(Problem(f"invariant.sets[{r}]", f"cell indices {bad} out of range 0..{cells - 1}"))
    return probs


def rest_problems(spec: Spec) -> list[Problem]:
    """``[query]``, ``[claim]``, ``[report]`` and ``[audit]``."""
    probs: list[Problem] = query_matrix_problems(spec, cell_count(spec)) + noise_scale_problems(spec)
    if spec.claim is not None:
        probs += guarantee_problems(spec.claim.guarantee, "claim.guarantee")
    for i, dl in enumerate(spec.report.deltas):
        if not (0 < dl < 1):
            probs.append(Problem(f"report.deltas[{i}]", f"must be in (0, 1), got {float(dl)!r}"))
    if spec.audit is not None and spec.audit.samples < 1:
        probs.append(Problem("audit.samples", f"must be >= 1, got {spec.audit.samples}"))
    elif spec.audit is not None and spec.audit.samples > MAX_SAMPLES:
        probs.append(Problem("audit.samples", f"must be at most 2^40, got {spec.audit.samples:.3g}"))
    return probs


def table_required(spec: Spec, why: str) -> list[Problem]:
    """``data.table`` is required for a kind that draws at the confidential histogram."""
    if spec.data.table is None:
        return [Problem("data.table", f"required for mechanism.kind = {spec.mechanism.kind!r}: {why}")]
    return []


SHARED_CHECKS = (top_problems, data_problems, invariant_problems, rest_problems)
"""The shared validators, in the order their problems are listed."""

__all__ = [
    "MAX_CELLS",
    "MAX_GUARANTEE",
    "MAX_SAMPLES",
    "NOISE_SCALE_RANGE",
    "SHARED_CHECKS",
    "data_problems",
    "guarantee_problems",
    "invariant_problems",
    "noise_scale_problems",
    "rest_problems",
    "table_required",
    "top_problems",
]
