"""One protocol for every mechanism and private test (house style R4, R16).

A :class:`Mechanism` has

* ``privacy_map(relation)`` -- its guarantee on the neighbouring relation
  ``relation`` (a :data:`~accountant.guarantees.Guarantee` carrying that
  relation; Gao, Gong & Yu's mechanisms return induced subspace DP, on the
  :class:`~accountant.relations.Subspace` relation built on ``relation``
  [GGY22, Def. 2.6]). A mechanism knows the relation its sensitivity (or its
  calibration) holds on; any other relation raises
  :class:`~accountant.errors.RelationMismatch` naming both, never a silent
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
floating-point side channels (Mironov 2012; [HB21]).
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

import numpy as np
from numpy.typing import ArrayLike

from semidp.accountant.guarantees import Guarantee
from semidp.accountant.relations import Relation


@runtime_checkable
class Mechanism(Protocol):
    """A mechanism or private test: a privacy map on a relation and a sampler of releases with explicit ``rng``."""

    def privacy_map(self, relation: Relation) -> Guarantee:
        """The guarantee on ``relation`` (the mechanism's own; another raises ``RelationMismatch``)."""
        ...

    def sample(self, value: ArrayLike, *, rng: np.random.Generator, size: int | None = None) -> Any:
        """One release at ``value`` (``size=None``) or ``size`` releases stacked along a new first axis."""
        ...


__all__ = ["Mechanism"]
