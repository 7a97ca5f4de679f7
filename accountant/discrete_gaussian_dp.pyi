"""Deprecated name of :mod:`semidp.accountant.profiles.discrete_gaussian_dp`.

A type stub: at run time the old name aliases that module (accountant/old_names.py)."""

from semidp.accountant.profiles.discrete_gaussian_dp import *  # noqa: F403
