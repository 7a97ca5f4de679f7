"""Deprecated name of :mod:`semidp.accountant.sensitivity.search`.

A type stub: at run time the old name aliases that module (accountant/old_names.py)."""

from semidp.accountant.sensitivity.search import *  # noqa: F403
