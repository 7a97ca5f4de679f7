"""The options of a run that a kind may read: one typed value handed through from the caller to the kind.

The CLI (``--allow-code``, ``--workers``/``--scheduler``), the pytest plugin (``--semidp-allow-code``) and a
Python caller of :func:`verify.runner.audit` build one :class:`RunOptions`; the runner puts it on the
:class:`~verify.context.Context` unchanged, and only the kind that needs an option reads it.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class RunOptions:
    """The per-run options a kind may read (``ctx.options``): set once by the CLI, the pytest plugin or a caller
    of :func:`verify.runner.audit`, and handed through unchanged to every kind's :meth:`Kind.run`.

    A kind that needs an option reads it here; nothing between the command line and the kind names it.
    """

    allow_code: bool = False
    """``--allow-code``: a kind may import code named in the spec (``implementation``); never without it."""
    scheduler: str | None = None
    """A Dask scheduler address (``--workers``/``--scheduler`` with one spec): a kind's independent batches run
    there (:func:`verify.dask_client.run_tasks`); ``None``: here, one after the other."""


DEFAULT_OPTIONS = RunOptions()
"""No code execution, no scheduler: the options of a run that sets none."""


__all__ = ["DEFAULT_OPTIONS", "RunOptions"]
