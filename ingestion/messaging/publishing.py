"""Publishing an ingestion's message: by the task's name, so the web never loads the worker.

The web publishes ``process_ingestion`` by name (:data:`PROCESS_TASK`): it imports neither
:mod:`ingestion.tasks` nor the pipeline behind it, which only the worker loads (Celery's
autodiscovery). A publish that fails (broker down) trips the broker breaker, and while the
breaker is open publishing is not even tried; either way the recovery republishes what
waits, so nothing is lost.
"""

from __future__ import annotations

from functools import cache
from uuid import UUID

from celery import current_app
from django.conf import settings
from django.utils import timezone

from ingestion.messaging.gathering import holds, publish_later
from ingestion.messaging.singles_flag import (
    singles_message_due,
    singles_message_sent,
    singles_message_taken,
)
from ingestion.models import Ingestion
from lib.breaker import broker_breaker

PROCESS_TASK = "ingestion.tasks.process_ingestion"


class BrokerSkipped(Exception):
    """Publishing was not tried: the broker failed a moment ago."""


def publish(ingestion_id: UUID) -> None:
    """Send the ingestion's ``process_ingestion`` message."""
    app = current_app
    if app.conf.task_always_eager:
        # The embedded default has no worker: the task runs here, within the request, so
        # this process loads the tasks as a worker does (Celery's autodiscovery).
        _tasks_loaded()
        app.tasks[PROCESS_TASK].delay(str(ingestion_id))
        return
    app.send_task(PROCESS_TASK, args=[str(ingestion_id)])


@cache
def _tasks_loaded() -> None:
    current_app.loader.import_default_modules()


def enqueue(ingestion_id: UUID) -> None:
    """Publish the task and note when (the recovery re-enqueues what waits too long)."""
    publish(ingestion_id)
    Ingestion.objects.filter(id=ingestion_id, status=Ingestion.Status.QUEUED).update(
        enqueued_at=timezone.now()
    )


def enqueue_submitted(ingestion_id: UUID, *, single: bool = False) -> None:
    """Publish a just-committed submission, whose ``enqueued_at`` was set when it was created.

    Setting it with the insert spares every submission a second write. If publishing fails
    (broker down), it is cleared, so the recovery picks the ingestion up after its grace
    period; nothing is lost either way. While the broker breaker is open (it failed a
    moment ago), publishing is not even tried. A single is not published while a message for
    the waiting singles is on its way: that message's claim takes it along
    (ingestion.messaging.singles_flag); the message a single does publish is published
    ``REGISTRY_SINGLES_GATHER_SECONDS`` later, so that more come along
    (ingestion.messaging.gathering); while this process holds it, the next singles need not
    ask Redis.
    """
    if not single:
        _publish_submitted(ingestion_id, single=False)
    elif holds() or not singles_message_due():
        return
    elif settings.REGISTRY_SINGLES_GATHER_SECONDS > 0 and not settings.CELERY_TASK_ALWAYS_EAGER:
        gather = settings.REGISTRY_SINGLES_GATHER_SECONDS
        publish_later(gather, _publish_submitted, ingestion_id, True)
    else:
        _publish_submitted(ingestion_id, single=True)


def _publish_submitted(ingestion_id: UUID, single: bool) -> None:
    try:
        if broker_breaker.is_open:
            raise BrokerSkipped
        publish(ingestion_id)
    except Exception as error:
        Ingestion.objects.filter(id=ingestion_id, status=Ingestion.Status.QUEUED).update(
            enqueued_at=None
        )
        if single:
            singles_message_taken()  # no message is on its way after all
        if isinstance(error, BrokerSkipped):
            return
        broker_breaker.trip(error)
        raise


def republish_waiting(ingestion: Ingestion) -> None:
    """A client retried with the ingestion's Idempotency-Key: if it is still queued (its
    message may have been lost with a web process), publish it again. Safe to run twice;
    a broker that is down only leaves it to the recovery."""
    if ingestion.status != Ingestion.Status.QUEUED or broker_breaker.is_open:
        return
    try:
        enqueue(ingestion.id)
    except Exception as error:
        broker_breaker.trip(error)


def singles_message_for(ingestion_id: UUID) -> None:
    """A message for the waiting singles, for the first of them (a worker's full combined
    claim left them waiting, or the recovery found them without one), at the back of the
    queue. The flag is set first: set after, it could outlive a message another process
    had already taken, and hold back every single's message until it expired."""
    singles_message_sent()
    try:
        enqueue(ingestion_id)
    except Exception:
        singles_message_taken()  # no message is on its way after all
        raise
