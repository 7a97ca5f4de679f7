"""Monte Carlo intervals of the audits that draw releases: the normal-theory interval of a mean at :data:`LEVEL`.

The seed rule and the number of draws are :meth:`verify.context.Context.draw_seed`
and :meth:`verify.context.Context.draw_count`.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray
from scipy.stats import norm

FloatArray = NDArray[np.float64]

#: Confidence level of the Monte Carlo intervals of expected errors.
LEVEL = 0.9999  # a correct sampler fails such a check once in 10^4 audits, not once in 100


def mc_interval(values: FloatArray) -> tuple[float, float, float, float]:
    """Mean, its standard error, and the two-sided :data:`LEVEL` normal interval."""
    n = len(values)
    mean = float(values.mean())
    se = float(values.std(ddof=1)) / math.sqrt(n) if n > 1 else math.inf
    z = float(norm.ppf(0.5 + LEVEL / 2))
    return mean, se, mean - z * se, mean + z * se


__all__ = ["LEVEL", "mc_interval"]
