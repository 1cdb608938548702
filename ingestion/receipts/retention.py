"""Receipt retention: a finished ingestion's per-record outcome is kept for a while, then purged.

A receipt's ``outcome`` (the :class:`~ingestion.models.OutcomeChunk` rows: chart numbers,
record ids and rejection reasons per entry) is kept ``REGISTRY_RECEIPT_RETENTION_DAYS`` (90 by
default) after the ingestion completed or failed. Then the beat's :func:`receipts_purge`
deletes those rows, a bounded number per transaction, and sets ``receipt_purged_at`` once none
is left: from then on the receipt has ``outcome: null`` and ``outcomePurgedAt``, and keeps its
status, its counts and ``completedAt``. The ingestion row itself stays, and with it its
Idempotency-Key (kept at least 24 hours, as promised: here, for good).

Rows go before the mark, so a purge cut short (a worker killed mid-way) is picked up again by
the next run; a receipt read during a purge may list fewer entries than its counts.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import datetime, timedelta
from uuid import UUID

from django.conf import settings
from django.db import transaction
from django.db.models.functions import Coalesce
from django.utils import timezone

from ingestion.models import Ingestion, OutcomeChunk

ROWS_PER_TRANSACTION = 200  # outcome rows of up to 250 entries each: a few MB at most
INGESTIONS_PER_QUERY = 100
RUN_SECONDS = 120.0  # a run stops after this; the next run (every 10 minutes) goes on


@dataclass(frozen=True)
class Purged:
    receipts: int
    rows: int


def purge_due_before(now: datetime) -> datetime:
    """Receipts of ingestions finished before this are purged."""
    return now - timedelta(days=settings.REGISTRY_RECEIPT_RETENTION_DAYS)


def receipts_due(*, before: datetime, limit: int) -> list[UUID]:
    """Finished ingestions not purged yet, the oldest first (the partial index receipt_to_purge)."""
    finished = Coalesce("completed_at", "failed_at")
    due = Ingestion.objects.filter(
        status__in=[Ingestion.Status.COMPLETED, Ingestion.Status.FAILED],
        receipt_purged_at__isnull=True,
    ).annotate(finished_time=finished)
    ordered = due.filter(finished_time__lt=before).order_by("finished_time")
    return list(ordered.values_list("id", flat=True)[:limit])


def receipt_purge_step(*, ingestion_id: UUID, now: datetime, rows: int) -> tuple[int, bool]:
    """Delete up to ``rows`` outcome rows of one ingestion, in one transaction; when none is
    left, mark it purged. Returns the rows deleted and whether the receipt is now purged."""
    with transaction.atomic():
        stored = OutcomeChunk.objects.filter(ingestion_id=ingestion_id)
        batch = list(stored.order_by("seq", "part").values_list("id", flat=True)[:rows])
        if batch:
            OutcomeChunk.objects.filter(id__in=batch).delete()
        if len(batch) == rows:
            return len(batch), False
        Ingestion.objects.filter(id=ingestion_id, receipt_purged_at__isnull=True).update(
            receipt_purged_at=now
        )
        return len(batch), True


def receipts_purge(
    *,
    now: datetime | None = None,
    rows: int = ROWS_PER_TRANSACTION,
    seconds: float = RUN_SECONDS,
) -> Purged:
    """One run of the beat: purge the receipts that are due, oldest first, for ``seconds``."""
    now = now or timezone.now()
    before, stop = purge_due_before(now), time.monotonic() + seconds
    receipts = deleted = 0
    while time.monotonic() < stop:
        due = receipts_due(before=before, limit=INGESTIONS_PER_QUERY)
        if not due:
            break
        for ingestion_id in due:
            done = False
            while not done and time.monotonic() < stop:
                count, done = receipt_purge_step(ingestion_id=ingestion_id, now=now, rows=rows)
                deleted += count
            receipts += int(done)
            if not done:
                break
    return Purged(receipts=receipts, rows=deleted)
