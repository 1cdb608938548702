"""Each Celery worker says it is alive: a thread writes the time into a Redis hash.

The thread runs in the worker's main process, so it falls silent with the process: when it
exits or dies, and also when it is stopped (SIGSTOP) or hangs with the GIL held, which an
exit hook would never see. A reader counts the workers whose last beat is younger than
``REGISTRY_WORKER_HEARTBEAT_MAX_AGE_SECONDS``. The hash holds Celery node names (worker and
host names) and times, nothing else.
"""

from __future__ import annotations

import logging
import threading
import time

from django.conf import settings

from lib.cache import redis_client

log = logging.getLogger(__name__)

KEY = "registry:heartbeats"
FORGOTTEN_AFTER_SECONDS = 24 * 3600  # a worker gone this long is removed from the hash


class Heartbeat:
    def __init__(self, node: str) -> None:
        self.node = node
        self.stopped = threading.Event()

    def start(self) -> None:
        self.beat()
        threading.Thread(target=self._run, name="heartbeat", daemon=True).start()

    def stop(self) -> None:
        """A worker shutting down says so at once (rather than falling silent)."""
        self.stopped.set()
        client = redis_client()
        if client is not None:
            try:
                client.hdel(KEY, self.node)
            except Exception as error:
                log.warning("heartbeat: not removed (%s)", type(error).__name__)

    def beat(self) -> None:
        client = redis_client()
        if client is None:
            return
        try:
            client.hset(KEY, self.node, f"{time.time():.3f}")
        except Exception as error:  # Redis away: the next beat tries again
            log.warning("heartbeat: not written (%s)", type(error).__name__)

    def _run(self) -> None:
        while not self.stopped.wait(settings.REGISTRY_WORKER_HEARTBEAT_SECONDS):
            self.beat()


def workers_alive() -> int | None:
    """Workers whose heartbeat is young enough; None when Redis cannot be asked."""
    client = redis_client()
    if client is None:
        return None
    now = time.time()
    beats = {node: float(at) for node, at in client.hgetall(KEY).items()}
    gone = [node for node, at in beats.items() if now - at > FORGOTTEN_AFTER_SECONDS]
    if gone:
        client.hdel(KEY, *gone)
    young = settings.REGISTRY_WORKER_HEARTBEAT_MAX_AGE_SECONDS
    return sum(1 for at in beats.values() if now - at < young)
