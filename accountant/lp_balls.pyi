"""Deprecated name of :mod:`semidp.accountant.geometry.lp_balls`.

A type stub: at run time the old name aliases that module (accountant/old_names.py)."""

from semidp.accountant.geometry.lp_balls import *  # noqa: F403
