"""Deprecated name of :mod:`semidp.accountant.guarantees.composition`.

A type stub: at run time the old name aliases that module (accountant/old_names.py)."""

from semidp.accountant.guarantees.composition import *  # noqa: F403
