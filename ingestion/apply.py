"""Apply mapped results to the registry: the record lifecycle of spec section 3.

A chunk of results is applied in one pass. The records it names are read (and row-locked)
once, the lifecycle is replayed in memory in entry order (so the same chart twice in one
batch applies in order), and the writes go out in bulk: new rows with COPY, a few queries
per chunk rather than one round trip per row. The caller holds the practice's advisory
lock, so concurrent ingestions of one practice produce the outcome of a serial order.

If a bulk write fails (a value the database refuses), the chunk is re-applied one result at
a time, each in its own savepoint: one bad record never spoils the others. Any other database
error (a cancelled statement, a lost connection, a deadlock) is raised, so the caller rolls
the whole chunk back and tries it again (:mod:`ingestion.faults`).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field, fields
from datetime import datetime
from typing import Any
from uuid import UUID, uuid4

from django.db import DatabaseError, connection, transaction
from django.utils import timezone

from ingestion.faults import is_record_fault
from ingestion.fhir import CourseOfCare, Rejection, Result, Retraction, Void
from ingestion.fhir.model import Provider as FhirProvider
from ingestion.fhir.outcome import error_outcome, operation_outcome
from registry.bulk import insert_rows, update_rows
from registry.matching import ChunkMatching, Keys, match_keys
from registry.models import (
    CHILD_COLUMNS,
    Attendance,
    Child,
    Practice,
    Provider,
    Record,
    RecordVersion,
    Transfer,
)
from registry.statistics.counts import RECORD_FACTS, Facts, counts_kept, record_facts

log = logging.getLogger(__name__)

STALE_UPDATE = "Stale update ignored"


@dataclass
class ChunkOutcome:
    """The receipt entries of a chunk, in entry order."""

    accepted: list[dict[str, Any]] = field(default_factory=list)
    rejected: list[dict[str, Any]] = field(default_factory=list)

    def extend(self, other: ChunkOutcome) -> None:
        self.accepted.extend(other.accepted)
        self.rejected.extend(other.rejected)


@dataclass(frozen=True, slots=True)
class Part:
    """Results of one ingestion, applied after the parts before it in the same chunk."""

    ingestion_id: UUID | None
    results: Sequence[Result]


def records_apply(
    *, practice: Practice, results: Sequence[Result], ingestion_id: UUID | None
) -> ChunkOutcome:
    """Apply ``results`` for ``practice``; the caller's transaction must hold its lock."""
    return records_apply_parts(practice=practice, parts=[Part(ingestion_id, results)])[0]


def records_apply_parts(*, practice: Practice, parts: Sequence[Part]) -> list[ChunkOutcome]:
    """Apply several ingestions' results as one chunk, each part after the one before.

    The records, their versions, flags and counts are those of applying the parts one after
    another (the lifecycle is replayed in memory in order, as within a batch); each part
    gets its own receipt entries, and its versions name its own ingestion. The caller's
    transaction must hold the practice's lock.
    """
    try:
        with transaction.atomic():
            return _Chunk(practice).apply(parts)
    except DatabaseError as error:
        if not is_record_fault(error):
            raise  # not the records' values: the caller rolls the chunk back and retries
        log.warning("bulk apply refused by the database; applying one record at a time")
    outcomes = []
    for part in parts:
        outcome = ChunkOutcome()
        for result in part.results:
            outcome.extend(_apply_alone(practice, result, part.ingestion_id))
        outcomes.append(outcome)
    return outcomes


def records_plan(*, practice: Practice, results: Sequence[Result]) -> ChunkOutcome:
    """What :func:`records_apply` would answer now for ``results``, writing nothing.

    The lifecycle runs as it does for real (the same :class:`_Chunk` code, in entry order, so
    several courses of one body touching one chart or resembling each other are answered as
    the pipeline would), reading the practice's records and match keys without locking them,
    and stops before the writes: no record, version, match key, count or provider row, no
    row lock or advisory lock, no sequence value. At the top level it runs in a read-only
    transaction (one snapshot, and PostgreSQL refuses any write). For ``Bundle/$validate``.
    """
    outermost = not connection.in_atomic_block
    with transaction.atomic():
        if outermost and connection.vendor == "postgresql":
            with connection.cursor() as cursor:
                cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
        return _Chunk(practice).plan(results)


