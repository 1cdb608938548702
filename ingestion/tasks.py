"""Celery tasks: thin, given only an ingestion id, and safe to run twice."""

from __future__ import annotations

import logging
from uuid import UUID

from celery import Task, shared_task
from django.conf import settings
from django.db import DatabaseError
from django.utils import timezone

from ingestion.broker import oldest_waiting_ingestion
from ingestion.faults import is_transient, retry_transient
from ingestion.gathering import holds, publish_later
from ingestion.models import Ingestion
from ingestion.pipeline import (
    UNREADABLE,
    ingestion_fail,
    ingestion_process,
    ingestion_release,
    ingestions_to_recover,
)
from ingestion.staging import UnreadablePayload
from ingestion.wakeups import singles_message_due, singles_message_sent, singles_message_taken
from lib.breaker import broker_breaker
from lib.logfilters import about_ingestion

log = logging.getLogger(__name__)


class BrokerSkipped(Exception):
    """Publishing was not tried: the broker failed a moment ago."""


@shared_task(bind=True, acks_late=True, reject_on_worker_lost=True, max_retries=None)
def process_ingestion(self: Task, ingestion_id: str) -> None:
    with about_ingestion(ingestion_id):
        _process(self, UUID(ingestion_id))


def _process(self: Task, identifier: UUID) -> None:
    try:
        following = ingestion_process(identifier)
    except UnreadablePayload:
        ingestion_fail(identifier, UNREADABLE)
    except Exception as error:
        # Log the kind only: an exception message could quote data.
        log.warning("ingestion %s: attempt failed (%s)", identifier, type(error).__name__)
        _retry_or_fail(self, identifier)
        return
    if following is not None:  # its practice has more singles waiting than one claim takes
        enqueue(following.ingestion_id)
        singles_message_sent(following.practice_id)


def _retry_or_fail(task: Task, ingestion_id: UUID) -> None:
    try:
        attempts = _fruitless_claims(ingestion_id)
        if attempts >= settings.REGISTRY_MAX_ATTEMPTS:
            ingestion_fail(
                ingestion_id,
                f"The ingestion could not be processed after {attempts} attempts.",
            )
            return
        retry_transient(lambda: ingestion_release(ingestion_id), what="releasing the lease")
    except DatabaseError as error:
        if not is_transient(error):
            raise
        # The database keeps failing even for this: retry later all the same (the lease runs
        # out by itself), rather than end the task and wait for the recovery.
        attempts = settings.REGISTRY_MAX_ATTEMPTS
    raise task.retry(countdown=min(2**attempts, 60))


def _fruitless_claims(ingestion_id: UUID) -> int:
    """Only claims that applied nothing count: a crash after progress is not a failed attempt."""
    claims = Ingestion.objects.filter(id=ingestion_id).values_list("fruitless_claims", flat=True)
    return retry_transient(lambda: claims.first() or 0, what="reading the attempts")


def enqueue(ingestion_id: UUID) -> None:
    """Publish the task and note when (the recovery re-enqueues what waits too long)."""
    process_ingestion.delay(str(ingestion_id))
    Ingestion.objects.filter(id=ingestion_id, status=Ingestion.Status.QUEUED).update(
        enqueued_at=timezone.now()
    )


def enqueue_submitted(ingestion_id: UUID, *, single_of: int | None = None) -> None:
    """Publish a just-committed submission, whose ``enqueued_at`` was set when it was created.

    Setting it with the insert spares every submission a second write. If publishing fails
    (broker down), it is cleared, so the recovery picks the ingestion up after its grace
    period; nothing is lost either way. While the broker breaker is open (it failed a
    moment ago), publishing is not even tried. A single (``single_of``: its practice) is not
    published while a message for its practice's singles is on its way: that message's
    claim takes it along (ingestion.wakeups); the message a single does publish is published
    ``REGISTRY_SINGLES_GATHER_SECONDS`` later, so that more come along (ingestion.gathering);
    while this process holds it, the practice's next singles need not ask Redis.
    """
    if single_of is None:
        _publish_submitted(ingestion_id, None)
    elif holds(single_of) or not singles_message_due(single_of):
        return
    elif settings.REGISTRY_SINGLES_GATHER_SECONDS > 0 and not settings.CELERY_TASK_ALWAYS_EAGER:
        gather = settings.REGISTRY_SINGLES_GATHER_SECONDS
        publish_later(single_of, gather, _publish_submitted, ingestion_id, single_of)
    else:
        _publish_submitted(ingestion_id, single_of)


def _publish_submitted(ingestion_id: UUID, single_of: int | None) -> None:
    try:
        if broker_breaker.is_open:
            raise BrokerSkipped
        process_ingestion.delay(str(ingestion_id))
    except Exception as error:
        Ingestion.objects.filter(id=ingestion_id, status=Ingestion.Status.QUEUED).update(
            enqueued_at=None
        )
        if single_of is not None:
            singles_message_taken(single_of)  # no message is on its way after all
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


@shared_task(ignore_result=True)
def recover_ingestions() -> int:
    """Periodic (Celery beat): re-enqueue what a lost message or a dead worker left behind,
    and nothing whose message still waits in the broker's queue (ingestion.broker)."""
    identifiers = ingestions_to_recover(oldest_waiting=oldest_waiting_ingestion())
    for identifier in identifiers:
        enqueue(identifier)
    if identifiers:
        log.info("recovery re-enqueued %d ingestions", len(identifiers))
    return len(identifiers)


@shared_task(ignore_result=True)
def purge_receipts() -> int:
    """Periodic (Celery beat): purge the receipts past their retention (ingestion.retention)."""
    from ingestion.retention import receipts_purge

    purged = receipts_purge()
    if purged.receipts or purged.rows:
        log.info("retention purged %d receipts (%d outcome rows)", purged.receipts, purged.rows)
    return purged.receipts
