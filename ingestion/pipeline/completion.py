"""After a chunk: its progress recorded, the ingestion completed after its last, or failed."""

from __future__ import annotations

import enum
import logging
from datetime import datetime
from typing import Any
from uuid import UUID

from django.db import connection, transaction
from django.db.models import Exists, OuterRef
from django.utils import timezone

from ingestion.fhir.outcome import error_outcome
from ingestion.lifecycle.entries import ChunkOutcome
from ingestion.models import Ingestion, OutcomeChunk, StagedChunk
from ingestion.monitoring.aggregate import ingestion_durations_observe
from ingestion.monitoring.counters import Tally, pipeline_counts_add, tally_of
from ingestion.pipeline.claims import aware, db_uuid, lease_end, sql
from ingestion.receipts.cache import forget_on_commit
from registry.bulk import insert_rows
from registry.locks import lock_practice
from registry.statistics.submissions import Finished, submissions_add

log = logging.getLogger(__name__)

UNREADABLE = "The staged payload could not be read; resubmit the Bundle."


class Step(enum.Enum):
    NEXT = "next"  # go on with the next chunk
    DONE = "done"  # the last chunk was applied: the ingestion is completed
    STOP = "stop"  # the ingestion is no longer processing (it failed meanwhile)
    TURN_OVER = "turn over"  # others wait: hand the worker back (ingestion.pipeline.turns)


PROGRESS = """
    UPDATE {ingestion}
       SET accepted_count = accepted_count + %(accepted)s,
           rejected_count = rejected_count + %(rejected)s,
           fruitless_claims = 0,
           lease_expires_at = CASE WHEN s.remaining = 0 THEN NULL ELSE %(lease_end)s END,
           status = CASE WHEN s.remaining = 0 THEN %(completed)s ELSE status END,
           completed_at = CASE WHEN s.remaining = 0 THEN %(now)s ELSE completed_at END
      FROM (SELECT count(*) AS remaining FROM {staged} WHERE ingestion_id = %(id)s) AS s
     WHERE id = %(id)s
 RETURNING status, practice_id, queued_at, kind, entry_count, accepted_count, rejected_count
"""


def record_progress(
    ingestion_id: UUID,
    seq: int,
    chunk_id: int,
    outcome: ChunkOutcome,
    *,
    part: int = 0,
    chunk_done: bool = True,
) -> bool:
    """The chunk's receipt entries and counts, its deletion, and completion after the last.

    Returns True when this was the last chunk: the ingestion is completed in the same
    transaction as the records it describes, and counted in what its practice sent that day
    (registry.statistics.submissions). An isolated chunk records one ``part`` (entry) at a
    time, and is deleted with its last. The pipeline's counters follow in the same
    transaction (ingestion.monitoring.counters). The caller holds the practice lock.
    """
    # Bound on the server, its JSON written by orjson: a chunk's 250 entries through the
    # ORM's create cost a few milliseconds of the time the practice's lock is held.
    insert_rows(
        OutcomeChunk,
        ["ingestion_id", "seq", "part", "accepted", "rejected"],
        [(ingestion_id, seq, part, outcome.accepted, outcome.rejected)],
    )
    if chunk_done:
        StagedChunk.objects.filter(id=chunk_id).delete()
    else:
        StagedChunk.objects.filter(id=chunk_id).update(applied_entries=part)
    parameters = {
        "id": db_uuid(ingestion_id),
        "accepted": len(outcome.accepted),
        "rejected": len(outcome.rejected),
        "lease_end": lease_end(),
        "now": timezone.now(),
        "completed": Ingestion.Status.COMPLETED.value,
    }
    with connection.cursor() as cursor:
        cursor.execute(sql(PROGRESS), parameters)
        status, practice_id, queued_at, kind, courses, accepted, rejected = cursor.fetchone()
    completed = status == Ingestion.Status.COMPLETED
    tally = tally_of(outcome.accepted, outcome.rejected, completed=int(completed))
    pipeline_counts_add(practice_id=practice_id, tally=tally)
    if completed:
        submissions_add(
            practice_id=practice_id,
            finished=[Finished(aware(queued_at), courses, accepted, rejected)],
        )
        announce_completed([(ingestion_id, queued_at, kind)], parameters["now"])
    return completed


