"""Privacy regression tests: a report's privacy-relevant figures against a stored baseline (``semidp check``).

A *summary* keeps what a regression can be read from (contract report fields, ``specs/README.md``):
the verdict, every check's status, a(t) with its bounds, and every number of the advertised and effective
guarantees (their parameters and each ``epsilon_delta`` entry, keyed by delta and method). A *baseline*
is a JSON file of summaries keyed by the spec's path relative to the baseline's folder.

Regressions (each fails ``semidp check``, exit 1):

* the verdict got worse (``holds`` < ``inconclusive`` < ``fails``): e.g. a claim that held no longer does;
* a check that passed no longer passes, or is no longer reported;
* a guarantee got weaker: any parameter (epsilon, delta, rho/zcdp, mu) or any reported epsilon at a
  (delta, method) grew by more than ``rtol`` relative (``atol`` absolute near 0), or a parameter that had
  a value has none (no finite guarantee);
* the upper bound of a(t) grew.

Improvements (smaller numbers, better verdicts) are reported and never fail. Privacy numbers are
deterministic (certified conversions), so the default tolerance is tight; Monte Carlo figures are not
part of the summary.

The current summary is read from the typed :class:`~verify.report.Report` (:func:`summary_of`); a summary stays a
JSON object because the baseline is a file of them: entries written by older versions may lack keys, and
:func:`entry_problems` checks each value's type before :func:`compare` reads it, so the comparison reads JSON
on both sides (:func:`summarize` gives the same summary from a report's JSON file).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path

from semidp.accountant.core.errors import InvalidArgument
from semidp.verify.atomic_write import write_text
from semidp.verify.json_walk import JSON
from semidp.verify.report import Report

#: Baseline file format version.
BASELINE_VERSION = 1
#: Default relative and absolute tolerances for "a guarantee got weaker".
RTOL, ATOL = 1e-9, 1e-12
VERDICT_ORDER = {"holds": 0, "inconclusive": 1, "fails": 2}
GUARANTEE_KEYS = ("advertised", "effective")


def summarize(report: JSON) -> JSON:
    """The privacy-relevant figures of a contract report (see the module docstring)."""
    a = report.get("semi_adjacent_parameter") or {}
    out: JSON = {
        "name": report.get("name"),
        "verdict": report.get("verdict"),
        "checks": {c["name"]: c["status"] for c in report.get("checks", [])},
        "semi_adjacent_parameter": {k: a.get(k) for k in ("value", "lower", "exact")},
    }
    for key in GUARANTEE_KEYS:
        g = report.get(key)
        if isinstance(g, dict):
            out[key] = _guarantee_numbers(g)
    return out


def summary_of(report: Report) -> JSON:
    """The privacy-relevant figures of a typed report: the same object as ``summarize(report.to_json())``."""
    a = report.semi_adjacent_parameter
    out: JSON = {
        "name": report.name,
        "verdict": report.verdict,
        "checks": {c.name: c.status for c in report.checks},
        "semi_adjacent_parameter": {"value": a.value, "lower": a.lower, "exact": a.exact},
    }
    for key, g in (("advertised", report.advertised), ("effective", report.effective)):
        params = {k: v for k, v in g.forms.items() if _is_num(v)}
        eds = {f"delta={e.delta!r};{e.method}": e.epsilon for e in g.entries}
        out[key] = {"params": params, "epsilon_delta": eds}
    return out


def _guarantee_numbers(g: JSON) -> JSON:
    """Numeric parameters of a guarantee object and its ``epsilon_delta`` entries keyed ``delta=..;method``."""
    params = {k: v for k, v in g.items() if k not in ("epsilon_delta", "relation", "framework") and _is_num(v)}
    eds = {
        f"delta={e['delta']!r};{e['method']}": e.get("epsilon")
        for e in g.get("epsilon_delta", [])
        if isinstance(e, dict) and "delta" in e and "method" in e
    }
    return {"params": params, "epsilon_delta": eds}


def _is_num(v: object) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


@dataclass
class Comparison:
    """What changed for one spec: regressions fail the check, improvements and notes do not."""

    spec: str
    regressions: list[str] = field(default_factory=list)
    improvements: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def regressed(self) -> bool:
        """Whether anything got worse."""
        return bool(self.regressions)


def compare(spec: str, baseline: JSON, now: JSON, *, rtol: float = RTOL, atol: float = ATOL) -> Comparison:
    """Compare a spec's current summary with its baseline summary (see the module docstring)."""
    c = Comparison(spec)
    vb, vn = baseline.get("verdict"), now.get("verdict")
    if VERDICT_ORDER.get(str(vn), 3) > VERDICT_ORDER.get(str(vb), 3):
        c.regressions.append(f"verdict {vb} -> {vn}")
    elif VERDICT_ORDER.get(str(vn), 3) < VERDICT_ORDER.get(str(vb), 3):
        c.improvements.append(f"verdict {vb} -> {vn}")
    checks_b, checks_n = baseline.get("checks", {}), now.get("checks", {})
    for name, status in checks_b.items():
        if status != "pass":
            continue
        if name not in checks_n:
            c.regressions.append(f"check {name!r} passed and is no longer reported")
        elif checks_n[name] != "pass":
            c.regressions.append(f"check {name!r}: pass -> {checks_n[name]}")
    for name, status in checks_n.items():
        if name not in checks_b:
            c.notes.append(f"new check {name!r}: {status}")
        elif status == "pass" and checks_b[name] != "pass":
            c.improvements.append(f"check {name!r}: {checks_b[name]} -> pass")
    ab, an = baseline.get("semi_adjacent_parameter", {}), now.get("semi_adjacent_parameter", {})
    _numbers(c, "a(t)", ab.get("value"), an.get("value"), rtol=0.0, atol=0.0)
    for key in GUARANTEE_KEYS:
        gb, gn = baseline.get(key), now.get(key)
        if not isinstance(gb, dict):
            continue
        if not isinstance(gn, dict):
            c.regressions.append(f"{key} guarantee is no longer reported")
            continue
        for part in ("params", "epsilon_delta"):
            now_part = gn.get(part, {})
            for k, vb_ in gb.get(part, {}).items():
                if k not in now_part:  # a route or parameter no longer reported (an explicit None is a regression)
                    c.notes.append(f"{key} {k}: no longer reported")
                    continue
                _numbers(c, f"{key} {k}", vb_, now_part[k], rtol=rtol, atol=atol)
    return c


