"""The built-in mechanism kinds and section plugins, registered in :mod:`verify.registry` (one line each below).

To add a kind: write one module defining its spec dataclass (a subclass of
:class:`verify.spec.MechanismSpec`) and a kind object with its :class:`verify.registry.KindInfo`
(see :class:`verify.registry.Kind`), then add one ``register`` line here -- or call
:func:`verify.registry.register` from your own code (a test registers a toy kind that way). A section
the kinds do not own is a :class:`verify.registry.SectionPlugin`, registered the same way with
:func:`verify.registry.register_section`. Each module holds one kind; the code kinds share lives in
modules named for what it holds (:mod:`verify.kinds.calibrated`, :mod:`verify.kinds.additive`,
:mod:`verify.kinds.lattice`).
"""

from semidp.verify.kinds import (
    discrete_laplace,
    gaussian,
    generalized_gaussian,
    generalized_laplace,
    implementation,
    k_norm,
    laplace,
    projected_gaussian,
    projected_laplace,
    published,
    umpu,
)
from semidp.verify.postprocess_section import POSTPROCESS
from semidp.verify.registry import register, register_section
from semidp.verify.workload_section import WORKLOAD

register(published.KIND)
register(umpu.KIND)
register(gaussian.GAUSSIAN)
register(projected_gaussian.PROJECTED_GAUSSIAN)
register(laplace.LAPLACE)
register(projected_laplace.PROJECTED_LAPLACE)
register(discrete_laplace.DISCRETE_LAPLACE)
register(k_norm.K_NORM)
register(generalized_laplace.GENERALIZED_LAPLACE)
register(generalized_gaussian.GENERALIZED_GAUSSIAN)
register(implementation.IMPLEMENTATION)

register_section(WORKLOAD)
register_section(POSTPROCESS)

__all__ = [
    "discrete_laplace",
    "gaussian",
    "generalized_gaussian",
    "generalized_laplace",
    "implementation",
    "k_norm",
    "laplace",
    "projected_gaussian",
    "projected_laplace",
    "published",
    "umpu",
]
