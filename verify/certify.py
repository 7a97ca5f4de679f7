r"""Independent re-certification of every reported (epsilon, delta) pair (house style R9).

The accountant computes conversions in 50-digit arithmetic with its own
optimisers; this module re-checks each *reported* pair by a different route at
:data:`DPS` digits:

* ``bun-steinke``: sympy evaluates :math:`\rho+2\sqrt{\rho\log(1/\delta)}` and
  the reported epsilon must not be below it;
* ``canonne-kamath-steinke`` (zCDP): the order :math:`\alpha` solving
  :math:`(2\alpha-1)\rho-\varepsilon+\log(1-1/\alpha)=0` is found by bisection at
  80 digits and :math:`\delta_\alpha(\varepsilon)=e^{(\alpha-1)(\alpha\rho-\varepsilon)+\alpha\log(1-1/\alpha)}/(\alpha-1)`
  must be :math:`\le\delta` (any :math:`\alpha>1` certifies [CKS20, Prop. 12]);
* ``balle-wang`` (GDP): the exact profile at the reported epsilon must be :math:`\le\delta`;
* ``f-dp-profile`` (pure/approximate DP): the exact profile of :math:`f_{\varepsilon,\delta}`; for a
  composition of ``k`` identical parts, else the exact profile of the optimal composition, summed term by term
  over the binomial [KOV15, Thm. 3.3];
* ``mironov`` / ``canonne-kamath-steinke`` (RDP): some order of the curve certifies;
* ``f-dp-profile`` (f-DP): the profile of the piecewise-linear curve at its vertices
  [DRS22, Prop. 2.12] (the curve itself is the accountant's lower bound).

A check that re-certified nothing is skipped, never passed.

A failure is a bug in semidp, reported as a failed check rather than hidden.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import singledispatch

import mpmath
import sympy

from semidp.accountant.core.outcome import Outcome, Refuted, Skipped, Verified
from semidp.accountant.guarantees.composition import ComposedApproxDP, ComposedPureDP, identical_part
from semidp.accountant.guarantees.conversion_routes import AnyGuarantee, EpsilonDelta
from semidp.accountant.guarantees.definitions import GDP, RDP, ZCDP, ApproxDP, PureDP, TradeOff
from semidp.accountant.guarantees.semidp import NoFiniteGuarantee
from semidp.verify.report import PLD_CERTIFICATE, Breakdown, GuaranteeSummary, PldEntry

#: Working precision of the re-checks (decimal digits).
DPS = 80
_MP = mpmath.MPContext()
_MP.dps = DPS


def _bs_ok(rho: float, eps: float, delta: float) -> bool:
    r, d = sympy.Rational(rho), sympy.Rational(delta)
    bound = r + 2 * sympy.sqrt(r * sympy.log(1 / d))
    return bool(sympy.N(sympy.Rational(eps) - bound, DPS) >= 0)


def _cks_delta_at(rho: mpmath.mpf, eps: mpmath.mpf, alpha: mpmath.mpf) -> mpmath.mpf:
    return _MP.exp((alpha - 1) * (alpha * rho - eps) + alpha * _MP.log1p(-1 / alpha)) / (alpha - 1)


def _cks_ok(rho: float, eps: float, delta: float) -> bool:
    r, e = _MP.mpf(rho), _MP.mpf(eps)
    if r == 0:
        return True

    def deriv(a: mpmath.mpf) -> mpmath.mpf:
        return (2 * a - 1) * r - e + _MP.log1p(-1 / a)

    lo, hi = _MP.mpf(1) + _MP.mpf(10) ** -30, _MP.mpf(2)
    while deriv(hi) < 0:
        hi *= 2
    if deriv(lo) >= 0:
        alpha = lo
    else:
        for _ in range(400):  # bisection: deriv is increasing in alpha
            mid = (lo + hi) / 2
            lo, hi = (mid, hi) if deriv(mid) < 0 else (lo, mid)
        alpha = hi
    return bool(_cks_delta_at(r, e, alpha) <= _MP.mpf(delta))


def _bw_ok(mu: float, eps: float, delta: float) -> bool:
    m, e = _MP.mpf(mu), _MP.mpf(eps)
    if m == 0:
        return True
    val = _MP.ncdf(m / 2 - e / m) - _MP.exp(e) * _MP.ncdf(-m / 2 - e / m)
    return bool(val <= _MP.mpf(delta))


def _approx_ok(eps_e: float, delta_e: float, eps: float, delta: float) -> bool:
    ee, de, e = _MP.mpf(eps_e), _MP.mpf(delta_e), _MP.mpf(eps)
    val = de + (1 - de) * max(_MP.mpf(0), _MP.exp(ee) - _MP.exp(e)) / (1 + _MP.exp(ee))
    return bool(val <= _MP.mpf(delta))


def _rdp_ok(g: RDP, eps: float, delta: float, method: str) -> bool:
    lid = -_MP.log(_MP.mpf(delta))
    for a_f, e_f in zip(g.orders, g.epsilons):
        a = _MP.mpf(a_f)
        if method == "mironov":
            bound = _MP.mpf(e_f) + lid / (a - 1)
        else:
            bound = _MP.mpf(e_f) + (lid + (a - 1) * _MP.log1p(-1 / a) - _MP.log(a)) / (a - 1)
        if bound <= _MP.mpf(eps):
            return True
    return False


@singledispatch
def certify_entry(g: AnyGuarantee, entry: EpsilonDelta) -> bool | None:
    """Re-check one reported ``(epsilon, delta, method)`` of ``g``; ``None`` if there is nothing to check."""
    return None


@certify_entry.register
def _(g: ZCDP, entry: EpsilonDelta) -> bool | None:
    if entry.epsilon is None:
        return None
    if entry.method == "bun-steinke":
        return _bs_ok(g.rho, entry.epsilon, entry.delta)
    return _cks_ok(g.rho, entry.epsilon, entry.delta)


@certify_entry.register
def _(g: GDP, entry: EpsilonDelta) -> bool | None:
    return None if entry.epsilon is None else _bw_ok(g.mu, entry.epsilon, entry.delta)


@certify_entry.register
def _(g: PureDP, entry: EpsilonDelta) -> bool | None:
    return None if entry.epsilon is None else _approx_ok(g.epsilon, 0.0, entry.epsilon, entry.delta)


@certify_entry.register
def _(g: ApproxDP, entry: EpsilonDelta) -> bool | None:
    return None if entry.epsilon is None else _approx_ok(g.epsilon, g.delta, entry.epsilon, entry.delta)


def _homogeneous_ok(eps0: float, delta0: float, k: int, eps: float, delta: float) -> bool:
    e0, e = _MP.mpf(eps0), _MP.mpf(eps)
    p = _MP.exp(e0) / (1 + _MP.exp(e0))
    rr = _MP.fsum(
        _MP.binomial(k, j) * p ** (k - j) * (1 - p) ** j * (1 - _MP.exp(e - (k - 2 * j) * e0))
        for j in range(k + 1)
        if (k - 2 * j) * e0 > e
    )
    return bool(1 - (1 - _MP.mpf(delta0)) ** k * (1 - rr) <= _MP.mpf(delta))


@certify_entry.register(ComposedPureDP)
@certify_entry.register(ComposedApproxDP)
def _(g: ComposedPureDP | ComposedApproxDP, entry: EpsilonDelta) -> bool | None:
    if entry.epsilon is None:
        return None
    d0 = g.delta if isinstance(g, ComposedApproxDP) else 0.0
    if _approx_ok(g.epsilon, d0, entry.epsilon, entry.delta):
        return True
    part = identical_part(g)
    if part is None:
        return False
    pd = part.delta if isinstance(part, ApproxDP) else 0.0
    return _homogeneous_ok(part.epsilon, pd, len(g.parts), entry.epsilon, entry.delta)


@certify_entry.register
def _(g: TradeOff, entry: EpsilonDelta) -> bool | None:
    """The profile of the piecewise-linear curve at the reported epsilon, from its vertices at 80 digits:
    :math:`\\max_j [1-\\beta_j-e^{\\varepsilon}\\alpha_j] \\le \\delta` [DRS22, Prop. 2.12]."""
    if entry.epsilon is None:
        return None
    e = _MP.exp(_MP.mpf(entry.epsilon))
    worst = max(1 - _MP.mpf(b) - e * _MP.mpf(a) for a, b in zip(g.curve.alphas, g.curve.betas))
    return bool(worst <= _MP.mpf(entry.delta))


@certify_entry.register
def _(g: RDP, entry: EpsilonDelta) -> bool | None:
    return None if entry.epsilon is None else _rdp_ok(g, entry.epsilon, entry.delta, entry.method)


@dataclass
class _Tally:
    """What :func:`certify_summary` found: re-certified, failed, resting on the accountant alone, PLD-labelled."""

    checked: int = 0
    failed: list[str] = field(default_factory=list)
    unchecked: int = 0
    pld: int = 0

    def entries(self, g: AnyGuarantee | None, entries: Sequence[EpsilonDelta | PldEntry], where: str) -> None:
        """Re-certify each conversion entry against ``g`` (``None``: nothing to re-check it by), label each PLD one."""
        if isinstance(g, NoFiniteGuarantee):
            return
        at = f" ({where})" if where else ""
        proven: dict[float, float] = {}  # delta -> the least re-certified upper bound of epsilon
        for entry in entries:
            if isinstance(entry, PldEntry):
                continue
            ok = None if g is None else certify_entry(g, entry)
            if ok is None:
                self.unchecked += entry.epsilon is not None
                continue
            self.checked += 1
            if not ok:
                self.failed.append(f"{entry.method} epsilon={entry.epsilon!r} at delta={entry.delta!r}{at}")
            elif entry.epsilon is not None:
                proven[entry.delta] = min(proven.get(entry.delta, entry.epsilon), entry.epsilon)
        for p in entries:
            if not isinstance(p, PldEntry):
                continue
            self.pld += 1
            if not p.lower <= p.upper:
                self.failed.append(f"pld bracket [{p.lower!r}, {p.upper!r}] at delta={p.delta!r} is not ordered{at}")
            if not p.set_aside and p.delta in proven and p.lower > proven[p.delta]:  # lower above a proven upper
                self.failed.append(
                    f"pld lower bound {p.lower!r} at delta={p.delta!r} exceeds the re-certified {proven[p.delta]!r}{at}"
                )

    def summary(self, s: GuaranteeSummary, where: str = "") -> None:
        """The summary's own entries (against the guarantee it holds), then those of the summaries and breakdowns
        reported inside it."""
        self.entries(s.guarantee, s.entries, where)
        for path, inner in s.nested():
            here = f"{where}.{path}" if where else path
            if isinstance(inner, Breakdown):  # a group's exact rho, rounded up: its BS and CKS entries follow from it
                self.entries(ZCDP(inner.rho), inner.epsilon_delta, here)
            else:
                self.summary(inner, here)


def section_summaries(sections: Sequence[object]) -> list[GuaranteeSummary]:
    """The guarantee summaries a report's sections show (``plain_dp``, a lattice kind's ``guarantees``): their
    (epsilon, delta) values are reported too, so they are re-certified too (each against the guarantee it holds,
    :attr:`~verify.report.GuaranteeSummary.guarantee`)."""
    out: list[GuaranteeSummary] = []
    for sec in sections:
        if not dataclasses.is_dataclass(sec):
            continue
        for f in dataclasses.fields(sec):
            value = getattr(sec, f.name)
            if isinstance(value, GuaranteeSummary):
                out.append(value)
    return out


def certify_summary(summaries: Sequence[GuaranteeSummary]) -> Outcome:
    """Re-check every (epsilon, delta) of each report summary against the guarantee it summarises (its
    :attr:`~verify.report.GuaranteeSummary.guarantee`, stored by :meth:`~verify.report.GuaranteeSummary.of`;
    ``None``: nothing to re-check by, so its values rest on the accountant alone).

    Every reported pair is accounted for in the outcome's text, including those of the summaries and breakdowns
    inside a summary (``coarse``, ``prop21``, ``per_attribute``, ``per_geolevel``): re-certified by an independent
    route, or labelled with the certificate it has -- a PLD entry's bracket (:data:`verify.report.PLD_CERTIFICATE`;
    its ends must be ordered and its lower end must not exceed a re-certified upper bound at the same delta),
    or "the accountant alone" when no route re-checks it.
    """
    tally = _Tally()
    for summary in summaries:
        tally.summary(summary)
    checked, failed, unchecked, pld = tally.checked, tally.failed, tally.unchecked, tally.pld
    if failed:
        return Refuted("BUG: reported epsilon below the certified bound: " + "; ".join(failed))
    pld_note = f"{pld} PLD value(s) certified by {PLD_CERTIFICATE}, not re-derived by a second route" if pld else ""
    if checked == 0:  # nothing was re-certified: not a PASS
        rest = [f"{unchecked} value(s) rest on the accountant alone"] if unchecked else []
        return Skipped(
            "no reported (epsilon, delta) pair has an independent route to re-certify it"
            + (f" ({'; '.join([*rest, pld_note] if pld_note else rest)})" if rest or pld_note else "")
        )
    curves = [s.guarantee for s in summaries if isinstance(s.guarantee, TradeOff)]
    note = (
        "; the f-DP curve itself is the accountant's certified lower bound, re-checked at its vertices"
        if curves
        else ""
    )
    note += f"; {unchecked} value(s) rest on the accountant alone" if unchecked else ""
    note += f"; {pld_note}" if pld_note else ""
    total = checked + unchecked + pld
    return Verified(
        f"{total} reported (epsilon, delta) value(s): {checked} re-certified at {DPS} digits by an independent "
        f"route{note}"
    )
