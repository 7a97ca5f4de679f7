r"""Record multisets as integer rows: hashing (splitmix64), offsets and bitsets of rows, and deduplication.

The breadth-first searches over datasets (a(t), sensitivity spaces) store each
multiset of records as a row of cell counts; these helpers index, hash and
deduplicate such rows in vectorised numpy.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
from numpy.typing import NDArray


def splitmix64(i: int) -> int:
    z = (i + 0x9E3779B97F4A7C15) & 0xFFFFFFFFFFFFFFFF
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & 0xFFFFFFFFFFFFFFFF
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & 0xFFFFFFFFFFFFFFFF
    z = z ^ (z >> 31)
    return z - (1 << 64) if z >= (1 << 63) else z


class RecordOffsets:
    """Offsets ``delta = P - N`` (``|P| = |N| = r`` records) with ``A delta = b``, by level.

    Multisets are hashed through fixed pseudo-random 64-bit weights of the rows
    of ``A`` (a linear, wrapping hash), joined by sorting, and every match is
    then re-checked exactly, so a hash collision can cost time but never
    correctness.
    """

    def __init__(self, a: NDArray[np.int64], level_limit: int) -> None:
        self.a = a
        self.k = a.shape[1]
        w = np.array([splitmix64(r + 1) for r in range(a.shape[0])], dtype=np.int64)
        self.cellkey = a.T @ w  # wraps modulo 2**64: fine for a hash
        self.level_limit = level_limit
        self._levels: dict[int, tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.int64], NDArray[np.int64]]] = {}

    def size(self, r: int) -> int:
        return math.comb(self.k + r - 1, r)

    def _level(self, r: int) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.int64], NDArray[np.int64]]:
        if r not in self._levels:
            combos = np.array(list(itertools.combinations_with_replacement(range(self.k), r)), dtype=np.int64).reshape(
                -1, r
            )
            mult = np.zeros((combos.shape[0], self.k), dtype=np.int64)
            rows = np.repeat(np.arange(combos.shape[0]), r)
            np.add.at(mult, (rows, combos.reshape(-1)), 1)
            keys = mult @ self.cellkey
            order = np.argsort(keys, kind="stable")
            self._levels[r] = (mult, keys, order, keys[order])
        return self._levels[r]

    def candidates(self, r: int, x: int, y: int) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
        """All ``(N, P)`` at level ``r`` with ``A (P - N) = A (e_x - e_y)``, unique in ``N``."""
        mult, keys, order, skeys = self._level(r)
        shift = self.cellkey[x : x + 1] - self.cellkey[y : y + 1]  # array op: wraps silently
        target = keys + shift
        pos = np.searchsorted(skeys, target)
        pos_c = np.minimum(pos, skeys.shape[0] - 1)
        hit = skeys[pos_c] == target
        n_idx = np.flatnonzero(hit)
        b = self.a[:, x] - self.a[:, y]
        out_n: list[int] = []
        out_p: list[int] = []
        if n_idx.size:
            p_idx = order[pos_c[n_idx]]
            ok = ((mult[p_idx] - mult[n_idx]) @ self.a.T == b[None, :]).all(axis=1)
            out_n = n_idx[ok].tolist()
            out_p = p_idx[ok].tolist()
            # Rare: the first equal-key entry was a hash collision; scan the run.
            for ni, pi in zip(n_idx[~ok].tolist(), pos_c[n_idx[~ok]].tolist()):
                j = pi
                while j < skeys.shape[0] and skeys[j] == target[ni]:
                    cand = order[j]
                    if np.array_equal((mult[cand] - mult[ni]) @ self.a.T, b):
                        out_n.append(ni)
                        out_p.append(int(cand))
                        break
                    j += 1
        nn = mult[np.array(out_n, dtype=np.int64)]
        pp = mult[np.array(out_p, dtype=np.int64)]
        return nn.reshape(-1, self.k), pp.reshape(-1, self.k)


class RowBits:
    """Bitsets over the rows of ``G_x``: ``bits(v)[c]`` marks the rows with ``g_c >= v``.

    ``N <= g`` (the offset removing the records ``N`` is available in ``g``) is
    the AND of at most ``|N|`` such bitsets, so a whole search level is a few
    word-parallel ANDs/ORs per offset instead of a row-by-offset comparison.
    """

    def __init__(self, gx: NDArray[np.int64]) -> None:
        self.gx = gx
        self.m = gx.shape[0]
        self.k = gx.shape[1]
        self.nbytes = (self.m + 7) // 8
        self._bits: dict[int, NDArray[np.uint8]] = {}
        self._stack = np.zeros((1, self.k, self.nbytes), dtype=np.uint8)

    def bits(self, v: int) -> NDArray[np.uint8]:
        if v not in self._bits:
            self._bits[v] = np.packbits(self.gx.T >= v, axis=1).reshape(self.k, self.nbytes)
        return self._bits[v]

    def all_rows(self) -> NDArray[np.uint8]:
        return np.packbits(np.ones(self.m, dtype=bool)).reshape(self.nbytes)

    def covered(self, nset: NDArray[np.int64]) -> NDArray[np.uint8]:
        """Bitset of rows ``g`` with ``N <= g`` for some row ``N`` of ``nset``."""
        out = np.zeros(self.nbytes, dtype=np.uint8)
        if nset.shape[0] == 0:
            return out
        vmax = int(nset.max())
        if self._stack.shape[0] <= vmax:  # layer v holds bits(v); layer 0 is unused
            self._stack = np.stack(
                [np.zeros((self.k, self.nbytes), dtype=np.uint8)] + [self.bits(v) for v in range(1, vmax + 1)]
            )
        stack = self._stack
        supp = (nset > 0).sum(axis=1)
        for s in np.unique(supp).tolist():
            grp = nset[supp == s]
            cells = np.argsort(grp == 0, axis=1, kind="stable")[:, :s]  # the s nonzero cells
            vals = np.take_along_axis(grp, cells, axis=1)
            chunk = max(1, 50_000_000 // max(1, s * self.nbytes))
            for i in range(0, grp.shape[0], chunk):
                acc = stack[vals[i : i + chunk], cells[i : i + chunk]]  # (c, s, nbytes)
                both = np.bitwise_and.reduce(acc, axis=1)
                out |= np.bitwise_or.reduce(both, axis=0)
        return out

    def first_row(self, mask: NDArray[np.uint8]) -> int:
        """Index of the first row set in ``mask`` (or -1)."""
        nz = np.flatnonzero(mask)
        if nz.size == 0:
            return -1
        byte = int(nz[0])
        bitpos = int(np.flatnonzero(np.unpackbits(mask[byte : byte + 1]))[0])
        return byte * 8 + bitpos


def dedupe_rows(x: NDArray[np.int64], cap: int) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.int64]]:
    """Unique rows of ``x`` (entries in ``0..cap``): (unique, first index, inverse)."""
    k = x.shape[1]
    base = cap + 1
    if base**k < 2**62:
        keys = x @ (base ** np.arange(k - 1, -1, -1, dtype=np.int64))
        _, first, inv = np.unique(keys, return_index=True, return_inverse=True)
    else:
        _, first, inv = np.unique(x, axis=0, return_index=True, return_inverse=True)
    return x[first], first, inv.reshape(-1)
