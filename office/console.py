"""The registry console's rows: every practice at a glance, from kept counts only.

Each figure comes from a table kept as records and ingestions change (docs/registry-office.md,
"The console"): :class:`registry.models.SubmissionCount` (what was sent, per practice and
day), :class:`registry.models.ReceivedCount` (the statistics' counts by the day a record was
first received), :class:`registry.models.BirthCount` (the review backlog) and the keys. No
query counts records or ingestions: a fixed number of queries, each aggregating the day rows
of the window grouped by practice, then the rows are filtered and sorted in Python (at most a
few thousand practices). The one read of records is the oldest flagged record of each
practice that has a backlog: an index seek per practice on the review queue's partial index
(``record_review_queue``), one statement.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from typing import Any

from django.db import connection
from django.db.models import Max, Min, Q, Sum
from django.utils import timezone

from keys.models import ApiKey
from registry.dates import BLANK
from registry.models import BirthCount, Practice, ReceivedCount, Record, SubmissionCount
from registry.silence import silent_practice_ids, utc_today
from registry.statistics.quality import COMPLETENESS

WEEK_DAYS = 7
MONTH_DAYS = 30


class KeyStatus:
    ACTIVE = "Active"
    REVOKED = "Revoked"
    NONE = "None"


@dataclass(frozen=True)
class Share:
    """A rate with its parts, so a page can say "12.5% (1 of 8)"; None when nothing to divide."""

    numerator: int
    denominator: int

    @property
    def rate(self) -> float | None:
        return self.numerator / self.denominator if self.denominator else None

    @property
    def percent(self) -> str:
        rate = self.rate
        return BLANK if rate is None else f"{rate:.1%}"


@dataclass(frozen=True)
class LeastComplete:
    """The completeness item with the lowest rate (30 days), its words and its share."""

    name: str
    label: str
    share: Share


@dataclass
class ConsoleRow:
    practice: Practice
    silent: bool = False
    key_status: str = KeyStatus.NONE
    key_last_used: datetime | None = None
    last_received: datetime | None = None
    courses_7: int = 0
    courses_30: int = 0
    rejected: Share = field(default_factory=lambda: Share(0, 0))
    warned: Share = field(default_factory=lambda: Share(0, 0))
    timely: Share = field(default_factory=lambda: Share(0, 0))
    least_complete: LeastComplete | None = None
    backlog: int = 0
    oldest_flagged: datetime | None = None
    oldest_flagged_days: int | None = None  # whole days since it was received


@dataclass(frozen=True)
class Column:
    """A sortable column: its key in ``?sort=``, its heading, and the value it sorts by."""

    key: str
    label: str
    value: Callable[[ConsoleRow], Any]
    numeric: bool = True


def _least_rate(row: ConsoleRow) -> float | None:
    return row.least_complete.share.rate if row.least_complete else None


def _oldest(row: ConsoleRow) -> float | None:
    # Older first when descending: the age grows as the moment goes back.
    return -row.oldest_flagged.timestamp() if row.oldest_flagged else None


def _key_rank(row: ConsoleRow) -> int:
    return {KeyStatus.ACTIVE: 2, KeyStatus.REVOKED: 1}.get(row.key_status, 0)


COLUMNS: list[Column] = [
    Column("practice", "Practice", lambda r: r.practice.label.casefold(), numeric=False),
    Column("key", "Key", _key_rank, numeric=False),
    Column("key_used", "Key last used", lambda r: r.key_last_used),
    Column("received", "Last received", lambda r: r.last_received),
    Column("courses_7", "Courses, 7 days", lambda r: r.courses_7),
    Column("courses_30", "Courses, 30 days", lambda r: r.courses_30),
    Column("rejected", "Rejected, 30 days", lambda r: r.rejected.rate),
    Column("warned", "Drew a warning, 30 days", lambda r: r.warned.rate),
    Column("timely", "Within 10 days, 30 days", lambda r: r.timely.rate),
    Column("complete", "Least complete, 30 days", _least_rate),
    Column("backlog", "Review backlog", lambda r: r.backlog),
    Column("oldest", "Oldest flagged", _oldest),
]
BY_KEY = {column.key: column for column in COLUMNS}
DEFAULT_SORT = "default"  # silent ones first, then by practice


@dataclass(frozen=True)
class Filters:
    search: str = ""
    sandbox: bool = False
    silent_only: bool = False


def console_rows(filters: Filters, *, today: date | None = None) -> list[ConsoleRow]:
    """Every practice that passes ``filters``, with its figures, in no particular order."""
    today = today or utc_today()
    practices = Practice.objects.order_by("slug")
    if not filters.sandbox:
        practices = practices.filter(sandbox=False)
    if filters.search:
        practices = practices.filter(
            Q(name__icontains=filters.search) | Q(slug__icontains=filters.search)
        )
    silent = silent_practice_ids(today=today)
    rows = {p.pk: ConsoleRow(practice=p, silent=p.pk in silent) for p in practices}
    if filters.silent_only:
        rows = {pk: row for pk, row in rows.items() if row.silent}
    if not rows:
        return []
    ids = list(rows)
    _keys(rows)
    _submissions(rows, ids, today)
    _last_received(rows, ids)
    _received(rows, ids, today)
    _backlog(rows, ids)
    _oldest_flagged(rows, [pk for pk, row in rows.items() if row.backlog])
    return list(rows.values())


def sort_rows(rows: list[ConsoleRow], key: str, descending: bool) -> list[ConsoleRow]:
    """By a column, unknown values last either way; ties by practice. ``default``: silent
    first, then by practice."""
    by_name = sorted(rows, key=lambda r: (r.practice.label.casefold(), r.practice.slug))
    if key not in BY_KEY:
        return sorted(by_name, key=lambda r: not r.silent)
    value = BY_KEY[key].value
    known = [r for r in by_name if value(r) is not None]
    unknown = [r for r in by_name if value(r) is None]
    return sorted(known, key=value, reverse=descending) + unknown


def _keys(rows: dict[int, ConsoleRow]) -> None:
    # No filter on the practices: a key table has a few rows per practice, read in one pass.
    keys = ApiKey.objects.values_list("practice_id", "revoked_at", "last_used_at")
    for practice_id, revoked_at, last_used_at in keys:
        row = rows.get(practice_id)
        if row is None:
            continue
        if revoked_at is None:
            row.key_status = KeyStatus.ACTIVE
        elif row.key_status == KeyStatus.NONE:
            row.key_status = KeyStatus.REVOKED
        if last_used_at and (row.key_last_used is None or last_used_at > row.key_last_used):
            row.key_last_used = last_used_at


def _fetch(sql: str, params: dict[str, Any]) -> list[tuple[Any, ...]]:
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchall()


_SUBMISSIONS = """
    SELECT practice_id,
           COALESCE(SUM(courses) FILTER (WHERE day > %(today)s::date - %(week)s::int), 0),
           SUM(courses), SUM(rejected)
      FROM registry_submissioncount
      JOIN unnest(%(ids)s::bigint[]) AS chosen(id) ON chosen.id = practice_id
     WHERE day > %(today)s::date - %(month)s::int AND day <= %(today)s::date
     GROUP BY practice_id
