"""API keys looked up through a short cache in Redis, with the request's counters in one trip.

Every API request authenticates its key. Reading it from PostgreSQL costs a statement per
request; here it is read from Redis, shared by every web process, in one round trip (a
script) that also checks the presented token's digest against the cached key's and, only
when they are the same, counts the request (the caller's rate-limit counter) and asks whether
the key's last use should be written down (at most once a minute across all processes). A
token that only shares a key's prefix, which is not secret, spends nothing of the key's: its
failure is counted against the client's address (ingestion/api/ratelimit.py). Only a miss
reads the database; the next trip fills the cache for ``REGISTRY_KEY_CACHE_SECONDS`` and,
if the token was the key's, counts it.

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

from keys.models import ApiKey, prefix_fingerprint, token_digest, token_prefix
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


# One round trip for a lookup that the cache can answer: the entry, and, only when the
# presented token's digest is the entry's and the key is not revoked, the caller's counter and
# the "used this minute" marker. A token that merely shares a key's (public) prefix touches
# neither. The digests are compared in Redis without constant time: what timing could tell is
# how much of a SHA-256 digest a guess shares, which does not lead to a token.
# KEYS: the entry, the marker[, the counter]; ARGV: tombstone, digest, marker seconds[, counter
# seconds]. The reply is [entry] when the token was not verified, else [entry, first, count].
VERIFY_THEN_COUNT = """
local cached = redis.call('GET', KEYS[1])
if not cached or cached == ARGV[1] then return {cached} end
local ok, entry = pcall(cjson.decode, cached)
if not ok or entry['digest'] ~= ARGV[2] or entry['revoked_at'] ~= cjson.null then
  return {cached}
end
local first = redis.call('SET', KEYS[2], '1', 'NX', 'EX', ARGV[3])
local count = false
if KEYS[3] then
  count = redis.call('INCR', KEYS[3])
  redis.call('EXPIRE', KEYS[3], ARGV[4], 'NX')
end
return {cached, first and 1 or 0, count}
"""


def key_lookup(token: str, *, counter: Counter | None = None) -> Lookup:
    """The key a well-formed token names (revoked or not); the counter counts only if the
    token is the key's. One round trip when the key is cached, two when it is not."""
    client = _redis()
    if client is None or (settings.REGISTRY_KEY_CACHE_SECONDS <= 0 and counter is None):
        return Lookup(key_for_token(token))
    if settings.REGISTRY_KEY_CACHE_SECONDS <= 0:
        return _after_database(client, token, counter, cached=None)
    try:
        reply = _verify_then_count(client, token, counter)
    except Exception as error:  # Redis down or hung: the database alone, no counting
        _fail_open(error)
        return Lookup(key_for_token(token))
    if len(reply) == 3:  # verified against the cached entry, and counted
        cached, first_use, count = reply
        return Lookup(_decoded(cached), count, bool(first_use))
    key = _decoded(reply[0])
    if key is not None:  # cached, but not this token's (or revoked): nothing counted
        return Lookup(key)
    return _after_database(client, token, counter, cached=reply[0])


def _verify_then_count(client: Any, token: str, counter: Counter | None) -> list[Any]:
    prefix = token_prefix(token)
    keys = [_name("key", prefix), _name("used", prefix)]
    arguments: list[Any] = [TOMBSTONE, token_digest(token), USED_SECONDS]
    if counter is not None:
        keys.append(counter.name)
        arguments.append(counter.seconds)
    script = client.register_script(VERIFY_THEN_COUNT)  # EVALSHA, loaded on first use
    return list(script(keys=keys, args=arguments, client=client))


def _after_database(
    client: Any, token: str, counter: Counter | None, *, cached: bytes | None
) -> Lookup:
    """Not in the cache: read the key, then fill the cache and (if this token is the key's)
    count, in one more round trip. A tombstone (``cached``) is left in place."""
    key = key_for_token(token)
    if key is None:
        return Lookup(None)
    verified = key.is_active and key.matches(token)
    fill = cached != TOMBSTONE and settings.REGISTRY_KEY_CACHE_SECONDS > 0
    if not (verified or fill):
        return Lookup(key)
    pipeline = client.pipeline(transaction=False)
    if fill:
        _fill(pipeline, key)
    if verified:
        _queue_count(pipeline, key.prefix, counter)
    try:
        replies = pipeline.execute()[int(fill) :]
    except Exception as error:
        _fail_open(error)
        return Lookup(key)
    if not verified:
        return Lookup(key)
    return Lookup(key, replies[1] if counter is not None else None, bool(replies[0]))


def _queue_count(pipeline: Any, prefix: str, counter: Counter | None) -> None:
    """A verified request: the "used this minute" marker, then the counter (as the script)."""
    pipeline.set(_name("used", prefix), b"1", nx=True, ex=USED_SECONDS)
    if counter is not None:
        pipeline.incr(counter.name)
        pipeline.expire(counter.name, counter.seconds, nx=True)


def _fail_open(error: Exception) -> None:
    log.warning("key cache and rate limiter unavailable, failing open (%s)", type(error).__name__)
    cache_breaker.trip(error)


def _fill(client: Any, key: ApiKey) -> None:
    """Add the key's entry where there is none; on a pipeline, queue that."""
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
            "key cache: the revocation of key %s could not be written to Redis (%s); a cached "
            "copy may be accepted for up to %s s",
            prefix_fingerprint(prefix),
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
