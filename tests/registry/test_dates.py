"""One date format everywhere (registry/dates.py, config/formats/en/formats.py)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

from django.template import Context, Template

from registry.dates import BLANK, day, when

MOMENT = datetime(2026, 3, 7, 9, 5, tzinfo=UTC)


def test_a_moment_reads_day_month_year_time_and_utc():
    assert when(MOMENT) == "7 Mar 2026, 09:05 UTC"


def test_a_moment_elsewhere_is_written_in_utc():
    assert when(MOMENT.astimezone(timezone(timedelta(hours=-7)))) == "7 Mar 2026, 09:05 UTC"


def test_a_day_and_a_missing_moment():
    assert day(MOMENT.date()) == "7 Mar 2026"
    assert when(None) == BLANK and day(None) == BLANK


def test_templates_write_the_same_format_with_a_machine_readable_time():
    html = Template("{% load dates %}{{ moment|when }}").render(Context({"moment": MOMENT}))
    assert html == '<time datetime="2026-03-07T09:05:00+00:00">7 Mar 2026, 09:05 UTC</time>'


def test_djangos_own_formats_are_the_same_so_the_admin_writes_it_too():
    context = Context({"moment": MOMENT})
    assert Template("{{ moment|date }}").render(context) == "7 Mar 2026"
    assert Template("{{ moment }}").render(context) == "7 Mar 2026, 09:05 UTC"
