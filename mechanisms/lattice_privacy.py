r"""Privacy numbers for the generalized Laplace / Gaussian lattice mechanisms (Dharangutte et al. 2023).

Conventions (``docs/reference/subspace-integer-postprocessing.md`` §3.1): the
guarantees hold on **equivalent** pairs :math:`x\equiv_{\mathcal A}x'` (same
invariants, so :math:`x-x'\in\Lambda`), in the *smooth* form where the loss
scales with the distance :math:`D=\|x-x'\|` in the norm of the guarantee;
:math:`\varepsilon` is "per unit of that norm". Two equivalent histograms that
differ by one person moving between two cells are at l1 distance 2 and l2
distance :math:`\sqrt2`.

Every function returns a plain float, rounded **up** (house style R6), since
each bounds a privacy loss.

References
----------
[DGGY23] Dharangutte, Gao, Gong, Yu, "Integer Subspace Differential Privacy",
AAAI-23, arXiv:2212.00936: Def 2, Thm 10, Def 13, Thm 14.
[CKS20] Canonne, Kamath, Steinke, "The Discrete Gaussian for Differential
Privacy", NeurIPS 2020, arXiv:2004.00010 (the Renyi-divergence argument).
"""

from __future__ import annotations

from fractions import Fraction
from typing import Literal

from semidp.accountant.core.arguments import check_in_interval, check_nonnegative, check_positive
from semidp.accountant.core.directed import MP, up, up_exact
from semidp.accountant.core.errors import InvalidArgument

__all__ = [
    "approximate_sampler_delta",
    "gaussian_zcdp_rho",
    "laplace_pair_epsilon",
    "per_person_distance",
    "per_person_epsilon",
]


def _norm(norm: str) -> Literal["l1", "l2"]:
    if norm == "l1":
        return "l1"
    if norm == "l2":
        return "l2"
    raise InvalidArgument(f"norm={norm!r} must be 'l1' or 'l2'.")


def laplace_pair_epsilon(epsilon: float, distance: float) -> float:
    r"""Privacy loss :math:`\varepsilon D` of the generalized Laplace mechanism on an equivalent pair [DGGY23, Thm. 10].

    With the exact target :math:`q_\varepsilon\propto e^{-\varepsilon\|z\|}` on the
    lattice, for :math:`x\equiv x'` at distance :math:`D=\|x-x'\|` (same norm as the
    target) and every event :math:`S`:
    :math:`\Pr[M(x)\in S]\le e^{\varepsilon D}\Pr[M(x')\in S]` (triangle
    inequality; equal normalisers because both outputs range over the same coset).

    Examples
    --------
    >>> laplace_pair_epsilon(0.25, 2)
    0.5
    """
    e = check_positive("epsilon", epsilon)
    dist = check_nonnegative("distance", distance)
    return up_exact(Fraction(e) * Fraction(dist))  # exact product, rounded up


def per_person_distance(norm: str) -> float:
    r"""Distance between equivalent histograms differing by one person moving cells: 2 (l1), :math:`\sqrt2` (l2), rounded up.

    Reference §3.1 implementer note ([DGGY23, Def. 2] measures neighbours in the norm).

    Examples
    --------
    >>> per_person_distance("l1"), per_person_distance("l2") >= 2 ** 0.5
    (2.0, True)
    """
    return 2.0 if _norm(norm) == "l1" else up(MP.sqrt(2))


def per_person_epsilon(epsilon: float, norm: str) -> float:
    r"""Per-person loss of the generalized Laplace mechanism: :math:`2\varepsilon` (l1) or :math:`\sqrt2\varepsilon` (l2).

    One person moving between two cells of an equivalent pair is at distance
    2 (l1) or :math:`\sqrt2` (l2), so [DGGY23, Thm. 10] charges
    :math:`\varepsilon\cdot` that distance (reference §3.1 implementer note).

    Examples
    --------
    >>> per_person_epsilon(0.25, "l1")
    0.5
    >>> 0.3535 < per_person_epsilon(0.25, "l2") < 0.3536
    True
    """
    e = check_positive("epsilon", epsilon)
    if _norm(norm) == "l1":
        return up_exact(Fraction(e) * 2)  # exact, rounded up
    return up(MP.mpf(e) * MP.sqrt(2))  # 50-digit value, rounded up


def approximate_sampler_delta(epsilon: float, distance: float, delta_tv: float) -> float:
    r"""The :math:`\delta`-term charged when the noise comes from a sampler within TV :math:`\delta'` of the target.

    .. math:: \delta = (1+e^{\varepsilon D})\,\delta'

    for an equivalent pair at distance :math:`D` (reference §3.5, [D]): with
    :math:`d_{TV}(q^{(t)},q)\le\delta'` and the exact mechanism's ratio bound
    :math:`e^{\varepsilon D}`,
    :math:`\Pr[x+z^{(t)}\in S]\le\Pr[x+z\in S]+\delta'\le e^{\varepsilon D}(\Pr[x'+z^{(t)}\in S]+\delta')+\delta'`.
    So the approximate release is :math:`(\varepsilon D,(1+e^{\varepsilon D})\delta')` on that
    pair. ``delta_tv`` must itself be an upper bound on the TV distance; a
    coupling estimate (:mod:`mechanisms.coupling`) is a Monte Carlo estimate, not a
    certificate (say so wherever this number is reported). For the per-person
    charge pass ``distance=per_person_distance(norm)``.

    Examples
    --------
    >>> round(approximate_sampler_delta(0.25, 2, 0.01), 6)
    0.026487
    """
    e = check_positive("epsilon", epsilon)
    dist = check_nonnegative("distance", distance)
    dtv = check_in_interval("delta_tv", delta_tv, 0.0, 1.0)
    return up((1 + MP.exp(MP.mpf(e) * MP.mpf(dist))) * MP.mpf(dtv))


def gaussian_zcdp_rho(sigma: float, distance: float) -> float:
    r""":math:`\rho=D^2/(2\sigma^2)`-zCDP of the generalized Gaussian on equivalent pairs at l2 distance :math:`D`.

    **Not the paper's statement.** [DGGY23, Thm. 14] calibrates
    :math:`\sigma^2=2c_{\mathcal A}\ln(1/\delta)/\varepsilon^2` with a constant
    :math:`c_{\mathcal A}` that is only in their appendix (not recovered). This is
    the reference's flagged alternative (§3.4, [D]): equivalent :math:`x,x'` share
    the coset, and for any lattice
    :math:`\sum_{z\in\Lambda}e^{-\|z-c\|^2/2\sigma^2}\le\sum_{z\in\Lambda}e^{-\|z\|^2/2\sigma^2}`
    (Poisson summation), so the CKS20 argument gives Renyi divergence
    :math:`D_\alpha\le\alpha D^2/(2\sigma^2)`. It is a zCDP statement on
    :math:`\equiv_{\mathcal A}` (convert with the usual zCDP conversions), valid for the
    *exact* lattice Gaussian; an MCMC sampler adds the TV term of
    :func:`approximate_sampler_delta` after conversion to :math:`(\varepsilon,\delta)`.
    For one person moving between cells, :math:`D=\sqrt2` gives :math:`\rho=1/\sigma^2`.

    Examples
    --------
    >>> gaussian_zcdp_rho(2.0, 2.0)
    0.5
    """
    s = check_positive("sigma", sigma)
    dist = check_nonnegative("distance", distance)
    return up_exact(Fraction(dist) ** 2 / (2 * Fraction(s) ** 2))  # exact, rounded up
