"""Waiting singles, applied together (an optimisation a reader may skip).

A single-course ingestion costs a claim, a transaction and a dozen statements that do not
depend on its size. When several singles wait, the claim of one takes the others too,
whichever practices sent them (up to REGISTRY_CLAIM_SINGLES, in queue order, skipping any
another worker has locked): spread over many practices, a practice rarely has a second
single waiting, but the queue has. They are claimed and read in one statement each, and
each practice's are applied as one chunk, in queue order, under that practice's lock: one
transaction per practice that writes every record, each ingestion's own receipt entries,
deletes their staged chunks and completes them all. The records are those of applying the
practice's singles one after another (:func:`ingestion.lifecycle.applying.records_apply_parts`).
A crash rolls the practice's chunk back: each of its ingestions is then claimed again alone
once its lease runs out (a claim that applied nothing is not combined again), so a course
that kills the worker is isolated as in a batch. While a message for the waiting singles is
on its way, the web publishes none for the singles submitted meanwhile
(:mod:`ingestion.messaging.singles_flag`): the flag is cleared here before the waiting
singles are claimed.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import timedelta
from typing import Any
from uuid import UUID

from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone

from ingestion.faults import retry_transient
from ingestion.fhir import Result
from ingestion.intake.staging import UnreadablePayload
from ingestion.lifecycle.applying import records_apply_parts
from ingestion.lifecycle.entries import ChunkOutcome, Part
from ingestion.messaging.singles_flag import singles_message_taken
from ingestion.models import Ingestion, OutcomeChunk
from ingestion.monitoring.counters import pipeline_counts_statement, tally_of, tally_sum
from ingestion.pipeline.chunks import decrypt_and_map
from ingestion.pipeline.claims import Claim, aware, day, fingerprint_key, lease_end, sql
from ingestion.pipeline.completion import (
    UNREADABLE,
    announce_completed,
    ingestion_complete,
    ingestion_fail,
)
from ingestion.receipts.cache import forget_on_commit
from registry.bulk import insert_rows
from registry.locks import rows_then_lock_practice
from registry.models import Practice
from registry.statistics.submissions import Finished, submissions_statement

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class NextSingles:
    """Singles still wait after a full combined claim: publish a message for the first of
    them (at the back of the queue, so that what waits behind gets its turn)."""

    ingestion_id: UUID


# The practices in the order of their oldest waiting single, and each one's singles in
# queue order: a practice's chunk costs much the same for one single as for thirty, so a
# claim takes a practice's singles together rather than the oldest of many practices alone.
WAITING_SINGLES = """
    WITH practices AS (
        SELECT practice_id, min(queued_at) AS oldest FROM {ingestion}
         WHERE kind = %(single)s AND status = %(queued)s
           AND (%(before)s::timestamptz IS NULL OR queued_at <= %(before)s)
      GROUP BY practice_id
      ORDER BY oldest
         LIMIT %(most)s
    )
    UPDATE {ingestion} AS i
       SET status = %(processing)s,
           started_at = COALESCE(i.started_at, %(now)s),
           lease_expires_at = %(lease_end)s,
           attempts = i.attempts + 1,
           fruitless_claims = i.fruitless_claims + 1
      FROM (SELECT w.id FROM {ingestion} AS w JOIN practices AS p USING (practice_id)
             WHERE w.kind = %(single)s AND w.status = %(queued)s
               AND (%(before)s::timestamptz IS NULL OR w.queued_at <= %(before)s)
          ORDER BY p.oldest, w.queued_at, w.id
             LIMIT %(most)s
               FOR UPDATE OF w SKIP LOCKED) AS waiting
     WHERE i.id = waiting.id
 RETURNING i.id, i.practice_id, i.attempts, i.fruitless_claims, i.queued_at