def _numbers(c: Comparison, what: str, before: object, after: object, *, rtol: float, atol: float) -> None:
    """A privacy number: larger is weaker; ``None`` (no finite value) is the weakest."""
    if before is None and after is None:
        return
    if after is None or (isinstance(after, float) and math.isinf(after)):
        if before is not None and not (isinstance(before, float) and math.isinf(before)):
            c.regressions.append(f"{what}: {before!r} -> {after!r} (no finite value)")
        return
    if before is None or not (_is_num(before) and _is_num(after)):
        if before is None:
            c.improvements.append(f"{what}: none -> {after!r}")
        return
    b, a = float(before), float(after)  # type: ignore[arg-type]
    if a > b + max(atol, rtol * abs(b)):
        c.regressions.append(f"{what}: {b!r} -> {a!r} (weaker)")
    elif a < b - max(atol, rtol * abs(b)):
        c.improvements.append(f"{what}: {b!r} -> {a!r}")


def load_baseline(path: Path, *, missing_ok: bool = False, option: str = "--baseline") -> dict[str, JSON]:
    """The summaries of a baseline file, each entry checked for the types :func:`compare` reads.

    A missing file is refused unless ``missing_ok`` (``--update-baseline`` creates it: ``{}``); a malformed
    file, or an entry whose value has the wrong type (a string where a number is expected, a list where an
    object is), raises :class:`InvalidBaseline` naming the spec and the key. ``option`` is the option
    that named the file (``--baseline``, or the pytest plugin's ``--semidp-baseline``), for the message.
    """
    where = f"{option} {str(path)!r}"
    if not path.exists():
        if missing_ok:
            return {}
        raise InvalidBaseline(
            f"{where}: no such file (record one first with semidp check ... --baseline FILE --update-baseline)"
        )
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise InvalidBaseline(f"{where}: not a readable JSON baseline: {e}") from None
    if not isinstance(data, dict) or data.get("version") != BASELINE_VERSION or not isinstance(data.get("specs"), dict):
        raise InvalidBaseline(
            f"{where}: expected {{'version': {BASELINE_VERSION}, 'specs': {{...}}}} "
            "(written by semidp check --update-baseline)"
        )
    specs = {str(k): v for k, v in data["specs"].items()}
    problems = [p for key, entry in specs.items() for p in entry_problems(key, entry)]
    if problems:
        more = f" (+{len(problems) - 1} more)" if len(problems) > 1 else ""
        valid = {k: v for k, v in specs.items() if not entry_problems(k, v)}
        raise InvalidBaseline(
            f"{where}: invalid baseline: {problems[0]}{more}; rewrite it with --update-baseline",
            problems=problems,
            valid=valid,
        )
    return specs


