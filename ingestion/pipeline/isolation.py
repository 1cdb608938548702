"""Isolating a chunk that keeps killing the worker (a reader may skip this room).

A chunk whose claims keep ending without progress (the worker killed, or an error that is
not a record's fault) is applied one entry at a time, each entry in its own transaction
that also records its receipt part. Before an entry is tried, the try is committed, so
after a crash the next claim knows which entry was in flight: an entry that has been in
flight REGISTRY_ENTRY_CRASH_LIMIT times is rejected with an ``exception`` outcome and the
others land. An entry that raises is rejected at once.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Mapping
from typing import Any

from django.conf import settings
from django.db import DatabaseError, transaction
from django.db.models import Case, Exists, F, When

from ingestion.faults import is_transient, retry_transient
from ingestion.fhir import Rejection, Result
from ingestion.fhir.chunks import chunk_entries, map_chunk
from ingestion.fhir.outcome import error_outcome
from ingestion.intake.staging import decrypt_chunk
from ingestion.lifecycle.applying import records_apply
from ingestion.models import Ingestion, StagedChunk
from ingestion.pipeline.claims import Claim
from ingestion.pipeline.completion import Step, record_progress
from registry.locks import lock_practice
from registry.models import Practice

log = logging.getLogger(__name__)


def needs_isolation(claim: Claim, staged: Mapping[str, Any]) -> bool:
    """The previous claim applied nothing (or this chunk is already being isolated)."""
    started = staged["applied_entries"] > 0 or staged["trying_entry"] is not None
    return started or claim.fruitless >= settings.REGISTRY_ISOLATE_AFTER_CLAIMS


def isolate_chunk(claim: Claim, staged: Mapping[str, Any], key: bytes) -> Step:
    log.warning("ingestion %s: isolating chunk %d", claim.ingestion_id, staged["seq"])
    entries = _chunk_entries(claim, staged)
    for position in range(staged["applied_entries"], len(entries)):
        index = staged["first_index"] + position
        reference = "Bundle" if claim.kind == Ingestion.Kind.SINGLE else f"Bundle.entry[{index}]"
        if _mark_trying(staged["id"], position) > settings.REGISTRY_ENTRY_CRASH_LIMIT:
            log.warning("ingestion %s: %s kept crashing", claim.ingestion_id, reference)
            results: list[Result] = [_crashed(reference)]
        else:
            results = _map_alone(claim, entries[position], index, key, reference)
        try:
            step = _apply_entry(claim, staged, position, len(entries), results, reference)
        except DatabaseError as error:
            if is_transient(error):
                _forget_try(staged["id"], position)
            raise
        if step != Step.NEXT:
            return step
    return Step.NEXT


def _chunk_entries(claim: Claim, staged: Mapping[str, Any]) -> list[bytes]:
    plaintext = decrypt_chunk(
        bytes(staged["ciphertext"]), ingestion_id=claim.ingestion_id, seq=staged["seq"]
    )
    return chunk_entries(claim.kind, plaintext)


def _mark_trying(chunk_id: int, position: int) -> int:
    """Commit that ``position`` is being tried; how many times it has been, this one included."""

    def mark() -> int:
        # One transaction: a retry after the read failed must not count the try twice.
        with transaction.atomic():
            StagedChunk.objects.filter(id=chunk_id).update(
                trying_count=Case(
                    When(trying_entry=position, then=F("trying_count") + 1), default=1
                ),
                trying_entry=position,
            )
            chunk = StagedChunk.objects.filter(id=chunk_id).values_list("trying_count", flat=True)
            return chunk.first() or 1

    return retry_transient(mark, what="marking an entry")


def _forget_try(chunk_id: int, position: int) -> None:
    """A try that a transient error ended (a cancelled statement, a lost connection) is no
    crash of the entry: it does not count towards ``REGISTRY_ENTRY_CRASH_LIMIT``. Best effort:
    if the database cannot be reached even for this, the try stays counted."""

    def forget() -> None:
        StagedChunk.objects.filter(id=chunk_id, trying_entry=position, trying_count__gt=0).update(
            trying_count=F("trying_count") - 1
        )

    with contextlib.suppress(DatabaseError):
        retry_transient(forget, what="forgetting a try")


def _map_alone(claim: Claim, entry: bytes, index: int, key: bytes, reference: str) -> list[Result]:
    validate, most = settings.REGISTRY_FHIR_VALIDATION, settings.REGISTRY_MAX_ENTRY_NODES
    try:
        if claim.kind == Ingestion.Kind.SINGLE:
            return map_chunk(
                claim.kind, entry, 0, key, claim.received_on, validate=validate, most_values=most
            )
        alone = b"[" + entry + b"]"
        return map_chunk(
            claim.kind, alone, index, key, claim.received_on, validate=validate, most_values=most
        )
    except Exception as error:  # the kind only: a message could quote the entry
        log.warning(
            "ingestion %s: %s could not be mapped (%s)",
            claim.ingestion_id,
            reference,
            type(error).__name__,
        )
        return [_crashed(reference)]


def _apply_entry(
    claim: Claim,
    staged: Mapping[str, Any],
    position: int,
    total: int,
    results: list[Result],
    reference: str,
) -> Step:
    def apply(results: list[Result]) -> Step:
        return retry_transient(
            lambda: _apply_part_once(claim, staged, position, total, results),
            what=f"entry {position} of chunk {staged['seq']}",
        )

    try:
        return apply(results)
    except Exception as error:
        if is_transient(error):
            raise
        log.warning(
            "ingestion %s: %s could not be applied (%s)",
            claim.ingestion_id,
            reference,
            type(error).__name__,
        )
        return apply([_crashed(reference)])


def _apply_part_once(
    claim: Claim, staged: Mapping[str, Any], position: int, total: int, results: list[Result]
) -> Step:
    with transaction.atomic():
        locked = (
            Ingestion.objects.select_for_update(of=("self",))
            .filter(id=claim.ingestion_id, status=Ingestion.Status.PROCESSING)
            .annotate(
                due=Exists(StagedChunk.objects.filter(id=staged["id"], applied_entries=position))
            )
            .values_list("due", flat=True)
        )
        if not locked:
            return Step.STOP
        if not locked[0]:
            return Step.NEXT  # another worker applied this entry already
        lock_practice(claim.practice_id)
        outcome = records_apply(
            practice=Practice(id=claim.practice_id),
            results=results,
            ingestion_id=claim.ingestion_id,
        )
        completed = record_progress(
            claim.ingestion_id,
            staged["seq"],
            staged["id"],
            outcome,
            part=position + 1,
            chunk_done=position + 1 == total,
        )
    return Step.DONE if completed else Step.NEXT


def _crashed(reference: str) -> Rejection:
    return Rejection(
        reference=reference,
        operation_outcome=error_outcome(
            "exception",
            "This entry could not be processed: applying it failed repeatedly. The other "
            "entries were processed; check this one and send it again.",
            expression=reference,
        ),
    )
