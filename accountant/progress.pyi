"""Deprecated name of :mod:`semidp.accountant.core.progress`.

A type stub: at run time the old name aliases that module (accountant/old_names.py)."""

from semidp.accountant.core.progress import *  # noqa: F403