class InvalidBaseline(InvalidArgument):
    """A baseline file that is missing, unreadable, or holds a value of the wrong type.

    ``problems`` lists each bad value (spec and key); ``valid`` holds the well-formed entries when the file
    itself is a baseline and only some entries are bad (``--update-baseline`` rewrites those), else None.
    """

    def __init__(self, message: str, problems: list[str] | None = None, valid: dict[str, JSON] | None = None) -> None:
        super().__init__(message)
        self.problems = problems or []
        self.valid = valid


def entry_problems(spec: str, entry: object) -> list[str]:
    """What is wrong with one baseline entry (``[]`` if it has the layout :func:`summarize` writes).

    Each problem names the spec and the key, e.g. ``spec 'a.toml': effective.params.epsilon: expected a
    number or null, got 'abc'``. Keys the comparison does not read are ignored.
    """
    out: list[str] = []

    def bad(key: str, want: str, got: object) -> None:
        out.append(f"spec {spec!r}: {key}: expected {want}, got {_short(got)}")

    if not isinstance(entry, dict):
        bad("(entry)", "an object", entry)
        return out
    verdict = entry.get("verdict")
    if verdict is not None and verdict not in VERDICT_ORDER:
        bad("verdict", f"one of {sorted(VERDICT_ORDER)}", verdict)
    checks = entry.get("checks", {})
    if not isinstance(checks, dict):
        bad("checks", "an object", checks)
    else:
        for name, status in checks.items():
            if not isinstance(status, str):
                bad(f"checks.{name}", "a status string", status)
    a = entry.get("semi_adjacent_parameter", {})
    if not isinstance(a, dict):
        bad("semi_adjacent_parameter", "an object", a)
    elif not _number_or_none(a.get("value")):
        bad("semi_adjacent_parameter.value", "a number or null", a.get("value"))
    for key in GUARANTEE_KEYS:
        g = entry.get(key)
        if g is None:
            continue
        if not isinstance(g, dict):
            bad(key, "an object", g)
            continue
        for part in ("params", "epsilon_delta"):
            values = g.get(part, {})
            if not isinstance(values, dict):
                bad(f"{key}.{part}", "an object", values)
                continue
            for k, v in values.items():
                if not _number_or_none(v):
                    bad(f"{key}.{part}.{k}", "a number or null", v)
    return out


def _number_or_none(v: object) -> bool:
    return v is None or _is_num(v)


def _short(v: object) -> str:
    text = json.dumps(v) if not isinstance(v, float) else repr(v)
    return text if len(text) <= 40 else text[:37] + "..."


def write_baseline(path: Path, summaries: dict[str, JSON]) -> None:
    """Write summaries as a baseline file (sorted keys, one stable layout for code review), atomically
    (:mod:`verify.atomic_write`: a failed write raises ``WriteError`` and keeps the previous baseline)."""
    payload = {"version": BASELINE_VERSION, "tool": "semidp", "specs": dict(sorted(summaries.items()))}
    write_text(path, json.dumps(payload, indent=2, sort_keys=True) + "\n", what="--baseline", parents=True)


def spec_key(spec: Path, baseline: Path) -> str:
    """The key of ``spec`` in ``baseline``: its path relative to the baseline's folder, POSIX style."""
    try:
        return spec.resolve().relative_to(baseline.resolve().parent).as_posix()
    except ValueError:
        return spec.resolve().as_posix()


__all__ = [
    "ATOL",
    "BASELINE_VERSION",
    "Comparison",
    "InvalidBaseline",
    "RTOL",
    "compare",
    "entry_problems",
    "load_baseline",
    "spec_key",
    "summarize",
    "summary_of",
    "write_baseline",
]
