r"""The convex hull of a symmetric sensitivity space up to its table symmetry, as a fan of simplices.

Adjacency decomposition: one facet per orbit, each snapped to exact integer
normals and triangulated (recursively when too degenerate for qhull,
:mod:`accountant.geometry.face_fan`), with the orbit multiplicities that make uniform
sampling on :math:`K=\mathrm{conv}(S)` exact [CA24, Alg. 2].
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
from numpy.typing import NDArray
from scipy.optimize import linprog

from semidp.accountant.core.budget import Budget
from semidp.accountant.core.errors import SearchOutOfTime, SearchTooLarge, VerificationError
from semidp.accountant.core.progress import Progress
from semidp.accountant.geometry.face_fan import FaceDecomposer, check_volumes, rotate_facet
from semidp.accountant.geometry.knorm_certificates import SpanCertificate
from semidp.accountant.geometry.table_symmetry import TableSymmetry

FloatArray = NDArray[np.float64]


IntArray = NDArray[np.int64]


#: Largest rank s for which the symmetric build triangulates a facet beyond ``work_limit``
#: recursively (:mod:`accountant.geometry.face_fan`); above it such a facet is refused at once. s = 12 covers
#: every table with (r-1)(c-1) <= 12 (4x5 with 3-cycles included); at 5x5 (s = 16) the face lattice
#: is out of reach (>= 842 030 facets with the moves only), so refusing quickly is the useful answer.
RECURSION_MAX_RANK = 12


#: Largest number of table entries enumerated for one canonical form under
#: :class:`TableSymmetry` (``r! * 2 * 2 * r * c``; 8x8 is about 2.1e7).
VARIANT_LIMIT = 3e7


@dataclass
class SnappedFacet:
    """A facet orbit representative found by the adjacency decomposition."""

    num: IntArray  # integer normal (ambient), f = num / den
    den: int
    tight: NDArray[np.intp]
    normal: FloatArray  # Q^T f
    orbit: int


def snap_facet(q: FloatArray, a: FloatArray, u: IntArray, perp: IntArray, s: int) -> SnappedFacet:
    """Exact facet from a float polar vertex ``a``: rational normal, exact validity and tightness."""
    f = q @ a
    fr = [Fraction(float(x)).limit_denominator(10**6) for x in f]
    den = 1
    for x in fr:
        den = den * x.denominator // math.gcd(den, x.denominator)
    num = np.array([int(x * den) for x in fr], dtype=np.int64)
    g = math.gcd(den, *[int(x) for x in num])
    num, den = num // g, den // g
    vals = u @ num
    if vals.max() > den:
        raise VerificationError("snapped facet normal is not a valid inequality (float trouble).")
    if perp.size and np.any(perp @ num != 0):
        raise VerificationError("snapped facet normal is not in span(S) (float trouble).")
    tight = np.flatnonzero(vals == den)
    if np.linalg.matrix_rank(u[tight].astype(np.float64)) != s:
        raise VerificationError("snapped inequality is tight on a face of lower dimension, not a facet.")
    return SnappedFacet(num, int(den), tight, q.T @ (num.astype(np.float64) / den), 0)


def check_variant_size(sym: TableSymmetry) -> None:
    """Raise SearchTooLarge when canonical forms under ``sym`` (``r!`` row permutations, transposes, signs,
    times the cells) exceed :data:`VARIANT_LIMIT`: checked before any work on S."""
    n_variants = math.factorial(sym.rows) * (2 if sym.transposes else 1) * 2
    if n_variants * sym.rows * sym.cols > VARIANT_LIMIT:
        raise SearchTooLarge(
            f"canonical forms under {sym.rows}! row permutations",
            n_variants * sym.rows * sym.cols,
            VARIANT_LIMIT,
            "Orient the table with rows <= cols, or use containing_ball(space).",
        )


def symmetric_fan(
    cert: SpanCertificate,
    sym: TableSymmetry,
    *,
    orbit_limit: int,
    budget: Budget,
    fan_limit: int,
    expand_limit: int,
    facet_work_limit: float,
) -> tuple[list[SnappedFacet], FloatArray, NDArray[np.intp], FloatArray, IntArray, FloatArray | None]:
    """Adjacency decomposition of conv(S) up to ``sym`` within ``budget``; returns reps, fan points/simplices/volumes/mult,
    facets."""
    import collections

    import sympy

    t0 = time.monotonic()
    check_variant_size(sym)
    q, s = cert.orthonormal, cert.rank
    u = cert.nonzero
    pts = u.astype(np.float64) @ q
    perp_list = []
    for v in sympy.Matrix(cert.basis.T.tolist()).nullspace():  # exact basis of span(S)^perp
        fr = [Fraction(int(sympy.fraction(x)[0]), int(sympy.fraction(x)[1])) for x in v]
        lcm = math.lcm(*[x.denominator for x in fr])
        perp_list.append([int(x * lcm) for x in fr])
    perp = np.array(perp_list, dtype=np.int64).reshape(len(perp_list), u.shape[1])
    res = linprog(-pts[0], A_ub=pts, b_ub=np.ones(len(pts)), bounds=(None, None), method="highs-ds")
    if res.status != 0:  # pragma: no cover - bounded, feasible
        raise VerificationError(f"initial facet LP failed: {res.message}")
    first = snap_facet(q, np.asarray(res.x), u, perp, s)
    shape = (sym.rows, sym.cols)

    def key_of(fc: SnappedFacet) -> tuple[bytes, int]:
        k, stab = sym.canonical(fc.num.reshape(shape))
        return k + fc.den.to_bytes(16, "little"), stab

    k0, st0 = key_of(first)
    first.orbit = sym.order // st0
    reps = [first]
    seen = {k0}
    queue = collections.deque([first])
    progress = Progress("K-norm ball: facet orbits of conv(S) processed", 1)
    dec = FaceDecomposer(
        pts,
        u.reshape(-1, *shape).astype(np.int64),
        sym,
        facet_work_limit,
        budget.deadline,
        fan_limit,
        recurse=s <= RECURSION_MAX_RANK,
    )
    fan_idx: list[NDArray[np.intp]] = []
    fan_mult: list[IntArray] = []
    fan_vol: list[FloatArray] = []
    while queue:
        if budget.expired:
            raise SearchOutOfTime(
                f"facet orbits of conv(S) (found {len(reps)} so far)",
                time.monotonic() - t0,
                budget.deadline - t0,
                "Time budget (s) exceeded; use containing_ball(space).",
            )
        fc = queue.popleft()
        progress.total = len(reps)
        progress.update(len(reps) - len(queue), f"{len(reps)} facet orbits found")
        x = pts[fc.tight]
        a = fc.normal
        cidx = dec.add_point(x.mean(axis=0))  # relative interior point of the facet
        face = dec.decompose(fc.tight.astype(np.intp), [dec.face_table(fc.tight)], cidx, cone_simplex=True)
        fan_idx.append(face.rows)
        fan_mult.append(face.mult * fc.orbit)
        fan_vol.append(face.vols / (float(np.linalg.norm(a)) * s))  # cone from 0: height 1/|a|
        ridges = [np.searchsorted(fc.tight, r) for r in face.ridges]
        for ridge in ridges:
            if budget.expired:
                raise SearchOutOfTime(
                    f"facet orbits of conv(S) (found {len(reps)} so far)",
                    time.monotonic() - t0,
                    budget.deadline - t0,
                    "Time budget (s) exceeded; use containing_ball(space).",
                )
            nb = snap_facet(q, rotate_facet(pts, a, x, x[ridge]), u, perp, s)
            key, stab = key_of(nb)
            if key not in seen:
                seen.add(key)
                nb.orbit = sym.order // stab
                reps.append(nb)
                queue.append(nb)
                if len(reps) > orbit_limit:
                    raise SearchTooLarge(
                        "facet orbits of conv(S)",
                        len(reps),
                        orbit_limit,
                        "Use containing_ball(space) for an exact non-optimal mechanism.",
                    )
    total_facets = sum(fc.orbit for fc in reps)
    facets: FloatArray | None = None
    if total_facets <= expand_limit:
        facet_rows = []
        for fc in reps:
            imgs = sym.orbit(fc.num.reshape(shape)).reshape(-1, len(fc.num))
            if len(imgs) != fc.orbit:
                raise VerificationError(f"orbit size {len(imgs)} != |G|/|Stab| = {fc.orbit}.")
            facet_rows.append(imgs.astype(np.float64) / fc.den @ q)
        facets = np.vstack(facet_rows)
    progress.close()
    fpts = dec.all_points()
    rows = np.vstack(fan_idx)
    vols = np.concatenate(fan_vol)
    check_volumes(fpts, rows, vols)
    keep = vols > 1e-12 * float(vols.max())  # qhull Qt's flat simplices carry no volume
    return reps, fpts, rows[keep], vols[keep], np.concatenate(fan_mult)[keep], facets
