"""Applying mapped results to the registry: decide, then store, in the caller's transaction.

If a bulk write fails (a value the database refuses), the chunk is re-applied one result at
a time, each in its own savepoint: one bad record never spoils the others. Any other database
error (a cancelled statement, a lost connection, a deadlock) is raised, so the caller rolls
the whole chunk back and tries it again (:mod:`ingestion.faults`). The caller holds the
practice's advisory lock, so concurrent ingestions of one practice produce the outcome of a
serial order.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from uuid import UUID

from django.db import DatabaseError, transaction

from ingestion.faults import is_record_fault
from ingestion.fhir import Result
from ingestion.fhir.outcome import error_outcome
from ingestion.lifecycle.deciding import Lifecycle
from ingestion.lifecycle.entries import ChunkOutcome, Part, rejection_entry
from ingestion.lifecycle.storing import lifecycle_store
from registry.models import Practice

log = logging.getLogger(__name__)


def records_apply(
    *, practice: Practice, results: Sequence[Result], ingestion_id: UUID | None
) -> ChunkOutcome:
    """Apply ``results`` for ``practice``; the caller's transaction must hold its lock."""
    return records_apply_parts(practice=practice, parts=[Part(ingestion_id, results)])[0]


def records_apply_parts(*, practice: Practice, parts: Sequence[Part]) -> list[ChunkOutcome]:
    """Apply several ingestions' results as one chunk, each part after the one before.

    The records, their versions, flags and counts are those of applying the parts one after
    another (the lifecycle is replayed in memory in order, as within a batch); each part
    gets its own receipt entries, and its versions name its own ingestion. The caller's
    transaction must hold the practice's lock.
    """
    try:
        with transaction.atomic():
            return _decided_and_stored(practice, parts)
    except DatabaseError as error:
        if not is_record_fault(error):
            raise  # not the records' values: the caller rolls the chunk back and retries
        log.warning("bulk apply refused by the database; applying one record at a time")
    outcomes = []
    for part in parts:
        outcome = ChunkOutcome()
        for result in part.results:
            outcome.extend(_apply_alone(practice, result, part.ingestion_id))
        outcomes.append(outcome)
    return outcomes


def _decided_and_stored(practice: Practice, parts: Sequence[Part]) -> list[ChunkOutcome]:
    lifecycle = Lifecycle(practice)
    lifecycle.load([result for part in parts for result in part.results])
    outcomes = [lifecycle.replay(p.results, ingestion_id=p.ingestion_id) for p in parts]
    lifecycle_store(lifecycle)
    return outcomes


def _apply_alone(practice: Practice, result: Result, ingestion_id: UUID | None) -> ChunkOutcome:
    try:
        with transaction.atomic():
            return _decided_and_stored(practice, [Part(ingestion_id, [result])])[0]
    except DatabaseError as error:
        if not is_record_fault(error):
            raise
        log.warning("record refused by the database (%s)", type(error).__name__)
        outcome = ChunkOutcome()
        outcome.rejected.append(
            rejection_entry(
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
