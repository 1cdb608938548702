"""Attendant-type benchmarks: a practice's figures beside the registry's, and what may be shown.

Pure rules over counts (no database): the selector hands in, per group (``all`` or a role)
and birth year, the counts of the practice in view, those of the viewer's other practices,
the total of every other practice, and how many of those contribute to each count
(:class:`Cell`).

*Other* practices are those the viewer is a member of none of: a person who belongs to two
practices knows both practices' counts, so a figure's thresholds must hold for what is left
once all of them are taken out, or subtracting one page's figure from another's would tell
them a part the rules hide (docs/decisions.md, "Suppression against differencing"). A
sandbox, whose records never count in the registry, is shown no comparison at all
(``withheld``).

What a viewer may see: a registry figure only when at least three other practices contribute
to it, and never when the other practices' part of its numerator or denominator is between 1
and 9. The viewer knows its own counts, so every registry figure it sees tells it the other
practices' part exactly;
and it may ask for any range of birth years, so two figures over ranges that differ by one
year would tell it that year's part by subtraction. Hence the rule per birth year:

    A count of other practices in one birth-year cell is *publishable* when it is 0, or when
    it is at least 10 and comes from at least three other practices.

A registry figure over a set of years is shown only if every cell it adds up, numerator and
denominator, is publishable (and the figure as a whole passes the two rules above). Every
figure shown is then a sum of publishable cells, so no combination of figures (any ranges,
any roles, the trend) isolates a cell that is not publishable: it appears in none of them.
Records without a known birth year are a cell of their own (year 0), part of a figure only
when no range is asked for. ``tests/registry/test_benchmark_privacy.py`` checks this with the
linear algebra over random registries.

So that one thin year (a single late registration from another practice) never blanks the
comparisons, they cover only the *comparable* years of the range asked for
(:func:`comparable_years`): those whose cells of all births pass the rule above. Which years
those are depends only on whether cells are publishable, which a suppressed figure already
says; every figure over them is still a sum of publishable cells, so the argument above holds
for any set of years, and the proof covers these sets too.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

ALL = "all"
UNKNOWN_YEAR = 0
MIN_PRACTICES = 3  # other practices that must contribute to a registry figure
SMALL_COUNT = range(1, 10)  # other practices' counts never shown (CDC WONDER natality)
UNRELIABLE_BELOW = 20  # a denominator under 20 makes a rate unreliable (NCHS)
TREND_FIGURES = ["low_birth_weight", "preterm"]
# The headline: the outcome figures of all births, the practice beside the registry.
HEADLINE_FIGURES = ["low_birth_weight", "preterm", "apgar5_below_7", "consent_granted"]


@dataclass(frozen=True)
class Figure:
    """A benchmarked figure of a role: its numerator and denominator among the counts."""

    name: str
    label: str
    numerator: str
    denominator: str
    denominator_group: str | None = None  # None: the role itself; "all": every birth
    numerator_is_base: bool = False  # which count says whether a practice contributes

    def series(self, role: str) -> tuple[tuple[str, str], tuple[str, str]]:
        """The (group, count) of the numerator and of the denominator for ``role``."""
        return (role, self.numerator), (self.denominator_group or role, self.denominator)

    def base(self, role: str) -> tuple[str, str]:
        numerator, denominator = self.series(role)
        return numerator if self.numerator_is_base else denominator


FIGURES: list[Figure] = [
    Figure("births", "Births attended", "births", "births", ALL, numerator_is_base=True),
    Figure("low_birth_weight", "Low birth weight", "low_birth_weight", "known_birth_weight"),
    Figure("preterm", "Preterm", "preterm", "known_gestational_age"),
    Figure("apgar5_below_7", "5-minute Apgar below 7", "apgar5_below_7", "known_apgar5"),
    Figure("consent_granted", "Consent granted", "consent_granted", "births"),
]
FIGURES_BY_NAME = {figure.name: figure for figure in FIGURES}
HEADLINE = [FIGURES_BY_NAME[name] for name in HEADLINE_FIGURES]
# The counts of all births a year must pass on to be compared (those the headline divides).
COMPARABLE_COUNTS = sorted({count for f in HEADLINE for _, count in f.series(ALL)})


@dataclass(frozen=True)
class Cell:
    """One group's counts in one birth year: the viewer's, and the other practices'."""

    own: Mapping[str, int] = field(default_factory=dict)
    others: Mapping[str, int] = field(default_factory=dict)
    contributors: Mapping[str, int] = field(default_factory=dict)  # other practices, count > 0
    # The viewer's other practices that count in the registry: part of the registry's figure,
    # never of what its thresholds are tested on (the viewer knows them).
    fellows: Mapping[str, int] = field(default_factory=dict)
    practices: Mapping[str, int] | None = None  # every practice with count > 0, when known


