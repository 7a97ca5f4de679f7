"""The installed version of semidp (reported in every audit report)."""

from importlib import metadata

try:
    __version__ = metadata.version("semidp")
except metadata.PackageNotFoundError:  # pragma: no cover - running from a bare checkout
    __version__ = "0.1.0"

__all__ = ["__version__"]
