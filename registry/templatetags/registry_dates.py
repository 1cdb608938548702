"""One date format on every page: ``{% load registry_dates %}`` then ``{{ value|registry_date }}``.

"24 Nov 2026, 22:32 UTC" for a moment, "24 Nov 2026" for a day: the month in letters, so the
order of day and month is never in doubt (docs/decisions.md, "Dates on pages").
"""

from __future__ import annotations

import datetime

from django import template
from django.utils import dateformat, timezone

register = template.Library()

DAY_FORMAT = "j M Y"
MOMENT_FORMAT = "j M Y, H:i"


@register.filter
def registry_date(value: datetime.date | datetime.datetime | None) -> str:
    """A moment in UTC with its minutes, a day alone; nothing for no value."""
    if value is None or value == "":
        return ""
    if isinstance(value, datetime.datetime):
        moment = timezone.localtime(value, datetime.UTC) if timezone.is_aware(value) else value
        return f"{dateformat.format(moment, MOMENT_FORMAT)} UTC"
    return dateformat.format(value, DAY_FORMAT)
