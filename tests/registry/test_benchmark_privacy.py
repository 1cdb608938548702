"""No combination of what one practice can see reveals a count the rules suppress.

Random registries of a few practices: every figure the viewer may see (its own, the
registry's for every range of birth years and for all years, over the whole range and over
its comparable years, the headline, the data quality, the trend) is a linear equation
in the other practices' counts per (group, count, birth year) cell. A suppressed cell (a
non-zero count under 10, or from fewer than three other practices) can be worked out exactly
when its unit vector lies in the row space of those equations; it never may.
"""

from __future__ import annotations

import random
from collections import defaultdict
from itertools import combinations_with_replacement

import numpy as np
import pytest

from registry.statistics.benchmarks import (
    ALL,
    FIGURES,
    HEADLINE,
    MIN_PRACTICES,
    SMALL_COUNT,
    TREND_FIGURES,
    UNKNOWN_YEAR,
    Cell,
    benchmarks,
    comparable_years,
    trend,
)
from registry.statistics.quality import FIGURES as QUALITY_FIGURES

ROLES = ["midwife", "doula", "nurse", "assistant"]
GROUPS = [ALL, *ROLES]
COUNTS = sorted({name for f in FIGURES for name in (f.numerator, f.denominator)})
# The data-quality figures (of all births) are shown beside the benchmarks: their own counts
# exist for the group "all" only (as the selectors read them).
QUALITY_COUNTS = sorted(
    {name for f in QUALITY_FIGURES for name in (f.numerator, f.denominator)} - set(COUNTS)
)
SERIES = [(g, c) for g in GROUPS for c in COUNTS] + [(ALL, c) for c in QUALITY_COUNTS]
KNOWN_YEARS = [2019, 2020, 2021, 2022]
YEARS = [UNKNOWN_YEAR, *KNOWN_YEARS]
VIEWER = 0


def random_registry(rng: random.Random) -> dict[tuple[int, str, int, str], int]:
    """(practice, group, year, count) -> count; sparse, with small and large counts."""
    data = {}
    practices = rng.randint(3, 7)
    for practice in range(practices):
        for group in GROUPS:
            for year in YEARS:
                if rng.random() < 0.35:
                    continue
                for series_group, count in SERIES:
                    if series_group == group:
                        data[(practice, group, year, count)] = rng.choice(
                            [0, 0, 1, 2, 4, 8, 11, 15, 30, 60]
                        )
    return data


def cells_for(data, years) -> tuple[dict, dict]:
    own: dict = defaultdict(dict)
    others: dict = defaultdict(lambda: defaultdict(int))
    contributors: dict = defaultdict(lambda: defaultdict(int))
    spread: dict = defaultdict(set)
    for (practice, group, year, count), value in data.items():
        if year not in years:
            continue
        if practice == VIEWER:
            own[(group, year)][count] = value
            continue
        others[(group, year)][count] += value
        if value:
            contributors[(group, year)][count] += 1
            spread[(group, count)].add(practice)
    cells = {
        key: Cell(
            own=dict(own[key]), others=dict(others[key]), contributors=dict(contributors[key])
        )
        for key in set(own) | set(others)
    }
    return cells, {key: len(practices) for key, practices in spread.items()}


def ranges() -> list[list[int]]:
    """Every set of cells a viewer can ask for: each range of known years, and all years."""
    spans = [
        [year for year in KNOWN_YEARS if first <= year <= last]
        for first, last in combinations_with_replacement(KNOWN_YEARS, 2)
    ]
    return [*spans, YEARS]


class Unknowns:
    """The other practices' cells, one column each."""

    def __init__(self) -> None:
        self.index = {
            (group, count, year): i
            for i, (group, count, year) in enumerate((g, c, y) for g, c in SERIES for y in YEARS)
        }

    def row(self, series: tuple[str, str], years) -> np.ndarray:
        row = np.zeros(len(self.index))
        for year in years:
            row[self.index[(*series, year)]] = 1
        return row


def visible_equations(data, *, cell_rule: bool = True) -> np.ndarray:
    """Every registry count the viewer is shown, as a row over the unknown cells.

    For each range of birth years: the figures over the whole range (a superset of what the
    page shows, so the proof is the stronger for it), and over its comparable years, as the
    page, the JSON and the CSV compute them (``comparable_years``: the default view leaves
    out thin years)."""
    unknowns, rows = Unknowns(), []
    for years in ranges():
        cells, _ = cells_for(data, years)
        compared, _ = comparable_years(cells, years)
        for covered in (years, compared):
            rows += shown_rows(data, covered, unknowns, cell_rule=cell_rule)
        if years == YEARS:
            for role, figures in trend(cells=cells, years=years, roles=ROLES).items():
                for name in TREND_FIGURES:
                    figure = next(f for f in FIGURES if f.name == name)
                    for point in figures[name]:
                        if "suppressed" not in point["registry"]:
                            rows += [unknowns.row(s, [point["year"]]) for s in figure.series(role)]
    return np.array(rows) if rows else np.zeros((0, len(unknowns.index)))


