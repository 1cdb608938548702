"""Counters and histograms that every web and worker process adds to, summed in Redis.

A process adds to a local tally (a dictionary, under a lock: no I/O on the request's path);
a daemon thread sends the tally to one Redis hash every second (``HINCRBYFLOAT``s in one
pipelined round trip) and ``/metrics`` reads the hash. So the figures are right across
gunicorn's processes and Celery's, and a restart of one process loses at most its last
second. Without Redis (the embedded default, one process) the local tally is the store.

Fields are ``name|labels|bucket``: histograms keep one count per bucket (not cumulative),
``sum`` and ``count``; labels hold route names and status codes only, never a path.
"""

from __future__ import annotations

import logging
import os
import threading
from collections import defaultdict
from collections.abc import Mapping, Sequence

from django.conf import settings

from lib.breaker import cache_breaker
from lib.cache import redis_client

log = logging.getLogger(__name__)

KEY = "registry:metrics"
FLUSH_SECONDS = 1.0
SEPARATOR = "|"
# X-Forwarded-For from a peer that is not a trusted proxy (config/proxy.py): no labels.
UNTRUSTED_FORWARDED = f"untrusted_forwarded{SEPARATOR}{SEPARATOR}total"
HTTP_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)
INGESTION_BUCKETS = (0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0, 900.0, 1800.0, 3600.0)


def field(*parts: object) -> str:
    return SEPARATOR.join(str(part) for part in parts)


def observation(name: str, labels: str, value: float, buckets: Sequence[float]) -> dict[str, float]:
    """The increments of one observation of a histogram."""
    bucket = next((str(i) for i, bound in enumerate(buckets) if value <= bound), "inf")
    return {
        field(name, labels, bucket): 1.0,
        field(name, labels, "sum"): value,
        field(name, labels, "count"): 1.0,
    }


class Aggregate:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._pending: dict[str, float] = defaultdict(float)
        self._local: dict[str, float] = defaultdict(float)  # everything, without Redis
        self._flusher_pid = 0  # the process whose thread sends the tally (not a fork's parent)

    def add(self, increments: Mapping[str, float]) -> None:
        with self._lock:
            for name, value in increments.items():
                self._pending[name] += value
            if self._flusher_pid != os.getpid() and settings.REDIS_URL:
                self._flusher_pid = os.getpid()
                threading.Thread(
                    target=self._flush_forever, name="metrics-flush", daemon=True
                ).start()

    def read(self) -> dict[str, float]:
        """Every process's totals (this one's sent first)."""
        client = redis_client()
        if client is None:
            self._take_local()
            return dict(self._local)
        self.flush()
        if cache_breaker.is_open:
            return {}  # Redis failed a moment ago: the scrape has the database's figures
        try:
            stored = client.hgetall(KEY)
        except Exception as error:
            cache_breaker.trip(error)
            return {}
        return {name.decode(): float(value) for name, value in stored.items()}

    def flush(self) -> None:
        client = redis_client()
        if client is None or cache_breaker.is_open:
            return
        with self._lock:
            pending, self._pending = self._pending, defaultdict(float)
        if not pending:
            return
        try:
            pipe = client.pipeline(transaction=False)
            for name, value in pending.items():
                pipe.hincrbyfloat(KEY, name, value)
            pipe.execute()
        except Exception as error:  # Redis away: keep the tally for the next try
            with self._lock:
                for name, value in pending.items():
                    self._pending[name] += value
            cache_breaker.trip(error)

    def _take_local(self) -> None:
        with self._lock:
            for name, value in self._pending.items():
                self._local[name] += value
            self._pending = defaultdict(float)

    def _flush_forever(self) -> None:
        stop = threading.Event()
        while not stop.wait(FLUSH_SECONDS):
            try:
                self.flush()
            except Exception as error:  # never let the thread die
                log.warning("metrics: flush failed (%s)", type(error).__name__)


aggregate = Aggregate()


def untrusted_forwarded_observe() -> None:
    """A request carried X-Forwarded-For from a peer that is not a trusted proxy."""
    aggregate.add({UNTRUSTED_FORWARDED: 1.0})


def http_request_observe(*, endpoint: str, status: int, seconds: float) -> None:
    increments = observation("http_duration", endpoint, seconds, HTTP_BUCKETS)
    increments[field("http_requests", endpoint, status)] = 1.0
    aggregate.add(increments)


def ingestion_durations_observe(durations: Sequence[tuple[float, str]]) -> None:
    """Submit to completed, for each ingestion just completed, with its kind (single or
    batch): a single held behind other work shows in its own buckets."""
    increments: dict[str, float] = defaultdict(float)
    for value, kind in durations:
        for name, added in observation(
            "ingestion_duration", kind, value, INGESTION_BUCKETS
        ).items():
            increments[name] += added
    if increments:
        aggregate.add(increments)
