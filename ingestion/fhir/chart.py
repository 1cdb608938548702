"""The chart number (``external_record_id``): the key a practice uses for its records.

Chart numbers that look identical are one chart: each is normalised before it is stored or
compared (Unicode NFC, without format characters such as a zero-width space, a byte-order
mark or a direction mark, and stripped of surrounding white space).
"""

from __future__ import annotations

import unicodedata
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
    chart_number = normalise_chart_number(value)
    if not chart_number:
        return issue(
            "required",
            "The chart number is missing or empty; it is required to identify the record.",
            expression=expression,
        )
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


def normalise_chart_number(value: str) -> str:
    """NFC, without format characters (Unicode category Cf), stripped."""
    if value.isascii():
        return value.strip()
    visible = "".join(c for c in value if unicodedata.category(c) != "Cf")
    return unicodedata.normalize("NFC", visible).strip()
