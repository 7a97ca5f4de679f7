"""Deprecated name of :mod:`semidp.accountant.releases.model`.

A type stub: at run time the old name aliases that module (accountant/old_names.py)."""

from semidp.accountant.releases.model import *  # noqa: F403
