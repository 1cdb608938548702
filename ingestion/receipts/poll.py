"""The receipt read in one statement: what a poll of an unfinished ingestion needs.

A client polls an unfinished ingestion every ``Retry-After`` seconds, so this read is the
API's most frequent. Through the ORM it was two queries, and Django building them was most of
the web's CPU for a poll. :data:`POLL` is written once: it reads the practice's ingestion row
and its staged chunks' entries (the progress, :mod:`ingestion.receipts.progress`) in one
round trip. A finished ingestion's row comes back whole enough for the streamed receipt
(:mod:`ingestion.receipts.receipt`), so that read costs no second lookup either.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any
from uuid import UUID

import orjson
from django.db import connection

from ingestion.models import Ingestion, StagedChunk
from ingestion.receipts.progress import Progress

# Runs on PostgreSQL and SQLite alike; table names are filled in once per connection vendor.
POLL = """
    SELECT i.status, i.entry_count, i.accepted_count, i.rejected_count,
           i.completed_at, i.failed_at, i.receipt_purged_at, i.failure,
           (SELECT SUM(s.entry_count) FROM {staged} s WHERE s.ingestion_id = i.id)
      FROM {ingestion} i
     WHERE i.id = %(id)s AND i.practice_id = %(practice)s
"""

_statements: dict[str, str] = {}


@dataclass(frozen=True, slots=True)
class Polled:
    """The receipt's figures as read by :data:`POLL`."""

    ingestion: Ingestion  # the row's receipt fields only: enough for receipt_stream
    progress: Progress | None  # None once finished

    def receipt(self) -> dict[str, Any]:
        """An unfinished ingestion's receipt, as
        :func:`ingestion.receipts.selectors.ingestion_receipt` writes it."""
        ingestion = self.ingestion
        finished_at = ingestion.finished_at
        receipt: dict[str, Any] = {
            "id": str(ingestion.id),
            "status": ingestion.status,
            "accepted": ingestion.accepted_count,
            "rejected": ingestion.rejected_count,
            "outcome": None,  # only a finished ingestion has one
            "completedAt": finished_at.isoformat() if finished_at else None,
        }
        if ingestion.receipt_purged_at is not None:
            receipt["outcomePurgedAt"] = ingestion.receipt_purged_at.isoformat()
        if self.progress is not None:
            receipt["progress"] = self.progress.as_receipt_field()
        return receipt


def ingestion_polled(*, practice_id: int, ingestion_id: UUID) -> Polled | None:
    """The practice's ingestion with this id, and its progress; None for unknown or foreign."""
    parameters = {
        "id": Ingestion._meta.pk.get_db_prep_value(ingestion_id, connection),
        "practice": practice_id,
    }
    with connection.cursor() as cursor:
        cursor.execute(_statement(), parameters)
        row = cursor.fetchone()
    if row is None:
        return None
    status, total, accepted, rejected, completed, failed, purged, failure, left = row
    ingestion = Ingestion(
        id=ingestion_id,
        practice_id=practice_id,
        status=status,
        entry_count=total,
        accepted_count=accepted,
        rejected_count=rejected,
        completed_at=_moment(completed),
        failed_at=_moment(failed),
        receipt_purged_at=_moment(purged),
        failure=_failure(failure),
    )
    if ingestion.finished:
        return Polled(ingestion, None)
    return Polled(ingestion, Progress(processed=max(0, total - (left or 0)), total=total))


def _statement() -> str:
    statement = _statements.get(connection.vendor)
    if statement is None:
        quote = connection.ops.quote_name
        statement = _statements[connection.vendor] = POLL.format(
            ingestion=quote(Ingestion._meta.db_table), staged=quote(StagedChunk._meta.db_table)
        )
    return statement


def _moment(value: datetime | str | None) -> datetime | None:
    """A timestamp as the ORM would hand it over (SQLite's cursor returns text, without a
    zone; the database keeps UTC)."""
    if value is None:
        return None
    moment = datetime.fromisoformat(value) if isinstance(value, str) else value
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def _failure(value: Any) -> Any:
    """The stored OperationOutcome: the cursor returns jsonb as text, as the ORM reads it."""
    return orjson.loads(value) if isinstance(value, str | bytes) else value
