"""Reads of the registry: who may review what, the review page, and a practice's statistics."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db.models import Count, Prefetch, Q, QuerySet
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
    Provider,
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


# --- Statistics --------------------------------------------------------------------------------

# Spec 2.3: role "other" is excluded from attendant-type benchmarks.
ATTENDANT_ROLES: list[str] = [
    role.value
    for role in (
        Provider.Role.MIDWIFE,
        Provider.Role.DOULA,
        Provider.Role.NURSE,
        Provider.Role.ASSISTANT,
    )
]
LOW_BIRTH_WEIGHT_GRAMS = 2500
PRETERM_WEEKS = 37
LOW_APGAR = 7


@dataclass(frozen=True)
class RateDefinition:
    """A rate: its JSON key, and the counts it divides, in words for people."""

    name: str
    label: str
    numerator: str  # the key of its numerator among the counts
    denominator: str  # likewise
    numerator_is: str
    denominator_is: str

    @property
    def counts_key(self) -> str:
        """Where the rate's numerator and denominator sit beside it in the JSON."""
        return self.name.removesuffix("_rate")


RATES: list[RateDefinition] = [
    RateDefinition(
        "low_birth_weight_rate",
        "Low birth weight (under 2,500 g)",
        "low_birth_weight",
        "known_birth_weight",
        "live-born children weighing under 2,500 g",
        "live-born children with a known birth weight",
    ),
    RateDefinition(
        "preterm_rate",
        "Preterm (under 37 weeks)",
        "preterm",
        "known_gestational_age",
        "live-born children born before 37 completed weeks",
        "live-born children with a known gestational age",
    ),
    RateDefinition(
        "apgar5_below_7_rate",
        "5-minute Apgar below 7",
        "apgar5_below_7",
        "known_apgar5",
        "live-born children with a 5-minute Apgar score under 7",
        "live-born children with a known 5-minute Apgar score",
    ),
    RateDefinition(
        "consent_granted_rate",
        "Consent granted",
        "consent_granted",
        "births",
        "births (courses of care) whose consent was recorded as granted",
        "births (courses of care)",
    ),
]


def stats_for_practice(
    *, practice: Practice, year_from: int | None = None, year_to: int | None = None
) -> dict[str, Any]:
    """The practice's figures over its non-voided records, overall and per attendant role.

    ``year_from``/``year_to`` (inclusive) filter on the record's birth year; with either set,
    records without a known birth year are left out. The database counts everything in four
    aggregate queries, whatever the number of records; rates are worked out here from those
    counts, and are ``None`` when there is nothing to divide by.
    """

    def live_records(prefix: str = "") -> Q:
        conditions: dict[str, Any] = {f"{prefix}practice": practice, f"{prefix}voided": False}
        if year_from is not None:
            conditions[f"{prefix}birth_year__gte"] = year_from
        if year_to is not None:
            conditions[f"{prefix}birth_year__lte"] = year_to
        return Q(**conditions)

    overall = Record.objects.filter(live_records()).aggregate(**_record_counts("", "id"))
    overall |= Child.objects.filter(live_records("record__")).aggregate(**_child_counts())
    per_role: dict[str, dict[str, int]] = {}
    # A record attended by a midwife and a nurse counts for both; one attended by two
    # midwives counts once for midwives: hence the distinct counts.
    attended = Attendance.objects.filter(live_records("record__"), _attended_by_benchmarked_role())
    for row in attended.values("provider__role").annotate(
        **_record_counts("record__", "record", distinct=True)
    ):
        counts: dict[str, Any] = dict(row)
        per_role[counts.pop("provider__role")] = counts
    children = Child.objects.filter(
        live_records("record__"), _attended_by_benchmarked_role("record__attendances__")
    )
    for child_row in children.values("record__attendances__provider__role").annotate(
        **_child_counts(distinct=True)
    ):
        counts = dict(child_row)
        per_role.setdefault(counts.pop("record__attendances__provider__role"), {}).update(counts)
    return {
        "practice": practice.slug,
        "year_from": year_from,
        "year_to": year_to,
        **_figures(overall),
        "by_attendant_role": {role: _figures(per_role.get(role, {})) for role in ATTENDANT_ROLES},
        "definitions": {
            rate.name: {"numerator": rate.numerator_is, "denominator": rate.denominator_is}
            for rate in RATES
        },
    }


def _attended_by_benchmarked_role(prefix: str = "") -> Q:
    return Q(
        **{
            f"{prefix}kind": Attendance.Kind.ATTENDED,
            f"{prefix}provider__role__in": ATTENDANT_ROLES,
        }
    )


def _record_counts(prefix: str, field: str, distinct: bool = False) -> dict[str, Count]:
    return {
        "births": Count(field, distinct=distinct),
        "suspected_duplicates": Count(
            field, distinct=distinct, filter=Q(**{f"{prefix}suspected_duplicate": True})
        ),
        "consent_granted": Count(
            field, distinct=distinct, filter=Q(**{f"{prefix}consent_granted": True})
        ),
    }


def _child_counts(distinct: bool = False) -> dict[str, Count]:
    live = Q(outcome=Child.Outcome.LIVE_BIRTH)

    def count(condition: Q) -> Count:
        return Count("id", distinct=distinct, filter=condition)

    return {
        "live_births": count(live),
        "fetal_deaths": count(Q(outcome=Child.Outcome.FETAL_DEATH)),
        "low_birth_weight": count(live & Q(birth_weight_grams__lt=LOW_BIRTH_WEIGHT_GRAMS)),
        "known_birth_weight": count(live & Q(birth_weight_grams__isnull=False)),
        "preterm": count(live & Q(gestational_age_weeks__lt=PRETERM_WEEKS)),
        "known_gestational_age": count(live & Q(gestational_age_weeks__isnull=False)),
        "apgar5_below_7": count(live & Q(apgar_5__lt=LOW_APGAR)),
        "known_apgar5": count(live & Q(apgar_5__isnull=False)),
    }


def _figures(counts: dict[str, int]) -> dict[str, Any]:
    """The published figures from the counts: every rate with its numerator and denominator."""

    def count(name: str) -> int:
        return counts.get(name) or 0

    figures: dict[str, Any] = {
        "births": count("births"),
        "live_births": count("live_births"),
        "fetal_deaths": count("fetal_deaths"),
        "suspected_duplicates": count("suspected_duplicates"),
    }
    for rate in RATES:
        numerator, denominator = count(rate.numerator), count(rate.denominator)
        figures[rate.name] = round(numerator / denominator, 4) if denominator else None
        figures[rate.counts_key] = {"numerator": numerator, "denominator": denominator}
    return figures


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
