"""Deprecated name of :mod:`semidp.accountant.profiles.tradeoff`.

A type stub: at run time the old name aliases that module (accountant/old_names.py)."""

from semidp.accountant.profiles.tradeoff import *  # noqa: F403
