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

The statistics page's registry figures over a range of birth years are other sums of the same
records, cut by birth year rather than by month received: a year's figure less the months
that received it could leave the few records of other years received in them (late
registrations). The registry's side of a received figure is therefore given as a rate only,
without its numerator and denominator, so that no month's counts are there to subtract; the
submission figures, on no other page, keep theirs.

The reads (:func:`scorecard_cells`): one query per table for the viewer's practices' months,
and one per table for the registry's totals by month, which do not depend on who looks and are
cached a few minutes. Everything else here is pure.
"""

from __future__ import annotations

import contextlib
from collections.abc import Collection, Iterable
from datetime import date
from typing import Any

from django.core.cache import caches
from django.db import connection
from redis.exceptions import RedisError

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
            elif figure in RECEIVED and "suppressed" not in shown["registry"]:
                shown["registry"] = _rate_only(shown["registry"])
            figures[figure.name] = shown
        rows.append({"month": month_label(month), "figures": figures})
    return rows


def _rate_only(side: dict[str, Any]) -> dict[str, Any]:
    """The registry's side of a received figure without its counts (see the module)."""
    return {key: value for key, value in side.items() if key not in ("numerator", "denominator")}


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


# --- The reads: one query per table for the viewer's practices, one per table for the registry --

# The registry's side of each month does not depend on who looks: per month, each count's
# sum over the live practices and how many of them have it positive (summed per practice and
# month first: no COUNT(DISTINCT), which sorts every day row once per count). It is kept in
# the cache for TOTALS_CACHE_SECONDS, so a page (or the monthly mail, a copy per recipient)
# scans the tables once a few minutes at most; the beat refreshes the current months' before
# they expire (registry/statistics/tasks.py), so no page waits for the scan (about a second
# at 1,000 practices with years of day rows). The viewer's practices' own rows are read each
# time (the (practice, day) index), and subtracted: what is left is every other practice.
TOTALS_CACHE_SECONDS = 600
TOTALS_REFRESH_SECONDS = 240  # the beat's period: each refresh lands well before expiry

_REGISTRY_SQL = """
WITH per_practice AS (
    SELECT t.practice_id, {bucket} AS bucket, {sums}
    FROM {table} t JOIN registry_practice p ON p.id = t.practice_id
    WHERE t.day < %(end)s {since} AND NOT p.sandbox
    GROUP BY 1, 2
)
SELECT bucket, {totals}
FROM per_practice
GROUP BY bucket
"""
_MEMBERS_SQL = """
SELECT t.practice_id, p.sandbox, {bucket} AS bucket, {sums}
FROM {table} t JOIN registry_practice p ON p.id = t.practice_id
WHERE t.practice_id IN ({members}) AND t.day < %(end)s {since}
GROUP BY 1, 2, 3
"""

_TABLES = (
    (SubmissionCount._meta.db_table, SUBMITTED_COUNTS, False),
    (ReceivedCount._meta.db_table, RECEIVED_COUNTS, True),
)


def _sql(template: str, table: str, counts: list[str], *, before: bool, members: str = "") -> str:
    """A statement over one table (``counts``: its columns, from this module's constants);
    with ``before``, the rows before the months are one bucket (NULL, :data:`BEFORE`)."""
    month = (
        "date_trunc('month', t.day)::date"
        if connection.vendor == "postgresql"
        else "date(t.day, 'start of month')"  # the embedded SQLite default
    )
    return template.format(
        bucket=f"CASE WHEN t.day < %(start)s THEN NULL ELSE {month} END" if before else month,
        sums=", ".join(f"SUM(t.{name}) AS {name}" for name in counts),
        totals=", ".join(
            f"SUM({name}), SUM(CASE WHEN {name} > 0 THEN 1 ELSE 0 END)" for name in counts
        ),
        table=table,
        since="" if before else "AND t.day >= %(start)s",
        members=members,
    )


def _bucket(value: date | str | None) -> int:
    if isinstance(value, str):  # SQLite's date()
        value = date.fromisoformat(value)
    return BEFORE if value is None else month_key(value)


