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

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from semidp.version import __version__

if TYPE_CHECKING:  # the names below are imported on first use (PEP 562): `semidp --version` stays light
    from semidp.accountant.core.outcome import Bounds, NotApplicable, Refuted, Skipped, Unknown, Verified
    from semidp.accountant.guarantees.definitions import GDP, RDP, ZCDP, ApproxDP, Guarantee, PureDP, TradeOff
    from semidp.accountant.guarantees.relations import AddRemove, Relation, Replace, SemiAdjacent
    from semidp.accountant.guarantees.semidp import semi_dp
    from semidp.verify.claim_api import ClaimResult, check_claim
    from semidp.verify.load import load, loads
    from semidp.verify.privacy_claim import PrivacyClaim
    from semidp.verify.registry import register
    from semidp.verify.report import Report
    from semidp.verify.runner import Audit, audit

#: Public name -> the module that defines it (imported on first access).
_EXPORTS = {
    "GDP": "semidp.accountant.guarantees.definitions",
    "RDP": "semidp.accountant.guarantees.definitions",
    "ZCDP": "semidp.accountant.guarantees.definitions",
    "ApproxDP": "semidp.accountant.guarantees.definitions",
    "Guarantee": "semidp.accountant.guarantees.definitions",
    "PureDP": "semidp.accountant.guarantees.definitions",
    "TradeOff": "semidp.accountant.guarantees.definitions",
    "Bounds": "semidp.accountant.core.outcome",
    "NotApplicable": "semidp.accountant.core.outcome",
    "Refuted": "semidp.accountant.core.outcome",
    "Skipped": "semidp.accountant.core.outcome",
    "Unknown": "semidp.accountant.core.outcome",
    "Verified": "semidp.accountant.core.outcome",
    "AddRemove": "semidp.accountant.guarantees.relations",
    "Relation": "semidp.accountant.guarantees.relations",
    "Replace": "semidp.accountant.guarantees.relations",
    "SemiAdjacent": "semidp.accountant.guarantees.relations",
    "semi_dp": "semidp.accountant.guarantees.semidp",
    "ClaimResult": "semidp.verify.claim_api",
    "PrivacyClaim": "semidp.verify.privacy_claim",
    "check_claim": "semidp.verify.claim_api",
    "load": "semidp.verify.load",
    "loads": "semidp.verify.load",
    "register": "semidp.verify.registry",
    "Report": "semidp.verify.report",
    "Audit": "semidp.verify.runner",
    "audit": "semidp.verify.runner",
}


def __getattr__(name: str) -> Any:
    """Import a public name on first use (PEP 562), so importing ``semidp`` does not import the mathematics."""
    if name in ("accountant", "mechanisms", "verify"):  # the layers, as attributes of the package
        return importlib.import_module(f"{__name__}.{name}")
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    """The module's names, the lazily imported ones included."""
    return sorted({*globals(), *_EXPORTS})


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
