"""Reads of the registry: who may review what, the review page and the review queue.

A practice's statistics are read in :mod:`registry.statistics.selectors`.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db.models import Prefetch, QuerySet
from django.db.models.expressions import RawSQL

from registry.matching import (
    NO_KEYS,
    Resemblance,
    keys_resemble,
    resembling,
    resembling_sql,
    stored_keys,
)
from registry.models import (
    Attendance,
    Child,
    Membership,
    Practice,
    Record,
    ReviewDecision,
)

# --- Review ------------------------------------------------------------------------------------

RESEMBLING_SHOWN = 20  # records beside the one under review; the admin lists the rest


def practices_reviewed_by(*, user: AbstractBaseUser | AnonymousUser) -> QuerySet[Practice]:
    """The practices whose records ``user`` reviews: every one for a superuser."""
    if not user.is_authenticated or not user.is_active:
        return Practice.objects.none()
    if getattr(user, "is_superuser", False):
        return Practice.objects.all()
    return Practice.objects.filter(
        memberships__user_id=user.pk, memberships__role=Membership.Role.REVIEWER
    )


def may_review(*, user: AbstractBaseUser | AnonymousUser, practice_id: int) -> bool:
    return practices_reviewed_by(user=user).filter(id=practice_id).exists()


def records_reviewable_by(*, user: AbstractBaseUser | AnonymousUser) -> QuerySet[Record]:
    """The records of the practices ``user`` reviews.

    The practices are looked up first, so a reviewer of one practice gets a plain
    ``practice_id = ...``: the planner then reads a list page off an index in order instead
    of sorting the practice's records (a fifth of the registry, for the largest).
    """
    if getattr(user, "is_superuser", False) and user.is_active:
        return Record.objects.all()
    practice_ids = list(practices_reviewed_by(user=user).values_list("id", flat=True))
    if len(practice_ids) == 1:
        return Record.objects.filter(practice_id=practice_ids[0])
    return Record.objects.filter(practice_id__in=practice_ids)


def record_resemblance(*, record: Record, shown: int = RESEMBLING_SHOWN) -> Resemblance:
    """The live records ``record`` resembles: the most relevant ``shown``, and how many.

    Found through the match-key indexes (:mod:`registry.matching`), so it costs the same for
    a cluster of 2 records as for one of 100,000. A voided record has no keys: it resembles
    nothing any more.
    """
    keys = stored_keys([record.pk]).get(record.pk, NO_KEYS)
    return resembling(practice_id=record.practice_id, record_id=record.pk, keys=keys, shown=shown)


def records_compared_with(
    *,
    record: Record,
    user: AbstractBaseUser | AnonymousUser,
    resemblance: Resemblance | None = None,
) -> list[Record]:
    """``record`` first, then the (at most 20) records it resembles, the most relevant first.

    Only records ``user`` may review are shown (resemblance never crosses practices anyway).
    Each comes with its children, attendants and transfers, so a page needs no further query.
    """
    if resemblance is None:
        resemblance = record_resemblance(record=record)
    order = {record_id: i for i, record_id in enumerate([record.pk, *resemblance.record_ids])}
    records = (
        records_reviewable_by(user=user)
        .filter(id__in=list(order), practice_id=record.practice_id)
        .select_related("merged_into")
        .prefetch_related(
            Prefetch("children", queryset=Child.objects.order_by("birth_order")),
            Prefetch(
                "attendances",
                queryset=Attendance.objects.select_related("provider").order_by(
                    "kind", "provider__display_name", "provider__stable_id"
                ),
            ),
            "transfers",
        )
    )
    return sorted(records, key=lambda other: order[other.pk])


def records_resembling(*, record_id: uuid.UUID) -> QuerySet[Record]:
    """Every live record resembling ``record_id``, unbounded: for the admin's full list."""
    sql, parameters = resembling_sql(record_id)
    return Record.objects.filter(id__in=RawSQL(sql, parameters))  # noqa: S611


def record_resembles(*, record: Record, other: Record) -> bool:
    """Would ``record`` be flagged against ``other``, as they stand on file?"""
    keys = stored_keys([record.pk, other.pk])
    return keys_resemble(keys.get(record.pk, NO_KEYS), keys.get(other.pk, NO_KEYS))


def review_decisions_for(*, record: Record) -> QuerySet[ReviewDecision]:
    return ReviewDecision.objects.filter(record=record).select_related("survivor")


# --- The review queue --------------------------------------------------------------------------

# Counting stops here: a page never counts an unbounded number of rows to print one figure.
REVIEW_QUEUE_CAP = 1000


@dataclass(frozen=True)
class QueueSize:
    """How many records await review, counted up to a cap: "3", or "1000+" past it."""

    count: int
    capped: bool

    def __str__(self) -> str:
        return f"{self.count:,}+" if self.capped else f"{self.count:,}"


def review_queue(
    *, user: AbstractBaseUser | AnonymousUser, practice: Practice | None = None
) -> QuerySet[Record]:
    """Live records flagged as suspected duplicates that ``user`` reviews (one practice's)."""
    records = records_reviewable_by(user=user).filter(suspected_duplicate=True, voided=False)
    return records if practice is None else records.filter(practice=practice)


def review_queue_size(
    *,
    user: AbstractBaseUser | AnonymousUser,
    practice: Practice | None = None,
    cap: int = REVIEW_QUEUE_CAP,
) -> QueueSize:
    """The queue's length, counted over at most ``cap + 1`` rows of the queue's index."""
    queue = review_queue(user=user, practice=practice)
    counted = queue.order_by().values("id")[: cap + 1].count()
    return QueueSize(min(counted, cap), counted > cap)
