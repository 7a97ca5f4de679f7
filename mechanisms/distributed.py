r"""Distributed privatisation with a common seed (Gao, Gong & Yu, AAAI-22 full version, App. E, Alg 4).

Reference ``docs/reference/subspace-integer-postprocessing.md`` §2.7. The query is the identity
on :math:`x\in\mathbb R^N` with an invariant :math:`C` (rank :math:`n_c`); agents
own a partition :math:`K_1,\dots,K_m` of the indices (any partition: blocks need
not be contiguous). Every agent :math:`\ell`, in parallel and without
communication:

1. zero-fills the entries it does not know: :math:`\bar x_\ell=\Gamma_\ell^\top x_\ell`;
2. runs the same *additive* invariant-respecting mechanism
   :math:`\mathcal M(z)=z+e` (:math:`Ce=0`, :math:`e` independent of :math:`z`) on
   :math:`\bar x_\ell` with a generator built from the **common seed**, so every
   agent draws the same :math:`e`;
3. keeps its own block :math:`y_\ell=\Gamma_\ell\mathcal M(\bar x_\ell)=x_\ell+\Gamma_\ell e`.

The concatenation is :math:`y=x+e`, so :math:`Cy=Cx` and :math:`y` has exactly the
law (and the induced subspace-DP guarantee) of the centralised release
:math:`\mathcal M(x)`. GGY's footnote phrases step 3 as "subtract
:math:`\bar x_\ell`" (to obtain :math:`e`); taking the own block of
:math:`\bar x_\ell+e` is the same in exact arithmetic and, because
:math:`(\bar x_\ell)_{K_\ell}=x_\ell` and the addition is elementwise, it is the
*same floating-point operation* as the centralised :math:`(x+e)_{K_\ell}`: the
assembled release equals the centralised one bitwise (given the same numpy/BLAS
build on every agent; otherwise to rounding).

Additive mechanisms accepted (each ``sample`` computes ``value + noise`` with the
noise drawn from ``rng`` alone): :class:`~mechanisms.subspace.ProjectedGaussian`,
:class:`~mechanisms.subspace.ExtendedGaussian`,
:class:`~mechanisms.subspace.ProjectedLaplace`,
:class:`~mechanisms.subspace.ExtendedLaplace`,
:class:`~mechanisms.correlated_gaussian.EllipsoidGaussian`,
:class:`~mechanisms.correlated_gaussian.SubspaceCorrelatedGaussian`. Each must be
calibrated for the identity query (its ``subspace.dimension`` is :math:`N`).

**Seeds, not generators.** This is the one place in :mod:`mechanisms` that takes a
seed (an ``int`` or a ``numpy.random.SeedSequence``) instead of an
``rng: numpy.random.Generator``: the agents must *regenerate the same* noise
independently, and a ``Generator`` is stateful (handing one to several agents
would give them different draws). Each agent builds
``numpy.random.default_rng(seed)`` afresh.

**Caveat** [D]. Every agent holds the seed, so it can regenerate :math:`e` and
recover every other agent's data exactly, :math:`x_{\ell'}=y_{\ell'}-\Gamma_{\ell'}e`.
The scheme protects against outsiders who see only :math:`y`, **not** against
curious or colluding agents; the seed must be kept secret from everyone else.
Samplers are for research and auditing, not hardened against floating-point
side channels.
"""

from __future__ import annotations

import numbers
import operator
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TypeAlias

import numpy as np
from numpy.typing import ArrayLike, NDArray

from semidp.accountant.core.arguments import check_int
from semidp.accountant.core.errors import InvalidArgument
from semidp.mechanisms.correlated_gaussian import EllipsoidGaussian, SubspaceCorrelatedGaussian
from semidp.mechanisms.subspace import (
    ExtendedGaussian,
    ExtendedLaplace,
    ProjectedGaussian,
    ProjectedLaplace,
)

FloatArray = NDArray[np.float64]

AdditiveSubspaceMechanism: TypeAlias = (
    ProjectedGaussian
    | ExtendedGaussian
    | ProjectedLaplace
    | ExtendedLaplace
    | EllipsoidGaussian
    | SubspaceCorrelatedGaussian
)
_ADDITIVE = (
    ProjectedGaussian,
    ExtendedGaussian,
    ProjectedLaplace,
    ExtendedLaplace,
    EllipsoidGaussian,
    SubspaceCorrelatedGaussian,
)
#: The mechanisms whose ``sample`` is ``value + noise(rng)`` (checked by reading them; tested).
ADDITIVE_MECHANISMS: tuple[type, ...] = _ADDITIVE
CommonSeed: TypeAlias = int | np.random.SeedSequence


