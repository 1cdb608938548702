"""One way to write a moment, everywhere: ``24 Nov 2026, 22:40 UTC``.

The format is Django's ``DATETIME_FORMAT`` of the service's own format module
(config/formats/en/formats.py), which the admin uses too; pages write it with the ``when``
filter (registry/templatetags/dates.py), Python code with :func:`when`.
"""

from __future__ import annotations

from datetime import UTC, date, datetime

from django.utils import formats, timezone

BLANK = "\N{EN DASH}"  # an unknown or empty value


def when(value: datetime | None) -> str:
    """A moment in UTC, as people read it: ``24 Nov 2026, 22:40 UTC``."""
    if value is None:
        return BLANK
    moment = timezone.localtime(value, UTC) if timezone.is_aware(value) else value
    return formats.date_format(moment, "DATETIME_FORMAT")


def day(value: date | None) -> str:
    """A day: ``24 Nov 2026``."""
    return formats.date_format(value, "DATE_FORMAT") if value else BLANK
