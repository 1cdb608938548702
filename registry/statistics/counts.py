"""The statistics' counts, kept as records change: what a record contributes, and the upsert.

A page never counts records. Each live record contributes to the :class:`BirthCount` rows of
its practice, birth year (0 when unknown) and groups (``all``, and each benchmarked role of
those who attended it), and the same counts as its ``all`` group to the :class:`ReceivedCount`
row of its practice and the day (UTC) the registry first received it (``Record.created_at``:
what the registry office's console reads). Whoever changes records wraps the change in
:func:`counts_kept`, which reads the records' :class:`Facts` before and after and writes the
difference to both tables, in the same transaction (ingestion, amendment, retraction, review
decisions). So the counts are never stale, and :func:`counts_recount` (plain SQL over the
records) must always equal them: ``manage.py recount_statistics --check`` says whether it does.

The definitions live here twice on purpose, as Python (:func:`contribution`) and as SQL
(:func:`recount_sql`, one query by either table's cells); the tests hold them equal over
random histories.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, fields
from datetime import UTC, date, datetime
from typing import Any
from uuid import UUID

from django.db import connection, transaction
from django.db.models import Q

from registry.locks import lock_practice
from registry.models import (
    COUNT_FIELDS,
    Attendance,
    BirthCount,
    Child,
    Provider,
    ReceivedCount,
    Record,
    Timeliness,
)

# Spec 2.3: role "other" is excluded from attendant-type benchmarks.
ATTENDANT_ROLES: list[str] = [
    role.value
    for role in (
        Provider.Role.MIDWIFE,
        Provider.Role.DOULA,
        Provider.Role.NURSE,
        Provider.Role.ASSISTANT,
    )
]
ALL = BirthCount.ALL
GROUPS: list[str] = [ALL, *ATTENDANT_ROLES]
UNKNOWN_YEAR = 0
LOW_BIRTH_WEIGHT_GRAMS = 2500
PRETERM_WEEKS = 37
LOW_APGAR = 7
WITHIN_5_DAYS = [Timeliness.DAYS_0_5.value]
WITHIN_10_DAYS = [Timeliness.DAYS_0_5.value, Timeliness.DAYS_6_10.value]

# The group of a ReceivedCount cell: (day, RECEIVED) beside the (birth year, group) cells.
RECEIVED = "received"

Cell = tuple[int | date, str]  # (birth year or 0, group), or (day received, RECEIVED)
Counts = tuple[int, ...]  # in COUNT_FIELDS order
Tally = dict[Cell, Counts]


@dataclass(frozen=True)
class ChildFacts:
    outcome: str
    birth_weight_grams: int | None
    gestational_age_weeks: int | None
    apgar_5: int | None


@dataclass(frozen=True)
class Facts:
    """What a stored record contributes to the statistics, read from its rows."""

    birth_year: int | None
    voided: bool
    suspected_duplicate: bool
    consent_granted: bool
    children: tuple[ChildFacts, ...] = ()
    roles: frozenset[str] = frozenset()  # benchmarked roles of those who attended
    attended: bool = False  # someone attended, whatever their role ("other" too)
    consent_decided: bool = False
    drew_warning: bool = False
    timeliness: str | None = None
    received_on: date | None = None  # the UTC day the registry first received the record


def contribution(facts: Facts) -> Tally:
    """The counts a record adds to each of its cells; nothing when it is voided. Its
    received day's cell gets what its ``all`` cell gets."""
    if facts.voided:
        return {}
    counts = _record_counts(facts)
    year = facts.birth_year or UNKNOWN_YEAR
    cells: Tally = {(year, group): counts for group in (ALL, *sorted(facts.roles))}
    if facts.received_on is not None:
        cells[(facts.received_on, RECEIVED)] = counts
    return cells


def received_day(created_at: datetime) -> date:
    """The UTC day of a receipt time (as ``(created_at AT TIME ZONE 'UTC')::date`` in SQL)."""
    return created_at.astimezone(UTC).date()


