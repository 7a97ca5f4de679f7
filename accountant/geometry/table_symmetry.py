r"""The symmetry group of a two-way table (row and column permutations, transposition when square).

:class:`TableSymmetry` acts on cells and sensitivity vectors, gives exact
canonical forms of vectors and chains of faces, and maps orbit mates onto each
other; :meth:`accountant.geometry.knorm.KNormBall.from_space` uses it to compute one hull
facet per orbit.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from semidp.accountant.core.arguments import check_int
from semidp.accountant.core.errors import InvalidArgument
from semidp.accountant.sensitivity.spaces import SensitivitySpace

FloatArray = NDArray[np.float64]


IntArray = NDArray[np.int64]


def _sorted_rows(a: IntArray) -> IntArray:
    """The rows of ``a`` in lexicographic order (vectorised)."""
    return a[np.lexsort(a.T[::-1])]


@dataclass(frozen=True, slots=True)
class TableElement:
    """An element of :class:`TableSymmetry`: ``u -> sign * (u or u.T)[rows, :][:, cols]``."""

    rows: tuple[int, ...]
    cols: tuple[int, ...]
    transpose: bool
    sign: int


@dataclass(frozen=True, slots=True)
class TableSymmetry:
    r"""Row and column permutations, transposition (square tables) and sign, acting on :math:`r\times c` tables.

    Vectors are row-major flattened tables. The sensitivity space of a table
    under its one-way margins (moves, 3-cycles) is invariant under this group
    :math:`G`, so :math:`K=\operatorname{conv}(S)` is too, and every
    :math:`g\in G` is orthogonal on :math:`V` (a permutation of coordinates,
    possibly with a sign). :meth:`~accountant.geometry.knorm.KNormBall.from_space` uses it to compute one
    facet per orbit (adjacency decomposition) and the sampler to spread a draw
    from the representative cones over all of :math:`K` by a uniformly random
    :math:`g`.

    Examples
    --------
    >>> TableSymmetry(4, 4).order, TableSymmetry(3, 4).order
    (2304, 288)
    """

    rows: int
    """Number of rows r."""
    cols: int
    """Number of columns c."""

    def __post_init__(self) -> None:
        check_int("rows", self.rows, minimum=2)
        check_int("cols", self.cols, minimum=2)

    @property
    def transposes(self) -> bool:
        """Whether transposition is in the group (square tables)."""
        return self.rows == self.cols

    @property
    def order(self) -> int:
        r""":math:`|G| = r!\,c!\,2^{[r=c]}\cdot 2` (as an abstract group)."""
        return math.factorial(self.rows) * math.factorial(self.cols) * (2 if self.transposes else 1) * 2

    def check_invariant(self, space: SensitivitySpace) -> None:
        """Raise InvalidArgument unless S is mapped to itself by every generator of the group."""
        r, c = self.rows, self.cols
        if space.dimension != r * c:
            raise InvalidArgument(f"space has dimension {space.dimension}, not {r} x {c} = {r * c}.")
        m = space.array.reshape(-1, r, c)
        gens = [
            m[:, [1, 0, *range(2, r)], :],
            m[:, [*range(1, r), 0], :],
            m[:, :, [1, 0, *range(2, c)]],
            m[:, :, [*range(1, c), 0]],
            -m,
        ]
        if self.transposes:
            gens.append(m.transpose(0, 2, 1))
        rows = _sorted_rows(space.array)
        for g in gens:  # g permutes the finite set S' = g(S); S' = S iff both sorted row lists agree
            if not np.array_equal(_sorted_rows(g.reshape(len(m), -1)), rows):
                raise InvalidArgument(
                    "The sensitivity space is not invariant under row/column permutations, "
                    "transposition and sign; build the ball without symmetry."
                )

    def _variants(self, m: IntArray) -> IntArray:
        """All row permutations of ``m`` (and of ``m.T``), with both signs; identity first."""
        perms = np.array(list(itertools.permutations(range(self.rows))))
        bases = [m, m.T] if self.transposes else [m]
        out = [sg * b[perms] for b in bases for sg in (1, -1)]
        return np.concatenate(out)

    def canonical(self, m: IntArray) -> tuple[bytes, int]:
        """A complete invariant of the orbit of the integer table ``m``, and the order of its stabiliser.

        The same as :meth:`chain_key` of the one-table stack ``m[None]``.
        """
        return self.chain_key(np.asarray(m)[None])

    def chain_key(self, stack: IntArray) -> tuple[bytes, int]:
        r"""A complete invariant of the orbit of a stack of tables ``(k, r, c)`` (acted on together), and
        the order of its stabiliser.

        Used for faces and chains of faces of conv(S) (:mod:`accountant.geometry.face_fan`:
        a face is identified by the sum of its vertices). Canonical form: over
        the row permutations, transposition (square tables) and sign, the least
        (bytewise) sequence of the stack's columns, each a vector of length
        ``k * r``, sorted bytewise (column permutations are absorbed by the
        sort). Stabiliser: the variants whose sorted columns equal those of the
        stack itself, each realised by :math:`\prod_j \mathrm{mult}_j!` column
        permutations (``mult``: multiplicities of equal columns).
        """
        keys, stabs = self.chain_keys(np.asarray(stack)[None])
        return keys[0], int(stabs[0])

    def _columns(self, stacks: IntArray) -> tuple[NDArray[np.intp], NDArray[np.void]]:
        """Row permutations, and the columns (as bytes) of every variant of every stack: ``(n, nv, c)``.

        Variant ``v`` is ``sign * base[:, perms[p]]`` with ``divmod(v, len(perms)) = (block, p)``, the
        base transposed iff ``block >= 2`` and the sign negative iff ``block`` is odd.
        """
        st = np.asarray(stacks, dtype=np.int64)
        n, k = st.shape[0], st.shape[1]
        perms = np.array(list(itertools.permutations(range(self.rows))))
        bases = [st, st.transpose(0, 1, 3, 2)] if self.transposes else [st]
        var = np.concatenate(
            [sg * b[:, :, perms].transpose(0, 2, 1, 3, 4) for b in bases for sg in (1, -1)], axis=1
        )  # (n, nv, k, r, c)
        cols = np.ascontiguousarray(var.transpose(0, 1, 4, 2, 3)).reshape(n, var.shape[1], self.cols, k * self.rows)
        return perms, cols.view(np.dtype((np.void, 8 * k * self.rows))).reshape(n, var.shape[1], self.cols)

    @staticmethod
    def _rows_of(cv: NDArray[np.void]) -> NDArray[np.void]:
        """Each variant's sorted columns as one bytes value: ``(n, nv)``."""
        return np.ascontiguousarray(cv).view(np.dtype((np.void, cv.dtype.itemsize * cv.shape[-1])))[..., 0]

    def chain_keys(self, stacks: IntArray) -> tuple[list[bytes], IntArray]:
        """:meth:`chain_key` of each stack in ``stacks`` ``(n, k, r, c)``, vectorised: keys and stabiliser orders."""
        _, raw = self._columns(stacks)
        n = raw.shape[0]
        cv = np.sort(raw, axis=2)
        whole = self._rows_of(cv)
        same = np.count_nonzero(whole == whole[:, :1], axis=1)
        own = cv[:, 0, :]  # sorted columns of the stack itself
        run = np.ones(n, dtype=np.int64)
        prod = np.ones(n, dtype=np.int64)
        for j in range(1, self.cols):  # prod of (position within its run of equal columns)
            run = np.where(own[:, j] == own[:, j - 1], run + 1, 1)
            prod *= run
        best = np.sort(whole, axis=1)[:, 0]
        tail = int(np.shape(stacks)[1]).to_bytes(2, "little")
        return [bytes(b) + tail for b in best], same.astype(np.int64) * prod

    def canonical_element(self, stack: IntArray) -> tuple[bytes, TableElement]:
        """:meth:`chain_key`'s key, and a group element ``h`` with ``h(stack)`` the canonical form.

        Two stacks ``a``, ``b`` with equal keys satisfy ``b = h_b^{-1}(h_a(a))``
        (:meth:`apply`, :meth:`apply_inverse`).
        """
        perms, raw = self._columns(np.asarray(stack)[None])
        whole = self._rows_of(np.sort(raw[0], axis=1))
        best = int(np.argsort(whole, kind="stable")[0])
        block, p_idx = divmod(best, len(perms))
        elem = TableElement(
            tuple(int(i) for i in perms[p_idx]),
            tuple(int(i) for i in np.argsort(raw[0, best], kind="stable")),
            block >= 2,
            -1 if block % 2 else 1,
        )
        return bytes(whole[best]) + int(np.shape(stack)[0]).to_bytes(2, "little"), elem

    @staticmethod
    def apply(elem: TableElement, tables: IntArray) -> IntArray:
        """``elem`` applied to each table of ``tables`` ``(n, r, c)``: transpose, rows, columns, sign."""
        b = tables.transpose(0, 2, 1) if elem.transpose else tables
        return np.asarray(elem.sign * b[:, list(elem.rows), :][:, :, list(elem.cols)])

    @staticmethod
    def apply_inverse(elem: TableElement, tables: IntArray) -> IntArray:
        """The inverse of :meth:`apply`."""
        b = elem.sign * np.asarray(tables)
        out = np.empty_like(b)
        out[:, :, list(elem.cols)] = b
        back = np.empty_like(out)
        back[:, list(elem.rows), :] = out
        return back.transpose(0, 2, 1) if elem.transpose else back

    def orbit(self, m: IntArray) -> IntArray:
        """All distinct images of the table ``m`` (shape ``(k, r, c)``)."""
        var = self._variants(m)
        cperm = np.array(list(itertools.permutations(range(self.cols))))
        allm = var[:, :, cperm].transpose(0, 2, 1, 3).reshape(-1, self.rows, self.cols)
        return np.asarray(np.unique(allm.reshape(len(allm), -1), axis=0).reshape(-1, self.rows, self.cols))

    def apply_random(self, w: FloatArray, rng: np.random.Generator) -> FloatArray:
        """Apply an independent uniformly random group element to each row (a flattened table) of ``w``."""
        m = w.shape[0]
        t = w.reshape(m, self.rows, self.cols)
        sig = np.argsort(rng.random((m, self.rows)), axis=1)
        tau = np.argsort(rng.random((m, self.cols)), axis=1)
        out = t[np.arange(m)[:, None, None], sig[:, :, None], tau[:, None, :]]
        if self.transposes:
            flip = rng.random(m) < 0.5
            out[flip] = out[flip].transpose(0, 2, 1)
        sign = np.where(rng.random(m) < 0.5, -1.0, 1.0)
        return np.asarray((out * sign[:, None, None]).reshape(m, -1), dtype=np.float64)
