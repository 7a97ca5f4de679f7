"""The accountant's base: errors, argument checks, budgets, progress, directed rounding, outcomes.

Errors (:mod:`~semidp.accountant.core.errors`), argument checks (:mod:`~semidp.accountant.core.arguments`), the
one wall-clock budget (:mod:`~semidp.accountant.core.budget`), progress lines (:mod:`~semidp.accountant.core.progress`),
directed rounding (:mod:`~semidp.accountant.core.directed`) and the outcomes of checks
(:mod:`~semidp.accountant.core.outcome`). Layers: imports no other subpackage.
"""
