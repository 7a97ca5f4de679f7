"""A textbook float64 Laplace histogram: inverse-CDF sampling, as the textbooks write it [DR14, Def. 3.3].

Audited by ``specs/audit-textbook-laplace.toml``. ``y = x + P (b * Lap)`` with ``b = Delta_1 / epsilon = 6``
(the exact Semi-DP l1 sensitivity of the 3 x 3 table under both one-way margins) and ``P`` the projector onto
the margins' kernel. Correct on paper (epsilon = 1); in float64 the set of values ``x + noise`` can take
depends on ``x``, the leak Mironov [Mir12] showed for this sampler.
"""

from __future__ import annotations

from typing import Any

import numpy as np

SCALE = 6.0
_P = np.kron(np.eye(3) - 1.0 / 3, np.eye(3) - 1.0 / 3)


def laplace(histogram: Any, rng: np.random.Generator, size: int | None = None) -> np.ndarray:
    """``x + P (-b sign(u) log(1 - 2|u|))``, ``u ~ U(-1/2, 1/2)`` per cell, in float64."""
    h = np.asarray(histogram, dtype=np.float64).reshape(-1)
    n = 1 if size is None else size
    u = rng.random((n, h.size)) - 0.5
    noise = -SCALE * np.sign(u) * np.log(1.0 - 2.0 * np.abs(u))
    y = h[None, :] + noise @ _P
    return y[0] if size is None else y


#: The DP histogram's scale: replace-one l1 sensitivity 2 at epsilon = 1.
DP_SCALE = 2.0


def histogram_laplace(histogram: Any, rng: np.random.Generator, size: int | None = None) -> np.ndarray:
    """The textbook epsilon = 1 DP histogram (no invariant): ``x - 2 sign(u) log(1 - 2|u|)`` per cell."""
    h = np.asarray(histogram, dtype=np.float64).reshape(-1)
    n = 1 if size is None else size
    u = rng.random((n, h.size)) - 0.5
    y = h[None, :] - DP_SCALE * np.sign(u) * np.log(1.0 - 2.0 * np.abs(u))
    return y[0] if size is None else y
