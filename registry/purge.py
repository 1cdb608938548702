"""Deleting a practice's records and everything derived from them, in bounded batches.

Used by a sandbox's reset (:mod:`ingestion.sandbox`). Each batch is one transaction under the
practice lock (:func:`registry.locks.lock_practice`), as every writer of records holds it, so
the pipeline and the review actions wait for a batch and never see half of one. A batch
takes its records out of the kept counts as it deletes them (:func:`counts_kept`), so the
counts equal a recount after every batch, not only at the end.
"""

from __future__ import annotations

from django.db import transaction
from django.db.models import Exists, OuterRef, Q

from registry.locks import lock_practice
from registry.models import (
    Attendance,
    BirthCount,
    Child,
    MatchKey,
    Provider,
    ReceivedCount,
    Record,
    RecordVersion,
    ReviewDecision,
    Transfer,
)
from registry.statistics.counts import counts_kept

DERIVED = (Child, Attendance, Transfer, MatchKey, RecordVersion)


def records_purge_batch(*, practice_id: int, size: int) -> int:
    """Delete up to ``size`` of the practice's records with all that hangs on them.

    Returns how many records went: 0 when none is left. Children, attendances, transfers,
    match keys, versions and review decisions go with their records; a merge pointing at a
    record of the batch is undone first (it is about to go as well).
    """
    with transaction.atomic():
        lock_practice(practice_id)
        ids = list(
            Record.objects.filter(practice_id=practice_id)
            .order_by()
            .values_list("id", flat=True)[:size]
        )
        if not ids:
            return 0
        Record.objects.filter(merged_into_id__in=ids).update(merged_into=None)
        ReviewDecision.objects.filter(Q(record_id__in=ids) | Q(survivor_id__in=ids)).delete()
        with counts_kept(practice_id=practice_id, record_ids=ids):
            for model in DERIVED:
                model.objects.filter(record_id__in=ids).delete()
            Record.objects.filter(id__in=ids).delete()
    return len(ids)


def providers_purge_batch(*, practice_id: int, size: int) -> int:
    """Delete up to ``size`` of the practice's providers that no attendance names."""
    with transaction.atomic():
        lock_practice(practice_id)
        attended = Attendance.objects.filter(provider_id=OuterRef("id"))
        ids = list(
            Provider.objects.filter(practice_id=practice_id)
            .filter(~Exists(attended))
            .order_by()
            .values_list("id", flat=True)[:size]
        )
        Provider.objects.filter(id__in=ids).delete()
    return len(ids)


def counts_purge(*, practice_id: int) -> None:
    """Drop the practice's kept counts once it has no records (they are all zero by then)."""
    with transaction.atomic():
        lock_practice(practice_id)
        if not Record.objects.filter(practice_id=practice_id).exists():
            BirthCount.objects.filter(practice_id=practice_id).delete()
            ReceivedCount.objects.filter(practice_id=practice_id).delete()
