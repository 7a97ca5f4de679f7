"""Deprecated name of :mod:`semidp.accountant.pld.refine`.

A type stub: at run time the old name aliases that module (accountant/old_names.py)."""

from semidp.accountant.pld.refine import *  # noqa: F403
