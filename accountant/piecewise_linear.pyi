"""Deprecated name of :mod:`semidp.accountant.profiles.piecewise_linear`.

A type stub: at run time the old name aliases that module (accountant/old_names.py)."""

from semidp.accountant.profiles.piecewise_linear import *  # noqa: F403
