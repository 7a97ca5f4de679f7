r"""Re-verification of a stored optimal K-norm ball [CA24, Alg. 2, Thm. 31], without a convex hull.

Used by :mod:`accountant.geometry.knorm_cache` on every load: the privacy of the K-norm
sampler rests on the stored fan, so a file is never trusted. What is checked and
why it suffices is listed in the :mod:`accountant.geometry.knorm_cache` docstring
(:func:`verify_knorm_ball`).
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
from numpy.typing import NDArray
from scipy.spatial import cKDTree

from semidp.accountant.core.errors import InvalidArgument, VerificationError
from semidp.accountant.geometry.knorm import KNormBall
from semidp.accountant.geometry.table_symmetry import TableSymmetry

_TOL = 1e-9  # same one-sided tolerance as accountant.geometry.knorm.GEOMETRY_RTOL
_MATCH = 1e-7  # distance under which two stored facet normals are the same
IntArray = NDArray[np.int64]
FloatArray = NDArray[np.float64]
Partner = tuple[NDArray[np.bool_], NDArray[np.intp], NDArray[np.intp]]

__all__ = ["verify_knorm_ball"]


def _require(ok: bool, msg: str) -> None:
    if not ok:
        raise VerificationError(msg)


class _Lookup:
    """Find rows of ``table`` within ``_MATCH`` of query rows: a dict of rows rounded to 7 decimals,
    with a KD-tree for the rare query whose rounding differs (a value at a rounding boundary)."""

    def __init__(self, table: FloatArray) -> None:
        self.table = table
        self.index = {r.tobytes(): i for i, r in enumerate(np.round(table, 7) + 0.0)}
        self.tree: cKDTree | None = None

    def find(self, x: FloatArray) -> NDArray[np.intp]:
        """Index of the matching row of the table for each row of ``x`` (-1 if none)."""
        out = np.array([self.index.get(r.tobytes(), -1) for r in np.round(x, 7) + 0.0], dtype=np.intp)
        miss = np.flatnonzero(out < 0)
        if len(miss) and len(self.table):
            self.tree = cKDTree(self.table) if self.tree is None else self.tree
            dist, idx = self.tree.query(x[miss])
            out[miss] = np.where(dist <= _MATCH, idx, -1)
        return out


def _row_ids(a: NDArray[np.int64]) -> tuple[NDArray[np.intp], NDArray[np.intp]]:
    """For the rows of a non-negative integer matrix: an id per row (equal rows, equal ids) and the
    count of each id. Columns are packed exactly into as few 62-bit words as possible, then sorted."""
    words: list[NDArray[np.int64]] = []
    cur, used = np.zeros(len(a), dtype=np.int64), 0
    for col in a.T:
        b = max(1, int(col.max(initial=0)).bit_length())
        if used + b > 62:
            words.append(cur)
            cur, used = np.zeros(len(a), dtype=np.int64), 0
        cur = (cur << b) | col.astype(np.int64)
        used += b
    packed = np.stack([*words, cur], axis=1)
    order = np.lexsort(packed.T[::-1])
    srt = packed[order]
    new = np.concatenate([[True], np.any(srt[1:] != srt[:-1], axis=1)])
    ids = np.empty(len(a), dtype=np.intp)
    ids[order] = np.cumsum(new) - 1
    return ids, np.bincount(ids).astype(np.intp)


def _on_other_facet(tight: NDArray[np.bool_], pts: NDArray[np.intp], partner: Partner | None) -> NDArray[np.bool_]:
    """Row j: is a second stored facet tight on all points ``pts[j]`` (``tight``: points x facets)?
    With ``partner = (table, row, excluded)`` it must be in ``table[row[j]]`` and not ``excluded[j]``.
    Bit-packed incidence rows (restricted to the allowed columns), AND-ed over the points."""
    ok = np.zeros(len(pts), dtype=bool)
    groups: list[tuple[NDArray[np.intp], NDArray[np.intp], NDArray[np.intp] | None]]
    if partner is None:
        groups = [(np.arange(len(pts)), np.arange(tight.shape[1]), None)]
    else:
        table, row, excluded = partner
        groups = [(np.flatnonzero(row == r), np.flatnonzero(table[r]), excluded) for r in np.unique(row)]
    for sel_all, cols, ex_all in groups:
        packed = np.packbits(tight[:, cols], axis=1)
        for c0 in range(0, len(sel_all), 1 << 15):
            sel = sel_all[c0 : c0 + (1 << 15)]
            acc = np.full((len(sel), packed.shape[1]), 255, dtype=np.uint8)
            for k in range(pts.shape[1]):
                acc &= packed[pts[sel, k]]
            if ex_all is None:  # the facet of the simplex itself is one of them
                ok[sel] = np.bitwise_count(acc).sum(axis=1) >= 2
                continue
            ex = np.searchsorted(cols, ex_all[sel])  # clear the excluded facet's bit (big-endian order)
            acc[np.arange(len(sel)), ex >> 3] &= np.invert(np.left_shift(1, 7 - (ex & 7)).astype(np.uint8))
            ok[sel] = acc.any(axis=1)
    return ok


def verify_knorm_ball(ball: KNormBall) -> None:
    r"""Re-verify a :class:`KNormBall` from its arrays alone ([CA24, Alg. 2]'s ball conv(S)).

    The checks are listed in the module docstring; together they show that the
    facets describe :math:`Q^\top\operatorname{conv}(S)` and that the fan (with
    its symmetry images) tiles it, so the sampler of :mod:`mechanisms.knorm` is
    uniform on it. Cost: determinants and inverses of the ``(t, s, s)`` fan
    simplices and bit-packed incidence tests; no convex hull.

    Raises
    ------
    VerificationError
        Naming the first check that failed.
    """
    sp, q = ball.space, ball.basis
    u = sp.array
    nz = u[np.any(u != 0, axis=1)]
    d = sp.dimension
    _require(q.ndim == 2 and q.shape[0] == d and 1 <= q.shape[1] <= d, f"basis shape {q.shape}.")
    s = q.shape[1]
    _require(float(np.abs(q.T @ q - np.eye(s)).max()) <= _TOL, "basis is not orthonormal.")
    pts = nz.astype(np.float64) @ q
    res = np.linalg.norm(nz - pts @ q.T, axis=1)
    _require(bool(np.all(res <= _TOL * np.linalg.norm(nz, axis=1))), "an element of S is not in span(basis).")
    _require(int(np.linalg.matrix_rank(pts)) == s, "basis has more columns than rank(S).")
    vv, verts, fp, facets = ball.vertex_vectors, ball.vertices, ball.fan_points, ball.facets
    m = len(verts)
    _require(vv.shape == (m, d) and verts.shape == (m, s) and m >= 2, "vertex arrays have the wrong shape.")
    vset = {tuple(int(x) for x in row) for row in vv}
    _require(
        len(vset) == m and vset <= set(sp.vectors) and (0,) * d not in vset,
        "vertices are not distinct nonzero elements of S.",
    )
    _require(float(np.abs(verts - vv.astype(np.float64) @ q).max()) <= _TOL, "vertices != Q^T vertex_vectors.")
    _require(
        fp.ndim == 2 and fp.shape[1] == s and len(fp) >= m and np.array_equal(fp[:m], verts),
        "fan points do not start with the vertices.",
    )
    # facets: the construction checks of KNormBall._check (volume aside)
    _require(facets.ndim == 2 and facets.shape[1] == s and len(facets) >= 2, "facets have the wrong shape.")
    sym = ball.symmetry
    _require(
        sym is None or len(facets) == sum(ball.facet_orbit_sizes),
        "facets are not expanded (expand_limit): the ball cannot be re-verified cheaply.",
    )
    _require(float((pts @ facets.T).max()) <= 1 + _TOL, "an element of S has facet gauge > 1.")
    _require(float((verts @ facets.T).max(axis=1).min()) >= 1 - _TOL, "a vertex has facet gauge < 1.")
    look = _Lookup(facets)
    _require(len(look.index) == len(facets), "two stored facets coincide.")
    _require(bool(np.all(look.find(-facets) >= 0)), "facets are not symmetric (K = -K fails).")
    # fan: volumes and CDF
    fan, mult = np.asarray(ball.fan, dtype=np.intp), np.asarray(ball.fan_multiplicity)
    t = len(fan)
    _require(
        t >= 1
        and fan.shape == (t, s)
        and ball.fan_volumes.shape == mult.shape == ball.fan_cdf.shape == (t,)
        and int(fan.min()) >= 0
        and int(fan.max()) < len(fp)
        and int(mult.min()) >= 1,
        "fan arrays have the wrong shape or range.",
    )
    cdf = np.cumsum(ball.fan_volumes * mult)  # as KNormBall._assemble computes it
    _require(
        float(np.abs(ball.fan_cdf - cdf / cdf[-1]).max()) <= 1e-12 and abs(ball.volume - cdf[-1]) <= 1e-12 * cdf[-1],
        "fan CDF or volume differ from the fan volumes and multiplicities.",
    )
    rows = np.sort(fan, axis=1)
    _require(  # checked before the (t, s, s) determinants, which would cost gigabytes for nothing
        sym is None or int((rows >= m).sum(axis=1).max()) <= 1,
        "the fan has simplices with more than one centroid (recursive decomposition, "
        "accountant.geometry.face_fan): re-verification covers one-level fans only, so such a ball is not stored.",
    )
    _require(
        bool(np.all(np.diff(rows, axis=1) > 0)) and bool(np.all(_row_ids(rows)[1] == 1)),
        "a fan simplex repeats a point, or two simplices coincide.",
    )
    w = fp[rows]
    det = np.linalg.det(w)
    vols = np.abs(det) / math.factorial(s)
    _require(
        float(vols.max()) > 0 and float(np.abs(vols - ball.fan_volumes).max()) <= _TOL * float(vols.max()),
        "stored fan volumes differ from |det|/s! of the fan points.",
    )
    flat = np.abs(det) <= _TOL * float(np.abs(det).max())  # e.g. qhull Qt's zero-volume simplices
    _require(float(ball.fan_volumes[flat].sum()) <= _TOL * ball.volume, "flat fan simplices carry volume.")
    nd = np.flatnonzero(~flat)
    # tiling
    wn = w[nd]
    inv = np.asarray(np.linalg.inv(wn), dtype=np.float64)
    fid = np.maximum(look.find(inv.sum(axis=2)), 0)  # the facet through the s points: W a = 1
    _require(
        float(np.abs(np.einsum("tks,ts->tk", wn, facets[fid]) - 1).max()) <= _TOL,
        "a fan simplex does not lie on a stored facet.",
    )
    tight = (np.vstack([pts, fp[m:]]) if sym is not None else pts) @ facets.T >= 1 - _TOL
    local = np.full(len(fp), -1, dtype=np.intp)  # fan point -> row of ``tight``
    pos = {tuple(int(x) for x in r): i for i, r in enumerate(nz)}
    local[:m] = [pos[tuple(int(x) for x in r)] for r in vv]
    if sym is None:
        _require(
            len(fp) == m and ball.facet_orbit_sizes == () and bool(np.all(mult == 1)),
            "a ball without symmetry has centroids, orbits or multiplicities.",
        )
        _require(len(np.unique(fid)) == len(facets), "a stored facet carries no fan simplex.")
        _tiling(rows[nd], wn, inv, fid.astype(np.int64), local, tight, None)
        return
    local[m:] = len(pts) + np.arange(len(fp) - m)
    _verify_symmetric(ball, sym, rows, wn, nd, inv, fid, local, tight, pts, look)


def _tiling(
    rows: NDArray[np.intp],
    w: FloatArray,
    inv: FloatArray,
    group: NDArray[np.int64],
    local: NDArray[np.intp],
    tight: NDArray[np.bool_],
    partner: Partner | None,
) -> None:
    r"""Non-degenerate simplices (cones from 0, rows sorted) tile their groups (degree argument).

    Without symmetry (``partner`` None) a group is a facet F of K. With it, a group is a ridge
    :math:`R=F\cap G` of a representative facet and each simplex is conv(0, centroid of F,
    base in R), centroid last. A wall drops one non-centroid point. A wall met twice in a group
    must have its two simplices on opposite sides. A wall met once must lie on the boundary of its
    group, shown by a facet tight on its points: a second facet of K (without symmetry), or a
    triangulated ridge of F other than R (``partner``; each face of F of dimension s - 3 lies in
    exactly two ridges of F, so this also shows that no ridge of F lacks simplices). Then the
    covering number is constant on each group; one probe per group covered once makes it 1.
    """
    t, s = rows.shape
    _require(t > 0, "the fan has no non-degenerate simplex.")
    npos = s if partner is None else s - 1
    keys = np.concatenate([np.concatenate([group[:, None], np.delete(rows, k, axis=1)], axis=1) for k in range(npos)])
    ids, counts = _row_ids(keys)
    _require(bool(np.all(counts <= 2)), "a wall of the fan is shared by more than two simplices.")
    own, kp = np.tile(np.arange(t), npos), np.repeat(np.arange(npos), t)
    once = np.flatnonzero(counts[ids] == 1)
    pts = local[rows[own[once], :npos]]
    wall_pts = pts[np.arange(npos)[None, :] != kp[once][:, None]].reshape(len(once), npos - 1)
    part = None if partner is None else (partner[0], partner[1][own[once]], partner[2][own[once]])
    _require(
        bool(np.all(_on_other_facet(tight, wall_pts, part))),
        "an unshared wall of the fan is not on the boundary of its facet or ridge.",
    )
    twice = np.flatnonzero(counts[ids] == 2)
    order = twice[np.argsort(ids[twice], kind="stable")]
    a, b = order[0::2], order[1::2]
    _require(
        bool(np.all(np.einsum("ij,ij->i", inv[own[a], :, kp[a]], inv[own[b], :, kp[b]]) < 0)),
        "two fan simplices sharing a wall lie on the same side of it (overlap).",
    )
    gid, first = np.unique(group, return_index=True)
    where = np.searchsorted(gid, group)
    lam = np.einsum("ts,tsk->tk", w[first].mean(axis=1)[where], inv)  # probe: barycentre of one simplex
    _require(
        bool(np.all(np.bincount(where, weights=np.all(lam >= -_TOL, axis=1)) == 1)),
        "a probe point is not covered exactly once by the fan simplices of its facet.",
    )


def _orbit(sym: TableSymmetry, f: FloatArray) -> tuple[bytes, int]:
    """Canonical key and orbit size of the ambient facet normal ``f`` (snapped to its rational value)."""
    fr = [Fraction(float(x)).limit_denominator(10**6) for x in f]
    den = math.lcm(*[x.denominator for x in fr])
    num = np.array([int(x * den) for x in fr], dtype=np.int64)
    g = math.gcd(den, *[int(x) for x in num])
    num, den = num // g, den // g
    _require(
        float(np.abs(num / den - f).max()) <= 1e-9 * max(1.0, float(np.abs(f).max())),
        "a facet normal is not a small rational vector.",
    )
    key, stab = sym.canonical(num.reshape(sym.rows, sym.cols))
    _require(sym.order % stab == 0, "stabiliser order does not divide the group order.")
    return key + den.to_bytes(16, "little"), sym.order // stab


def _verify_symmetric(
    ball: KNormBall,
    sym: TableSymmetry,
    rows: NDArray[np.intp],
    w: FloatArray,
    nd: NDArray[np.intp],
    inv: FloatArray,
    fid: NDArray[np.intp],
    local: NDArray[np.intp],
    tight: NDArray[np.bool_],
    pts: FloatArray,
    look: _Lookup,
) -> None:
    """Checks of a ball built up to ``sym``: orbits, group invariance, ridges (cones from facet centroids)."""
    try:
        sym.check_invariant(ball.space)
    except InvalidArgument as e:
        raise VerificationError(str(e)) from e
    q, facets, m, s, n_fp = ball.basis, ball.facets, len(ball.vertices), ball.dimension, len(ball.fan_points)
    _require(m == len(pts) and n_fp > m, "symmetric ball: vertices must be all of S, plus centroids.")
    _require(
        bool(np.all(rows[:, -1] >= m)) and bool(np.all(rows[:, -2] < m)),
        "a fan simplex does not have exactly one centroid.",
    )
    cen = rows[:, -1]
    ucen, first = np.unique(cen[nd], return_index=True)  # one facet per centroid, every centroid used
    _require(
        len(ucen) == n_fp - m and bool(np.all(fid == fid[first][np.searchsorted(ucen, cen[nd])])),
        "fan simplices around one centroid lie on different facets, or a centroid is unused.",
    )
    reps = fid[first]
    _require(len(np.unique(reps)) == len(reps), "two centroids on one facet.")
    size_of = np.full(n_fp, -1, dtype=np.int64)
    keys: set[bytes] = set()
    for c_idx, f_idx in zip(ucen.tolist(), reps.tolist()):
        _require(
            float(np.abs(ball.fan_points[c_idx] - pts[tight[:m, f_idx]].mean(axis=0)).max()) <= _TOL,
            "a centroid is not the vertex centroid of its facet.",
        )
        key, size_of[c_idx] = _orbit(sym, q @ facets[f_idx])
        _require(key not in keys, "two representative facets lie in one orbit.")
        keys.add(key)
    sizes = size_of[ucen]
    _require(
        bool(np.array_equal(size_of[cen], ball.fan_multiplicity)), "fan multiplicities != orbit sizes of their facets."
    )
    _require(
        sorted(sizes.tolist()) == sorted(ball.facet_orbit_sizes) and int(sizes.sum()) == len(facets),
        "facet orbit sizes do not match the stored facets.",
    )
    # the facet list is invariant under the generators of the group (so it is the union of the orbits)
    amb = (facets @ q.T).reshape(-1, sym.rows, sym.cols)
    r, c = sym.rows, sym.cols
    gens = [
        amb[:, [1, 0, *range(2, r)], :],
        amb[:, [*range(1, r), 0], :],
        amb[:, :, [1, 0, *range(2, c)]],
        amb[:, :, [*range(1, c), 0]],
        -amb,
    ]
    if sym.transposes:
        gens.append(amb.transpose(0, 2, 1))
    for g in gens:
        _require(
            bool(np.all(look.find(g.reshape(len(facets), -1) @ q) >= 0)),
            "the stored facets are not invariant under the symmetry group.",
        )
    # ridges: the base B (non-centroid points) of each simplex lies on F and one other stored facet G.
    # a_G = a_F + tau m, m the dual vector of the centroid (m.b = 0 on B, m.c = 1), tau < 0: the unit
    # vector of a_G - a_F is -m/|m|, looked up among the facets sharing s - 1 points with F.
    other = np.full(len(nd), -1, dtype=np.intp)
    m_dir = -inv[:, :, -1] / np.linalg.norm(inv[:, :, -1], axis=1)[:, None]
    for f_idx in reps.tolist():
        on_f = np.flatnonzero(tight[:m, f_idx])
        cand = np.flatnonzero(tight[on_f].sum(axis=0) >= max(s - 1, 1))
        cand = cand[cand != f_idx]
        diff = facets[cand] - facets[f_idx]
        sel = np.flatnonzero(fid == f_idx)
        hit = _Lookup(diff / np.linalg.norm(diff, axis=1)[:, None]).find(m_dir[sel])
        other[sel] = np.where(hit >= 0, cand[hit], -1)
    _require(
        bool(np.all(other >= 0)) and float(np.abs(np.einsum("tks,ts->tk", w[:, :-1], facets[other]) - 1).max()) <= _TOL,
        "a fan simplex's base does not lie on a ridge of K.",
    )
    rep_row = np.searchsorted(np.sort(reps), fid)
    table = np.zeros((len(reps), len(facets)), dtype=bool)
    table[rep_row, other] = True  # the triangulated ridges F∩G of each representative F
    _require(s > 2 or bool(np.all(table.sum(axis=1) == 2)), "a facet (a segment) lacks an end.")
    _tiling(rows[nd], w, inv, fid.astype(np.int64) * len(facets) + other, local, tight, (table, rep_row, other))