"""


def combinable(claim: Claim) -> bool:
    """A single claimed for the first time, with others allowed to join it."""
    return claim.kind == Ingestion.Kind.SINGLE and claim.fruitless == 1 and combining()


def combining() -> bool:
    # SKIP LOCKED is PostgreSQL's; the embedded default (SQLite) processes each at submit.
    return connection.vendor == "postgresql"


def waiting_singles_served(ingestion_id: UUID) -> NextSingles | None:
    """A single's message found it taken: serve the singles that may have counted on this
    message (:mod:`ingestion.messaging.singles_flag`)."""
    if not combining():
        return None
    if not Ingestion.objects.filter(id=ingestion_id, kind=Ingestion.Kind.SINGLE).exists():
        return None
    return singles_process(None)


def _claim_waiting(most: int, *, queued_before: Any = None) -> list[Claim]:
    """Up to ``most`` waiting singles, any practice's, the practice with the oldest first:
    one statement. With ``queued_before``, only those queued by then."""
    parameters = {
        "most": most,
        "before": queued_before,
        "now": timezone.now(),
        "lease_end": lease_end(),
        "single": Ingestion.Kind.SINGLE.value,
        "queued": Ingestion.Status.QUEUED.value,
        "processing": Ingestion.Status.PROCESSING.value,
    }

    def take() -> list[tuple[Any, ...]]:
        with connection.cursor() as cursor:
            cursor.execute(sql(WAITING_SINGLES), parameters)
            return cursor.fetchall()

    claims = [
        Claim(
            identifier,
            practice_id,
            Ingestion.Kind.SINGLE,
            attempts,
            fruitless,
            0,
            queued_at,
            day(queued_at),
        )
        for identifier, practice_id, attempts, fruitless, queued_at in retry_transient(
            take, what="singles"
        )
    ]
    forget_on_commit(c.ingestion_id for c in claims)  # a poll reads processing from now on
    return claims


@dataclass(frozen=True, slots=True)
class _Single:
    claim: Claim
    chunk_id: int
    results: list[Result]


def singles_process(claim: Claim | None) -> NextSingles | None:
    """Apply the claimed single (if any) and the other waiting singles: each practice's as
    one chunk in its queue order, the practices in the order of their oldest. Says which
    single to publish for next when the claim was full."""
    singles_message_taken()  # before claiming: see ingestion.messaging.singles_flag
    most = max(settings.REGISTRY_CLAIM_SINGLES - (claim is not None), 0)
    waiting = _claim_waiting(most) if most else []
    claims = sorted(
        [*([claim] if claim else []), *waiting], key=lambda c: (c.queued_at, str(c.ingestion_id))
    )
    if claims:
        _claims_applied(claims)
    return _next_waiting() if len(waiting) == most else None


def singles_between_turns() -> None:
    """Between two chunks of a batch (:mod:`ingestion.pipeline.turns`): the waiting singles
    that have waited out the gathering window, claimed and applied here, so that a single
    waits for one chunk of a batch, not for the batch. Their messages, on their way, find
    them done. Nothing of a failure here is the batch's: it is logged, and the singles'
    leases are released for their own messages or the recovery."""
    if not combining():
        return
    gathered = timezone.now() - timedelta(seconds=settings.REGISTRY_SINGLES_GATHER_SECONDS)
    try:
        claims = _claim_waiting(settings.REGISTRY_CLAIM_SINGLES, queued_before=gathered)
        if claims:
            _claims_applied(sorted(claims, key=lambda c: (c.queued_at, str(c.ingestion_id))))
    except Exception as error:
        log.warning("singles between turns: not applied (%s)", type(error).__name__)


def _claims_applied(claims: list[Claim]) -> None:
    """Each practice's claimed singles as one chunk, the practices in order of their oldest."""
    by_practice: dict[int, list[_Single]] = {}
    for single in _singles_mapped(claims):
        by_practice.setdefault(single.claim.practice_id, []).append(single)
    try:
        for practice, singles in by_practice.items():
            _apply_singles(practice, singles)
    except Exception:
        _release(claims)  # those not completed yet
        raise


def _next_waiting() -> NextSingles | None:
    """The first of the singles still waiting: the flag was cleared for this claim, so they
    count on no message."""
    following = (
        Ingestion.objects.filter(kind=Ingestion.Kind.SINGLE, status=Ingestion.Status.QUEUED)
        .order_by("queued_at", "id")
        .values_list("id", flat=True)
        .first()
    )
    return NextSingles(following) if following is not None else None


