"""Deprecated name of :mod:`semidp.accountant.workloads.accounting`.

A type stub: at run time the old name aliases that module (accountant/old_names.py)."""

from semidp.accountant.workloads.accounting import *  # noqa: F403
