"""One message for a practice's waiting singles, not one each.

A worker claiming a single takes the practice's other waiting singles along
(:func:`ingestion.pipeline.singles.singles_process`), so while a message for a practice's singles
is on its way, more messages for the singles submitted meanwhile would only cost the web a
publish and the worker a task that finds nothing left. A flag in Redis (the cache) says
"a message for this practice's singles is on its way":

* the web, once a single is committed, sets it if absent (``SET NX``) and publishes only
  if it set it (not even asking while its own process holds the practice's message, to be
  published after this commit: :mod:`ingestion.messaging.gathering`);
* a worker clears it *before* it claims the practice's waiting singles.

Whatever the interleaving, a committed single is either seen by a claim that started after
the flag it found was cleared, or finds the flag cleared and publishes its own message. The
flag expires after ``REGISTRY_REQUEUE_AFTER_SECONDS``, so a message lost with its flag set
costs at most that many seconds of skipped publishing; the recovery republishes what such
a loss leaves waiting. Without Redis, or while the cache breaker is open, every single is
published, as before.
"""

from __future__ import annotations

import logging
from typing import Any

from django.conf import settings
from django.core.cache import caches

from lib.breaker import cache_breaker
from lib.cache import redis_client

log = logging.getLogger(__name__)


def _redis() -> Any | None:
    if cache_breaker.is_open:
        return None
    return redis_client()


def _flag(practice_id: int) -> str:
    return str(caches["default"].make_key(f"singles-waiting:{practice_id}"))


UNKNOWN = object()  # no Redis to ask


def _call(what: str, command: Any) -> Any:
    client = _redis()
    if client is None:
        return UNKNOWN
    try:
        return command(client)
    except Exception as error:
        log.warning("%s: cache unavailable (%s)", what, type(error).__name__)
        cache_breaker.trip(error)
        return UNKNOWN


def singles_message_due(practice_id: int) -> bool:
    """After a single is committed: should its message be published? (No while one is on
    its way for the practice's singles.)"""
    seconds = max(1, settings.REGISTRY_REQUEUE_AFTER_SECONDS)
    took = _call(
        "singles flag", lambda client: client.set(_flag(practice_id), b"1", nx=True, ex=seconds)
    )
    return took is UNKNOWN or bool(took)  # SET NX answers None when the flag was there


def singles_message_sent(practice_id: int) -> None:
    """A worker published the message for the practice's next waiting singles."""
    seconds = max(1, settings.REGISTRY_REQUEUE_AFTER_SECONDS)
    _call("singles flag", lambda client: client.set(_flag(practice_id), b"1", ex=seconds))


def singles_message_taken(practice_id: int) -> None:
    """Before claiming a practice's waiting singles (or after failing to publish for them)."""
    _call("singles flag", lambda client: client.delete(_flag(practice_id)))
