"""Deprecated name of :mod:`semidp.accountant.geometry.face_fan`.

A type stub: at run time the old name aliases that module (accountant/old_names.py)."""

from semidp.accountant.geometry.face_fan import *  # noqa: F403
