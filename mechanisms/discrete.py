r"""Exact samplers on the integers (Canonne, Kamath & Steinke 2020, Algorithms 1-3).

All samplers here use only exact integer / rational arithmetic
(:class:`fractions.Fraction`) and uniform integer draws from
``rng.integers``; no floating point enters a draw, so the output law is
*exactly* the stated one (given an ideal uniform integer source).

* :func:`bernoulli_exp` -- :math:`\mathrm{Bern}(e^{-\gamma})`, rational
  :math:`\gamma\ge 0` (CKS Alg. 1).
* :func:`discrete_laplace` -- :math:`\mathrm{Lap}_{\mathbb Z}(t)`,
  :math:`\Pr[x]\propto e^{-|x|/t}`, rational :math:`t>0` (CKS Alg. 2).
* :func:`discrete_gaussian` -- :math:`N_{\mathbb Z}(0,\sigma^2)`,
  :math:`\Pr[x]\propto e^{-x^2/(2\sigma^2)}`, rational :math:`\sigma^2>0`,
  by rejection from :math:`\mathrm{Lap}_{\mathbb Z}(\lfloor\sigma\rfloor+1)`
  (CKS Alg. 3).
* :func:`double_geometric` -- :math:`\mathrm{DG}(a)`,
  :math:`\Pr[x]=\frac{1-a}{1+a}a^{|x|}`, rational :math:`a\in(0,1)`, as the
  difference of two i.i.d. geometric variables (reference
  ``docs/reference/subspace-integer-postprocessing.md`` §3.5). :math:`\mathrm{DG}(e^{-1/t})`
  is :math:`\mathrm{Lap}_{\mathbb Z}(t)`; use :func:`discrete_laplace` when the
  scale, not the ratio, is rational.
* :func:`discrete_laplace_array`, :func:`discrete_gaussian_array` -- the same
  exact algorithms vectorised with numpy (int64 arithmetic, with bounds checked
  and a per-element exact fallback where int64 could overflow).

Every sampler takes a keyword-only, required ``rng: numpy.random.Generator``
(house style R4); there is no global RNG.

Samplers here are for research and auditing: they are **not** hardened against
timing side channels (the number of loop iterations, hence the running time,
depends on the value drawn; Jin et al. 2022, "Are we there yet? Timing side
channel attacks on DP libraries"), nor is numpy's PCG64 a cryptographic source.

References
----------
[CKS20] C. L. Canonne, G. Kamath, T. Steinke, "The Discrete Gaussian for
Differential Privacy", NeurIPS 2020, arXiv:2004.00010, Algorithms 1-3.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable
from fractions import Fraction

import numpy as np
from numpy.typing import NDArray

from semidp.accountant.core.arguments import check_rng
from semidp.accountant.core.errors import InvalidArgument

__all__ = [
    "bernoulli_exp",
    "discrete_gaussian",
    "discrete_gaussian_array",
    "discrete_gaussian_normaliser",
    "discrete_gaussian_pmf",
    "discrete_gaussian_variance",
    "discrete_laplace",
    "discrete_laplace_array",
    "discrete_laplace_pmf",
    "double_geometric",
    "double_geometric_pmf",
]

_INT63 = 2**62  # safe bound for one rng.integers draw and int64 products

RationalLike = int | Fraction
_Trials = Callable[[int, np.random.Generator], NDArray[np.int64]]


# --------------------------------------------------------------------------- checks


def _rational(name: str, value: object, *, positive: bool) -> Fraction:
    """Return ``value`` as a Fraction; only ints and Fractions are accepted (exactness)."""
    if isinstance(value, bool) or not isinstance(value, (numbers.Integral, Fraction)):
        raise InvalidArgument(
            f"{name}={value!r} must be an int or fractions.Fraction (exact rational); "
            f"got {type(value).__name__}. Use e.g. Fraction('{value}') for a decimal."
        )
    x = Fraction(int(value)) if isinstance(value, numbers.Integral) else value
    if positive and not x > 0:
        raise InvalidArgument(f"{name}={value!r} must be > 0.")
    if not positive and not x >= 0:
        raise InvalidArgument(f"{name}={value!r} must be >= 0.")
    return x


def _check_size(name: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or int(value) < 0:
        raise InvalidArgument(f"{name}={value!r} must be an integer >= 0.")
    return int(value)


# --------------------------------------------------------------------------- scalar core


def _uniform(n: int, rng: np.random.Generator) -> int:
    """Uniform integer in ``{0, ..., n-1}`` (exact, also for ``n`` beyond int64)."""
    if n <= _INT63:
        return int(rng.integers(0, n))
    bits = n.bit_length()
    while True:  # rejection from [0, 2**bits)
        x = 0
        remaining = bits
        while remaining > 0:
            chunk = min(remaining, 62)
            x = (x << chunk) | int(rng.integers(0, 1 << chunk))
            remaining -= chunk
        if x < n:
            return x


def _bernoulli(p: Fraction, rng: np.random.Generator) -> bool:
    """Exact Bern(p), ``0 <= p <= 1`` rational."""
    return _uniform(p.denominator, rng) < p.numerator


def _bernoulli_exp_le1(gamma: Fraction, rng: np.random.Generator) -> bool:
    """CKS Alg. 1 for ``0 <= gamma <= 1``: K <- 1; while Bern(gamma/K): K += 1; return K odd."""
    k = 1
    num, den = gamma.numerator, gamma.denominator
    while _uniform(den * k, rng) < num:
        k += 1
    return k % 2 == 1


def bernoulli_exp_unchecked(gamma: Fraction, rng: np.random.Generator) -> bool:
    """Bern(exp(-gamma)) for a Fraction ``gamma >= 0`` [CKS20, Alg. 1], without argument checks (inner loops)."""
    whole = gamma.numerator // gamma.denominator
    one = Fraction(1)
    for _ in range(whole):
        if not _bernoulli_exp_le1(one, rng):
            return False
    return _bernoulli_exp_le1(gamma - whole, rng)


def _geometric_exp1(rng: np.random.Generator) -> int:
    """Number of successes before the first failure of i.i.d. Bern(e^-1)."""
    v = 0
    one = Fraction(1)
    while _bernoulli_exp_le1(one, rng):
        v += 1
    return v


def _laplace(scale: Fraction, rng: np.random.Generator) -> int:
    """CKS Alg. 2 with scale t/s (t = numerator, s = denominator)."""
    t, s = scale.numerator, scale.denominator
    while True:
        u = _uniform(t, rng)
        if not bernoulli_exp_unchecked(Fraction(u, t), rng):
            continue
        v = _geometric_exp1(rng)
        y = (u + t * v) // s
        b = _uniform(2, rng)
        if b == 1 and y == 0:
            continue
        return -y if b == 1 else y


def _floor_sqrt(x: Fraction) -> int:
    """Exact floor(sqrt(x)) for rational x >= 0."""
    return math.isqrt(x.numerator // x.denominator)


def _gaussian(sigma2: Fraction, rng: np.random.Generator) -> int:
    """CKS Alg. 3: rejection from Lap_Z(floor(sigma)+1)."""
    t = _floor_sqrt(sigma2) + 1
    lap_scale = Fraction(t)
    shift = sigma2 / t
    two_s2 = 2 * sigma2
    while True:
        y = _laplace(lap_scale, rng)
        d = abs(y) - shift
        if bernoulli_exp_unchecked(d * d / two_s2, rng):
            return y


# --------------------------------------------------------------------------- public scalar API


def bernoulli_exp(gamma: RationalLike, *, rng: np.random.Generator) -> bool:
    r"""Draw :math:`\mathrm{Bern}(e^{-\gamma})` exactly (CKS Alg. 1), rational ``gamma >= 0``.

    Not hardened against timing side channels (research / auditing use).
    """
    g = _rational("gamma", gamma, positive=False)
    return bernoulli_exp_unchecked(g, check_rng(rng))


def discrete_laplace(scale: RationalLike, *, rng: np.random.Generator) -> int:
    r"""One exact draw of :math:`\mathrm{Lap}_{\mathbb Z}(t)`, :math:`\Pr[x]\propto e^{-|x|/t}`.

    ``scale`` is :math:`t`, a positive int or Fraction (CKS Alg. 2). Not
    hardened against timing side channels (research / auditing use).
    """
    t = _rational("scale", scale, positive=True)
    return _laplace(t, check_rng(rng))


def discrete_gaussian(sigma2: RationalLike, *, rng: np.random.Generator) -> int:
    r"""One exact draw of :math:`N_{\mathbb Z}(0,\sigma^2)`, :math:`\Pr[x]\propto e^{-x^2/(2\sigma^2)}`.

    ``sigma2`` is the (rational, positive) parameter :math:`\sigma^2`; the
    variance of the output is slightly below it (reference T-S1). CKS Alg. 3.
    Not hardened against timing side channels (research / auditing use).
    """
    s2 = _rational("sigma2", sigma2, positive=True)
    return _gaussian(s2, check_rng(rng))


def double_geometric(ratio: RationalLike, *, rng: np.random.Generator) -> int:
    r"""One exact draw of :math:`\mathrm{DG}(a)`, :math:`\Pr[x]=\frac{1-a}{1+a}a^{|x|}`.

    ``ratio`` is :math:`a`, rational in ``(0, 1)``. Sampled as :math:`G_1-G_2`
    with :math:`G_i` i.i.d. geometric, :math:`\Pr[g]=(1-a)a^g`; expected cost
    :math:`O(1/(1-a))` uniform draws. Not hardened against timing side channels.
    """
    a = _rational("ratio", ratio, positive=True)
    if not a < 1:
        raise InvalidArgument(f"ratio={ratio!r} must be in (0, 1).")
    r = check_rng(rng)

    def geometric() -> int:
        g = 0
        while _bernoulli(a, r):
            g += 1
        return g

    return geometric() - geometric()


# --------------------------------------------------------------------------- exact pmfs (float, for tests)


def discrete_laplace_pmf(x: NDArray[np.int64], scale: RationalLike) -> NDArray[np.float64]:
    """Float pmf of Lap_Z(scale) at integer points ``x`` (for tests and audits)."""
    t = float(_rational("scale", scale, positive=True))
    a = math.exp(-1.0 / t)
    return np.asarray((1.0 - a) / (1.0 + a) * np.power(a, np.abs(x)), dtype=np.float64)


def double_geometric_pmf(x: NDArray[np.int64], ratio: RationalLike) -> NDArray[np.float64]:
    """Float pmf of DG(ratio) at integer points ``x``."""
    a = float(_rational("ratio", ratio, positive=True))
    if not a < 1:
        raise InvalidArgument(f"ratio={ratio!r} must be in (0, 1).")
    return np.asarray((1.0 - a) / (1.0 + a) * np.power(a, np.abs(x)), dtype=np.float64)


def discrete_gaussian_normaliser(sigma2: RationalLike) -> float:
    r""":math:`\sum_{x\in\mathbb Z}e^{-x^2/(2\sigma^2)}` (float; truncated where terms < 1e-300)."""
    s2 = float(_rational("sigma2", sigma2, positive=True))
    m = math.ceil(math.sqrt(2.0 * s2 * 700.0)) + 1
    xs = np.arange(-m, m + 1, dtype=np.float64)
    return float(np.sum(np.exp(-xs * xs / (2.0 * s2))))


def discrete_gaussian_variance(sigma2: RationalLike) -> float:
    r"""Exact-series variance :math:`\sum_x x^2e^{-x^2/2\sigma^2}/\sum_x e^{-x^2/2\sigma^2}` (float)."""
    s2 = float(_rational("sigma2", sigma2, positive=True))
    m = math.ceil(math.sqrt(2.0 * s2 * 700.0)) + 1
    xs = np.arange(-m, m + 1, dtype=np.float64)
    w = np.exp(-xs * xs / (2.0 * s2))
    return float(np.sum(xs * xs * w) / np.sum(w))


def discrete_gaussian_pmf(x: NDArray[np.int64], sigma2: RationalLike) -> NDArray[np.float64]:
    """Float pmf of N_Z(0, sigma2) at integer points ``x``."""
    s2 = float(_rational("sigma2", sigma2, positive=True))
    xf = np.asarray(x, dtype=np.float64)
    return np.asarray(np.exp(-xf * xf / (2.0 * s2)) / discrete_gaussian_normaliser(sigma2))


# --------------------------------------------------------------------------- vectorised exact


def _vec_bern_exp1(n: int, rng: np.random.Generator) -> NDArray[np.bool_]:
    """``n`` i.i.d. Bern(e^-1): Alg. 1 with gamma = 1 (Bern(1/K) = [U{0..K-1} == 0])."""
    k = np.ones(n, dtype=np.int64)
    active = np.arange(n)
    while active.size:
        hit = rng.integers(0, k[active]) == 0
        active = active[hit]
        k[active] += 1
    return np.asarray(k % 2 == 1)


def _vec_bern_exp_le1(num: NDArray[np.int64], den: NDArray[np.int64], rng: np.random.Generator) -> NDArray[np.bool_]:
    """Bern(exp(-num/den)), ``0 <= num <= den < 2**62``, element-wise.

    Bern(gamma/K) is drawn as Bern(gamma) AND Bern(1/K) (independent), so no
    product den*K is formed.
    """
    n = num.shape[0]
    k = np.ones(n, dtype=np.int64)
    active = np.arange(n)
    while active.size:
        hit = (rng.integers(0, den[active]) < num[active]) & (rng.integers(0, k[active]) == 0)
        active = active[hit]
        k[active] += 1
    return np.asarray(k % 2 == 1)


def bernoulli_exp_vectorised(
    num: NDArray[np.int64], den: NDArray[np.int64], rng: np.random.Generator
) -> NDArray[np.bool_]:
    """Bern(exp(-num/den)) element-wise, ``num >= 0``, ``0 < den < 2**62`` [CKS20, Alg. 1], vectorised."""
    whole = num // den
    frac = num - whole * den
    alive = np.ones(num.shape[0], dtype=np.bool_)
    idx = np.flatnonzero(whole > 0)
    rem = whole[idx]
    while idx.size:
        ok = _vec_bern_exp1(idx.size, rng)
        alive[idx[~ok]] = False
        rem = rem - 1
        keep = ok & (rem > 0)
        idx, rem = idx[keep], rem[keep]
    out = np.zeros(num.shape[0], dtype=np.bool_)
    live = np.flatnonzero(alive)
    out[live] = _vec_bern_exp_le1(frac[live], den[live], rng)
    return out


def _vec_geometric_exp1(n: int, rng: np.random.Generator) -> NDArray[np.int64]:
    v = np.zeros(n, dtype=np.int64)
    active = np.arange(n)
    while active.size:
        ok = _vec_bern_exp1(active.size, rng)
        active = active[ok]
        v[active] += 1
    return v


def _vec_laplace_trials(t: int, s: int, m: int, rng: np.random.Generator) -> NDArray[np.int64]:
    """``m`` independent trials of CKS Alg. 2's loop body; accepted values only."""
    u = rng.integers(0, t, size=m, dtype=np.int64)
    acc = bernoulli_exp_vectorised(u, np.full(m, t, dtype=np.int64), rng)
    u = u[acc]
    v = _vec_geometric_exp1(u.size, rng)
    if v.size and int(v.max()) > (_INT63 - t) // t:
        raise InvalidArgument(f"scale={t}/{s} too large for the int64 vectorised sampler.")
    y = (u + t * v) // s
    b = rng.integers(0, 2, size=u.size, dtype=np.int64)
    keep = ~((b == 1) & (y == 0))
    return np.asarray(np.where(b[keep] == 1, -y[keep], y[keep]), dtype=np.int64)


