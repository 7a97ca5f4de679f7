"""The report's first line: the verdict in one sentence a reader outside differential privacy can follow.

Derived only from the claim check's outcome and bounds and the effective guarantee's reported values,
never stronger than what was proven: "at least" only from a proven lower bound (the claim check's
``bounds.lower``, rounded down), "at most" only from a proven upper bound (``bounds.upper`` or the effective
guarantee's certified epsilons, rounded up). Example (census P.L. 94-171 persons)::

    The claimed ε = 17.14 at δ = 10⁻¹⁰ does not hold once its invariant, margins (State), is published
    exactly: the joint release is at least ε = 29.9871 at δ = 10⁻¹⁰.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from semidp.verify.display import fmt_delta, fmt_down, fmt_up
from semidp.verify.report import Check, Report

_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def plain_delta(delta: float) -> str:
    """A delta for people: ``10⁻¹⁰`` for an exact power of ten, else :func:`verify.display.fmt_delta`."""
    s = fmt_delta(delta)
    m = re.fullmatch(r"1e([+-]\d+)", s)
    if m is None:
        return s
    return "10" + str(int(m.group(1))).translate(_SUPERSCRIPT)


def _claim_text(g: Mapping[str, Any]) -> str:
    """The claimed guarantee in symbols: ``ε = 17.14 at δ = 10⁻¹⁰``, ``ρ = 2.56``, ``μ = 1``, ``RDP ...``."""
    if "epsilon" in g:
        eps = f"ε = {fmt_up(g['epsilon'])}"
        return eps + (f" at δ = {plain_delta(g['delta'])}" if g.get("delta") else " (pure DP)")
    if "zcdp" in g:
        return f"ρ = {fmt_up(g['zcdp'])} (zCDP)"
    if "mu" in g:
        return f"μ = {fmt_up(g['mu'])} (Gaussian DP)"
    if "rdp" in g:
        return f"Rényi DP ε = {fmt_up(g['rdp']['epsilon'])} at order {float(g['rdp']['alpha']):g}"
    return "guarantee"


def _epsilon_upper(r: Report, delta: float) -> float | None:
    """The smallest certified epsilon of the effective guarantee at ``delta`` (an upper bound), if any."""
    values = [e.epsilon for e in r.effective.entries if e.delta == delta and e.epsilon is not None]
    return min(values) if values else None


def proven_lower(r: Report) -> bool:
    """Whether the claim check's ``bounds.lower`` is a proven lower bound of the joint release's epsilon.

    A Semi-DP guarantee is computed at the upper end of a(t); when a(t) is known only by bounds, its
    epsilon bounds are those of the upper end, so their lower end proves nothing about the true a(t).
    """
    if r.claim is None or r.claim.framework != "semi-dp":
        return True
    return r.semi_adjacent_parameter.exact


def _published(r: Report) -> str:
    return f"once its invariant, {r.invariant.description}, is published exactly"


def _effective_text(eff: Mapping[str, Any], claim: Mapping[str, Any]) -> str | None:
    """The effective guarantee's parameter in the claim's form (an upper bound on privacy loss), rounded up.

    ``None`` when the effective guarantee has no parameter of that form.
    """
    if "epsilon" in claim:
        if "epsilon" not in eff or eff.get("delta", 0) > claim.get("delta", 0):
            return None
        return f"ε = {fmt_up(eff['epsilon'])}" + (f" at δ = {plain_delta(eff['delta'])}" if eff.get("delta") else "")
    for key, sym in (("zcdp", "ρ"), ("mu", "μ")):
        if key in claim and key in eff:
            return f"{sym} = {fmt_up(eff[key])}"
    return None


def plain_summary(r: Report) -> str:
    """One sentence: does the claim hold for the release with its invariant, and what was proven (module docstring)."""
    check: Check | None = next((c for c in r.checks if c.name == "claim"), None)
    eff = r.effective.forms
    if r.claim is None or check is None:
        if "reason" in eff:
            return f"No finite privacy guarantee holds {_published(r)}: {eff['reason']}. No claim was checked."
        first = next(iter(r.effective.entries), None)
        up = None if first is None else _epsilon_upper(r, first.delta)
        tail = ""
        if first is not None and up is not None:
            tail = f": the joint release is at most ε = {fmt_up(up)} at δ = {plain_delta(first.delta)}"
        return f"No claim was checked (verdict {r.verdict}){tail}."
    g = r.claim.guarantee
    what = f"The claimed {_claim_text(g)}"
    b = check.bounds
    delta = r.claim.number("delta") or 0.0
    eps = r.claim.number("epsilon")
    eps_claim = eps is not None and bool(delta)
    lower_proven = b is not None and proven_lower(r)
    if check.status == "fail":
        if eps_claim and b is not None and lower_proven and eps is not None and b.lower > eps:
            return (
                f"{what} does not hold {_published(r)}: the joint release is at least "
                f"ε = {fmt_down(b.lower)} at δ = {plain_delta(delta)}."
            )
        if "reason" in eff:
            return f"{what} does not hold {_published(r)}: no finite guarantee holds ({eff['reason']})."
        shown = _effective_text(eff, g)
        proven = f" (the guarantee proven for the joint release is {shown})" if shown else ""
        return f"{what} does not hold {_published(r)}: the claim check below refutes it{proven}."
    if check.status == "pass":
        up = b.upper if eps_claim and b is not None else (_epsilon_upper(r, delta) if eps_claim else None)
        if up is not None:
            tail = f": the joint release is at most ε = {fmt_up(up)} at δ = {plain_delta(delta)}"
        else:
            shown = _effective_text(eff, g)
            tail = f": the joint release is proven to satisfy {shown}" if shown else ""
        others = [c.name for c in r.checks if c.status == "fail"]
        but = f" (but the check(s) {', '.join(others)} failed)" if others else ""
        return f"{what} holds {_published(r)}{tail}{but}."
    if eps_claim and b is not None and lower_proven and b.lower <= b.upper:
        return (
            f"Whether the {what[4:]} holds {_published(r)} is not decided: the joint release's ε at "
            f"δ = {plain_delta(delta)} is proven only to lie in [{fmt_down(b.lower)}, {fmt_up(b.upper)}]."
        )
    return f"Whether the {what[4:]} holds {_published(r)} is not decided (see the claim check below)."


__all__ = ["plain_delta", "plain_summary", "proven_lower"]
