"""Human-readable renderings of an audit report: terminal text and Markdown.

Numbers that bound privacy loss are printed **rounded up** at the displayed
precision (a report never shows an epsilon smaller than the computed bound);
the JSON report carries full precision.
"""

from __future__ import annotations

from decimal import ROUND_CEILING, Decimal
from typing import Any

#: Decimals shown for epsilons and rhos in text and Markdown.
DECIMALS = 4


def fmt_up(x: float | None, decimals: int = DECIMALS) -> str:
    """``x`` rounded up (toward +inf) at ``decimals`` places, trailing zeros trimmed; ``None`` -> "none".

    A float whose shortest round-trip representation already has at most
    ``decimals`` places (such as ``10.24``) is shown as that representation:
    it *is* that float, not a rounding of it.

    Examples
    --------
    >>> fmt_up(40.950565838003726), fmt_up(10.24), fmt_up(None)
    ('40.9506', '10.24', 'none')
    """
    if x is None:
        return "none"
    short = repr(float(x))
    if "e" not in short and len(short.partition(".")[2]) <= decimals:
        return short[:-2] if short.endswith(".0") else short
    q = Decimal(x).quantize(Decimal(1).scaleb(-decimals), rounding=ROUND_CEILING)
    s = format(q, "f")
    return s.rstrip("0").rstrip(".") if "." in s else s


def _guarantee_line(obj: dict[str, Any]) -> str:
    parts = []
    for key, label in (("zcdp", "rho"), ("mu", "mu"), ("epsilon", "epsilon"), ("delta", "delta")):
        if key in obj:
            parts.append(f"{label} = {fmt_up(obj[key])}" if key != "delta" else f"delta = {obj[key]:.3g}")
    if "rdp" in obj:
        parts.append("RDP " + ", ".join(f"({p['alpha']:g}, {fmt_up(p['epsilon'])})" for p in obj["rdp"]))
    return ", ".join(parts) if parts else "(f-DP curve)"


def _ed_lines(obj: dict[str, Any], indent: str) -> list[str]:
    return [f"{indent}epsilon = {fmt_up(e['epsilon']):>9} at delta = {e['delta']:.3g}  [{e['method']}]"
            for e in obj.get("epsilon_delta", [])]


def _sensitivity_lines(sens: dict[str, Any] | None) -> list[str]:
    if sens is None:
        return []
    if sens.get("status") == "refused":
        return [f"sensitivity ({sens['query']}): not computed: {sens['detail']}", ""]
    out = [f"sensitivity ({sens['query']}, radius {sens['radius']}, {sens['scope']}, "
           f"{'exact' if sens['exact'] else 'NOT EXACT'}): l1 = {sens['l1']}, l2 = {fmt_up(sens['l2'])}, "
           f"linf = {sens['linf']}, rank {sens['rank']} of {sens['dimension']}, {sens['size']} vectors"]
    naive = sens.get("naive", {})
    if "group_inflated" in naive:
        g = naive["group_inflated"]
        out.append(f"    naive a * S(D, A_1) (Prop. 24): l1 = {g['l1']}, l2 = {fmt_up(g['l2'])}, linf = {g['linf']}")
    pcf = sens.get("published_closed_form")
    if pcf and not pcf["agrees"]:
        out.append(f"    {pcf['source']} disagrees with the exact space:")
        out += [f"      {line}" for line in pcf["findings"][1:]]
    return out + [""]


