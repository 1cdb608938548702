"""The consent decision of a course of care (spec 2.5).

Granted only when the first Consent has ``status`` ``active`` and no provision, at any
depth of nesting, has ``type`` ``deny``. Everything else (no Consent, another status, a
deny anywhere) is not granted. ``dateTime`` is kept when it parses; it never blocks.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from .dates import parse_datetime

# Provisions nest without limit in FHIR; a walk of this many nodes is far beyond any real
# Consent, and stopping there keeps a hostile payload cheap. Stopping early counts as deny.
_MAX_PROVISIONS = 10_000
_DECIDED = ("active", "rejected")


def consent_decision(consent: Mapping[str, Any] | None) -> tuple[bool, datetime | None]:
    """(granted, dateTime) for the first Consent, or (False, None) when there is none."""
    if consent is None:
        return False, None
    granted = consent.get("status") == "active" and not _denies(consent.get("provision"))
    return granted, parse_datetime(consent.get("dateTime"))


def consent_decided(consent: Mapping[str, Any] | None) -> bool:
    """Whether the first Consent states a decision: ``active`` (granted, or denied by a
    provision) or ``rejected``. No Consent, or a draft, proposed, inactive or
    entered-in-error one, is no decision (docs/decisions.md, "Data quality")."""
    return consent is not None and consent.get("status") in _DECIDED


def _denies(provision: object) -> bool:
    """Whether any provision in the tree has type deny (walked without recursion)."""
    pending = [provision]
    visited = 0
    while pending:
        visited += 1
        if visited > _MAX_PROVISIONS:
            return True
        node = pending.pop()
        if isinstance(node, list):
            pending.extend(node)
        elif isinstance(node, dict):
            if node.get("type") == "deny":
                return True
            pending.append(node.get("provision"))
    return False
