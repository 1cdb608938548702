"""Reads of the statistics: a practice's figures, and its benchmarks beside the registry.

Both read the counts kept as records change (:mod:`registry.statistics.counts`), never the
records themselves, so a page costs the same at a thousand records as at a million.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

from django.db.models import Count, Q, QuerySet, Sum

from registry.models import COUNT_FIELDS, BirthCount, Practice
from registry.statistics import quality
from registry.statistics.benchmarks import (
    FIGURES,
    HEADLINE,
    UNKNOWN_YEAR,
    Cell,
    Figure,
    benchmarks,
    comparable_years,
    trend,
)
from registry.statistics.counts import ALL, ATTENDANT_ROLES, year_cells

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
        }
        | quality.definitions(),
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


# --- Benchmarks --------------------------------------------------------------------------------


def _counts_of(figures: list[Figure]) -> set[str]:
    return {name for figure in figures for name in (figure.numerator, figure.denominator)}


# The counts the benchmarked figures divide (registry.statistics.benchmarks.FIGURES), and
# the data-quality figures (registry.statistics.quality.FIGURES), read in the same queries.
# The data-quality figures are of all births only: their own counts are summed for the
# group "all" alone, which keeps the two queries about as quick as without them.
BENCHMARK_COUNTS: list[str] = sorted(_counts_of(FIGURES) | _counts_of(quality.FIGURES))
_ALL_ONLY = _counts_of(quality.FIGURES) - _counts_of(FIGURES)


def _in_scope(name: str) -> Q:
    """The rows a count is summed over: every group, or "all" for a data-quality count."""
    return Q(group=ALL) if name in _ALL_ONLY else Q()


# Why a sandbox is shown no comparison: its records never count in the registry, so every
# registry figure it could see would be the live practices' alone, outside the rules that keep
# them apart (docs/decisions.md, "Suppression against differencing").
SANDBOX_WITHHELD = (
    "Comparisons with the registry are for live practices; a sandbox's records never count "
    "in the registry."
)


def benchmarks_for_practice(
    *,
    practice: Practice,
    members_of: Collection[int] = (),
    year_from: int | None = None,
    year_to: int | None = None,
) -> dict[str, Any]:
    """``compared_years``, ``headline``, ``benchmarks``, ``trend`` and ``data_quality``.

    The practice beside the whole registry, as seen by a person who is a member of the
    practices ``members_of`` (ids; the practice in view is always one of them). The
    registry's thresholds are tested on the practices that person belongs to none of, so
    nothing one of their pages hides can be worked out from another. Two queries over the
    kept counts (a few rows per practice, birth year and group): the cells of the range, and
    how many practices contribute over the years compared. The practice's own side covers
    the whole range; the registry's side its comparable years
    (:func:`registry.statistics.benchmarks.comparable_years`), so one thin year never blanks
    the comparisons. A sandbox is shown its own figures and no comparison.
    """
    members = {practice.pk, *members_of}
    rows = counts_beside_registry(practice=practice).filter(year_cells(year_from, year_to))
    withheld = SANDBOX_WITHHELD if practice.sandbox else None
    if withheld:
        rows = rows.filter(practice=practice)
    cells = _benchmark_cells(rows, practice, members)
    years = {year for _, year in cells}
    compared, left_out = comparable_years(cells, years)
    contributors, practices = _contributors(rows.filter(birth_year__in=compared), members)
    scope: dict[str, Any] = {"own_years": years, "practices": practices, "withheld": withheld}
    return {
        "compared_years": compared_years_shape(compared, left_out),
        "comparison_withheld": withheld,
        "headline": benchmarks(
            cells=cells,
            years=compared,
            contributors=contributors,
            roles=[ALL],
            figures=HEADLINE,
            **scope,
        )[ALL],
        "benchmarks": benchmarks(
            cells=cells, years=compared, contributors=contributors, roles=ATTENDANT_ROLES, **scope
        ),
        "trend": trend(cells=cells, years=years, roles=ATTENDANT_ROLES, withheld=withheld),
        "data_quality": quality.data_quality(
            cells=cells, years=compared, contributors=contributors, **scope
        ),
    }


def compared_years_shape(compared: list[int], left_out: list[int]) -> dict[str, Any]:
    """The JSON's ``compared_years``: the known birth years compared, those left out, and
    whether births without a known birth year (part of the figures only without a range)
    were left out too."""
    return {
        "included": [year for year in compared if year != UNKNOWN_YEAR],
        "left_out": [year for year in left_out if year != UNKNOWN_YEAR],
        "unknown_year_left_out": UNKNOWN_YEAR in left_out,
    }


def counted_in_registry() -> Q:
    """The one condition for a practice's counts to count in the registry's figures.

    Sandbox practices never do: their records count only in their own statistics
    (docs/decisions.md, "Sandbox practices"). Every figure over other practices or the whole
    registry reads its counts through :func:`counts_beside_registry`, which applies this.
    """
    return Q(practice__sandbox=False)


def counts_beside_registry(*, practice: Practice) -> QuerySet[BirthCount]:
    """The kept counts a practice's figures are set beside: its own, and the registry's.

    The viewer's own rows whatever it is (a sandbox sees its own figures), and those of every
    other practice that counts in the registry (:func:`counted_in_registry`).
    """
    return BirthCount.objects.filter(Q(practice=practice) | counted_in_registry())


def _benchmark_cells(
    rows: QuerySet[BirthCount], practice: Practice, members: set[int]
) -> dict[tuple[str, int], Cell]:
    """Per (group, birth year): the counts of the practice in view, of the viewer's other
    practices, and of every other practice, with how many of those and of all contribute."""
    sides = {
        "own": Q(practice=practice),
        "fellows": Q(practice__in=members - {practice.pk}),
        "others": ~Q(practice__in=members),
    }
    sums: dict[str, Any] = {}
    for name in BENCHMARK_COUNTS:
        scope, counted = _in_scope(name), Q(**{f"{name}__gt": 0})
        for side, whose in sides.items():
            sums[f"{side}__{name}"] = Sum(name, filter=whose & scope, default=0)
        sums[f"contributors__{name}"] = Count("id", filter=sides["others"] & scope & counted)
        sums[f"practices__{name}"] = Count("id", filter=scope & counted)
    cells = {}
    for row in rows.values("group", "birth_year").annotate(**sums):
        parts: dict[str, dict[str, int]] = {s: {} for s in [*sides, "contributors", "practices"]}
        values: dict[str, Any] = dict(row)
        for key, value in values.items():
            side, _, name = key.partition("__")
            if name:
                parts[side][name] = value
        cells[(values["group"], values["birth_year"])] = Cell(**parts)
    return cells


def _contributors(
    rows: QuerySet[BirthCount], members: set[int]
) -> tuple[dict[tuple[str, str], int], dict[tuple[str, str], int]]:
    """(group, count) -> how many practices other than ``members`` have a non-zero count in
    these rows, and how many practices of all."""
    others = ~Q(practice__in=members)
    counts: dict[str, Any] = {}
    for name in BENCHMARK_COUNTS:
        counted = _in_scope(name) & Q(**{f"{name}__gt": 0})
        counts[f"others__{name}"] = Count("practice", distinct=True, filter=others & counted)
        counts[f"all__{name}"] = Count("practice", distinct=True, filter=counted)
    contributors: dict[tuple[str, str], int] = {}
    practices: dict[tuple[str, str], int] = {}
    for row in rows.values("group").annotate(**counts):
        values: dict[str, Any] = dict(row)
        for name in BENCHMARK_COUNTS:
            contributors[(values["group"], name)] = values[f"others__{name}"]
            practices[(values["group"], name)] = values[f"all__{name}"]
    return contributors, practices