def _fill(trials: _Trials, size: int, batch_size: int, rng: np.random.Generator) -> NDArray[np.int64]:
    """Run i.i.d. rejection trials in batches and keep the first ``size`` acceptances."""
    out = np.empty(size, dtype=np.int64)
    filled = 0
    while filled < size:
        got = trials(batch_size, rng)
        take = min(got.size, size - filled)
        out[filled : filled + take] = got[:take]
        filled += take
    return out


def _check_batch(batch_size: object) -> int:
    if isinstance(batch_size, bool) or not isinstance(batch_size, numbers.Integral) or int(batch_size) < 1:
        raise InvalidArgument(f"batch_size={batch_size!r} must be an integer >= 1.")
    return int(batch_size)


def discrete_laplace_array(
    scale: RationalLike, size: int, *, rng: np.random.Generator, batch_size: int = 65536
) -> NDArray[np.int64]:
    r"""``size`` i.i.d. exact draws of :math:`\mathrm{Lap}_{\mathbb Z}(t)`, vectorised.

    Same law as :func:`discrete_laplace` (CKS Alg. 2): ``batch_size`` independent
    trials of the rejection loop run at once and the first ``size`` accepted
    values are returned. Requires the numerator and denominator of ``scale``
    below ``2**31``. Not hardened against timing side channels.
    """
    t = _rational("scale", scale, positive=True)
    n = _check_size("size", size)
    b = _check_batch(batch_size)
    r = check_rng(rng)
    if t.numerator >= 2**31 or t.denominator >= 2**31:
        raise InvalidArgument(
            f"scale={scale!r}: numerator and denominator must be < 2**31 for the vectorised "
            "sampler; use discrete_laplace."
        )
    tn, td = t.numerator, t.denominator
    return _fill(lambda m, g: _vec_laplace_trials(tn, td, m, g), n, b, r)


