"""The installed version of semidp (reported in every audit report); defined in :mod:`semidp.version`."""

from semidp.version import __version__

__all__ = ["__version__"]
