"""Planted bugs the fixed likelihood-ratio statistics read poorly, for the classifier statistic (verify.audit_classifier).

Audited through ``tests.planted_bugs.spec_text`` with ``callable = "tests.planted_audit_bugs:<name>"`` (DP
framework, replace-one, the 3 x 3 test table; the pairs move one record out of cell 0).
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike, NDArray

FloatArray = NDArray[np.float64]
SIGMA = math.sqrt(2.0)  # 1-GDP for a replace-one histogram (l2 sensitivity sqrt 2)


def _gaussian(h: ArrayLike, rng: np.random.Generator, sigma: float, size: int | None) -> FloatArray:
    x = np.asarray(h, dtype=np.float64).reshape(-1)
    n = 1 if size is None else size
    out = x[None, :] + sigma * rng.standard_normal((n, x.size))
    return out[0] if size is None else out


def scale_from_data(h: ArrayLike, rng: np.random.Generator, size: int | None = None) -> FloatArray:
    """Bug: 20 % more noise when some cell holds 2 or more records (the scale leaks the data: a variance test
    reads it in every cell, the projection on x' - x only through the tails of two)."""
    big = int(np.max(np.asarray(h))) >= 2
    return _gaussian(h, rng, SIGMA * (1.2 if big else 1.0), size)


def scale_fixed(h: ArrayLike, rng: np.random.Generator, size: int | None = None) -> FloatArray:
    """Correct twin: the same noise whatever the data (1-GDP)."""
    return _gaussian(h, rng, SIGMA, size)
