"""Storing what the lifecycle decided: the chunk's writes, in bulk, with the counts.

New rows go with COPY, changed ones in one statement per table: a few queries per chunk
rather than one round trip per row. The kept counts follow the changed records in the same
transaction, computed from the values written (no reading back).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any
from uuid import UUID

from ingestion.fhir import CourseOfCare
from ingestion.lifecycle.deciding import Lifecycle
from ingestion.lifecycle.rows import CHANGEABLE_FIELDS, ROW_FIELDS, Row, Tracked
from registry.bulk import insert_rows, update_rows
from registry.models import (
    CHILD_COLUMNS,
    Attendance,
    Child,
    Provider,
    Record,
    RecordVersion,
    Transfer,
)
from registry.statistics.counts import RecordWritten, counts_kept_written


def lifecycle_store(lifecycle: Lifecycle) -> None:
    """Write the records, their facts, match keys, versions and counts the chunk decided."""
    changed = [t for t in lifecycle.tracked.values() if t.changed]
    with counts_kept_written(
        practice_id=lifecycle.practice.pk,
        record_ids=[t.row.id for t in changed],
        new_record_ids=[t.row.id for t in changed if t.is_new],
        written=lambda: {t.row.id: _written(t) for t in changed},
    ):
        _write(lifecycle)


def _write(lifecycle: Lifecycle) -> None:
    tracked = list(lifecycle.tracked.values())
    practice_id = lifecycle.practice.pk
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
    _write_facts(lifecycle, {t.row.id: t.course for t in tracked if t.course is not None})
    # The keys of every record whose keys changed, with the records (registry.matching).
    lifecycle.matching.write(new={t.row.id for t in tracked if t.is_new})
    insert_rows(
        RecordVersion,
        ["record_id", "version", "change", "values", "ingestion_id", "created_at"],
        (
            (record, version, change, values, ingestion_id, lifecycle.now)
            for record, version, change, values, ingestion_id in lifecycle.versions
        ),
    )


def _write_facts(lifecycle: Lifecycle, courses: Mapping[UUID, CourseOfCare]) -> None:
    insert_rows(Child, CHILD_COLUMNS, _children(courses))
    insert_rows(
        Transfer,
        ["record_id", "kind"],
        ((record_id, kind) for record_id, c in courses.items() for kind in c.transfers),
    )
    providers = _upsert_providers(lifecycle)
    insert_rows(
        Attendance,
        ["record_id", "provider_id", "kind", "role"],
        _attendances(courses, providers),
    )


def _upsert_providers(lifecycle: Lifecycle) -> dict[str, int]:
    """Every provider a course of the chunk named, as the latest course described it
    (as applying the courses one after another would leave them)."""
    latest = lifecycle.providers
    if not latest:
        return {}
    upserted = Provider.objects.bulk_create(
        [
            Provider(
                practice=lifecycle.practice,
                stable_id=p.stable_id,
                npi=p.npi,
                display_name=p.display_name,
                credentials=p.credentials,
                role=p.role,
                updated_at=lifecycle.now,
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
        Provider.objects.filter(practice=lifecycle.practice, stable_id__in=latest).values_list(
            "stable_id", "id"
        )
    )


def _values(row: Row, names: Sequence[str]) -> list[Any]:
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


def _written(tracked: Tracked) -> RecordWritten:
    """A record as this chunk wrote it, for the counts (the registry builds its facts)."""
    row, course = tracked.row, tracked.course
    attended = [
        role
        for _, kind, role in (course_attendances(course) if course is not None else [])
        if kind == Attendance.Kind.ATTENDED
    ]
    return RecordWritten(
        record=row, children=course.children if course is not None else (), roles=attended
    )
