"""Deprecated name of :mod:`semidp.accountant.workloads.allocation`.

A type stub: at run time the old name aliases that module (accountant/old_names.py)."""

from semidp.accountant.workloads.allocation import *  # noqa: F403
