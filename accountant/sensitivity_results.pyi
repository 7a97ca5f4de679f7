"""Deprecated name of :mod:`semidp.accountant.sensitivity.results`.

A type stub: at run time the old name aliases that module (accountant/old_names.py)."""

from semidp.accountant.sensitivity.results import *  # noqa: F403
