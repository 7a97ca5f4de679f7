"""Bookkeeping shared by the audits that draw releases (verify.mechanism_audit, verify.lattice_audit).

The seed rule (``--seed``, else ``[audit] seed``, else fresh OS entropy, always
recorded in the report), the number of draws, and the normal-theory interval of
a Monte Carlo mean at confidence :data:`LEVEL`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray
from scipy.stats import norm

from verify.audit import Audit
from verify.spec import Spec

FloatArray = NDArray[np.float64]

#: Draws when the spec has no ``[audit]`` section.
DEFAULT_SAMPLES = 200
#: Confidence level of the Monte Carlo intervals of expected errors.
LEVEL = 0.9999  # a correct sampler fails such a check once in 10^4 audits, not once in 100


@dataclass(frozen=True)
class MechanismAudit(Audit):
    """An :class:`~verify.audit.Audit` that also carries the drawn releases."""

    samples: FloatArray | None = None
    """``(samples, cells)`` float64 releases, row-major cells (contract ``DIR/<name>.samples.npy``)."""


def audit_seed(spec: Spec, seed: int | None) -> int:
    """The seed of the draws: ``seed`` (CLI ``--seed``), else ``[audit] seed``, else fresh OS entropy."""
    used = seed if seed is not None else (spec.audit.seed if spec.audit is not None else None)
    if used is None:
        entropy = np.random.SeedSequence().entropy
        assert isinstance(entropy, int)  # SeedSequence() draws an int from the OS
        used = entropy % 2**63
    return int(used)


def draw_count(spec: Spec) -> int:
    """``[audit] samples``, or :data:`DEFAULT_SAMPLES`."""
    return spec.audit.samples if spec.audit is not None else DEFAULT_SAMPLES


def mc_interval(values: FloatArray) -> tuple[float, float, float, float]:
    """Mean, its standard error, and the two-sided :data:`LEVEL` normal interval."""
    n = len(values)
    mean = float(values.mean())
    se = float(values.std(ddof=1)) / math.sqrt(n) if n > 1 else math.inf
    z = float(norm.ppf(0.5 + LEVEL / 2))
    return mean, se, mean - z * se, mean + z * se


__all__ = ["DEFAULT_SAMPLES", "LEVEL", "MechanismAudit", "audit_seed", "draw_count", "mc_interval"]
