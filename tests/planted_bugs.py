"""Planted bugs and their correct twins, as black-box release functions ``f(histogram, rng, size=None)``.

Audited by ``mechanism.kind = "implementation"`` (``callable = "tests.planted_bugs:<name>"`` with
``--allow-code``) in ``tests/test_implementation_audit.py`` and ``benchmarks/audit.py``. The 3 x 3 table is
released under both one-way margins (Semi-DP, a(t) = 3 at the test table, exact l2 sensitivity sqrt 6), or
as a plain histogram under replace-one DP (l2 sensitivity sqrt 2).

=========================  ===================================================  ==========================
bug                        what is wrong                                        correct twin
=========================  ===================================================  ==========================
``gaussian_prop32``        sigma from Prop. 32's l2 = 2, not the exact sqrt 6   ``gaussian_exact``
``gaussian_sigma_halved``  sigma / 2                                            ``gaussian_exact``
``gaussian_20pct_small``   sigma * 0.8 (the benchmark's Gaussian)               ``gaussian_exact``
``gaussian_no_projection`` noise in all 9 cells: the margins change             ``gaussian_exact``
``histogram_add_remove``   DP histogram with add-remove l2 = 1 under replace    ``histogram_replace``
``knorm_gamma_s``          K-norm radius Gamma(s) instead of Gamma(s + 1)       ``knorm_exact``
=========================  ===================================================  ==========================
"""

from __future__ import annotations

import functools
import math

import numpy as np
from numpy.typing import ArrayLike, NDArray

from semidp.accountant.data.dataspace import DataSpace
from semidp.accountant.data.invariants import Margins
from semidp.accountant.geometry.knorm import KNormBall
from semidp.accountant.geometry.knorm_cache import cached_knorm_ball
from semidp.accountant.sensitivity.search import semi_sensitivity_search
from semidp.mechanisms.examples import projected_gaussian
from semidp.mechanisms.knorm import uniform_in_ball

FloatArray = NDArray[np.float64]

#: The test table (specs/table-3x3-*.toml): a(t) = 3, S contains 3-cycles (l2 = sqrt 6).
TABLE = (1, 1, 0, 0, 0, 1, 1, 0, 0)
SQRT6 = math.sqrt(6.0)


def gaussian_exact(h: ArrayLike, rng: np.random.Generator, size: int | None = None) -> FloatArray:
    """Correct: 1-GDP, sigma = sqrt 6 (the exact S), projected onto the margins' kernel."""
    return projected_gaussian(h, rng, SQRT6, shape=(3, 3), size=size)


def gaussian_prop32(h: ArrayLike, rng: np.random.Generator, size: int | None = None) -> FloatArray:
    """Bug: sigma = 2 (Prop. 32's l2 sensitivity), so only 1.22-GDP on the 3-cycle pairs."""
    return projected_gaussian(h, rng, 2.0, shape=(3, 3), size=size)


def gaussian_sigma_halved(h: ArrayLike, rng: np.random.Generator, size: int | None = None) -> FloatArray:
    """Bug: sigma = sqrt 6 / 2 (2-GDP)."""
    return projected_gaussian(h, rng, SQRT6 / 2, shape=(3, 3), size=size)


def gaussian_20pct_small(h: ArrayLike, rng: np.random.Generator, size: int | None = None) -> FloatArray:
    """Bug: sigma = 0.8 sqrt 6 (1.25-GDP)."""
    return projected_gaussian(h, rng, 0.8 * SQRT6, shape=(3, 3), size=size)


def gaussian_no_projection(h: ArrayLike, rng: np.random.Generator, size: int | None = None) -> FloatArray:
    """Bug: N(0, 6 I_9) in every cell, no projection: private enough, but the margins are not kept."""
    x = np.asarray(h, dtype=np.float64).reshape(-1)
    n = 1 if size is None else size
    out = x[None, :] + SQRT6 * rng.standard_normal((n, x.size))
    return out[0] if size is None else out


