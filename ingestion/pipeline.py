"""Processing an ingestion: claim it, apply its chunks one transaction each, finish it.

Exactly once, whatever happens to the worker:

* A worker *claims* an ingestion by taking a lease (``lease_expires_at``); another worker may
  claim it only once the lease has run out, which is how a killed worker's ingestion is
  picked up again (by redelivery or by :func:`ingestion_recover`).
* Each chunk is applied in one transaction that also writes the chunk's receipt entries and
  deletes the staged chunk. A chunk is therefore either fully applied and gone, or not
  applied and still staged: progress is committed with the records it describes.
* The chunk transaction locks the ingestion row, so chunks apply in order even if two
  workers hold the same ingestion, and the practice's advisory lock, so two ingestions of
  one practice touching the same chart or fingerprint produce the outcome of a serial order.
"""

from __future__ import annotations

import contextlib
import enum
import logging
from collections.abc import Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from typing import Any
from uuid import UUID

import msgspec
from django.conf import settings
from django.db import DatabaseError, connection, transaction
from django.db.models import Case, Exists, F, OuterRef, Q, When
from django.utils import timezone

from ingestion.apply import ChunkOutcome, Part, records_apply, records_apply_parts
from ingestion.faults import is_transient, retry_transient
from ingestion.fhir import Rejection, Result, map_batch_entry, map_single
from ingestion.fhir import practice_fingerprint_key as derive_fingerprint_key
from ingestion.fhir.outcome import error_outcome
from ingestion.fhir.shape import too_many_values_rejection, values_over
from ingestion.models import Ingestion, OutcomeChunk, StagedChunk
from ingestion.monitoring.aggregate import ingestion_durations_observe
from ingestion.monitoring.counters import (
    Tally,
    pipeline_counts_add,
    pipeline_counts_statement,
    tally_of,
    tally_sum,
)
from ingestion.staging import UnreadablePayload, decrypt_chunk
from ingestion.validation import validate_course
from ingestion.wakeups import singles_message_taken
from registry.bulk import insert_rows
from registry.locks import LOCK_PRACTICE, lock_practice
from registry.models import Practice

log = logging.getLogger(__name__)

UNREADABLE = "The staged payload could not be read; resubmit the Bundle."
_entries_decoder = msgspec.json.Decoder(list[msgspec.Raw])


class Step(enum.Enum):
    NEXT = "next"  # go on with the next chunk
    DONE = "done"  # the last chunk was applied: the ingestion is completed
    STOP = "stop"  # the ingestion is no longer processing (it failed meanwhile)


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


@dataclass(frozen=True, slots=True)
class NextSingles:
    """A practice still has singles waiting after a full combined claim: publish a message
    for the first of them (at the back of the queue, so other practices get their turn)."""

    ingestion_id: UUID
    practice_id: int


def ingestion_process(ingestion_id: UUID) -> NextSingles | None:
    """Process what is left of an ingestion. Safe to run twice, or concurrently."""
    claim = _claim(ingestion_id)
    if claim is None:
        # Taken along by another single's claim, or finished: singles submitted since may
        # have counted on this message (ingestion.wakeups).
        return _waiting_singles_served(ingestion_id)
    if claim.fruitless > settings.REGISTRY_MAX_ATTEMPTS:
        ingestion_fail(
            ingestion_id,
            f"The ingestion could not be processed after {settings.REGISTRY_MAX_ATTEMPTS} "
            f"attempts.",
        )
        return None
    if _combinable(claim):
        return singles_process(claim.practice_id, claim)
    key = _fingerprint_key(claim.practice_id)
    if _process_chunks(claim, key) == Step.NEXT:
        _complete(ingestion_id)  # nothing was left to apply (a worker died after the last)
    return None


def _fingerprint_key(practice_id: int) -> bytes:
    return derive_fingerprint_key(settings.REGISTRY_FINGERPRINT_KEY.encode(), practice_id)


def _lease_end() -> Any:
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


