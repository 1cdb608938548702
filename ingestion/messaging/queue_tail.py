"""What still waits in the broker's queue, for the recovery.

The recovery republishes a queued ingestion whose message may be lost. Age alone cannot
tell a lost message from one waiting behind a busy worker: under a backlog every message is
old, and republishing them all only adds to the backlog. The broker (Redis, through kombu)
keeps the queue as a list, oldest at its tail, consumed in order: so every message published
before the oldest one still waiting has left the queue. :func:`oldest_waiting_ingestion`
reads the tail of the list (a few messages, not the queue) and names the ingestion of the
oldest ``process_ingestion`` message there; the recovery then republishes only what was
published well before it (:func:`ingestion.pipeline.recovery.ingestions_to_recover`).

A message a worker has taken but not started (prefetched) is in neither place; the margin
(``REGISTRY_RECOVERY_GRACE_SECONDS``) covers it. Another broker, or a queue that cannot be
read, gives None: the recovery then goes by age alone, as it did before.
"""

from __future__ import annotations

import base64
import json
import logging
from typing import Any
from uuid import UUID

from celery import current_app

from ingestion.messaging.publishing import PROCESS_TASK

log = logging.getLogger(__name__)

PAGE = 100
MOST = 1_000  # messages read from the tail at most (recovery tasks may sit among them)


def oldest_waiting_ingestion() -> UUID | None:
    """The ingestion of the oldest process_ingestion message still in the queue, if any."""
    app = current_app
    try:
        with app.connection_for_read() as connection:
            if connection.transport_cls not in ("redis", "rediss"):
                return None
            client = connection.default_channel.client  # type: ignore[attr-defined]
            queue = app.conf.task_default_queue
            for end in range(-1, -MOST - 1, -PAGE):
                raws = client.lrange(queue, end - PAGE + 1, end)
                for raw in reversed(raws):  # the tail first: the oldest first
                    found = _ingestion_of(raw)
                    if found is not None:
                        return found
                if len(raws) < PAGE:
                    return None
    except Exception as error:  # the broker is down: the recovery cannot publish either
        log.warning("recovery: the broker's queue cannot be read (%s)", type(error).__name__)
    return None


def _ingestion_of(raw: bytes) -> UUID | None:
    try:
        message: dict[str, Any] = json.loads(raw)
        if message.get("headers", {}).get("task") != PROCESS_TASK:
            return None
        args = json.loads(base64.b64decode(message["body"]))[0]
        return UUID(args[0])
    except (ValueError, KeyError, IndexError, TypeError):
        return None


def messages_waiting() -> bool:
    """Whether a message waits in the queue for a free worker process: the chunk loop asks
    it between a batch's chunks, to hand the worker back (:mod:`ingestion.pipeline.turns`).

    One ``LLEN`` on a pooled broker connection. Without a Redis broker (the embedded default
    runs each task in the request that published it), or while it cannot be read: False, so
    a batch goes on as it did before.
    """
    app = current_app
    if app.conf.task_always_eager:
        return False
    try:
        pooled: Any = app.pool.acquire(block=True, timeout=1)  # a connection, not a producer
        with pooled as connection:
            if connection.transport_cls not in ("redis", "rediss"):
                return False
            return bool(connection.default_channel.client.llen(app.conf.task_default_queue))
    except Exception as error:
        log.warning("turns: the broker's queue cannot be read (%s)", type(error).__name__)
        return False