def _record_counts(facts: Facts) -> Counts:
    live = [c for c in facts.children if c.outcome == Child.Outcome.LIVE_BIRTH]

    def known(values: Iterable[int | None]) -> list[int]:
        return [value for value in values if value is not None]

    weights = known(c.birth_weight_grams for c in live)
    weeks = known(c.gestational_age_weeks for c in live)
    apgars = known(c.apgar_5 for c in live)
    by_name = {
        "births": 1,
        "suspected_duplicates": int(facts.suspected_duplicate),
        "consent_granted": int(facts.consent_granted),
        "live_births": len(live),
        "fetal_deaths": sum(c.outcome == Child.Outcome.FETAL_DEATH for c in facts.children),
        "low_birth_weight": sum(w < LOW_BIRTH_WEIGHT_GRAMS for w in weights),
        "known_birth_weight": len(weights),
        "preterm": sum(w < PRETERM_WEEKS for w in weeks),
        "known_gestational_age": len(weeks),
        "apgar5_below_7": sum(a < LOW_APGAR for a in apgars),
        "known_apgar5": len(apgars),
        "live_births_attended": len(live) if facts.attended else 0,
        "live_births_consent_decided": len(live) if facts.consent_decided else 0,
        "with_warning": int(facts.drew_warning),
        "timeliness_known": int(facts.timeliness is not None),
        "received_within_5_days": int(facts.timeliness in WITHIN_5_DAYS),
        "received_within_10_days": int(facts.timeliness in WITHIN_10_DAYS),
    }
    return tuple(by_name[name] for name in COUNT_FIELDS)


def tally_of(facts: Iterable[Facts], *, sign: int = 1, into: Tally | None = None) -> Tally:
    """The sum of the records' contributions (``sign=-1`` takes them out).

    A chunk's records share few distinct contributions (most of a chunk's 250 new records
    add the same counts to the same cells), so each distinct one is added once, times the
    records that make it: summing the 17 counts record by record was a tenth of the time a
    batch's chunk holds its practice's lock (docs/performance.md, "Under the lock").
    """
    total: Tally = into if into is not None else {}
    made = Counter(pair for one in facts for pair in contribution(one).items())
    for (cell, counts), records in made.items():
        times = sign * records
        before = total.get(cell)
        if before is None:
            total[cell] = tuple(c * times for c in counts)
        else:
            total[cell] = tuple(b + c * times for b, c in zip(before, counts, strict=True))
    return total


def year_cells(year_from: int | None, year_to: int | None) -> Q:
    """The cells of an inclusive range of birth years; with either bound, no unknown year."""
    condition = Q()
    if year_from is not None:
        condition &= Q(birth_year__gte=year_from)
    if year_to is not None:
        condition &= Q(birth_year__lte=year_to) & ~Q(birth_year=UNKNOWN_YEAR)
    return condition


# --- Reading facts ------------------------------------------------------------------------------


def record_facts(
    *, record: Mapping[str, Any], children: Iterable[Any], roles: Iterable[str]
) -> Facts:
    """A record's facts, from its stored rows or from the values just written for it.

    The one place facts are built: ``record`` holds the record's own values (by the names
    of ``RECORD_FACTS``), ``children`` are stored rows or a course's children (the same
    attribute names as :class:`Child`'s columns), ``roles`` the role of each who attended
    ("other" too). A voided record contributes nothing, so its children are not read.
    """
    attended = set(roles)
    created_at = record["created_at"]
    return Facts(
        **{name: record[name] for name in RECORD_FACTS if name != "created_at"},
        received_on=received_day(created_at) if created_at is not None else None,
        children=() if record["voided"] else tuple(_child_facts(child) for child in children),
        roles=frozenset(attended) & BENCHMARKED,
        attended=bool(attended),
    )


CHILD_FACTS = [f.name for f in fields(ChildFacts)]  # Child's columns of the same names


def _child_facts(child: Any) -> ChildFacts:
    return ChildFacts(**{name: getattr(child, name) for name in CHILD_FACTS})


def facts_load(record_ids: Iterable[UUID]) -> dict[UUID, Facts]:
    """The stored facts of these records (those that exist), in at most three queries."""
    ids = list(record_ids)
    if not ids:
        return {}
    rows = Record.objects.filter(id__in=ids).values_list("id", *RECORD_FACTS)
    records = {row[0]: dict(zip(RECORD_FACTS, row[1:], strict=True)) for row in rows}
    live = [record_id for record_id, row in records.items() if not row["voided"]]
    children: dict[UUID, list[Any]] = defaultdict(list)
    roles: dict[UUID, set[str]] = defaultdict(set)  # every role that attended, "other" too
    if live:
        for child in Child.objects.filter(record_id__in=live).values_list(
            "record_id", *CHILD_FACTS, named=True
        ):
            children[child.record_id].append(child)
        for record_id, role in Attendance.objects.filter(
            record_id__in=live, kind=Attendance.Kind.ATTENDED
        ).values_list("record_id", "role"):
            roles[record_id].add(role)
    return {
        record_id: record_facts(record=row, children=children[record_id], roles=roles[record_id])
        for record_id, row in records.items()
    }