def _sql(template: str) -> str:
    """The statement with the ingestion tables' names, quoted for the database in use."""
    return template.format(
        ingestion=connection.ops.quote_name(Ingestion._meta.db_table),
        staged=connection.ops.quote_name(StagedChunk._meta.db_table),
    )


def _claim(ingestion_id: UUID) -> Claim | None:
    return retry_transient(lambda: _claim_once(ingestion_id), what="claim")


def _claim_once(ingestion_id: UUID) -> Claim | None:
    """Take the lease in one statement; None when finished or another worker holds it."""
    parameters = {
        "id": _db_uuid(ingestion_id),
        "now": timezone.now(),
        "lease_end": _lease_end(),
        "queued": Ingestion.Status.QUEUED.value,
        "processing": Ingestion.Status.PROCESSING.value,
    }
    with connection.cursor() as cursor:
        cursor.execute(_sql(CLAIM), parameters)
        row = cursor.fetchone()
    if row is None:
        return None
    practice_id, kind, attempts, fruitless, chunk_count, queued_at = row
    return Claim(
        ingestion_id,
        practice_id,
        kind,
        attempts,
        fruitless,
        chunk_count - 1,
        queued_at,
        _day(queued_at),
    )


def _day(moment: datetime | str | None) -> date | None:
    """The UTC day of a timestamp as the cursor returns it."""
    return None if moment is None else _aware(moment).astimezone(UTC).date()


def _aware(moment: datetime | str) -> datetime:
    """A timestamp as the cursor returns it (SQLite's is text, without a zone), aware."""
    if isinstance(moment, str):
        moment = datetime.fromisoformat(moment)
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def _process_chunks(claim: Claim, fingerprint_key: bytes) -> Step:
    """Apply the chunks in order, mapping the next one while the current one is applied.

    Mapping is pure CPU and needs no lock; applying mostly waits on PostgreSQL. One mapping
    thread runs a chunk ahead, so a single worker process keeps both busy (the thread gets
    the GIL while the main thread waits on the database). At most two chunks are in memory.
    """
    staged = _next_staged(claim.ingestion_id, after=-1)
    if staged is not None and _needs_isolation(claim, staged):
        step = _isolate_chunk(claim, staged, fingerprint_key)
        if step != Step.NEXT:
            return step
        staged = _next_staged(claim.ingestion_id, after=staged["seq"])
    if staged is None:
        return Step.NEXT
    if staged["seq"] == claim.last_seq:  # one chunk left (a single course): no thread
        return _apply_chunk(claim, staged, _decrypt_and_map(claim, staged, fingerprint_key))
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="map") as mapper:

        def map_ahead(staged: Mapping[str, Any] | None) -> Future[list[Result]] | None:
            if staged is None:
                return None
            return mapper.submit(_decrypt_and_map, claim, staged, fingerprint_key)

        mapping = map_ahead(staged)
        while staged is not None and mapping is not None:
            results = mapping.result()
            following = None
            if staged["seq"] < claim.last_seq:
                following = _next_staged(claim.ingestion_id, after=staged["seq"])
            mapping = map_ahead(following)
            step = _apply_chunk(claim, staged, results)
            if step != Step.NEXT:
                return step
            staged = following
    return Step.NEXT


def _next_staged(ingestion_id: UUID, *, after: int) -> Mapping[str, Any] | None:
    return retry_transient(
        lambda: (
            StagedChunk.objects.filter(ingestion_id=ingestion_id, seq__gt=after)
            .order_by("seq")
            .values("id", "seq", "first_index", "ciphertext", "applied_entries", "trying_entry")
            .first()
        ),
        what="reading a staged chunk",
    )


def _decrypt_and_map(claim: Claim, staged: Mapping[str, Any], key: bytes) -> list[Result]:
    plaintext = decrypt_chunk(
        bytes(staged["ciphertext"]), ingestion_id=claim.ingestion_id, seq=staged["seq"]
    )
    return map_chunk(claim.kind, plaintext, staged["first_index"], key, claim.received_on)


