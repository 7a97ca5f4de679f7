r"""K-norm mechanisms on the span of a sensitivity space ([CA24, Alg. 2] and Alg. 3).

:class:`KNormMechanism` releases :math:`x+QY` with

.. math:: Y = R\,U,\qquad R\sim\mathrm{Gamma}(\text{shape}=s+1,\ \text{rate}=\varepsilon),
          \qquad U\sim\mathrm{Unif}(K'),

where :math:`K'=Q^\top\operatorname{conv}(S)` in the coordinates of an
orthonormal basis :math:`Q` of :math:`V=\operatorname{span}(S)`,
:math:`s=\dim V` (Alg. 2; Prop. 7 with :math:`d` replaced by :math:`s`). The
density of :math:`Y` is :math:`\propto\exp(-\varepsilon\|y\|_{K'})`; shape
:math:`s` (as in the authors' R code, ``docs/reference/semi-dp.md`` §10 item 2) gives
a density :math:`\propto E_1(\varepsilon\|y\|)`, unbounded at 0, which is not
:math:`\varepsilon`-DP for any :math:`\varepsilon`. The noise lies in
:math:`V\subseteq\ker A`, so every draw keeps the invariant :math:`Ax` (to float
rounding). The mechanism is :math:`\varepsilon`-DP on the relation whose
sensitivity space is :math:`S` (Thm. 31: :math:`\Delta_{K'}=1` by Prop. 30).

Uniform sampling on :math:`K'` is **exact**: the ball carries a fan
triangulation (qhull's triangulated facets coned from the origin); a simplex is
chosen with probability proportional to its volume and a point drawn inside it
with Dirichlet(1, ..., 1) weights (normalised exponentials). For sizes where
the hull is out of reach, :func:`accountant.geometry.containing_ball.containing_ball` gives an
exact but **non-optimal** ball (cube or Euclidean ball containing conv(S)); the
mechanism then says so in :attr:`KNormMechanism.optimal` and the ball's label.
For a :math:`2\times c` table under both one-way margins,
:class:`~accountant.geometry.root_polytope.RootPolytopeBall` is the optimal ball in
closed form (type-A root polytope): exact sampler, no hull, any :math:`c`.

:class:`CubeRejectionSampler` is the paper's Alg. 3 (uniform proposals from a
basis cube :math:`B[-1,1]^s`, accepted if inside conv(S)), kept as a baseline:
its containment precondition is checked exactly at construction and it reports
its acceptance rate.

Samplers here are for research and auditing: they are **not** hardened against
floating-point side channels ([Mir12]; [HB21]). The privacy statement is for the
ideal real-valued mechanism.

References
----------
[CA24] Cho & Awan, arXiv:2410.17468v1, Prop. 7, Alg. 2, Thm. 31, Alg. 3.
[HT10] Hardt & Talwar, "On the geometry of differential privacy", STOC 2010.
[AS21] Awan & Slavković, "Structure and sensitivity in differential privacy:
comparing K-norm mechanisms", JASA 2021.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.optimize import linprog
from scipy.stats import norm

from semidp.accountant.core.arguments import check_int, check_positive
from semidp.accountant.core.errors import InvalidArgument, SearchTooLarge, VerificationError
from semidp.accountant.core.outcome import Bounds
from semidp.accountant.geometry.containing_ball import ContainingBall
from semidp.accountant.geometry.knorm import KNormBall
from semidp.accountant.geometry.knorm_certificates import certified_span
from semidp.accountant.geometry.root_polytope import RootPolytopeBall
from semidp.accountant.guarantees.definitions import PureDP
from semidp.accountant.guarantees.relations import Relation, check_same_relation
from semidp.accountant.sensitivity.spaces import SensitivitySpace

FloatArray = NDArray[np.float64]
Ball = KNormBall | ContainingBall | RootPolytopeBall

_CHUNK = 1 << 16


def uniform_in_ball(ball: Ball, *, rng: np.random.Generator, size: int) -> FloatArray:
    r"""``size`` exact uniform draws from the ball (rows, in the ball's coordinates).

    * :class:`~accountant.geometry.knorm.KNormBall`: a fan simplex
      :math:`\operatorname{conv}(0,w_1,\dots,w_s)` with probability
      :math:`\propto` volume :math:`\times` multiplicity, then
      :math:`\sum_k\lambda_kw_k` with
      :math:`\lambda=(E_1,\dots,E_s)/\sum_{k=0}^sE_k`, :math:`E_k` i.i.d.
      Exp(1) (uniform on the simplex). If the ball was built up to a symmetry
      group :math:`G`, a uniformly random :math:`g\in G` is then applied: the
      representative cones' images under :math:`G` tile :math:`K`, each facet
      of an orbit :math:`O` being hit :math:`|G|/|O|` times, so the result is
      uniform on :math:`K`.
    * :class:`~accountant.geometry.containing_ball.ContainingBall`: :math:`Tz` with :math:`z`
      uniform on the cube or the Euclidean unit ball.
    * :class:`~accountant.geometry.root_polytope.RootPolytopeBall`: its closed-form
      cone decomposition (:meth:`~accountant.geometry.root_polytope.RootPolytopeBall.sample_uniform`).

    Examples
    --------
    >>> from semidp.accountant.geometry.knorm import KNormBall
    >>> from semidp.accountant.sensitivity.spaces import table_space
    >>> k = KNormBall.from_space(table_space(3, 3))
    >>> u = uniform_in_ball(k, rng=np.random.default_rng(0), size=1000)
    >>> u.shape, bool(k.contains(u).all())
    ((1000, 4), True)
    """
    check_int("size", size, minimum=0)
    s = ball.dimension
    out = np.empty((size, s))
    for start in range(0, size, _CHUNK):
        m = min(_CHUNK, size - start)
        out[start : start + m] = _uniform_chunk(ball, rng, m)
    return out


def _uniform_chunk(ball: Ball, rng: np.random.Generator, m: int) -> FloatArray:
    s = ball.dimension
    if isinstance(ball, RootPolytopeBall):
        return ball.sample_uniform(rng=rng, size=m)
    if isinstance(ball, KNormBall):
        idx = np.searchsorted(ball.fan_cdf, rng.random(m) * ball.fan_cdf[-1], side="right")
        np.minimum(idx, len(ball.fan_cdf) - 1, out=idx)
        e = rng.standard_exponential((m, s + 1))
        lam = e[:, 1:] / e.sum(axis=1, keepdims=True)
        w = ball.fan_points[ball.fan[idx]]  # (m, s, s): rows are simplex vertices
        u = np.matmul(lam[:, None, :], w)[:, 0, :]
        if ball.symmetry is not None:  # spread over the orbit: uniform group element
            u = ball.symmetry.apply_random(u @ ball.basis.T, rng) @ ball.basis
        return np.asarray(u, dtype=np.float64)
    if ball.kind == "l2-ball":
        g = rng.standard_normal((m, s))
        r = rng.random(m) ** (1.0 / s)
        z = g * (r / np.linalg.norm(g, axis=1))[:, None]
    else:
        z = rng.uniform(-1.0, 1.0, (m, s))
    return np.asarray(z @ ball.transform.T, dtype=np.float64)


@dataclass(frozen=True, slots=True)
class KNormMechanism:
    r"""The K-norm mechanism for a sensitivity space of rank :math:`s` [CA24, Alg. 2].

    With a :class:`~accountant.geometry.knorm.KNormBall` or a
    :class:`~accountant.geometry.root_polytope.RootPolytopeBall` (closed form:
    type-A root polytope, :math:`2\times c` tables) this is the optimal K-norm
    mechanism (Thm. 31); with a :class:`~accountant.geometry.containing_ball.ContainingBall` it is
    an exact, **non-optimal** K-norm mechanism (still :math:`\varepsilon`-DP,
    more noise; see the ball's ``loss``).

    Examples
    --------
    >>> from semidp.accountant.geometry.knorm import KNormBall
    >>> from semidp.accountant.sensitivity.spaces import table_space
    >>> m = KNormMechanism(KNormBall.from_space(table_space(2, 2)), epsilon=1.0)
    >>> x = np.array([[3.0, 1.0], [2.0, 4.0]])
    >>> y = m.sample(x, rng=np.random.default_rng(1))
    >>> np.allclose(y.sum(axis=0), x.sum(axis=0)) and np.allclose(y.sum(axis=1), x.sum(axis=1))
    True
    """

    ball: Ball
    """Unit ball of the norm (contains Q^T S; Delta_K <= 1)."""
    epsilon: float
    """Privacy parameter, the Gamma rate (> 0)."""

    def __post_init__(self) -> None:
        check_positive("epsilon", self.epsilon)
        if isinstance(self.ball, ContainingBall) and not self.ball.sensitivity <= 1.0:
            raise VerificationError(f"containing ball has sensitivity {self.ball.sensitivity!r} > 1.")

    @property
    def optimal(self) -> bool:
        """True for the optimal ball conv(S) (hull or closed form); False for a containing (fallback) ball."""
        return isinstance(self.ball, (KNormBall, RootPolytopeBall))

    @property
    def dimension(self) -> int:
        """:math:`s`, the dimension of the noise."""
        return self.ball.dimension

    def privacy_map(self, relation: Relation) -> PureDP:
        r""":math:`\varepsilon`-DP on ``relation``, which must be the one the ball's space was built for.

        Raises
        ------
        InvalidArgument
            The ball records no relation.
        RelationMismatch
            ``relation`` is not the ball's relation (the sensitivity space would differ).
        """
        if self.ball.relation is None:
            raise InvalidArgument(
                "The ball records no relation: build it with relation=... (the relation on which its "
                "sensitivity space was computed) before asking for a privacy map."
            )
        check_same_relation(self.ball.relation, relation)
        return PureDP(self.epsilon, relation)  # Delta_K = 1 exactly (Prop. 30, Thm. 31)

    def check(self, relation: Relation, target: PureDP) -> bool:
        """True if the mechanism's guarantee implies ``target``."""
        return self.privacy_map(relation).dominates(target)

    def sample_coordinates(self, *, rng: np.random.Generator, size: int) -> FloatArray:
        r"""``size`` draws of :math:`Y=RU` in the ball's coordinates, :math:`R\sim\mathrm{Gamma}(s+1,\varepsilon)`.

        The density of :math:`Y` is :math:`\propto e^{-\varepsilon\|y\|_K}`, so
        :math:`\|Y\|_K\sim\mathrm{Gamma}(s,\varepsilon)` (shape :math:`s`, not
        :math:`s+1`: :math:`\|U\|_K\sim\mathrm{Beta}(s,1)` and
        :math:`\mathrm{Gamma}(s+1)\cdot\mathrm{Beta}(s,1)=\mathrm{Gamma}(s)`), and
        :math:`Y/\|Y\|_K` follows the cone measure of :math:`\partial K`
        (Prop. 7's equivalent form).
        """
        s = self.ball.dimension
        u = uniform_in_ball(self.ball, rng=rng, size=size)
        r = rng.gamma(shape=s + 1, scale=1.0 / self.epsilon, size=size)  # shape s + 1 [CA24, Prop. 7]
        return np.asarray(r[:, None] * u, dtype=np.float64)

    def sample(self, value: ArrayLike, *, rng: np.random.Generator, size: int | None = None) -> FloatArray:
        """Release ``value + Q Y`` (same shape as ``value``; ``size`` draws stack along a new first axis).

        ``value`` has ``d`` entries (any shape, flattened row-major, the order
        used to build the sensitivity space).
        """
        v = np.asarray(value, dtype=np.float64)
        d = self.ball.ambient_dimension
        if v.size != d:
            raise InvalidArgument(f"value has {v.size} entries; the sensitivity space has dimension {d}.")
        n = 1 if size is None else check_int("size", size, minimum=0)
        noise = self.sample_coordinates(rng=rng, size=n) @ self.ball.basis.T
        out = v.reshape(1, d) + noise
        return out.reshape(v.shape) if size is None else out.reshape((n, *v.shape))

    def expected_l2_norm_mc(self, *, rng: np.random.Generator, draws: int = 100_000, level: float = 0.999) -> Bounds:
        r"""Monte Carlo :math:`\mathbb E\|QY\|_2=\frac{s+1}{\varepsilon}\mathbb E\|U\|_2` with a normal CI.

        A statistical interval (not certified): ``lower``/``upper`` are the
        two-sided ``level`` confidence limits for the mean of :math:`\|U\|_2`.
        """
        check_int("draws", draws, minimum=2)
        nu = np.linalg.norm(uniform_in_ball(self.ball, rng=rng, size=draws), axis=1)
        c = (self.ball.dimension + 1) / self.epsilon
        half = float(norm.ppf(0.5 + level / 2)) * float(nu.std(ddof=1)) / math.sqrt(draws)
        m = float(nu.mean())
        return Bounds(c * (m - half), c * m, c * (m + half))


@dataclass(frozen=True, slots=True)
class RejectionDraw:
    """Accepted uniform points and how many cube proposals it took."""

    points: FloatArray
    """``(n, s)`` points uniform on conv(S), in the orthonormal coordinates."""
    proposals: int
    """Proposals drawn up to the last accepted point used."""

    @property
    def acceptance_rate(self) -> float:
        """``n / proposals``."""
        return self.points.shape[0] / self.proposals if self.proposals else float("nan")


@dataclass(frozen=True, eq=False)
class CubeRejectionSampler:
    r"""[CA24, Alg. 3]: K-norm noise by rejection from the basis cube :math:`B[-1,1]^s` (baseline).

    Proposals :math:`w=Bz`, :math:`z\sim\mathrm{Unif}[-1,1]^s`, are accepted
    when :math:`w\in\operatorname{conv}(S)`; accepted points are uniform on
    conv(S) **only if** :math:`\operatorname{conv}(S)\subseteq B[-1,1]^s`, i.e.
    every element of :math:`S` has basis coordinates in :math:`[-1,1]`
    (reference §10 item 5). That is checked in exact arithmetic at
    construction. Membership uses the facets of ``ball`` when given, otherwise
    one LP per proposal (as in the paper; HiGHS, any non-optimal status raises).
    The Gamma shape is :math:`s+1`.

    Examples
    --------
    >>> from semidp.accountant.geometry.knorm import KNormBall
    >>> from semidp.accountant.sensitivity.spaces import table_space
    >>> sp = table_space(3, 3, paper_exact=True)
    >>> B = np.array([[1, -1, 0, -1, 1, 0, 0, 0, 0], [0, 1, -1, 0, -1, 1, 0, 0, 0],
    ...               [0, 0, 0, 1, -1, 0, -1, 1, 0], [0, 0, 0, 0, 1, -1, 0, -1, 1]]).T
    >>> c = CubeRejectionSampler(sp, B, epsilon=1.0, ball=KNormBall.from_space(sp))
    >>> round(c.expected_acceptance, 6)                    # 24.75 / 144 = 11/64
    0.171875
    """

    space: SensitivitySpace
    """The sensitivity space S."""
    cube_basis: NDArray[np.int64]
    """``(d, s)`` integer basis B of span(S) (columns)."""
    epsilon: float
    """Privacy parameter (> 0)."""
    ball: KNormBall | None = None
    """The hull of S, for membership by facets (else one LP per proposal)."""
    max_proposals: int = 10**9
    """Refuse (SearchTooLarge) beyond this many proposals in one call."""
    basis: NDArray[np.float64] = field(init=False)
    """``(d, s)`` orthonormal coordinates used for the output (the ball's, if given)."""
    transform: NDArray[np.float64] = field(init=False)
    """``Q^T B``: proposals are ``transform @ z``."""
    points: NDArray[np.float64] = field(init=False)
    """``Q^T`` of the nonzero elements of S (LP membership)."""

    def __post_init__(self) -> None:
        check_positive("epsilon", self.epsilon)
        cert = certified_span(self.space, basis=self.cube_basis)
        worst = cert.max_coordinate
        if worst > 1:
            j = int(np.argmax(np.abs(cert.numerators).max(axis=1) / cert.denominators))
            raise InvalidArgument(
                f"Alg. 3 precondition fails: element {cert.nonzero[j].tolist()} of S has basis coordinates "
                f"{[str(c) for c in cert.coordinates(j)]} outside [-1, 1], so conv(S) is not inside the cube "
                "and the rejection sampler would be biased. Use a basis from "
                "accountant.geometry.knorm.certified_span(space).basis."
            )
        if self.ball is not None and self.ball.space.vectors != self.space.vectors:
            raise InvalidArgument("ball was built from a different sensitivity space.")
        q = self.ball.basis if self.ball is not None else cert.orthonormal
        object.__setattr__(self, "basis", q)
        object.__setattr__(self, "transform", q.T @ np.asarray(self.cube_basis, dtype=np.float64))
        object.__setattr__(self, "points", cert.nonzero.astype(np.float64) @ q)

    @property
    def dimension(self) -> int:
        """:math:`s`."""
        return int(self.basis.shape[1])

    @property
    def cube_volume(self) -> float:
        r""":math:`2^s|\det Q^\top B|`."""
        return float(2.0**self.dimension * abs(np.linalg.det(self.transform)))

    @property
    def expected_acceptance(self) -> float:
        """vol(conv S) / vol(cube) (needs ``ball``)."""
        if self.ball is None:
            raise InvalidArgument("expected_acceptance needs the hull volume: pass ball=KNormBall.from_space(space).")
        return self.ball.volume / self.cube_volume

    def _inside_lp(self, y: FloatArray) -> bool:
        res = linprog(np.ones(self.points.shape[0]), A_eq=self.points.T, b_eq=y, bounds=(0, None), method="highs")
        if res.status != 0:
            raise VerificationError(f"membership LP failed ({res.message}); refusing a biased draw.")
        return bool(res.fun <= 1.0)

    def sample_uniform(self, *, rng: np.random.Generator, size: int) -> RejectionDraw:
        """``size`` points uniform on conv(S) by rejection, with the number of proposals."""
        check_int("size", size, minimum=0)
        s = self.dimension
        got: list[FloatArray] = []
        n_got, proposals = 0, 0
        rate = self.expected_acceptance if self.ball is not None else 1.0
        while n_got < size:
            if proposals >= self.max_proposals:
                raise SearchTooLarge(
                    "cube rejection sampling",
                    proposals,
                    self.max_proposals,
                    "The acceptance rate is too small; use the exact fan sampler.",
                )
            if self.ball is not None:
                m = int(min(max(64, 1.2 * (size - n_got) / max(rate, 1e-12)), 1 << 20))
                y = rng.uniform(-1.0, 1.0, (m, s)) @ self.transform.T
                ok = self.ball.gauge(y) <= 1.0
            else:
                m = 1
                y = rng.uniform(-1.0, 1.0, (1, s)) @ self.transform.T
                ok = np.array([self._inside_lp(y[0])])
            hits = np.flatnonzero(ok)
            need = size - n_got
            if hits.size >= need:
                got.append(y[hits[:need]])
                proposals += int(hits[need - 1]) + 1
                n_got = size
            else:
                got.append(y[hits])
                proposals += m
                n_got += hits.size
        pts = np.vstack(got) if got else np.empty((0, s))
        return RejectionDraw(pts, proposals)

    def sample(self, value: ArrayLike, *, rng: np.random.Generator, size: int | None = None) -> FloatArray:
        """Release ``value + Q (R U)`` with ``U`` from :meth:`sample_uniform`, ``R ~ Gamma(s+1, epsilon)``."""
        v = np.asarray(value, dtype=np.float64)
        d = self.basis.shape[0]
        if v.size != d:
            raise InvalidArgument(f"value has {v.size} entries; the sensitivity space has dimension {d}.")
        n = 1 if size is None else check_int("size", size, minimum=0)
        u = self.sample_uniform(rng=rng, size=n).points
        r = rng.gamma(shape=self.dimension + 1, scale=1.0 / self.epsilon, size=n)
        out = v.reshape(1, d) + (r[:, None] * u) @ self.basis.T
        return out.reshape(v.shape) if size is None else out.reshape((n, *v.shape))


__all__ = ["Ball", "CubeRejectionSampler", "KNormMechanism", "RejectionDraw", "uniform_in_ball"]
