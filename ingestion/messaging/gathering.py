"""The gathering window: a single's message is published a moment after its commit.

A worker claiming a single takes the other waiting singles along
(:mod:`ingestion.messaging.singles_flag`), and a claim costs less per single the more it
takes. So the message a single publishes (at most one is on its way) is published
``REGISTRY_SINGLES_GATHER_SECONDS`` after the commit, by a thread of the web process, and the
singles committed meanwhile are claimed with it.

The message is held here, not in the broker or the worker: a Celery countdown would send it
to a worker at once, out of the broker's queue, where the recovery looks for what still
waits (:mod:`ingestion.messaging.queue_tail`), and a worker takes every countdown message it
is offered. Held here, a message joins the queue at the end of its window and is taken as any
other.

Nothing is lost with the process: the single is committed, with ``enqueued_at`` set, before
its message is held. A web process that dies meanwhile leaves it to the recovery, as a
message lost in the broker would (after ``REGISTRY_REQUEUE_AFTER_SECONDS``, which the
window must stay below). A process that exits normally publishes what it holds first.

While this process holds the singles' message, its next singles need not ask Redis whether a
message is on its way (:func:`holds`): the message is published after their commit, so its
claim takes them along.
"""

from __future__ import annotations

import atexit
import heapq
import itertools
import logging
import threading
import time
from collections.abc import Callable
from typing import Any

from django.db import connections

log = logging.getLogger(__name__)


class _Held:
    """Calls waiting for their moment, made in order by one thread started when first needed."""

    def __init__(self) -> None:
        self._due: list[tuple[float, int, Callable[..., Any], tuple[Any, ...], Any]] = []
        self._for: set[Any] = set()  # what the held calls are for
        self._order = itertools.count()
        self._changed = threading.Condition()
        self._thread: threading.Thread | None = None

    def later(
        self, seconds: float, call: Callable[..., Any], *args: Any, about: Any = None
    ) -> None:
        with self._changed:
            entry = (time.monotonic() + seconds, next(self._order), call, args, about)
            heapq.heappush(self._due, entry)
            self._for.add(about)
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, name="gathering", daemon=True)
                self._thread.start()
            self._changed.notify()

    def _run(self) -> None:
        while True:
            call, args = self._next()
            _made(call, args)

    def _next(self) -> tuple[Callable[..., Any], tuple[Any, ...]]:
        with self._changed:
            while not self._due or self._due[0][0] > time.monotonic():
                wait = self._due[0][0] - time.monotonic() if self._due else None
                self._changed.wait(timeout=wait)
            _, _, call, args, about = heapq.heappop(self._due)
            self._for.discard(about)  # before the call: from now on, ask Redis again
            return call, args

    def holds(self, about: Any) -> bool:
        with self._changed:
            return about in self._for

    def now(self) -> None:
        """Everything held, at once (the process is about to exit)."""
        with self._changed:
            due, self._due = sorted(self._due), []
            self._for.clear()
        for _, _, call, args, _ in due:
            _made(call, args)


def _made(call: Callable[..., Any], args: tuple[Any, ...]) -> None:
    try:
        call(*args)
    except Exception as error:  # the call handles its own failure; nothing may end the thread
        log.warning("gathering: a held publish failed (%s)", type(error).__name__)
    finally:
        connections.close_all()  # this thread's: a failure's bookkeeping may have used one


_held = _Held()
atexit.register(_held.now)


SINGLES = "singles"  # what the held message is for: the waiting singles


def publish_later(seconds: float, call: Callable[..., Any], *args: Any) -> None:
    """``call(*args)`` in ``seconds``, on the gathering thread: the singles' message."""
    _held.later(seconds, call, *args, about=SINGLES)


def holds() -> bool:
    """Whether this process holds a message for the waiting singles, not yet published.
    Asked after a single's commit: if so, that message's claim will take the single."""
    return _held.holds(SINGLES)