def _generator(seed: CommonSeed) -> np.random.Generator:
    """A fresh generator from the common seed (the same stream on every call)."""
    if isinstance(seed, np.random.SeedSequence):
        return np.random.default_rng(seed)
    if isinstance(seed, np.random.Generator):
        raise InvalidArgument(
            "seed is a numpy.random.Generator: distributed privatisation needs a common *seed* (an int or a "
            "numpy.random.SeedSequence) so that every agent regenerates the same noise; a Generator is stateful."
        )
    return np.random.default_rng(check_int("seed", seed, minimum=0))


def _check_mechanism(mechanism: object) -> int:
    if not isinstance(mechanism, _ADDITIVE):
        names = ", ".join(t.__name__ for t in ADDITIVE_MECHANISMS)
        raise InvalidArgument(
            f"mechanism={type(mechanism).__name__} is not one of the additive invariant-respecting mechanisms "
            f"({names}); GGY Alg 4 needs M(z) = z + e with e independent of z."
        )
    return mechanism.subspace.dimension


def _indices(name: str, block: object) -> tuple[int, ...]:
    if isinstance(block, (str, bytes)) or not isinstance(block, Sequence | np.ndarray):
        raise InvalidArgument(f"{name}={block!r} must be a sequence of integer indices.")
    out: list[int] = []
    for i in block:
        if isinstance(i, bool) or not isinstance(i, numbers.Integral):
            raise InvalidArgument(f"{name} contains {i!r}, which is not an integer index.")
        out.append(operator.index(i))
    if not out:
        raise InvalidArgument(f"{name} is empty: every agent must own at least one index.")
    if len(set(out)) != len(out):
        raise InvalidArgument(f"{name} lists an index more than once.")
    return tuple(out)


def check_partition(blocks: Sequence[Sequence[int]], n: int) -> tuple[tuple[int, ...], ...]:
    r"""Validate that ``blocks`` partition :math:`\{0,\dots,n-1\}` ([GGY22, App. E]: :math:`K_1,\dots,K_m`).

    Returns the blocks as tuples. Raises :class:`InvalidArgument` naming
    out-of-range, repeated (overlapping) or missing indices, and empty blocks.

    >>> check_partition([[0, 2], [1]], 3)
    ((0, 2), (1,))
    """
    size = check_int("n", n, minimum=1)
    if isinstance(blocks, (str, bytes)) or not isinstance(blocks, Sequence):
        raise InvalidArgument(f"blocks={blocks!r} must be a sequence of index sequences.")
    if len(blocks) == 0:
        raise InvalidArgument("blocks is empty: at least one agent is needed.")
    parsed = tuple(_indices(f"blocks[{k}]", b) for k, b in enumerate(blocks))
    owner: dict[int, int] = {}
    for k, block in enumerate(parsed):
        for i in block:
            if not 0 <= i < size:
                raise InvalidArgument(f"blocks[{k}] contains index {i}, outside 0..{size - 1}.")
            if i in owner:
                raise InvalidArgument(
                    f"index {i} is in blocks[{owner[i]}] and blocks[{k}]: the blocks must be disjoint (a partition)."
                )
            owner[i] = k
    missing = sorted(set(range(size)) - owner.keys())
    if missing:
        shown = ", ".join(map(str, missing[:10])) + (", ..." if len(missing) > 10 else "")
        raise InvalidArgument(
            f"the blocks do not cover all {size} indices: missing {shown} (every index needs an owner)."
        )
    return parsed


@dataclass(frozen=True, eq=False)
class Share:
    """One agent's released block :math:`y_\\ell=x_\\ell+\\Gamma_\\ell e` [GGY22, App. E, Alg. 4]."""

    indices: tuple[int, ...]
    """The agent's indices :math:`K_\\ell` (in the agent's order)."""
    values: FloatArray
    """``(len(indices),)``, or ``(size, len(indices))`` for ``size`` draws."""


