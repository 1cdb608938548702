"""A batch's turn: between chunks, waiting singles are served; another batch gets its turn.

A worker process that takes a batch would otherwise keep it to its last chunk, and whatever
waits in the queue behind it (another practice's singles, another practice's batch) waits
that long: a 10,000-course part holds a process for half a minute, and a worker's two
processes taking the two parts of one backfill held every other practice's receipts that
long (issue 34). So, between two of a batch's chunks (:func:`Turn.between`):

* **Singles are served in place.** The waiting singles that have waited out the gathering
  window are claimed and applied by this process, whichever practices sent them
  (:func:`ingestion.pipeline.singles.singles_between_turns`): a single waits for the chunk
  in flight, not for the batch, and the batch keeps its process and its chunk mapped ahead.
  (Handing the batch back to the queue for them was tried first: behind the singles'
  messages, most of them finding their singles already done, a backfill under 20 singles a
  second took seven times as long as alone.)
* **Another practice's batch gets its turn.** If one waits (queued, or handed back and not
  taken again yet), the turn is over: the batch is handed back (:func:`hand_back`): its
  lease ends now and its message is published again, at the back of the queue. Two
  practices' batches sent together therefore take alternate chunks.
* **Anything else waiting** in the broker's queue (the beat's tasks, a password reset mail)
  ends the turn once it has lasted ``REGISTRY_TURN_SECONDS``
  (:func:`ingestion.messaging.queue_tail.messages_waiting`).

Nothing waiting, the batch goes on as before: a batch alone loses nothing.

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
from collections.abc import Callable
from typing import Any
from uuid import UUID

from django.conf import settings
from django.db import connection
from django.utils import timezone

from ingestion.messaging.publishing import publish
from ingestion.messaging.queue_tail import messages_waiting
from ingestion.models import Ingestion
from ingestion.pipeline.claims import sql
from lib.breaker import broker_breaker

log = logging.getLogger(__name__)


class Turn:
    """One claim's turn at a batch: what to do between its chunks, and whether it is over."""

    def __init__(self, practice_id: int, between: Callable[[], None] | None = None) -> None:
        self._practice_id = practice_id
        self._between = between
        self._started = time.monotonic()

    def between(self) -> None:
        """After a chunk is committed: serve what waits without ending the turn."""
        if self._between is not None:
            self._between()

    def over(self) -> bool:
        if _another_batch_waits(self._practice_id):
            return True
        if time.monotonic() - self._started < settings.REGISTRY_TURN_SECONDS:
            return False
        return messages_waiting()


# Another practice's batch waiting for a process: queued (its message is in the queue, or on
# its way), or handed back (processing, its lease ended) and not taken again yet. The
# practice's own next batch waits its turn in its own queue order.
ANOTHER_BATCH = """
    SELECT EXISTS (
        SELECT 1 FROM {ingestion}
         WHERE kind = %(batch)s AND practice_id <> %(practice)s
           AND (status = %(queued)s OR (status = %(processing)s AND lease_expires_at < %(now)s))
    )
"""


def _another_batch_waits(practice_id: int) -> bool:
    parameters: dict[str, Any] = {
        "practice": practice_id,
        "now": timezone.now(),
        "batch": Ingestion.Kind.BATCH.value,
        "queued": Ingestion.Status.QUEUED.value,
        "processing": Ingestion.Status.PROCESSING.value,
    }
    with connection.cursor() as cursor:
        cursor.execute(sql(ANOTHER_BATCH), parameters)
        row = cursor.fetchone()
    return bool(row and row[0])


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