def discrete_gaussian_array(
    sigma2: RationalLike, size: int, *, rng: np.random.Generator, batch_size: int = 65536
) -> NDArray[np.int64]:
    r"""``size`` i.i.d. exact draws of :math:`N_{\mathbb Z}(0,\sigma^2)`, vectorised.

    Same law as :func:`discrete_gaussian` (CKS Alg. 3). With
    :math:`\sigma^2=p/q`, :math:`t=\lfloor\sigma\rfloor+1`, the acceptance
    exponent is :math:`(qt|Y|-p)^2/(2pqt^2)`, computed in int64 where it
    fits and with exact Python integers for the (rare) elements where it does
    not. Requires :math:`2pqt^2<2^{62}`. Not hardened against timing side
    channels.
    """
    s2 = _rational("sigma2", sigma2, positive=True)
    n = _check_size("size", size)
    b = _check_batch(batch_size)
    r = check_rng(rng)
    p, q = s2.numerator, s2.denominator
    t = _floor_sqrt(s2) + 1
    den = 2 * p * q * t * t
    if den >= _INT63:
        raise InvalidArgument(
            f"sigma2={sigma2!r}: 2*p*q*t^2 = {den} must be < 2**62 for the vectorised sampler; use discrete_gaussian."
        )
    qt = q * t
    ylim = (math.isqrt(_INT63 - 1) + p) // qt  # |Y| <= ylim => (qt|Y|-p)^2 < 2**62

    def trials(m: int, g: np.random.Generator) -> NDArray[np.int64]:
        y = _vec_laplace_trials(t, 1, m, g)
        ay = np.abs(y)
        small = ay <= ylim
        acc = np.zeros(y.size, dtype=np.bool_)
        ys = ay[small]
        d = ys * qt - p
        acc[small] = bernoulli_exp_vectorised(d * d, np.full(ys.size, den, dtype=np.int64), g)
        for i in np.flatnonzero(~small):  # exact fallback, vanishingly rare
            dd = int(ay[i]) * qt - p
            acc[i] = bernoulli_exp_unchecked(Fraction(dd * dd, den), g)
        return np.asarray(y[acc], dtype=np.int64)

    return _fill(trials, n, b, r)
