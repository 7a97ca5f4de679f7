r"""K-norm balls of sensitivity spaces: the optimal ball conv(S) and cheap containing balls.

For a finite symmetric sensitivity space :math:`S\subset\mathbb Z^d` with
:math:`V=\operatorname{span}(S)` of dimension :math:`s`, the optimal K-norm
mechanism uses :math:`K=\operatorname{conv}(S)`, a norm ball **in** :math:`V`
[CA24, Lemma 29]. Everything here is expressed in the coordinates
:math:`y=Q^\top x` of an orthonormal basis :math:`Q\in\mathbb R^{d\times s}`
of :math:`V`; by Prop. 30 the K-norm sensitivity of :math:`Q^\top S` with respect
to :math:`K'=Q^\top K` is exactly 1, whatever basis is used.

* :class:`KNormBall` (here) -- :math:`K'` as vertices, facets
  :math:`\{y: a_i\cdot y\le 1\}` (normalised to right-hand side 1, possible
  because :math:`K'` is symmetric with 0 in its interior), a fan
  triangulation from the origin (used by the exact sampler in
  :mod:`mechanisms.knorm`), the gauge :math:`\|y\|_{K'}=\max_i a_i\cdot y`,
  an independent cvxpy LP gauge, membership, containment, volume. For an
  :math:`r\times c` table, :meth:`KNormBall.from_space` uses the row/column
  permutations, transposition and sign (:class:`~accountant.geometry.table_symmetry.TableSymmetry`)
  to find one facet per orbit (adjacency decomposition, every facet snapped to an exact
  rational normal and re-verified in integer arithmetic) and triangulates only
  those (:mod:`accountant.geometry.symmetric_fan`); the sampler spreads a draw over :math:`K` with a
  uniformly random group element. A representative facet too degenerate for qhull is
  triangulated recursively, one orbit of faces at a time
  (:mod:`accountant.geometry.face_fan`). Sizes: 4x4 with 3-cycles has 3 818 facets in
  9 orbits (direct qhull would need ~1.06 M simplices); 4x5 with 3-cycles has
  130 530 facets in 47 orbits and 1.4 M fan simplices. ``benchmarks/knorm.py``
  prints the set-up times.

The rest of the K-norm family lives in its own modules:

* :func:`~accountant.geometry.knorm_certificates.exact_gauge` -- the gauge of an integer vector with an
  exact rational primal/dual certificate (LP duality, no floating point in the check), and
  :func:`~accountant.geometry.knorm_certificates.certified_span` -- exact rank of :math:`S`, an
  orthonormal basis and a basis of elements of :math:`S` in which every element of :math:`S`
  has coordinates in :math:`[-1,1]` (the precondition of [CA24, Alg. 3]);
* :func:`~accountant.geometry.lp_balls.compare_lp_balls` -- Thm. 31's containment order against the
  :math:`\ell_1,\ell_2,\ell_\infty` balls scaled to contain :math:`S`;
* :class:`~accountant.geometry.containing_ball.ContainingBall` /
  :func:`~accountant.geometry.containing_ball.containing_ball` -- an exact but **non-optimal** ball
  :math:`L\supseteq\operatorname{conv}(S)` that is cheap to sample (basis cube, coordinate
  box, Euclidean ball), with its loss against the optimum bounded, for sizes where the hull
  is out of reach;
* :mod:`accountant.geometry.knorm_cache` (balls kept on disk) and :mod:`accountant.geometry.knorm_verify`
  (a loaded ball re-checked against its space).

Size guards: a direct qhull run is refused (:class:`~accountant.core.errors.SearchTooLarge`)
when ``n ** floor(s/2)`` exceeds :data:`QHULL_WORK_LIMIT`; the symmetric build
recurses below a face whose own hull would exceed it (up to rank
:data:`~accountant.geometry.symmetric_fan.RECURSION_MAX_RANK`; beyond, it refuses such a face at once), and refuses
beyond its orbit, fan-size and time budgets. Either way it refuses before or within the
stated budget, never hangs.

Floating point: hull facets come from qhull. Every ball is checked at
construction (R9): all of :math:`Q^\top S` has facet gauge
:math:`\le 1+10^{-9}`, every vertex has gauge :math:`\ge 1-10^{-9}`, facets come
in :math:`\pm` pairs, and (direct qhull) the fan volumes sum to qhull's volume; a
failure raises :class:`~accountant.core.errors.VerificationError`. The privacy statement itself
(:math:`\Delta_K=1`) is Prop. 30 and does not depend on these floats; the float
sampler is not hardened against floating-point side channels (see
:mod:`mechanisms.knorm`).

References
----------
[CA24] Cho & Awan, arXiv:2410.17468v1: Prop. 7, Lemma 29, Prop. 30, Alg. 2,
Thm. 31, Alg. 3. [HT10] Hardt & Talwar, "On the geometry of differential
privacy", STOC 2010. [AS21] Awan & Slavković, "Structure and sensitivity in
differential privacy: comparing K-norm mechanisms", JASA 2021.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.spatial import ConvexHull, QhullError
from scipy.special import gammaln

from semidp.accountant.core.budget import Budget, budget_argument
from semidp.accountant.core.directed import pad_down, pad_up
from semidp.accountant.core.errors import InvalidArgument, SearchTooLarge, VerificationError
from semidp.accountant.core.outcome import Bounds, Outcome, Refuted, Unknown, Verified
from semidp.accountant.geometry.knorm_certificates import (
    certified_span,
    exact_gauge,
)
from semidp.accountant.geometry.span_coordinates import SpanCoordinates
from semidp.accountant.geometry.symmetric_fan import check_variant_size, symmetric_fan
from semidp.accountant.geometry.table_symmetry import TableSymmetry
from semidp.accountant.guarantees.relations import Relation
from semidp.accountant.sensitivity.spaces import SensitivitySpace

#: Relative tolerance of the float geometry checks (a vertex has gauge exactly 1).
GEOMETRY_RTOL = 1e-9


#: Budget of a direct qhull run, as ``n ** floor(s / 2)`` for ``n`` points in
#: dimension ``s`` (the growth of the Upper Bound Theorem): 4x4 moves (n = 72, s = 9:
#: 2.7e7, 90 740 fan simplices) pass; 4x4 with 3-cycles (n = 264, s = 9: 4.9e9, ~1.06 M
#: simplices) is refused (``benchmarks/knorm.py`` times both).
QHULL_WORK_LIMIT = 1e8


#: Largest number of fan simplices kept in memory (4x5 with 3-cycles: 1.97 M before qhull's
#: flat simplices are dropped, 1.42 M after; ~200 bytes each with the volumes).
FAN_LIMIT = 3_000_000


FloatArray = NDArray[np.float64]


IntArray = NDArray[np.int64]


def lp_solver() -> str:
    import cvxpy as cp

    solvers: list[str] = cp.installed_solvers()  # type: ignore[no-untyped-call]
    return "HIGHS" if "HIGHS" in solvers else "CLARABEL"


@dataclass(frozen=True, eq=False)
class KNormBall(SpanCoordinates):
    r"""The optimal K-norm ball :math:`K'=Q^\top\operatorname{conv}(S)` in coordinates of an orthonormal basis of span(S).

    Build with :meth:`from_space`. Coordinates: ``y = basis.T @ x`` for
    :math:`x\in V`, ``x = basis @ y`` back.

    Examples
    --------
    >>> from semidp.accountant.sensitivity.spaces import table_space, table_three_cycles
    >>> k = KNormBall.from_space(table_space(3, 3, paper_exact=True))
    >>> k.dimension, len(k.vertices), len(k.facets), round(k.volume, 6)
    (4, 18, 30, 24.75)
    >>> round(k.sensitivity(table_three_cycles(3, 3)), 12)  # docs/reference/semi-dp.md T-S6 (exact: see exact_gauge)
    2.0
    """

    space: SensitivitySpace
    """The sensitivity space S (integer, symmetric)."""
    basis: FloatArray
    """``(d, s)`` orthonormal basis Q of span(S)."""
    vertices: FloatArray
    r"""``(m, s)`` extreme points of :math:`Q^\top S`."""
    vertex_vectors: IntArray
    """``(m, d)`` the elements of S that are the vertices (same order)."""
    facets: FloatArray
    r"""``(f, s)`` facet normals :math:`a_i`, :math:`K'=\{y: a_i\cdot y\le1\}` (deduplicated)."""
    fan_points: FloatArray
    """``(p, s)`` points used by the fan: the vertices, plus one centroid per facet orbit
    representative when built with a symmetry group."""
    fan: NDArray[np.intp]
    """``(t, s)`` indices into ``fan_points``: the simplices conv(0, fan_points[fan[j]]) have
    disjoint interiors and, with their images under ``symmetry``, cover :math:`K'`."""
    fan_volumes: FloatArray
    r"""``(t,)`` volumes of the fan simplices, :math:`|\det|/s!`."""
    fan_multiplicity: IntArray
    """``(t,)`` number of images of each simplex under ``symmetry`` (the orbit size of its
    facet; 1 without symmetry)."""
    fan_cdf: FloatArray
    """``(t,)`` cumulative normalised ``fan_volumes * fan_multiplicity`` (choosing a simplex by volume)."""
    volume: float
    """Volume of :math:`K'`: the sum of ``fan_volumes * fan_multiplicity`` (checked against qhull's
    volume when qhull built the hull)."""
    relation: Relation | None = None
    """The relation on which ``space`` is the sensitivity space (needed for a privacy map)."""
    method: str = "qhull"
    """How the hull was built."""
    symmetry: TableSymmetry | None = None
    """Group under which the fan is completed: the exact sampler applies a uniformly random
    element to a point drawn from the representative simplices."""
    facet_orbit_sizes: tuple[int, ...] = ()
    """Sizes of the facet orbits under ``symmetry`` (empty without symmetry)."""

    # -- construction -----------------------------------------------------------------

    @classmethod
    def from_space(
        cls,
        space: SensitivitySpace,
        *,
        relation: Relation | None = None,
        work_limit: float = QHULL_WORK_LIMIT,
        symmetry: TableSymmetry | None = None,
        orbit_limit: int = 20_000,
        budget: Budget | None = None,
        expand_limit: int = 2_000_000,
        **legacy: float,
    ) -> KNormBall:
        r"""Build :math:`\operatorname{conv}(S)` in orthonormal coordinates (qhull, options ``Qt``).

        Parameters
        ----------
        space:
            The sensitivity space (rank at least 1).
        relation:
            The relation it is the sensitivity space of; recorded for
            :meth:`mechanisms.knorm.KNormMechanism.privacy_map`.
        work_limit:
            Refuse when ``n ** floor(s/2)`` exceeds it (see :data:`QHULL_WORK_LIMIT`).
            With ``symmetry`` it bounds each face's own qhull run instead
            (``k ** floor(dim/2)`` for a face with ``k`` vertices); a face
            beyond it is triangulated recursively (:mod:`accountant.geometry.face_fan`)
            when ``s <= RECURSION_MAX_RANK``, and refused otherwise.
        symmetry:
            A group under which S is invariant (checked). The facets are then
            found one orbit at a time by the adjacency decomposition (start from
            one facet by LP; for each representative, its ridges from a qhull of
            the facet's own vertices in dimension ``s - 1``; rotate across each
            ridge to the neighbouring facet; keep a neighbour if its canonical
            form is new). Every facet is snapped to an exact rational normal and
            re-verified in integer arithmetic (valid inequality, tight set of
            rank ``s``). The representative facets are triangulated (cone from
            the facet's vertex centroid over qhull's triangulated boundary of the
            facet, or, for a facet beyond ``work_limit``, over the recursively
            triangulated representatives of its own facets under the facet's
            stabiliser: :mod:`accountant.geometry.face_fan`); the sampler spreads them over
            K with a random group element. Balls whose fan has more than one
            level (:attr:`fan_levels`) are checked against independent methods
            in the tests but are not stored by :mod:`accountant.geometry.knorm_cache`.
        orbit_limit, budget, expand_limit:
            Budgets of the symmetric build (facet orbits, a wall-clock
            :class:`~semidp.accountant.core.budget.Budget` -- default 120 s from the call; the deprecated
            ``time_limit=`` seconds still works for one release -- and total facets
            expanded for :meth:`gauge`); beyond the first two it raises
            SearchTooLarge; beyond the last, ``facets`` holds one normal per orbit
            only and :meth:`gauge` refuses.

        Raises
        ------
        SearchTooLarge
            Without ``symmetry``, before starting qhull, when the work estimate exceeds ``work_limit``
            or the fan has more than :data:`FAN_LIMIT` simplices; with
            ``symmetry``, also beyond :data:`~accountant.geometry.symmetric_fan.VARIANT_LIMIT`, ``orbit_limit`` or
            ``budget``. Use :func:`~accountant.geometry.containing_ball.containing_ball` for an exact non-optimal
            mechanism.
        VerificationError
            A construction check failed (see the module notes).
        """
        budget = budget_argument(budget, legacy, where="KNormBall.from_space", default=120.0, zero_ok=True)
        if symmetry is not None:
            check_variant_size(symmetry)  # before any work on S
            symmetry.check_invariant(space)
        cert = certified_span(space)
        q, s = cert.orthonormal, cert.rank
        pts = cert.nonzero.astype(np.float64) @ q
        n = pts.shape[0]
        if s == 1:
            y = pts[:, 0]
            i_hi, i_lo = int(np.argmax(y)), int(np.argmin(y))
            mx = float(y[i_hi])
            verts = np.array([[mx], [float(y[i_lo])]])
            facets = np.array([[1.0 / mx], [1.0 / float(y[i_lo])]])
            fan = np.array([[0], [1]], dtype=np.intp)
            vols = np.abs(verts[:, 0])
            ball = cls._assemble(
                space,
                q,
                verts,
                cert.nonzero[[i_hi, i_lo]],
                facets,
                verts,
                fan,
                vols,
                np.ones(2, dtype=np.int64),
                relation,
                "interval (s = 1)",
            )
            ball._check(pts, hull_volume=float(vols.sum()))
            return ball
        if symmetry is not None and s >= 2:
            reps, fpts, fan, vols, mult, all_facets = symmetric_fan(
                cert,
                symmetry,
                orbit_limit=orbit_limit,
                budget=budget,
                fan_limit=FAN_LIMIT,
                expand_limit=expand_limit,
                facet_work_limit=work_limit,
            )
            expanded = all_facets is not None
            normals = all_facets if all_facets is not None else np.array([fc.normal for fc in reps])
            ball = cls._assemble(
                space,
                q,
                pts,
                cert.nonzero,
                normals,
                fpts,
                fan,
                vols,
                mult,
                relation,
                "adjacency decomposition up to symmetry, fan from the origin "
                f"({len(reps)} facet orbits, {int(sum(fc.orbit for fc in reps))} facets)",
                symmetry,
                tuple(fc.orbit for fc in reps),
            )
            if expanded:
                ball._check(pts, hull_volume=ball.volume)
            return ball
        work = float(n) ** (s // 2)
        if work > work_limit:
            raise SearchTooLarge(
                f"convex hull of {n} points in dimension {s}",
                work,
                work_limit,
                "Use accountant.geometry.knorm.containing_ball(space) for an exact non-optimal K-norm "
                "mechanism (labelled, with its loss bounded), or raise work_limit.",
            )
        try:
            hull = ConvexHull(pts, qhull_options="Qt")
        except QhullError as e:  # pragma: no cover - degenerate input is excluded by the rank check
            raise VerificationError(f"qhull failed on a full-dimensional point set: {e}") from e
        if len(hull.simplices) > FAN_LIMIT:
            raise SearchTooLarge("fan triangulation", len(hull.simplices), FAN_LIMIT)
        vidx = np.asarray(hull.vertices)
        local = np.full(n, -1, dtype=np.intp)
        local[vidx] = np.arange(len(vidx))
        fan = local[np.asarray(hull.simplices)]
        verts = pts[vidx]
        eq = np.asarray(hull.equations)
        offs = -eq[:, -1]
        if np.any(offs <= 0):
            raise VerificationError("a facet does not have the origin strictly inside.")
        normals = eq[:, :-1] / offs[:, None]
        _, keep = np.unique(np.round(normals, 9), axis=0, return_index=True)
        facets = normals[np.sort(keep)]
        dets = np.abs(np.linalg.det(verts[fan]))
        vols = dets / math.factorial(s)
        ball = cls._assemble(
            space,
            q,
            verts,
            cert.nonzero[vidx],
            facets,
            verts,
            fan,
            vols,
            np.ones(len(vols), dtype=np.int64),
            relation,
            "qhull Qt, fan from the origin",
        )
        ball._check(pts, hull_volume=float(hull.volume))
        return ball

    @classmethod
    def _assemble(
        cls,
        space: SensitivitySpace,
        q: FloatArray,
        verts: FloatArray,
        vvec: IntArray,
        facets: FloatArray,
        fan_points: FloatArray,
        fan: NDArray[np.intp],
        vols: FloatArray,
        mult: IntArray,
        relation: Relation | None,
        method: str,
        symmetry: TableSymmetry | None = None,
        orbits: tuple[int, ...] = (),
    ) -> KNormBall:
        w = vols * mult
        cdf = np.cumsum(w)
        total = float(cdf[-1])
        return cls(
            space,
            q,
            verts,
            vvec,
            facets,
            fan_points,
            fan,
            vols,
            mult,
            cdf / total,
            total,
            relation,
            method,
            symmetry,
            orbits,
        )

    def _check(self, points: FloatArray, *, hull_volume: float) -> None:
        """Construction checks (R9); raise VerificationError on failure."""
        g = self.gauge(points)
        if g.max() > 1 + GEOMETRY_RTOL:
            raise VerificationError(f"an element of S has facet gauge {g.max()!r} > 1.")
        gv = self.gauge(self.vertices)
        if gv.min() < 1 - GEOMETRY_RTOL:
            raise VerificationError(f"a vertex has facet gauge {gv.min()!r} < 1.")
        keys = {tuple(r) for r in np.round(self.facets, 7).tolist()}
        if any(tuple(r) not in keys for r in np.round(-self.facets, 7).tolist()):
            raise VerificationError("facets are not symmetric (K = -K fails).")
        if abs(self.volume - hull_volume) > 1e-9 * hull_volume:
            raise VerificationError(f"fan volume {self.volume!r} != qhull volume {hull_volume!r}.")

    # -- coordinates ------------------------------------------------------------------

    @property
    def fan_levels(self) -> int:
        """Largest number of face centroids in one fan simplex: 0 without symmetry, 1 when each
        representative facet was triangulated by qhull, more when :mod:`accountant.geometry.face_fan` recursed."""
        if len(self.fan_points) == len(self.vertices):
            return 0
        return int((self.fan >= len(self.vertices)).sum(axis=1).max())

    @property
    def facet_count(self) -> int:
        """Number of facets of K (all orbits counted)."""
        return sum(self.facet_orbit_sizes) if self.symmetry is not None else len(self.facets)

    # -- gauges -----------------------------------------------------------------------

    def gauge(self, y: ArrayLike) -> FloatArray:
        r""":math:`\|y\|_{K'}=\max_i a_i\cdot y` from the facets (rows of ``y``; shape ``y.shape[:-1]``)."""
        arr = np.asarray(y, dtype=np.float64)
        if arr.shape[-1] != self.dimension:
            raise InvalidArgument(f"points must have {self.dimension} coordinates; got shape {arr.shape}.")
        if self.symmetry is not None and len(self.facets) < self.facet_count:
            raise InvalidArgument(
                f"the {self.facet_count} facets were not expanded (expand_limit); use gauge_lp instead."
            )
        flat = arr.reshape(-1, self.dimension)
        out = np.empty(flat.shape[0])
        step = max(1, 4_000_000 // max(1, len(self.facets)))
        for i in range(0, flat.shape[0], step):
            out[i : i + step] = (flat[i : i + step] @ self.facets.T).max(axis=1)
        return np.maximum(out, 0.0).reshape(arr.shape[:-1])

    def contains(self, y: ArrayLike, *, rtol: float = GEOMETRY_RTOL) -> NDArray[np.bool_]:
        """Membership ``gauge(y) <= 1 + rtol``."""
        return self.gauge(y) <= 1 + rtol

    def sensitivity(self, vectors: ArrayLike) -> float:
        r"""K-norm sensitivity :math:`\max_{u}\|Q^\top u\|_{K'}` of ambient vectors (rows), from the facets.

        For an exact value use :func:`exact_gauge` on each vector.
        """
        return float(self.gauge(self.coordinates(vectors)).max())

    def gauge_lp(self, y: ArrayLike) -> Bounds | Unknown:
        r"""Independent LP gauge (cvxpy): :math:`\min t` s.t. :math:`y=\sum\lambda_kv_k`, :math:`\lambda\ge0`, :math:`\sum\lambda=t`.

        Only status ``OPTIMAL`` is accepted (R9); anything else is
        :class:`~accountant.core.outcome.Unknown`. The result is re-checked outside the
        solver: the upper bound is :math:`\sum\lambda^+` plus the gauge bound
        :math:`\|B^{-1}r\|_1` of the residual :math:`r` (``B`` = s independent
        vertices), the lower bound is :math:`f\cdot y/\max(1,\max_v f\cdot v)`
        from the dual vector :math:`f`; both padded outward.

        Returns
        -------
        Bounds | Unknown
            ``lower <= gauge <= upper`` and the solver's ``estimate``.
        """
        import cvxpy as cp

        yv = np.asarray(y, dtype=np.float64).reshape(-1)
        if yv.shape != (self.dimension,):
            raise InvalidArgument(f"y must have {self.dimension} coordinates; got shape {yv.shape}.")
        v = self.vertices
        lam = cp.Variable(v.shape[0], nonneg=True)
        con = v.T @ lam == yv
        prob = cp.Problem(cp.Minimize(np.ones(v.shape[0]) @ lam), [con])
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                prob.solve(solver=lp_solver())  # type: ignore[no-untyped-call]
            except cp.error.SolverError as e:
                return Unknown(f"cvxpy solver error: {e}")
        if prob.status != cp.OPTIMAL or lam.value is None or con.dual_value is None:
            note = "; ".join(str(w.message) for w in caught)
            return Unknown(f"cvxpy status {prob.status!r}" + (f" ({note})" if note else ""))
        lp = np.maximum(np.asarray(lam.value, dtype=np.float64), 0.0)
        resid = yv - v.T @ lp
        bsel = independent_rows(v)
        corr = float(np.abs(np.linalg.solve(v[bsel].T, resid)).sum())
        upper = pad_up(float(lp.sum()) + corr, rel=1e-12, abs_=1e-15)
        dual = np.asarray(con.dual_value, dtype=np.float64).reshape(-1)
        lower = 0.0
        for f in (dual, -dual):
            m = max(1.0, float((v @ f).max()))
            lower = max(lower, float(f @ yv) / m)
        lower = max(0.0, pad_down(lower, rel=1e-12, abs_=1e-15))
        est = min(max(float(prob.value), lower), upper)
        return Bounds(lower, est, upper)

    # -- containment ------------------------------------------------------------------

    def contained_in(self, other: KNormBall, *, exact: bool = False, rtol: float = GEOMETRY_RTOL) -> Outcome:
        r"""Is ``self`` :math:`\subseteq` ``other`` (as subsets of the ambient space)?

        ``self`` is inside ``other`` iff every vertex of ``self`` has gauge at
        most 1 in ``other``. With ``exact=False`` each vertex is checked by
        :meth:`gauge_lp` (certified float bounds, one-sided tolerance ``rtol``
        because vertices on ``other``'s boundary have gauge exactly 1); with
        ``exact=True`` by :func:`exact_gauge` on the integer vertex vectors.

        Returns
        -------
        Verified | Refuted | Unknown
        """
        if other.ambient_dimension != self.ambient_dimension:
            raise InvalidArgument(f"ambient dimensions differ: {self.ambient_dimension} vs {other.ambient_dimension}.")
        amb = self.vertex_vectors
        resid = amb - (amb @ other.basis) @ other.basis.T
        bad = np.flatnonzero(np.linalg.norm(resid, axis=1) > 1e-9 * np.linalg.norm(amb, axis=1))
        if bad.size:
            return Refuted(f"vertex {amb[bad[0]].tolist()} is not in span of the other ball's space.")
        if exact:
            worst = Fraction(0)
            for u in amb:
                g = exact_gauge(other.space, u)
                if isinstance(g, Unknown):
                    return Unknown(f"vertex {u.tolist()}: {g.reason}")
                if g.value > 1:
                    return Refuted(f"vertex {u.tolist()} has exact gauge {g.value} > 1 in the other ball.")
                worst = max(worst, g.value)
            return Verified(f"all {len(amb)} vertices have exact gauge <= {worst} <= 1 (rational LP certificates).")
        ys = amb.astype(np.float64) @ other.basis
        hi = 0.0
        undecided = ""
        for u, y in zip(amb, ys):
            b = other.gauge_lp(y)
            if isinstance(b, Unknown):
                return Unknown(f"vertex {u.tolist()}: {b.reason}")
            if b.lower > 1 + rtol:
                return Refuted(f"vertex {u.tolist()} has gauge in [{b.lower:.12g}, {b.upper:.12g}] > 1.")
            if b.upper > 1 + rtol:
                undecided = f"vertex {u.tolist()} has gauge in [{b.lower:.12g}, {b.upper:.12g}]"
            hi = max(hi, b.upper)
        if undecided:
            return Unknown(undecided)
        return Verified(
            f"all {len(amb)} vertices have LP gauge <= {hi:.12g} <= 1 + {rtol:g} (cvxpy, certified bounds)."
        )


def independent_rows(v: FloatArray) -> NDArray[np.intp]:
    """Indices of ``s`` linearly independent rows of ``v`` (pivoted QR)."""
    from scipy.linalg import qr

    _, _, piv = qr(v.T, pivoting=True, mode="economic")
    return np.sort(np.asarray(piv[: v.shape[1]], dtype=np.intp))


def log_unit_ball_volume(s: int) -> float:
    r""":math:`\log\omega_s`, :math:`\omega_s=\pi^{s/2}/\Gamma(s/2+1)`."""
    return 0.5 * s * math.log(math.pi) - float(gammaln(s / 2 + 1))


__all__ = [
    "FAN_LIMIT",
    "GEOMETRY_RTOL",
    "KNormBall",
    "QHULL_WORK_LIMIT",
    "independent_rows",
    "log_unit_ball_volume",
    "lp_solver",
]
