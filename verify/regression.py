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
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from semidp.accountant.errors import InvalidArgument
from semidp.verify.atomic_write import write_text

#: Baseline file format version.
BASELINE_VERSION = 1
#: Default relative and absolute tolerances for "a guarantee got weaker".
RTOL, ATOL = 1e-9, 1e-12
VERDICT_ORDER = {"holds": 0, "inconclusive": 1, "fails": 2}
GUARANTEE_KEYS = ("advertised", "effective")

JSON = dict[str, Any]


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


def load_baseline(path: Path) -> dict[str, JSON]:
    """The summaries of a baseline file (``{}`` if it does not exist); a malformed file is refused."""
    if not path.exists():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as e:
        raise InvalidArgument(f"--baseline {str(path)!r}: not a readable JSON baseline: {e}") from None
    if not isinstance(data, dict) or data.get("version") != BASELINE_VERSION or not isinstance(data.get("specs"), dict):
        raise InvalidArgument(
            f"--baseline {str(path)!r}: expected {{'version': {BASELINE_VERSION}, 'specs': {{...}}}} "
            "(written by semidp check --update-baseline)"
        )
    return {str(k): v for k, v in data["specs"].items()}


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
    "RTOL",
    "compare",
    "load_baseline",
    "spec_key",
    "summarize",
    "write_baseline",
]