EMPTY = Cell()
Cells = Mapping[tuple[str, int], Cell]  # (group, birth year) -> Cell


def publishable(cell: Cell, count: str) -> bool:
    """Whether the other practices' part of ``count`` in this one cell may be seen."""
    value = cell.others.get(count, 0)
    return value == 0 or (value not in SMALL_COUNT and cell.contributors.get(count, 0) >= 3)


def comparable_years(cells: Cells, years: Iterable[int]) -> tuple[list[int], list[int]]:
    """The years of ``years`` the comparisons cover, and those they leave out.

    A year is comparable when the other practices' part of every count of all births the
    headline divides is publishable in it (0, or at least 10 from at least three practices).
    When none is, nothing is left out: the comparisons cover the range as asked, so the
    practice's own side stays whole, and the registry's side falls to the rule per figure.
    """
    kept: list[int] = []
    left_out: list[int] = []
    for year in sorted(set(years)):
        cell = cells.get((ALL, year), EMPTY)
        passes = all(publishable(cell, count) for count in COMPARABLE_COUNTS)
        (kept if passes else left_out).append(year)
    return (kept, left_out) if kept else (left_out, [])


def benchmarks(
    *,
    cells: Cells,
    years: Iterable[int],
    contributors: Mapping[tuple[str, str], int],
    roles: Iterable[str],
    figures: Iterable[Figure] = FIGURES,
    own_years: Iterable[int] | None = None,
    practices: Mapping[tuple[str, str], int] | None = None,
    withheld: str | None = None,
) -> dict[str, dict[str, dict[str, Any]]]:
    """``benchmarks.<role>.<figure>``: the practice's figure and the registry's (or why not).

    ``years`` are the birth-year cells the registry's side covers; ``contributors`` the
    number of other practices with a non-zero (group, count) over them. The practice's side
    covers ``own_years`` (by default ``years``): a practice always sees all of its own
    figures, only the comparison is restricted. ``practices``: how many practices, the
    viewer's included, contribute to each (group, count), shown beside the registry's figure.
    ``withheld``: why no registry figure is shown at all (a sandbox). ``figures``: the
    attendant-type benchmarks by default; the data-quality figures
    (:mod:`registry.statistics.quality`) go through the same rules.
    """
    years = sorted(set(years))
    own = years if own_years is None else sorted(set(own_years))
    figures = list(figures)
    scope = _Scope(contributors, practices, withheld)
    return {
        role: {
            figure.name: {
                "practice": _practice_side(cells, own, figure, role),
                "registry": _registry_side(cells, years, figure, role, scope),
            }
            for figure in figures
        }
        for role in roles
    }


