"""A queued ingestion's receipt, kept in Redis for a moment: a poll that finds it costs no SQL.

A queued receipt changes only when a worker claims the ingestion (or fails it), so every
poll until then can be answered with the same bytes. They are kept for ``KEEP_MS`` under the
ingestion's id, with the practice they belong to: another practice's key that names the id
misses, and the database answers it (with a 404).

The pipeline forgets the answer when the ingestion leaves ``queued``, once that change is
committed (:func:`forget_on_commit`). Forgetting writes a marker that lives ``GONE_SECONDS``,
and an answer is only stored where no key exists (``SET NX``): a poll that read ``queued``
just before the claim committed cannot store it after the claim has forgotten it, and the
marker is written when the change is made and again at its commit.

Without Redis (the embedded default) nothing is kept. Redis failing costs the fallback only
(the breaker, :mod:`lib.breaker`): the poll reads the database; a worker whose forgetting
fails leaves the answer to expire within ``KEEP_MS``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from uuid import UUID

from django.db import transaction

from lib.breaker import cache_breaker
from lib.cache import redis_client

KEEP_MS = 1500
GONE_SECONDS = 60
GONE = b"-"  # the marker: the ingestion has left queued
PREFIX = "registry:receipt:"  # under the cache's KEY_PREFIX, cleared with it


@dataclass(frozen=True, slots=True)
class Kept:
    progress: str  # the X-Progress header
    body: bytes


def kept_receipt(*, practice_id: int, ingestion_id: UUID) -> Kept | None:
    """The kept answer for this practice, or None (none kept, another's, or no Redis)."""
    client = redis_client()
    if client is None or cache_breaker.is_open:
        return None
    try:
        value = client.get(_key(ingestion_id))
    except Exception as error:  # fail open: the database answers
        cache_breaker.trip(error)
        return None
    if not value or value == GONE:
        return None
    owner, progress, body = value.split(b"\n", 2)
    if owner != str(practice_id).encode():
        return None
    return Kept(progress.decode(), body)


def keep_receipt(*, practice_id: int, ingestion_id: UUID, kept: Kept) -> None:
    """Keep a queued ingestion's answer, unless it is kept already or has been forgotten."""
    client = redis_client()
    if client is None or cache_breaker.is_open:
        return
    value = b"\n".join((str(practice_id).encode(), kept.progress.encode(), kept.body))
    try:
        client.set(_key(ingestion_id), value, px=KEEP_MS, nx=True)
    except Exception as error:
        cache_breaker.trip(error)


def forget_on_commit(ingestion_ids: Iterable[UUID]) -> None:
    """Forget the ingestions' kept answers now and once the current transaction commits.

    Now: from here on no poll can keep an answer (the marker), so none read before the
    commit outlives it. Again at the commit: the marker is renewed from there, however long
    the transaction took. Outside a transaction both happen at once; one write suffices.
    """
    ids = list(ingestion_ids)
    if not ids:
        return
    forget(ids)
    if transaction.get_connection().in_atomic_block:
        transaction.on_commit(lambda: forget(ids))


def forget(ingestion_ids: list[UUID]) -> None:
    client = redis_client()
    if client is None or cache_breaker.is_open:
        return
    try:
        with client.pipeline(transaction=False) as pipe:
            for ingestion_id in ingestion_ids:
                pipe.set(_key(ingestion_id), GONE, ex=GONE_SECONDS)
            pipe.execute()
    except Exception as error:  # the kept answer expires within KEEP_MS
        cache_breaker.trip(error)


def _key(ingestion_id: UUID) -> str:
    return f"{PREFIX}{ingestion_id}"
