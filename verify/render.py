"""Human-readable renderings of an audit report: terminal text and Markdown.

Numbers that bound privacy loss are printed **rounded up** at the displayed
precision (a report never shows an epsilon smaller than the computed bound);
the JSON report carries full precision.
"""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction
from typing import Any

from semidp.accountant.guarantees.conversion_routes import EpsilonDelta
from semidp.verify.display import fmt_delta, fmt_down, fmt_up
from semidp.verify.plain_summary import plain_summary
from semidp.verify.report import GuaranteeSummary, PldEntry, Report
from semidp.verify.sensitivity_report import AnySensitivity, NaiveSpaces, SensitivityRefused


def _summary_line(s: GuaranteeSummary) -> str:
    """A guarantee summary's parameters (a workload's exact rational rho when it has one)."""
    return _guarantee_line(s.forms, s.rho_exact)


def _guarantee_line(obj: Mapping[str, Any], rho_exact: str | None = None) -> str:
    """The parameters of a guarantee's forms (:func:`accountant.guarantees.conversion_routes.native_forms`) or of a spec's
    guarantee table (the claim), rounded up."""
    if obj.get("certified") is False:  # a black box's effective (verify.runner.accounted)
        return "none certified (black box)"
    parts = []
    for key, label in (("zcdp", "rho"), ("mu", "mu"), ("epsilon", "epsilon"), ("delta", "delta")):
        if key == "zcdp" and rho_exact is not None:  # a workload's exact rational sum, not its float rounded up
            parts.append(f"rho = {fmt_up(Fraction(rho_exact))}")
        elif key in obj:
            parts.append(f"{label} = {fmt_up(obj[key])}" if key != "delta" else f"delta = {fmt_delta(obj[key])}")
    if "rdp" in obj:  # a list of (alpha, epsilon) points, or one point (a spec's guarantee table)
        points = obj["rdp"] if isinstance(obj["rdp"], list) else [obj["rdp"]]
        parts.append("RDP " + ", ".join(f"({float(p['alpha']):g}, {fmt_up(p['epsilon'])})" for p in points))
    return ", ".join(parts) if parts else "(f-DP curve)"


def bracket_text(e: EpsilonDelta | PldEntry) -> str:
    """``bracket [lower, upper]`` of a PLD entry (lower rounded down, upper up), or "" for a conversion's entry."""
    return f"bracket [{fmt_down(e.lower)}, {fmt_up(e.upper)}]" if isinstance(e, PldEntry) else ""


def _ed_lines(s: GuaranteeSummary, indent: str) -> list[str]:
    return [
        f"{indent}epsilon = {fmt_up(e.epsilon):>9} at delta = {fmt_delta(e.delta)}  [{e.method}]"
        + ("" if e.epsilon is not None else f"  ({_why_none(e)})")
        + (f"  {bracket_text(e)}" if bracket_text(e) else "")
        for e in s.entries
    ]


def _sensitivity_lines(sens: AnySensitivity | None) -> list[str]:
    if sens is None:
        return []
    if isinstance(sens, SensitivityRefused):
        return [f"sensitivity ({sens.query}): not computed: {sens.detail}", ""]
    out = [
        f"sensitivity ({sens.query}, radius {sens.radius}, {sens.scope}, "
        f"{'exact' if sens.exact else 'NOT EXACT'}): l1 = {sens.l1}, l2 = {fmt_up(sens.l2)}, "
        f"linf = {sens.linf}, rank {sens.rank} of {sens.dimension}, {sens.size} vectors"
    ]
    if isinstance(sens.naive, NaiveSpaces):
        g = sens.naive.group_inflated
        out.append(f"    naive a * S(D, A_1) (Prop. 24): l1 = {g['l1']}, l2 = {fmt_up(g['l2'])}, linf = {g['linf']}")
    pcf = sens.published_closed_form
    if pcf is not None and not pcf.agrees:
        out.append(f"    {pcf.source} disagrees with the exact space:")
        out += [f"      {line}" for line in pcf.findings[1:]]
    return out + [""]


def _why_none(e: EpsilonDelta | PldEntry) -> str:
    """Why an epsilon is ``none``: no finite guarantee at all, or no finite epsilon at this delta."""
    if e.method == "none":
        return "no finite guarantee: see the reason below"
    if e.method == "none-certified":
        return "a black box: nothing certified; the audit bounds epsilon below only"
    return f"no finite epsilon at delta = {fmt_delta(e.delta)} by this route"


def _kind_lines(r: Report, markdown: bool) -> list[str]:
    out: list[str] = []
    for s in r.sections:
        out += s.markdown_lines(r) if markdown else s.text_lines(r)
    return out


