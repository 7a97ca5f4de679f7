"""Finite data spaces and invariants: the statistics of the confidential data published exactly.

:mod:`~semidp.accountant.data.dataspace`, :mod:`~semidp.accountant.data.invariants`,
:mod:`~semidp.accountant.data.callable_invariant` (an invariant given as a Python function) and
:mod:`~semidp.accountant.data.exact_matrices` (the exact range of invariant and query matrices).
Layers: imports :mod:`~semidp.accountant.core` only.
"""
