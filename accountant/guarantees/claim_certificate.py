r"""Rigorous enclosures of privacy profiles, for certifying claims (interval arithmetic, no trusted floats).

Every function returns a :class:`Enclosure`: a closed interval ``[lower, upper]``
of *floats* that contains the true value, computed in :mod:`mpmath`'s interval
arithmetic (``mpmath.ctx_iv``, every operation rounded outward) and converted
to floats in the safe direction (the interval's endpoints are exact binary
numbers: they are read as :class:`fractions.Fraction` and rounded down / up by
:func:`accountant.core.directed.down_exact` / :func:`~accountant.core.directed.up_exact`).
Inputs are floats, read exactly (a float is a rational).

``mpmath.iv`` has no ``erfc``; :func:`erfc_enclosure` provides one with a proven
truncation bound:

* :math:`0\le z\le` :data:`SERIES_SWITCH`: the positive series
  :math:`\operatorname{erf}z=\tfrac{2}{\sqrt\pi}e^{-z^2}\sum_{n\ge0}t_n`,
  :math:`t_0=z`, :math:`t_{n+1}=t_n\,2z^2/(2n+3)` [AS64, Eq. 7.1.6]; for
  :math:`n\ge N` the ratio is at most :math:`r=2z^2/(2N+3)<1`, so the tail lies in
  :math:`[0, t_N/(1-r)]`;
* :math:`z>` :data:`SERIES_SWITCH`: Laplace's continued fraction
  :math:`\operatorname{erfc}z=\tfrac{e^{-z^2}}{\sqrt\pi}\,\cfrac{1}{z+\cfrac{1/2}{z+\cfrac{1}{z+\cfrac{3/2}{z+\cdots}}}}`
  [AS64, Eq. 7.1.14]. All its partial numerators and denominators are positive, so
  consecutive approximants lie on opposite sides of the value [LW08, Thm. 3.11 (positive
  continued fractions)]: the hull of two consecutive approximants, each evaluated in
  interval arithmetic, encloses it.

Uses: the Gaussian (GDP) profile [BW18, Thm. 8], the profile of
:math:`f_{\varepsilon,\delta}` [KOV15, Thm. 2.4], the zCDP profile bound at a chosen
order [CKS20, Cor. 13] and the RDP conversion [CKS20, Prop. 12].

References
----------
[AS64]  Abramowitz & Stegun, "Handbook of Mathematical Functions", 1964, Eqs. 7.1.6, 7.1.14.
[LW08]  Lorentzen & Waadeland, "Continued Fractions, Vol. 1: Convergence Theory", 2nd ed., 2008.
[BW18]  Balle & Wang, "Improving the Gaussian Mechanism for Differential Privacy", ICML 2018, Thm. 8.
[KOV15] Kairouz, Oh & Viswanath, "The Composition Theorem for Differential Privacy", ICML 2015, Thm. 2.4.
[CKS20] Canonne, Kamath & Steinke, "The Discrete Gaussian for Differential Privacy", arXiv:2004.00010v5,
        Prop. 12, Cor. 13.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from mpmath.ctx_iv import MPIntervalContext
from mpmath.libmp import to_rational

from semidp.accountant.core.arguments import check_finite_real, check_nonnegative
from semidp.accountant.core.directed import down_exact, up_exact
from semidp.accountant.core.errors import InvalidArgument

#: Working precisions (decimal digits) tried in turn until an enclosure is narrow enough.
PRECISIONS = (60, 150, 400)
#: Relative width (of the upper end) at which an enclosure is accepted without trying more digits.
TARGET_REL_WIDTH = 1e-30
#: erfc uses the series up to this argument and the continued fraction beyond it.
SERIES_SWITCH = 4
#: Most continued-fraction levels tried before the enclosure is returned as it is.
MAX_CF_DEPTH = 20_000

IV = Any  # an ``mpmath.ctx_iv.ivmpf`` (mpmath ships no stubs)


@dataclass(frozen=True, slots=True)
class Enclosure:
    """A certified interval ``[lower, upper]`` (floats, rounded outward) around a real value."""

    lower: float
    """A float ``<=`` the true value."""
    upper: float
    """A float ``>=`` the true value."""
    method: str
    """How it was computed (named in certificate texts)."""

    def __post_init__(self) -> None:
        if not self.lower <= self.upper:
            raise InvalidArgument(f"Enclosure lower={self.lower!r} must be <= upper={self.upper!r}.")

    def text(self) -> str:
        """``[lower, upper]`` with 17 significant digits (round-trip exact)."""
        return f"[{self.lower!r}, {self.upper!r}]"

    def clamp(self, lo: float = 0.0, hi: float = 1.0) -> Enclosure:
        """The enclosure intersected with ``[lo, hi]`` (a value known to lie there, e.g. a probability)."""
        return Enclosure(min(max(self.lower, lo), hi), max(min(self.upper, hi), lo), self.method)


def _ctx(dps: int) -> Any:
    c = MPIntervalContext()
    c.dps = dps
    return c


def _q(c: Any, x: float | Fraction) -> IV:
    """The exact rational ``x`` as an (outward-rounded) interval."""
    f = Fraction(x)
    return c.mpf(f.numerator) / c.mpf(f.denominator)


#: Binary exponent beyond which an interval end is clamped outward (far outside the float range, where an
#: exact rational would need an astronomically large integer, e.g. delta = e^{-1e299} from rho = 1e-300).
END_EXPONENT_LIMIT = 1 << 14


def _end(x: Any, *, upper: bool) -> Fraction:
    """An mpf end as an exact rational, moved outward to +-2^-limit when its magnitude is below that."""
    sign, man, exp, bc = x
    if man and exp + bc < -END_EXPONENT_LIMIT:
        tiny = Fraction(1, 1 << END_EXPONENT_LIMIT)
        if sign:  # a tiny negative end: the lower end becomes -tiny, the upper end 0
            return Fraction(0) if upper else -tiny
        return tiny if upper else Fraction(0)
    if man and exp + bc > END_EXPONENT_LIMIT:
        raise InvalidArgument(
            f"an interval end beyond 2^{END_EXPONENT_LIMIT} (a value far outside the float range, e.g. from an "
            "astronomically large rho or epsilon) cannot be certified in exact arithmetic"
        )
    return Fraction(*to_rational(x))


def _ends(v: IV) -> tuple[Fraction, Fraction]:
    lo, hi = v._mpi_
    return _end(lo, upper=False), _end(hi, upper=True)


def _enclosure(v: IV, method: str) -> Enclosure:
    lo, hi = _ends(v)
    return Enclosure(down_exact(lo), up_exact(hi), method)


def _hull(c: Any, u: IV, v: IV) -> IV:
    (ul, uh), (vl, vh) = _ends(u), _ends(v)
    return _mk(c, min(ul, vl), max(uh, vh))


def _mk(c: Any, lo: Fraction, hi: Fraction) -> IV:
    """The interval ``[lo, hi]`` widened outward to representable endpoints."""
    a, b = _q(c, lo), _q(c, hi)
    return c.mpf([a.a, b.b])


def _erfc_series(c: Any, z: IV) -> IV:
    """erfc on the interval ``z`` (``0 <= z <= SERIES_SWITCH``) from the positive erf series and its tail bound."""
    z2 = z * z
    term, total, n = z, c.mpf(0), 0
    n_min = int(2 * float(z2.b) + 2)  # beyond here the term ratio is below 1
    while True:
        total += term
        term = term * 2 * z2 / (2 * n + 3)
        n += 1
        if n > n_min and (term.b == 0 or term.b < total.a * c.mpf(10) ** (-c.dps - 5)):
            break
    r = 2 * z2 / (2 * n + 3)
    tail_hi = term / (1 - r)
    total = total + c.mpf([0, tail_hi.b])
    erf = 2 / c.sqrt(c.pi) * c.exp(-z2) * total
    return 1 - erf


def _cf_approximant(c: Any, z: IV, depth: int) -> IV:
    """The ``depth``-th approximant of Laplace's continued fraction for ``sqrt(pi) e^{z^2} erfc z``."""
    t = z
    for k in range(depth, 0, -1):
        t = z + c.mpf(k) / 2 / t
    return 1 / t


