"""The built-in mechanism kinds, registered in :mod:`verify.registry` (one line per kind below).

To add a kind: write one module defining its spec dataclass (a subclass of
:class:`verify.spec.MechanismSpec`) and a kind object (see :class:`verify.registry.Kind`),
then add one ``register`` line here -- or call :func:`verify.registry.register`
from your own code (a test registers a toy kind that way).
"""

from semidp.verify.kinds import additive, discrete_laplace, implementation, k_norm, lattice, published, umpu
from semidp.verify.registry import register

register(published.KIND)
register(umpu.KIND)
register(additive.GAUSSIAN)
register(additive.PROJECTED_GAUSSIAN)
register(additive.LAPLACE)
register(additive.PROJECTED_LAPLACE)
register(discrete_laplace.DISCRETE_LAPLACE)
register(k_norm.K_NORM)
register(lattice.GENERALIZED_LAPLACE)
register(lattice.GENERALIZED_GAUSSIAN)
register(implementation.IMPLEMENTATION)

__all__ = ["additive", "discrete_laplace", "implementation", "k_norm", "lattice", "published", "umpu"]