"""


def _postgresql() -> bool:
    """The statements here are PostgreSQL's; the embedded SQLite default (a first look, a few
    rows) reads the same kept rows through the ORM instead."""
    return connection.vendor == "postgresql"


def _window(today: date, days: int) -> Q:
    return Q(day__gt=today - timedelta(days=days), day__lte=today)


def _submissions(rows: dict[int, ConsoleRow], ids: list[int], today: date) -> None:
    params = {"today": today, "week": WEEK_DAYS, "month": MONTH_DAYS, "ids": ids}
    found = (
        _fetch(_SUBMISSIONS, params)
        if _postgresql()
        else SubmissionCount.objects.filter(_window(today, MONTH_DAYS), practice_id__in=ids)
        .values("practice_id")
        .annotate(
            week=Sum("courses", filter=_window(today, WEEK_DAYS), default=0),
            month=Sum("courses"),
            rejected=Sum("rejected"),
        )
        .values_list("practice_id", "week", "month", "rejected")
    )
    for practice_id, week, month, rejected in found:
        row = rows[practice_id]
        row.courses_7, row.courses_30 = int(week), int(month)
        row.rejected = Share(int(rejected), int(month))


# The latest day row of each practice, by the (practice, day) unique index: one seek each.
_LAST_RECEIVED = """
    SELECT p.id, last.last_received_at
      FROM unnest(%(ids)s::bigint[]) AS p(id)
      CROSS JOIN LATERAL (
            SELECT s.last_received_at FROM registry_submissioncount s
             WHERE s.practice_id = p.id ORDER BY s.day DESC LIMIT 1) AS last
