"""Deprecated name of :mod:`semidp.accountant.data.exact_matrices`.

A type stub: at run time the old name aliases that module (accountant/old_names.py)."""

from semidp.accountant.data.exact_matrices import *  # noqa: F403
