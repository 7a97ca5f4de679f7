"""Deprecated name of :mod:`semidp.accountant.pld.closed_forms`.

A type stub: at run time the old name aliases that module (accountant/old_names.py)."""

from semidp.accountant.pld.closed_forms import *  # noqa: F403
