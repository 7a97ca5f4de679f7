"""Deprecated name of :mod:`semidp.accountant.guarantees.conversion_routes`.

A type stub: at run time the old name aliases that module (accountant/old_names.py)."""

from semidp.accountant.guarantees.conversion_routes import *  # noqa: F403
