"""Writes for the submit call."""

from __future__ import annotations

from django.db import IntegrityError, transaction
from django.utils import timezone

from ingestion.models import Ingestion, StagedChunk
from ingestion.staging import encrypt_chunk
from ingestion.submission import Submission
from ingestion.tasks import enqueue_submitted, republish_waiting
from registry.models import Practice


def ingestion_submit(
    *, practice: Practice, submission: Submission, idempotency_key: str | None
) -> tuple[Ingestion, bool]:
    """Create a queued ingestion with its payload staged, or return the one the key made.

    Returns ``(ingestion, created)``. Concurrent calls with one idempotency key create
    exactly one ingestion: the unique constraint decides, not a check-then-insert.
    """
    try:
        with transaction.atomic():
            ingestion = Ingestion.objects.create(
                practice=practice,
                idempotency_key=idempotency_key,
                kind=submission.kind,
                body_bytes=len(submission.body),
                entry_count=submission.entry_count,
                chunk_count=len(submission.bounds),
                enqueued_at=timezone.now(),
            )
            _stage(ingestion, submission)
            _enqueue_after_commit(ingestion)
    except IntegrityError:
        existing = ingestion_for_key(practice=practice, idempotency_key=idempotency_key)
        if existing is None:
            raise
        return existing, False
    return ingestion, True


def _enqueue_after_commit(ingestion: Ingestion) -> None:
    # A named function, not functools.partial: Django names the callback when it logs a
    # failure (robust=True), and a partial has no __qualname__ to name it by.
    def publish() -> None:
        enqueue_submitted(ingestion.id)

    transaction.on_commit(publish, robust=True)


def _stage(ingestion: Ingestion, submission: Submission) -> None:
    # One chunk at a time, so a large batch never sits in memory twice over.
    for chunk in submission.chunks():
        StagedChunk.objects.create(
            ingestion=ingestion,
            seq=chunk.seq,
            first_index=chunk.first_index,
            entry_count=chunk.entry_count,
            ciphertext=encrypt_chunk(chunk.plaintext, ingestion_id=ingestion.id, seq=chunk.seq),
        )


def ingestion_for_key(*, practice: Practice, idempotency_key: str | None) -> Ingestion | None:
    if idempotency_key is None:
        return None
    return Ingestion.objects.filter(practice=practice, idempotency_key=idempotency_key).first()


def ingestion_retried(*, ingestion: Ingestion) -> None:
    """A submission retried with its Idempotency-Key: republish it if it has not started."""
    republish_waiting(ingestion)
