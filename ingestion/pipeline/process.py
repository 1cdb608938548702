"""One attempt at an ingestion, as the task makes it: claim, apply, and what follows.

:func:`ingestion_attempt` is the whole of what ``process_ingestion`` does: it processes what
is left, fails an ingestion whose payload cannot be read or whose attempts ran out, and
says after how long to retry one that failed for a passing reason.
"""

from __future__ import annotations

import logging
from uuid import UUID

from django.conf import settings
from django.db import DatabaseError

from ingestion.faults import is_transient, retry_transient
from ingestion.intake.staging import UnreadablePayload
from ingestion.messaging.publishing import singles_message_for
from ingestion.models import Ingestion
from ingestion.pipeline.chunks import process_chunks
from ingestion.pipeline.claims import claim, fingerprint_key
from ingestion.pipeline.completion import (
    UNREADABLE,
    Step,
    ingestion_complete,
    ingestion_fail,
)
from ingestion.pipeline.recovery import ingestion_release
from ingestion.pipeline.singles import (
    NextSingles,
    combinable,
    combining,
    singles_between_turns,
    singles_process,
    waiting_singles_served,
)
from ingestion.pipeline.turns import Turn, hand_back

log = logging.getLogger(__name__)


def ingestion_attempt(ingestion_id: UUID) -> int | None:
    """Process the ingestion once; the seconds to wait before a retry, None for no retry."""
    try:
        following = ingestion_process(ingestion_id, turns=True)
    except UnreadablePayload:
        ingestion_fail(ingestion_id, UNREADABLE)
        return None
    except Exception as error:
        # Log the kind only: an exception message could quote data.
        log.warning("ingestion %s: attempt failed (%s)", ingestion_id, type(error).__name__)
        return _retry_or_fail(ingestion_id)
    if following is not None:  # more singles wait than one claim takes
        singles_message_for(following.ingestion_id)
    return None


def ingestion_process(ingestion_id: UUID, *, turns: bool = False) -> NextSingles | None:
    """Process what is left of an ingestion. Safe to run twice, or concurrently.

    With ``turns`` (the task's attempt), a batch is applied in turns and handed back while
    others wait (:mod:`ingestion.pipeline.turns`); without, to its end (a test's call)."""
    claimed = claim(ingestion_id)
    if claimed is None:
        # Taken along by another single's claim, or finished: singles submitted since may
        # have counted on this message (ingestion.messaging.singles_flag).
        return waiting_singles_served(ingestion_id)
    if claimed.fruitless > settings.REGISTRY_MAX_ATTEMPTS:
        ingestion_fail(
            ingestion_id,
            f"The ingestion could not be processed after {settings.REGISTRY_MAX_ATTEMPTS} "
            f"attempts.",
        )
        return None
    if combinable(claimed):
        return singles_process(claimed)
    turn = None
    if turns and not settings.CELERY_TASK_ALWAYS_EAGER:  # embedded: no worker to hand back to
        turn = Turn(claimed.practice_id, singles_between_turns if combining() else None)
    step = process_chunks(claimed, fingerprint_key(claimed.practice_id), turn)
    if step == Step.NEXT:
        ingestion_complete(ingestion_id)  # nothing was left to apply (a worker died after the last)
    elif step == Step.TURN_OVER:
        hand_back(ingestion_id)  # others wait: behind them in the queue (ingestion.pipeline.turns)
    return None


def _retry_or_fail(ingestion_id: UUID) -> int | None:
    """Fail it after too many fruitless claims; else release the lease and say when to retry."""
    try:
        attempts = _fruitless_claims(ingestion_id)
        if attempts >= settings.REGISTRY_MAX_ATTEMPTS:
            ingestion_fail(
                ingestion_id,
                f"The ingestion could not be processed after {attempts} attempts.",
            )
            return None
        retry_transient(lambda: ingestion_release(ingestion_id), what="releasing the lease")
    except DatabaseError as error:
        if not is_transient(error):
            raise
        # The database keeps failing even for this: retry later all the same (the lease runs
        # out by itself), rather than end the task and wait for the recovery.
        attempts = settings.REGISTRY_MAX_ATTEMPTS
    return min(2**attempts, 60)


def _fruitless_claims(ingestion_id: UUID) -> int:
    """Only claims that applied nothing count: a crash after progress is not a failed attempt."""
    claims = Ingestion.objects.filter(id=ingestion_id).values_list("fruitless_claims", flat=True)
    return retry_transient(lambda: claims.first() or 0, what="reading the attempts")
