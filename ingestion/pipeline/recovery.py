"""What a lost message or a dead worker leaves behind, found again."""

from __future__ import annotations

from datetime import timedelta
from typing import Any
from uuid import UUID

from django.conf import settings
from django.db.models import F, Q
from django.utils import timezone

from ingestion.models import Ingestion


def ingestion_release(ingestion_id: UUID) -> None:
    """Let the lease run out now, so a retry or the recovery can claim it at once."""
    Ingestion.objects.filter(id=ingestion_id, status=Ingestion.Status.PROCESSING).update(
        lease_expires_at=timezone.now()
    )


def ingestions_to_recover(limit: int = 500, *, oldest_waiting: UUID | None = None) -> list[UUID]:
    """Queued ones whose message is lost, and processing ones whose lease has run out.

    A queued ingestion's message is lost when publishing failed (``enqueued_at`` cleared),
    or when it was published ``REGISTRY_REQUEUE_AFTER_SECONDS`` ago and, if the broker says
    which ingestion's message is the oldest still waiting (``oldest_waiting``,
    :mod:`ingestion.messaging.queue_tail`), well before that one: the queue is consumed in
    order, so anything published before it has left the queue, and if still queued, was
    lost. Under a backlog, messages still waiting are not published again.

    A processing one whose lease ran out is abandoned, unless it was handed back after a turn
    (:mod:`ingestion.pipeline.turns`: ``enqueued_at`` set with the lease's end) and its
    message, published then, is not lost by the same rule.
    """
    now = timezone.now()
    requeue_before = now - timedelta(seconds=settings.REGISTRY_REQUEUE_AFTER_SECONDS)
    margin = timedelta(seconds=settings.REGISTRY_RECOVERY_GRACE_SECONDS)
    grace = now - margin
    published = Q(enqueued_at__lt=requeue_before)
    waiting_since = _published_at(oldest_waiting)  # None: unknown, so by age alone
    if waiting_since is not None:
        published &= Q(enqueued_at__lt=waiting_since - margin)
    lost = Q(status=Ingestion.Status.QUEUED) & (
        Q(enqueued_at__isnull=True, queued_at__lt=grace) | published
    )
    handed_back = Q(enqueued_at__gte=F("lease_expires_at")) & ~published
    abandoned = Q(status=Ingestion.Status.PROCESSING, lease_expires_at__lt=now) & ~handed_back
    return list(
        Ingestion.objects.filter(lost | abandoned)
        .order_by("queued_at")
        .values_list("id", flat=True)[:limit]
    )


def _published_at(ingestion_id: UUID | None) -> Any:
    if ingestion_id is None:
        return None
    return Ingestion.objects.filter(id=ingestion_id).values_list("enqueued_at", flat=True).first()
