"""The spec, report and exit-code contract users read (``specs/README.md``), as installed with semidp.

The repository's ``specs/README.md`` ships in the wheel as ``semidp/verify/contract.md`` (a symbolic link
in the repository, a copy in the wheel), so a user without the repository reads it with
``semidp contract`` (``--path``: where it is installed).
"""

from __future__ import annotations

from importlib.resources import as_file, files
from pathlib import Path

#: The contract's file name inside the ``semidp.verify`` package.
CONTRACT = "contract.md"


def contract_text() -> str:
    """The contract (Markdown) as installed."""
    return files("semidp.verify").joinpath(CONTRACT).read_text(encoding="utf-8")


def contract_path() -> Path:
    """Where the installed contract lives (a file inside the installed ``semidp.verify`` package)."""
    with as_file(files("semidp.verify").joinpath(CONTRACT)) as p:
        return Path(p)


def contract_hint() -> str:
    """The ``--help`` epilog that points to the installed contract."""
    return f"Spec keys, report fields and exit codes: `semidp contract` prints them (installed at {contract_path()})."


__all__ = ["CONTRACT", "contract_hint", "contract_path", "contract_text"]
