"""Deprecated name of :mod:`semidp.accountant.geometry.root_polytope`.

A type stub: at run time the old name aliases that module (accountant/old_names.py)."""

from semidp.accountant.geometry.root_polytope import *  # noqa: F403
