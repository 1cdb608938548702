"""The Django cache on Redis, with one connection pool and one client per process.

Django keeps a cache object per context, and under ASGI every request runs in a context of
its own: each request built its own connection pool, so each opened a TCP connection to
Redis (with redis-py's ``CLIENT SETINFO`` round trips) and dropped it; and every cache call
built a ``redis.Redis`` client (a table of a few hundred response callbacks) to send one
command. :class:`RedisCache` (``CACHES``' backend, config/settings/data.py) hands every cache
object of a process the one pool for its server and options, and one client per pool.
redis-py's pool and client are thread-safe, and the pool resets itself after a fork.
:func:`redis_client` hands that client to the code that needs Redis commands Django's cache
API lacks (pipelines, ``SET NX`` with a TTL, ``INCR`` with an expiry), in one place.
"""

from __future__ import annotations

import threading
from typing import Any, ClassVar

from django.core.cache import caches
from django.core.cache.backends import redis as django_redis
from redis import ConnectionPool, Redis


class SharedConnectionPool:
    """The cache client's ``pool_class``: only ``from_url`` is asked of it."""

    pools: ClassVar[dict[str, ConnectionPool]] = {}
    lock: ClassVar[threading.Lock] = threading.Lock()

    @classmethod
    def from_url(cls, url: str, **options: Any) -> ConnectionPool:
        name = url + repr(sorted(options.items()))
        with cls.lock:
            pool = cls.pools.get(name)
            if pool is None:
                pool = cls.pools[name] = ConnectionPool.from_url(url, **options)
            return pool


class SharedRedisCacheClient(django_redis.RedisCacheClient):
    clients: ClassVar[dict[int, Redis]] = {}

    def __init__(self, servers: Any, **options: Any) -> None:
        super().__init__(servers, pool_class="lib.cache.SharedConnectionPool", **options)

    def get_client(self, key: Any = None, *, write: bool = False) -> Redis:
        pool = self._get_connection_pool(write)  # type: ignore[attr-defined]
        client = self.clients.get(id(pool))
        if client is None:
            with SharedConnectionPool.lock:
                client = self.clients.setdefault(id(pool), Redis(connection_pool=pool))
        return client


class RedisCache(django_redis.RedisCache):
    def __init__(self, server: str, params: dict[str, Any]) -> None:
        super().__init__(server, params)
        self._class = SharedRedisCacheClient


def redis_client() -> Any:
    """The default cache's ``redis.Redis`` client (replies as bytes); None when the cache is
    not Redis (the embedded default). Typed Any as callers were: redis-py's stubs type every
    reply as ``bytes | str``, whatever the client decodes."""
    cache = caches["default"]
    if not isinstance(cache, django_redis.RedisCache):
        return None
    # Django's RedisCache keeps its client private; this is the one place that reaches it.
    return cache._cache.get_client(write=True)
