"""Silent hospitals (registry/silence.py) at the rule's bounds, and the metric that counts them.

Days are given relative to a fixed *today*, so nothing depends on the clock."""

from __future__ import annotations

import secrets
from datetime import UTC, date, datetime, time, timedelta

import pytest
from django.test import override_settings
from prometheus_client.parser import text_string_to_metric_families

from registry.models import Practice, SubmissionCount
from registry.silence import silent_count, silent_practice_ids
from tests.registry.factories import PracticeFactory

TODAY = date(2026, 11, 29)
TOKEN = secrets.token_urlsafe(32)


def sent(practice: Practice, *days_ago: int, today: date = TODAY) -> None:
    """A day row for each of ``days_ago`` (0 is today), one ingestion of two courses each."""
    for ago in days_ago:
        day = today - timedelta(days=ago)
        SubmissionCount.objects.create(
            practice=practice,
            day=day,
            ingestions=1,
            courses=2,
            accepted=2,
            last_received_at=datetime.combine(day, time(12), tzinfo=UTC),
        )


def weeks(*indexes: int, offset: int = 3) -> list[int]:
    """A day in each week ``k`` of the eight (days 7k to 7k+6 ago), ``offset`` into it."""
    return [7 * k + offset for k in indexes]


pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True, params=["postgresql", "elsewhere"])
def rule(request, monkeypatch):
    """Each test holds for the one SQL statement and for the embedded database's Python
    (chosen by the connection's vendor; both read the same PostgreSQL rows here)."""
    if request.param == "elsewhere":
        from django.db import connection

        monkeypatch.setattr(connection, "vendor", "sqlite")
    return request.param


def test_five_weeks_of_eight_usually_send_four_do_not():
    five, four = PracticeFactory(), PracticeFactory()
    sent(five, *weeks(0, 2, 4, 6, 7))
    sent(four, *weeks(0, 2, 4, 6))
    assert silent_practice_ids(today=TODAY, after_days=3) == {five.pk}


def test_the_eight_weeks_end_today_and_start_55_days_ago():
    inside, outside = PracticeFactory(), PracticeFactory()
    # Five weeks each; the fifth on the eighth week's first day (55 ago) or the day before.
    sent(inside, 55, *weeks(1, 2, 3, 4))
    sent(outside, 56, *weeks(1, 2, 3, 4))
    assert silent_practice_ids(today=TODAY, after_days=3) == {inside.pk}


def test_silent_after_exactly_the_setting_not_one_day_less():
    quiet_for_n, quiet_for_n_less_one = PracticeFactory(), PracticeFactory()
    sent(quiet_for_n, 3, *weeks(1, 2, 3, 4))  # last sent 3 days ago: nothing on days 0, 1, 2
    sent(quiet_for_n_less_one, 2, *weeks(1, 2, 3, 4))
    assert silent_practice_ids(today=TODAY, after_days=3) == {quiet_for_n.pk}
    assert silent_practice_ids(today=TODAY, after_days=2) == {
        quiet_for_n.pk,
        quiet_for_n_less_one.pk,
    }


def test_several_days_in_one_week_count_once_and_an_empty_row_is_not_sending():
    busy_week, empty_rows = PracticeFactory(), PracticeFactory()
    sent(busy_week, 7, 8, 9, 10, 11, 12, 13, *weeks(2, 3, 4))  # four weeks
    sent(empty_rows, *weeks(1, 2, 3, 4))
    SubmissionCount.objects.create(
        practice=empty_rows,
        day=TODAY - timedelta(days=43),
        last_received_at=datetime.combine(TODAY, time(0), tzinfo=UTC),
    )  # no ingestion on that day (week 6)
    assert silent_practice_ids(today=TODAY, after_days=3) == set()


def test_a_sandbox_practice_is_never_silent():
    sandbox = PracticeFactory(sandbox=True)
    sent(sandbox, *weeks(1, 2, 3, 4, 5, 6, 7))
    assert silent_practice_ids(today=TODAY, after_days=3) == set()


def test_the_setting_is_read(settings):
    practice = PracticeFactory()
    sent(practice, 5, *weeks(1, 2, 3, 4))
    settings.REGISTRY_SILENT_AFTER_DAYS = 5
    assert silent_count(today=TODAY) == 1
    settings.REGISTRY_SILENT_AFTER_DAYS = 6
    assert silent_count(today=TODAY) == 0


@override_settings(REGISTRY_METRICS_TOKEN=TOKEN)
def test_the_metric_counts_the_silent_practices(client):
    today = datetime.now(UTC).date()
    for _ in range(2):
        sent(PracticeFactory(), *weeks(1, 2, 3, 4, 5), today=today)  # silent
    sent(PracticeFactory(), *weeks(0, 1, 2, 3, 4, offset=0), today=today)  # sent today
    response = client.get("/metrics", headers={"Authorization": f"Bearer {TOKEN}"})
    families = {f.name: f for f in text_string_to_metric_families(response.content.decode())}
    assert families["registry_practices_silent"].samples[0].value == 2
