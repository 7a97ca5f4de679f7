"""semidp.mechanisms: samplers with explicit privacy maps and explicit ``rng=`` (house style R4).

Every sampler takes a keyword-only ``numpy.random.Generator``; nothing seeds a
global generator. Samplers are for research and auditing and are not hardened
against floating-point side channels.

Public API: :class:`GaussianMechanism`.
"""

from mechanisms.gaussian import GaussianMechanism

__all__ = ["GaussianMechanism"]