# The record's own columns a Facts holds, by name (created_at as its day: received_on).
RECORD_FACTS = [
    "birth_year",
    "voided",
    "suspected_duplicate",
    "consent_granted",
    "consent_decided",
    "drew_warning",
    "timeliness",
    "created_at",
]
BENCHMARKED = frozenset(ATTENDANT_ROLES)


@contextmanager
def counts_kept(
    *,
    practice_id: int,
    record_ids: Iterable[UUID],
    new_record_ids: Iterable[UUID] = (),
    facts_after: Callable[[], Mapping[UUID, Facts]] | None = None,
) -> Iterator[None]:
    """Around a change to these records of one practice: their old counts out, new ones in.

    Must run inside the change's transaction, under the practice lock (as every writer of
    records holds it), so counts and records commit or roll back together. Records the
    change creates may be named in ``new_record_ids``: nothing to read before for them. A
    writer that knows what it wrote passes ``facts_after`` (built with
    :func:`record_facts`), and nothing is read back after the change.
    """
    ids = list(record_ids)
    new = set(new_record_ids)
    before = facts_load(record_id for record_id in ids if record_id not in new)
    yield
    after = facts_after() if facts_after is not None else facts_load(ids)
    delta = tally_of(before.values(), sign=-1)
    counts_write(practice_id=practice_id, tally=tally_of(after.values(), into=delta))


@dataclass(frozen=True, slots=True)
class RecordWritten:
    """A record as its writer just wrote it: the record's values (any object with the
    record's field names as attributes), its children, and the role of each who attended."""

    record: Any
    children: Iterable[Any]
    roles: Iterable[str]


def counts_kept_written(
    *,
    practice_id: int,
    record_ids: Iterable[UUID],
    new_record_ids: Iterable[UUID],
    written: Callable[[], Mapping[UUID, RecordWritten]],
) -> AbstractContextManager[None]:
    """:func:`counts_kept` for a writer that knows what it wrote (the ingestion pipeline):
    the facts after the change are built here, from ``written``, with nothing read back."""

    def facts_after() -> dict[UUID, Facts]:
        return {
            record_id: record_facts(
                record={name: getattr(w.record, name) for name in RECORD_FACTS},
                children=w.children,
                roles=w.roles,
            )
            for record_id, w in written().items()
        }

    return counts_kept(
        practice_id=practice_id,
        record_ids=record_ids,
        new_record_ids=new_record_ids,
        facts_after=facts_after,
    )


# --- Writing ------------------------------------------------------------------------------------


def counts_write(*, practice_id: int, tally: Mapping[Cell, Counts]) -> None:
    """Add ``tally`` (deltas, which may be negative) to the practice's counts: one upsert of
    :class:`BirthCount` and one of :class:`ReceivedCount`, sent in one round trip."""
    years: list[tuple[tuple[int, str], Counts]] = []
    days: list[tuple[date, Counts]] = []
    for (cell, group), counts in tally.items():
        if not any(counts):
            continue
        if isinstance(cell, date):
            days.append((cell, counts))
        else:
            years.append(((cell, group), counts))
    upserts: list[tuple[str, list[Any]]] = []
    if years:
        values: list[Any] = []
        for (year, group), counts in sorted(years):
            values.extend([practice_id, year, group, *counts])
        upserts.append((_upsert(BirthCount, ["birth_year", "group"], len(years)), values))
    if days:
        values = []
        for day, counts in sorted(days):
            values.extend([practice_id, day, *counts])
        upserts.append((_upsert(ReceivedCount, ["day"], len(days)), values))
    statements_execute(upserts)


def statements_execute(statements: list[tuple[str, list[Any]]]) -> None:
    """Run these statements in order: in one round trip on PostgreSQL, one at a time on
    SQLite (the embedded default takes one statement per call)."""
    if not statements:
        return
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute(
                ";\n".join(statement for statement, _ in statements),
                [value for _, values in statements for value in values],
            )
            return
        for statement, values in statements:
            cursor.execute(statement, values)


def _upsert(model: type[BirthCount | ReceivedCount], cell: list[str], rows: int) -> str:
    """The increment of ``rows`` cells of ``model`` (practice, ``cell`` columns, counts)."""
    quote = connection.ops.quote_name
    table = quote(model._meta.db_table)
    key = ["practice_id", *(quote(name) for name in cell)]
    columns = [*key, *COUNT_FIELDS]
    row = "(" + ", ".join(["%s"] * len(columns)) + ")"
    increments = ", ".join(f"{name} = {table}.{name} + EXCLUDED.{name}" for name in COUNT_FIELDS)
    # Identifiers and placeholders only: every value travels as a parameter.
    return (
        f"INSERT INTO {table} ({', '.join(columns)}) "  # noqa: S608
        f"VALUES {', '.join([row] * rows)} "
        f"ON CONFLICT ({', '.join(key)}) DO UPDATE SET {increments}"
    )


