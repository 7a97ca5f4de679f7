"""The ``semidp`` console script: ``semidp --version`` answers without importing the mathematics.

Importing :mod:`semidp` is light (its public names are imported on first use), so this module
reads the version and prints it as ``argparse`` would; every other command line goes to
:func:`semidp.verify.cli.main`, which imports numpy, scipy, sympy and z3.
"""

from __future__ import annotations

import os
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

    try:
        code = cli_main(argv)
        if argv is None:  # the console script: a local Dask cluster killed at its hard stop leaves no exit handlers
            from semidp.verify.dask_client import exit_if_stopped

            exit_if_stopped(code)
        return code
    except BrokenPipeError:  # `semidp contract | head`: the reader left; not an error of ours, no traceback
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())  # Python's own flush at exit would raise again
        return 0


__all__ = ["main"]
