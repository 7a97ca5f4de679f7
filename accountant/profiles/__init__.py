"""Privacy profiles and tradeoff curves of single mechanisms.

:mod:`~semidp.accountant.profiles.gaussian` (the Gaussian profile and its inverses),
:mod:`~semidp.accountant.profiles.discrete_gaussian_dp` (the discrete Gaussian's exact profile),
:mod:`~semidp.accountant.profiles.tradeoff` and :mod:`~semidp.accountant.profiles.piecewise_linear`
(piecewise-linear tradeoff functions). Layers: imports :mod:`~semidp.accountant.core` only.
"""
