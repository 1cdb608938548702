"""Apply mapped results to the registry: the record lifecycle of spec section 3.

A chunk of results is applied in one pass. The records it names are read (and row-locked)
once, the lifecycle is replayed in memory in entry order (so the same chart twice in one
batch applies in order), and the writes go out in bulk: a few queries per chunk rather than
one round trip per row. The caller holds the practice's advisory lock, so concurrent
ingestions of one practice produce the outcome of a serial order.

If a bulk write fails (a value the database refuses), the chunk is re-applied one result at
a time, each in its own savepoint: one bad record never spoils the others.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any
from uuid import UUID, uuid4

from django.db import DatabaseError, transaction
from django.utils import timezone

from ingestion.fhir import CourseOfCare, Rejection, Result, Retraction
from ingestion.fhir.outcome import error_outcome
from registry.models import (
    Attendance,
    Child,
    DuplicateLink,
    Practice,
    Provider,
    Record,
    RecordVersion,
    Transfer,
)

log = logging.getLogger(__name__)

STALE_UPDATE = "Stale update ignored"
RECORD_VALUE_FIELDS = [
    "version",
    "voided",
    "voided_at",
    "suspected_duplicate",
    "fingerprint",
    "ig_version",
    "consent_granted",
    "consent_datetime",
    "source_updated_at",
    "birth_year",
    "mother_age_years",
    "mother_postal_prefix",
    "updated_at",
]


@dataclass
class ChunkOutcome:
    """The receipt entries of a chunk, in entry order."""

    accepted: list[dict[str, Any]] = field(default_factory=list)
    rejected: list[dict[str, Any]] = field(default_factory=list)

    def extend(self, other: ChunkOutcome) -> None:
        self.accepted.extend(other.accepted)
        self.rejected.extend(other.rejected)


def records_apply(
    *, practice: Practice, results: Sequence[Result], ingestion_id: UUID | None
) -> ChunkOutcome:
    """Apply ``results`` for ``practice``; the caller's transaction must hold its lock."""
    try:
        with transaction.atomic():
            return _Chunk(practice, ingestion_id).apply(results)
    except DatabaseError:
        log.warning("bulk apply refused by the database; applying one record at a time")
    outcome = ChunkOutcome()
    for result in results:
        outcome.extend(_apply_alone(practice, result, ingestion_id))
    return outcome


def _apply_alone(practice: Practice, result: Result, ingestion_id: UUID | None) -> ChunkOutcome:
    try:
        with transaction.atomic():
            return _Chunk(practice, ingestion_id).apply([result])
    except DatabaseError as error:
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


@dataclass
class _Tracked:
    """A record as this chunk sees it, and what the chunk did to it."""

    record: Record
    is_new: bool
    changed: bool = False
    course: CourseOfCare | None = None  # the course whose facts replace the stored ones


