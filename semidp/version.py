"""The installed version of semidp (light: `semidp --version` reads it without importing the mathematics)."""

from importlib import metadata

try:
    __version__ = metadata.version("semidp")
except metadata.PackageNotFoundError:  # pragma: no cover - running from a bare checkout
    __version__ = "0.1.0"

__all__ = ["__version__"]
