r"""Privacy-loss distributions (PLDs): the one entry point to semidp's two PLD engines.

Which engine serves what:

* :mod:`semidp.accountant.pld.grid` -- *tradeoff curves in, a tradeoff curve out*: composes arbitrary
  piecewise-linear f-DP curves (few atoms each) and Gaussian parts by sparse shift-and-add (no FFT) into a
  certified **lower** tradeoff curve of the composition [DRS22, Thm. 3.2]. Used by
  :mod:`semidp.accountant.guarantees.composition` (``compose`` of :class:`TradeOff` guarantees).
  Functions: :func:`compose`, :func:`profile`, :func:`epsilon`, :func:`loss_atoms`.
* :mod:`semidp.accountant.pld.engine` -- *known mechanisms in, a certified bracket out*: composes thousands
  of (different) mechanism parts (:mod:`~semidp.accountant.pld.parts`: Laplace, Gaussian, discrete ones,
  randomized response, (eps, delta)-DP) by FFT with its rounding bounded, and answers ``delta(eps)`` /
  ``epsilon(delta)`` as ``(lower, upper)`` with ``lower <= truth <= upper``. Used by workloads, claims and
  designs. :func:`compose_plds` builds a :class:`PLDBracket`; :func:`refine_bracket`
  (:mod:`~semidp.accountant.pld.refine`) narrows it to a requested relative width;
  :mod:`~semidp.accountant.pld.closed_forms` holds the closed-form brackets of single Gaussian / Laplace
  parts and the certified interval type.

Layers: this subpackage imports :mod:`~semidp.accountant.core` and :mod:`~semidp.accountant.profiles` only.
The names below are re-exported here, among them the grid engine's ``compose``, ``profile``, ``epsilon`` and
``loss_atoms``, which this package's name held as a module before the subpackages.
"""

from semidp.accountant.pld.engine import (
    DEFAULT_POINTS,
    FFT_REL_CONST,
    GaussianBracket,
    LaplaceBracket,
    PLDBracket,
    PLDInterval,
    compose_plds,
)
from semidp.accountant.pld.grid import DEFAULT_GRID, DEFAULT_N_EPS, LossAtoms, compose, epsilon, loss_atoms, profile
from semidp.accountant.pld.parts import (
    ApproxDPPart,
    DiscreteGaussianPart,
    DiscreteLaplacePart,
    GaussianPart,
    LaplacePart,
    PLDPart,
    RandomizedResponsePart,
)
from semidp.accountant.pld.refine import RefinedInterval, refine_bracket, refine_many

__all__ = [
    "DEFAULT_GRID",
    "DEFAULT_N_EPS",
    "DEFAULT_POINTS",
    "FFT_REL_CONST",
    "ApproxDPPart",
    "DiscreteGaussianPart",
    "DiscreteLaplacePart",
    "GaussianBracket",
    "GaussianPart",
    "LaplaceBracket",
    "LaplacePart",
    "LossAtoms",
    "PLDBracket",
    "PLDInterval",
    "PLDPart",
    "RandomizedResponsePart",
    "RefinedInterval",
    "compose",
    "compose_plds",
    "epsilon",
    "loss_atoms",
    "profile",
    "refine_bracket",
    "refine_many",
]
