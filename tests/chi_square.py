"""Chi-square goodness of fit for seeded sampler tests (house style R12; used by the discrete and lattice tests).

Every fit test passes at ``p > P_PASS`` and has a "wrong law" twin (a parameter
off by 15-20%) that the same test must reject, so the test has power.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from numpy.typing import NDArray
from scipy import stats

#: Suite-wide pass threshold of the seeded chi-square tests.
P_PASS = 1e-4

#: A pmf on the integers, vectorised.
Pmf = Callable[[NDArray[np.int64]], NDArray[np.float64]]


def chi2_pvalue(draws: NDArray[np.int64], pmf: Pmf) -> float:
    """Chi-square p-value of integer ``draws`` against a symmetric ``pmf``.

    Bins ``-m..m`` with ``m`` the largest value whose expected count is >= 5, plus the
    two tails pooled (each gets half the missing mass). A draw in a bin of expected
    count 0 gives p = 0.

    >>> draws = np.random.default_rng(0).integers(-1, 2, 3000)
    >>> chi2_pvalue(draws, lambda x: np.where(np.abs(x) <= 1, 1 / 3, 0.0)) > P_PASS
    True
    """
    n = draws.size
    m = 0
    while n * float(pmf(np.array([m + 1], dtype=np.int64))[0]) >= 5.0:
        m += 1
    xs = np.arange(-m, m + 1, dtype=np.int64)
    p_in = pmf(xs)
    tail = max(0.0, 1.0 - float(p_in.sum())) / 2.0
    e = np.concatenate([n * p_in, [n * tail, n * tail]])
    o = np.array([np.sum(draws == x) for x in xs] + [np.sum(draws < -m), np.sum(draws > m)], dtype=float)
    keep = e > 0
    if np.any(o[~keep] > 0):
        return 0.0
    return float(stats.chi2.sf(np.sum((o[keep] - e[keep]) ** 2 / e[keep]), int(keep.sum()) - 1))


def dg_pmf(a: float) -> Pmf:
    """The double geometric pmf :math:`\\frac{1-a}{1+a}a^{|x|}` in float64
    (docs/reference/subspace-integer-postprocessing.md T-I10), ``0 < a < 1``."""
    return lambda x: np.asarray((1 - a) / (1 + a) * a ** np.abs(x), dtype=np.float64)
