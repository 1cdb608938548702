"""``GET /healthz``: is each part the service needs reachable? Carries no data.

The checks run at most once per ``REGISTRY_HEALTH_VERDICT_SECONDS`` in a process, one
request at a time; every other request answers from the last verdict at once. So however
many pollers there are, an outage (each check bounded by its timeouts) costs one slow check
every few seconds, not one per poll.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

from django.conf import settings
from django.core.cache import cache
from django.db import connection
from django.http import HttpRequest, JsonResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_safe

from config.celery import app as celery_app
from lib.breaker import Breaker, broker_breaker, cache_breaker

log = logging.getLogger(__name__)


def _database() -> None:
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")


def _cache() -> None:
    cache.set("healthz", "1", timeout=10)
    if cache.get("healthz") != "1":
        raise RuntimeError("cache did not return what was just written")


def _broker() -> None:
    if celery_app.conf.task_always_eager:
        return  # embedded default: tasks run in-process, there is no broker to reach
    with celery_app.connection_for_write() as conn:
        conn.ensure_connection(max_retries=1, timeout=1)


CHECKS: dict[str, Callable[[], None]] = {
    "database": _database,
    "cache": _cache,
    "broker": _broker,
}


BREAKERS: dict[str, Breaker] = {"cache": cache_breaker, "broker": broker_breaker}


def run_checks() -> dict[str, str]:
    """Each part's state; a part whose breaker is open is not called again (lib.breaker)."""
    results: dict[str, str] = {}
    for name, check in CHECKS.items():
        breaker = BREAKERS.get(name)
        if breaker is not None and breaker.is_open:
            results[name] = "unavailable"
            continue
        try:
            check()
        except Exception as error:  # any failure means "down"; the kind goes to the log
            log.warning("healthz: %s unreachable (%s)", name, type(error).__name__)
            results[name] = "unavailable"
            if breaker is not None:
                breaker.trip(error)
        else:
            results[name] = "ok"
    return results


class _Verdict:
    """The last checks' results in this process, and when they were taken."""

    def __init__(self) -> None:
        self.checks: dict[str, str] | None = None
        self.taken_at = 0.0
        self.lock = threading.Lock()

    def current(self) -> dict[str, str]:
        fresh = time.monotonic() - self.taken_at < settings.REGISTRY_HEALTH_VERDICT_SECONDS
        if self.checks is not None and fresh:
            return self.checks
        if not self.lock.acquire(blocking=self.checks is None):
            return self.checks or {}  # another request is checking: the last verdict
        try:
            self.checks, self.taken_at = run_checks(), time.monotonic()
        finally:
            self.lock.release()
        return self.checks


verdict = _Verdict()


@never_cache
@require_safe  # GET, and HEAD for the probes that send it
def healthz(request: HttpRequest) -> JsonResponse:
    checks = verdict.current()
    healthy = all(state == "ok" for state in checks.values())
    body = {"status": "ok" if healthy else "unavailable", "checks": checks}
    return JsonResponse(body, status=200 if healthy else 503)