# --- Recount ------------------------------------------------------------------------------------


def _sql_list(values: Iterable[str]) -> str:
    """Constants of this module as an SQL list of literals (never a submitted value)."""
    return ", ".join(f"'{value}'" for value in values)


# Every count from the records themselves: the same definitions as contribution(), by the
# cells of one table. %(practice)s limits it to one practice (NULL: all).
_RECOUNT = f"""
WITH live AS (
    SELECT id, practice_id, COALESCE(birth_year, 0) AS birth_year, {{day}} AS day,
           CASE WHEN suspected_duplicate THEN 1 ELSE 0 END AS flagged,
           CASE WHEN consent_granted THEN 1 ELSE 0 END AS consent,
           CASE WHEN consent_decided THEN 1 ELSE 0 END AS decided,
           CASE WHEN drew_warning THEN 1 ELSE 0 END AS warned,
           CASE WHEN timeliness IS NOT NULL THEN 1 ELSE 0 END AS timely_known,
           CASE WHEN timeliness IN ({_sql_list(WITHIN_5_DAYS)}) THEN 1 ELSE 0 END AS within_5,
           CASE WHEN timeliness IN ({_sql_list(WITHIN_10_DAYS)}) THEN 1 ELSE 0 END AS within_10
    FROM registry_record
    WHERE NOT voided AND (%(practice)s IS NULL OR practice_id = %(practice)s)
),
attended AS (
    SELECT DISTINCT a.record_id
    FROM registry_attendance a JOIN live ON live.id = a.record_id
    WHERE a.kind = 'attended'
),
kids AS (
    SELECT c.record_id,
        SUM(CASE WHEN c.outcome = 'live_birth' THEN 1 ELSE 0 END) AS live_births,
        SUM(CASE WHEN c.outcome = 'fetal_death' THEN 1 ELSE 0 END) AS fetal_deaths,
        SUM(CASE WHEN c.outcome = 'live_birth'
                  AND c.birth_weight_grams < {LOW_BIRTH_WEIGHT_GRAMS} THEN 1 ELSE 0 END)
            AS low_birth_weight,
        SUM(CASE WHEN c.outcome = 'live_birth'
                  AND c.birth_weight_grams IS NOT NULL THEN 1 ELSE 0 END) AS known_birth_weight,
        SUM(CASE WHEN c.outcome = 'live_birth'
                  AND c.gestational_age_weeks < {PRETERM_WEEKS} THEN 1 ELSE 0 END) AS preterm,
        SUM(CASE WHEN c.outcome = 'live_birth'
                  AND c.gestational_age_weeks IS NOT NULL THEN 1 ELSE 0 END)
            AS known_gestational_age,
        SUM(CASE WHEN c.outcome = 'live_birth'
                  AND c.apgar_5 < {LOW_APGAR} THEN 1 ELSE 0 END) AS apgar5_below_7,
        SUM(CASE WHEN c.outcome = 'live_birth'
                  AND c.apgar_5 IS NOT NULL THEN 1 ELSE 0 END) AS known_apgar5
    FROM registry_child c JOIN live ON live.id = c.record_id
    GROUP BY c.record_id
),
groups AS (
    SELECT id AS record_id, '{ALL}' AS grp FROM live
    UNION ALL
    SELECT DISTINCT a.record_id, a.role
    FROM registry_attendance a JOIN live ON live.id = a.record_id
    WHERE a.kind = 'attended' AND a.role IN ({_sql_list(ATTENDANT_ROLES)})
)
SELECT live.practice_id, {{cell}},
    COUNT(*), SUM(live.flagged), SUM(live.consent),
    COALESCE(SUM(kids.live_births), 0), COALESCE(SUM(kids.fetal_deaths), 0),
    COALESCE(SUM(kids.low_birth_weight), 0), COALESCE(SUM(kids.known_birth_weight), 0),
    COALESCE(SUM(kids.preterm), 0), COALESCE(SUM(kids.known_gestational_age), 0),
    COALESCE(SUM(kids.apgar5_below_7), 0), COALESCE(SUM(kids.known_apgar5), 0),
    COALESCE(SUM(CASE WHEN attended.record_id IS NOT NULL THEN kids.live_births END), 0),
    COALESCE(SUM(kids.live_births * live.decided), 0),
    SUM(live.warned), SUM(live.timely_known), SUM(live.within_5), SUM(live.within_10)
FROM live
{{groups}}
LEFT JOIN kids ON kids.record_id = live.id
LEFT JOIN attended ON attended.record_id = live.id
GROUP BY live.practice_id, {{cell}}
"""  # noqa: S608 (constants only; the practice is a parameter)

