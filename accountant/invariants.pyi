"""Deprecated name of :mod:`semidp.accountant.data.invariants`.

A type stub: at run time the old name aliases that module (accountant/old_names.py)."""

from semidp.accountant.data.invariants import *  # noqa: F403
