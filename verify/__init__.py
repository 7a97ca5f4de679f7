"""semidp.verify: the spec runner, its kind registry, typed reports, certificates and the ``semidp`` CLI.

Public API: :func:`load` / :func:`loads` (specs), :func:`audit` (spec -> :class:`Audit`,
whose ``report`` is the contract's JSON and ``typed`` the :class:`Report` value),
:func:`check_claim` (the same function as :func:`semidp.check_claim`: effective guarantee first, then a
:class:`PrivacyClaim`), :func:`register` (add a mechanism kind), and the outcome types
:class:`Verified`, :class:`Refuted`, :class:`Unknown` and :class:`Bounds`.
"""

from semidp.accountant.core.outcome import Bounds, NotApplicable, Refuted, Skipped, Unknown, Verified
from semidp.verify.claim_api import ClaimResult, PrivacyClaim, check_claim
from semidp.verify.load import load, loads
from semidp.verify.registry import Kind, register
from semidp.verify.report import Check, Report
from semidp.verify.runner import Audit, audit, exit_code
from semidp.verify.spec import Spec
from semidp.verify.version import __version__

if __name__ != "semidp.verify":  # one identity per module (issue 23, item 8)
    raise ImportError(
        f"import semidp.verify, not {__name__!r}: the repository's verify/ folder is the package "
        "semidp.verify; a second import name would load second copies of its classes, which semidp rejects."
    )

__all__ = [
    "Audit",
    "Bounds",
    "Check",
    "ClaimResult",
    "Kind",
    "NotApplicable",
    "PrivacyClaim",
    "Refuted",
    "Report",
    "Skipped",
    "Spec",
    "Unknown",
    "Verified",
    "audit",
    "check_claim",
    "exit_code",
    "load",
    "loads",
    "register",
    "__version__",
]
