"""The benchmarks as charts: HTML bars, the practice beside the registry, that reflow to any width.

The geometry only (a bar's length as a share of the chart's scale, the words beside it);
what may be shown was decided by :mod:`registry.statistics.benchmarks`. ``templates/settings/
_benchmarks.html`` renders these.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from registry.models import Provider
from registry.statistics import quality
from registry.statistics.benchmarks import (
    FIGURES,
    FIGURES_BY_NAME,
    HEADLINE,
    TREND_FIGURES,
    UNRELIABLE_BELOW,
)
from registry.statistics.selectors import RATES

NICE_SCALES = [0.02, 0.05, 0.1, 0.2, 0.25, 0.5, 0.75, 1.0]
DESCRIPTIONS = {rate.counts_key: (rate.numerator_is, rate.denominator_is) for rate in RATES}
DESCRIPTIONS["births"] = ("births attended by at least one provider of the role", "all births")


@dataclass(frozen=True)
class Bar:
    """One side of a comparison: its length (% of the scale) and what it says, or why not."""

    who: str
    text: str
    length: float
    unreliable: bool = False
    suppressed: str = ""

    @property
    def empty(self) -> bool:
        return not self.suppressed and self.text == "no data"


@dataclass(frozen=True)
class Row:
    label: str
    practice: Bar
    registry: Bar


@dataclass(frozen=True)
class Chart:
    name: str
    title: str
    description: str
    scale: str  # the value a full bar stands for
    rows: list[Row]
    ticks: tuple[str, ...] = ()  # a trend's axis values, top to bottom


def benchmark_charts(compared: dict[str, Any]) -> list[Chart]:
    """A chart per figure: a row per attendant role, the practice's bar over the registry's."""
    charts = []
    for figure in FIGURES:
        sides = [compared["benchmarks"][role][figure.name] for role in compared["benchmarks"]]
        scale = _scale(sides)
        rows = [
            Row(_role_label(role), *_bars(compared["benchmarks"][role][figure.name], scale))
            for role in compared["benchmarks"]
        ]
        description = _description(figure.name)
        charts.append(Chart(figure.name, figure.label, description, _pct(scale), rows))
    return charts


def trend_charts(compared: dict[str, Any]) -> list[Chart]:
    """Per role the practice has figures for, a chart per trend figure: a row per birth year."""
    charts = []
    for role, figures in compared["trend"].items():
        for name in TREND_FIGURES:
            points = figures[name]
            if not any(_has_data(point) for point in points):
                continue
            scale = _scale(points)
            rows = [Row(str(point["year"]), *_bars(point, scale)) for point in points]
            title = f"{FIGURES_BY_NAME[name].label} · {_role_label(role)}"
            ticks = (_tick(scale), _tick(scale / 2), "0%")
            charts.append(
                Chart(f"{role}-{name}", title, _description(name), _pct(scale), rows, ticks)
            )
    return charts


@dataclass(frozen=True)
class Glance:
    """A data-quality tile: the practice's headline figure in words, and the registry's."""

    label: str
    value: str
    note: str
    registry: str


def data_quality_charts(shaped: dict[str, Any]) -> list[Chart]:
    """A chart per part of ``data_quality``: a row per figure, the practice over the registry.

    Completeness and timeliness are read against a full bar of 100%; the share of records
    with a warning is small, so its bar scales to it as the benchmarks' do.
    """
    charts = []
    for section in quality.SECTIONS:
        figures = [(f, _sides(shaped, section, f.name)) for f in section.figures]
        scale = 1.0 if section.higher_is_better else _scale([sides for _, sides in figures])
        rows = [Row(figure.label, *_bars(sides, scale)) for figure, sides in figures]
        charts.append(
            Chart(section.key, section.label, QUALITY_DESCRIPTIONS[section.key], _pct(scale), rows)
        )
    return charts


def data_quality_glance(shaped: dict[str, Any]) -> list[Glance]:
    """Three tiles: the least complete item, the share with a warning, the share on time."""
    completeness = shaped[quality.COMPLETENESS.key]
    known = [
        f
        for f in quality.COMPLETENESS.figures
        if completeness[f.name]["practice"]["rate"] is not None
    ]
    tiles = []
    if known:
        weakest = min(known, key=lambda f: completeness[f.name]["practice"]["rate"])
        sides = completeness[weakest.name]
        tiles.append(
            Glance("Least complete", _rate(sides["practice"]), weakest.label, _registry(sides))
        )
    warned = shaped[quality.PLAUSIBILITY.key]
    tiles.append(
        Glance("Drew a warning", _rate(warned["practice"]), "of records", _registry(warned))
    )
    prompt = shaped[quality.TIMELINESS.key]["within_5_days"]
    tiles.append(
        Glance(
            "Received within 5 days", _rate(prompt["practice"]), "of the birth", _registry(prompt)
        )
    )
    return tiles


QUALITY_DESCRIPTIONS = {
    "completeness": "Live-born children whose record has each item; a full bar is 100%.",
    "plausibility": "Records whose current version drew a plausibility warning: lower is better.",
    "timeliness": "Records first received within 5 and within 10 days of the birth, out of "
    "those whose birth date is known; a full bar is 100%.",
}


def _sides(shaped: dict[str, Any], section: quality.Section, name: str) -> dict[str, Any]:
    found = shaped[section.key]
    return found if section is quality.PLAUSIBILITY else found[name]


def _rate(side: dict[str, Any]) -> str:
    return "no data" if side.get("rate") is None else f"{side['rate']:.1%}"


def _registry(sides: dict[str, Any]) -> str:
    registry = sides["registry"]
    if "suppressed" in registry:
        return "Registry: not shown"
    return f"Registry: {_rate(registry)}"


def _has_data(point: dict[str, Any]) -> bool:
    """A trend compares the practice with the registry: nothing to compare without its own."""
    return bool(point["practice"]["denominator"])


def _bars(sides: dict[str, Any], scale: float) -> tuple[Bar, Bar]:
    practice, registry = sides["practice"], sides["registry"]
    return _bar("Your practice", practice, scale), _bar("Registry", registry, scale)


def _bar(who: str, side: dict[str, Any], scale: float) -> Bar:
    if "suppressed" in side:
        return Bar(who, "not shown", 0.0, suppressed=side["suppressed"])
    if side["rate"] is None:
        return Bar(who, "no data", 0.0)
    text = f"{side['rate']:.1%} ({side['numerator']:,} of {side['denominator']:,})"
    if "practices" in side:
        text += f", {side['practices']} practices"
    length = round(min(side["rate"] / scale, 1.0) * 100, 1)
    return Bar(who, text, length, unreliable=side["unreliable"])


def _scale(comparisons: list[dict[str, Any]]) -> float:
    """The smallest round rate at or above every rate shown, so small rates stay visible."""
    rates = [
        side["rate"]
        for comparison in comparisons
        for side in (comparison["practice"], comparison["registry"])
        if side.get("rate") is not None
    ]
    largest = max(rates, default=0.0)
    return next((nice for nice in NICE_SCALES if nice >= largest), 1.0)


def _pct(scale: float) -> str:
    return f"{scale:.0%}"


def _tick(value: float) -> str:
    """An axis value: ``12.5%``, ``50%``."""
    return f"{value * 100:g}%"


@dataclass(frozen=True)
class Headline:
    """A headline figure of all births: the practice's, and the registry's beside it."""

    name: str
    label: str
    practice: str
    practice_counts: str
    practice_unreliable: bool
    registry: str  # "" when not shown
    registry_counts: str
    registry_unreliable: bool


def headline_figures(compared: dict[str, Any]) -> list[Headline]:
    """The headline tiles, in :data:`HEADLINE` order."""
    figures = []
    for figure in HEADLINE:
        practice, registry = (compared["headline"][figure.name][k] for k in SIDES)
        shown = "suppressed" not in registry
        figures.append(
            Headline(
                figure.name,
                figure.label,
                _rate(practice),
                _counts(practice),
                practice["unreliable"] and practice["denominator"] > 0,
                _rate(registry) if shown else "",
                f"{_counts(registry)}, {registry['practices']} practices" if shown else "",
                shown and registry["unreliable"],
            )
        )
    return figures


SIDES = ("practice", "registry")


def _counts(side: dict[str, Any]) -> str:
    return f"{side['numerator']:,} of {side['denominator']:,}"


def any_not_shown(compared: dict[str, Any]) -> bool:
    """Whether any registry figure on the page is suppressed (one explanation covers all)."""
    sides: list[dict[str, Any]] = [f["registry"] for f in compared["headline"].values()]
    sides += [f["registry"] for role in compared["benchmarks"].values() for f in role.values()]
    sides += [s["registry"] for _, s in quality.data_quality_rows(compared["data_quality"])]
    sides += [
        point["registry"]
        for figures in compared["trend"].values()
        for points in figures.values()
        for point in points
    ]
    return any("suppressed" in side for side in sides)


def compared_years_text(years: dict[str, Any], withheld: str | None = None) -> str:
    """Which birth years the registry's side covers, and which it leaves out, in words.

    The practice's own figures always cover the whole range; only the registry's side of a
    comparison may cover fewer years, so the text stands beside the comparison.
    """
    if withheld:
        return f"Your figures only: {withheld[0].lower()}{withheld[1:]}"
    included, left_out = years["included"], years["left_out"]
    if included:
        text = f"The registry's figures cover birth years {_spans(included)}"
    else:
        text = "The registry's figures cover births without a known birth year"
    if not (left_out or years["unknown_year_left_out"]):
        return text + "."
    parts = [_spans(left_out)] if left_out else []
    if years["unknown_year_left_out"]:
        parts.append("births without a known birth year")
    return (
        f"{text}. Left out: {' and '.join(parts)}, where other practices have too few "
        "births to show without revealing them; your own figures cover every year of the range."
    )


EN_DASH = "\N{EN DASH}"


def _spans(years: list[int]) -> str:
    """``2019\N{EN DASH}2021 and 2023``: runs of consecutive years."""
    runs: list[list[int]] = []
    for year in sorted(years):
        if runs and year == runs[-1][-1] + 1:
            runs[-1].append(year)
        else:
            runs.append([year])
    words = [str(run[0]) if len(run) == 1 else f"{run[0]}{EN_DASH}{run[-1]}" for run in runs]
    return ", ".join(words[:-1]) + " and " + words[-1] if len(words) > 1 else words[0]


def _description(name: str) -> str:
    numerator, denominator = DESCRIPTIONS[name]
    return f"{numerator[0].upper()}{numerator[1:]}, out of {denominator}."


def _role_label(role: str) -> str:
    return str(Provider.Role(role).label)


UNRELIABLE_NOTE = f"fewer than {UNRELIABLE_BELOW} in the denominator: read with care"