def _apply_chunk(claim: Claim, staged: Mapping[str, Any], results: list[Result]) -> Step:
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
        completed = _record_progress(claim.ingestion_id, staged["seq"], staged["id"], outcome)
    return Step.DONE if completed else Step.NEXT


def map_chunk(
    kind: str, plaintext: bytes, first_index: int, key: bytes, received_on: date | None = None
) -> list[Result]:
    """Decode a staged chunk and map it with the pure core (no I/O).

    ``received_on``: the day the ingestion was queued, for each course's timeliness bucket.
    """
    validate = settings.REGISTRY_FHIR_VALIDATION
    # Counted again: what was stored before the door counted (or under a higher limit) is
    # refused here, not decoded.
    most = settings.REGISTRY_MAX_ENTRY_NODES
    if kind == Ingestion.Kind.SINGLE:
        if values_over(plaintext, most):
            return [too_many_values_rejection("Bundle", most)]
        try:
            bundle = msgspec.json.decode(plaintext)
        except (msgspec.DecodeError, ValueError):
            return [_undecodable("Bundle")]
        invalid = validate and validate_course(bundle, reference="Bundle", path="Bundle")
        return [invalid or map_single(bundle, fingerprint_key=key, received_on=received_on)]
    results: list[Result] = []
    for offset, raw in enumerate(_entries_decoder.decode(plaintext)):
        index = first_index + offset
        reference = f"Bundle.entry[{index}]"
        if values_over(raw, most):
            results.append(too_many_values_rejection(reference, most))
            continue
        try:
            entry = msgspec.json.decode(raw)
        except (msgspec.DecodeError, ValueError):
            results.append(_undecodable(reference))
            continue
        invalid = validate and _validate_entry(entry, reference)
        result = invalid or map_batch_entry(
            entry, index, fingerprint_key=key, received_on=received_on
        )
        if result is not None:
            results.append(result)
    return results


def _validate_entry(entry: object, reference: str) -> Rejection | None:
    resource = entry.get("resource") if isinstance(entry, dict) else None
    if not isinstance(resource, dict) or resource.get("resourceType") != "Bundle":
        return None  # a DELETE or an ignored entry: nothing to validate
    return validate_course(resource, reference=reference, path=f"{reference}.resource")


def _undecodable(reference: str) -> Rejection:
    return Rejection(
        reference=reference,
        operation_outcome=error_outcome(
            "structure", "The entry could not be decoded as JSON.", expression=reference
        ),
    )


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
 RETURNING status, practice_id, queued_at
"""


def _db_uuid(value: UUID) -> Any:
    """A UUID as the database stores it (SQLite keeps them as 32 hex characters)."""
    return Ingestion._meta.pk.get_db_prep_value(value, connection)


def _record_progress(
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
    transaction as the records it describes. An isolated chunk records one ``part`` (entry)
    at a time, and is deleted with its last. The pipeline's counters follow in the same
    transaction (ingestion.monitoring.counters).
    """
    OutcomeChunk.objects.create(
        ingestion_id=ingestion_id,
        seq=seq,
        part=part,
        accepted=outcome.accepted,
        rejected=outcome.rejected,
    )
    if chunk_done:
        StagedChunk.objects.filter(id=chunk_id).delete()
    else:
        StagedChunk.objects.filter(id=chunk_id).update(applied_entries=part)
    parameters = {
        "id": _db_uuid(ingestion_id),
        "accepted": len(outcome.accepted),
        "rejected": len(outcome.rejected),
        "lease_end": _lease_end(),
        "now": timezone.now(),
        "completed": Ingestion.Status.COMPLETED.value,
    }
    with connection.cursor() as cursor:
        cursor.execute(_sql(PROGRESS), parameters)
        status, practice_id, queued_at = cursor.fetchone()
    completed = status == Ingestion.Status.COMPLETED
    tally = tally_of(outcome.accepted, outcome.rejected, completed=int(completed))
    pipeline_counts_add(practice_id=practice_id, tally=tally)
    if completed:
        _completed([(ingestion_id, queued_at)], parameters["now"])
    return completed


