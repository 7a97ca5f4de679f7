"""Composed decimal spec numbers summed exactly (specs/README.md, "Decimals are exact for composed claims";
verify/exact_composition.py).

Figures by hand: 30 x 2.74 = 82.2 = 411/5 and 3 x 0.1 = 0.3 in decimals, while in binary floats
30 x float(2.74) > float(82.2) and 0.1 + 0.1 + 0.1 > 0.3; under Semi-DP with a(t) = 2 a pure part counts
twice (group privacy) and a zCDP part four times.
"""

from __future__ import annotations

import contextlib
import copy
import io
import json
import pickle
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

from semidp.accountant.core.outcome import Refuted, Verified
from semidp.verify.cli import main
from semidp.verify.exact_composition import ExactSum, decide_exact, decimal_claim, exact_sum
from semidp.verify.load import loads
from semidp.verify.privacy_claim import PrivacyClaim
from semidp.verify.spec import EpsilonGuarantee, ZcdpGuarantee
from semidp.verify.spec_numbers import DecimalText, decimal_value, exact_number


def test_decimal_text_is_its_float_and_keeps_its_decimal() -> None:
    x = DecimalText("2.74")
    assert x == 2.74 and isinstance(x, float) and repr(x) == "2.74"
    n = exact_number(x)
    assert n == Fraction(2.74) != Fraction(137, 50)  # the binary value, as every spec number was read
    assert decimal_value(n) == Fraction(137, 50) and decimal_value(Fraction(1, 3)) == Fraction(1, 3)
    assert decimal_value(exact_number(DecimalText("1_000.5"))) == Fraction(2001, 2)
    assert type(n + 1) is Fraction  # arithmetic drops the decimal: only exact_composition reads it
    for y in (pickle.loads(pickle.dumps(x)), pickle.loads(pickle.dumps(n)), copy.deepcopy(n)):
        assert decimal_value(exact_number(y) if isinstance(y, float) else y) == Fraction(137, 50)


def test_loader_keeps_the_decimals_of_every_spec_number() -> None:
    spec = loads(
        """version = 1
name = "decimals"
[data]
features = [{ name = "x", levels = 2 }]
adjacency = "add-remove"
[invariant]
kind = "none"
[mechanism]
kind = "published"
components = [{ epsilon = 2.74 }, { epsilon = 1e-1 }]
[claim]
framework = "dp"
guarantee = { epsilon = 2.84 }
[report]
deltas = [1e-6]
"""
    )
    comps = spec.mechanism.components  # type: ignore[attr-defined]
    assert [c.epsilon for c in comps] == [Fraction(2.74), Fraction(0.1)]  # binary, unchanged
    assert [decimal_value(c.epsilon) for c in comps] == [Fraction(137, 50), Fraction(1, 10)]
    assert spec.claim is not None and decimal_value(spec.claim.guarantee.epsilon) == Fraction(71, 25)
    assert decimal_claim(spec.claim.guarantee).exact("epsilon") == Fraction(71, 25)
    assert decimal_value(spec.report.deltas[0]) == Fraction(1, 10**6) and spec.report.deltas[0] == Fraction(1e-6)


def test_exact_sum_forms_and_grouping() -> None:
    pure = EpsilonGuarantee(epsilon=Fraction(137, 50))
    zc = ZcdpGuarantee(zcdp=Fraction(1, 10))
    assert exact_sum((pure,) * 30) == ExactSum("epsilon", Fraction(411, 5), 30)
    assert exact_sum((pure, EpsilonGuarantee(epsilon=Fraction(1), delta=Fraction(0)))) == ExactSum(
        "epsilon", Fraction(187, 50), 2
    )
    assert exact_sum((zc,) * 3) == ExactSum("rho", Fraction(3, 10), 3)
    assert exact_sum((pure, pure), group=2) == ExactSum("epsilon", Fraction(274, 25), 2)
    assert exact_sum((zc,), group=2) == ExactSum("rho", Fraction(2, 5), 1)
    assert exact_sum((pure, zc)) is None  # mixed: left to the accountant
    assert exact_sum((EpsilonGuarantee(epsilon=Fraction(1), delta=Fraction(1, 10**6)),)) is None  # approximate
    assert exact_sum((pure,), group=0) is None and exact_sum(None) is None


def test_decide_exact_verifies_refutes_or_abstains() -> None:
    month = ExactSum("epsilon", Fraction(411, 5), 30)
    assert isinstance(decide_exact(PrivacyClaim.epsilon_delta("411/5"), month), Verified)
    assert isinstance(decide_exact(PrivacyClaim.epsilon_delta("411/5", 1e-9), month), Verified)
    below = decide_exact(PrivacyClaim.epsilon_delta(Fraction(411, 5) - Fraction(1, 10**15)), month)
    assert isinstance(below, Refuted)
    assert decide_exact(PrivacyClaim.epsilon_delta(82, 1e-9), month) is None  # approx claim below the sum
    assert decide_exact(PrivacyClaim.zcdp(1), month) is None  # another form
    rho = ExactSum("rho", Fraction(3, 10), 3)
    assert isinstance(decide_exact(PrivacyClaim.zcdp("3/10"), rho), Verified)
    assert isinstance(decide_exact(PrivacyClaim.zcdp("299/1000"), rho), Refuted)
    assert decide_exact(PrivacyClaim.epsilon_delta(3, 1e-6), rho) is None


def _audit_text(tmp_path: Path, text: str) -> tuple[int, dict[str, Any]]:
    path = tmp_path / "spec.toml"
    path.write_text(text, encoding="utf-8")
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        code = main(["audit", str(path), "--json", "--quiet"])
    report: dict[str, Any] = json.loads(buf.getvalue())
    return code, report


_ZCDP_SPEC = """version = 1
name = "three-tenths"
[data]
features = [{{ name = "x", levels = 2 }}]
adjacency = "add-remove"
[invariant]
kind = "none"
[mechanism]
kind = "published"
components = [{{ zcdp = 0.1 }}, {{ zcdp = 0.1 }}, {{ zcdp = 0.1 }}]
[claim]
framework = "dp"
guarantee = {{ zcdp = {claim} }}
[report]
deltas = [1e-6]
"""


@pytest.mark.parametrize(("claim", "code", "outcome"), [("0.3", 0, "verified"), ("0.29999999999999", 1, "refuted")])
def test_zcdp_parts_sum_exactly_in_an_audit(tmp_path: Path, claim: str, code: int, outcome: str) -> None:
    """0.1 + 0.1 + 0.1 > 0.3 in floats; the decimals sum to 0.3 exactly, so a claim of 0.3 holds."""
    got, report = _audit_text(tmp_path, _ZCDP_SPEC.format(claim=claim))
    check = next(c for c in report["checks"] if c["name"] == "claim")
    assert (got, check["outcome"]) == (code, outcome)
    assert check["detail"].startswith("certified (exact rational): the sum of 3 parts, rho = 0.3 ")


def test_a_single_guarantee_claimed_as_written_still_holds(tmp_path: Path) -> None:
    """Not composed: the claim is read as before (binary), so rho = 2.56 claimed of rho = 2.56 holds (reading the
    claim as its decimal against the float guarantee would refute it by rounding)."""
    text = _ZCDP_SPEC.format(claim="2.56").replace(
        "components = [{ zcdp = 0.1 }, { zcdp = 0.1 }, { zcdp = 0.1 }]", "guarantee = { zcdp = 2.56 }"
    )
    got, report = _audit_text(tmp_path, text)
    check = next(c for c in report["checks"] if c["name"] == "claim")
    assert (got, check["outcome"]) == (0, "verified")
