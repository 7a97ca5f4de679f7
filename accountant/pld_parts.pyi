"""Deprecated name of :mod:`semidp.accountant.pld.parts`.

A type stub: at run time the old name aliases that module (accountant/old_names.py)."""

from semidp.accountant.pld.parts import *  # noqa: F403
