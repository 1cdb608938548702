"""``GET /healthz/pipeline``: are ingestions moving? For monitors, not load balancers.

200 when at least one worker's heartbeat is young enough and the oldest queued ingestion is
younger than ``REGISTRY_PIPELINE_MAX_QUEUE_AGE_SECONDS``; otherwise 503, saying which. It
needs no key and shows figures only: how many workers, how old the oldest queued ingestion.
``/healthz`` stays the web's own liveness (config.health).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.db.models import Count, Min, Q
from django.http import HttpRequest, JsonResponse
from django.utils import timezone
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET

from config.celery import app as celery_app
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


def queue_state() -> QueueState:
    """One statement over the unfinished ingestions only (their partial index)."""
    found = Ingestion.objects.filter(status__in=[QUEUED, PROCESSING]).aggregate(
        queued=Count("id", filter=Q(status=QUEUED)),
        processing=Count("id", filter=Q(status=PROCESSING)),
        oldest=Min("queued_at", filter=Q(status=QUEUED)),
    )
    oldest = found["oldest"]
    age = (timezone.now() - oldest).total_seconds() if oldest is not None else 0.0
    return QueueState(found["queued"], found["processing"], max(age, 0.0))


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


@never_cache
@require_GET
def healthz_pipeline(request: HttpRequest) -> JsonResponse:
    healthy, body = pipeline_checks()
    return noted(JsonResponse(body, status=200 if healthy else 503), body)
