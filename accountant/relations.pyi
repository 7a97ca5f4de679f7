"""Deprecated name of :mod:`semidp.accountant.guarantees.relations`.

A type stub: at run time the old name aliases that module (accountant/old_names.py)."""

from semidp.accountant.guarantees.relations import *  # noqa: F403