def _erfc_cf(c: Any, z: IV) -> IV:
    depth = 16
    while True:
        f = _hull(c, _cf_approximant(c, z, depth), _cf_approximant(c, z, depth + 1))
        lo, hi = _ends(f)
        if hi - lo <= Fraction(1, 10 ** (c.dps - 8)) * hi or depth >= MAX_CF_DEPTH:
            break
        depth *= 2
    return c.exp(-z * z) / c.sqrt(c.pi) * f


def erfc_iv(c: Any, z: IV) -> IV:
    r"""An interval containing :math:`\operatorname{erfc}` on the interval ``z`` (any sign; see the module)."""
    zl, zh = _ends(z)
    if zh < 0:
        return 2 - erfc_iv(c, -z)
    if zl < 0:  # erfc is decreasing: [erfc(zh), erfc(zl)]
        return _mk(c, _ends(erfc_iv(c, _mk(c, zh, zh)))[0], _ends(erfc_iv(c, _mk(c, zl, zl)))[1])
    if zh <= SERIES_SWITCH:
        return _erfc_series(c, z)
    if zl > SERIES_SWITCH:
        return _erfc_cf(c, z)
    s = Fraction(SERIES_SWITCH)
    return _mk(c, _ends(_erfc_cf(c, _mk(c, s, zh)))[0], _ends(_erfc_series(c, _mk(c, zl, s)))[1])


