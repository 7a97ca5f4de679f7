"""Measurement workloads: their accounting and their design before deployment.

:mod:`~semidp.accountant.workloads.accounting` (a workload's privacy through the PLD engine),
:mod:`~semidp.accountant.workloads.design` (the largest common scale of zCDP budgets that meets a target),
:mod:`~semidp.accountant.workloads.allocation` (the variance-optimal allocation under a zCDP budget).
Layers: imports :mod:`~semidp.accountant.core` and :mod:`~semidp.accountant.pld`.
"""
