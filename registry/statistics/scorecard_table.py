"""The scorecard in words: a table for the pages, rows for the CSV, lines for the mail.

Shared by the practice's statistics page, the registry office's page and the monthly feedback
mail, so the three say the same thing in the same words (registry/statistics/scorecard.py
holds the figures and the rules).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from registry.statistics.scorecard import FIGURES

NOT_SHOWN = "not shown"


@dataclass(frozen=True)
class ScoreCell:
    """One figure of one month: the practice's and the registry's, as printed."""

    column: str
    practice: str
    practice_detail: str
    registry: str  # "" when not shown
    registry_detail: str
    unreliable: bool


def side_text(side: dict[str, Any], *, count: bool) -> tuple[str, str]:
    """(figure, detail) of a shown side: ``12.5%`` and ``3 of 24``, or a count and ""."""
    if count:
        return f"{side['numerator']:,}", ""
    if side["rate"] is None:
        return "no data", ""
    if "numerator" not in side:  # the registry's received figures: a rate only
        return f"{side['rate']:.1%}", ""
    return f"{side['rate']:.1%}", f"{side['numerator']:,} of {side['denominator']:,}"


def _cell(figure: dict[str, Any], sides: dict[str, Any]) -> ScoreCell:
    practice, registry = sides["practice"], sides["registry"]
    count = bool(figure["count"])
    value, detail = side_text(practice, count=count)
    if "suppressed" in registry:
        shown, shown_detail = "", ""
    else:
        shown, shown_detail = side_text(registry, count=count)
        practices = registry.get("practices")
        if practices is not None:
            shown_detail = (
                f"{shown_detail}, {practices} practices"
                if shown_detail
                else (f"{practices} practices")
            )
    unreliable = not count and practice["denominator"] > 0 and practice["unreliable"]
    return ScoreCell(figure["label"], value, detail, shown, shown_detail, unreliable)


# The page's two tables, so that each fits a desktop's width: what was sent and how it
# fared, then the completeness items (registry/statistics/quality.py).
TABLES = (
    ("Sent, rejected, warned and timely", ["courses", "rejected", "warned", "within_10_days"]),
    (
        "Complete, out of live-born children",
        [
            f.name
            for f in FIGURES
            if f.name not in ("courses", "rejected", "warned", "within_10_days")
        ],
    ),
)


@dataclass(frozen=True)
class ScoreTable:
    title: str
    headers: list[str]
    rows: list[tuple[str, list[ScoreCell]]]


def scorecard_tables(card: dict[str, Any]) -> list[ScoreTable]:
    """The scorecard as the pages show it: :data:`TABLES`, a row per month, newest first."""
    by_name = {figure["name"]: figure for figure in card["figures"]}
    return [
        ScoreTable(
            title,
            [by_name[name]["label"] for name in names],
            [
                (row["month"], [_cell(by_name[name], row["figures"][name]) for name in names])
                for row in card["by_month"]
            ],
        )
        for title, names in TABLES
    ]


def any_suppressed(card: dict[str, Any]) -> bool:
    return any(
        "suppressed" in sides["registry"]
        for row in card["by_month"]
        for sides in row["figures"].values()
    )


CSV_HEADER = [
    "practice",
    "month",
    "figure",
    "source",
    "value",
    "numerator",
    "denominator",
    "practices",
    "unreliable",
    "suppressed",
]


def csv_rows(card: dict[str, Any]) -> list[list[Any]]:
    """A row per month, figure and side (practice, then registry), newest month first."""
    rows: list[list[Any]] = []
    for row in card["by_month"]:
        for figure in FIGURES:
            for source, side in row["figures"][figure.name].items():
                if "suppressed" in side:
                    cells: list[Any] = ["", "", "", "", "", side["suppressed"]]
                else:
                    cells = [
                        "" if side["rate"] is None else side["rate"],
                        side.get("numerator", ""),
                        side.get("denominator", ""),
                        side.get("practices", ""),
                        str(side["unreliable"]).lower(),
                        "",
                    ]
                rows.append([card["practice"], row["month"], figure.name, source, *cells])
    return rows


def mail_lines(card: dict[str, Any], month: str) -> list[tuple[str, str, str]]:
    """(figure, the practice's, the registry's) for one month, in words, for the mail."""
    [row] = [row for row in card["by_month"] if row["month"] == month]
    lines = []
    for figure in card["figures"]:
        cell = _cell(figure, row["figures"][figure["name"]])
        practice = (
            f"{cell.practice} ({cell.practice_detail})" if cell.practice_detail else (cell.practice)
        )
        registry = f"{cell.registry} ({cell.registry_detail})" if cell.registry else NOT_SHOWN
        lines.append((figure["label"], practice, registry))
    return lines