def _completed(ingestions: list[tuple[UUID, Any]], completed_at: datetime) -> None:
    """Once committed: a log line per ingestion, and its submit-to-completed time for
    ``/metrics``' histogram."""
    seconds = [(completed_at - _aware(queued_at)).total_seconds() for _, queued_at in ingestions]

    def said() -> None:
        ingestion_durations_observe(seconds)
        for (identifier, _), took in zip(ingestions, seconds, strict=True):
            log.info(
                "ingestion %s completed, %.1f s after it was queued",
                identifier,
                took,
                extra={"ingestion_id": str(identifier)},
            )

    transaction.on_commit(said)


def _complete(ingestion_id: UUID) -> None:
    staged = StagedChunk.objects.filter(ingestion_id=OuterRef("id"))
    unfinished = Ingestion.objects.filter(id=ingestion_id, status=Ingestion.Status.PROCESSING)
    now = timezone.now()
    with transaction.atomic():
        found = unfinished.select_for_update().values_list("practice_id", "queued_at").first()
        if found is None:
            return
        updated = unfinished.filter(~Exists(staged)).update(
            status=Ingestion.Status.COMPLETED, completed_at=now, lease_expires_at=None
        )
        if updated:
            pipeline_counts_add(practice_id=found[0], tally=Tally(ingestions_completed=1))
            _completed([(ingestion_id, found[1])], now)


def ingestion_fail(ingestion_id: UUID, diagnostics: str) -> None:
    """Give up on an ingestion as a whole: ``failed``, its staged payload purged."""
    with transaction.atomic():
        locked = (
            Ingestion.objects.select_for_update()
            .filter(id=ingestion_id)
            .exclude(status__in=[Ingestion.Status.COMPLETED, Ingestion.Status.FAILED])
        )
        practice_id = locked.values_list("practice_id", flat=True).first()
        if practice_id is None:
            return
        StagedChunk.objects.filter(ingestion_id=ingestion_id).delete()
        pipeline_counts_add(practice_id=practice_id, tally=Tally(ingestions_failed=1))
        locked.update(
            status=Ingestion.Status.FAILED,
            failed_at=timezone.now(),
            lease_expires_at=None,
            failure=error_outcome("exception", diagnostics, expression="Bundle"),
        )
    log.error("ingestion %s failed: %s", ingestion_id, diagnostics)


def ingestion_release(ingestion_id: UUID) -> None:
    """Let the lease run out now, so a retry or the recovery can claim it at once."""
    Ingestion.objects.filter(id=ingestion_id, status=Ingestion.Status.PROCESSING).update(
        lease_expires_at=timezone.now()
    )


def ingestions_to_recover(limit: int = 500, *, oldest_waiting: UUID | None = None) -> list[UUID]:
    """Queued ones whose message is lost, and processing ones whose lease has run out.

    A queued ingestion's message is lost when publishing failed (``enqueued_at`` cleared),
    or when it was published ``REGISTRY_REQUEUE_AFTER_SECONDS`` ago and, if the broker says
    which ingestion's message is the oldest still waiting (``oldest_waiting``,
    :mod:`ingestion.broker`), well before that one: the queue is consumed in order, so
    anything published before it has left the queue, and if still queued, was lost. Under a
    backlog, messages still waiting are not published again.
    """
    now = timezone.now()
    requeue_before = now - timedelta(seconds=settings.REGISTRY_REQUEUE_AFTER_SECONDS)
    margin = timedelta(seconds=settings.REGISTRY_RECOVERY_GRACE_SECONDS)
    grace = now - margin
    published = Q(enqueued_at__lt=requeue_before)
    waiting_since = _published_at(oldest_waiting)  # None: unknown, so by age alone
    if waiting_since is not None:
        published &= Q(enqueued_at__lt=waiting_since - margin)
    lost = Q(status=Ingestion.Status.QUEUED) & (
        Q(enqueued_at__isnull=True, queued_at__lt=grace) | published
    )
    abandoned = Q(status=Ingestion.Status.PROCESSING, lease_expires_at__lt=now)
    return list(
        Ingestion.objects.filter(lost | abandoned)
        .order_by("queued_at")
        .values_list("id", flat=True)[:limit]
    )