def phi_iv(c: Any, x: IV) -> IV:
    r""":math:`\Phi(x)=\tfrac12\operatorname{erfc}(-x/\sqrt2)` on the interval ``x``."""
    return erfc_iv(c, -x / c.sqrt(2)) / 2


def erfc_enclosure(z: float, dps: int = PRECISIONS[0]) -> Enclosure:
    """A certified float enclosure of ``erfc(z)`` (module docstring)."""
    c = _ctx(dps)
    return _enclosure(erfc_iv(c, _q(c, check_finite_real("z", z))), f"interval erfc ({dps} digits)")


def _accept(v: IV) -> bool:
    lo, hi = _ends(v)
    return hi <= 0 or (hi - lo) <= Fraction(TARGET_REL_WIDTH) * abs(hi)


def gdp_delta_enclosure(mu: float, eps: float) -> Enclosure:
    r"""Certified enclosure of the :math:`\mu`-GDP profile :math:`\Phi(a)-e^{\varepsilon}\Phi(a-\mu)`,
    :math:`a=\mu/2-\varepsilon/\mu` [BW18, Thm. 8]; more digits (:data:`PRECISIONS`) when the terms cancel.
    """
    m, e = Fraction(check_nonnegative("mu", mu)), Fraction(check_finite_real("eps", eps))
    if m == 0:  # identical laws: the profile is (1 - e^eps)_+
        if e >= 0:
            return Enclosure(0.0, 0.0, "exact (mu = 0)")
        c0 = _ctx(PRECISIONS[0])
        return _enclosure(1 - c0.exp(_q(c0, e)), "mpmath.iv (mu = 0)").clamp()
    a = m / 2 - e / m  # exact rationals
    v: IV = None
    dps = PRECISIONS[0]
    for dps in PRECISIONS:
        c = _ctx(dps)
        v = phi_iv(c, _q(c, a)) - c.exp(_q(c, e)) * phi_iv(c, _q(c, a - m))
        if _accept(v):
            break
    return _enclosure(v, f"mpmath.iv, {dps} digits").clamp()


def approx_dp_profile_enclosure(eps_e: float, delta_e: float, eps: float) -> Enclosure:
    r"""Certified enclosure of the profile of :math:`f_{\varepsilon_e,\delta_e}` at ``eps``:
    :math:`\delta_e+(1-\delta_e)(e^{\varepsilon_e}-e^{\varepsilon})_+/(1+e^{\varepsilon_e})` [KOV15, Thm. 2.4]."""
    ee, de, e = (Fraction(check_finite_real(n, x)) for n, x in (("eps_e", eps_e), ("delta_e", delta_e), ("eps", eps)))
    c = _ctx(PRECISIONS[0])
    if e >= ee:  # the positive part is exactly 0
        return _enclosure(_q(c, de), "exact rational").clamp()
    exp_e = c.exp(_q(c, ee))
    v = _q(c, de) + (1 - _q(c, de)) * (exp_e - c.exp(_q(c, e))) / (1 + exp_e)
    return _enclosure(v, f"mpmath.iv, {PRECISIONS[0]} digits").clamp()


def cks_order(rho: float, eps: float) -> Fraction:
    """The order alpha > 1 solving (2 alpha - 1) rho - eps + log(1 - 1/alpha) = 0 (floats; any alpha > 1 is
    sound in :func:`zcdp_delta_upper`, this one is near-optimal)."""
    cap = 1e300  # any alpha > 1 is sound: for a tiny rho the optimum is capped, not infinite
    lo, hi = 1.0 + 1e-12, min(cap, max(2.0, (eps + 1) / (2 * rho) + 2))

    def deriv(x: float) -> float:
        return (2 * x - 1) * rho - eps + math.log1p(-1 / x)

    while deriv(hi) < 0 and hi < cap:
        hi = min(cap, hi * 2)
    if deriv(lo) >= 0:
        return Fraction(lo)
    for _ in range(1100):  # [1, 1e300] halved down to the float spacing at a root >= 1: < log2(1e300) + 53 steps
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if deriv(mid) < 0 else (lo, mid)
    return Fraction(hi)


