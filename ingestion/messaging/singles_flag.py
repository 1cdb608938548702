"""One message for the waiting singles, not one each.

A worker claiming a single takes the other waiting singles along, whichever practices sent
them (:func:`ingestion.pipeline.singles.singles_process`), so while a message for the waiting
singles is on its way, more messages for the singles submitted meanwhile would only cost the
web a publish and the worker a task that finds nothing left. A flag in Redis (the cache) says
"a message for the waiting singles is on its way", one for the registry:

* the web, once a single is committed, sets it if absent (``SET NX``) and publishes only
  if it set it (not even asking while its own process holds the message, to be published
  after this commit: :mod:`ingestion.messaging.gathering`);
* a worker clears it *before* it claims the waiting singles.

Whatever the interleaving, a committed single is either seen by a claim that started after
the flag it found was cleared, or finds the flag cleared and publishes its own message. The
flag expires after ``REGISTRY_REQUEUE_AFTER_SECONDS``, so a message lost with its flag set
costs at most that many seconds of skipped publishing; the recovery republishes what such
a loss leaves waiting. Without Redis, or while the cache breaker is open, every single is
published, as before.

One flag for every practice, not one each: spread over many practices (50 sending 20 a
second), a practice rarely has a second single waiting, so a flag per practice let nearly
every single publish a message and cost a worker a task, most of which found their single
already taken by another's claim (docs/architecture.md, "What a single costs").
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


def _flag() -> str:
    return str(caches["default"].make_key("singles-waiting"))


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


def singles_message_due() -> bool:
    """After a single is committed: should its message be published? (No while one is on
    its way for the waiting singles.)"""
    seconds = max(1, settings.REGISTRY_REQUEUE_AFTER_SECONDS)
    took = _call("singles flag", lambda client: client.set(_flag(), b"1", nx=True, ex=seconds))
    return took is UNKNOWN or bool(took)  # SET NX answers None when the flag was there


def singles_message_pending() -> bool:
    """Whether a message for the waiting singles is on its way, as far as the flag says (the
    recovery asks; without Redis: no)."""
    found = _call("singles flag", lambda client: client.exists(_flag()))
    return found is not UNKNOWN and bool(found)


def singles_message_sent() -> None:
    """A worker published the message for the next waiting singles."""
    seconds = max(1, settings.REGISTRY_REQUEUE_AFTER_SECONDS)
    _call("singles flag", lambda client: client.set(_flag(), b"1", ex=seconds))


def singles_message_taken() -> None:
    """Before claiming the waiting singles (or after failing to publish for them)."""
    _call("singles flag", lambda client: client.delete(_flag()))
