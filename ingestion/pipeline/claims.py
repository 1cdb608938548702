"""The claim: a lease on an ingestion, taken in one statement."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from typing import Any
from uuid import UUID

from django.conf import settings
from django.db import connection
from django.utils import timezone

from ingestion.faults import retry_transient
from ingestion.fhir import practice_fingerprint_key as derive_fingerprint_key
from ingestion.models import Ingestion, StagedChunk
from ingestion.receipts.cache import forget_on_commit


@dataclass(frozen=True, slots=True)
class Claim:
    ingestion_id: UUID
    practice_id: int
    kind: str
    attempts: int
    fruitless: int  # claims in a row, this one included, that applied nothing so far
    last_seq: int  # the chunks are numbered 0..chunk_count-1
    queued_at: Any = None  # queue order, for combined claims
    received_on: date | None = None  # the UTC day it was queued: the courses' timeliness


def fingerprint_key(practice_id: int) -> bytes:
    return derive_fingerprint_key(settings.REGISTRY_FINGERPRINT_KEY.encode(), practice_id)


def lease_end() -> Any:
    return timezone.now() + timedelta(seconds=settings.REGISTRY_LEASE_SECONDS)


# Raw SQL where the ORM would need two statements; runs on PostgreSQL and SQLite alike.
CLAIM = """
    UPDATE {ingestion}
       SET status = %(processing)s,
           started_at = COALESCE(started_at, %(now)s),
           lease_expires_at = %(lease_end)s,
           attempts = attempts + 1,
           fruitless_claims = fruitless_claims + 1
     WHERE id = %(id)s
       AND (status = %(queued)s OR (status = %(processing)s AND lease_expires_at < %(now)s))
 RETURNING practice_id, kind, attempts, fruitless_claims, chunk_count, queued_at
"""


def sql(template: str) -> str:
    """The statement with the ingestion tables' names, quoted for the database in use."""
    return template.format(
        ingestion=connection.ops.quote_name(Ingestion._meta.db_table),
        staged=connection.ops.quote_name(StagedChunk._meta.db_table),
    )


def db_uuid(value: UUID) -> Any:
    """A UUID as the database stores it (SQLite keeps them as 32 hex characters)."""
    return Ingestion._meta.pk.get_db_prep_value(value, connection)


def claim(ingestion_id: UUID) -> Claim | None:
    return retry_transient(lambda: _claim_once(ingestion_id), what="claim")


def _claim_once(ingestion_id: UUID) -> Claim | None:
    """Take the lease in one statement; None when finished or another worker holds it."""
    parameters = {
        "id": db_uuid(ingestion_id),
        "now": timezone.now(),
        "lease_end": lease_end(),
        "queued": Ingestion.Status.QUEUED.value,
        "processing": Ingestion.Status.PROCESSING.value,
    }
    with connection.cursor() as cursor:
        cursor.execute(sql(CLAIM), parameters)
        row = cursor.fetchone()
    if row is None:
        return None
    forget_on_commit([ingestion_id])  # a poll reads processing from now on
    practice_id, kind, attempts, fruitless, chunk_count, queued_at = row
    return Claim(
        ingestion_id,
        practice_id,
        kind,
        attempts,
        fruitless,
        chunk_count - 1,
        queued_at,
        day(queued_at),
    )


def day(moment: datetime | str | None) -> date | None:
    """The UTC day of a timestamp as the cursor returns it."""
    return None if moment is None else aware(moment).astimezone(UTC).date()


def aware(moment: datetime | str) -> datetime:
    """A timestamp as the cursor returns it (SQLite's is text, without a zone), aware."""
    if isinstance(moment, str):
        moment = datetime.fromisoformat(moment)
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)