def _published_at(ingestion_id: UUID | None) -> Any:
    if ingestion_id is None:
        return None
    return Ingestion.objects.filter(id=ingestion_id).values_list("enqueued_at", flat=True).first()


# -- Waiting singles, applied together ----------------------------------------------------------
#
# A single-course ingestion costs a claim, a transaction and a dozen statements that do not
# depend on its size. When several singles of one practice wait, the claim of one takes the
# others too (up to REGISTRY_CLAIM_SINGLES, in queue order, skipping any another worker has
# locked) and applies them as one chunk: one transaction that writes every record, each
# ingestion's own receipt entries, deletes their staged chunks and completes them all. The
# records are those of applying them one after another (ingestion.apply.records_apply_parts).
# A crash rolls the whole chunk back: each ingestion is then claimed again alone once its
# lease runs out (a claim that applied nothing is not combined again), so a course that
# kills the worker is isolated as in a batch. While a message for a practice's singles is on
# its way, the web publishes none for the singles submitted meanwhile (ingestion.wakeups):
# the flag is cleared here before the waiting singles are claimed.

WAITING_SINGLES = """
    UPDATE {ingestion} AS i
       SET status = %(processing)s,
           started_at = COALESCE(i.started_at, %(now)s),
           lease_expires_at = %(lease_end)s,
           attempts = i.attempts + 1,
           fruitless_claims = i.fruitless_claims + 1
      FROM (SELECT id FROM {ingestion}
             WHERE practice_id = %(practice)s AND kind = %(single)s AND status = %(queued)s
          ORDER BY queued_at, id
             LIMIT %(most)s
               FOR UPDATE SKIP LOCKED) AS waiting
     WHERE i.id = waiting.id
 RETURNING i.id, i.attempts, i.fruitless_claims, i.queued_at
"""


def _combinable(claim: Claim) -> bool:
    """A single claimed for the first time, with others allowed to join it."""
    return claim.kind == Ingestion.Kind.SINGLE and claim.fruitless == 1 and _combining()


def _combining() -> bool:
    # SKIP LOCKED is PostgreSQL's; the embedded default (SQLite) processes each at submit.
    return connection.vendor == "postgresql"


def _waiting_singles_served(ingestion_id: UUID) -> NextSingles | None:
    if not _combining():
        return None
    practice_id = (
        Ingestion.objects.filter(id=ingestion_id, kind=Ingestion.Kind.SINGLE)
        .values_list("practice_id", flat=True)
        .first()
    )
    return None if practice_id is None else singles_process(practice_id, None)


def _claim_waiting(practice_id: int, most: int) -> list[Claim]:
    """Up to ``most`` of the practice's waiting singles, taken in one statement."""
    parameters = {
        "practice": practice_id,
        "most": most,
        "now": timezone.now(),
        "lease_end": _lease_end(),
        "single": Ingestion.Kind.SINGLE.value,
        "queued": Ingestion.Status.QUEUED.value,
        "processing": Ingestion.Status.PROCESSING.value,
    }

    def take() -> list[tuple[Any, ...]]:
        with connection.cursor() as cursor:
            cursor.execute(_sql(WAITING_SINGLES), parameters)
            return cursor.fetchall()

    return [
        Claim(
            identifier,
            practice_id,
            Ingestion.Kind.SINGLE,
            attempts,
            fruitless,
            0,
            queued_at,
            _day(queued_at),
        )
        for identifier, attempts, fruitless, queued_at in retry_transient(take, what="singles")
    ]


