"""Deprecated name of :mod:`semidp.accountant.workloads.design`.

A type stub: at run time the old name aliases that module (accountant/old_names.py)."""

from semidp.accountant.workloads.design import *  # noqa: F403
