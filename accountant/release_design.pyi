"""Deprecated name of :mod:`semidp.accountant.releases.design`.

A type stub: at run time the old name aliases that module (accountant/old_names.py)."""

from semidp.accountant.releases.design import *  # noqa: F403
