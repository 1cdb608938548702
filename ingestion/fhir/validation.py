"""Optional full FHIR validation with fhir.resources (R4B), for comparison: off by default.

The service validates structure only (spec section 1); full model validation costs
milliseconds per course against microseconds for the mapping, so it stays off the hot path.
``REGISTRY_FHIR_VALIDATION=true`` switches it on: each course of care is validated before it
is mapped and one that does not validate is rejected, with diagnostics that name the element
(pydantic's location) and never repeat the value.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from fhir.resources.R4B.bundle import Bundle
from pydantic import ValidationError

from ingestion.fhir.model import Rejection
from ingestion.fhir.outcome import issue, operation_outcome

MAX_ISSUES = 20


def validate_course(bundle: object, *, reference: str, path: str) -> Rejection | None:
    """None when ``bundle`` is a valid R4B Bundle, else a Rejection naming each fault."""
    if not isinstance(bundle, dict):
        return None  # the mapping reports what is not a Bundle
    try:
        Bundle.model_validate(bundle)
    except ValidationError as error:
        issues = [
            issue("structure", _message(detail), expression=_expression(path, detail["loc"]))
            for detail in error.errors(include_input=False, include_url=False)[:MAX_ISSUES]
        ]
        chart = bundle.get("identifier", {}) if isinstance(bundle.get("identifier"), dict) else {}
        value = chart.get("value")
        return Rejection(
            reference=reference,
            operation_outcome=operation_outcome(*issues),
            external_record_id=value if isinstance(value, str) else None,
        )
    return None


def _message(detail: Mapping[str, Any]) -> str:
    return f"Not a valid FHIR R4B element: {detail.get('msg', 'invalid')}."


def _expression(path: str, location: tuple[Any, ...]) -> str:
    parts = [path]
    for step in location:
        if isinstance(step, int):
            parts[-1] += f"[{step}]"
        else:
            parts.append(str(step))
    return ".".join(parts)