def _apply_alone(practice: Practice, result: Result, ingestion_id: UUID | None) -> ChunkOutcome:
    try:
        with transaction.atomic():
            return _Chunk(practice).apply([Part(ingestion_id, [result])])[0]
    except DatabaseError as error:
        if not is_record_fault(error):
            raise
        log.warning("record refused by the database (%s)", type(error).__name__)
        outcome = ChunkOutcome()
        outcome.rejected.append(
            _rejection(
                result.reference,
                getattr(result, "external_record_id", None),
                error_outcome(
                    "exception",
                    "The record could not be stored: a value is outside what the registry "
                    "can hold.",
                    expression=result.reference,
                ),
            )
        )
        return outcome


@dataclass(slots=True)
class _Row:
    """A record's stored values, as this chunk sees them (no model instance: they cost)."""

    id: UUID
    external_record_id: str
    version: int = 1
    voided: bool = False
    voided_at: datetime | None = None
    suspected_duplicate: bool = False
    fingerprint: str | None = None
    ig_version: str | None = None
    consent_granted: bool = False
    consent_datetime: datetime | None = None
    source_updated_at: datetime | None = None
    birth_year: int | None = None
    mother_age_years: int | None = None
    mother_postal_prefix: str | None = None
    created_at: datetime | None = None
    updated_at: datetime | None = None
    merged_into_id: UUID | None = None
    drew_warning: bool = False
    consent_decided: bool = False
    timeliness: str | None = None  # set when the record is created, kept by amendments


ROW_FIELDS = [f.name for f in fields(_Row)]
CHANGEABLE_FIELDS = [name for name in ROW_FIELDS if name not in ("id", "external_record_id")]


@dataclass(slots=True)
class _Tracked:
    """A record as this chunk sees it, and what the chunk did to it."""

    row: _Row
    is_new: bool
    changed: bool = False
    course: CourseOfCare | None = None  # the course whose facts replace the stored ones