Totals = dict[int, dict[str, tuple[int, int]]]  # month -> count -> (sum, practices with it)


def registry_totals(months: list[int], *, fresh: bool = False) -> Totals:
    """Per month of ``months`` (and :data:`BEFORE`): each count's sum over every live
    practice, and how many have it positive. Cached for :data:`TOTALS_CACHE_SECONDS`;
    ``fresh`` reads the tables whatever the cache holds, and caches that."""
    key = f"scorecard:registry:{months[0]}:{months[-1]}"
    cache = caches["default"]
    try:
        found = None if fresh else cache.get(key)
    except (RedisError, OSError):
        found = None
    if isinstance(found, dict):
        return found
    params: dict[str, Any] = {"start": first_day(months[0]), "end": _month_after(months[-1])}
    totals: Totals = {}
    with connection.cursor() as cursor:
        for table, counts, before in _TABLES:
            cursor.execute(_sql(_REGISTRY_SQL, table, counts, before=before), params)
            for bucket, *values in cursor.fetchall():
                cell = totals.setdefault(_bucket(bucket), {})
                for index, name in enumerate(counts):
                    cell[name] = (int(values[2 * index] or 0), int(values[2 * index + 1]))
    with contextlib.suppress(RedisError, OSError):
        cache.set(key, totals, TOTALS_CACHE_SECONDS)
    return totals


def _members_rows(
    members: list[int], months: list[int]
) -> list[tuple[int, bool, int, dict[str, int]]]:
    """(practice, sandbox, month, counts) of the viewer's practices: one query per table."""
    params: dict[str, Any] = {
        "start": first_day(months[0]),
        "end": _month_after(months[-1]),
    }
    params.update({f"member{n}": practice_id for n, practice_id in enumerate(members)})
    listed = ", ".join(f"%(member{n})s" for n in range(len(members)))
    rows = []
    with connection.cursor() as cursor:
        for table, counts, before in _TABLES:
            statement = _sql(_MEMBERS_SQL, table, counts, before=before, members=listed)
            cursor.execute(statement, params)
            for practice_id, sandbox, bucket, *values in cursor.fetchall():
                sums = {name: int(value or 0) for name, value in zip(counts, values, strict=True)}
                rows.append((practice_id, sandbox, _bucket(bucket), sums))
    return rows


def scorecard_cells(
    *, practice: Practice, members_of: Collection[int], months: list[int], withheld: bool
) -> Cells:
    """The cells of :func:`scorecard`: the viewer's practices' rows, and the registry's
    totals less the live ones among them (:func:`registry_totals`)."""
    members = sorted({practice.pk, *members_of})
    parts: dict[int, dict[str, dict[str, int]]] = {}

    def cell(key: int) -> dict[str, dict[str, int]]:
        return parts.setdefault(key, {part: {} for part in _PARTS})

    for practice_id, sandbox, key, sums in _members_rows(members, months):
        for name, value in sums.items():
            side = "own" if practice_id == practice.pk else "fellows"
            if side == "fellows" and sandbox:
                continue  # never in the registry's figures
            counted = cell(key)
            counted[side][name] = counted[side].get(name, 0) + value
            if not sandbox:  # taken out of the registry's totals below
                counted["live_members"][name] = counted["live_members"].get(name, 0) + value
                positive = 1 if value > 0 else 0
                counted["positive"][name] = counted["positive"].get(name, 0) + positive
    if not withheld:
        for key, counts in registry_totals(months).items():
            counted = cell(key)
            for name, (total, having) in counts.items():
                counted["others"][name] = total - counted["live_members"].get(name, 0)
                counted["contributors"][name] = having - counted["positive"].get(name, 0)
                counted["practices"][name] = having
    return {
        (ALL, key): Cell(**{part: found[part] for part in _CELL_PARTS})
        for key, found in parts.items()
    }


_CELL_PARTS = ("own", "fellows", "others", "contributors", "practices")
_PARTS = (*_CELL_PARTS, "live_members", "positive")


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
