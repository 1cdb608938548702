"""Requests inside the web: how many, and how long the oldest has waited, for ``/metrics``.

The queue depth counts ingestions; it cannot see a web that is too busy to answer, where
POSTs wait for their 202 in the processes' event loops and thread pools. Every web process
keeps its own figures (a counter and the start of each request it holds: no I/O on the
request's path) and a daemon thread writes them to one Redis hash every second, a field per
process with the time it was written. A scrape sums the fields written in the last few
seconds (a process that died stops writing and is dropped), so any web process answers for
all of them. Without Redis (the embedded default, one process) the local figures are read.
"""

from __future__ import annotations

import json
import logging
import os
import socket
import threading
import time
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass
from typing import Any

from django.conf import settings

from lib.breaker import cache_breaker
from lib.cache import redis_client

log = logging.getLogger(__name__)

KEY = "registry:web-in-flight"
WRITE_SECONDS = 1.0
FRESH_SECONDS = 5.0  # a field older than this is a process that stopped writing

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]


@dataclass(frozen=True, slots=True)
class InFlight:
    requests: int
    oldest_seconds: float  # 0 when none is in flight


class Tally:
    """This process's requests in flight: their start times, by a key of their own."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._started: dict[int, float] = {}
        self._next = 0
        self._writer_pid = 0

    def begin(self) -> int:
        with self._lock:
            self._next += 1
            self._started[self._next] = time.time()
            if self._writer_pid != os.getpid() and settings.REDIS_URL:
                self._writer_pid = os.getpid()
                threading.Thread(target=self._write_forever, name="in-flight", daemon=True).start()
            return self._next

    def end(self, key: int) -> None:
        with self._lock:
            self._started.pop(key, None)

    def snapshot(self) -> tuple[int, float | None]:
        """How many, and the oldest's start (a wall-clock time), or None."""
        with self._lock:
            return len(self._started), min(self._started.values(), default=None)

    def write(self) -> None:
        client = redis_client()
        if client is None or cache_breaker.is_open:
            return
        count, oldest = self.snapshot()
        state = json.dumps({"n": count, "oldest": oldest, "at": time.time()})
        try:
            client.hset(KEY, _process(), state)
        except Exception as error:
            cache_breaker.trip(error)

    def _write_forever(self) -> None:
        stop = threading.Event()
        while not stop.wait(WRITE_SECONDS):
            try:
                self.write()
            except Exception as error:  # never let the thread die
                log.warning("in-flight: write failed (%s)", type(error).__name__)


tally = Tally()


def _process() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


def in_flight() -> InFlight:
    """Every web process's figures: this one's as they are, the others' as the last second
    wrote them."""
    now = time.time()
    client = redis_client()
    if client is None:
        count, oldest = tally.snapshot()
        return InFlight(count, _age(oldest, now))
    if cache_breaker.is_open:
        return InFlight(0, 0.0)
    try:
        fields = client.hgetall(KEY)
    except Exception as error:
        cache_breaker.trip(error)
        return InFlight(0, 0.0)
    own, own_oldest = tally.snapshot()  # this process's live figures, the scrape included
    total, starts, stale = own, [] if own_oldest is None else [own_oldest], []
    for process, raw in fields.items():
        if process.decode() == _process():
            continue
        state = json.loads(raw)
        if now - state["at"] > FRESH_SECONDS:
            stale.append(process)
            continue
        total += state["n"]
        if state["oldest"] is not None:
            starts.append(state["oldest"])
    if stale:
        client.hdel(KEY, *stale)
    return InFlight(total, _age(min(starts, default=None), now))


def _age(started: float | None, now: float) -> float:
    return max(now - started, 0.0) if started is not None else 0.0


class RequestsInFlight:
    """ASGI middleware, outermost: a request counts from its first event to its last byte."""

    def __init__(self, app: App) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        key = tally.begin()
        try:
            await self.app(scope, receive, send)
        finally:
            tally.end(key)
