"""Reads of the registry: who may review what, the review page, and a practice's statistics."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db.models import Count, Prefetch, Q, QuerySet, Sum
from django.db.models.expressions import RawSQL

from registry.benchmarks import FIGURES, Cell, benchmarks, trend
from registry.counts import ALL, ATTENDANT_ROLES, year_cells
from registry.matching import (
    NO_KEYS,
    Resemblance,
    keys_resemble,
    resembling,
    resembling_sql,
    stored_keys,
)
from registry.models import (
    COUNT_FIELDS,
    Attendance,
    BirthCount,
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


# --- Statistics --------------------------------------------------------------------------------


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
    records without a known birth year are left out. The figures are sums of the counts kept
    as records change (:mod:`registry.counts`): one small query, however many records.
    Rates are worked out here from those counts, and are ``None`` with nothing to divide by.
    """
    cells = BirthCount.objects.filter(year_cells(year_from, year_to), practice=practice)
    per_group: dict[str, dict[str, int]] = {}
    for row in cells.values("group").annotate(**{name: Sum(name) for name in COUNT_FIELDS}):
        counts: dict[str, Any] = dict(row)
        per_group[counts.pop("group")] = counts
    return {
        "practice": practice.slug,
        "year_from": year_from,
        "year_to": year_to,
        **_figures(per_group.get(ALL, {})),
        "by_attendant_role": {role: _figures(per_group.get(role, {})) for role in ATTENDANT_ROLES},
        "definitions": {
            rate.name: {"numerator": rate.numerator_is, "denominator": rate.denominator_is}
            for rate in RATES
        },
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


# --- Benchmarks --------------------------------------------------------------------------------

# The counts the benchmarked figures divide (registry.benchmarks.FIGURES).
BENCHMARK_COUNTS: list[str] = sorted(
    {name for figure in FIGURES for name in (figure.numerator, figure.denominator)}
)


def benchmarks_for_practice(
    *, practice: Practice, year_from: int | None = None, year_to: int | None = None
) -> dict[str, Any]:
    """``benchmarks`` and ``trend``: the practice beside the whole registry, per role.

    Two queries over the kept counts (a few rows per practice, birth year and group): the
    cells of the range with the viewer's and the other practices' counts, and how many
    other practices contribute over the whole range. What may be shown is decided by the
    pure rules of :mod:`registry.benchmarks`.
    """
    rows = BirthCount.objects.filter(year_cells(year_from, year_to))
    cells = _benchmark_cells(rows, practice)
    years = {year for _, year in cells}
    return {
        "benchmarks": benchmarks(
            cells=cells,
            years=years,
            contributors=_contributors(rows.exclude(practice=practice)),
            roles=ATTENDANT_ROLES,
        ),
        "trend": trend(cells=cells, years=years, roles=ATTENDANT_ROLES),
    }


def _benchmark_cells(rows: QuerySet[BirthCount], practice: Practice) -> dict[tuple[str, int], Cell]:
    own, others = Q(practice=practice), ~Q(practice=practice)
    sums: dict[str, Any] = {}
    for name in BENCHMARK_COUNTS:
        sums[f"own__{name}"] = Sum(name, filter=own, default=0)
        sums[f"others__{name}"] = Sum(name, filter=others, default=0)
        sums[f"contributors__{name}"] = Count("id", filter=others & Q(**{f"{name}__gt": 0}))
    cells = {}
    for row in rows.values("group", "birth_year").annotate(**sums):
        parts: dict[str, dict[str, int]] = {"own": {}, "others": {}, "contributors": {}}
        values: dict[str, Any] = dict(row)
        for key, value in values.items():
            side, _, name = key.partition("__")
            if name:
                parts[side][name] = value
        cells[(values["group"], values["birth_year"])] = Cell(**parts)
    return cells


def _contributors(rows: QuerySet[BirthCount]) -> dict[tuple[str, str], int]:
    """(group, count) -> how many of these practices have a non-zero count in the range."""
    counts = {
        name: Count("practice", distinct=True, filter=Q(**{f"{name}__gt": 0}))
        for name in BENCHMARK_COUNTS
    }
    result: dict[tuple[str, str], int] = {}
    for row in rows.values("group").annotate(**counts):
        values: dict[str, Any] = dict(row)
        result |= {(values["group"], name): values[name] for name in BENCHMARK_COUNTS}
    return result
