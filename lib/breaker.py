"""A per-process circuit breaker for calls to Redis (the cache and the broker).

Timeouts bound one call; the breaker spares the calls after it. Once a call has failed, the
breaker stays open for ``REGISTRY_REDIS_BREAKER_SECONDS``: callers skip the call and take
their fallback at once (the rate limiter lets the request through, publishing leaves the
ingestion to the recovery), and the outage is logged once, not once per request. The first
call after the pause tries again.
"""

from __future__ import annotations

import logging
import threading
import time

from django.conf import settings

log = logging.getLogger(__name__)


class Breaker:
    def __init__(self, name: str) -> None:
        self.name = name
        self._open_until = 0.0
        self._lock = threading.Lock()

    @property
    def is_open(self) -> bool:
        return time.monotonic() < self._open_until

    def trip(self, error: BaseException) -> None:
        """Open for a while; log the kind of error only, once per opening: calls that began
        before it opened (a request's and a metrics thread's, say) fail together."""
        seconds = settings.REGISTRY_REDIS_BREAKER_SECONDS
        with self._lock:
            was_open = self.is_open
            self._open_until = time.monotonic() + seconds
        if not was_open:
            log.warning(
                "%s unavailable (%s): skipping it for %ss", self.name, type(error).__name__, seconds
            )

    def close(self) -> None:
        self._open_until = 0.0


cache_breaker = Breaker("cache")
broker_breaker = Breaker("broker")
