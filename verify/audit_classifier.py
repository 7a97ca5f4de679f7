r"""A learned statistic for black-box audits: logistic regression on the release and simple features [BV21].

The fixed statistics of :func:`verify.audit_pairs.pair_statistics` are the likelihood ratios of the noise
families a claim is usually calibrated with -- the projection on ``x' - x`` for isotropic or projected
Gaussian noise (and the discrete Gaussian, whose log-ratio on the integer lattice is the same linear form
[CKS20]), ``|y - x|_1 - |y - x'|_1`` for the (discrete) Laplace, ``|y - x|_K - |y - x'|_K`` for K-norm noise.
A release function whose law is of none of these families (a noise scale that depends on the data, a clamp,
a post-processing step) can differ between ``x`` and ``x'`` in directions they do not read. DP-Sniper
[BV21] learns the test instead: a classifier estimates ``P(x' | y)`` and the threshold test rejects ``x``
where that estimate is large.

Here: logistic regression, fitted by Newton's method (iteratively reweighted least squares) with a small
ridge penalty on standardised features of the centred release ``z = y - (x + x')/2``: ``z``, ``z**2``,
``|y - x| - |y - x'|`` (per cell) and ``1{y = x}``, ``1{y = x'}`` per cell (atoms: clamps and rounding).
It is fitted on the **selection** rows only (at most :data:`MAX_ROWS` per side), so the score it returns is a
fixed function when the measurement rows are read and the audit's bounds stay valid [BV21, Sec. 5]. Its
score is the fitted log-odds (larger = more evidence for ``x'``). numpy only.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from semidp.verify.threshold_audit import Statistic

FloatArray = NDArray[np.float64]

#: Selection rows used per side (a deterministic prefix: the rows are i.i.d.).
MAX_ROWS = 5_000
#: Releases whose features are built at once when scoring.
CHUNK = 50_000
#: Ridge penalty on the standardised coefficients, and the Newton steps.
RIDGE = 1e-3
ITERATIONS = 20


def features(y: FloatArray, x: FloatArray, xp: FloatArray) -> FloatArray:
    """``(draws, 5 cells)`` features of releases ``y`` on the pair ``(x, x')`` (module docstring)."""
    z = y - 0.5 * (x + xp)
    return np.concatenate(
        [z, z * z, np.abs(y - x) - np.abs(y - xp), (y == x).astype(np.float64), (y == xp).astype(np.float64)],
        axis=1,
    )


def fit_logistic(f0: FloatArray, f1: FloatArray, *, ridge: float = RIDGE, iterations: int = ITERATIONS) -> FloatArray:
    """Coefficients ``(bias, w...)`` of a ridge-penalised logistic regression of label 1 (rows ``f1``) against
    label 0 (``f0``) by Newton's method; features with no spread get weight 0. Products by ``einsum`` (one thread): a threaded
    BLAS on a shared, loaded machine made the fit 30 times slower."""
    a = np.concatenate([f0, f1])
    lab = np.concatenate([np.zeros(len(f0)), np.ones(len(f1))])
    design = np.concatenate([np.ones((len(a), 1)), a], axis=1)
    w = np.zeros(design.shape[1])
    pen = np.full(design.shape[1], ridge * len(a))
    pen[0] = 0.0
    for _ in range(iterations):
        eta = np.clip(np.einsum("ni,i->n", design, w), -30.0, 30.0)
        p = 1.0 / (1.0 + np.exp(-eta))
        grad = np.einsum("ni,n->i", design, lab - p) - pen * w
        hess = np.einsum("ni,nj->ij", design * (p * (1.0 - p))[:, None], design) + np.diag(pen) + 1e-9 * np.eye(len(w))
        step = np.linalg.solve(hess, grad)
        w = w + step
        if float(np.max(np.abs(step))) < 1e-8:
            break
    return np.asarray(w, dtype=np.float64)


def classifier_statistic(x: tuple[int, ...], xp: tuple[int, ...], sel_x: FloatArray, sel_xp: FloatArray) -> Statistic:
    """The ``classifier`` statistic of a pair, fitted on its selection rows (module docstring)."""
    xv = np.asarray(x, dtype=np.float64)
    xpv = np.asarray(xp, dtype=np.float64)
    f0 = features(np.asarray(sel_x[:MAX_ROWS], dtype=np.float64), xv, xpv)
    f1 = features(np.asarray(sel_xp[:MAX_ROWS], dtype=np.float64), xv, xpv)
    both = np.concatenate([f0, f1])
    mean = both.mean(axis=0)
    sd = both.std(axis=0)
    keep = sd > 0
    scale = np.where(keep, sd, 1.0)
    w = fit_logistic((f0 - mean) / scale * keep, (f1 - mean) / scale * keep)

    def score(y: FloatArray) -> FloatArray:
        arr = np.asarray(y, dtype=np.float64)
        out = np.empty(len(arr))
        for i in range(0, len(arr), CHUNK):  # features of a chunk at a time: memory O(CHUNK x 5 cells)
            f = (features(arr[i : i + CHUNK], xv, xpv) - mean) / scale * keep
            out[i : i + CHUNK] = w[0] + np.einsum("ni,i->n", f, w[1:])
        return out

    return Statistic("classifier", score)


__all__ = ["CHUNK", "ITERATIONS", "MAX_ROWS", "RIDGE", "classifier_statistic", "features", "fit_logistic"]
