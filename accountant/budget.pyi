"""Deprecated name of :mod:`semidp.accountant.core.budget`.

A type stub: at run time the old name aliases that module (accountant/old_names.py)."""

from semidp.accountant.core.budget import *  # noqa: F403