def zcdp_delta_upper(rho: float, eps: float, alpha: Fraction | None = None) -> tuple[Enclosure, Fraction]:
    r"""Certified upper bound of the :math:`\rho`-zCDP profile at ``eps`` [CKS20, Cor. 13]:
    :math:`\delta\le e^{(\alpha-1)(\alpha\rho-\varepsilon)+\alpha\log(1-1/\alpha)}/(\alpha-1)` at the rational
    order ``alpha`` (default :func:`cks_order`). Returns the enclosure of that bound (only its upper end bounds
    delta) and the order used."""
    r, e = check_nonnegative("rho", rho), check_finite_real("eps", eps)
    if r == 0:
        return Enclosure(0.0, 0.0, "exact (rho = 0)"), Fraction(2)
    al = alpha if alpha is not None else cks_order(r, max(e, 0.0))
    if not al > 1:
        raise InvalidArgument(f"alpha={al!r} must be > 1.")
    c = _ctx(PRECISIONS[0])
    a, rr, ee = _q(c, al), _q(c, r), _q(c, e)
    x = (a - 1) * (a * rr - ee) + a * c.log1p(-1 / a) - c.log(a - 1)  # log of the bound
    if _ends(x)[0] > 0:  # the bound exceeds 1 (for a huge rho its exponent leaves the exact range): delta <= 1
        return Enclosure(1.0, 1.0, f"trivial: the CKS bound at order alpha = {float(al)!r} exceeds 1"), al
    v = c.exp(x)
    return _enclosure(v, f"mpmath.iv, {PRECISIONS[0]} digits, order alpha = {float(al)!r}").clamp(0.0, math.inf), al


def tradeoff_profile_enclosure(alphas: Sequence[float], betas: Sequence[float], eps: float) -> Enclosure:
    r"""Certified enclosure of the privacy profile of a piecewise-linear tradeoff curve with vertices
    ``(alphas[j], betas[j])``: :math:`\delta(\varepsilon)=\max_j\,(1-\beta_j-e^{\varepsilon}\alpha_j)_+`
    [DRS22, Prop. 2.12] (the supremum of a linear function over each segment is at a vertex)."""
    if len(alphas) != len(betas) or not alphas:
        raise InvalidArgument("alphas and betas must be non-empty and of equal length.")
    c = _ctx(PRECISIONS[0])
    x = c.exp(_q(c, check_finite_real("eps", eps)))
    lo, hi = Fraction(0), Fraction(0)
    for a, b in zip(alphas, betas):
        vl, vh = _ends(1 - _q(c, b) - x * _q(c, a))
        lo, hi = max(lo, vl), max(hi, vh)
    return Enclosure(down_exact(lo), up_exact(hi), f"mpmath.iv at {len(alphas)} vertices").clamp()


def sqrt_lower(q: float | Fraction) -> float:
    """A float ``<= sqrt(q)`` (interval square root, lower end rounded down)."""
    c = _ctx(PRECISIONS[0])
    return down_exact(_ends(c.sqrt(_q(c, Fraction(check_nonnegative("q", float(q))))))[0])


def rdp_epsilon_upper(orders: Sequence[float], epsilons: Sequence[float], delta: float) -> Enclosure:
    r"""Certified upper bound on epsilon at ``delta`` from an RDP curve, best order [CKS20, Prop. 12]:
    :math:`\varepsilon(\alpha)+\frac{\log(1/\delta)+(\alpha-1)\log(1-1/\alpha)-\log\alpha}{\alpha-1}`.

    Only the ``upper`` end is a bound on epsilon (``lower`` is the same bound's lower enclosure)."""
    d = Fraction(check_finite_real("delta", delta))
    if not 0 < d < 1:
        raise InvalidArgument(f"delta={delta!r} must be in (0, 1).")
    c = _ctx(PRECISIONS[0])
    best: Enclosure | None = None
    for a_f, e_f in zip(orders, epsilons):
        if not a_f > 1:
            continue
        a = _q(c, a_f)
        v = _q(c, e_f) + (-c.log(_q(c, d)) + (a - 1) * c.log1p(-1 / a) - c.log(a)) / (a - 1)
        enc = _enclosure(v, f"mpmath.iv, order alpha = {a_f!r}")
        if best is None or enc.upper < best.upper:
            best = enc
    if best is None:
        raise InvalidArgument("orders must contain an order alpha > 1.")
    return best


__all__ = [
    "Enclosure",
    "PRECISIONS",
    "SERIES_SWITCH",
    "approx_dp_profile_enclosure",
    "cks_order",
    "erfc_enclosure",
    "erfc_iv",
    "gdp_delta_enclosure",
    "phi_iv",
    "rdp_epsilon_upper",
    "sqrt_lower",
    "tradeoff_profile_enclosure",
    "zcdp_delta_upper",
]