@dataclass(frozen=True, slots=True)
class _Single:
    claim: Claim
    chunk_id: int
    results: list[Result]


def singles_process(practice_id: int, claim: Claim | None) -> NextSingles | None:
    """Apply the claimed single (if any) and the practice's other waiting singles as one
    chunk, in queue order. Says which single to publish for next when the claim was full."""
    singles_message_taken(practice_id)  # before claiming: see ingestion.wakeups
    most = max(settings.REGISTRY_CLAIM_SINGLES - (claim is not None), 0)
    waiting = _claim_waiting(practice_id, most) if most else []
    claims = sorted(
        [*([claim] if claim else []), *waiting], key=lambda c: (c.queued_at, str(c.ingestion_id))
    )
    if claims:
        singles = _singles_mapped(claims, _fingerprint_key(practice_id))
        try:
            retry_transient(
                lambda: _apply_singles_once(practice_id, singles), what=f"{len(singles)} singles"
            )
        except Exception:
            _release(claims)
            raise
    return _next_waiting(practice_id) if len(waiting) == most else None


def _next_waiting(practice_id: int) -> NextSingles | None:
    following = (
        Ingestion.objects.filter(
            practice_id=practice_id, kind=Ingestion.Kind.SINGLE, status=Ingestion.Status.QUEUED
        )
        .order_by("queued_at", "id")
        .values_list("id", flat=True)
        .first()
    )
    return NextSingles(following, practice_id) if following is not None else None


# The statements a combined claim sends every time are written out (building them with the
# ORM cost more CPU than PostgreSQL spends running them).
STAGED_SINGLES = """
    SELECT id, ingestion_id, seq, first_index, ciphertext FROM {staged}
     WHERE ingestion_id = ANY(%(ids)s) AND seq = 0
"""
# The claimed singles still due, locked, then the practice lock, in one round trip.
LOCK_SINGLES = (
    """
    SELECT i.id FROM {ingestion} AS i
     WHERE i.id = ANY(%(ids)s) AND i.status = %(processing)s
       AND EXISTS (SELECT 1 FROM {staged} AS s WHERE s.ingestion_id = i.id)
       FOR UPDATE OF i;
"""  # noqa: S608 (the tables' names and a constant)
    + LOCK_PRACTICE
)


def _rows(statement: str, parameters: dict[str, Any]) -> list[tuple[Any, ...]]:
    with connection.cursor() as cursor:
        cursor.execute(_sql(statement), parameters)
        return cursor.fetchall()


def _singles_mapped(claims: list[Claim], fingerprint_key: bytes) -> list[_Single]:
    ids = [c.ingestion_id for c in claims]
    names = ("id", "ingestion_id", "seq", "first_index", "ciphertext")
    staged = {
        row[1]: dict(zip(names, row, strict=True))
        for row in retry_transient(
            lambda: _rows(STAGED_SINGLES, {"ids": ids}), what="reading staged singles"
        )
    }
    singles = []
    for claim in claims:
        row = staged.get(claim.ingestion_id)
        if row is None:
            _complete(claim.ingestion_id)  # nothing left to apply
            continue
        try:
            results = _decrypt_and_map(claim, row, fingerprint_key)
        except UnreadablePayload:
            ingestion_fail(claim.ingestion_id, UNREADABLE)
            continue
        singles.append(_Single(claim, row["id"], results))
    return singles


def _apply_singles_once(practice_id: int, singles: list[_Single]) -> None:
    """One transaction: the records, each ingestion's receipt entries, and its completion."""
    with transaction.atomic():
        parameters = {
            "ids": [s.claim.ingestion_id for s in singles],
            "processing": Ingestion.Status.PROCESSING.value,
            "practice": practice_id,
        }
        due = {row[0] for row in _rows(LOCK_SINGLES, parameters)}  # the practice lock too
        applied = [s for s in singles if s.claim.ingestion_id in due]
        if not applied:
            return
        outcomes = records_apply_parts(
            practice=Practice(id=practice_id),
            parts=[Part(s.claim.ingestion_id, s.results) for s in applied],
        )
        _complete_singles(practice_id, applied, outcomes)