# The statements a combined claim sends every time are written out (building them with the
# ORM cost more CPU than PostgreSQL spends running them).
STAGED_SINGLES = """
    SELECT id, ingestion_id, seq, first_index, ciphertext FROM {staged}
     WHERE ingestion_id = ANY(%(ids)s) AND seq = 0
"""
# The claimed singles still due, locked; the practice lock follows in the same round trip.
LOCK_SINGLES = """
    SELECT i.id FROM {ingestion} AS i
     WHERE i.id = ANY(%(ids)s) AND i.status = %(processing)s
       AND EXISTS (SELECT 1 FROM {staged} AS s WHERE s.ingestion_id = i.id)
       FOR UPDATE OF i
"""


def _rows(statement: str, parameters: dict[str, Any]) -> list[tuple[Any, ...]]:
    with connection.cursor() as cursor:
        cursor.execute(sql(statement), parameters)
        return cursor.fetchall()


def _singles_mapped(claims: list[Claim]) -> list[_Single]:
    ids = [c.ingestion_id for c in claims]
    names = ("id", "ingestion_id", "seq", "first_index", "ciphertext")
    staged = {
        row[1]: dict(zip(names, row, strict=True))
        for row in retry_transient(
            lambda: _rows(STAGED_SINGLES, {"ids": ids}), what="reading staged singles"
        )
    }
    keys: dict[int, bytes] = {}  # fingerprints are keyed per practice
    singles = []
    for claim in claims:
        row = staged.get(claim.ingestion_id)
        if row is None:
            ingestion_complete(claim.ingestion_id)  # nothing left to apply
            continue
        if claim.practice_id not in keys:
            keys[claim.practice_id] = fingerprint_key(claim.practice_id)
        try:
            results = decrypt_and_map(claim, row, keys[claim.practice_id])
        except UnreadablePayload:
            ingestion_fail(claim.ingestion_id, UNREADABLE)
            continue
        singles.append(_Single(claim, row["id"], results))
    return singles


def _apply_singles(practice_id: int, singles: list[_Single]) -> None:
    retry_transient(
        lambda: _apply_singles_once(practice_id, singles), what=f"{len(singles)} singles"
    )


def _apply_singles_once(practice_id: int, singles: list[_Single]) -> None:
    """One transaction: the records, each ingestion's receipt entries, and its completion."""
    with transaction.atomic():
        parameters = {
            "ids": [s.claim.ingestion_id for s in singles],
            "processing": Ingestion.Status.PROCESSING.value,
        }
        locked = rows_then_lock_practice(sql(LOCK_SINGLES), parameters, practice_id=practice_id)
        due = {row[0] for row in locked}
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
    statement = sql(COMPLETE_SINGLES).replace(
        "{rows}", ", ".join(["(%s::uuid, %s::int, %s::int)"] * len(singles))
    )
    now = timezone.now()
    parameters: list[Any] = [[s.chunk_id for s in singles], Ingestion.Status.COMPLETED.value, now]
    for s, outcome in zip(singles, outcomes, strict=True):
        parameters += [s.claim.ingestion_id, len(outcome.accepted), len(outcome.rejected)]
    tally = tally_sum(tally_of(o.accepted, o.rejected, completed=1) for o in outcomes)
    # A single is one course, applied whole here (its only chunk was still staged): its
    # counts are this outcome's. What the practice sent that day counts them.
    sent = [
        Finished(aware(s.claim.queued_at), 1, len(outcome.accepted), len(outcome.rejected))
        for s, outcome in zip(singles, outcomes, strict=True)
    ]
    # The counters too: one round trip for the four statements.
    for counting in (
        pipeline_counts_statement(practice_id=practice_id, tally=tally),
        submissions_statement(practice_id=practice_id, finished=sent),
    ):
        if counting is not None:
            statement += ";\n" + counting[0]
            parameters += counting[1]
    with connection.cursor() as cursor:
        cursor.execute(statement, parameters)
    announce_completed(
        [(s.claim.ingestion_id, s.claim.queued_at, Ingestion.Kind.SINGLE.value) for s in singles],
        now,
    )


def _release(claims: list[Claim]) -> None:
    """The chunk failed: let the leases run out now, so that each ingestion is claimed again
    alone, by its own message or, if it has none, by the recovery."""
    Ingestion.objects.filter(
        id__in=[c.ingestion_id for c in claims], status=Ingestion.Status.PROCESSING
    ).update(lease_expires_at=timezone.now())
