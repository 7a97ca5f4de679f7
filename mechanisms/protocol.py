"""One protocol for every mechanism and private test (house style R4, R16).

A :class:`Mechanism` has

* ``privacy_map(relation)`` -- its guarantee on the neighbouring relation
  ``relation`` (a :data:`~accountant.guarantees.definitions.Guarantee` carrying that
  relation; Gao, Gong & Yu's mechanisms return induced subspace DP, on the
  :class:`~accountant.guarantees.relations.Subspace` relation built on ``relation``
  [GGY22, Def. 2.6]). A mechanism knows the relation its sensitivity (or its
  calibration) holds on; any other relation raises
  :class:`~accountant.core.errors.RelationMismatch` naming both, never a silent
  reinterpretation;
* ``sample(value, *, rng, size=None)`` -- a release at the confidential
  ``value`` (a query value, a histogram, or the count a private test releases
  noise around). ``rng`` is a :class:`numpy.random.Generator`, keyword-only and
  required; ``size=None`` gives one release, ``size=k`` stacks ``k`` along a new
  first axis. The same generator state gives the same releases.

Noise distributions (canonical noise distributions, discrete samplers, the
lattice noise samplers of :mod:`mechanisms.lattice_exact`) draw noise, not
releases, and are not mechanisms. :mod:`verify` drives every mechanism through
this protocol only.

Samplers are for research and auditing: they are not hardened against
floating-point side channels ([Mir12]; [HB21]).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol, runtime_checkable

import numpy as np
from numpy.typing import ArrayLike, NDArray

from semidp.accountant.core.arguments import check_int
from semidp.accountant.core.errors import InvalidArgument
from semidp.accountant.guarantees.definitions import Guarantee
from semidp.accountant.guarantees.relations import Relation


@runtime_checkable
class Mechanism(Protocol):
    """A mechanism or private test: a privacy map on a relation and a sampler of releases with explicit ``rng``."""

    def privacy_map(self, relation: Relation) -> Guarantee:
        """The guarantee on ``relation`` (the mechanism's own; another raises ``RelationMismatch``)."""
        ...

    def sample(self, value: ArrayLike, *, rng: np.random.Generator, size: int | None = None) -> Any:
        """One release at ``value`` (``size=None``) or ``size`` releases stacked along a new first axis."""
        ...


def releases_at_count(
    release: Callable[[int], float], value: ArrayLike, size: int | None, what: str
) -> float | NDArray[np.float64]:
    """The protocol's ``sample`` for a private test that releases noise around one count.

    ``release(count)`` draws one release (it holds its ``rng``); ``value`` must be one integer
    (``what`` names it in the error); ``size=None`` gives one float, ``size=k`` an array of ``k``.
    """
    v = np.asarray(value)
    if v.ndim != 0 or not np.issubdtype(v.dtype, np.integer):
        raise InvalidArgument(f"value={value!r} must be one integer count ({what}).")
    if size is None:
        return release(int(v))
    n = check_int("size", size, minimum=0)
    return np.array([release(int(v)) for _ in range(n)], dtype=np.float64)


__all__ = ["Mechanism", "releases_at_count"]