def announce_completed(ingestions: list[tuple[UUID, Any, str]], completed_at: datetime) -> None:
    """Once committed: a log line per ingestion, its submit-to-completed time for
    ``/metrics``' histogram by kind (single or batch), and no kept receipt
    (ingestion.receipts.cache)."""
    forget_on_commit(identifier for identifier, _, _ in ingestions)
    seconds = [(completed_at - aware(queued_at)).total_seconds() for _, queued_at, _ in ingestions]

    def said() -> None:
        ingestion_durations_observe(
            [(took, kind) for (_, _, kind), took in zip(ingestions, seconds, strict=True)]
        )
        for (identifier, _, _), took in zip(ingestions, seconds, strict=True):
            log.info(
                "ingestion %s completed, %.1f s after it was queued",
                identifier,
                took,
                extra={"ingestion_id": str(identifier)},
            )

    transaction.on_commit(said)


def ingestion_complete(ingestion_id: UUID) -> None:
    """Complete an ingestion with nothing left to apply (a worker died after its last chunk)."""
    staged = StagedChunk.objects.filter(ingestion_id=OuterRef("id"))
    unfinished = Ingestion.objects.filter(id=ingestion_id, status=Ingestion.Status.PROCESSING)
    now = timezone.now()
    with transaction.atomic():
        counted = ("entry_count", "accepted_count", "rejected_count")
        found = (
            unfinished.select_for_update()
            .values_list("practice_id", "queued_at", "kind", *counted)
            .first()
        )
        if found is None:
            return
        practice_id, queued_at, kind, courses, accepted, rejected = found
        lock_practice(practice_id)  # as every writer of what a practice sent holds it
        updated = unfinished.filter(~Exists(staged)).update(
            status=Ingestion.Status.COMPLETED, completed_at=now, lease_expires_at=None
        )
        if updated:
            pipeline_counts_add(practice_id=practice_id, tally=Tally(ingestions_completed=1))
            submissions_add(
                practice_id=practice_id,
                finished=[Finished(aware(queued_at), courses, accepted, rejected)],
            )
            announce_completed([(ingestion_id, queued_at, kind)], now)


def ingestion_fail(ingestion_id: UUID, diagnostics: str) -> None:
    """Give up on an ingestion as a whole: ``failed``, its staged payload purged. It counts
    in what its practice sent that day, its courses not accepted as rejected
    (registry.statistics.submissions)."""
    with transaction.atomic():
        locked = (
            Ingestion.objects.select_for_update()
            .filter(id=ingestion_id)
            .exclude(status__in=[Ingestion.Status.COMPLETED, Ingestion.Status.FAILED])
        )
        found = locked.values_list(
            "practice_id", "queued_at", "entry_count", "accepted_count", "rejected_count"
        ).first()
        if found is None:
            return
        practice_id, queued_at, courses, accepted, rejected = found
        lock_practice(practice_id)  # as every writer of what a practice sent holds it
        StagedChunk.objects.filter(ingestion_id=ingestion_id).delete()
        pipeline_counts_add(practice_id=practice_id, tally=Tally(ingestions_failed=1))
        submissions_add(
            practice_id=practice_id,
            finished=[Finished(aware(queued_at), courses, accepted, rejected, failed=True)],
        )
        locked.update(
            status=Ingestion.Status.FAILED,
            failed_at=timezone.now(),
            lease_expires_at=None,
            failure=error_outcome("exception", diagnostics, expression="Bundle"),
        )
        forget_on_commit([ingestion_id])  # a queued one's kept receipt
    log.error("ingestion %s failed: %s", ingestion_id, diagnostics)