@dataclass(frozen=True, eq=False)
class Agent:
    r"""An agent owning the entries ``indices`` of :math:`x` [GGY22, App. E, Alg. 4].

    >>> from semidp.mechanisms.subspace import ProjectedLaplace
    >>> m = ProjectedLaplace.calibrate(np.ones((1, 3)), 0.5)
    >>> a, b = Agent((0, 2), np.array([4.0, 1.0])), Agent((1,), np.array([5.0]))
    >>> y = assemble([a.release(m, seed=7), b.release(m, seed=7)])
    >>> bool(abs(y.sum() - 10.0) < 1e-9)
    True
    """

    indices: tuple[int, ...]
    """The indices :math:`K_\\ell` of :math:`x` this agent observes."""
    data: FloatArray
    r""":math:`x_\ell`, aligned with ``indices``."""

    def __post_init__(self) -> None:
        idx = _indices("indices", self.indices)
        if min(idx) < 0:
            raise InvalidArgument(f"indices contains {min(idx)}; indices must be >= 0.")
        d = np.asarray(self.data, dtype=np.float64)
        if d.shape != (len(idx),):
            raise InvalidArgument(f"data has shape {d.shape}; expected ({len(idx)},), one value per index.")
        if not np.all(np.isfinite(d)):
            raise InvalidArgument("data has non-finite entries.")
        object.__setattr__(self, "indices", idx)
        object.__setattr__(self, "data", d)

    def release(self, mechanism: AdditiveSubspaceMechanism, *, seed: CommonSeed, size: int | None = None) -> Share:
        r"""Zero-fill, run ``mechanism`` with ``default_rng(seed)``, keep the own block: :math:`x_\ell+\Gamma_\ell e`.

        ``seed`` must be the common seed shared by all agents (module docstring).
        """
        n = _check_mechanism(mechanism)
        if max(self.indices) >= n:
            raise InvalidArgument(
                f"indices contains {max(self.indices)}, outside 0..{n - 1} (the mechanism's query dimension is {n})."
            )
        filled = np.zeros(n)
        filled[list(self.indices)] = self.data
        y = mechanism.sample(filled, rng=_generator(seed), size=size)
        return Share(self.indices, np.ascontiguousarray(y[..., list(self.indices)]))


def distributed_release(
    x: ArrayLike,
    blocks: Sequence[Sequence[int]],
    mechanism: AdditiveSubspaceMechanism,
    *,
    seed: CommonSeed,
    size: int | None = None,
) -> tuple[Share, ...]:
    r"""Simulate [GGY22, Alg. 4]: split ``x`` by ``blocks`` among agents, each releasing its share from ``seed``.

    Parameters
    ----------
    x
        The full vector :math:`x\in\mathbb R^N` (only used to hand each agent its block).
    blocks
        A partition of :math:`\{0,\dots,N-1\}` (checked by :func:`check_partition`).
    mechanism
        An additive invariant-respecting mechanism for the identity query on
        :math:`\mathbb R^N` (see :data:`ADDITIVE_MECHANISMS`).
    seed
        The common seed (``int >= 0`` or ``numpy.random.SeedSequence``).
    size
        Number of draws (as in the mechanisms' ``sample``).

    Returns
    -------
    tuple[Share, ...]
        One share per block; :func:`assemble` concatenates them into :math:`y`.
        The privacy guarantee is ``mechanism.privacy_map(relation)`` against
        outsiders only (module docstring caveat).
    """
    n = _check_mechanism(mechanism)
    xv = np.asarray(x, dtype=np.float64)
    if xv.shape != (n,):
        raise InvalidArgument(f"x has shape {xv.shape}; the mechanism's query dimension is ({n},).")
    if not np.all(np.isfinite(xv)):
        raise InvalidArgument("x has non-finite entries.")
    parts = check_partition(blocks, n)
    return tuple(Agent(b, xv[list(b)]).release(mechanism, seed=seed, size=size) for b in parts)


def assemble(shares: Sequence[Share], n: int | None = None) -> FloatArray:
    r"""Put the agents' shares together into :math:`y` ([GGY22, App. E], Alg 4: the concatenation of the :math:`y_\ell`).

    The shares' indices must partition :math:`\{0,\dots,N-1\}`, with ``N = n`` if
    given, else the largest index plus one (pass ``n`` to also catch a missing
    share that held the last indices).
    """
    if len(shares) == 0:
        raise InvalidArgument("shares is empty.")
    if n is None:
        n = 1 + max(max(s.indices) for s in shares)
    check_partition([s.indices for s in shares], n)
    lead = shares[0].values.shape[:-1]
    for k, s in enumerate(shares):
        if s.values.shape != lead + (len(s.indices),):
            raise InvalidArgument(
                f"shares[{k}].values has shape {s.values.shape}; expected {lead + (len(s.indices),)}."
            )
    out = np.empty(lead + (n,))
    for s in shares:
        out[..., list(s.indices)] = s.values
    return out


def centralized_release(
    x: ArrayLike, mechanism: AdditiveSubspaceMechanism, *, seed: CommonSeed, size: int | None = None
) -> FloatArray:
    """The centralised release ``mechanism.sample(x, rng=default_rng(seed))`` that Alg 4 reproduces (for comparison)."""
    _check_mechanism(mechanism)
    return mechanism.sample(x, rng=_generator(seed), size=size)


__all__ = [
    "ADDITIVE_MECHANISMS",
    "AdditiveSubspaceMechanism",
    "Agent",
    "CommonSeed",
    "Share",
    "assemble",
    "centralized_release",
    "check_partition",
    "distributed_release",
]