class _Chunk:
    def __init__(self, practice: Practice) -> None:
        self.practice = practice
        self.ingestion_id: UUID | None = None  # the part being replayed
        self.now = timezone.now()
        self.tracked: dict[str, _Tracked] = {}
        self.matching = ChunkMatching(practice.pk)
        # (record, version, change, values, ingestion)
        self.versions: list[tuple[UUID, int, str, dict[str, Any], UUID | None]] = []
        self.providers: dict[str, FhirProvider] = {}  # every course's, the latest last
        self.outcome = ChunkOutcome()

    def apply(self, parts: Sequence[Part]) -> list[ChunkOutcome]:
        self._load([result for part in parts for result in part.results])
        outcomes = []
        for part in parts:
            self.ingestion_id, self.outcome = part.ingestion_id, ChunkOutcome()
            self._decide(part.results)
            outcomes.append(self.outcome)
        with self._write_counts():
            self._write()
        return outcomes

    def plan(self, results: Sequence[Result]) -> ChunkOutcome:
        """The outcome :meth:`apply` would have, from what is on file, with nothing written."""
        self._load(results, lock=False)
        self._decide(results)
        return self.outcome

    def _decide(self, results: Sequence[Result]) -> None:
        """The lifecycle table, in entry order, on the records as this chunk sees them."""
        for result in results:
            if isinstance(result, Rejection):
                self.outcome.rejected.append(
                    _rejection(
                        result.reference, result.external_record_id, result.operation_outcome
                    )
                )
            elif isinstance(result, Retraction):
                self._retract(result)
            elif isinstance(result, Void):
                self._void(result)
            else:
                self._submit(result)

    # -- reading ---------------------------------------------------------------------------

    def _load(self, results: Sequence[Result], *, lock: bool = True) -> None:
        charts = _charts_named(results)
        if lock:
            records = _records_locked(self.practice.pk, charts)
        else:
            records = list(
                Record.objects.filter(practice=self.practice, external_record_id__in=charts).values(
                    *ROW_FIELDS
                )
            )
        for values in records:
            self.tracked[values["external_record_id"]] = _Tracked(_Row(**values), is_new=False)
        self._load_matching(results)

    def _load_matching(self, results: Sequence[Result]) -> None:
        """Matching sees the touched records as the chunk changes them, the rest as on file."""
        asked = {key for r in results if isinstance(r, CourseOfCare) for key in _keys(r)}
        self.matching.load(touched=[t.row.id for t in self.tracked.values()], asked=asked)

    # -- the lifecycle table ---------------------------------------------------------------

    def _submit(self, course: CourseOfCare) -> None:
        tracked = self.tracked.get(course.external_record_id)
        if tracked is None:
            self._create(course)
        elif tracked.row.voided:
            self._revive(tracked, course)
        else:
            self._amend(tracked, course)

    def _create(self, course: CourseOfCare) -> None:
        row = _Row(id=uuid4(), external_record_id=course.external_record_id, created_at=self.now)
        row.timeliness = course.timeliness  # the first receipt's: amendments keep it
        tracked = _Tracked(row, is_new=True)
        self.tracked[course.external_record_id] = tracked
        self._flag_if_resembling(row, _keys(course))
        self._take(tracked, course, RecordVersion.Change.CREATED)
        self._accept(course, row, amended=False)

    def _amend(self, tracked: _Tracked, course: CourseOfCare) -> None:
        row = tracked.row
        stored, incoming = row.source_updated_at, course.source_updated_at
        if stored is not None and incoming is not None and incoming < stored:
            self._reject_stale(course, stored=stored, incoming=incoming)
            return
        if self._would_duplicate_another(row, _keys(course)):
            self._reject_conflict(
                course,
                "The correction would make this record a duplicate of a different record "
                "on file (same mother and newborn birth date); it was not merged.",
            )
            return
        row.version += 1
        self._take(tracked, course, RecordVersion.Change.AMENDED)
        self._accept(course, row, amended=True)

    def _revive(self, tracked: _Tracked, course: CourseOfCare) -> None:
        """A voided chart sent again comes back as a further version of the same record.

        A record a reviewer merged into another comes back unmerged (and, if it still
        resembles the survivor, flagged for review again): the sender says it stands.
        """
        row = tracked.row
        row.voided, row.voided_at, row.merged_into_id = False, None, None
        row.version += 1
        self._flag_if_resembling(row, _keys(course))
        self._take(tracked, course, RecordVersion.Change.REVIVED)
        self._accept(course, row, amended=True)

    def _retract(self, retraction: Retraction) -> None:
        tracked = self.tracked.get(retraction.external_record_id)
        if tracked is None:
            self.outcome.rejected.append(
                _rejection(
                    retraction.reference,
                    retraction.external_record_id,
                    error_outcome(
                        "not-found",
                        "No record with this chart number is on file for this practice; "
                        "nothing was retracted.",
                        expression=retraction.reference,
                    ),
                )
            )
            return
        row = tracked.row
        self._void_row(tracked)
        self.outcome.accepted.append(
            {
                "reference": retraction.reference,
                "submission_uuid": str(row.id),
                "external_record_id": row.external_record_id,
                "voided": True,
            }
        )

    def _void(self, void: Void) -> None:
        """An NVSS void: every record of the block on file is voided; the rest is no error."""
        found = [self.tracked[c] for c in void.chart_numbers if c in self.tracked]
        for tracked in found:
            self._void_row(tracked)
        self.outcome.accepted.append(void_entry(void, [t.row for t in found]))

    def _void_row(self, tracked: _Tracked) -> None:
        row = tracked.row
        if row.voided:  # retracting a voided record again changes nothing
            return
        self.matching.put(row.id, frozenset())
        row.voided, row.voided_at, row.updated_at = True, self.now, self.now
        tracked.changed = True
        voided = {"voided": True}
        self.versions.append(
            (row.id, row.version, RecordVersion.Change.VOIDED, voided, self.ingestion_id)
        )

    # -- helpers ---------------------------------------------------------------------------

    def _would_duplicate_another(self, row: _Row, keys: Keys) -> bool:
        """Spec 3, "not merged": the correction makes the record resemble another live record.

        The test is the flagging test. A record that already resembled another (a flagged
        duplicate being corrected) is not made a duplicate by the correction.
        """
        current = self.matching.keys_of(row.id)
        if keys == current or not self.matching.resembles(row.id, keys):
            return False
        return not self.matching.resembles(row.id, current)

    def _flag_if_resembling(self, row: _Row, keys: Keys) -> None:
        if self.matching.resembles(row.id, keys):
            row.suspected_duplicate = True

    def _take(self, tracked: _Tracked, course: CourseOfCare, change: str) -> None:
        """The record takes the course's facts, and the version is kept in its history."""
        row = tracked.row
        self.matching.put(row.id, _keys(course))
        row.fingerprint = course.fingerprint
        row.ig_version = course.ig_version
        row.consent_granted = course.consent_granted
        row.consent_datetime = course.consent_datetime
        row.source_updated_at = course.source_updated_at or row.source_updated_at
        row.birth_year = _earliest_birth_year(course)
        row.mother_age_years = course.mother_age_years
        row.mother_postal_prefix = course.mother_postal_prefix
        row.drew_warning, row.consent_decided = bool(course.warnings), course.consent_decided
        row.updated_at = self.now
        tracked.changed, tracked.course = True, course
        self.providers.update((p.stable_id, p) for p in course.providers)
        self.versions.append((row.id, row.version, change, _snapshot(course), self.ingestion_id))

    def _accept(self, course: CourseOfCare, row: _Row, *, amended: bool) -> None:
        entry: dict[str, Any] = {
            "reference": course.reference,
            "submission_uuid": str(row.id),
            "external_record_id": row.external_record_id,
            "amended": amended,
        }
        if amended:
            entry["version"] = row.version
        if row.suspected_duplicate:
            entry["suspected_duplicate"] = True
        if course.warnings:  # plausibility findings: stored as sent, with a word
            entry["operation_outcome"] = operation_outcome(*course.warnings)
        self.outcome.accepted.append(entry)

    def _reject_conflict(self, course: CourseOfCare, diagnostics: str) -> None:
        self.outcome.rejected.append(
            _rejection(
                course.reference,
                course.external_record_id,
                error_outcome("conflict", diagnostics, expression=course.reference),
            )
        )

    def _reject_stale(self, course: CourseOfCare, *, stored: datetime, incoming: datetime) -> None:
        """A stale update, with both stamps and what to do: a sender seeing only "stale" may
        have re-used a chart number for another birth, or sent an old copy of this one."""
        self._reject_conflict(course, STALE_UPDATE)
        self.outcome.rejected[-1]["operation_outcome"]["issue"][0]["details"] = {
            "text": stale_update_details(stored=stored, incoming=incoming)
        }

    # -- writing ---------------------------------------------------------------------------

    def _write(self) -> None:
        tracked = list(self.tracked.values())
        practice_id = self.practice.pk
        insert_rows(
            Record,
            ["practice_id", *ROW_FIELDS],
            ([practice_id, *_values(t.row, ROW_FIELDS)] for t in tracked if t.is_new),
        )
        update_rows(
            Record,
            ["id", *CHANGEABLE_FIELDS],
            (
                [t.row.id, *_values(t.row, CHANGEABLE_FIELDS)]
                for t in tracked
                if t.changed and not t.is_new
            ),
        )
        replaced_existing = [t.row.id for t in tracked if t.course is not None and not t.is_new]
        if replaced_existing:
            for model in (Child, Attendance, Transfer):
                model.objects.filter(record_id__in=replaced_existing).delete()
        self._write_facts({t.row.id: t.course for t in tracked if t.course is not None})
        self._write_match_keys(tracked)
        insert_rows(
            RecordVersion,
            ["record_id", "version", "change", "values", "ingestion_id", "created_at"],
            (
                (record, version, change, values, ingestion_id, self.now)
                for record, version, change, values, ingestion_id in self.versions
            ),
        )

    def _write_match_keys(self, tracked: list[_Tracked]) -> None:
        """The keys of every record whose keys changed, with the records (registry.matching)."""
        self.matching.write(new={t.row.id for t in tracked if t.is_new})

    def _write_counts(self) -> AbstractContextManager[None]:
        """Around the writes: the counts follow the changed records, in the same transaction.

        The records' facts after the change are built from the rows and courses in memory,
        exactly as written (no reading back of what was just written).
        """
        changed = [t for t in self.tracked.values() if t.changed]
        return counts_kept(
            practice_id=self.practice.pk,
            record_ids=[t.row.id for t in changed],
            new_record_ids=[t.row.id for t in changed if t.is_new],
            facts_after=lambda: {t.row.id: _facts_written(t) for t in changed},
        )

    def _write_facts(self, courses: Mapping[UUID, CourseOfCare]) -> None:
        insert_rows(Child, CHILD_COLUMNS, _children(courses))
        insert_rows(
            Transfer,
            ["record_id", "kind"],
            ((record_id, kind) for record_id, c in courses.items() for kind in c.transfers),
        )
        providers = self._upsert_providers()
        insert_rows(
            Attendance,
            ["record_id", "provider_id", "kind", "role"],
            _attendances(courses, providers),
        )

    def _upsert_providers(self) -> dict[str, int]:
        """Every provider a course of the chunk named, as the latest course described it
        (as applying the courses one after another would leave them)."""
        latest = self.providers
        if not latest:
            return {}
        upserted = Provider.objects.bulk_create(
            [
                Provider(
                    practice=self.practice,
                    stable_id=p.stable_id,
                    npi=p.npi,
                    display_name=p.display_name,
                    credentials=p.credentials,
                    role=p.role,
                    updated_at=self.now,
                )
                for p in latest.values()
            ],
            update_conflicts=True,
            unique_fields=["practice", "stable_id"],
            update_fields=["npi", "display_name", "credentials", "role", "updated_at"],
        )
        if all(provider.pk is not None for provider in upserted):
            return {provider.stable_id: provider.pk for provider in upserted}
        # Databases that do not return ids from an upsert: look them up.
        return dict(
            Provider.objects.filter(practice=self.practice, stable_id__in=latest).values_list(
                "stable_id", "id"
            )
        )


