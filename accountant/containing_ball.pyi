"""Deprecated name of :mod:`semidp.accountant.geometry.containing_ball`.

A type stub: at run time the old name aliases that module (accountant/old_names.py)."""

from semidp.accountant.geometry.containing_ball import *  # noqa: F403