"""


def _last_received(rows: dict[int, ConsoleRow], ids: list[int]) -> None:
    found = (
        _fetch(_LAST_RECEIVED, {"ids": ids})
        if _postgresql()
        else SubmissionCount.objects.filter(practice_id__in=ids)
        .values("practice_id")
        .annotate(last=Max("last_received_at"))
        .values_list("practice_id", "last")
    )
    for practice_id, last_received_at in found:
        rows[practice_id].last_received = last_received_at


_COMPLETENESS_FIELDS = sorted(
    {f.numerator for f in COMPLETENESS.figures} | {f.denominator for f in COMPLETENESS.figures}
)
_RECEIVED_FIELDS = [
    "births",
    "with_warning",
    "timeliness_known",
    "received_within_10_days",
    *_COMPLETENESS_FIELDS,
]
_RECEIVED = f"""
    SELECT practice_id, {", ".join(f"SUM({name})" for name in _RECEIVED_FIELDS)}
      FROM registry_receivedcount
      JOIN unnest(%(ids)s::bigint[]) AS chosen(id) ON chosen.id = practice_id
     WHERE day > %(today)s::date - %(month)s::int AND day <= %(today)s::date
     GROUP BY practice_id
"""  # noqa: S608 (the column names are the model's, not input)


def _received(rows: dict[int, ConsoleRow], ids: list[int], today: date) -> None:
    params = {"today": today, "month": MONTH_DAYS, "ids": ids}
    found = (
        _fetch(_RECEIVED, params)
        if _postgresql()
        else ReceivedCount.objects.filter(_window(today, MONTH_DAYS), practice_id__in=ids)
        .values("practice_id")
        .annotate(**{f"sum_{name}": Sum(name) for name in _RECEIVED_FIELDS})
        .values_list("practice_id", *(f"sum_{name}" for name in _RECEIVED_FIELDS))
    )
    for practice_id, *sums in found:
        counts = dict(zip(_RECEIVED_FIELDS, (int(s or 0) for s in sums), strict=True))
        row = rows[practice_id]
        row.warned = Share(counts["with_warning"], counts["births"])
        row.timely = Share(counts["received_within_10_days"], counts["timeliness_known"])
        row.least_complete = least_complete(counts)


def least_complete(counts: dict[str, int]) -> LeastComplete | None:
    """The completeness item (:data:`registry.statistics.quality.COMPLETENESS`) with the
    lowest rate; the first in the data quality section's order on a tie; None with no
    live birth."""
    found: LeastComplete | None = None
    for figure in COMPLETENESS.figures:
        share = Share(counts[figure.numerator], counts[figure.denominator])
        if share.rate is None:
            continue
        if found is None or share.rate < (found.share.rate or 0.0):
            found = LeastComplete(figure.name, figure.label, share)
    return found


def _backlog(rows: dict[int, ConsoleRow], ids: Iterable[int]) -> None:
    if not _postgresql():
        backlog: Iterable[tuple[Any, ...]] = (
            BirthCount.objects.filter(group=BirthCount.ALL, practice_id__in=list(ids))
            .values("practice_id")
            .annotate(flagged=Sum("suspected_duplicates"))
            .values_list("practice_id", "flagged")
        )
    else:
        backlog = _fetch(
            """SELECT practice_id, SUM(suspected_duplicates) FROM registry_birthcount
             JOIN unnest(%(ids)s::bigint[]) AS chosen(id) ON chosen.id = practice_id
            WHERE "group" = %(all)s GROUP BY practice_id""",
            {"all": BirthCount.ALL, "ids": list(ids)},
        )
    for practice_id, flagged in backlog:
        rows[practice_id].backlog = int(flagged or 0)


# The review queue's partial index (practice, -created_at, id) WHERE flagged and live, read
# backwards from each practice's end: its oldest flagged record, one seek per practice.
_OLDEST_FLAGGED = """
    SELECT p.id, oldest.created_at
      FROM unnest(%(ids)s::bigint[]) AS p(id)
      CROSS JOIN LATERAL (
            SELECT r.created_at FROM registry_record r
             WHERE r.practice_id = p.id AND r.suspected_duplicate AND NOT r.voided
             ORDER BY r.created_at ASC LIMIT 1) AS oldest
"""


def _oldest_flagged(rows: dict[int, ConsoleRow], ids: list[int]) -> None:
    if not ids:
        return
    now = timezone.now()
    found = (
        _fetch(_OLDEST_FLAGGED, {"ids": ids})
        if _postgresql()
        else Record.objects.filter(practice_id__in=ids, suspected_duplicate=True, voided=False)
        .values("practice_id")
        .annotate(oldest=Min("created_at"))
        .values_list("practice_id", "oldest")
    )
    for practice_id, created_at in found:
        rows[practice_id].oldest_flagged = created_at
        rows[practice_id].oldest_flagged_days = max((now - created_at).days, 0)
