"""``GET /healthz``: is each part the service needs reachable? Carries no data."""

from __future__ import annotations

import logging
from collections.abc import Callable

from django.core.cache import cache
from django.db import connection
from django.http import HttpRequest, JsonResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET

from config.celery import app as celery_app

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


def run_checks() -> dict[str, str]:
    results: dict[str, str] = {}
    for name, check in CHECKS.items():
        try:
            check()
        except Exception as error:  # any failure means "down"; the kind goes to the log
            log.warning("healthz: %s unreachable (%s)", name, type(error).__name__)
            results[name] = "unavailable"
        else:
            results[name] = "ok"
    return results


@never_cache
@require_GET
def healthz(request: HttpRequest) -> JsonResponse:
    checks = run_checks()
    healthy = all(state == "ok" for state in checks.values())
    body = {"status": "ok" if healthy else "unavailable", "checks": checks}
    return JsonResponse(body, status=200 if healthy else 503)