def shown_rows(data, years, unknowns: Unknowns, *, cell_rule: bool) -> list[np.ndarray]:
    """The registry counts shown over one set of birth years: benchmarks, headline, quality."""
    cells, spread = cells_for(data, years)
    if not cell_rule:  # the rules without the per-year one, to show the test has teeth
        many = dict.fromkeys(COUNTS + QUALITY_COUNTS, 99)
        cells = {key: Cell(cell.own, cell.others, many) for key, cell in cells.items()}
    rows = []
    for roles, figures in ((ROLES, FIGURES), ([ALL], HEADLINE), ([ALL], QUALITY_FIGURES)):
        shown = benchmarks(
            cells=cells, years=years, contributors=spread, roles=roles, figures=figures
        )
        for role in roles:
            for figure in figures:
                if "suppressed" not in shown[role][figure.name]["registry"]:
                    rows += [unknowns.row(series, years) for series in figure.series(role)]
    return rows


def suppressed_cells(data) -> list[tuple[str, str, int]]:
    """Cells whose other practices' count is non-zero and under 10 or from under three."""
    totals: dict = defaultdict(int)
    practices: dict = defaultdict(int)
    for (practice, group, year, count), value in data.items():
        if practice != VIEWER and value:
            totals[(group, count, year)] += value
            practices[(group, count, year)] += 1
    return [
        key
        for key, total in totals.items()
        if total in SMALL_COUNT or practices[key] < MIN_PRACTICES
    ]


def revealed(equations: np.ndarray, target: np.ndarray) -> bool:
    if not len(equations):
        return False
    rank = np.linalg.matrix_rank(equations)
    return bool(np.linalg.matrix_rank(np.vstack([equations, target])) == rank)


@pytest.mark.parametrize("seed", range(25))
def test_no_suppressed_cell_is_in_the_span_of_what_a_practice_sees(seed):
    data = random_registry(random.Random(seed))
    equations, unknowns = visible_equations(data), Unknowns()
    targets = suppressed_cells(data)
    assert targets  # the random registry has something to protect
    for group, count, year in targets:
        target = unknowns.row((group, count), [year])
        assert not revealed(equations, target), (group, count, year)


def test_without_the_per_year_rule_a_year_range_would_reveal_a_suppressed_cell():
    """A registry where one year holds a single other practice's births: the range rule
    alone would show 2019-2020 and 2020, whose difference is that practice's 2019 count."""
    data = {}
    for practice in range(1, 5):
        for count in COUNTS:
            data[(practice, "midwife", 2020, count)] = 20
            data[(practice, ALL, 2020, count)] = 20
    for count in COUNTS:
        data[(1, "midwife", 2019, count)] = 15  # one practice's births in 2019
        data[(1, ALL, 2019, count)] = 15
    target = Unknowns().row(("midwife", "births"), [2019])
    assert ("midwife", "births", 2019) in suppressed_cells(data)
    assert revealed(visible_equations(data, cell_rule=False), target)
    assert not revealed(visible_equations(data), target)


def test_the_random_registries_do_show_figures():
    shown = [len(visible_equations(random_registry(random.Random(seed)))) for seed in range(25)]
    assert sum(1 for rows in shown if rows) >= 20  # the proof above is not about nothing


def thin_year_elsewhere() -> dict[tuple[int, str, int, str], int]:
    """Four other practices with 20 of everything in 2020 and 2021, and one of them with a
    single late registration in 2019; the viewer has births in every year."""
    data = {}
    for practice in range(1, 5):
        for year in (2020, 2021):
            for count in COUNTS + QUALITY_COUNTS:
                data[(practice, ALL, year, count)] = 20
    for count in COUNTS + QUALITY_COUNTS:
        data[(1, ALL, 2019, count)] = 1
        for year in (2019, 2020, 2021):
            data[(VIEWER, ALL, year, count)] = 5
    return data


def headline_over(data, years) -> dict:
    cells, spread = cells_for(data, years)
    return benchmarks(cells=cells, years=years, contributors=spread, roles=[ALL], figures=HEADLINE)[
        ALL
    ]


def test_one_thin_year_from_another_practice_leaves_the_default_comparisons_shown():
    data = thin_year_elsewhere()
    cells, _ = cells_for(data, YEARS)
    compared, left_out = comparable_years(cells, YEARS)
    assert left_out == [2019]
    assert compared == [UNKNOWN_YEAR, 2020, 2021, 2022]
    for figure in HEADLINE:
        assert "suppressed" in headline_over(data, YEARS)[figure.name]["registry"]
        shown = headline_over(data, compared)[figure.name]["registry"]
        assert "suppressed" not in shown, figure.name
        assert shown["practices"] == 5  # four others and the viewer
    target = Unknowns().row((ALL, "births"), [2019])
    assert (ALL, "births", 2019) in suppressed_cells(data)
    assert not revealed(visible_equations(data), target)


def test_a_range_compares_only_its_comparable_years():
    data = thin_year_elsewhere()
    cells, _ = cells_for(data, [2019, 2020])
    assert comparable_years(cells, [2019, 2020]) == ([2020], [2019])
    cells, _ = cells_for(data, [2019])
    assert comparable_years(cells, [2019]) == ([2019], [])  # nothing to compare: as asked
