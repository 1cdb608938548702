"""Silent hospitals: a practice that usually sends but has stopped (docs/registry-office.md).

The rule, in UTC days, for *today* ``T`` and ``N`` = ``REGISTRY_SILENT_AFTER_DAYS``:

* the last eight weeks are eight 7-day periods ending today: week ``k`` (0 to 7) is the days
  ``T - 7k - 6`` to ``T - 7k``, both included, so together they are ``T - 55`` to ``T``;
* a practice *sent* on a day when it has a :class:`registry.models.SubmissionCount` row for
  that day with at least one ingestion; it *usually sends* when it sent on some day of at
  least :data:`USUAL_WEEKS` of those eight weeks;
* it is *silent* when it usually sends and its last day of sending is ``T - N`` or earlier
  (it sent nothing on the last ``N`` days, today included). Sandbox practices are never
  silent.

It lives in ``registry`` so that both the metric (``ingestion.monitoring.metrics``) and the
console (``office``) read the one rule, in one statement cheap at scrape time: first the
practices that sent nothing in the last ``N`` days (one seek each on the ``(practice, day)``
unique index), then only their day rows of the last eight weeks. The weeks a practice sent
in are the bits of one byte (bit ``k`` for week ``k``), OR-ed over its day rows and counted.
"""

from __future__ import annotations

from datetime import UTC, date, timedelta
from typing import Any

from django.conf import settings
from django.db import connection
from django.utils import timezone

WEEKS = 8
USUAL_WEEKS = 5
WINDOW_DAYS = 7 * WEEKS

_SILENT = """
    WITH quiet AS (
        SELECT p.id FROM registry_practice p
         WHERE NOT p.sandbox
           AND NOT EXISTS (
                SELECT 1 FROM registry_submissioncount recent
                 WHERE recent.practice_id = p.id AND recent.ingestions > 0
                   AND recent.day > %(today)s::date - %(after)s::int
                   AND recent.day <= %(today)s::date))
    SELECT s.practice_id
      FROM registry_submissioncount s
      JOIN quiet ON quiet.id = s.practice_id
     WHERE s.day > %(today)s::date - %(window)s::int AND s.day <= %(today)s::date
       AND s.ingestions > 0
     GROUP BY s.practice_id
    HAVING bit_count(bit_or((1 << ((%(today)s::date - s.day) / 7))::bit(8))) >= %(usual)s::int
"""


def utc_today() -> date:
    return timezone.now().astimezone(UTC).date()


def silent_practice_ids(*, today: date | None = None, after_days: int | None = None) -> set[int]:
    """The ids of the silent practices (the rule above), in one query."""
    params: dict[str, Any] = {
        "today": today or utc_today(),
        "window": WINDOW_DAYS,
        "usual": USUAL_WEEKS,
        "after": settings.REGISTRY_SILENT_AFTER_DAYS if after_days is None else after_days,
    }
    if connection.vendor != "postgresql":
        return _silent_elsewhere(**params)
    with connection.cursor() as cursor:
        cursor.execute(_SILENT, params)
        return {row[0] for row in cursor.fetchall()}


def _silent_elsewhere(*, today: date, window: int, usual: int, after: int) -> set[int]:
    """The same rule for the embedded SQLite database (a first look: a few rows), in Python
    over the window's day rows."""
    from registry.models import SubmissionCount

    rows = SubmissionCount.objects.filter(
        practice__sandbox=False,
        ingestions__gt=0,
        day__gt=today - timedelta(days=window),
        day__lte=today,
    ).values_list("practice_id", "day")
    weeks: dict[int, set[int]] = {}
    last: dict[int, date] = {}
    for practice_id, day in rows:
        weeks.setdefault(practice_id, set()).add((today - day).days // 7)
        last[practice_id] = max(day, last.get(practice_id, day))
    return {
        practice_id
        for practice_id, sent_weeks in weeks.items()
        if len(sent_weeks) >= usual and (today - last[practice_id]).days >= after
    }


def silent_count(*, today: date | None = None) -> int:
    """``registry_practices_silent``: how many practices are silent now."""
    return len(silent_practice_ids(today=today))
