r"""Recursive pulling fan of a face of :math:`K=\operatorname{conv}(S)` up to the table symmetry group.

The exact uniform sampler of the optimal K-norm ball [CA24, Alg. 2]
needs a triangulation of :math:`K`. :func:`accountant.geometry.symmetric_fan.symmetric_fan`
finds one facet per orbit of the group :math:`G` (:class:`accountant.geometry.table_symmetry.TableSymmetry`)
and cones from the origin over a triangulation of each representative facet.
A representative facet can itself be far too degenerate for qhull (4x5 tables
with 3-cycles: 168 vertices in dimension 11, more than five minutes), so this
module triangulates it the same way one dimension down, recursively.

For a face :math:`P` with chain :math:`F_1\supset\dots\supset F_j=P` (a facet of
:math:`K` down to :math:`P`):

* if :math:`P` is a simplex, it is its own triangulation;
* if qhull's work estimate :math:`n^{\lfloor k/2\rfloor}` (``n`` vertices,
  dimension ``k``) is within the limit, qhull (``Qt``) gives all facets of
  :math:`P` and a triangulation of its boundary; :math:`P` is triangulated by
  cones from its vertex centroid :math:`c_P` over it;
* otherwise the facets of :math:`P` are found one orbit of the chain's
  stabiliser :math:`G_{F_1\dots F_j}` at a time (adjacency decomposition inside
  the affine hull of :math:`P`: one facet by LP, then rotation across each
  ridge of each representative, the ridges coming from the recursive call on
  the representative), and :math:`P` is triangulated by cones from
  :math:`c_P` over the representatives' triangulations.

A leaf (a face handed to qhull) does not depend on the chain above it, so its
facets and boundary triangulation are computed once per :math:`G`-orbit and
mapped to every later face of the orbit by a group element
(:meth:`accountant.geometry.knorm.TableSymmetry.canonical_element`); the mapped vertex
set is checked to be the face's own. At 4x5 with 3-cycles this saves two
thirds of the qhull runs.

Volumes are chained, not recomputed: a simplex's volume is its leaf's
determinant times height / dimension for each cone above it (the distance
from a centroid to a facet's hyperplane is ``1 / |a|`` for the facet
inequality ``a . y <= 1`` centred there). :func:`check_volumes` compares them
with ``|det| / s!`` on a fixed sample of simplices at every build.

A face is identified by the integer table :math:`\sum_{v\in P}v` (distinct
faces have distinct vertex centroids, and the group acts linearly), a chain by
the stack of its tables; two chains lie in one :math:`G`-orbit iff
:meth:`accountant.geometry.knorm.TableSymmetry.chain_key` agrees. A simplex of the fan
built over representative ridge :math:`R` of :math:`P` stands for the
:math:`|G_{F_1..F_j}|/|G_{F_1..F_j R}|` cones over the ridges in its orbit; its
multiplicity is the product of these orbit sizes down the chain.

Why the sampler stays exact: draw a simplex with probability proportional to
volume times multiplicity, a uniform point in it, and apply a uniformly random
:math:`g\in G`. Writing :math:`g=g_1h_1h_2\cdots` through the cosets of the
nested stabilisers, each factor is uniform and maps the representative cone
onto a uniformly chosen member of its orbit, while the stabiliser factor maps
the representative's own (not necessarily symmetric) triangulation to another
triangulation of the same cone; so the point is uniform on :math:`K`.
This is the "recursive adjacency decomposition" of Bremner, Dutour Sikirić &
Schürmann (2009), used here for triangulation rather than facet enumeration.

References
----------
[CA24] Cho & Awan, arXiv:2410.17468v1, Alg. 2, Thm. 31.
[BDS09] Bremner, Dutour Sikirić, Schürmann, "Polyhedral representation conversion up to
symmetries", CRM Proceedings 48 (2009).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray
from scipy.optimize import linprog
from scipy.spatial import ConvexHull, QhullError

from semidp.accountant.core.errors import SearchOutOfTime, SearchTooLarge, VerificationError

if TYPE_CHECKING:
    from semidp.accountant.geometry.table_symmetry import TableElement, TableSymmetry

IntArray = NDArray[np.int64]
FloatArray = NDArray[np.float64]
Index = NDArray[np.intp]

_TIGHT = 1e-9  # relative tolerance for "a vertex lies on a facet" inside a face's affine hull

__all__ = ["FaceDecomposer", "FaceFan"]


@dataclass
class FaceFan:
    """The facets of a face up to its chain stabiliser, and a triangulation of the face."""

    ridges: list[Index]
    """Vertex index sets (into S) of one facet of the face per orbit of the chain stabiliser."""
    rows: NDArray[np.intp]
    """``(t, k + 1)`` point ids of the simplices triangulating the face (dimension ``k``)."""
    mult: IntArray
    """``(t,)`` number of images of each simplex under the chain stabiliser's cosets below the face."""
    vols: FloatArray
    """``(t,)`` k-dimensional volume of each simplex (k = dimension of the face): a leaf's determinant,
    times height / dimension for each cone from a centroid above it (pyramid volume)."""


