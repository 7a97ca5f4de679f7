"""Deprecated name of :mod:`semidp.accountant.profiles.gaussian`.

A type stub: at run time the old name aliases that module (accountant/old_names.py)."""

from semidp.accountant.profiles.gaussian import *  # noqa: F403
