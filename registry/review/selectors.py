"""Reads of the duplicate review that need more than a one-line queryset."""

from __future__ import annotations

import uuid
from typing import Any

from django.db.models import QuerySet

from registry.models import Record
from registry.selectors import record_resemblance, record_resembles, records_reviewable_by


def merge_candidates(record: Record, user: Any, chosen: str | None = None) -> QuerySet[Record]:
    """The records ``record`` may be merged into: the live ones shown beside it, and the
    one chosen (from the full list of resembling records) when it does resemble it."""
    candidates = set(record_resemblance(record=record).record_ids)
    if chosen and is_uuid(chosen) and uuid.UUID(chosen) not in candidates:
        other = records_reviewable_by(user=user).filter(pk=chosen).first()
        if other is not None and record_resembles(record=record, other=other):
            candidates.add(other.pk)
    return (
        records_reviewable_by(user=user)
        .filter(pk__in=candidates, voided=False, practice_id=record.practice_id)
        .order_by("created_at", "id")
    )


def is_uuid(value: str) -> bool:
    try:
        uuid.UUID(value)
    except ValueError:
        return False
    return True
