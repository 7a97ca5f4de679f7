"""Deprecated name of :mod:`semidp.accountant.pld.engine`.

A type stub: at run time the old name aliases that module (accountant/old_names.py)."""

from semidp.accountant.pld.engine import *  # noqa: F403
