"""Writes for the submit call."""

from __future__ import annotations

from functools import partial

from django.db import IntegrityError, transaction

from ingestion.models import Ingestion, StagedChunk
from ingestion.staging import encrypt_chunk
from ingestion.submission import Submission
from ingestion.tasks import enqueue
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
            )
            _stage(ingestion, submission)
            transaction.on_commit(partial(enqueue, ingestion.id), robust=True)
    except IntegrityError:
        existing = ingestion_for_key(practice=practice, idempotency_key=idempotency_key)
        if existing is None:
            raise
        return existing, False
    return ingestion, True


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
