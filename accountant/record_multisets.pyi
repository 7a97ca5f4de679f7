"""Deprecated name of :mod:`semidp.accountant.combinatorics.record_multisets`.

A type stub: at run time the old name aliases that module (accountant/old_names.py)."""

from semidp.accountant.combinatorics.record_multisets import *  # noqa: F403
