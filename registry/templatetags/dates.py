"""``{% load dates %}``: ``{{ moment|when }}`` writes a ``<time>`` in the service's one format."""

from __future__ import annotations

from datetime import datetime

from django import template
from django.utils.html import format_html
from django.utils.safestring import SafeString

from registry import dates

register = template.Library()


@register.filter
def when(value: datetime | None) -> SafeString | str:
    if value is None:
        return dates.BLANK
    return format_html('<time datetime="{}">{}</time>', value.isoformat(), dates.when(value))
