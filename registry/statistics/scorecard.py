"""A practice's scorecard: month by month over the last 24 months, what it sent and how well,
each figure beside the registry's under the benchmarks' suppression rules.

The figures (docs/registry-office.md, "The scorecard"):

* ``courses``: course entries received (:class:`registry.models.SubmissionCount`), by the
  day each ingestion was received;
* ``rejected``: the share of those courses rejected;
* ``warned``, ``within_10_days`` and the five ``completeness`` items: the data-quality
  figures of :mod:`registry.statistics.quality`, over the live records first received in the
  month (:class:`registry.models.ReceivedCount`).

The registry's side of a month is a benchmark over one cell, the month, tested exactly as a
birth year's cell is (:func:`registry.statistics.benchmarks.benchmarks`): at least three
other practices contribute, and their part of the numerator and of the denominator is 0 or
at least 10 from at least three practices. *Other* practices are those the viewer belongs to
none of, so someone in two practices comparing their two scorecards learns nothing the rules
hide, and a registry of three practices or fewer shows a practice no registry figure at all.

One more rule, because the statistics page shows the registry's sums of the same kept counts
over all time (by birth year): the months of the received counts not shown, together with
everything received before the 24 months, are one *remainder* that subtracting the months
shown from that total would reveal. So per count, the remainder must itself be publishable
(0, or at least 10 from at least three other practices); while it is not, the oldest month
still shown is hidden too (:func:`hidden_months`). The submission counts appear on no other
page a practice sees, so their months stand alone.

Two queries, one per table, each grouped by month: the practice's own side, the viewer's
other practices and every other practice, summed apart (:func:`scorecard_for_practice`).
Everything else here is pure.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from dataclasses import dataclass
from datetime import date
from typing import Any

from django.db.models import Case, Count, DateField, Q, QuerySet, Sum, Value, When
from django.db.models.functions import TruncMonth

from registry.models import Practice, ReceivedCount, SubmissionCount
from registry.statistics.benchmarks import (
    ALL,
    EMPTY,
    MIN_PRACTICES,
    Cell,
    Cells,
    Figure,
    benchmarks,
    publishable,
)
from registry.statistics.quality import COMPLETENESS

MONTHS = 24
BEFORE = 0  # the cell of everything received before the months shown

COURSES = Figure("courses", "Courses received", "courses", "courses", numerator_is_base=True)
REJECTED = Figure("rejected", "Rejected", "rejected", "courses")
WARNED = Figure("warned", "Drew a warning", "with_warning", "births")
TIMELY = Figure("within_10_days", "Within 10 days", "received_within_10_days", "timeliness_known")
SUBMITTED: tuple[Figure, ...] = (COURSES, REJECTED)
RECEIVED: tuple[Figure, ...] = (WARNED, TIMELY, *COMPLETENESS.figures)
FIGURES: tuple[Figure, ...] = (*SUBMITTED, *RECEIVED)
# Lower is better for these; higher for the rest (courses: neither, it is a count).
LOWER_IS_BETTER = {"rejected", "warned"}


def _counts(figures: Iterable[Figure]) -> list[str]:
    return sorted({name for f in figures for name in (f.numerator, f.denominator)})


SUBMITTED_COUNTS = _counts(SUBMITTED)
RECEIVED_COUNTS = _counts(RECEIVED)

DEFINITIONS: dict[str, tuple[str, str]] = {
    "courses": ("course entries received in the month", ""),
    "rejected": ("course entries rejected", "course entries received in the month"),
    "warned": (
        "births whose current version drew a plausibility warning",
        "births first received in the month",
    ),
    "within_10_days": (
        "births first received within 10 days of the birth",
        "births first received in the month whose birth date is known",
    ),
    "birth_weight": ("live-born children with a birth weight", "live-born children"),
    "gestational_age": ("live-born children with a gestational age", "live-born children"),
    "apgar_5": ("live-born children with a 5-minute Apgar score", "live-born children"),
    "attending_provider": (
        "live-born children whose birth names an attending provider",
        "live-born children",
    ),
    "consent_decision": (
        "live-born children whose course of care carries a consent decision",
        "live-born children",
    ),
}


# --- Months ------------------------------------------------------------------------------------


def month_key(day: date) -> int:
    """A month as ``YYYYMM`` (an int, as a birth year is a cell's key)."""
    return day.year * 100 + day.month


def month_label(key: int) -> str:
    return f"{key // 100:04d}-{key % 100:02d}"


def months_ending(last: date, count: int = MONTHS) -> list[int]:
    """The ``count`` months ending with ``last``'s, oldest first."""
    index = last.year * 12 + last.month - 1 - (count - 1)
    return [(i // 12) * 100 + i % 12 + 1 for i in range(index, index + count)]


def first_day(key: int) -> date:
    return date(key // 100, key % 100, 1)


def previous_month(today: date) -> int:
    """The last whole month before ``today``'s (the monthly mail's)."""
    return months_ending(today, 2)[0]


# --- The rules (pure) --------------------------------------------------------------------------


def hidden_months(cells: Cells, months: list[int], count: str) -> set[int]:
    """The months whose registry figures may not use ``count``.

    A month whose cell is not publishable for it; then, oldest first, as many months more as
    it takes for the remainder (those months with :data:`BEFORE`) to be publishable: 0, or
    at least 10 from other practices of which at least three contribute to one of its cells.
    """
    hidden = {m for m in months if not publishable(cells.get((ALL, m), EMPTY), count)}
    shown = [m for m in months if m not in hidden]

    def remainder_publishable() -> bool:
        parts = [cells.get((ALL, m), EMPTY) for m in (BEFORE, *hidden)]
        value = sum(cell.others.get(count, 0) for cell in parts)
        widest = max(cell.contributors.get(count, 0) for cell in parts)
        return value == 0 or (value >= 10 and widest >= MIN_PRACTICES)

    while shown and not remainder_publishable():
        hidden.add(shown.pop(0))
    return hidden


REMAINDER = (
    "Hidden with the months not shown, so that no total on another page, less the months "
    "shown, reveals other practices' part of them."
)


def scorecard(
    *,
    cells: Cells,
    months: list[int],
    withheld: str | None = None,
) -> list[dict[str, Any]]:
    """Per month (newest first): each figure's practice side beside the registry's.

    ``cells``: (``all``, month) -> :class:`Cell` with every count of :data:`FIGURES`, and
    (``all``, :data:`BEFORE`) with the received counts of everything before the months.
    """
    hidden = {count: hidden_months(cells, months, count) for count in RECEIVED_COUNTS}
    rows = []
    for month in reversed(months):
        cell = cells.get((ALL, month), EMPTY)
        figures: dict[str, Any] = {}
        for figure in FIGURES:
            base = figure.base(ALL)
            practices = None if cell.practices is None else {base: cell.practices.get(base[1], 0)}
            shown = benchmarks(
                cells=cells,
                years=[month],
                contributors={base: cell.contributors.get(base[1], 0)},
                roles=[ALL],
                figures=[figure],
                practices=practices,
                withheld=withheld,
            )[ALL][figure.name]
            series = (figure.numerator, figure.denominator)
            held_back = figure in RECEIVED and any(month in hidden[c] for c in series)
            if held_back and "suppressed" not in shown["registry"]:
                shown["registry"] = {"suppressed": REMAINDER}
            figures[figure.name] = shown
        rows.append({"month": month_label(month), "figures": figures})
    return rows


def definitions() -> dict[str, dict[str, str]]:
    return {
        name: {"numerator": numerator, "denominator": denominator}
        for name, (numerator, denominator) in DEFINITIONS.items()
    }


def figure_list() -> list[dict[str, Any]]:
    return [
        {
            "name": figure.name,
            "label": figure.label,
            "count": figure is COURSES,
            "higher_is_better": None if figure is COURSES else figure.name not in LOWER_IS_BETTER,
        }
        for figure in FIGURES
    ]


# --- The reads: one query per table ------------------------------------------------------------


@dataclass(frozen=True)
class _Sides:
    own: Q
    fellows: Q
    others: Q


def _sides(practice: Practice, members: set[int]) -> _Sides:
    return _Sides(
        own=Q(practice=practice),
        fellows=Q(practice__in=members - {practice.pk}),
        others=~Q(practice__in=members),
    )


def _bucket_sums(rows: QuerySet[Any], counts: list[str], sides: _Sides) -> dict[int, Cell]:
    """Per month bucket: the counts of each side, and how many other practices (and
    practices of all) have a non-zero count in it."""
    sums: dict[str, Any] = {}
    for name in counts:
        counted = Q(**{f"{name}__gt": 0})
        for side in ("own", "fellows", "others"):
            sums[f"{side}__{name}"] = Sum(name, filter=getattr(sides, side), default=0)
        sums[f"contributors__{name}"] = Count(
            "practice", distinct=True, filter=sides.others & counted
        )
        sums[f"practices__{name}"] = Count("practice", distinct=True, filter=counted)
    cells: dict[int, Cell] = {}
    for row in rows.values("bucket").annotate(**sums):
        values: dict[str, Any] = dict(row)
        parts: dict[str, dict[str, int]] = {
            s: {} for s in ("own", "fellows", "others", "contributors", "practices")
        }
        for key, value in values.items():
            side, _, name = key.partition("__")
            if name:
                parts[side][name] = value
        bucket: date | None = values["bucket"]
        cells[BEFORE if bucket is None or bucket.year == 1 else month_key(bucket)] = Cell(**parts)
    return cells


def scorecard_cells(
    *, practice: Practice, members_of: Collection[int], months: list[int], withheld: bool
) -> Cells:
    """The cells of :func:`scorecard`: two grouped queries, one per table."""
    members = {practice.pk, *members_of}
    sides = _sides(practice, members)
    start, end = first_day(months[0]), _month_after(months[-1])
    live = Q(practice=practice) | Q(practice__sandbox=False)
    if withheld:
        live = Q(practice=practice)
    submitted = (
        SubmissionCount.objects.filter(live, day__gte=start, day__lt=end)
        .annotate(bucket=TruncMonth("day", output_field=DateField()))
        .order_by()
    )
    received = (
        ReceivedCount.objects.filter(live, day__lt=end)
        .annotate(
            bucket=Case(
                When(day__lt=start, then=Value(date(1, 1, 1))),
                default=TruncMonth("day", output_field=DateField()),
                output_field=DateField(),
            )
        )
        .order_by()
    )
    by_month: dict[int, dict[str, dict[str, int]]] = {}
    for table in (
        _bucket_sums(submitted, SUBMITTED_COUNTS, sides),
        _bucket_sums(received, RECEIVED_COUNTS, sides),
    ):
        for key, cell in table.items():
            merged = by_month.setdefault(key, {s: {} for s in _CELL_PARTS})
            for part in _CELL_PARTS:
                merged[part].update(getattr(cell, part) or {})
    return {(ALL, key): Cell(**parts) for key, parts in by_month.items()}


_CELL_PARTS = ("own", "fellows", "others", "contributors", "practices")


def _month_after(key: int) -> date:
    year, month = divmod(key, 100)
    return date(year + month // 12, month % 12 + 1, 1)


SANDBOX_WITHHELD = (
    "Comparisons with the registry are for live practices; a sandbox's records never count "
    "in the registry."
)


def scorecard_for_practice(
    *,
    practice: Practice,
    members_of: Collection[int] = (),
    today: date,
    months: int = MONTHS,
) -> dict[str, Any]:
    """The scorecard as a member of the practices ``members_of`` (ids) may see it: the
    ``months`` months ending with ``today``'s, newest first."""
    keys = months_ending(today, months)
    withheld = SANDBOX_WITHHELD if practice.sandbox else None
    cells = scorecard_cells(
        practice=practice, members_of=members_of, months=keys, withheld=bool(withheld)
    )
    return {
        "practice": practice.slug,
        "months": [month_label(key) for key in reversed(keys)],
        "comparison_withheld": withheld,
        "figures": figure_list(),
        "by_month": scorecard(cells=cells, months=keys, withheld=withheld),
        "definitions": definitions(),
    }
