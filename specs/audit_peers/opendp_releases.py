"""OpenDP's integer noise wrapped as a user would: a 3 x 3 table released with its one-way margins kept.

Audited by ``specs/audit-opendp-discrete-gaussian.toml`` and ``specs/audit-opendp-discrete-laplace.toml``
(``semidp audit --allow-code``; needs ``pip install 'semidp[audit-peers]'``). The noisy counts come from
OpenDP's ``make_gaussian`` / ``make_laplace`` on integer vectors (the discrete Gaussian and discrete Laplace
samplers [CKS20]), then are projected onto the published margins, ``y = x + P (noisy - x)`` with ``P`` the
orthogonal projector onto the margins' kernel: post-processing that keeps the invariant exactly in exact
arithmetic (the audit checks it to 1e-9 in float64).

OpenDP draws from the operating system's entropy, not from the ``rng`` passed in: these releases are not
reproducible by ``--seed`` (the audit's verdict is a statement at its confidence, whatever the draws).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import opendp.prelude as dp

dp.enable_features("contrib")

#: The exact l2 and l1 sensitivities of the 3 x 3 table under both one-way margins at a(t) = 3 (semidp).
DELTA_2 = math.sqrt(6.0)
DELTA_1 = 6
#: Discrete Gaussian sigma = Delta_2 (rho = Delta_2^2 / (2 sigma^2) = 0.5 zCDP); discrete Laplace scale
#: Delta_1 (epsilon = Delta_1 / scale = 1).
SIGMA = DELTA_2
LAPLACE_SCALE = float(DELTA_1)

_P = np.kron(np.eye(3) - 1.0 / 3, np.eye(3) - 1.0 / 3)
_DOMAIN = dp.vector_domain(dp.atom_domain(T=int))
_GAUSSIAN = dp.m.make_gaussian(_DOMAIN, dp.l2_distance(T=int), scale=SIGMA)
_LAPLACE = dp.m.make_laplace(_DOMAIN, dp.l1_distance(T=int), scale=LAPLACE_SCALE)


def _release(meas: Any, histogram: Any, size: int | None) -> np.ndarray:
    h = np.asarray(histogram, dtype=np.int64).reshape(-1)
    n = 1 if size is None else size
    # One call on n stacked copies: OpenDP's noise is independent per coordinate, so this is n releases.
    noisy = np.asarray(meas([int(v) for v in np.tile(h, n)]), dtype=np.float64).reshape(n, h.size)
    y = h[None, :] + (noisy - h[None, :]) @ _P
    return y[0] if size is None else y


def discrete_gaussian(histogram: Any, rng: np.random.Generator, size: int | None = None) -> np.ndarray:
    """Discrete Gaussian (sigma = sqrt 6) on the 9 cells, projected onto the margins: 0.5-zCDP Semi-DP."""
    return _release(_GAUSSIAN, histogram, size)


def discrete_laplace(histogram: Any, rng: np.random.Generator, size: int | None = None) -> np.ndarray:
    """Discrete Laplace (scale 6) on the 9 cells, projected onto the margins: 1-DP Semi-DP."""
    return _release(_LAPLACE, histogram, size)


def discrete_gaussian_small(histogram: Any, rng: np.random.Generator, size: int | None = None) -> np.ndarray:
    """A planted bug: the discrete Gaussian calibrated to Prop. 32's l2 sensitivity 2 instead of sqrt 6."""
    return _release(_GAUSSIAN_SMALL, histogram, size)


_GAUSSIAN_SMALL = dp.m.make_gaussian(_DOMAIN, dp.l2_distance(T=int), scale=2.0)