@dataclass
class FaceDecomposer:
    r"""Triangulates faces of :math:`\operatorname{conv}(S)` up to ``symmetry`` (see the module docstring).

    ``points`` are the elements of S in orthonormal coordinates of span(S) (rows),
    ``tables`` the same elements as integer tables ``(n, r, c)``. Centroids are
    registered as new points with ids ``len(points), len(points) + 1, ...``.
    """

    points: FloatArray
    tables: IntArray
    symmetry: TableSymmetry
    work_limit: float
    deadline: float
    fan_limit: int
    recurse: bool = True
    """Triangulate faces beyond ``work_limit`` recursively; if False, refuse them (SearchTooLarge)."""
    stats: dict[str, int] = field(default_factory=lambda: {"qhull": 0, "reused": 0, "simplex": 0, "recursive": 0})
    _extra: list[FloatArray] = field(default_factory=list)
    _n_simplices: int = 0
    _memo: dict[bytes, tuple[IntArray, TableElement, list[Index], NDArray[np.intp], FloatArray]] = field(
        default_factory=dict
    )
    _index: dict[bytes, int] = field(default_factory=dict)
    started: float = field(default_factory=time.monotonic)
    """When the decomposer was made (``time.monotonic``): the time refusal says how long it ran."""

    def __post_init__(self) -> None:
        self._index = {t.tobytes(): i for i, t in enumerate(np.asarray(self.tables, dtype=np.int64))}

    def add_point(self, x: FloatArray) -> int:
        """Register a point (a face centroid); return its id."""
        self._extra.append(np.asarray(x, dtype=np.float64)[None, :])
        return len(self.points) + len(self._extra) - 1

    def all_points(self) -> FloatArray:
        """The elements of S followed by the registered centroids."""
        return np.vstack([self.points, *self._extra]) if self._extra else self.points.copy()

    def face_table(self, vidx: Index) -> IntArray:
        """The integer table identifying the face with vertex set ``vidx``."""
        return np.asarray(self.tables[vidx].sum(axis=0), dtype=np.int64)

    def _check_budget(self, what: str) -> None:
        if time.monotonic() > self.deadline:
            raise SearchOutOfTime(
                f"recursive triangulation of conv(S) ({what})",
                time.monotonic() - self.started,
                self.deadline - self.started,
                "Time budget (time_limit) exceeded; raise it or use containing_ball(space).",
                done=f"{self.stats['recursive']} faces triangulated recursively",
            )

    def _orbit_reps(self, faces: list[Index], chain: list[IntArray], stab: int) -> list[tuple[Index, int]]:
        """One face per orbit of the chain stabiliser, with its orbit size."""
        if stab == 1:  # trivial stabiliser: every face is its own orbit
            return [(f, 1) for f in faces]
        head = np.broadcast_to(np.stack(chain), (len(faces), *np.shape(chain)))
        tables = np.stack([self.face_table(f) for f in faces])[:, None]
        keys, stabs = self.symmetry.chain_keys(np.concatenate([head, tables], axis=1))
        out: dict[bytes, tuple[Index, int]] = {}
        for f, key, st in zip(faces, keys, stabs.tolist()):
            if key not in out:
                out[key] = (f, stab // st)
        return list(out.values())

    def decompose(self, vidx: Index, chain: list[IntArray], center_id: int, *, cone_simplex: bool = False) -> FaceFan:
        """Facets (up to the stabiliser of ``chain``, which ends with this face) and triangulation.

        ``center_id`` is the registered centroid of the face; every simplex row
        starts with it, except that a face which is a simplex is its own
        triangulation unless ``cone_simplex`` (then: cones from the centroid over
        its facets, so that every row has the centroid).
        """
        self._check_budget(f"a face with {len(vidx)} vertices")
        center = self.points[vidx].mean(axis=0)
        x = self.points[vidx] - center
        _, sv, vt = np.linalg.svd(x, full_matrices=False)
        k = int((sv > 1e-9 * sv[0]).sum())
        y = x @ vt[:k].T
        stab = self.symmetry.chain_key(np.stack(chain))[1]
        if len(vidx) == k + 1:
            self.stats["simplex"] += 1
            faces = [np.delete(vidx, i) for i in range(k + 1)]
            reps = self._orbit_reps(faces, chain, stab)
            if cone_simplex:
                rows = np.array([[center_id, *f.tolist()] for f in faces], dtype=np.intp)
                vols = np.abs(np.linalg.det(np.stack([np.delete(y, i, axis=0) for i in range(k + 1)])))
                return self._emit(reps, rows, np.ones(len(rows), dtype=np.int64), vols / math.factorial(k))
            vol = abs(float(np.linalg.det(y[1:] - y[0]))) / math.factorial(k)
            return self._emit(reps, vidx[None, :].astype(np.intp), np.ones(1, dtype=np.int64), np.array([vol]))
        if k == 1:
            ends = [vidx[[int(np.argmin(y[:, 0]))]], vidx[[int(np.argmax(y[:, 0]))]]]
            rows = np.array([[center_id, int(e[0])] for e in ends], dtype=np.intp)
            lengths = np.abs(np.array([float(y[:, 0].min()), float(y[:, 0].max())]))
            return self._emit(self._orbit_reps(ends, chain, stab), rows, np.ones(2, dtype=np.int64), lengths)
        if float(len(vidx)) ** (k // 2) <= self.work_limit:
            leaf = self._leaf(vidx, y)
            if leaf is not None:
                facets, tri, vols = leaf
                rows = np.concatenate([np.full((len(tri), 1), center_id), tri], axis=1).astype(np.intp)
                return self._emit(self._orbit_reps(facets, chain, stab), rows, np.ones(len(rows), dtype=np.int64), vols)
        if not self.recurse:
            raise SearchTooLarge(
                f"convex hull of a face ({len(vidx)} vertices in dimension {k})",
                float(len(vidx)) ** (k // 2),
                self.work_limit,
                "Use containing_ball(space) for an exact non-optimal mechanism.",
            )
        return self._recursive(vidx, y, chain, stab, center_id)

    def _leaf(self, vidx: Index, y: FloatArray) -> tuple[list[Index], NDArray[np.intp], FloatArray] | None:
        """All facets of the face, a triangulation of its boundary (point ids) and the volumes of the
        cones from the centroid over it, by qhull, or by mapping those of an earlier face in the same
        G-orbit (a leaf's triangulation does not depend on the chain above it; volumes are invariant).
        None if qhull fails."""
        key, elem = self.symmetry.canonical_element(self.face_table(vidx)[None])
        memo = self._memo.get(key)
        if memo is not None:
            rep_tables, rep_elem, facets_loc, tri_loc, vols = memo
            img = self.symmetry.apply_inverse(elem, self.symmetry.apply(rep_elem, rep_tables))
            ids = np.array([self._index.get(t.tobytes(), -1) for t in img], dtype=np.intp)
            if not np.array_equal(np.sort(ids), np.sort(vidx)):
                raise VerificationError("a group element does not map a face onto its orbit mate.")
            self.stats["reused"] += 1
            return [ids[f] for f in facets_loc], ids[tri_loc], vols
        hull = self._qhull(y)
        if hull is None:
            return None
        self.stats["qhull"] += 1
        eq = np.asarray(hull.equations)
        _, first = np.unique(np.round(eq, 9), axis=0, return_index=True)
        scale = float(np.abs(y).max())
        facets_loc = [np.flatnonzero(y @ e[:-1] + e[-1] >= -_TIGHT * scale) for e in eq[np.sort(first)]]
        tri = np.asarray(hull.simplices)
        det = np.abs(np.linalg.det(y[tri]))  # cones from the centroid (y = 0), in aff(P)
        keep = det > 1e-12 * float(det.max())  # qhull Qt's flat simplices carry no volume
        tri, vols = tri[keep], det[keep] / math.factorial(y.shape[1])
        self._memo[key] = (self.tables[vidx], elem, facets_loc, tri, vols)
        return [vidx[f] for f in facets_loc], vidx[tri], vols

    def _emit(self, reps: list[tuple[Index, int]], rows: NDArray[np.intp], mult: IntArray, vols: FloatArray) -> FaceFan:
        self._n_simplices += len(rows)
        if self._n_simplices > self.fan_limit:
            raise SearchTooLarge(
                "fan triangulation (representatives, recursive)",
                self._n_simplices,
                self.fan_limit,
                "Use containing_ball(space) for an exact non-optimal mechanism.",
            )
        return FaceFan([r for r, _ in reps], rows, mult, vols)

    @staticmethod
    def _qhull(y: FloatArray) -> ConvexHull | None:
        for opt in ("Qt", "Qt Qs"):  # Qs: a slower initial simplex search, for flat-looking starts
            try:
                return ConvexHull(y, qhull_options=opt)
            except QhullError:
                continue
        return None

    def _recursive(self, vidx: Index, y: FloatArray, chain: list[IntArray], stab: int, center_id: int) -> FaceFan:
        """Adjacency decomposition of the face (coordinates ``y``, centroid at 0) up to the chain stabiliser."""
        self.stats["recursive"] += 1
        k = y.shape[1]
        rng = np.random.default_rng(len(vidx) * 1_000_003 + k)  # fixed: the build is deterministic
        res = linprog(-rng.standard_normal(k), A_ub=y, b_ub=np.ones(len(y)), bounds=(None, None), method="highs-ds")
        if res.status != 0:  # pragma: no cover - bounded and feasible (the centroid is interior)
            raise VerificationError(f"facet LP inside a face failed: {res.message}")
        pos = {int(v): j for j, v in enumerate(vidx)}
        seen: set[bytes] = set()
        by_set: set[bytes] = set()
        queue: list[tuple[Index, int]] = []

        def add(local: Index) -> None:
            fv = vidx[local]
            raw = fv.tobytes()
            if raw in by_set:
                return
            by_set.add(raw)
            if np.linalg.matrix_rank(y[local]) != k:
                raise VerificationError("a rotated hyperplane is tight on a lower-dimensional face (float trouble).")
            if stab == 1:  # trivial stabiliser: distinct sets, distinct orbits
                queue.append((local, 1))
                return
            key, st = self.symmetry.chain_key(np.stack([*chain, self.face_table(fv)]))
            if key not in seen:
                seen.add(key)
                queue.append((local, stab // st))

        add(np.flatnonzero(y @ np.asarray(res.x) >= 1 - _TIGHT))
        rows_out: list[NDArray[np.intp]] = []
        mult_out: list[IntArray] = []
        vols_out: list[FloatArray] = []
        i = 0
        while i < len(queue):
            local, n_orbit = queue[i]
            i += 1
            fv = vidx[local]
            a = np.asarray(np.linalg.lstsq(y[local], np.ones(len(local)), rcond=None)[0], dtype=np.float64)
            if float((y @ a).max()) > 1 + 1e-7 or float(np.abs(y[local] @ a - 1).max()) > 1e-7:
                raise VerificationError("a facet of a face is not a supporting hyperplane (float trouble).")
            sub = self.decompose(fv, [*chain, self.face_table(fv)], self.add_point(self.points[fv].mean(axis=0)))
            rows_out.append(np.concatenate([np.full((len(sub.rows), 1), center_id), sub.rows], axis=1))
            mult_out.append(sub.mult * n_orbit)
            vols_out.append(sub.vols / (float(np.linalg.norm(a)) * k))  # pyramid: height 1/|a| from c_P
            for ridge in sub.ridges:
                self._check_budget(f"rotating across ridges, {len(queue)} facet orbits of a face")
                li = np.array([pos[int(v)] for v in ridge], dtype=np.intp)
                add(np.flatnonzero(y @ rotate_facet(y, a, y[local], y[li]) >= 1 - _TIGHT))
        return FaceFan(
            [vidx[loc] for loc, _ in queue],
            np.vstack(rows_out).astype(np.intp),
            np.concatenate(mult_out),
            np.concatenate(vols_out),
        )


def rotate_facet(points: FloatArray, a: FloatArray, facet: FloatArray, ridge: FloatArray) -> FloatArray:
    r"""The neighbouring facet across a ridge (one gift-wrapping step); normals as :math:`a\cdot y\le1`.

    ``points``: all vertices (origin in the interior); ``a``: the facet's normal;
    ``facet`` / ``ridge``: the points on the facet and on its ridge. The
    hyperplane is turned about the ridge (direction ``m``, normal to the ridge's
    linear span, pointing away from the rest of the facet) until it meets
    another vertex: :math:`a + t^*m`, :math:`t^*=\min_{m\cdot p>0}(1-a\cdot p)/(m\cdot p)`.
    """
    m = np.linalg.svd(ridge)[2][-1]
    if float((facet @ m).sum()) > 0:  # the ridge's own points have p . m = 0
        m = -m
    den = points @ m
    mask = den > 1e-9
    tstar = float(((1.0 - points[mask] @ a) / den[mask]).min())
    return np.asarray(a + tstar * m, dtype=np.float64)


def simplex_volumes(points: FloatArray, rows: NDArray[np.intp]) -> FloatArray:
    r""":math:`|\det|/s!` of the cones conv(0, points[rows[j]])."""
    return np.asarray(np.abs(np.linalg.det(points[rows])) / math.factorial(rows.shape[1]), dtype=np.float64)


def check_volumes(points: FloatArray, rows: NDArray[np.intp], vols: FloatArray, *, sample: int = 4000) -> None:
    """Compare the chained pyramid volumes with determinants on a fixed sample of simplices (all of them
    when there are few); raise VerificationError beyond a relative error of 1e-8."""
    pick = np.arange(len(rows)) if len(rows) <= sample else np.random.default_rng(0).choice(len(rows), sample)
    det = simplex_volumes(points, rows[pick])
    if float(np.abs(det - vols[pick]).max()) > 1e-8 * float(vols.max()):
        raise VerificationError("fan volumes from the chain of pyramids disagree with determinants.")