def _records_locked(practice_id: int, charts: set[str]) -> list[dict[str, Any]]:
    """The practice's records with these chart numbers, row-locked, as ``_Row`` values.

    Written out on PostgreSQL: every chunk sends it, and the ORM spent more CPU building it
    than PostgreSQL spends running it."""
    if not charts:
        return []
    if connection.vendor != "postgresql":
        return list(
            Record.objects.select_for_update()
            .filter(practice_id=practice_id, external_record_id__in=charts)
            .values(*ROW_FIELDS)
        )
    with connection.cursor() as cursor:
        cursor.execute(RECORDS_LOCKED, [practice_id, list(charts)])
        return [dict(zip(ROW_FIELDS, row, strict=True)) for row in cursor.fetchall()]


ROW_COLUMNS = [str(getattr(Record._meta.get_field(name), "column", name)) for name in ROW_FIELDS]
RECORDS_LOCKED = (
    f"SELECT {', '.join(ROW_COLUMNS)} FROM {Record._meta.db_table} "  # noqa: S608 (names only)
    "WHERE practice_id = %s AND external_record_id = ANY(%s) FOR UPDATE"
)


def _values(row: _Row, names: Sequence[str]) -> list[Any]:
    return [getattr(row, name) for name in names]


def _children(courses: Mapping[UUID, CourseOfCare]) -> Iterable[tuple[Any, ...]]:
    for record_id, course in courses.items():
        for c in course.children:
            yield (
                record_id,
                c.birth_order,
                c.outcome,
                c.sex,
                c.birth_year,
                c.birth_weight_grams,
                c.gestational_age_weeks,
                c.gestational_age_days,
                c.apgar_1,
                c.apgar_5,
                c.apgar_10,
            )


