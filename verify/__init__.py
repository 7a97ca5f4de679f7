"""semidp.verify: checks that claims follow, the spec runner and the ``semidp`` CLI.

Public API: :func:`load` / :func:`loads` (specs), :func:`audit` (spec -> report),
:func:`check_claim`, the outcome types :class:`Verified`, :class:`Refuted`,
:class:`Unknown` and :class:`Bounds`.
"""

from importlib import metadata as _metadata

try:
    __version__ = _metadata.version("semidp")
except _metadata.PackageNotFoundError:  # pragma: no cover - running from a bare checkout
    __version__ = "0.1.0"

from verify.audit import Audit, audit, exit_code  # noqa: E402
from verify.claims import check_claim  # noqa: E402
from verify.outcome import Bounds, Refuted, Unknown, Verified  # noqa: E402
from verify.spec import Spec, load, loads  # noqa: E402

__all__ = [
    "Audit", "Bounds", "Refuted", "Spec", "Unknown", "Verified",
    "audit", "check_claim", "exit_code", "load", "loads", "__version__",
]
