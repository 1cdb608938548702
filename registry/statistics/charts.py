"""Bar charts drawn in HTML and CSS (``templates/components/bar_chart.html``).

A chart is rows of labelled bars, each bar printed with its figure and counts; a row may carry
a second series (for example a practice beside the whole registry). The bars are plain HTML
text and boxes, so the chart reflows to the width of the screen and its text keeps the page's
size on a phone, where an SVG scaled down to fit would shrink its labels.

Rates whose denominator is under :data:`UNRELIABLE_BELOW` are marked unreliable (the NCHS
convention: docs/decisions.md "Review and statistics"), in the chart and wherever they are printed.
"""

from __future__ import annotations

from dataclasses import dataclass

UNRELIABLE_BELOW = 20


def is_unreliable(denominator: int) -> bool:
    """A rate over fewer than 20 is too unsteady to read as a rate (none at all is no rate)."""
    return 0 < denominator < UNRELIABLE_BELOW


@dataclass(frozen=True)
class BarValue:
    """One bar: how long (0 to 1 of the track, None when there is nothing to show) and its text."""

    fraction: float | None
    text: str
    unreliable: bool = False

    @property
    def percent(self) -> float:
        """The bar's length in percent of its track, for the template's ``width``."""
        return round(max(0.0, min(1.0, self.fraction or 0.0)) * 100, 1)


@dataclass(frozen=True)
class BarRow:
    label: str
    value: BarValue
    second: BarValue | None = None  # the second series, drawn under the first
    emphasis: bool = False  # the row the others are compared with (such as "All births")


@dataclass(frozen=True)
class BarChart:
    title: str
    description: str
    rows: list[BarRow]
    # Legend names for the two series, when the rows carry a second one.
    series: tuple[str, str] | None = None

    @property
    def has_unreliable(self) -> bool:
        values = [v for row in self.rows for v in (row.value, row.second) if v is not None]
        return any(value.unreliable for value in values)

    @property
    def is_empty(self) -> bool:
        return all(row.value.fraction is None for row in self.rows)


def rate_text(numerator: int, denominator: int) -> str:
    """``12.5% (2 of 16)``; ``no data (none to count)`` when there is no denominator."""
    if not denominator:
        return "no data (none to count)"
    return f"{numerator / denominator:.1%} ({numerator:,} of {denominator:,})"


def rate_bar(numerator: int, denominator: int) -> BarValue:
    """A rate's bar: the full track is 100 %."""
    fraction = numerator / denominator if denominator else None
    return BarValue(fraction, rate_text(numerator, denominator), is_unreliable(denominator))


def count_bar(count: int, largest: int) -> BarValue:
    """A count's bar: the full track is the largest count in the chart."""
    return BarValue(count / largest if largest else 0.0, f"{count:,}")
