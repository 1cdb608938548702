"""Writes for the submit call."""

from __future__ import annotations

import logging
from contextlib import nullcontext
from functools import cache
from typing import Any

from django.db import IntegrityError, connection, models, transaction
from django.db.models.sql import InsertQuery
from django.utils import timezone

from ingestion.intake.staging import encrypt_chunk
from ingestion.intake.submission import Submission
from ingestion.messaging.publishing import enqueue_submitted, republish_waiting
from ingestion.models import Ingestion, StagedChunk
from lib.logfilters import ingestion_id
from registry.bulk import server_bound
from registry.models import Practice

log = logging.getLogger(__name__)


def ingestion_submit(
    *, practice: Practice, submission: Submission, idempotency_key: str | None
) -> tuple[Ingestion, bool]:
    """Create a queued ingestion with its payload staged, or return the one the key made.

    Returns ``(ingestion, created)``. Concurrent calls with one idempotency key create
    exactly one ingestion: the unique constraint decides, not a check-then-insert.
    """
    ingestion = Ingestion(
        practice=practice,
        idempotency_key=idempotency_key,
        kind=submission.kind,
        body_bytes=len(submission.body),
        entry_count=submission.entry_count,
        chunk_count=len(submission.bounds),
        enqueued_at=timezone.now(),
    )
    try:
        if submission.kind == Ingestion.Kind.SINGLE and connection.vendor == "postgresql":
            _create_single(ingestion, submission)
        else:
            with transaction.atomic():
                ingestion.save(force_insert=True)
                _stage(ingestion, submission)
        _enqueue_after_commit(ingestion)
    except IntegrityError:
        existing = ingestion_for_key(practice=practice, idempotency_key=idempotency_key)
        if existing is None:
            raise
        ingestion_id.set(str(existing.id))
        return existing, False
    ingestion_id.set(str(ingestion.id))  # this request's later lines are about it
    log.info(
        "ingestion %s queued: %s, %d entries in %d chunks",
        ingestion.id,
        ingestion.kind,
        ingestion.entry_count,
        ingestion.chunk_count,
    )
    return ingestion, True


def _enqueue_after_commit(ingestion: Ingestion) -> None:
    # A named function, not functools.partial: Django names the callback when it logs a
    # failure (robust=True), and a partial has no __qualname__ to name it by.
    single = ingestion.kind == Ingestion.Kind.SINGLE

    def publish() -> None:
        enqueue_submitted(ingestion.id, single=single)

    transaction.on_commit(publish, robust=True)


def _create_single(ingestion: Ingestion, submission: Submission) -> None:
    """The ingestion and its one staged chunk in a single statement (atomic on its own): one
    round trip, and no transaction to open and commit around two. The ciphertext goes as
    bytes (server-side binding), not quoted into the statement's text."""
    (chunk,) = submission.chunks()
    staged = StagedChunk(
        ingestion=ingestion,
        seq=chunk.seq,
        first_index=chunk.first_index,
        entry_count=chunk.entry_count,
        ciphertext=encrypt_chunk(chunk.plaintext, ingestion_id=ingestion.id, seq=chunk.seq),
    )
    ingestion_sql, ingestion_parameters = _insert_sql(ingestion)
    staged_sql, staged_parameters = _insert_sql(staged)
    # Inside a caller's transaction, a savepoint keeps a refused key from aborting it.
    contained = transaction.atomic() if connection.in_atomic_block else nullcontext()
    with contained, server_bound() as cursor:
        cursor.execute(
            f"WITH ingestion AS ({ingestion_sql}) {staged_sql}",
            [*ingestion_parameters, *staged_parameters],
        )
    ingestion._state.adding = False


def _insert_sql(instance: models.Model) -> tuple[str, list[Any]]:
    """The INSERT Django would send to save ``instance`` (every column, its defaults applied):
    the statement compiled once per model, the values prepared as Django prepares them."""
    fields = _inserted_fields(type(instance), with_key=instance.pk is not None)
    values = [f.get_db_prep_save(f.pre_save(instance, True), connection) for f in fields]
    return _compiled_insert(type(instance), tuple(fields)), values


def _inserted_fields(model: type[models.Model], *, with_key: bool) -> list[Any]:
    meta = model._meta
    return [f for f in meta.local_concrete_fields if with_key or f is not meta.auto_field]


@cache
def _compiled_insert(model: type[models.Model], fields: tuple[Any, ...]) -> str:
    query = InsertQuery(model)
    query.insert_values(list(fields), [model()])
    ((sql, _),) = query.get_compiler(connection=connection).as_sql()
    return str(sql)


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
    ingestion_id.set(str(ingestion.id))
    log.info(
        "ingestion %s: sent again with its Idempotency-Key (%s)", ingestion.id, ingestion.status
    )
    republish_waiting(ingestion)
