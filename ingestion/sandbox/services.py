"""Resetting a sandbox practice: every row it holds goes, in bounded batches."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass

from django.db import transaction

from ingestion.models import Ingestion, OutcomeChunk, StagedChunk
from registry.models import Practice
from registry.purge import counts_purge, providers_purge_batch, records_purge_batch
from registry.statistics.submissions import submissions_rebuild

log = logging.getLogger(__name__)

BATCH = 500  # rows of one kind per transaction: each holds its locks briefly


class NotASandbox(Exception):
    """Only a sandbox practice's data may be deleted wholesale."""

    def __init__(self, practice: Practice) -> None:
        super().__init__(
            f"{practice.slug} is not a sandbox practice: its data is real and is never "
            "deleted wholesale."
        )


@dataclass(frozen=True)
class SandboxReset:
    """How many of each were deleted."""

    ingestions: int
    records: int
    providers: int

    @property
    def nothing(self) -> bool:
        return not (self.ingestions or self.records or self.providers)


def sandbox_reset(*, practice: Practice, by: str = "-", batch: int = BATCH) -> SandboxReset:
    """Delete all of a sandbox's data; :class:`NotASandbox` for any other practice.

    Ingestions go first, so a worker still processing one stops at its next chunk (it finds
    its ingestion gone) and what it applied meanwhile goes with the records. Records go under
    the practice lock, ``batch`` at a time with what hangs on them (:mod:`registry.purge`).
    Something submitted while the reset runs may land after it.
    """
    if not Practice.objects.filter(pk=practice.pk, sandbox=True).exists():
        raise NotASandbox(practice)
    ingestions = _repeat(lambda: _ingestions_purge_batch(practice.pk, batch))
    records = _repeat(lambda: records_purge_batch(practice_id=practice.pk, size=batch))
    providers = _repeat(lambda: providers_purge_batch(practice_id=practice.pk, size=batch))
    counts_purge(practice_id=practice.pk)
    done = SandboxReset(ingestions=ingestions, records=records, providers=providers)
    log.info(
        "sandbox %s reset by %s: %d ingestions, %d records, %d providers deleted",
        practice.slug,
        by,
        done.ingestions,
        done.records,
        done.providers,
    )
    return done


def _repeat(step: Callable[[], int]) -> int:
    total = 0
    while done := step():
        total += done
    return total


def _ingestions_purge_batch(practice_id: int, size: int) -> int:
    """Delete up to ``size`` of the practice's ingestions with their chunks and receipts, and
    what they counted in the days the practice sent (a rebuild of its few kept days).

    The ingestion rows are locked first, as a worker applying a chunk locks its ingestion
    first: the two take turns instead of deadlocking over the chunk rows. The practice lock
    (taken by the rebuild) comes after them, as in the pipeline.
    """
    with transaction.atomic():
        ids = list(
            Ingestion.objects.select_for_update()
            .filter(practice_id=practice_id)
            .order_by("id")
            .values_list("id", flat=True)[:size]
        )
        StagedChunk.objects.filter(ingestion_id__in=ids).delete()
        OutcomeChunk.objects.filter(ingestion_id__in=ids).delete()
        Ingestion.objects.filter(id__in=ids).delete()
        if ids:
            submissions_rebuild(practice_id=practice_id)
    return len(ids)
