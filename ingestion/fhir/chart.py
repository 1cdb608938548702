"""The chart number (``external_record_id``): the key a practice uses for its records."""

from __future__ import annotations

from typing import Any

from .outcome import issue
from .values import UNSTORABLE

CHART_NUMBER_LIMIT = 200  # characters; a longer value is not a chart number


def read_chart_number(value: object, expression: str) -> str | dict[str, Any]:
    """The stripped chart number, or the OperationOutcome issue saying what is wrong."""
    if not isinstance(value, str) or not value.strip():
        return issue(
            "required",
            "The chart number is missing or empty; it is required to identify the record.",
            expression=expression,
        )
    chart_number = value.strip()
    if len(chart_number) > CHART_NUMBER_LIMIT:
        return issue(
            "value",
            f"The chart number is longer than {CHART_NUMBER_LIMIT} characters.",
            expression=expression,
        )
    if UNSTORABLE.search(chart_number):
        return issue(
            "value",
            "The chart number contains control characters or invalid Unicode.",
            expression=expression,
        )
    return chart_number
