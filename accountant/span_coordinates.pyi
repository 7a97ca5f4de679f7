"""Deprecated name of :mod:`semidp.accountant.geometry.span_coordinates`.

A type stub: at run time the old name aliases that module (accountant/old_names.py)."""

from semidp.accountant.geometry.span_coordinates import *  # noqa: F403
