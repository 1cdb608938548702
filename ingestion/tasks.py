"""Celery tasks: thin, given only an ingestion id, and safe to run twice.

Only the worker imports this module (Celery's autodiscovery): the web publishes these tasks
by name (:mod:`ingestion.messaging.publishing`), so it never loads the pipeline.
"""

from __future__ import annotations

import logging
from uuid import UUID

from celery import Task, shared_task

from ingestion.messaging.publishing import PROCESS_TASK
from ingestion.messaging.queue_tail import oldest_waiting_ingestion
from ingestion.pipeline.process import ingestion_attempt
from ingestion.pipeline.recovery import ingestions_publish_again, ingestions_to_recover
from ingestion.receipts.retention import receipts_purge
from lib.logfilters import about_ingestion

log = logging.getLogger(__name__)


@shared_task(
    name=PROCESS_TASK, bind=True, acks_late=True, reject_on_worker_lost=True, max_retries=None
)
def process_ingestion(self: Task, ingestion_id: str) -> None:
    with about_ingestion(ingestion_id):
        retry_in = ingestion_attempt(UUID(ingestion_id))
        if retry_in is not None:
            raise self.retry(countdown=retry_in)


@shared_task(ignore_result=True)
def recover_ingestions() -> int:
    """Periodic (Celery beat): re-enqueue what a lost message or a dead worker left behind,
    and nothing whose message still waits in the broker's queue (ingestion.messaging.queue_tail)."""
    identifiers = ingestions_to_recover(oldest_waiting=oldest_waiting_ingestion())
    ingestions_publish_again(identifiers)
    if identifiers:
        log.info("recovery re-enqueued %d ingestions", len(identifiers))
    return len(identifiers)


@shared_task(ignore_result=True)
def purge_receipts() -> int:
    """Periodic (Celery beat): purge the receipts past their retention (ingestion.receipts)."""
    purged = receipts_purge()
    if purged.receipts or purged.rows:
        log.info("retention purged %d receipts (%d outcome rows)", purged.receipts, purged.rows)
    return purged.receipts
