"""Deprecated name of :mod:`semidp.accountant.guarantees.conversions`.

A type stub: at run time the old name aliases that module (accountant/old_names.py)."""

from semidp.accountant.guarantees.conversions import *  # noqa: F403
