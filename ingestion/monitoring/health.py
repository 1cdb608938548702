"""``GET /healthz/pipeline``: are ingestions moving? For monitors, not load balancers.

200 when at least one worker's heartbeat is young enough and the oldest queued ingestion is
younger than ``REGISTRY_PIPELINE_MAX_QUEUE_AGE_SECONDS``; otherwise 503. Anyone is told only
that (``{"status": "ok"}`` or ``"unavailable"``), from a verdict at most
``REGISTRY_HEALTH_VERDICT_SECONDS`` old, so the open URL costs the database one statement
per process every few seconds however often it is asked, and tells no one the queue's
depth. With ``REGISTRY_METRICS_TOKEN`` (as /metrics) it answers with every check and figure,
freshly taken. ``/healthz`` stays the web's own liveness (config.health).
"""

from __future__ import annotations

import hmac
import logging
import time
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from celery import current_app as celery_app
from django.conf import settings
from django.db.models import Count, Min, Q
from django.http import HttpRequest, JsonResponse
from django.utils import timezone
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET

from ingestion.models import Ingestion
from ingestion.monitoring.heartbeat import workers_alive
from ingestion.monitoring.probe_log import noted

log = logging.getLogger(__name__)

QUEUED, PROCESSING = Ingestion.Status.QUEUED, Ingestion.Status.PROCESSING


@dataclass(frozen=True, slots=True)
class QueueState:
    queued: int
    processing: int
    oldest_queued_seconds: float  # 0 when nothing is queued
    oldest_single_seconds: float = 0.0  # the oldest queued single-course ingestion's wait


def queue_state() -> QueueState:
    """One statement over the unfinished ingestions only (their partial index)."""
    found = Ingestion.objects.filter(status__in=[QUEUED, PROCESSING]).aggregate(
        queued=Count("id", filter=Q(status=QUEUED)),
        processing=Count("id", filter=Q(status=PROCESSING)),
        oldest=Min("queued_at", filter=Q(status=QUEUED)),
        oldest_single=Min("queued_at", filter=Q(status=QUEUED, kind=Ingestion.Kind.SINGLE)),
    )
    now = timezone.now()
    return QueueState(
        found["queued"],
        found["processing"],
        _age(found["oldest"], now),
        _age(found["oldest_single"], now),
    )


def _age(queued_at: datetime | None, now: datetime) -> float:
    return max((now - queued_at).total_seconds(), 0.0) if queued_at is not None else 0.0


def worker_count() -> int | None:
    if celery_app.conf.task_always_eager:
        return 1  # embedded default: the web process runs the tasks itself
    try:
        return workers_alive()
    except Exception as error:
        log.warning("healthz/pipeline: heartbeats unreadable (%s)", type(error).__name__)
        return None


def pipeline_checks() -> tuple[bool, dict[str, Any]]:
    workers = worker_count()
    queue = queue_state()
    max_age = settings.REGISTRY_PIPELINE_MAX_QUEUE_AGE_SECONDS
    checks = {
        "worker": "ok" if workers else ("silent" if workers == 0 else "unknown"),
        "queue": "ok" if queue.oldest_queued_seconds < max_age else "behind",
    }
    body = {
        "status": "ok",
        "checks": checks,
        "workers_alive": workers,
        "queued": queue.queued,
        "oldest_queued_seconds": round(queue.oldest_queued_seconds, 1),
    }
    healthy = all(state == "ok" for state in checks.values())
    if not healthy:
        body["status"] = "unavailable"
    return healthy, body


def authorised(request: HttpRequest) -> bool:
    """Whether the request bears ``REGISTRY_METRICS_TOKEN``: /metrics, and the details here."""
    token = settings.REGISTRY_METRICS_TOKEN
    if not token:
        return False
    given = request.headers.get("Authorization", "")
    return hmac.compare_digest(given.encode(), f"Bearer {token}".encode())


class _PublicVerdict:
    """The last public verdict in this process, and when it was taken."""

    def __init__(self) -> None:
        self.healthy: bool | None = None
        self.body: dict[str, Any] = {}
        self.taken_at = 0.0

    def current(self) -> bool:
        age = time.monotonic() - self.taken_at
        if self.healthy is None or age >= settings.REGISTRY_HEALTH_VERDICT_SECONDS:
            self.healthy, self.body = pipeline_checks()
            self.taken_at = time.monotonic()
        return self.healthy


public_verdict = _PublicVerdict()


@never_cache
@require_GET
def healthz_pipeline(request: HttpRequest) -> JsonResponse:
    if authorised(request):
        healthy, body = pipeline_checks()
        return noted(JsonResponse(body, status=200 if healthy else 503), body)
    healthy = public_verdict.current()
    status = "ok" if healthy else "unavailable"
    answer = JsonResponse({"status": status}, status=200 if healthy else 503)
    return noted(answer, public_verdict.body)
