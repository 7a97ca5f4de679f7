r"""The optimal K-norm ball of a :math:`2\times c` table under both one-way margins, in closed form.

For a :math:`2\times c` table (row-major cells) with both margins invariant,
the Semi-DP sensitivity space ([CA24, Prop. 32]; there are no
3-cycles with two rows, docs/reference/semi-dp.md T-S2b) is

.. math:: S=\{0\}\cup\{(v,-v): v=e_j-e_k,\ j\ne k\}\subset\mathbb Z^{2c},

:math:`V=\operatorname{span}(S)=\{(v,-v):\sum v=0\}`, :math:`s=c-1`. Via
:math:`v\mapsto(v,-v)`, :math:`K=\operatorname{conv}(S)` is the type-A root
polytope :math:`P=\operatorname{conv}\{e_j-e_k\}\subset\{\sum x=0\}`. Its
facets are indexed by the nonempty proper subsets :math:`I\subset[c]`:

.. math:: F_I=\{x\in P:\textstyle\sum_{i\in I}x_i=1\}
          =\{\alpha-\beta:\alpha\in\Delta_I,\ \beta\in\Delta_{I^c}\},

so there are :math:`2^c-2` of them and the gauge is
:math:`\|x\|_P=\max_I\sum_{i\in I}x_i=\tfrac12\sum_i|x_i|` on
:math:`\{\sum x=0\}`. In the ambient space,
:math:`\|(v,-v)\|_K=\tfrac12\|v\|_1=\tfrac14\|(v,-v)\|_1`: on :math:`V` the
optimal ball is the section of the :math:`\ell_1` ball of radius
:math:`\Delta_1=4`.

Uniform sampling (exact, no hull): :math:`P` is the union of the cones
:math:`\operatorname{conv}(0,F_I)` with disjoint interiors. With
:math:`k=|I|`, the height of :math:`F_I` over 0 inside :math:`\{\sum x=0\}` is
:math:`h_k=\sqrt{c/(k(c-k))}` (normal :math:`1_I-\tfrac kc\mathbf 1`) and
:math:`\mathrm{vol}_{c-2}F_I=\frac{\sqrt k}{(k-1)!}\frac{\sqrt{c-k}}{(c-k-1)!}`
(a product of simplices in orthogonal coordinate blocks), so

.. math:: \mathrm{vol}\operatorname{conv}(0,F_I)=\frac{h_k\,\mathrm{vol}F_I}{c-1}
          =\frac{\sqrt c}{(c-1)\,(k-1)!\,(c-k-1)!},\qquad
          \Pr[|I|=k]=\binom ck\binom{c-2}{k-1}\Big/\binom{2c-2}{c-1}

(Vandermonde: :math:`\sum_k\binom ck\binom{c-2}{k-1}=\binom{2c-2}{c-1}`), hence
:math:`\mathrm{vol}P=\sqrt c\binom{2c-2}{c-1}/(c-1)!`: normalised volume
:math:`\binom{2c-2}{c-1}`, the known value for the type-A root polytope (stated
e.g. by Ardila, Beck, Hoşten, Pfeifle & Seashore, "Root polytopes:
triangulations and their Ehrhart series", 2011; not relied on here, checked
against qhull in the tests). A uniform point is :math:`W^{1/(c-1)}(\alpha-\beta)`
with :math:`k` drawn as above, :math:`I` a uniformly random :math:`k`-subset,
:math:`\alpha\sim\mathrm{Dir}(1_k)` on :math:`I`,
:math:`\beta\sim\mathrm{Dir}(1_{c-k})` on :math:`I^c`,
:math:`W\sim U(0,1)`: the affine map :math:`(\alpha,\beta)\mapsto\alpha-\beta`
sends the uniform law of :math:`\Delta_I\times\Delta_{I^c}` to the uniform law
of :math:`F_I`, and :math:`tY` with :math:`t` of density :math:`(c-1)t^{c-2}`
is uniform on the cone over a uniform facet point :math:`Y`.

Coordinates: :math:`Q=\frac1{\sqrt2}\begin{pmatrix}H\\-H\end{pmatrix}` with
:math:`H` the :math:`c\times(c-1)` Helmert basis of :math:`\{\sum v=0\}`
(column :math:`k`: :math:`(1,\dots,1,-k,0,\dots,0)/\sqrt{k(k+1)}`), so
:math:`y=Q^\top(v,-v)=\sqrt2H^\top v` and :math:`v=Hy/\sqrt2`. For :math:`c=2`
this is reference T-S5's :math:`q=\frac12(1,-1,-1,1)`. Any orthonormal basis
gives the same mechanism [CA24, Prop. 30].

References
----------
[CA24] Cho & Awan, arXiv:2410.17468v1: Prop. 7, Prop. 30, Alg. 2, Thm. 31, Prop. 32.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field
from fractions import Fraction
from functools import cached_property

import numpy as np
from numpy.typing import ArrayLike, NDArray

from semidp.accountant.core.arguments import check_int
from semidp.accountant.core.errors import InvalidArgument, VerificationError
from semidp.accountant.geometry.knorm import GEOMETRY_RTOL
from semidp.accountant.geometry.span_coordinates import SpanCoordinates
from semidp.accountant.guarantees.relations import Relation
from semidp.accountant.sensitivity.spaces import SensitivitySpace, table_space

FloatArray = NDArray[np.float64]

#: Rows generated at once by :meth:`RootPolytopeBall.sample_uniform` (bounds memory).
SAMPLE_CHUNK = 1 << 16

#: The ``method`` label of every :class:`RootPolytopeBall`.
METHOD = "closed form: type-A root polytope"


def helmert_basis(c: int) -> FloatArray:
    r"""The ``(c, c-1)`` Helmert basis of :math:`\{v\in\mathbb R^c:\sum v=0\}` (orthonormal columns).

    Column :math:`k=1..c-1` is :math:`(1,\dots,1,-k,0,\dots,0)/\sqrt{k(k+1)}`
    (:math:`k` ones).

    Examples
    --------
    >>> np.round(helmert_basis(3) * np.sqrt(6), 6)
    array([[ 1.732051,  1.      ],
           [-1.732051,  1.      ],
           [ 0.      , -2.      ]])
    """
    check_int("c", c, minimum=2)
    h = np.zeros((c, c - 1))
    for k in range(1, c):
        h[:k, k - 1] = 1.0
        h[k, k - 1] = -float(k)
        h[:, k - 1] /= math.sqrt(k * (k + 1))
    return h


def facet_size_weights(c: int) -> tuple[int, ...]:
    r"""Exact integer weights :math:`\binom ck\binom{c-2}{k-1}`, :math:`k=1..c-1`, of the facet cones by size.

    :math:`\Pr[|I|=k]` is the weight over :math:`\binom{2c-2}{c-1}` (their sum,
    Vandermonde); the weight is :math:`(c-2)!\,(c-1)/\sqrt c` times the total
    volume of the :math:`\binom ck` cones :math:`\operatorname{conv}(0,F_I)`, :math:`|I|=k`.

    Examples
    --------
    >>> facet_size_weights(4), math.comb(6, 3)
    ((4, 12, 4), 20)
    """
    check_int("c", c, minimum=2)
    return tuple(math.comb(c, k) * math.comb(c - 2, k - 1) for k in range(1, c))


def root_polytope_log_volume(c: int) -> float:
    r""":math:`\log\mathrm{vol}_{c-1}K'` of the ball in the coordinates :math:`y=Q^\top x`.

    :math:`\mathrm{vol}K'=2^{(c-1)/2}\sqrt c\binom{2c-2}{c-1}/(c-1)!` (the root
    polytope's volume :math:`\sqrt c\binom{2c-2}{c-1}/(c-1)!` in
    :math:`\{\sum v=0\}`, times :math:`\sqrt2^{\,c-1}` because
    :math:`y=\sqrt2H^\top v`). Natural log, float (log of an exact integer).

    Examples
    --------
    >>> round(math.exp(root_polytope_log_volume(3)), 9)      # 2 * sqrt(3) * 6 / 2
    10.392304845
    """
    check_int("c", c, minimum=2)
    return 0.5 * (c - 1) * math.log(2.0) + 0.5 * math.log(c) + math.log(math.comb(2 * c - 2, c - 1)) - math.lgamma(c)


def two_row_moves(c: int) -> frozenset[tuple[int, ...]]:
    r"""The set :math:`\{0\}\cup\{(v,-v): v=e_j-e_k, j\ne k\}` (length :math:`2c`): [CA24, Prop. 32] for 2 rows."""
    check_int("c", c, minimum=2)
    out = {(0,) * (2 * c)}
    for j, k in itertools.permutations(range(c), 2):
        v = [0] * c
        v[j], v[k] = 1, -1
        out.add(tuple(v + [-x for x in v]))
    return frozenset(out)


def _why_not_two_row(space: SensitivitySpace) -> str | None:
    """None if ``space`` is exactly the 2 x c moves set, else the reason (exact integer comparison)."""
    d = space.dimension
    if d % 2 or d < 4:
        return (
            f"its vectors have length {d}, which is not 2c for a 2 x c table with c >= 2 "
            f"(row-major cells: first row, then second row)."
        )
    c = d // 2
    want = c * (c - 1) + 1
    for u in space.vectors:
        top, bottom = u[:c], u[c:]
        if any(b != -t for t, b in zip(top, bottom)):
            return (
                f"the vector {list(u)} is not of the form (v, -v) (second row = minus the first row), "
                f"so the space is not that of a 2 x {c} table under both one-way margins "
                "(a c x 2 table must be transposed to 2 x c first)."
            )
        if any(top) and (sorted(top) != [-1] + [0] * (c - 2) + [1]):
            return (
                f"the vector {list(u)} has first row {list(top)}, which is not e_j - e_k: the space "
                f"is not the moves set of a 2 x {c} table (e.g. group-inflated or a larger radius)."
            )
    if space.size != want:
        return (
            f"it has {space.size} vectors, but the 2 x {c} moves set has c(c - 1) + 1 = {want}; "
            "some moves e_j - e_k are missing."
        )
    return None


@dataclass(frozen=True, eq=False)
class RootPolytopeBall(SpanCoordinates):
    r"""Optimal K-norm ball :math:`K'=Q^\top\operatorname{conv}(S)` of a :math:`2\times c` table, in closed form.

    The same ball as :meth:`accountant.geometry.knorm.KNormBall.from_space` on
    ``table_space(2, c)`` (up to the choice of orthonormal basis, Cho & Awan
    Prop. 30), without a convex hull: gauge, volume, facet count and an exact
    vectorised uniform sampler come from the type-A root polytope (module
    notes). Setup is :math:`O(c^2)` for the basis; the sensitivity space itself
    (:math:`c(c-1)+1` vectors) is only built when :attr:`space` is read.

    Build with :meth:`for_table` or :meth:`from_space`. Coordinates:
    ``y = basis.T @ x``, ``x = basis @ y``.

    Examples
    --------
    >>> from semidp.accountant.sensitivity.spaces import table_space
    >>> b = RootPolytopeBall.from_space(table_space(2, 3))      # reference T-S2b: 7 vectors
    >>> b.dimension, b.facet_count, round(b.volume, 9)
    (2, 6, 10.392304845)
    >>> y = b.coordinates([[1, -1, 0, -1, 1, 0]])
    >>> round(float(b.gauge(y)[0]), 12), b.exact_gauge([2, 0, -2, -2, 0, 2])
    (1.0, Fraction(2, 1))
    """

    columns: int
    """Number of columns c of the 2 x c table (c >= 2)."""
    relation: Relation | None = None
    """The relation on which the space is the sensitivity space (needed for a privacy map)."""
    basis: FloatArray = field(init=False, repr=False)
    r"""``(2c, c-1)`` orthonormal basis :math:`Q=\frac1{\sqrt2}(H;-H)` of span(S)."""
    helmert: FloatArray = field(init=False, repr=False)
    """``(c, c-1)`` Helmert basis H of the zero-sum hyperplane (``v = helmert @ y / sqrt(2)``)."""
    facet_size_cdf: FloatArray = field(init=False, repr=False)
    """``(c-1,)`` cumulative P[|I| <= k], k = 1..c-1 (from exact integers; last entry exactly 1)."""

    def __post_init__(self) -> None:
        c = check_int("columns", self.columns, minimum=2)
        h = helmert_basis(c)
        object.__setattr__(self, "helmert", h)
        object.__setattr__(self, "basis", np.vstack([h, -h]) / math.sqrt(2.0))
        w = facet_size_weights(c)
        total = math.comb(2 * c - 2, c - 1)
        if sum(w) != total:  # pragma: no cover - Vandermonde's identity
            raise VerificationError(f"facet weights sum to {sum(w)}, not C(2c-2, c-1) = {total}.")
        acc = itertools.accumulate(w)
        cdf = np.array([float(Fraction(a, total)) for a in acc])
        cdf[-1] = 1.0
        object.__setattr__(self, "facet_size_cdf", cdf)

    # -- construction -----------------------------------------------------------------

    @classmethod
    def for_table(cls, c: int, *, relation: Relation | None = None) -> RootPolytopeBall:
        r"""The ball of a :math:`2\times c` table under both one-way margins (``table_space(2, c)``, radius 2 or 3).

        Examples
        --------
        >>> RootPolytopeBall.for_table(50).dimension
        49
        """
        return cls(check_int("c", c, minimum=2), relation)

    @classmethod
    def from_space(cls, space: SensitivitySpace, *, relation: Relation | None = None) -> RootPolytopeBall:
        r"""The ball of ``space``, after checking exactly that it **is** the :math:`2\times c` moves set.

        Raises
        ------
        InvalidArgument
            ``space`` differs from :math:`\{0\}\cup\{(v,-v):v=e_j-e_k\}` (the
            message says how); use :meth:`accountant.geometry.knorm.KNormBall.from_space`
            for other spaces.
        """
        why = _why_not_two_row(space)
        if why is not None:
            raise InvalidArgument(
                f"RootPolytopeBall needs the sensitivity space of a 2 x c table under both one-way margins; "
                f"this one is not: {why} Use accountant.geometry.knorm.KNormBall.from_space (or containing_ball) instead."
            )
        ball = cls(space.dimension // 2, relation)
        object.__setattr__(ball, "space", space)  # seed the cache with the caller's (equal) space
        return ball

    @cached_property
    def space(self) -> SensitivitySpace:
        """The sensitivity space S (``table_space(2, c)``; built on first access, ``c(c-1)+1`` vectors)."""
        return table_space(2, self.columns, radius=2)

    # -- descriptors --------------------------------------------------------------------

    @property
    def method(self) -> str:
        """How the ball was built: ``"closed form: type-A root polytope"``."""
        return METHOD

    @property
    def label(self) -> str:
        """Human-readable description (optimal ball conv(S))."""
        return f"OPTIMAL K-norm ball conv(S) of a 2 x {self.columns} table ({METHOD})"

    @property
    def dimension(self) -> int:
        r""":math:`s=c-1`."""
        return self.columns - 1

    @property
    def ambient_dimension(self) -> int:
        """:math:`d=2c`."""
        return 2 * self.columns

    @property
    def facet_count(self) -> int:
        """:math:`2^c-2` (one facet per nonempty proper subset of the columns)."""
        return (1 << self.columns) - 2

    @property
    def log_volume(self) -> float:
        """Natural log of :attr:`volume` (finite for every c)."""
        return root_polytope_log_volume(self.columns)

    @property
    def volume(self) -> float:
        r""":math:`\mathrm{vol}_{c-1}K'=2^{(c-1)/2}\sqrt c\binom{2c-2}{c-1}/(c-1)!` (float; 0.0 beyond c ~ 250)."""
        return math.exp(self.log_volume)

    # -- coordinates and gauges ---------------------------------------------------------

    def cells(self, y: ArrayLike) -> FloatArray:
        r"""First-row cell vector :math:`v=Hy/\sqrt2` of coordinates ``y`` (the ambient point is ``(v, -v)``)."""
        arr = np.asarray(y, dtype=np.float64)
        if arr.shape[-1] != self.dimension:
            raise InvalidArgument(f"points must have {self.dimension} coordinates; got shape {arr.shape}.")
        return np.asarray(arr @ self.helmert.T / math.sqrt(2.0), dtype=np.float64)

    def gauge(self, y: ArrayLike) -> FloatArray:
        r""":math:`\|y\|_{K'}=\tfrac12\|v\|_1=\|Hy\|_1/(2\sqrt2)` for rows of ``y`` (shape ``y.shape[:-1]``)."""
        return np.asarray(np.abs(self.cells(y)).sum(axis=-1) / 2.0, dtype=np.float64)

    def contains(self, y: ArrayLike, *, rtol: float = GEOMETRY_RTOL) -> NDArray[np.bool_]:
        """Membership ``gauge(y) <= 1 + rtol``."""
        return self.gauge(y) <= 1 + rtol

    def sensitivity(self, vectors: ArrayLike) -> float:
        r"""K-norm sensitivity :math:`\max_u\|Q^\top u\|_{K'}` of ambient vectors (rows), float."""
        return float(self.gauge(self.coordinates(vectors)).max())

    def exact_gauge(self, x: ArrayLike) -> Fraction:
        r"""Exact :math:`\|x\|_K=\tfrac14\|x\|_1` of an integer ambient vector :math:`x\in V`.

        Raises
        ------
        InvalidArgument
            ``x`` is not an integer vector of length :math:`2c` of the form
            :math:`(v,-v)` with :math:`\sum v=0` (exact check).
        """
        xa = np.asarray(x)
        c = self.columns
        if xa.shape != (2 * c,) or not np.array_equal(xa, np.rint(xa)):
            raise InvalidArgument(f"x must be an integer vector of length {2 * c}; got {xa!r}.")
        xi = [int(t) for t in xa]
        if xi[c:] != [-t for t in xi[:c]] or sum(xi[:c]) != 0:
            raise InvalidArgument(f"x={xi} is not in span(S) = {{(v, -v): sum(v) = 0}}.")
        return Fraction(sum(abs(t) for t in xi), 4)

    # -- exact uniform sampler ------------------------------------------------------------

    def sample_cells(self, *, rng: np.random.Generator, size: int) -> FloatArray:
        r"""``size`` uniform points of the root polytope :math:`P\subset\{\sum v=0\}`, as ``(size, c)`` rows.

        Exact cone decomposition (module notes): :math:`|I|=k` with probability
        :math:`\binom ck\binom{c-2}{k-1}/\binom{2c-2}{c-1}`, :math:`I` a
        uniformly random :math:`k`-subset (an exact Fisher-Yates shuffle of a
        0/1 row), Dirichlet(1) weights as normalised exponentials on :math:`I`
        and on :math:`I^c`, radius :math:`W^{1/(c-1)}`.
        """
        check_int("size", size, minimum=0)
        c = self.columns
        out = np.empty((size, c))
        cols = np.arange(c)
        for start in range(0, size, SAMPLE_CHUNK):
            m = min(SAMPLE_CHUNK, size - start)
            k = 1 + np.searchsorted(self.facet_size_cdf, rng.random(m), side="right")
            np.minimum(k, c - 1, out=k)
            mask = rng.permuted(cols[None, :] < k[:, None], axis=1)  # uniform k-subset I per row
            e = rng.standard_exponential((m, c))
            s_in = np.where(mask, e, 0.0).sum(axis=1, keepdims=True)
            s_out = np.where(mask, 0.0, e).sum(axis=1, keepdims=True)
            v = np.where(mask, e / s_in, -e / s_out)  # alpha - beta, uniform on F_I
            r = rng.random(m) ** (1.0 / (c - 1))  # radial law t^(c-1) on [0, 1]
            out[start : start + m] = v * r[:, None]
        return out

    def sample_uniform(self, *, rng: np.random.Generator, size: int) -> FloatArray:
        r"""``size`` exact uniform draws from :math:`K'`, in the ball's coordinates (``(size, c-1)`` rows).

        :math:`y=\sqrt2H^\top v` with :math:`v` from :meth:`sample_cells`.

        Examples
        --------
        >>> b = RootPolytopeBall.for_table(13)
        >>> u = b.sample_uniform(rng=np.random.default_rng(0), size=1000)
        >>> u.shape, bool(b.contains(u).all())
        ((1000, 12), True)
        """
        v = self.sample_cells(rng=rng, size=size)
        return np.asarray(math.sqrt(2.0) * (v @ self.helmert), dtype=np.float64)


__all__ = [
    "METHOD",
    "RootPolytopeBall",
    "facet_size_weights",
    "helmert_basis",
    "root_polytope_log_volume",
    "two_row_moves",
]
