"""Every guarantee value the loader accepts renders in text, Markdown and JSON (Step 18.1), rounded up.

The loader accepts any finite non-negative number (a TOML float, so up to about 1.8e308 and down to
the smallest subnormal 5e-324) or an exact ``'p/q'`` string for ``epsilon``, ``mu``, ``zcdp`` and the
RDP point, and a ``delta`` in [0, 1] (:mod:`verify.spec_checks`). A value whose conversions overflow
(``mu = 1e300`` gives an infinite epsilon) may be refused by the audit with a ToolkitError (exit 2 with a
message), never by the renderer with a traceback.
"""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
import tomllib
from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from semidp.accountant.core.errors import ToolkitError
from semidp.verify.display import fmt_delta, fmt_down, fmt_up
from semidp.verify.load import load
from semidp.verify.plain_summary import plain_summary
from semidp.verify.render import render_markdown, render_text
from semidp.verify.report import Report
from semidp.verify.runner import audit
from semidp.version import __version__

ROOT = Path(__file__).resolve().parent.parent
TOTAL = (ROOT / "specs" / "census-2020-total.toml").read_text(encoding="utf-8")


def _spec_with(tmp: Path, advertised: str, claim: str) -> Path:
    text = TOTAL.replace(
        '[mechanism]\nkind = "published"\nguarantee = { zcdp = 2.56 }',
        '[mechanism]\nkind = "published"\nguarantee = ' + advertised,
    )
    text = text.replace(
        '[claim]\nframework = "dp"\nguarantee = { zcdp = 2.56 }', '[claim]\nframework = "dp"\nguarantee = ' + claim
    )
    assert text.count(advertised) >= 1 and text.count(claim) >= 1
    p = tmp / "g.toml"
    p.write_text(text, encoding="utf-8")
    return p


def _rendered(path: Path) -> tuple[str, str, str] | None:
    try:
        r = audit(load(str(path))).typed
    except ToolkitError:
        return None  # refused with a message (an overflowing conversion), not a traceback
    return render_text(r), render_markdown(r), json.dumps(r.to_json())


def _magnitudes() -> st.SearchStrategy[str]:
    """Numbers as a spec writes them: every decade the loader admits, and exact rationals."""
    floats = st.builds(
        lambda m, k: repr(float(f"{m}e{k}")),
        st.sampled_from(["1", "2.56", "9.999999999", "4.9", "1.7976931348623157"]),
        st.integers(-323, 308),
    ).filter(lambda s: s not in ("inf", "0.0"))
    rationals = st.builds(lambda p, q: f'"{p}/{q}"', st.integers(1, 10**30), st.integers(1, 10**30))
    return st.one_of(floats, rationals, st.just("0"))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    form=st.sampled_from(["zcdp", "epsilon", "epsilon+delta", "mu", "rdp"]),
    value=_magnitudes(),
    other=_magnitudes(),
    delta=st.sampled_from(["1e-300", "5e-324", "1e-10", "0.5", "1", '"1/3"']),
)
def test_every_accepted_magnitude_renders(tmp_path: Path, form: str, value: str, other: str, delta: str) -> None:
    g = {
        "zcdp": f"{{ zcdp = {value} }}",
        "epsilon": f"{{ epsilon = {value} }}",
        "epsilon+delta": f"{{ epsilon = {value}, delta = {delta} }}",
        "mu": f"{{ mu = {value} }}",
        "rdp": f"{{ rdp = {{ alpha = 2, epsilon = {value} }} }}",
    }[form]
    claim = f"{{ zcdp = {other} }}" if form != "rdp" else f"{{ rdp = {{ alpha = 3, epsilon = {other} }} }}"
    out = _rendered(_spec_with(tmp_path, g, claim))
    if out is None:
        return
    text, md, js = out
    assert "verdict:" in text and "**Verdict:" in md and '"verdict"' in js


def test_huge_guarantee_renders_in_scientific_notation_rounded_up(tmp_path: Path) -> None:
    """The issue's case: ``zcdp = 1e24`` crashed the text report (decimal.InvalidOperation)."""
    out = _rendered(_spec_with(tmp_path, "{ zcdp = 1e24 }", "{ zcdp = 1e24 }"))
    assert out is not None
    text, md, _ = out
    assert "rho = 1e+24" in text and "rho = 1e+24" in md
    # epsilon = rho + 2 sqrt(rho log(1/delta)) > 1e24: rounded up, never shown as 1e+24
    assert "epsilon = 1.0001e+24 at delta = 1e-10  [bun-steinke]" in text


def test_rdp_claim_renders(tmp_path: Path) -> None:
    """A claim in RDP form is one point (a table), not a list: it crashed the text report."""
    out = _rendered(_spec_with(tmp_path, "{ zcdp = 0.5 }", "{ rdp = { alpha = 3, epsilon = 2 } }"))
    assert out is not None
    assert "claim (dp): RDP (3, 2)" in out[0]


@pytest.mark.parametrize(
    "x",
    [1e24, 1e25, 1.7976931348623157e308, 5e-324, 1.23456789e-5, 40.950565838003726, 0.011, 123456789.123456, 9.99995e9],
)
def test_fmt_up_never_below_and_fmt_down_never_above(x: float) -> None:
    up, down = fmt_up(x), fmt_down(x)
    # a shown number reads back as a float no smaller (no larger) than x: "1e+24" *is* the float 1e24
    assert float(up) >= x >= float(down)
    assert float(up) <= x * 1.0002 and float(down) >= x * 0.9998  # and close: 4 decimals or 5 digits


def test_fmt_up_exact_rationals() -> None:
    assert fmt_up(Fraction(11, 1000)) == "0.011"  # not 0.0111 (a float sum rounded up)
    assert fmt_up(Fraction(1, 3)) == "0.3334"
    assert fmt_up(Fraction(293764, 114921)) == "2.5563"
    assert fmt_up(Fraction(10**400 + 1, 1)) == "1.0001e+400"


