"""Deprecated name of :mod:`semidp.accountant.lattice.integer_matrix`.

A type stub: at run time the old name aliases that module (accountant/old_names.py)."""

from semidp.accountant.lattice.integer_matrix import *  # noqa: F403
