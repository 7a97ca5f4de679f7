"""Deprecated name of :mod:`semidp.accountant.combinatorics.semiadjacent_search`.

A type stub: at run time the old name aliases that module (accountant/old_names.py)."""

from semidp.accountant.combinatorics.semiadjacent_search import *  # noqa: F403
