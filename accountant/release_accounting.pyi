"""Deprecated name of :mod:`semidp.accountant.releases.accounting`.

A type stub: at run time the old name aliases that module (accountant/old_names.py)."""

from semidp.accountant.releases.accounting import *  # noqa: F403