def _attendances(
    courses: Mapping[UUID, CourseOfCare], providers: dict[str, int]
) -> Iterable[tuple[UUID, int, str, str]]:
    """Each attendance with the role the course gave its provider (kept: the counts use it)."""
    for record_id, course in courses.items():
        for stable_id, kind, role in course_attendances(course):
            yield record_id, providers[stable_id], kind, role


def course_attendances(course: CourseOfCare) -> list[tuple[str, str, str]]:
    """(provider, kind, role) of each attendance a course stores: those of its own providers."""
    roles = {p.stable_id: p.role for p in course.providers}
    pairs = {(s, Attendance.Kind.ATTENDED.value) for s in course.attended_by}
    pairs |= {(s, Attendance.Kind.PRESENT.value) for s in course.present}
    return [(s, kind, roles[s]) for s, kind in sorted(pairs) if s in roles]


def _facts_written(tracked: _Tracked) -> Facts:
    """What a record contributes to the counts, from the values this chunk wrote for it."""
    row, course = tracked.row, tracked.course
    attended = [
        role
        for _, kind, role in (course_attendances(course) if course is not None else [])
        if kind == Attendance.Kind.ATTENDED
    ]
    return record_facts(
        record={name: getattr(row, name) for name in RECORD_FACTS},
        children=course.children if course is not None else (),
        roles=attended,
    )


