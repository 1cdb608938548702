"""The records a chunk names, read once: their stored values, as the chunk sees them."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, fields
from datetime import datetime
from typing import Any
from uuid import UUID

from django.db import connection

from ingestion.fhir import CourseOfCare, Rejection, Result, Void
from registry.models import Record


@dataclass(slots=True)
class Row:
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


ROW_FIELDS = [f.name for f in fields(Row)]
CHANGEABLE_FIELDS = [name for name in ROW_FIELDS if name not in ("id", "external_record_id")]


@dataclass(slots=True)
class Tracked:
    """A record as this chunk sees it, and what the chunk did to it."""

    row: Row
    is_new: bool
    changed: bool = False
    course: CourseOfCare | None = None  # the course whose facts replace the stored ones


def records_on_file(practice_id: int, charts: set[str], *, lock: bool) -> list[dict[str, Any]]:
    """The practice's records with these chart numbers, as ``Row`` values; row-locked for a
    chunk that will write them, not for the preview."""
    if lock:
        return _records_locked(practice_id, charts)
    return list(
        Record.objects.filter(practice_id=practice_id, external_record_id__in=charts).values(
            *ROW_FIELDS
        )
    )


def _records_locked(practice_id: int, charts: set[str]) -> list[dict[str, Any]]:
    """Written out on PostgreSQL: every chunk sends it, and the ORM spent more CPU building it
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


def charts_named(results: Sequence[Result]) -> set[str]:
    """The chart numbers the results touch (a void's whole block)."""
    charts: set[str] = set()
    for result in results:
        if isinstance(result, Void):
            charts.update(result.chart_numbers)
        elif not isinstance(result, Rejection):
            charts.add(result.external_record_id)
    return charts
