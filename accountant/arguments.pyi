"""Deprecated name of :mod:`semidp.accountant.core.arguments`.

A type stub: at run time the old name aliases that module (accountant/old_names.py)."""

from semidp.accountant.core.arguments import *  # noqa: F403
