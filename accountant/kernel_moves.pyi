"""Deprecated name of :mod:`semidp.accountant.sensitivity.kernel_moves`.

A type stub: at run time the old name aliases that module (accountant/old_names.py)."""

from semidp.accountant.sensitivity.kernel_moves import *  # noqa: F403