# The UTC day of a timestamp column, as received_day() takes it (SQLite keeps UTC text).
DAY_OF = {"postgresql": "({} AT TIME ZONE 'UTC')::date", "sqlite": "date({})"}


def day_of(column: str) -> str:
    """SQL for the UTC day of a timestamp column, on this connection's database."""
    return DAY_OF.get(connection.vendor, DAY_OF["postgresql"]).format(column)


def as_date(value: date | str) -> date:
    """A day read by raw SQL (SQLite answers text)."""
    return value if isinstance(value, date) else date.fromisoformat(value)


def recount_sql(*, by_day: bool = False, day: str = DAY_OF["postgresql"]) -> str:
    """BirthCount's cells (per practice, birth year and group), or ReceivedCount's (per
    practice and day received: every record, as the "all" group)."""
    if by_day:
        return _RECOUNT.format(cell="live.day", groups="", day=day.format("created_at"))
    return _RECOUNT.format(
        cell="live.birth_year, groups.grp",
        groups="JOIN groups ON groups.record_id = live.id",
        day=day.format("created_at"),
    )


RECOUNT_SQL = recount_sql()  # PostgreSQL's; bench.statistics fills BirthCount with it

# (practice id, birth year, group), or (practice id, day received, RECEIVED)
Key = tuple[int, int | date, str]


def counts_recount(*, practice_id: int | None = None) -> dict[Key, Counts]:
    """Every non-zero cell of both tables counted afresh from the records (two statements)."""
    recounted: dict[Key, Counts] = {}
    day = DAY_OF.get(connection.vendor, DAY_OF["postgresql"])
    with connection.cursor() as cursor:
        cursor.execute(recount_sql(day=day), {"practice": practice_id})
        for row in cursor.fetchall():
            recounted[(row[0], row[1], row[2])] = tuple(int(v) for v in row[3:])
        cursor.execute(recount_sql(by_day=True, day=day), {"practice": practice_id})
        for row in cursor.fetchall():
            recounted[(row[0], as_date(row[1]), RECEIVED)] = tuple(int(v) for v in row[2:])
    return recounted


def counts_stored(*, practice_id: int | None = None) -> dict[Key, Counts]:
    """Every non-zero cell as kept in :class:`BirthCount` and :class:`ReceivedCount`."""
    years = BirthCount.objects.all()
    days = ReceivedCount.objects.all()
    if practice_id is not None:
        years, days = years.filter(practice_id=practice_id), days.filter(practice_id=practice_id)
    stored: dict[Key, Counts] = {
        (row[0], row[1], row[2]): tuple(row[3:])
        for row in years.values_list("practice_id", "birth_year", "group", *COUNT_FIELDS)
        if any(row[3:])
    }
    for row in days.values_list("practice_id", "day", *COUNT_FIELDS):
        if any(row[2:]):
            stored[(row[0], row[1], RECEIVED)] = tuple(row[2:])
    return stored


def counts_rebuild(*, practice_id: int) -> None:
    """Replace the practice's counts (both tables) by a recount, under its lock."""
    with transaction.atomic():
        lock_practice(practice_id)
        BirthCount.objects.filter(practice_id=practice_id).delete()
        ReceivedCount.objects.filter(practice_id=practice_id).delete()
        counts = counts_recount(practice_id=practice_id)
        years, days = [], []
        for (practice, cell, group), values in counts.items():
            kept = dict(zip(COUNT_FIELDS, values, strict=True))
            if isinstance(cell, date):
                days.append(ReceivedCount(practice_id=practice, day=cell, **kept))
            else:
                years.append(BirthCount(practice_id=practice, birth_year=cell, group=group, **kept))
        BirthCount.objects.bulk_create(years)
        ReceivedCount.objects.bulk_create(days)


def counts_differences(*, practice_id: int | None = None) -> dict[Key, tuple[Counts, Counts]]:
    """The cells (of both tables) where the kept counts and a recount disagree: (kept,
    recounted)."""
    kept, recounted = (
        counts_stored(practice_id=practice_id),
        counts_recount(practice_id=practice_id),
    )
    zero = (0,) * len(COUNT_FIELDS)
    return {
        key: (kept.get(key, zero), recounted.get(key, zero))
        for key in kept.keys() | recounted.keys()
        if kept.get(key, zero) != recounted.get(key, zero)
    }