# After the records and the receipt entries: the staged chunks go and the singles complete.
COMPLETE_SINGLES = """
    DELETE FROM {staged} WHERE id = ANY(%s);
    UPDATE {ingestion} AS i
       SET accepted_count = i.accepted_count + v.accepted,
           rejected_count = i.rejected_count + v.rejected,
           fruitless_claims = 0,
           lease_expires_at = NULL,
           status = %s,
           completed_at = %s
      FROM (VALUES {{rows}}) AS v(id, accepted, rejected)
     WHERE i.id = v.id
"""


def _complete_singles(
    practice_id: int, singles: list[_Single], outcomes: list[ChunkOutcome]
) -> None:
    insert_rows(
        OutcomeChunk,
        ["ingestion_id", "seq", "part", "accepted", "rejected"],
        (
            (s.claim.ingestion_id, 0, 0, outcome.accepted, outcome.rejected)
            for s, outcome in zip(singles, outcomes, strict=True)
        ),
    )
    statement = _sql(COMPLETE_SINGLES).replace(
        "{rows}", ", ".join(["(%s::uuid, %s::int, %s::int)"] * len(singles))
    )
    now = timezone.now()
    parameters: list[Any] = [[s.chunk_id for s in singles], Ingestion.Status.COMPLETED.value, now]
    for s, outcome in zip(singles, outcomes, strict=True):
        parameters += [s.claim.ingestion_id, len(outcome.accepted), len(outcome.rejected)]
    tally = tally_sum(tally_of(o.accepted, o.rejected, completed=1) for o in outcomes)
    counting = pipeline_counts_statement(practice_id=practice_id, tally=tally)
    if counting is not None:  # the counters too: one round trip for the three statements
        statement += ";\n" + counting[0]
        parameters += counting[1]
    with connection.cursor() as cursor:
        cursor.execute(statement, parameters)
    _completed([(s.claim.ingestion_id, s.claim.queued_at) for s in singles], now)


def _release(claims: list[Claim]) -> None:
    """The chunk failed: let the leases run out now, so that each ingestion is claimed again
    alone, by its own message or, if it has none, by the recovery."""
    Ingestion.objects.filter(
        id__in=[c.ingestion_id for c in claims], status=Ingestion.Status.PROCESSING
    ).update(lease_expires_at=timezone.now())


# -- Isolating a chunk that keeps killing the worker -----------------------------------------
#
# A chunk whose claims keep ending without progress (the worker killed, or an error that is
# not a record's fault) is applied one entry at a time, each entry in its own transaction
# that also records its receipt part. Before an entry is tried, the try is committed, so
# after a crash the next claim knows which entry was in flight: an entry that has been in
# flight REGISTRY_ENTRY_CRASH_LIMIT times is rejected with an ``exception`` outcome and the
# others land. An entry that raises is rejected at once.


def _needs_isolation(claim: Claim, staged: Mapping[str, Any]) -> bool:
    """The previous claim applied nothing (or this chunk is already being isolated)."""
    started = staged["applied_entries"] > 0 or staged["trying_entry"] is not None
    return started or claim.fruitless >= settings.REGISTRY_ISOLATE_AFTER_CLAIMS


def _isolate_chunk(claim: Claim, staged: Mapping[str, Any], key: bytes) -> Step:
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
    if claim.kind == Ingestion.Kind.SINGLE:
        return [plaintext]
    return [bytes(raw) for raw in _entries_decoder.decode(plaintext)]


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
    try:
        if claim.kind == Ingestion.Kind.SINGLE:
            return map_chunk(claim.kind, entry, 0, key, claim.received_on)
        return map_chunk(claim.kind, b"[" + entry + b"]", index, key, claim.received_on)
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
        completed = _record_progress(
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
