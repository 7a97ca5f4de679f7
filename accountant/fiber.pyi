"""Deprecated name of :mod:`semidp.accountant.combinatorics.fiber`.

A type stub: at run time the old name aliases that module (accountant/old_names.py)."""

from semidp.accountant.combinatorics.fiber import *  # noqa: F403
