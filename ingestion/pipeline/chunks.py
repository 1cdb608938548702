"""The chunk loop: a claimed ingestion's staged chunks, mapped and applied in order."""

from __future__ import annotations

import contextlib
import os
import sys
import threading
from collections.abc import Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any
from uuid import UUID

from django.conf import settings
from django.db import transaction
from django.db.models import Exists

from ingestion.faults import retry_transient
from ingestion.fhir import Result
from ingestion.fhir.chunks import map_chunk
from ingestion.intake.staging import decrypt_chunk
from ingestion.lifecycle.applying import records_apply
from ingestion.models import Ingestion, StagedChunk
from ingestion.pipeline.claims import Claim
from ingestion.pipeline.completion import Step, record_progress
from ingestion.pipeline.isolation import isolate_chunk, needs_isolation
from ingestion.pipeline.turns import Turn
from registry.locks import lock_practice
from registry.models import Practice


def process_chunks(claim: Claim, fingerprint_key: bytes, turn: Turn | None = None) -> Step:
    """Apply the chunks in order, mapping the next one while the current one is applied.

    Mapping is pure CPU and needs no lock; applying mostly waits on PostgreSQL. One mapping
    thread runs a chunk ahead, so a single worker process keeps both busy (the thread gets
    the GIL while the main thread waits on the database). At most two chunks are in memory.
    The mapping thread runs at a lower priority (:func:`mapping_thread_started`).

    With a ``turn`` (:mod:`ingestion.pipeline.turns`), what waits is served after each chunk
    (``turn.between``), and the loop stops once the turn is over (another batch waits):
    ``Step.TURN_OVER``. It asks before a chunk is applied, and then maps nothing ahead (the
    turn ends with this chunk), and again after, so that what began waiting meanwhile waits
    for one chunk at most.
    """
    staged = next_staged(claim.ingestion_id, after=-1)
    if staged is not None and needs_isolation(claim, staged):
        step = isolate_chunk(claim, staged, fingerprint_key)
        if step != Step.NEXT:
            return step
        staged = next_staged(claim.ingestion_id, after=staged["seq"])
    if staged is None:
        return Step.NEXT
    if staged["seq"] == claim.last_seq:  # one chunk left (a single course): no thread
        return apply_chunk(claim, staged, decrypt_and_map(claim, staged, fingerprint_key))
    with ThreadPoolExecutor(
        max_workers=1, thread_name_prefix="map", initializer=mapping_thread_started
    ) as mapper:

        def map_ahead(staged: Mapping[str, Any] | None) -> Future[list[Result]] | None:
            if staged is None:
                return None
            return mapper.submit(decrypt_and_map, claim, staged, fingerprint_key)

        mapping = map_ahead(staged)
        while staged is not None and mapping is not None:
            results = mapping.result()
            last = staged["seq"] == claim.last_seq
            ending = not last and turn is not None and turn.over()
            following = None
            if not last and not ending:
                following = next_staged(claim.ingestion_id, after=staged["seq"])
            mapping = map_ahead(following)
            step = apply_chunk(claim, staged, results)
            if step != Step.NEXT:
                return step
            if ending:
                return Step.TURN_OVER
            if turn is not None and following is not None:
                turn.between()  # waiting singles, served while the next chunk is mapped
                if turn.over():
                    return Step.TURN_OVER  # the chunk mapped ahead is mapped again next turn
            staged = following
    return Step.NEXT


def mapping_thread_started() -> None:
    """The mapping thread yields the CPU: it maps the next chunk, which its process needs
    only once the current one is applied, while on a full machine the process that holds a
    practice's lock (a backfill's other part waiting for it), the web's requests and the
    singles are needed now. At the same priority the lock's holder was descheduled in their
    favour and held each chunk 1.38x as long under singles at 20 a second as alone; with
    the mapping thread nicer, 1.15x (docs/performance.md, "A backfill under its practice's
    lock"). On an idle machine nothing changes: a free core runs a nice thread too.

    How much nicer: ``REGISTRY_MAPPING_NICENESS`` (10; 0 leaves it as its process). Raising
    a thread's niceness needs no privilege. Where a thread cannot have its own (not Linux),
    the thread runs as before."""
    nicer = settings.REGISTRY_MAPPING_NICENESS
    if not nicer or not sys.platform.startswith("linux"):
        return
    with contextlib.suppress(OSError):
        thread = threading.get_native_id()
        niceness = os.getpriority(os.PRIO_PROCESS, thread) + nicer
        os.setpriority(os.PRIO_PROCESS, thread, min(niceness, 19))


def next_staged(ingestion_id: UUID, *, after: int) -> Mapping[str, Any] | None:
    return retry_transient(
        lambda: (
            StagedChunk.objects.filter(ingestion_id=ingestion_id, seq__gt=after)
            .order_by("seq")
            .values("id", "seq", "first_index", "ciphertext", "applied_entries", "trying_entry")
            .first()
        ),
        what="reading a staged chunk",
    )


def decrypt_and_map(claim: Claim, staged: Mapping[str, Any], key: bytes) -> list[Result]:
    plaintext = decrypt_chunk(
        bytes(staged["ciphertext"]), ingestion_id=claim.ingestion_id, seq=staged["seq"]
    )
    return map_chunk(
        claim.kind,
        plaintext,
        staged["first_index"],
        key,
        claim.received_on,
        validate=settings.REGISTRY_FHIR_VALIDATION,
        most_values=settings.REGISTRY_MAX_ENTRY_NODES,
    )


def apply_chunk(claim: Claim, staged: Mapping[str, Any], results: list[Result]) -> Step:
    """Apply one mapped chunk, again if a transient error rolled it back."""
    return retry_transient(
        lambda: _apply_chunk_once(claim, staged, results), what=f"chunk {staged['seq']}"
    )


def _apply_chunk_once(claim: Claim, staged: Mapping[str, Any], results: list[Result]) -> Step:
    """Apply one mapped chunk with its receipt entries, and say what comes next."""
    with transaction.atomic():
        locked = (
            Ingestion.objects.select_for_update(of=("self",))
            .filter(id=claim.ingestion_id, status=Ingestion.Status.PROCESSING)
            .annotate(staged=Exists(StagedChunk.objects.filter(id=staged["id"])))
            .values_list("staged", flat=True)
        )
        if not locked:
            return Step.STOP  # failed meanwhile
        if not locked[0]:
            return Step.NEXT  # another worker (after a lease ran out) applied it already
        lock_practice(claim.practice_id)
        outcome = records_apply(
            practice=Practice(id=claim.practice_id),
            results=results,
            ingestion_id=claim.ingestion_id,
        )
        completed = record_progress(claim.ingestion_id, staged["seq"], staged["id"], outcome)
    return Step.DONE if completed else Step.NEXT
