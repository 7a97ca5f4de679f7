"""Deprecated name of :mod:`semidp.accountant.core.directed`.

A type stub: at run time the old name aliases that module (accountant/old_names.py)."""

from semidp.accountant.core.directed import *  # noqa: F403
