r"""Small release functions in the black-box form ``f(histogram, rng, size=None) -> release``, for examples.

``semidp audit --allow-code specs/implementation-gaussian-3x3.toml`` audits
:func:`gaussian_release` as a black box (``mechanism.kind = "implementation"``).
It is the Semi-DP Gaussian mechanism of a 3 x 3 table whose one-way margins are
published exactly [CA24, Alg. 1, Prop. 28]: noise :math:`(\Delta_2/\mu) P\xi`,
:math:`\xi\sim N(0, I_9)`, with :math:`P = (I - J/3)\otimes(I - J/3)` the orthogonal
projector onto the kernel of the margins (which is span(S) here), :math:`\mu = 1`
and :math:`\Delta_2 = \sqrt 6`, the l2 sensitivity of the exact Semi-DP sensitivity
space at a(t) = 3 (it contains 3-cycles; Prop. 32's 2 is too small).

Samplers here are for research and auditing: they are not hardened against
floating-point side channels [Mir12, HB21].
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike, NDArray

from semidp.accountant.core.errors import InvalidArgument

#: The example's GDP parameter.
MU = 1.0
#: The exact l2 sensitivity of the 3 x 3 table under both one-way margins at a(t) = 3.
DELTA_2 = math.sqrt(6.0)


def margins_projector(r: int, c: int) -> NDArray[np.float64]:
    """The orthogonal projector onto the kernel of an r x c table's two one-way margins (row-major cells)."""
    pr = np.eye(r) - np.full((r, r), 1.0 / r)
    pc = np.eye(c) - np.full((c, c), 1.0 / c)
    return np.asarray(np.kron(pr, pc), dtype=np.float64)


def projected_gaussian(
    histogram: ArrayLike, rng: np.random.Generator, sigma: float, *, shape: tuple[int, int], size: int | None
) -> NDArray[np.float64]:
    """``histogram + sigma P xi`` for the r x c margins projector P (``size`` draws stacked on a first axis)."""
    h = np.asarray(histogram, dtype=np.float64).reshape(-1)
    if h.size != shape[0] * shape[1]:
        raise InvalidArgument(f"histogram has {h.size} cells; expected {shape[0]} x {shape[1]}.")
    p = margins_projector(*shape)
    n = 1 if size is None else size
    out = h[None, :] + sigma * rng.standard_normal((n, h.size)) @ p
    return out[0] if size is None else out


def gaussian_release(histogram: ArrayLike, rng: np.random.Generator, size: int | None = None) -> NDArray[np.float64]:
    r"""1-GDP Semi-DP Gaussian release of a 3 x 3 table with its one-way margins kept (module docstring).

    Examples
    --------
    >>> y = gaussian_release(np.array([1, 1, 0, 0, 0, 1, 1, 0, 0]), np.random.default_rng(0))
    >>> y.shape, bool(np.allclose(y.reshape(3, 3).sum(axis=1), [2, 1, 1]))
    ((9,), True)
    """
    return projected_gaussian(histogram, rng, DELTA_2 / MU, shape=(3, 3), size=size)


__all__ = ["DELTA_2", "MU", "gaussian_release", "margins_projector", "projected_gaussian"]