def test_fmt_delta_rounds_up() -> None:
    assert fmt_delta(1e-10) == "1e-10" and fmt_delta(0.05) == "0.05"
    assert fmt_delta(1.2341e-5) == "1.24e-05"  # "%.3g" would show 1.23e-05 < the value


# --- Step 18.6 and Step 15.6: the first line, the Markdown header, the workload table ---------------------------

UNITS = ROOT / "specs" / "census-2020-pl94-units-us.toml"


def _audit(path: Path) -> Report:
    return audit(load(str(path))).typed


def test_first_line_says_at_least_from_the_proven_lower_bound() -> None:
    r = _audit(UNITS)
    first = render_text(r).splitlines()[0]
    bounds = next(c for c in r.checks if c.name == "claim").bounds
    assert bounds is not None
    lower = bounds.lower
    assert first == (
        "The claimed ε = 2.47 at δ = 10⁻¹⁰ does not hold once its invariant, margins (Block), is published exactly: "
        f"the joint release is at least ε = {fmt_down(lower)} at δ = 10⁻¹⁰."
    )
    assert float(fmt_down(lower)) <= lower
    md = render_markdown(r)
    assert f"**{first}**" in md.splitlines()[:4]
    # a(t) known only by bounds: the epsilon bounds are those of the upper end, so nothing is "at least"
    loose = dataclasses.replace(r, semi_adjacent_parameter=dataclasses.replace(r.semi_adjacent_parameter, exact=False))
    assert "at least" not in plain_summary(loose) and "does not hold" in plain_summary(loose)


def test_first_line_of_a_claim_that_holds_and_of_no_claim(tmp_path: Path) -> None:
    r = _audit(ROOT / "specs" / "census-2020-total.toml")
    assert plain_summary(r).startswith(
        "The claimed ρ = 2.56 (zCDP) holds once its invariant, total count, is published"
    )
    no_claim = dataclasses.replace(r, claim=None, checks=tuple(c for c in r.checks if c.name != "claim"))
    assert plain_summary(no_claim).startswith("No claim was checked (verdict holds): the joint release is at most ε = ")


def test_markdown_states_the_claim_and_the_seed_used() -> None:
    published = render_markdown(_audit(UNITS))
    assert "- claim (semi-dp): epsilon = 2.47, delta = 1e-10" in published
    assert "seed: None" not in published and "no randomness was used" in published
    umpu = render_markdown(_audit(ROOT / "specs" / "umpu-odds-ratio.toml"))  # [audit] seed = 1, draws
    assert "seed: 1" in umpu and "- claim (semi-dp): " in umpu


def test_pld_brackets_in_text_and_markdown() -> None:
    r = _audit(UNITS)
    text, md = render_text(r), render_markdown(r)
    for side in (r.advertised.to_json(), r.effective.to_json()):
        e = next(e for e in side["epsilon_delta"] if e["method"] == "pld")
        shown = f"bracket [{fmt_down(e['bracket']['lower'])}, {fmt_up(e['bracket']['upper'])}]"
        assert f"[pld]  {shown}" in text and f"pld {shown}" in md


def _workload(tmp_path: Path, levels: list[str], rhos: list[str]) -> Path:
    spec = UNITS.read_text(encoding="utf-8").replace(
        'geography = ["US", "State", "County", "Tract", "Block_Group", "Block"]', f"geography = {json.dumps(levels)}"
    )
    spec = spec.replace('margins = [["Block"]]', f'margins = [["{levels[1]}"]]')
    (tmp_path / "m.csv").write_text(
        "geolevel,query,rho\n" + "".join(f"{g},detailed,{q}\n" for g, q in zip(levels, rhos)), encoding="utf-8"
    )
    path = tmp_path / "w.toml"
    path.write_text(spec.replace("census-2020-pl94-units-us.csv", "m.csv"), encoding="utf-8")
    return path


def test_rho_from_exact_rationals_and_columns_aligned_for_long_names(tmp_path: Path) -> None:
    long = "A_geolevel_name_much_longer_than_the_column"
    levels = ["US", "State", long, "Block"]
    text = render_text(_audit(_workload(tmp_path, levels, ["1/1000", "2/1000", "3/1000", "5/1000"])))
    assert "advertised (replace-one): rho = 0.011\n" in text  # exact 11/1000, not 0.0111 from a float sum
    table = text[text.index("  breakdown") :].splitlines()[1:]
    table = table[: next(i for i, line in enumerate(table) if not line.startswith("  ") or "(exact" in line)]
    assert any(long in line for line in table) and len(table) >= 4
    assert len({line.index("|") for line in table}) == 1  # the bar in one column
    assert len({len(line) for line in table}) == 1  # every row as wide: numbers right-aligned


def test_progress_clock_counts_from_process_start() -> None:
    import io

    from semidp.accountant.core.progress import report_stages, stage

    out = io.StringIO()
    report_stages(out, since=12.5)
    try:
        stage("x")
    finally:
        report_stages(None)
    seconds = float(out.getvalue().split("[")[1].split("s]")[0])
    assert seconds >= 12.5


def test_version_does_not_import_the_mathematics() -> None:
    code = (
        "import sys\n"
        "from semidp.entry import main\n"
        "assert main(['--version']) == 0\n"
        "print(sorted(m for m in ('numpy', 'scipy', 'sympy', 'z3', 'mpmath', 'matplotlib') if m in sys.modules))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    got = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True, timeout=120)
    assert got.stdout.splitlines() == [f"semidp {__version__}", "[]"]
    script = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["scripts"]["semidp"]
    assert script == "semidp.entry:main"