class _Chunk:
    def __init__(self, practice: Practice, ingestion_id: UUID | None) -> None:
        self.practice = practice
        self.ingestion_id = ingestion_id
        self.now = timezone.now()
        self.tracked: dict[str, _Tracked] = {}
        self.live_by_fingerprint: dict[str, set[UUID]] = defaultdict(set)
        self.links: list[DuplicateLink] = []
        self.versions: list[RecordVersion] = []
        self.outcome = ChunkOutcome()

    def apply(self, results: Sequence[Result]) -> ChunkOutcome:
        self._load(results)
        for result in results:
            if isinstance(result, Rejection):
                self.outcome.rejected.append(
                    _rejection(
                        result.reference, result.external_record_id, result.operation_outcome
                    )
                )
            elif isinstance(result, Retraction):
                self._retract(result)
            else:
                self._submit(result)
        self._write()
        return self.outcome

    # -- reading ---------------------------------------------------------------------------

    def _load(self, results: Sequence[Result]) -> None:
        charts = {r.external_record_id for r in results if not isinstance(r, Rejection)}
        records = Record.objects.select_for_update().filter(
            practice=self.practice, external_record_id__in=charts
        )
        for record in records:
            self.tracked[record.external_record_id] = _Tracked(record, is_new=False)
        fingerprints = {
            r.fingerprint for r in results if isinstance(r, CourseOfCare) and r.fingerprint
        }
        live = Record.objects.filter(
            practice=self.practice, voided=False, fingerprint__in=fingerprints
        ).values_list("id", "fingerprint")
        for record_id, fingerprint in live:
            if fingerprint:
                self.live_by_fingerprint[fingerprint].add(record_id)

    # -- the lifecycle table ---------------------------------------------------------------

    def _submit(self, course: CourseOfCare) -> None:
        tracked = self.tracked.get(course.external_record_id)
        if tracked is None:
            self._create(course)
        elif tracked.record.voided:
            self._revive(tracked, course)
        else:
            self._amend(tracked, course)

    def _create(self, course: CourseOfCare) -> None:
        record = Record(
            id=uuid4(),
            practice=self.practice,
            external_record_id=course.external_record_id,
            version=1,
            created_at=self.now,
        )
        tracked = _Tracked(record, is_new=True)
        self.tracked[course.external_record_id] = tracked
        self._flag_if_resembling(record, course.fingerprint)
        self._take(tracked, course, RecordVersion.Change.CREATED)
        self._accept(course.reference, record, amended=False)

    def _amend(self, tracked: _Tracked, course: CourseOfCare) -> None:
        record = tracked.record
        stored, incoming = record.source_updated_at, course.source_updated_at
        if stored is not None and incoming is not None and incoming < stored:
            self._reject_conflict(course, STALE_UPDATE)
            return
        if self._would_duplicate_another(record, course.fingerprint):
            self._reject_conflict(
                course,
                "The correction would make this record a duplicate of a different record "
                "on file (same mother and newborn birth date); it was not merged.",
            )
            return
        record.version += 1
        self._take(tracked, course, RecordVersion.Change.AMENDED)
        self._accept(course.reference, record, amended=True)

    def _revive(self, tracked: _Tracked, course: CourseOfCare) -> None:
        """A voided chart sent again comes back as a further version of the same record."""
        record = tracked.record
        record.voided, record.voided_at = False, None
        record.version += 1
        self._flag_if_resembling(record, course.fingerprint)
        self._take(tracked, course, RecordVersion.Change.REVIVED)
        self._accept(course.reference, record, amended=True)

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
        record = tracked.record
        if not record.voided:  # retracting a voided record again changes nothing
            self._forget_fingerprint(record)
            record.voided, record.voided_at, record.updated_at = True, self.now, self.now
            tracked.changed = True
            self.versions.append(self._version(record, RecordVersion.Change.VOIDED, None))
        self.outcome.accepted.append(
            {
                "reference": retraction.reference,
                "submission_uuid": str(record.id),
                "external_record_id": record.external_record_id,
                "voided": True,
            }
        )

    # -- helpers ---------------------------------------------------------------------------

    def _would_duplicate_another(self, record: Record, fingerprint: str | None) -> bool:
        """A changed fingerprint that lands on another live record: spec 3, "not merged"."""
        if not fingerprint or fingerprint == record.fingerprint:
            return False
        return bool(self.live_by_fingerprint[fingerprint] - {record.id})

    def _flag_if_resembling(self, record: Record, fingerprint: str | None) -> None:
        if not fingerprint:
            return
        resembled = self.live_by_fingerprint[fingerprint] - {record.id}
        if resembled:
            record.suspected_duplicate = True
            self.links.extend(
                DuplicateLink(record_id=record.id, resembles_id=other, created_at=self.now)
                for other in sorted(resembled)
            )

    def _forget_fingerprint(self, record: Record) -> None:
        if record.fingerprint:
            self.live_by_fingerprint[record.fingerprint].discard(record.id)

    def _take(self, tracked: _Tracked, course: CourseOfCare, change: str) -> None:
        """The record takes the course's facts, and the version is kept in its history."""
        record = tracked.record
        self._forget_fingerprint(record)
        record.fingerprint = course.fingerprint
        record.ig_version = course.ig_version
        record.consent_granted = course.consent_granted
        record.consent_datetime = course.consent_datetime
        record.source_updated_at = course.source_updated_at or record.source_updated_at
        record.birth_year = _earliest_birth_year(course)
        record.mother_age_years = course.mother_age_years
        record.mother_postal_prefix = course.mother_postal_prefix
        record.updated_at = self.now
        if course.fingerprint:
            self.live_by_fingerprint[course.fingerprint].add(record.id)
        tracked.changed, tracked.course = True, course
        self.versions.append(self._version(record, change, course))

    def _version(self, record: Record, change: str, course: CourseOfCare | None) -> RecordVersion:
        return RecordVersion(
            record_id=record.id,
            version=record.version,
            change=change,
            values=_snapshot(record, course),
            ingestion_id=self.ingestion_id,
            created_at=self.now,
        )

    def _accept(self, reference: str, record: Record, *, amended: bool) -> None:
        entry: dict[str, Any] = {
            "reference": reference,
            "submission_uuid": str(record.id),
            "external_record_id": record.external_record_id,
            "amended": amended,
        }
        if amended:
            entry["version"] = record.version
        if record.suspected_duplicate:
            entry["suspected_duplicate"] = True
        self.outcome.accepted.append(entry)

    def _reject_conflict(self, course: CourseOfCare, diagnostics: str) -> None:
        self.outcome.rejected.append(
            _rejection(
                course.reference,
                course.external_record_id,
                error_outcome("conflict", diagnostics, expression=course.reference),
            )
        )

    # -- writing ---------------------------------------------------------------------------

    def _write(self) -> None:
        tracked = list(self.tracked.values())
        Record.objects.bulk_create([t.record for t in tracked if t.is_new])
        changed = [t.record for t in tracked if t.changed and not t.is_new]
        if changed:
            Record.objects.bulk_update(changed, RECORD_VALUE_FIELDS)
        replaced = {t.record.id: t.course for t in tracked if t.course is not None}
        self._write_facts(replaced)
        DuplicateLink.objects.bulk_create(self.links, ignore_conflicts=True)
        RecordVersion.objects.bulk_create(self.versions)

    def _write_facts(self, courses: Mapping[UUID, CourseOfCare | None]) -> None:
        ids = list(courses)
        for model in (Child, Attendance, Transfer):
            model.objects.filter(record_id__in=ids).delete()
        live = {record_id: c for record_id, c in courses.items() if c is not None}
        Child.objects.bulk_create(_children(live))
        Transfer.objects.bulk_create(
            Transfer(record_id=record_id, kind=kind)
            for record_id, course in live.items()
            for kind in course.transfers
        )
        providers = self._upsert_providers(live.values())
        Attendance.objects.bulk_create(_attendances(live, providers))

    def _upsert_providers(self, courses: Iterable[CourseOfCare]) -> dict[str, int]:
        latest = {p.stable_id: p for course in courses for p in course.providers}
        if not latest:
            return {}
        Provider.objects.bulk_create(
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
        return dict(
            Provider.objects.filter(practice=self.practice, stable_id__in=latest).values_list(
                "stable_id", "id"
            )
        )


def _children(courses: dict[UUID, CourseOfCare]) -> Iterable[Child]:
    for record_id, course in courses.items():
        for child in course.children:
            yield Child(
                record_id=record_id,
                birth_order=child.birth_order,
                outcome=child.outcome,
                sex=child.sex,
                birth_year=child.birth_year,
                birth_weight_grams=child.birth_weight_grams,
                gestational_age_weeks=child.gestational_age_weeks,
                gestational_age_days=child.gestational_age_days,
                apgar_1=child.apgar_1,
                apgar_5=child.apgar_5,
                apgar_10=child.apgar_10,
            )


def _attendances(
    courses: dict[UUID, CourseOfCare], providers: dict[str, int]
) -> Iterable[Attendance]:
    for record_id, course in courses.items():
        pairs = {(s, Attendance.Kind.ATTENDED) for s in course.attended_by}
        pairs |= {(s, Attendance.Kind.PRESENT) for s in course.present}
        for stable_id, kind in sorted(pairs):
            if stable_id in providers:
                yield Attendance(record_id=record_id, provider_id=providers[stable_id], kind=kind)


def _earliest_birth_year(course: CourseOfCare) -> int | None:
    years = [c.birth_year for c in course.children if c.birth_year is not None]
    return min(years) if years else None


def _iso(value: datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


def _snapshot(record: Record, course: CourseOfCare | None) -> dict[str, Any]:
    """The masked values of a version, for the record's history."""
    values: dict[str, Any] = {"voided": record.voided}
    if course is None:
        return values
    values.update(
        fingerprint=course.fingerprint,
        ig_version=course.ig_version,
        consent_granted=course.consent_granted,
        consent_datetime=_iso(course.consent_datetime),
        source_updated_at=_iso(course.source_updated_at),
        mother_age_years=course.mother_age_years,
        mother_postal_prefix=course.mother_postal_prefix,
        children=[
            {
                "birth_order": c.birth_order,
                "outcome": c.outcome,
                "sex": c.sex,
                "birth_year": c.birth_year,
                "birth_weight_grams": c.birth_weight_grams,
                "gestational_age_weeks": c.gestational_age_weeks,
                "gestational_age_days": c.gestational_age_days,
                "apgar_1": c.apgar_1,
                "apgar_5": c.apgar_5,
                "apgar_10": c.apgar_10,
            }
            for c in course.children
        ],
        attended_by=list(course.attended_by),
        present=list(course.present),
        transfers=list(course.transfers),
    )
    return values


def _rejection(
    reference: str, external_record_id: str | None, outcome: dict[str, Any]
) -> dict[str, Any]:
    entry: dict[str, Any] = {"reference": reference}
    if external_record_id:
        entry["external_record_id"] = external_record_id
    entry["operation_outcome"] = outcome
    return entry
