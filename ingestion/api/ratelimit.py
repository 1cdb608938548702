"""REGISTRY_RATE_LIMIT (120 a minute) per API key and per endpoint, counted in the shared cache.

The counters live in Redis, so the limit holds across gunicorn processes and machines. A
request's counter is a fixed one-minute window per key and endpoint, incremented in the
same Redis round trip that looks the key up (:func:`rate_counter`, :mod:`keys.cache`): one
round trip per request for both. Only a request whose token is the key's counts against it:
the key's prefix is not secret, so a token that merely starts with it is a failed
authentication, counted against the client's address (:func:`auth_failure_refusal`), and
cannot put its owner at 429. Without Redis (the embedded default), django-ratelimit counts
in the Django cache, after authentication. If the cache cannot be reached the limiter fails open: a
submission is worth more than a rate limit, and it is logged. The cache's timeouts bound the
wait, and after a failure the breaker skips the cache for a few seconds.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

from django.conf import settings
from django.core.cache import caches
from django_ratelimit.core import get_usage
from rest_framework.request import Request

from ingestion.api.errors import RateLimited, rate_in_words
from keys.cache import Counter
from lib.breaker import cache_breaker
from lib.client import client_address

log = logging.getLogger(__name__)

PERIODS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def _limit() -> tuple[int, int]:
    """REGISTRY_RATE_LIMIT ("120/m") as (requests, seconds)."""
    count, period = settings.REGISTRY_RATE_LIMIT.split("/")
    return int(count), PERIODS[period]


def rate_counter(group: str) -> Callable[[str], Counter]:
    """The counter of a key prefix for this endpoint, in the current window."""

    def counter(prefix: str) -> Counter:
        _, seconds = _limit()
        window = int(time.time() // seconds)
        name = caches["default"].make_key(f"rl:{group}:{prefix}:{window}")
        return Counter(name, 2 * seconds)

    return counter


def _per_key(group: str, request: Request) -> str:
    return str(getattr(request.auth, "prefix", ""))


def enforce_rate_limit(request: Request, *, group: str) -> None:
    count = getattr(request.user, "count", None)
    if count is not None:  # counted with the key lookup (keys.cache)
        limit, seconds = _limit()
        if count > limit:
            raise RateLimited(retry_after=int(seconds - time.time() % seconds) + 1)
        return
    if cache_breaker.is_open:
        return  # the cache failed a moment ago: fail open without waiting on it again
    try:
        usage = get_usage(
            request,
            group=f"registry.{group}",
            key=_per_key,
            rate=settings.REGISTRY_RATE_LIMIT,
            increment=True,
        )
    except Exception as error:  # the cache is down or hung: let the request through
        log.warning("rate limiter unavailable, failing open (%s)", type(error).__name__)
        cache_breaker.trip(error)
        return
    if usage is not None and usage["should_limit"]:
        raise RateLimited(retry_after=int(usage["time_left"]))


AUTH_FAILURES = "registry.auth-failures"


def _per_address(group: str, request: Request) -> str:
    return client_address(request)


def auth_failure_refusal(request: Request) -> RateLimited | None:
    """Count a failed authentication from the request's client address; past the limit, the
    429 to answer instead of the 401.

    Asked only once authentication has failed, so a request with a valid key never waits on
    the cache for it, and is never refused for the failures of others at its address.
    """
    if cache_breaker.is_open:
        return None
    try:
        usage = get_usage(
            request,
            group=AUTH_FAILURES,
            key=_per_address,
            rate=settings.REGISTRY_AUTH_FAILURE_RATE,
            increment=True,
        )
    except Exception as error:  # fail open, as the per-key limit does
        log.warning("rate limiter unavailable, failing open (%s)", type(error).__name__)
        cache_breaker.trip(error)
        return None
    if usage is None or not usage["should_limit"]:
        return None
    return RateLimited(
        retry_after=int(usage["time_left"]),
        what=rate_in_words(settings.REGISTRY_AUTH_FAILURE_RATE, "failed authentications")
        + " from one address",
    )
