"""The ``semidp`` console script: ``semidp --version`` answers without importing the mathematics.

Importing :mod:`semidp` is light (its public names are imported on first use), so this module
reads the version and prints it as ``argparse`` would; every other command line goes to
:func:`semidp.verify.cli.main`, which imports numpy, scipy, sympy and z3.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from semidp.version import __version__


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``semidp`` console script; returns the exit status."""
    args = sys.argv[1:] if argv is None else list(argv)
    if args == ["--version"]:
        print(f"semidp {__version__}")
        return 0
    from semidp.verify.cli import main as cli_main

    return cli_main(argv)


__all__ = ["main"]
