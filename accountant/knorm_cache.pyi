"""Deprecated name of :mod:`semidp.accountant.geometry.knorm_cache`.

A type stub: at run time the old name aliases that module (accountant/old_names.py)."""

from semidp.accountant.geometry.knorm_cache import *  # noqa: F403
