"""Deprecated name of :mod:`semidp.accountant.data.dataspace`.

A type stub: at run time the old name aliases that module (accountant/old_names.py)."""

from semidp.accountant.data.dataspace import *  # noqa: F403
