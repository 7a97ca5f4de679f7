"""Deprecated name of :mod:`semidp.accountant.core.outcome`.

A type stub: at run time the old name aliases that module (accountant/old_names.py)."""

from semidp.accountant.core.outcome import *  # noqa: F403
