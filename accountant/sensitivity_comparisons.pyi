"""Deprecated name of :mod:`semidp.accountant.sensitivity.comparisons`.

A type stub: at run time the old name aliases that module (accountant/old_names.py)."""

from semidp.accountant.sensitivity.comparisons import *  # noqa: F403
