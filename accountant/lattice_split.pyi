"""Deprecated name of :mod:`semidp.accountant.lattice.split`.

A type stub: at run time the old name aliases that module (accountant/old_names.py)."""

from semidp.accountant.lattice.split import *  # noqa: F403
