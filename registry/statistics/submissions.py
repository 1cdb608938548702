"""What each practice sent, kept per day: :class:`SubmissionCount`, and its recount.

An ingestion is counted once, when it finishes, in the transaction that finishes it (the
pipeline calls :func:`submissions_statement` or :func:`submissions_add`, under the practice
lock), on the UTC day it was received (``queued_at``): one ingestion, its courses
(``entry_count``), those accepted and those rejected. A failed ingestion counts too: the
practice did send it, and what it did not apply never reached the registry, so its courses
not accepted count as rejected (``courses = accepted + rejected`` always holds, and the
console's share rejected shows a practice whose submissions fail). An ingestion still queued
or processing is not counted yet.

The recount (:func:`submissions_recount`) reads the ingestions themselves. It lives here, with
the table it recounts and beside the statistics' recount, so that ``manage.py
recount_statistics`` and migration 0012 (both of the registry) can run it; the registry does
not import the ingestion app (the layers), so the statement names its table and five columns
as plain SQL, which the tests hold equal to the kept counts after every kind of ingestion.
Receipt retention purges a receipt's outcome rows but keeps the ingestion and its counts, so
the recount still equals after a purge; a sandbox's reset deletes its ingestions, and rebuilds
these counts as it goes (:func:`submissions_rebuild`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, date, datetime
from typing import Any

from django.db import connection, transaction
from django.utils.dateparse import parse_datetime

from registry.locks import lock_practice
from registry.models import SubmissionCount
from registry.statistics.counts import as_date, day_of, received_day

COUNTED = ("ingestions", "courses", "accepted", "rejected")


@dataclass(frozen=True, slots=True)
class Finished:
    """An ingestion as it finished: when it was received, its courses and their outcome."""

    queued_at: datetime
    courses: int
    accepted: int
    rejected: int
    failed: bool = False

    @property
    def rejected_counted(self) -> int:
        """A failed ingestion's courses not accepted are rejected (never applied)."""
        return max(self.courses - self.accepted, 0) if self.failed else self.rejected


Day = tuple[int, int, int, int, datetime]  # ingestions, courses, accepted, rejected, latest


def _by_day(finished: Iterable[Finished]) -> dict[date, Day]:
    days: dict[date, Day] = {}
    for one in finished:
        day = received_day(one.queued_at)
        n, courses, accepted, rejected, latest = days.get(day, (0, 0, 0, 0, one.queued_at))
        days[day] = (
            n + 1,
            courses + one.courses,
            accepted + one.accepted,
            rejected + one.rejected_counted,
            max(latest, one.queued_at),
        )
    return days


def submissions_statement(
    *, practice_id: int, finished: Iterable[Finished]
) -> tuple[str, list[Any]] | None:
    """The one upsert that counts these finished ingestions of one practice, with its values
    (None: none finished), for a caller that sends it with its own statements."""
    days = _by_day(finished)
    if not days:
        return None
    quote = connection.ops.quote_name
    table = quote(SubmissionCount._meta.db_table)
    columns = ["practice_id", quote("day"), *COUNTED, "last_received_at"]
    row = "(" + ", ".join(["%s"] * len(columns)) + ")"
    added = ", ".join(f"{name} = {table}.{name} + EXCLUDED.{name}" for name in COUNTED)
    # The later receipt time (GREATEST, written so that SQLite runs it too).
    latest = (
        f"last_received_at = CASE WHEN EXCLUDED.last_received_at > {table}.last_received_at "
        f"THEN EXCLUDED.last_received_at ELSE {table}.last_received_at END"
    )
    statement = (
        f"INSERT INTO {table} ({', '.join(columns)}) "  # noqa: S608 (names and placeholders)
        f"VALUES {', '.join([row] * len(days))} "
        f"ON CONFLICT (practice_id, {quote('day')}) DO UPDATE SET {added}, {latest}"
    )
    values: list[Any] = []
    for day, counted in sorted(days.items()):
        values.extend([practice_id, day, *counted])
    return statement, values


def submissions_add(*, practice_id: int, finished: Iterable[Finished]) -> None:
    """Count these finished ingestions: one statement, in the caller's transaction (which
    finishes them, under the practice lock)."""
    counting = submissions_statement(practice_id=practice_id, finished=finished)
    if counting is not None:
        with connection.cursor() as cursor:
            cursor.execute(*counting)


# --- Recount ------------------------------------------------------------------------------------

# The ingestion app's table (ingestion.models.Ingestion), named here: see the module's doc.
INGESTIONS = "ingestion_ingestion"

_RECOUNT = f"""
SELECT practice_id, {{day}} AS day, COUNT(*), SUM(entry_count), SUM(accepted_count),
       SUM(CASE WHEN status = 'failed'
                THEN CASE WHEN entry_count > accepted_count
                          THEN entry_count - accepted_count ELSE 0 END
                ELSE rejected_count END),
       MAX(queued_at)
FROM {INGESTIONS}
WHERE status IN ('completed', 'failed')
  AND (%(practice)s IS NULL OR practice_id = %(practice)s)
GROUP BY practice_id, {{day}}
"""  # noqa: S608 (constants only; the practice is a parameter)

Key = tuple[int, date]  # (practice id, day)
Counted = tuple[int, int, int, int, datetime]  # COUNTED, then last_received_at


def submissions_recount(*, practice_id: int | None = None) -> dict[Key, Counted]:
    """Every practice's days counted afresh from its finished ingestions (one statement)."""
    with connection.cursor() as cursor:
        cursor.execute(_RECOUNT.format(day=day_of("queued_at")), {"practice": practice_id})
        return {
            (row[0], as_date(row[1])): (
                int(row[2]),
                int(row[3]),
                int(row[4]),
                int(row[5]),
                _moment(row[6]),
            )
            for row in cursor.fetchall()
        }


def _moment(value: datetime | str) -> datetime:
    """A time read by raw SQL (SQLite answers UTC text)."""
    if isinstance(value, datetime):
        return value
    parsed = parse_datetime(value)
    if parsed is None:
        raise ValueError(f"not a time: {value!r}")
    return parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=UTC)


def submissions_stored(*, practice_id: int | None = None) -> dict[Key, Counted]:
    """Every day as kept in :class:`SubmissionCount` (a day with nothing counted is left out)."""
    rows = SubmissionCount.objects.all()
    if practice_id is not None:
        rows = rows.filter(practice_id=practice_id)
    return {
        (row[0], row[1]): row[2:]
        for row in rows.values_list("practice_id", "day", *COUNTED, "last_received_at")
        if row[2]
    }


def submissions_differences(
    *, practice_id: int | None = None
) -> dict[Key, tuple[Counted | None, Counted | None]]:
    """The days where the kept counts and a recount disagree: (kept, recounted)."""
    kept = submissions_stored(practice_id=practice_id)
    recounted = submissions_recount(practice_id=practice_id)
    return {
        key: (kept.get(key), recounted.get(key))
        for key in kept.keys() | recounted.keys()
        if kept.get(key) != recounted.get(key)
    }


def submissions_rebuild(*, practice_id: int) -> None:
    """Replace the practice's kept days by a recount, under its lock (every writer of them
    holds it)."""
    with transaction.atomic():
        lock_practice(practice_id)
        SubmissionCount.objects.filter(practice_id=practice_id).delete()
        SubmissionCount.objects.bulk_create(
            SubmissionCount(
                practice_id=practice,
                day=day,
                **dict(zip(COUNTED, counted[:4], strict=True)),
                last_received_at=counted[4],
            )
            for (practice, day), counted in submissions_recount(practice_id=practice_id).items()
        )