def trend(
    *, cells: Cells, years: Iterable[int], roles: Iterable[str], withheld: str | None = None
) -> dict[str, dict[str, list[dict[str, Any]]]]:
    """``trend.<role>.<figure>``: per known birth year, the practice beside the registry."""
    known = sorted(set(years) - {UNKNOWN_YEAR})
    result: dict[str, dict[str, list[dict[str, Any]]]] = {}
    for role in roles:
        result[role] = {}
        for name in TREND_FIGURES:
            figure = FIGURES_BY_NAME[name]
            base = figure.base(role)
            result[role][name] = [
                {
                    "year": year,
                    "practice": _practice_side(cells, [year], figure, role),
                    "registry": _registry_side(
                        cells, [year], figure, role, _year_scope(cells, year, base, withheld)
                    ),
                }
                for year in known
            ]
    return result


# --- The two sides ------------------------------------------------------------------------------

REGISTRY_SIDES = ("own", "fellows", "others")  # whose counts make up the registry's figure


@dataclass(frozen=True)
class _Scope:
    """What the registry's side of a figure is tested on and shown with."""

    contributors: Mapping[tuple[str, str], int]
    practices: Mapping[tuple[str, str], int] | None = None
    withheld: str | None = None


def _year_scope(cells: Cells, year: int, base: tuple[str, str], withheld: str | None) -> _Scope:
    """The scope of one birth year's cell (the trend): its own contributors and practices."""
    group, count = base
    cell = cells.get((group, year), EMPTY)
    practices = None if cell.practices is None else {base: cell.practices.get(count, 0)}
    return _Scope({base: cell.contributors.get(count, 0)}, practices, withheld)


def _sum(cells: Cells, years: Iterable[int], series: tuple[str, str], side: str) -> int:
    group, count = series
    return sum(getattr(cells.get((group, year), EMPTY), side).get(count, 0) for year in years)


def _rate(numerator: int, denominator: int) -> dict[str, Any]:
    return {
        "rate": round(numerator / denominator, 4) if denominator else None,
        "numerator": numerator,
        "denominator": denominator,
        "unreliable": denominator < UNRELIABLE_BELOW,
    }


def _practice_side(cells: Cells, years: list[int], figure: Figure, role: str) -> dict[str, Any]:
    numerator, denominator = figure.series(role)
    return _rate(_sum(cells, years, numerator, "own"), _sum(cells, years, denominator, "own"))


def _registry_side(
    cells: Cells,
    years: list[int],
    figure: Figure,
    role: str,
    scope: _Scope,
) -> dict[str, Any]:
    reason = scope.withheld or suppression(cells, years, figure, role, scope.contributors)
    if reason:
        return {"suppressed": reason}
    numerator, denominator = figure.series(role)
    shown = _rate(
        sum(_sum(cells, years, numerator, side) for side in REGISTRY_SIDES),
        sum(_sum(cells, years, denominator, side) for side in REGISTRY_SIDES),
    )
    base = figure.base(role)
    if scope.practices is not None:
        return {**shown, "practices": scope.practices.get(base, 0)}
    own_base = _sum(cells, years, base, "own")
    return {**shown, "practices": scope.contributors.get(base, 0) + (1 if own_base else 0)}


def suppression(
    cells: Cells,
    years: list[int],
    figure: Figure,
    role: str,
    contributors: Mapping[tuple[str, str], int],
) -> str | None:
    """Why the registry figure may not be shown, in words; None when it may."""
    if contributors.get(figure.base(role), 0) < MIN_PRACTICES:
        return "Fewer than three other practices contribute."
    for series in figure.series(role):
        if _sum(cells, years, series, "others") in SMALL_COUNT:
            return "Other practices' part is between 1 and 9."
    blocking = [
        year
        for year in years
        if not all(
            publishable(cells.get((group, year), EMPTY), count)
            for group, count in figure.series(role)
        )
    ]
    if not blocking:
        return None
    if UNKNOWN_YEAR in blocking:
        return (
            "Too few from other practices among births without a known year; "
            "choose a range of birth years."
        )
    return (
        f"Too few from other practices in birth year {', '.join(map(str, blocking))} "
        "(under 10, or under three practices), which another range could reveal; "
        f"choose a range without {'it' if len(blocking) == 1 else 'them'}."
    )
