"""Deprecated name of :mod:`semidp.accountant.data.callable_invariant`.

A type stub: at run time the old name aliases that module (accountant/old_names.py)."""

from semidp.accountant.data.callable_invariant import *  # noqa: F403
