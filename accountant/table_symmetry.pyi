"""Deprecated name of :mod:`semidp.accountant.geometry.table_symmetry`.

A type stub: at run time the old name aliases that module (accountant/old_names.py)."""

from semidp.accountant.geometry.table_symmetry import *  # noqa: F403
