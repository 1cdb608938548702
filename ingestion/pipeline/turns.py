"""A batch's turn: after a chunk, the worker is handed back if other work waits.

A worker process that takes a batch would otherwise keep it to its last chunk, and whatever
waits in the queue behind it (another practice's singles, another practice's batch) waits
that long: a 10,000-course part holds a process for a quarter of a minute, and a worker's
two processes taking the two parts of one backfill held every other practice's receipts
that long (issue 34). So a batch is applied in turns. Between two chunks, once its turn has
lasted ``REGISTRY_TURN_SECONDS`` (0 by default: one chunk), the chunk loop asks the broker
whether a message waits (:func:`ingestion.messaging.queue_tail.messages_waiting`); if one
does, the batch is handed back (:func:`hand_back`): its lease ends now and its message is
published again, at the back of the queue, behind what waited. Nothing waiting, it goes on,
its next chunk mapped while this one is applied, as before: a batch alone loses nothing.

The queue is consumed in order, so each practice with work waiting gets its turn: a single
waits at most for the chunks in flight in the worker's processes (docs/architecture.md, "Fair
shares"), and two practices' batches sent together take alternate turns.

Exactly once still holds, the lease and the chunks being what they were: the hand-back only
ends the lease early, committed after the turn's last chunk. The ingestion stays
``processing``; its ``enqueued_at`` is set with the lease's end, which tells the recovery
that its message is on its way (:func:`ingestion.pipeline.recovery.ingestions_to_recover`).
A worker that dies between the two is picked up by the recovery, as one that dies with its
lease held; a publish that fails clears ``enqueued_at``, so the recovery publishes again.
"""

from __future__ import annotations

import logging
import time
from uuid import UUID

from django.conf import settings
from django.utils import timezone

from ingestion.messaging.publishing import publish
from ingestion.messaging.queue_tail import messages_waiting
from ingestion.models import Ingestion
from lib.breaker import broker_breaker

log = logging.getLogger(__name__)


class Turn:
    """One claim's turn at a batch: over once it has lasted its time and others wait."""

    def __init__(self) -> None:
        self._started = time.monotonic()

    def over(self) -> bool:
        if time.monotonic() - self._started < settings.REGISTRY_TURN_SECONDS:
            return False
        return messages_waiting()


def hand_back(ingestion_id: UUID) -> None:
    """End the lease now and publish the ingestion's message again, at the back of the queue."""
    now = timezone.now()
    handed = Ingestion.objects.filter(id=ingestion_id, status=Ingestion.Status.PROCESSING).update(
        lease_expires_at=now, enqueued_at=now
    )
    if not handed:
        return  # failed meanwhile
    try:
        if broker_breaker.is_open:
            raise ConnectionError("the broker failed a moment ago")
        publish(ingestion_id)
    except Exception as error:
        # The recovery publishes it again: a processing ingestion whose lease ran out and
        # whose message is not on its way (enqueued_at cleared) is taken at its next run.
        log.warning("ingestion %s: handing back failed (%s)", ingestion_id, type(error).__name__)
        Ingestion.objects.filter(id=ingestion_id, status=Ingestion.Status.PROCESSING).update(
            enqueued_at=None
        )
        if not broker_breaker.is_open:
            broker_breaker.trip(error)