def _keys(course: CourseOfCare) -> Keys:
    """The course's match keys: one per child, from its keyed time and declared order."""
    return match_keys(
        course.fingerprint, ((c.birth_time_key, c.multiple_birth) for c in course.children)
    )


def _earliest_birth_year(course: CourseOfCare) -> int | None:
    years = [c.birth_year for c in course.children if c.birth_year is not None]
    return min(years) if years else None


def _iso(value: datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


def _snapshot(course: CourseOfCare) -> dict[str, Any]:
    """The masked values of a version, for the record's history."""
    return {
        "voided": False,
        "fingerprint": course.fingerprint,
        "ig_version": course.ig_version,
        "consent_granted": course.consent_granted,
        "consent_datetime": _iso(course.consent_datetime),
        "source_updated_at": _iso(course.source_updated_at),
        "mother_age_years": course.mother_age_years,
        "mother_postal_prefix": course.mother_postal_prefix,
        "consent_decided": course.consent_decided,
        "drew_warning": bool(course.warnings),
        "children": [
            {name: getattr(c, name) for name in CHILD_COLUMNS[1:]} for c in course.children
        ],
        "attended_by": list(course.attended_by),
        "present": list(course.present),
        "transfers": list(course.transfers),
    }


def _charts_named(results: Sequence[Result]) -> set[str]:
    charts: set[str] = set()
    for result in results:
        if isinstance(result, Void):
            charts.update(result.chart_numbers)
        elif not isinstance(result, Rejection):
            charts.add(result.external_record_id)
    return charts


def void_entry(void: Void, rows: Sequence[_Row]) -> dict[str, Any]:
    """The receipt entry of an NVSS void: how many records of its block it voided, and which.

    When none of the block is on file the void is still accepted (NVSS voids unused
    certificate numbers too), and a warning says that nothing was voided.
    """
    entry: dict[str, Any] = {
        "reference": void.reference,
        "external_record_id": rows[0].external_record_id if rows else void.external_record_id,
    }
    if rows:
        entry["submission_uuid"] = str(rows[0].id)
        entry["voided"] = True
    entry["voided_count"] = len(rows)
    entry["voided_records"] = [
        {"external_record_id": row.external_record_id, "submission_uuid": str(row.id)}
        for row in rows
    ]
    if not rows:
        entry["operation_outcome"] = error_outcome(
            "not-found",
            f"None of the {void.block_count} certificate number(s) of this void is on file "
            "for this practice; nothing was voided.",
            expression=void.reference,
            severity="warning",
        )
    return entry


def stale_update_details(*, stored: datetime, incoming: datetime) -> str:
    return (
        f"The record on file for this chart number was last updated at {stored.isoformat()}; "
        f"this Bundle's (its meta.lastUpdated, else its timestamp), {incoming.isoformat()}, is "
        "earlier, so it was not applied. If it is a correction, send it with a later "
        "meta.lastUpdated; if it is another birth, give it a chart number of its own."
    )


def _rejection(
    reference: str, external_record_id: str | None, outcome: dict[str, Any]
) -> dict[str, Any]:
    entry: dict[str, Any] = {"reference": reference}
    if external_record_id:
        entry["external_record_id"] = external_record_id
    entry["operation_outcome"] = outcome
    return entry
