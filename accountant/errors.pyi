"""Deprecated name of :mod:`semidp.accountant.core.errors`.

A type stub: at run time the old name aliases that module (accountant/old_names.py)."""

from semidp.accountant.core.errors import *  # noqa: F403
