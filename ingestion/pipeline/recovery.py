"""What a lost message or a dead worker leaves behind, found again."""

from __future__ import annotations

from datetime import timedelta
from typing import Any
from uuid import UUID

from django.conf import settings
from django.db.models import F, Q
from django.utils import timezone

from ingestion.messaging.publishing import enqueue, singles_message_for
from ingestion.messaging.singles_flag import singles_message_pending
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

    Queued singles are one group: most never had a message of their own, counting on the one
    message for the waiting singles (:mod:`ingestion.messaging.singles_flag`), whose claim
    takes up to ``REGISTRY_CLAIM_SINGLES`` of them and publishes for the next if full. So of
    the lost ones only the oldest is named, and none while that message is on its way (the
    flag is set) or a claim of singles is under way (a single processing under its lease):
    a backlog of singles is drained by one chain of claims, not published again one by one.
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
    single = Q(kind=Ingestion.Kind.SINGLE)
    found = list(
        Ingestion.objects.filter((lost & ~single) | abandoned)
        .order_by("queued_at")
        .values_list("id", flat=True)[:limit]
    )
    if len(found) < limit and not _singles_served(now):
        oldest = (
            Ingestion.objects.filter(lost & single)
            .order_by("queued_at")
            .values_list("id", flat=True)
            .first()
        )
        if oldest is not None:
            found.append(oldest)
    return found


def _singles_served(now: Any) -> bool:
    """A message for the waiting singles is on its way, or a claim of singles is under way
    (when full, it publishes for the next when it ends)."""
    if singles_message_pending():
        return True
    return Ingestion.objects.filter(
        kind=Ingestion.Kind.SINGLE,
        status=Ingestion.Status.PROCESSING,
        lease_expires_at__gte=now,
    ).exists()


def _published_at(ingestion_id: UUID | None) -> Any:
    if ingestion_id is None:
        return None
    return Ingestion.objects.filter(id=ingestion_id).values_list("enqueued_at", flat=True).first()


def ingestions_publish_again(identifiers: list[UUID]) -> None:
    """Publish what :func:`ingestions_to_recover` found; a queued single's message as the
    waiting singles' message, the flag set with it."""
    singles = set(
        Ingestion.objects.filter(
            id__in=identifiers, kind=Ingestion.Kind.SINGLE, status=Ingestion.Status.QUEUED
        ).values_list("id", flat=True)
    )
    for identifier in identifiers:
        if identifier in singles:
            singles_message_for(identifier)
        else:
            enqueue(identifier)
