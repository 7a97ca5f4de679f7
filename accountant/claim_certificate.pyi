"""Deprecated name of :mod:`semidp.accountant.guarantees.claim_certificate`.

A type stub: at run time the old name aliases that module (accountant/old_names.py)."""

from semidp.accountant.guarantees.claim_certificate import *  # noqa: F403
