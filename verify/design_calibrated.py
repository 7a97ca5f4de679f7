"""``[design]`` of a calibrated kind: the noise of one mechanism calibrated to the target it will announce.

The calibrated kinds (:mod:`verify.kinds.calibrated`: ``gaussian``, ``projected-gaussian``, ``laplace``,
``projected-laplace``, ``discrete-laplace``, ``k-norm``) already calibrate their noise on the Semi-DP relation
``SemiAdjacent(base, invariant, a(t))`` at the exact sensitivity space S. With ``[design]`` the target comes from
``design.target`` instead of ``[mechanism]`` (contract: ``specs/README.md``, "[design]"):

* ``target``: the forms the kind calibrates to -- Gaussian kinds ``{epsilon, delta}`` (analytic Gaussian [BW18,
  Alg. 1], numeric, certified), ``{mu}`` (sigma = Delta_2(S)/mu [DRS22, Thm. 2.7]) or ``{zcdp}`` (mu = sqrt(2 rho)
  [BS16, Prop. 1.6]); the Laplace kinds and ``k-norm`` a pure ``{epsilon}`` (b = Delta_1(S)/epsilon, closed form).
* ``framework = "semi-dp"`` only. ``"dp"`` (calibrating on the base relation alone) is refused: the invariant is
  published exactly, so noise calibrated while ignoring it would announce a guarantee the joint release does not
  have (a(t) > 1 pairs are the ones the invariant leaves); ``claim.framework = "dp"`` still judges the joint release.
* ``vary = "scale"`` only: one mechanism, one noise scale (``allocation`` is for workloads).

The report gets the ``design`` object (``target``, ``framework``, ``vary``, ``scale`` = the calibrated noise parameter
with its name in ``noise_parameter``, ``achieved`` = the certified guarantee of the calibrated mechanism at the target's
delta, ``tight``/``tightness``, ``expected_error`` = the kind's own exact expected error, ``iterations``,
``seconds``) and a ``design`` check: verified when the calibrated mechanism's certified guarantee meets the target.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from semidp.accountant.core.outcome import Outcome, Refuted, Verified
from semidp.accountant.guarantees.definitions import GDP, Guarantee, PureDP
from semidp.accountant.profiles.gaussian import gdp_delta, gdp_delta_lower, gdp_epsilon
from semidp.verify.context import KindResult
from semidp.verify.json_walk import INTERNAL, JSON, OMIT_NONE, Walked
from semidp.verify.mechanism_section import CalibratedMechanismSection
from semidp.verify.registry import Problem
from semidp.verify.report import Check, Report
from semidp.verify.sections import ErrorSection, ExactErrorSection, LatticeErrorSection
from semidp.verify.spec import DesignSpec, MechanismSpec, Spec
from semidp.verify.spec_checks import guarantee_problems
from semidp.verify.spec_values import guarantee_spec_json

#: The ``[mechanism]`` keys a design replaces (the calibration target); giving one with ``[design]`` is exit 2.
TARGET_KEYS = ("epsilon", "delta", "mu", "rho", "scale")
#: How much less noise the tightness probe tries: the noise parameter times ``1 - TIGHT_STEP`` must fail the target.
TIGHT_STEP = 1e-3
#: Kinds whose privacy map is attained on the worst pair of an exactly listed S (so smaller noise fails): the
#: Gaussian shift trade-off is exactly mu = Delta_2/sigma [DRS22, Thm. 2.7]; Laplace's loss is ||v||_1/b.
EXACT_MAP_KINDS = frozenset({"gaussian", "projected-gaussian", "laplace"})


def _is_gaussian(m: MechanismSpec) -> bool:
    return hasattr(m, "mu") and hasattr(m, "rho")


def calibrated_design_problems(spec: Spec) -> list[Problem]:
    """Problems of ``[design]`` on a calibrated kind (each naming its key; module docstring): the target's form,
    framework ``semi-dp``, vary ``scale``, and no calibration target in ``[mechanism]`` besides."""
    d, m = spec.design, spec.mechanism
    if d is None or m is None:
        return []
    probs: list[Problem] = []
    given = [k for k in TARGET_KEYS if getattr(m, k, None) is not None]
    if given:
        keys = ", ".join(f"mechanism.{k}" for k in given)
        probs.append(
            Problem(
                "design.target",
                f"[design] replaces the calibration target of [mechanism]: give design.target or {keys}, not both",
            )
        )
    if d.vary != "scale":
        probs.append(
            Problem("design.vary", f"mechanism.kind = {m.kind!r} has one noise scale: only vary = 'scale' applies")
        )
    if d.framework != "semi-dp":
        probs.append(
            Problem(
                "design.framework",
                f"{d.framework!r} is refused for mechanism.kind = {m.kind!r}: calibrating on the base relation alone "
                "ignores the invariant, which is published exactly, so the announced guarantee would not hold for "
                "the joint release; use 'semi-dp' (claim.framework = 'dp' still judges the joint release)",
            )
        )
    if spec.claim is not None and spec.claim.framework not in ("dp", "semi-dp"):
        probs.append(
            Problem(
                "design.framework",
                f"the design calibrates on the Semi-DP relation; claim.framework = {spec.claim.framework!r} "
                "calibrates on the base relation instead (omit [design] or use 'semi-dp' / 'dp')",
            )
        )
    gp = guarantee_problems(d.target, "design.target")
    if gp:
        return probs + gp
    g = d.target
    form = g.form()
    if _is_gaussian(m):
        if form == "epsilon" and not (g.delta is not None and 0 < g.delta < 1):
            probs.append(Problem("design.target.delta", f"{m.kind} with epsilon needs 0 < delta < 1"))
        elif form not in ("epsilon", "mu", "zcdp"):
            probs.append(
                Problem("design.target", f"{m.kind} calibrates to {{epsilon, delta}}, {{mu}} or {{zcdp}}, not {form!r}")
            )
    elif form != "epsilon" or g.delta not in (None, 0):
        probs.append(Problem("design.target", f"{m.kind} calibrates to a pure {{epsilon}} (no delta, mu, zcdp or rdp)"))
    for k in ("epsilon", "mu", "zcdp"):
        v = getattr(g, k)
        if v is not None and not v > 0:
            probs.append(Problem(f"design.target.{k}", f"must be > 0, got {float(v)!r}"))
    return probs


def designed_mechanism(m: MechanismSpec, d: DesignSpec) -> Any:
    """``m`` (a calibrated kind's ``[mechanism]``, no target of its own) with ``design.target`` as its target."""
    g = d.target
    if _is_gaussian(m):
        if g.zcdp is not None:
            return m.with_target("rho", g.zcdp)  # type: ignore[attr-defined]
        if g.mu is not None:
            return m.with_target("mu", g.mu)  # type: ignore[attr-defined]
    return m.with_target("epsilon", g.epsilon, g.delta)  # type: ignore[attr-defined]


def _assess(
    g: Guarantee, d: DesignSpec, kind: str, name: str, exact_space: bool
) -> tuple[JSON, bool, bool | None, str]:
    """``(achieved, met, tight, tightness)`` of the mechanism's certified guarantee ``g`` against the target."""
    t = d.target
    tight_kind = kind in EXACT_MAP_KINDS and exact_space
    not_proven = "tightness not proven: " + (
        f"the privacy map of {kind} is an upper bound on the worst pair"
        if kind not in EXACT_MAP_KINDS
        else "S was not listed exactly (a closed-form superset was used)"
    )
    if isinstance(g, GDP) and t.epsilon is not None and t.delta is not None:
        eps, delta = float(t.epsilon), float(t.delta)
        d_up = gdp_delta(g.mu, eps)
        met = d_up <= delta  # certified: then epsilon(delta) <= the target epsilon exactly
        achieved = {
            "epsilon": eps if met else gdp_epsilon(g.mu, delta),
            "delta": delta,
            "delta_at_target_epsilon": d_up,
        }
        fail = gdp_delta_lower(g.mu / (1 - TIGHT_STEP), eps)
        margin = (delta - d_up) / delta
        head = (
            f"numeric (analytic Gaussian [BW18], certified at 50 digits): delta({eps:g}) <= {d_up:.6g}, "
            f"margin {margin:.3g} of the target delta"
        )
        if tight_kind and fail > delta:
            return achieved, met, True, f"{head}; proven: sigma x {1 - TIGHT_STEP:g} has delta >= {fail:.6g} > target"
        return achieved, met, False if tight_kind else None, f"{head}; {not_proven}"
    if isinstance(g, GDP):
        rho = g.mu**2 / 2
        achieved = {"mu": g.mu, "zcdp": rho}
        target = float(t.mu) if t.mu is not None else float(t.zcdp or 0)
        value = g.mu if t.mu is not None else rho
        met = value <= target
        what = "mu = Delta_2(S)/sigma" if t.mu is not None else "rho = mu^2/2, mu = sqrt(2 rho) rounded down"
        rel = (target - value) / target
        head = f"exact (closed form {what}; float rounding margin {rel:.2g} relative)"
        return achieved, met, tight_kind or None, head if tight_kind else f"{head}; {not_proven}"
    if isinstance(g, PureDP):
        target = float(t.epsilon or 0)
        achieved = {"epsilon": g.epsilon}
        met = g.epsilon <= target
        how = "the norm ball scaled by 1/epsilon" if kind == "k-norm" else f"{name} = Delta_1(S)/epsilon"
        head = f"exact (closed form: {how}; certified epsilon = {g.epsilon!r}, target {target!r})"
        return achieved, met, tight_kind or None, head if tight_kind else f"{head}; {not_proven}"
    return {"guarantee": repr(g)}, False, None, f"no design assessment for a {type(g).__name__} guarantee"


@dataclass(frozen=True)
class DesignError(Walked):
    """``design.expected_error``: the kind's closed-form expected error (empty for a Monte Carlo only one)."""

    quantity: str | None = field(default=None, metadata=OMIT_NONE)
    exact: float | None = field(default=None, metadata=OMIT_NONE)
    formula: str | None = field(default=None, metadata=OMIT_NONE)

    @classmethod
    def of(cls, error: ErrorSection) -> DesignError:
        """From the kind's ``expected_l2_error`` section: quantity, exact value and formula where it has them."""
        if isinstance(error, ExactErrorSection):
            return cls(error.quantity, error.exact, error.formula)
        return cls(error.quantity) if isinstance(error, LatticeErrorSection) else cls()


@dataclass(frozen=True)
class CalibratedDesignSection(Walked):
    """The ``design`` section of a calibrated kind (module docstring; no CSV; text lines of one noise parameter)."""

    target: Mapping[str, object]
    """The calibration target's forms, as the spec gives them."""
    framework: str
    vary: str
    kind: str
    noise_parameter: str
    """``sigma``, ``b``, ``t`` or the K-norm ball's ``1/epsilon``."""
    scale: float
    scale_exact: str
    calibration: str
    achieved: Mapping[str, float | str]
    """The calibrated mechanism's certified guarantee at the target's delta."""
    tight: bool | None
    tightness: str
    expected_error: DesignError
    iterations: int
    seconds: float
    """Wall time of the calibration (s)."""
    key: str = field(default="design", metadata=INTERNAL)

    def out_files(self, name: str) -> list[tuple[str, str]]:
        """No file next to the report (a calibrated design has no CSV)."""
        return []

    def text_lines(self, report: Report) -> list[str]:
        """The design's summary."""
        target = ", ".join(f"{k} = {v:g}" for k, v in self.target.items())
        ach = ", ".join(f"{k} = {v:.6g}" for k, v in self.achieved.items() if isinstance(v, float))
        err = self.expected_error
        return [
            f"design: {self.framework} target {target}, vary = {self.vary} ({self.kind})",
            f"  {self.noise_parameter} = {self.scale:.6g} ({self.calibration})",
            f"  achieved (certified): {ach}",
            f"  tightness: {self.tightness}",
            f"  expected error: {err.quantity} = {err.exact}",
            f"  {self.iterations} calibration(s) in {self.seconds:.3f} s",
        ]

    def markdown_lines(self, report: Report) -> list[str]:
        """The same, as a fenced block."""
        return ["## Design", "", "```", *self.text_lines(report), "```", ""]


def with_calibrated_design(
    spec: Spec,
    result: KindResult,
    kind: str,
    guarantee: Guarantee,
    info: CalibratedMechanismSection,
    error: ErrorSection,
    seconds: float,
) -> KindResult:
    """``result`` with the ``design`` section and check of a calibrated kind's ``[design]`` (module docstring).

    ``guarantee`` is the calibrated mechanism's certified guarantee on the Semi-DP relation, ``info`` its ``mechanism``
    section (the noise parameter, ``sensitivity_exact``), ``error`` the kind's expected-error section, ``seconds``
    the calibration's wall time (s).
    """
    d = spec.design
    if d is None:
        return result
    name, value, exact = info.noise_parameter()
    achieved, met, tight, tightness = _assess(guarantee, d, kind, name, bool(info.sensitivity_exact))
    section = CalibratedDesignSection(
        guarantee_spec_json(d.target),
        d.framework,
        d.vary,
        kind,
        name,
        value,
        exact,
        info.calibration_text(),
        achieved,
        tight,
        tightness,
        DesignError.of(error),
        1,
        seconds,
    )
    outcome: Outcome = (
        Verified(f"the calibrated {kind} ({name} = {value:.6g}) meets the target by its certified guarantee")
        if met
        else Refuted(f"BUG: the calibrated {kind} ({name} = {value:.6g}) does not meet the design target")
    )
    return dataclasses.replace(
        result,
        sections=(*result.sections, section),
        final_checks=(*result.final_checks, Check("design", outcome)),
    )


__all__ = [
    "CalibratedDesignSection",
    "TARGET_KEYS",
    "calibrated_design_problems",
    "designed_mechanism",
    "with_calibrated_design",
]
