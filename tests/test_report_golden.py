"""The shipped specs' reports (JSON, text, Markdown) against golden copies (issue 23, item 2: typed sections).

The golden files in ``tests/golden/reports/`` were rendered from main at 5a0362c, before the report sections were
typed, and are byte-identical to the typed rendering except where the contract was wrong: the
``conversions-certified`` detail now counts the (epsilon, delta) values of nested summaries too (``coarse``,
``per_attribute``, ``per_geolevel``, ``prop21``, ``plain_dp``, a lattice kind's ``guarantees``), which it left out.
Wall times and the K-norm hull cache's state (hit or miss, its path) vary from run to run, and the spec's sha256
changes with a comment: :func:`_stable` and the text patterns blank them, nothing else.

Regenerate after an intended change with ``SEMIDP_UPDATE_GOLDEN=1 pytest tests/test_report_golden.py`` and review
the diff: every changed number must be explained in the commit message.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest

from semidp.accountant.core.budget import Budget
from semidp.verify.load import load
from semidp.verify.render import render_markdown, render_text
from semidp.verify.runner import audit

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = ROOT / "tests" / "golden" / "reports"

#: Fast specs covering published releases (a guarantee, components, a measurement workload), the UMPU test and
#: the calibrated kinds (projected Gaussian and Laplace, K-norm): a few seconds each.
FAST = [
    "census-2020-total",
    "census-2020-persons",
    "census-2020-dhc-persons-us",
    "census-2020-pl94-units-us",
    "google-symptoms-week",
    "microsoft-telemetry-month",
    "release-mixed-components",
    "umpu-odds-ratio",
    "table-3x3-margins",
    "table-3x3-projected-gaussian",
    "table-3x3-projected-laplace",
    "table-3x3-k-norm",
]
#: Slower ones: a lattice kind (its samples, error, guarantees and MCMC sections), [postprocess] and [design].
SLOW = [
    "county-state-total-generalized-laplace",
    "county-state-total-postprocess",
    "census-2020-pl94-persons-us-allocation",
]

_VOLATILE_KEYS = {"seconds", "hull_cache", "sha256"}
_VOLATILE_TEXT = re.compile(r"\b[0-9]+\.[0-9]+ s\b")
_SHA = re.compile(r"\b(sha256 `?)[0-9a-f]{12,64}\b")


def _stable(value: Any) -> Any:
    """``value`` with wall times and the hull cache's state blanked (they vary from run to run)."""
    if isinstance(value, dict):
        return {k: "<volatile>" if k in _VOLATILE_KEYS else _stable(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_stable(v) for v in value]
    return value


def _rendered(name: str) -> dict[str, str]:
    spec = load(str(Path("specs") / f"{name}.toml"))
    r = audit(spec, seed=1, budget=Budget.of(600)).typed
    return {
        "json": json.dumps(_stable(r.to_json()), indent=1) + "\n",
        "txt": _SHA.sub(r"\1<sha>", _VOLATILE_TEXT.sub("<t> s", render_text(r))),
        "md": _SHA.sub(r"\1<sha>", _VOLATILE_TEXT.sub("<t> s", render_markdown(r))),
    }


def _check(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)  # the report names the spec by the path it was loaded from
    got = _rendered(name)
    for ext, text in got.items():
        path = GOLDEN / f"{name}.{ext}"
        if os.environ.get("SEMIDP_UPDATE_GOLDEN"):
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        assert text == path.read_text(encoding="utf-8"), f"{path.name} changed (see the module docstring)"


@pytest.mark.parametrize("name", FAST)
def test_shipped_report_matches_golden(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    _check(name, monkeypatch)


@pytest.mark.slow
@pytest.mark.parametrize("name", SLOW)
def test_shipped_report_matches_golden_slow(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    _check(name, monkeypatch)


def _reported_epsilons(value: Any) -> int:
    """How many finite epsilons a report object shows in ``epsilon_delta`` lists, at any depth."""
    if isinstance(value, dict):
        own = value.get("epsilon_delta")
        here = sum(e.get("epsilon") is not None for e in own) if isinstance(own, list) else 0
        return here + sum(_reported_epsilons(v) for k, v in value.items() if k != "epsilon_delta")
    if isinstance(value, list):
        return sum(_reported_epsilons(v) for v in value)
    return 0


@pytest.mark.parametrize("name", FAST + SLOW)
def test_conversions_certified_covers_every_reported_epsilon(name: str) -> None:
    """Issue 23, item 5: ``conversions-certified`` accounts for every (epsilon, delta) the report shows (guarantees,
    their ``coarse``/``prop21``/breakdowns and the sections' summaries): re-certified, or labelled with the PLD
    bracket; none is left out of the count (the DHC persons report showed 80 and the check spoke of 6)."""
    report = json.loads((GOLDEN / f"{name}.json").read_text(encoding="utf-8"))
    shown = sum(_reported_epsilons(v) for k, v in report.items() if k not in ("claim", "checks"))
    detail = next(c["detail"] for c in report["checks"] if c["name"] == "conversions-certified")
    m = re.match(r"(\d+) reported \(epsilon, delta\) value\(s\): (\d+) re-certified", detail)
    assert m is not None, detail
    total, recertified = int(m.group(1)), int(m.group(2))
    pld = re.search(r"(\d+) PLD value\(s\) certified by", detail)
    rest = re.search(r"(\d+) value\(s\) rest on the accountant alone", detail)
    assert total == shown
    assert total == recertified + (int(pld.group(1)) if pld else 0) + (int(rest.group(1)) if rest else 0)
    assert rest is None  # every value of these reports has a certificate
