"""Deprecated name of :mod:`semidp.accountant.sensitivity.realise`.

A type stub: at run time the old name aliases that module (accountant/old_names.py)."""

from semidp.accountant.sensitivity.realise import *  # noqa: F403
