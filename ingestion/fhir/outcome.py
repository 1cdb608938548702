"""The one place where FHIR OperationOutcomes are built.

Every error a caller sees (HTTP errors and per-record rejections alike) is built here, so
the shape is the same everywhere: ``resourceType``, and ``issue[]`` with ``severity``,
``code``, ``diagnostics`` and, when an element is at fault, ``expression``.

Diagnostics name the element at fault and never echo submitted values: a submitted value
may be a name or a date of birth.
"""

from __future__ import annotations

from typing import Any, Literal

Severity = Literal["fatal", "error", "warning", "information"]

# The issue codes this service uses (a subset of http://hl7.org/fhir/issue-type).
IssueCode = Literal[
    "structure",
    "required",
    "value",
    "invalid",
    "conflict",
    "not-found",
    "not-supported",
    "security",
    "login",
    "forbidden",
    "too-costly",
    "throttled",
    "exception",
    "transient",
    "timeout",
    "informational",
    "processing",
    "duplicate",
]


def issue(
    code: IssueCode,
    diagnostics: str,
    *,
    expression: str | list[str] | None = None,
    severity: Severity = "error",
) -> dict[str, Any]:
    entry: dict[str, Any] = {"severity": severity, "code": code, "diagnostics": diagnostics}
    if expression:
        entry["expression"] = [expression] if isinstance(expression, str) else list(expression)
    return entry


def warning_issue(rule: str, diagnostics: str, *, expression: str | list[str]) -> dict[str, Any]:
    """A plausibility finding: a ``warning`` (code ``value``) naming its rule in ``details``."""
    entry = issue("value", diagnostics, expression=expression, severity="warning")
    entry["details"] = {"coding": [{"code": rule}]}
    return entry


def operation_outcome(*issues: dict[str, Any]) -> dict[str, Any]:
    return {"resourceType": "OperationOutcome", "issue": list(issues)}


def error_outcome(
    code: IssueCode,
    diagnostics: str,
    *,
    expression: str | list[str] | None = None,
    severity: Severity = "error",
) -> dict[str, Any]:
    """An OperationOutcome with a single issue: the common case."""
    return operation_outcome(issue(code, diagnostics, expression=expression, severity=severity))