def render_text(r: dict[str, Any]) -> str:
    """Terminal report."""
    a = r["semi_adjacent_parameter"]
    eff = r["effective"]
    lines = [
        f"semidp {r['tool']['version']} audit: {r['name']}" + (f" -- {r['title']}" if r["title"] else ""),
        f"spec {r['spec']['path']} (sha256 {r['spec']['sha256'][:12]}), relation {r['relation']}, "
        f"invariant: {r['invariant']['description']}",
        "",
        f"semi-adjacent parameter a(t) = {a['value']}  [{a['method']}, "
        f"{'exact' if a['exact'] else 'upper bound'}, {a['scope']}]",
        f"  witness: {a['witness']}",
        "",
        *_sensitivity_lines(r.get("sensitivity")),
        f"advertised ({r['advertised']['relation']}): {_guarantee_line(r['advertised'])}",
        *_ed_lines(r["advertised"], "    "),
        f"effective, {eff['framework']} ({eff['relation']}): {_guarantee_line(eff)}",
        *_ed_lines(eff, "    "),
    ]
    if "mechanism" in r:
        mech, err = r["mechanism"], r.get("expected_l2_error", {})
        est = err.get("exact")
        mc = err.get("monte_carlo", {})
        target = mech.get("calibration") or (f"epsilon = {mech['epsilon']:g}" if "epsilon" in mech else "")
        delta2 = f", Delta_2 = {fmt_up(mech['l2_sensitivity'])}" if "l2_sensitivity" in mech else ""
        lines += ["", f"mechanism: {mech['label']}, {target}, noise in a "
                      f"{mech['noise_dimension']}-dimensional subspace{delta2}",
                  f"    {err.get('quantity', 'E||noise||_2')}: " + (f"{est:.6g} (exact); " if est is not None else "")
                  + (f"draws: mean {mc['mean']:.6g} over {mc['draws']}" if mc else "")]
        if r.get("samples_file"):
            lines.append(f"    samples: {r['samples_file']} ({r['samples']['count']} x {r['samples']['shape'][1]}, "
                         f"seed {r['samples']['seed']})")
    if "test" in r:
        t = r["test"]
        lines += ["", f"Semi-DP UMPU odds-ratio test (H0: theta <= {t['theta0']:g}, {t['alternative']}), "
                      f"margins rows {t['margins']['rows']} cols {t['margins']['cols']}",
                  f"    Z = {t['statistic']:.6g}{' (given)' if t['released'] else ''}, p-value = {t['pvalue']:.6g}, "
                  f"threshold m = {t['m']:.6g}, reject at alpha = {t['alpha']:g}: {t['reject']}, "
                  f"exact size = {t['size']:.12g}"]
    if "reason" in eff:
        lines.append(f"    no finite guarantee: {eff['reason']}")
    if r.get("claim"):
        c = r["claim"]
        lines += ["", f"claim ({c['framework']}): {_guarantee_line(c['guarantee'])}"]
    lines += ["", "checks:"]
    for c in r["checks"]:
        lines.append(f"  [{c['status'].upper():4}] {c['name']}: {c['detail']}")
        if "bounds" in c:
            b = c["bounds"]
            lines.append(f"         epsilon bounds: lower {b['lower']:.6g}, upper {fmt_up(b['upper'])}")
    lines += ["", f"verdict: {r['verdict'].upper()}"]
    if r.get("plots"):
        lines.append("plots: " + ", ".join(r["plots"]))
    return "\n".join(lines) + "\n"


def render_markdown(r: dict[str, Any]) -> str:
    """Markdown report (written by ``--out``)."""
    a = r["semi_adjacent_parameter"]
    rows = []
    for label, obj in (("advertised", r["advertised"]), (f"effective ({r['effective']['framework']})", r["effective"])):
        eds = obj.get("epsilon_delta", [])
        if not eds:
            rows.append(f"| {label} | {_guarantee_line(obj)} | | | |")
        for e in eds:
            rows.append(f"| {label} | {_guarantee_line(obj)} | {e['delta']:.3g} | {fmt_up(e['epsilon'])} | {e['method']} |")
    checks = [f"| {c['name']} | {c['status']} | {c['detail']} |" for c in r["checks"]]
    extra: list[str] = []
    if r.get("sensitivity"):
        extra += ["## Sensitivity", "", *(f"    {line}" for line in _sensitivity_lines(r["sensitivity"]) if line), ""]
    if r.get("test"):
        t = r["test"]
        extra += ["## Private test", "",
                  f"- Z = {t['statistic']:.6g}, p-value = {t['pvalue']:.6g}, threshold m = {t['m']:.6g}, "
                  f"reject at alpha = {t['alpha']:g}: **{t['reject']}**, exact size = {t['size']:.12g}", ""]
    out = [
        f"# Audit: {r['name']}",
        "",
        r["title"] or "",
        "",
        f"- spec: `{r['spec']['path']}` (sha256 `{r['spec']['sha256']}`)",
        f"- tool: semidp {r['tool']['version']}; seed: {r['seed']}",
        f"- relation: {r['relation']}; invariant: {r['invariant']['description']}",
        f"- semi-adjacent parameter a(t) = **{a['value']}** ({a['method']}, "
        f"{'exact' if a['exact'] else 'upper bound'}, {a['scope']}): {a['witness']}",
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
        f"**Verdict: {r['verdict']}**",
        "",
    ]
    for p in r.get("plots", []):
        out += [f"![{p}]({p})", ""]
    if r["references"]:
        out += ["References: " + "; ".join(r["references"]), ""]
    return "\n".join(out)
