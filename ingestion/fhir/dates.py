"""FHIR date and dateTime parsing for the non-identifying stamps (Bundle, Consent).

``datetime.fromisoformat`` is both too lenient (week dates, unicode digits) and too strict
(FHIR allows up to nine fractional digits, .NET sends seven), so FHIR's own grammar is
matched here. Partial values (``YYYY``, ``YYYY-MM``, a date) read as midnight UTC on the
first day they name; a time without an offset reads as UTC.
"""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, timedelta, timezone
from functools import lru_cache

_DATETIME = re.compile(
    r"([0-9]{4})(?:-([0-9]{2})(?:-([0-9]{2})"
    r"(?:T([0-9]{2}):([0-9]{2})(?::([0-9]{2})(?:\.([0-9]{1,9}))?)?"
    r"(Z|[+-][0-9]{2}:[0-9]{2})?)?)?)?",
    re.ASCII,
)
_DATE = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2})", re.ASCII)
_LONGEST = 40  # "YYYY-MM-DDThh:mm:ss.fffffffff+hh:mm" is 35 characters


def parse_datetime(value: object) -> datetime | None:
    """An aware datetime from a FHIR date/dateTime/instant string, else None."""
    if not isinstance(value, str) or len(value) > _LONGEST:
        return None
    match = _DATETIME.fullmatch(value.strip())
    if match is None:
        return None
    year, month, day, hour, minute, second, fraction, offset = match.groups()
    try:
        return datetime(
            int(year),
            int(month or 1),
            int(day or 1),
            int(hour or 0),
            int(minute or 0),
            int(second or 0),
            int((fraction or "0")[:6].ljust(6, "0")),
            tzinfo=_zone(offset),
        )
    except ValueError:  # a day, hour or offset out of range
        return None


def parse_date(value: object) -> date | None:
    """A calendar date from a full ``YYYY-MM-DD`` string, else None."""
    if not isinstance(value, str) or len(value) != 10:
        return None
    match = _DATE.fullmatch(value)
    if match is None:
        return None
    try:
        return date(int(match[1]), int(match[2]), int(match[3]))
    except ValueError:
        return None


@lru_cache(maxsize=128)  # senders use a handful of offsets; building one costs a microsecond
def _zone(offset: str | None) -> timezone:
    if offset is None or offset == "Z":
        return UTC
    sign = -1 if offset[0] == "-" else 1
    hours, minutes = int(offset[1:3]), int(offset[4:6])
    if minutes > 59:
        raise ValueError("offset minutes out of range")
    return timezone(sign * timedelta(hours=hours, minutes=minutes))
