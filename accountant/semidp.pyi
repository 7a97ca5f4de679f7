"""Deprecated name of :mod:`semidp.accountant.guarantees.semidp`.

A type stub: at run time the old name aliases that module (accountant/old_names.py)."""

from semidp.accountant.guarantees.semidp import *  # noqa: F403