def _histogram_gaussian(h: ArrayLike, rng: np.random.Generator, sigma: float, size: int | None) -> FloatArray:
    x = np.asarray(h, dtype=np.float64).reshape(-1)
    n = 1 if size is None else size
    out = x[None, :] + sigma * rng.standard_normal((n, x.size))
    return out[0] if size is None else out


def histogram_replace(h: ArrayLike, rng: np.random.Generator, size: int | None = None) -> FloatArray:
    """Correct: 1-GDP histogram under replace-one (l2 sensitivity sqrt 2)."""
    return _histogram_gaussian(h, rng, math.sqrt(2.0), size)


def histogram_add_remove(h: ArrayLike, rng: np.random.Generator, size: int | None = None) -> FloatArray:
    """Bug: the add-remove l2 sensitivity 1 used under replace-one (sqrt 2-GDP)."""
    return _histogram_gaussian(h, rng, 1.0, size)


@functools.lru_cache(maxsize=1)
def _ball() -> KNormBall:
    """K = conv(S) of the test table's exact Semi-DP sensitivity space at a(t) = 3."""
    space = DataSpace.of(("A", 3), ("B", 3))
    res = semi_sensitivity_search(space, Margins((("A",), ("B",))), 3, table=TABLE)
    ball, _ = cached_knorm_ball(res.cell_space)
    return ball


def _knorm(h: ArrayLike, rng: np.random.Generator, shape_offset: int, size: int | None) -> FloatArray:
    ball = _ball()
    x = np.asarray(h, dtype=np.float64).reshape(-1)
    n = 1 if size is None else size
    r = rng.gamma(shape=ball.dimension + shape_offset, scale=1.0, size=n)  # epsilon = 1
    out = x[None, :] + (r[:, None] * uniform_in_ball(ball, rng=rng, size=n)) @ ball.basis.T
    return out[0] if size is None else out


def knorm_exact(h: ArrayLike, rng: np.random.Generator, size: int | None = None) -> FloatArray:
    """Correct: 1-DP K-norm mechanism, radius Gamma(s + 1, 1) [CA24, Prop. 7]."""
    return _knorm(h, rng, 1, size)


def knorm_gamma_s(h: ArrayLike, rng: np.random.Generator, size: int | None = None) -> FloatArray:
    """Bug: radius Gamma(s, 1): density ~ E_1(||y||_K), unbounded at 0, not 1-DP."""
    return _knorm(h, rng, 0, size)


def gaussian_loop_only(h: ArrayLike, rng: np.random.Generator) -> FloatArray:
    """Correct twin without ``size=``: one release per call (the audit then loops)."""
    return gaussian_exact(h, rng)


def gaussian_20pct_small_loop(h: ArrayLike, rng: np.random.Generator) -> FloatArray:
    """Bug without ``size=``: the 20%-small Gaussian, one release per call (as people write it)."""
    return gaussian_20pct_small(h, rng)


def spec_text(
    function: str,
    *,
    framework: str = "semi-dp",
    claim: str = "{ mu = 1.0 }",
    draws: int = 20_000,
    seed: int = 1,
    tests: int = 3,
    max_pairs: int = 4,
) -> str:
    """A spec auditing ``tests.planted_bugs:<function>`` on the test table (margins under semi-dp, none under dp)."""
    inv = 'kind = "margins"\nmargins = [["A"], ["B"]]' if framework == "semi-dp" else 'kind = "none"'
    return f"""
version = 1
name = "planted-{function.replace("_", "-")}"
[data]
features = [{{ name = "A", levels = 3 }}, {{ name = "B", levels = 3 }}]
adjacency = "replace-one"
table = {list(TABLE)}
[invariant]
{inv}
[mechanism]
kind = "implementation"
callable = "tests.planted_bugs:{function}"
draws = {draws}
tests = {tests}
max_pairs = {max_pairs}
[claim]
framework = "{framework}"
guarantee = {claim}
[report]
deltas = [1e-6]
[audit]
seed = {seed}
"""
