"""IBM diffprivlib's noise primitives wrapped as a user would: a 3 x 3 table released with its margins kept.

Audited by ``specs/audit-diffprivlib-*.toml`` (``semidp audit --allow-code``; needs
``pip install 'semidp[audit-peers]'``). Each cell gets diffprivlib's scalar mechanism (``Laplace``,
``Gaussian`` or ``GaussianAnalytic``, one ``randomise`` call per cell, as the library is used), calibrated to
the exact Semi-DP sensitivity of the 3 x 3 table under both one-way margins (l1 = 6, l2 = sqrt 6); the noisy
counts are then projected onto the published margins, ``y = x + P (noisy - x)`` (post-processing).

Per-coordinate noise at the vector's sensitivity gives the vector guarantee: Laplace with
``sensitivity = Delta_1`` on each cell is epsilon-DP for l1-sensitivity ``Delta_1`` [DMNS06]; Gaussian
noise of one sigma on each cell is what the scalar calibration computes for l2-sensitivity ``Delta_2``
[DR14, Thm. A.1] (``Gaussian``) or [BW18, Alg. 1] (``GaussianAnalytic``).

``Laplace`` and ``Gaussian`` are seeded from the audit's ``rng`` (``random_state``), so their draws follow
``--seed``; ``GaussianAnalytic`` is built once (see ``_ANALYTIC``) and does not.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from diffprivlib.mechanisms import Gaussian, GaussianAnalytic, Laplace

DELTA_2 = math.sqrt(6.0)
DELTA_1 = 6.0
EPSILON = 1.0
DELTA = 1e-6

_P = np.kron(np.eye(3) - 1.0 / 3, np.eye(3) - 1.0 / 3)


def _release(mech: Any, histogram: Any) -> np.ndarray:
    h = np.asarray(histogram, dtype=np.float64).reshape(-1)
    noisy = np.array([mech.randomise(float(v)) for v in h], dtype=np.float64)
    return np.asarray(h + (noisy - h) @ _P, dtype=np.float64)


def _seed(rng: np.random.Generator) -> int:
    return int(rng.integers(0, 2**31 - 1))


def laplace(histogram: Any, rng: np.random.Generator) -> np.ndarray:
    """``diffprivlib.mechanisms.Laplace(epsilon=1, sensitivity=6)`` per cell, projected: 1-DP Semi-DP."""
    return _release(Laplace(epsilon=EPSILON, sensitivity=DELTA_1, random_state=_seed(rng)), histogram)


def gaussian(histogram: Any, rng: np.random.Generator) -> np.ndarray:
    """``diffprivlib.mechanisms.Gaussian(epsilon=1, delta=1e-6, sensitivity=sqrt 6)`` per cell, projected."""
    return _release(Gaussian(epsilon=EPSILON, delta=DELTA, sensitivity=DELTA_2, random_state=_seed(rng)), histogram)


#: Built once per process, as a user would: its constructor calibrates sigma numerically (about 2 ms), so it
#: draws from diffprivlib's own generator and these draws do not follow ``--seed``.
_ANALYTIC = GaussianAnalytic(epsilon=EPSILON, delta=DELTA, sensitivity=DELTA_2)


def gaussian_analytic(histogram: Any, rng: np.random.Generator) -> np.ndarray:
    """``diffprivlib.mechanisms.GaussianAnalytic(epsilon=1, delta=1e-6, sensitivity=sqrt 6)``, projected."""
    return _release(_ANALYTIC, histogram)
