"""Review of suspected duplicates: keep, void or merge a record (spec section 3, last line).

Every decision takes the practice lock (:func:`registry.locks.lock_practice`) inside a
transaction and re-reads the record ``FOR UPDATE`` before deciding, exactly as the ingestion
pipeline does before it applies records. A review and an ingestion of the same practice
therefore happen one after the other, and each sees what the other did: a record the
pipeline voided a moment ago cannot be merged, a merge survivor cannot be voided under it.

Each decision writes, in the same transaction, the change itself, a :class:`RecordVersion`
row for the record's history, and a :class:`ReviewDecision` saying who decided what and
when. A merge copies nothing from one record to the other: the merged record is voided and
points at its survivor, and the survivor is left as it was.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.utils import timezone

from registry.locks import lock_practice
from registry.matching import match_keys_forget
from registry.models import Record, RecordVersion, ReviewDecision
from registry.selectors import may_review
from registry.statistics.counts import counts_kept

Action = ReviewDecision.Action


class ReviewError(Exception):
    """The decision does not apply to the record as it now stands; the message says why."""


def record_keep(*, record: Record, by: User, note: str = "") -> ReviewDecision:
    """Not a duplicate after all: clear the flag and keep the record as it is."""
    with transaction.atomic():
        current = _locked(record, by)
        if current.voided:
            raise ReviewError(f"{_name(current)} is voided; there is nothing to keep.")
        if not current.suspected_duplicate:
            raise ReviewError(f"{_name(current)} is not flagged as a suspected duplicate.")
        current.suspected_duplicate = False
        return _decide(current, Action.KEEP, RecordVersion.Change.REVIEWED, by=by, note=note)


def record_void(*, record: Record, by: User, note: str = "") -> ReviewDecision:
    """Void the record: it drops out of statistics and duplicate matching at once."""
    with transaction.atomic():
        current = _locked(record, by)
        _void(current)
        return _decide(current, Action.VOID, RecordVersion.Change.VOIDED, by=by, note=note)


def record_merge(*, record: Record, survivor: Record, by: User, note: str = "") -> ReviewDecision:
    """Merge ``record`` into ``survivor``: void it and point it at the survivor; copy nothing.

    The survivor must be another non-voided record of the same practice.
    """
    if survivor.pk == record.pk:
        raise ReviewError("A record cannot be merged into itself.")
    if survivor.practice_id != record.practice_id:
        raise ReviewError("The survivor must be a record of the same practice.")
    with transaction.atomic():
        current = _locked(record, by)
        kept = Record.objects.select_for_update().get(pk=survivor.pk)
        if kept.voided:
            raise ReviewError(f"{_name(kept)} is voided, so it cannot be the survivor.")
        _void(current)
        current.merged_into = kept
        return _decide(
            current, Action.MERGE, RecordVersion.Change.VOIDED, by=by, note=note, survivor=kept
        )


def reviewer_admin_access_grant(*, user: User) -> bool:
    """Let a reviewer into the Django admin (``is_staff``); True when that changed anything.

    Staff status only opens the door: what a reviewer sees there is decided per practice by
    their reviewer memberships (see ``registry.review.admin.RecordAdmin``).
    """
    if user.is_staff:
        return False
    user.is_staff = True
    user.save(update_fields=["is_staff"])
    return True


# --- Steps shared by the decisions --------------------------------------------------------------


def _locked(record: Record, by: User) -> Record:
    """The record as it stands now, row-locked under its practice's lock."""
    if not may_review(user=by, practice_id=record.practice_id):
        raise PermissionDenied("Only reviewers of the record's practice review its records.")
    lock_practice(record.practice_id)
    return Record.objects.select_for_update().get(pk=record.pk)


def _void(record: Record) -> None:
    if record.voided:
        raise ReviewError(f"{_name(record)} is already voided.")
    record.voided, record.voided_at = True, timezone.now()
    record.suspected_duplicate = False  # the decision resolves the flag
    match_keys_forget(record_id=record.pk)  # a voided record resembles nothing


def _decide(
    record: Record,
    action: str,
    change: str,
    *,
    by: User,
    note: str,
    survivor: Record | None = None,
) -> ReviewDecision:
    now = timezone.now()
    record.updated_at = now
    _save_counted(record)
    RecordVersion.objects.create(
        record=record,
        version=record.version,
        change=change,
        values=_snapshot(record, action),
        created_at=now,
    )
    return ReviewDecision.objects.create(
        record=record,
        action=action,
        survivor=survivor,
        decided_by=by,
        decided_by_username=by.get_username(),
        decided_at=now,
        record_version=record.version,
        note=note.strip(),
    )


def _save_counted(record: Record) -> None:
    """Save the decision's change; the statistics' counts follow in the same transaction."""
    with counts_kept(practice_id=record.practice_id, record_ids=[record.pk]):
        record.save(
            update_fields=[
                "voided",
                "voided_at",
                "suspected_duplicate",
                "merged_into",
                "updated_at",
            ]
        )


def _snapshot(record: Record, action: str) -> dict[str, Any]:
    """What the review changed, for the record's history (its masked facts are unchanged)."""
    return {
        "voided": record.voided,
        "suspected_duplicate": record.suspected_duplicate,
        "merged_into": str(record.merged_into_id) if record.merged_into_id else None,
        "review": action,
    }


def _name(record: Record) -> str:
    return f"Record {record.external_record_id}"