def _sensitivity(r: Report) -> AnySensitivity | None:
    s = r.section("sensitivity")
    return s if isinstance(s, AnySensitivity) else None


def render_text(r: Report) -> str:
    """Terminal report."""
    a = r.semi_adjacent_parameter
    adv, eff = r.advertised, r.effective
    lines = [
        plain_summary(r),
        "",
        f"semidp {r.tool.version} audit: {r.name}" + (f" -- {r.title}" if r.title else ""),
        f"spec {r.spec.path} (sha256 {r.spec.sha256[:12]}), relation {r.relation}, "
        f"invariant: {r.invariant.description}",
        "",
        f"semi-adjacent parameter {a.bounds_text()}  [{a.method}, {'exact' if a.exact else 'upper bound'}, {a.scope}]",
        f"  witness: {a.witness}",
        "",
        *_sensitivity_lines(_sensitivity(r)),
        f"advertised ({adv.relation}): {_summary_line(adv)}",
        *_ed_lines(adv, "    "),
        f"effective, {eff.framework} ({eff.relation}): {_summary_line(eff)}",
        *_ed_lines(eff, "    "),
        *_kind_lines(r, markdown=False),
    ]
    if "reason" in eff.forms:
        lines.append(f"    no finite guarantee: {eff.forms['reason']}")
    if r.claim:
        lines += ["", f"claim ({r.claim.framework}): {_guarantee_line(r.claim.guarantee)}"]
    lines += ["", "checks:"]
    for c in r.checks:
        lines.append(f"  [{c.status.upper():4}] {c.name}: {c.detail}")
        if c.bounds is not None:
            b = c.bounds
            lines.append(f"         epsilon bounds: lower {fmt_down(b.lower)}, upper {fmt_up(b.upper)}")
    lines += ["", f"verdict: {r.verdict.upper()}"]
    if r.plots:
        lines.append("plots: " + ", ".join(r.plots))
    if r.plots_note:
        lines.append(f"plots: {r.plots_note}")
    return "\n".join(lines) + "\n"


def _md_cell(text: str) -> str:
    """A Markdown table cell: ``|`` escaped, line breaks folded."""
    return text.replace("|", "\\|").replace("\n", " ")


def render_markdown(r: Report) -> str:
    """Markdown report (written by ``--out``)."""
    a = r.semi_adjacent_parameter
    rows = []
    for label, s in (("advertised", r.advertised), (f"effective ({r.effective.framework})", r.effective)):
        if not s.entries:
            rows.append(f"| {label} | {_md_cell(_summary_line(s))} | | | |")
        for e in s.entries:
            rows.append(
                f"| {label} | {_md_cell(_summary_line(s))} | {fmt_delta(e.delta)} | "
                f"{fmt_up(e.epsilon)}{'' if e.epsilon is not None else ' (' + _why_none(e) + ')'} | "
                f"{e.method}{' ' + bracket_text(e) if bracket_text(e) else ''} |"
            )
    checks = [f"| {c.name} | {c.status} | {_md_cell(c.detail)} |" for c in r.checks]
    extra: list[str] = []
    sens = _sensitivity(r)
    if sens:
        extra += ["## Sensitivity", "", *(f"    {line}" for line in _sensitivity_lines(sens) if line), ""]
    extra += _kind_lines(r, markdown=True)
    out = [
        f"# Audit: {r.name}",
        "",
        f"**{plain_summary(r)}**",
        "",
        r.title or "",
        "",
        f"- spec: `{r.spec.path}` (sha256 `{r.spec.sha256}`)",
        f"- tool: semidp {r.tool.version}; "
        + (f"seed: {r.seed}" if r.seed is not None else "no randomness was used (nothing is drawn)"),
        *(
            [f"- claim ({r.claim.framework}): {_md_cell(_guarantee_line(r.claim.guarantee))}"]
            if r.claim
            else ["- claim: none (nothing to decide)"]
        ),
        f"- relation: {r.relation}; invariant: {r.invariant.description}",
        f"- semi-adjacent parameter {a.bounds_text(bold=True)} ({a.method}, "
        f"{'exact' if a.exact else 'upper bound'}, {a.scope}): {a.witness}",
        "",
        "| guarantee | parameters | delta | epsilon (rounded up) | method |",
        "|---|---|---|---|---|",
        *rows,
        "",
        *extra,
        "| check | status | detail |",
        "|---|---|---|",
        *checks,
        "",
        f"**Verdict: {r.verdict}**",
        "",
    ]
    for p in r.plots:
        out += [f"![{p}]({p})", ""]
    if r.plots_note:
        out += [f"Plots: {r.plots_note}", ""]
    if r.references:
        out += ["References: " + "; ".join(r.references), ""]
    return "\n".join(out)


__all__ = ["bracket_text", "render_markdown", "render_text"]
