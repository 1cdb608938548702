"""API keys looked up through a short cache in Redis, with the request's counters in one trip.

Every API request authenticates its key. Reading it from PostgreSQL costs a statement per
request; here it is read from Redis, shared by every web process, in the same round trip
that counts the request (the caller's rate-limit counter) and asks whether the key's last
use should be written down (at most once a minute across all processes). Only a miss reads
the database, and fills the cache for ``REGISTRY_KEY_CACHE_SECONDS``.

A revocation (a rotation revokes too) holds from the next request in every process:
:func:`key_cache_revoked` overwrites the key's entry with a tombstone, as the revocation is
written and again once it has committed, and a tombstone lives as long as an entry could.
A fill only ever adds an entry where there is none (``SET NX``), so a request that read the
key just before the revocation committed cannot put it back; a tombstone sends lookups to
the database, which answers with the key as committed. Should Redis refuse the tombstone,
the error is logged and a stale entry lives at most ``REGISTRY_KEY_CACHE_SECONDS``.
Without Redis (the embedded default), or while the cache breaker is open, every lookup
reads the database, as before.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import orjson
from django.conf import settings
from django.core.cache import caches

from keys.models import ApiKey, token_prefix
from keys.selectors import key_for_token
from lib.breaker import cache_breaker
from lib.cache import redis_client
from registry.models import Practice

log = logging.getLogger(__name__)

TOMBSTONE = b"revoked"
USED_SECONDS = 60  # keys.services.LAST_USED_RESOLUTION


@dataclass(frozen=True, slots=True)
class Counter:
    """A counter the lookup's round trip increments: its name, and its lifetime in seconds."""

    name: str
    seconds: int


@dataclass(frozen=True, slots=True)
class Lookup:
    key: ApiKey | None
    count: int | None = None  # the counter after this request; None when not counted
    first_use_this_minute: bool | None = None  # None when Redis could not say


def _redis() -> Any | None:
    if cache_breaker.is_open:
        return None
    return redis_client()


def _name(kind: str, prefix: str) -> str:
    return str(caches["default"].make_key(f"{kind}:{prefix}"))


def key_lookup(token: str, *, counter: Counter | None = None) -> Lookup:
    """The key a well-formed token names (revoked or not), and the counter, in one trip."""
    client = _redis()
    if client is None or (settings.REGISTRY_KEY_CACHE_SECONDS <= 0 and counter is None):
        return Lookup(key_for_token(token))
    prefix = token_prefix(token)
    pipeline = client.pipeline(transaction=False)
    if counter is not None:
        pipeline.incr(counter.name)
        pipeline.expire(counter.name, counter.seconds, nx=True)
    pipeline.get(_name("key", prefix))
    pipeline.set(_name("used", prefix), b"1", nx=True, ex=USED_SECONDS)
    try:
        *counted, cached, first_use = pipeline.execute()
    except Exception as error:  # Redis down or hung: the database alone, no counting
        log.warning(
            "key cache and rate limiter unavailable, failing open (%s)", type(error).__name__
        )
        cache_breaker.trip(error)
        return Lookup(key_for_token(token))
    key = _decoded(cached)
    if key is None:
        key = key_for_token(token)
        if key is not None and cached != TOMBSTONE:
            _fill(client, key)
    return Lookup(key, counted[0] if counted else None, bool(first_use))


def _fill(client: Any, key: ApiKey) -> None:
    seconds = settings.REGISTRY_KEY_CACHE_SECONDS
    if seconds <= 0:
        return
    try:
        client.set(_name("key", key.prefix), _encoded(key), nx=True, ex=seconds)
    except Exception as error:
        cache_breaker.trip(error)


def key_cache_revoked(prefix: str) -> None:
    """After a revocation commits: no process may use a cached copy of the key again."""
    client = _redis()
    if client is None:
        return
    try:
        client.set(_name("key", prefix), TOMBSTONE, ex=max(settings.REGISTRY_KEY_CACHE_SECONDS, 1))
    except Exception as error:
        log.error(
            "key cache: the revocation of %s could not be written to Redis (%s); a cached "
            "copy may be accepted for up to %s s",
            prefix,
            type(error).__name__,
            settings.REGISTRY_KEY_CACHE_SECONDS,
        )
        cache_breaker.trip(error)


def _encoded(key: ApiKey) -> bytes:
    practice = key.practice
    return orjson.dumps(
        {
            "id": key.pk,
            "prefix": key.prefix,
            "digest": key.digest,
            "scopes": key.scopes,
            "revoked_at": key.revoked_at,
            "last_used_at": key.last_used_at,
            "practice": {
                "id": practice.pk,
                "slug": practice.slug,
                "name": practice.name,
                "sandbox": practice.sandbox,
            },
        }
    )


def _decoded(cached: bytes | None) -> ApiKey | None:
    if not cached or cached == TOMBSTONE:
        return None
    values = orjson.loads(cached)
    practice = Practice(**values.pop("practice"))
    for name in ("revoked_at", "last_used_at"):
        if values[name] is not None:
            values[name] = datetime.fromisoformat(values[name])
    key = ApiKey(practice_id=practice.pk, **values)
    key.practice = practice
    return key
