"""semidp: privacy accounting and verification for releases published next to exact invariants.

The main API in one namespace:

* specs and audits: :func:`load`, :func:`loads`, :func:`audit` (a spec in, an
  :class:`Audit` out: ``.report`` is the contract's JSON, ``.typed`` the
  :class:`Report`), :func:`check_claim` with a typed :class:`PrivacyClaim` (a :class:`ClaimResult`
  back), :func:`register` (add a mechanism kind);
* guarantees and relations: :class:`PureDP`, :class:`ApproxDP`, :class:`GDP`,
  :class:`ZCDP`, :class:`RDP`, :class:`TradeOff`, :class:`Replace`,
  :class:`AddRemove`, :class:`SemiAdjacent`; :func:`semi_dp` [CA24, Prop. 15];
* outcomes: :class:`Verified`, :class:`Refuted`, :class:`Unknown`, :class:`Bounds`.

The three layers are subpackages: :mod:`semidp.accountant` (the mathematics),
:mod:`semidp.mechanisms` (samplers and private tests), :mod:`semidp.verify`
(specs, the runner, reports, certificates, the CLI).
"""

from semidp.accountant.guarantees import GDP, RDP, ZCDP, ApproxDP, Guarantee, PureDP, TradeOff
from semidp.accountant.outcome import Bounds, NotApplicable, Refuted, Skipped, Unknown, Verified
from semidp.accountant.relations import AddRemove, Relation, Replace, SemiAdjacent
from semidp.accountant.semidp import semi_dp
from semidp.verify.claim_api import ClaimResult, PrivacyClaim, check_claim
from semidp.verify.load import load, loads
from semidp.verify.registry import register
from semidp.verify.report import Report
from semidp.verify.runner import Audit, audit
from semidp.verify.version import __version__

__all__ = [
    "GDP",
    "RDP",
    "ZCDP",
    "AddRemove",
    "ApproxDP",
    "Audit",
    "Bounds",
    "ClaimResult",
    "Guarantee",
    "NotApplicable",
    "PrivacyClaim",
    "PureDP",
    "Refuted",
    "Relation",
    "Replace",
    "Report",
    "SemiAdjacent",
    "Skipped",
    "TradeOff",
    "Unknown",
    "Verified",
    "__version__",
    "audit",
    "check_claim",
    "load",
    "loads",
    "register",
    "semi_dp",
]
