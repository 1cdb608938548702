"""The settings area's statistics: a page with charts, the same figures as JSON and as CSV.

Every signed-in member of a practice (staff or reviewer) sees its statistics; the practice in
view is chosen as on every settings page (:mod:`registry.settings_area`). ``?from=`` and
``?to=`` limit the figures to a range of birth years; a bad range is a 400 that says why.
"""

from __future__ import annotations

import csv
from collections.abc import Callable
from functools import wraps
from typing import Any

from django import forms
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.utils import timezone
from django.utils.http import urlencode
from django.views.decorators.http import require_safe

from registry.models import Membership, Provider
from registry.navigation import may_use_settings, review_queue_url
from registry.selectors import may_review
from registry.settings_area import (
    PRACTICE_PARAM,
    PracticeNotChosen,
    current_membership,
    member_view,
    memberships_of,
    settings_context,
    signed_in_user,
)
from registry.statistics.benchmark_charts import (
    any_not_shown,
    benchmark_charts,
    compared_years_text,
    data_quality_charts,
    data_quality_glance,
    headline_figures,
    trend_charts,
)
from registry.statistics.charts import BarChart, BarRow, count_bar, is_unreliable, rate_bar
from registry.statistics.quality import data_quality_rows
from registry.statistics.scorecard import scorecard_for_practice
from registry.statistics.scorecard_table import any_suppressed, scorecard_tables
from registry.statistics.selectors import (
    ATTENDANT_ROLES,
    RATES,
    benchmarks_for_practice,
    stats_for_practice,
)

MIN_YEAR, MAX_YEAR = 1900, 2100


class YearRangeForm(forms.Form):
    """``?from=YYYY&to=YYYY``, both optional and inclusive."""

    def __init__(self, data: Any) -> None:
        super().__init__(data)
        for name, label in (("from", "From year"), ("to", "To year")):
            self.fields[name] = forms.IntegerField(
                label=label, required=False, min_value=MIN_YEAR, max_value=MAX_YEAR
            )

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean() or {}
        year_from, year_to = cleaned.get("from"), cleaned.get("to")
        if year_from is not None and year_to is not None and year_from > year_to:
            raise forms.ValidationError("The first year must not be after the last.")
        return cleaned

    def years(self) -> dict[str, int | None]:
        return {"year_from": self.cleaned_data.get("from"), "year_to": self.cleaned_data.get("to")}


# --- The page ----------------------------------------------------------------------------------


@require_safe
@member_view
def statistics_page(request: HttpRequest, membership: Membership) -> HttpResponse:
    form = YearRangeForm(request.GET)
    context = settings_context(request, membership) | {"form": form}
    if not form.is_valid():
        return render(request, "settings/statistics.html", context, status=400)
    stats = stats_for_practice(practice=membership.practice, **form.years())
    members_of = _members_of(request)
    compared = _compared(request, membership, form, members_of)
    query = _query(membership, form)
    context |= {
        "headline_figures": headline_figures(compared),
        "compared_years": compared_years_text(
            compared["compared_years"], compared["comparison_withheld"]
        ),
        # A sandbox's page says why it has no comparison at all (compared_years), not this.
        "any_not_shown": any_not_shown(compared) and not compared["comparison_withheld"],
        "benchmark_charts": benchmark_charts(compared),
        "trend_charts": trend_charts(compared),
        "quality_charts": data_quality_charts(compared["data_quality"]),
        "quality_glance": data_quality_glance(compared["data_quality"]),
        "stats": stats,
        "count_tiles": _count_tiles(stats),
        "rate_charts": [_rate_chart(stats, rate) for rate in RATES],
        "births_chart": _births_chart(stats),
        "benchmark_table": _benchmark_table(stats),
        "rates": RATES,
        "json_query": query,
        "filtered": any(v is not None for v in form.years().values()),
        "queue_url": _queue_url(request, membership),
    } | scorecard_context(membership, members_of)
    return render(request, "settings/statistics.html", context)


def scorecard_context(membership: Membership, members_of: list[int]) -> dict[str, Any]:
    """The scorecard's table (``settings/_scorecard.html``): the last 24 months, beside the
    registry as the signed-in person may see it (registry/statistics/scorecard.py)."""
    card = scorecard_for_practice(
        practice=membership.practice, members_of=members_of, today=timezone.now().date()
    )
    return {
        "scorecard": card,
        "whose": "your",
        "scorecard_tables": scorecard_tables(card),
        "scorecard_any_suppressed": any_suppressed(card),
    }


def _members_of(request: HttpRequest) -> list[int]:
    """The practices the signed-in person belongs to (ids)."""
    return list(memberships_of(signed_in_user(request)).values_list("practice_id", flat=True))


def _compared(
    request: HttpRequest,
    membership: Membership,
    form: YearRangeForm,
    members_of: list[int] | None = None,
) -> dict[str, Any]:
    """The practice beside the registry, as the signed-in person may see it: the thresholds
    hold for the practices they belong to none of (docs/decisions.md)."""
    if members_of is None:
        members_of = _members_of(request)
    return benchmarks_for_practice(
        practice=membership.practice, members_of=members_of, **form.years()
    )


def _queue_url(request: HttpRequest, membership: Membership) -> str | None:
    """The practice's review queue in the admin, for those who may open it."""
    user = request.user
    if not getattr(user, "is_staff", False):
        return None
    if not may_review(user=user, practice_id=membership.practice.pk):
        return None
    return review_queue_url(membership.practice)


# --- JSON and CSV ------------------------------------------------------------------------------

JsonView = Callable[[HttpRequest, Membership], HttpResponse]


def member_json_view(view: JsonView) -> Callable[[HttpRequest], HttpResponse]:
    """:func:`member_view` for a JSON endpoint: errors are JSON too, never a login page.

    Anonymous 401, signed in without any practice 403, a practice the user is not a member of
    404 (as on every settings page, nothing shows whether it exists).
    """

    @wraps(view)
    def wrapper(request: HttpRequest) -> HttpResponse:
        if not request.user.is_authenticated:
            return _json_error(401, "Sign in to see statistics.")
        if not may_use_settings(request.user):
            return _json_error(403, "Your account is not a member of any practice.")
        try:
            membership = current_membership(request)
        except Http404:
            return _json_error(404, "No such practice.")
        except PracticeNotChosen:
            return _json_error(400, "Choose a practice with ?practice=<slug>.")
        return view(request, membership)

    return wrapper


@require_safe
@member_json_view
def statistics_json(request: HttpRequest, membership: Membership) -> HttpResponse:
    form = YearRangeForm(request.GET)
    if not form.is_valid():
        return _json_error(400, "Invalid year range.", errors=form.errors.get_json_data())
    stats = stats_for_practice(practice=membership.practice, **form.years())
    stats |= _compared(request, membership, form)
    return JsonResponse(stats, json_dumps_params={"indent": 2})


@require_safe
@member_view
def statistics_csv(request: HttpRequest, membership: Membership) -> HttpResponse:
    form = YearRangeForm(request.GET)
    if not form.is_valid():
        messages = "; ".join(str(e) for errors in form.errors.values() for e in errors)
        return HttpResponse(
            f"Invalid year range: {messages}\n", status=400, content_type="text/plain"
        )
    stats = stats_for_practice(practice=membership.practice, **form.years())
    response = HttpResponse(content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{_csv_name(stats)}"'
    writer = csv.writer(response)
    writer.writerow(CSV_HEADER)
    head = [stats["practice"], stats["year_from"] or "", stats["year_to"] or ""]
    for group, figures in [("all", stats), *stats["by_attendant_role"].items()]:
        for row in _csv_rows(figures):
            writer.writerow([*head, group, *row, "practice", "", "", "", ""])
    compared = _compared(request, membership, form)
    for row in benchmark_csv_rows(compared) + data_quality_csv_rows(compared):
        writer.writerow([*head, *row])
    return response


CSV_HEADER = [
    "practice",
    "year_from",
    "year_to",
    "group",
    "figure",
    "value",
    "numerator",
    "denominator",
    # The benchmarks' rows: whose figure, for which birth year (trend), and how it may be read.
    "source",
    "year",
    "practices",
    "unreliable",
    "suppressed",
]


def benchmark_csv_rows(compared: dict[str, Any]) -> list[list[Any]]:
    """``compared_year`` rows (``included`` or ``left_out``, a row per birth year),
    ``headline.<figure>`` rows per side, ``benchmark.<figure>`` rows per role and side, then
    ``trend.<figure>`` rows per year."""
    rows = compared_year_rows(compared["compared_years"])
    for name, sides in compared["headline"].items():
        for source, side in sides.items():
            rows.append(["all", f"headline.{name}", *_side_cells(source, "", side)])
    for role, figures in compared["benchmarks"].items():
        for name, sides in figures.items():
            for source, side in sides.items():
                rows.append([role, f"benchmark.{name}", *_side_cells(source, "", side)])
    for role, figures in compared["trend"].items():
        for name, points in figures.items():
            for point in points:
                for source in ("practice", "registry"):
                    cells = _side_cells(source, point["year"], point[source])
                    rows.append([role, f"trend.{name}", *cells])
    return rows


def compared_year_rows(years: dict[str, Any]) -> list[list[Any]]:
    """Which birth years the comparisons cover: ``value`` says ``included`` or ``left_out``;
    births without a known birth year, when left out, are the row whose ``year`` is empty."""
    rows = [
        ["all", "compared_year", state, "", "", "registry", year, "", "", ""]
        for state in ("included", "left_out")
        for year in years[state]
    ]
    if years["unknown_year_left_out"]:
        rows.append(["all", "compared_year", "left_out", "", "", "registry", "", "", "", ""])
    return rows


def data_quality_csv_rows(compared: dict[str, Any]) -> list[list[Any]]:
    """``data_quality.<path>`` rows (group ``all``), the practice's then the registry's."""
    return [
        ["all", path, *_side_cells(source, "", side)]
        for path, sides in data_quality_rows(compared["data_quality"])
        for source, side in sides.items()
    ]


def _side_cells(source: str, year: int | str, side: dict[str, Any]) -> list[Any]:
    if "suppressed" in side:
        return ["", "", "", source, year, "", "", side["suppressed"]]
    rate = "" if side["rate"] is None else side["rate"]
    return [
        rate,
        side["numerator"],
        side["denominator"],
        source,
        year,
        side.get("practices", ""),
        str(side["unreliable"]).lower(),
        "",
    ]


def _csv_rows(figures: dict[str, Any]) -> list[list[Any]]:
    rows: list[list[Any]] = [
        [name, figures[name], "", ""]
        for name in ("births", "live_births", "fetal_deaths", "suspected_duplicates")
    ]
    for rate in RATES:
        counts = figures[rate.counts_key]
        value = "" if figures[rate.name] is None else figures[rate.name]
        rows.append([rate.name, value, counts["numerator"], counts["denominator"]])
    return rows


def _csv_name(stats: dict[str, Any]) -> str:
    years = "-".join(str(stats[k]) for k in ("year_from", "year_to") if stats[k] is not None)
    return f"statistics-{stats['practice']}{'-' + years if years else ''}.csv"


def _json_error(status: int, message: str, **extra: Any) -> JsonResponse:
    return JsonResponse({"error": message, **extra}, status=status)


def _query(membership: Membership, form: YearRangeForm) -> str:
    params = {PRACTICE_PARAM: membership.practice.slug}
    params |= {k: v for k, v in form.cleaned_data.items() if v is not None}
    return urlencode(params)


# --- Charts and the table ---------------------------------------------------------------------


def _role_label(role: str) -> str:
    return str(Provider.Role(role).label)


def _count_tiles(stats: dict[str, Any]) -> list[tuple[str, str, str]]:
    return [
        ("Births", f"{stats['births']:,}", "courses of care on file"),
        ("Live births", f"{stats['live_births']:,}", "children born alive"),
        ("Fetal deaths", f"{stats['fetal_deaths']:,}", "children"),
        ("Suspected duplicates", f"{stats['suspected_duplicates']:,}", "awaiting review"),
    ]


def _benchmark_table(
    stats: dict[str, Any],
) -> tuple[list[str], list[tuple[str, list[tuple[str, str, str, bool]]]]]:
    """The table of every figure: a row per figure, a column for all births and per role.

    Each cell is ``(column, figure, counts, unreliable)``; the column names the cell on a
    phone, where the table stacks into a list per figure.
    """
    groups = [("All births", stats)] + [
        (_role_label(role), stats["by_attendant_role"][role]) for role in ATTENDANT_ROLES
    ]
    counts = [
        ("Births", "births"),
        ("Live births", "live_births"),
        ("Fetal deaths", "fetal_deaths"),
        ("Suspected duplicates", "suspected_duplicates"),
    ]
    rows: list[tuple[str, list[tuple[str, str, str, bool]]]] = [
        (label, [(group, f"{figures[key]:,}", "", False) for group, figures in groups])
        for label, key in counts
    ]
    rows += [
        (rate.label, [(group, *_rate_cell(figures, rate)) for group, figures in groups])
        for rate in RATES
    ]
    return [label for label, _ in groups], rows


def _rate_cell(figures: dict[str, Any], rate: Any) -> tuple[str, str, bool]:
    value, counts = figures[rate.name], figures[rate.counts_key]
    shown = "no data" if value is None else f"{value:.1%}"
    detail = f"{counts['numerator']:,} of {counts['denominator']:,}"
    return shown, detail, is_unreliable(counts["denominator"])


def _rate_chart(stats: dict[str, Any], rate: Any) -> BarChart:
    groups = [("All births", stats, True)] + [
        (_role_label(role), stats["by_attendant_role"][role], False) for role in ATTENDANT_ROLES
    ]
    rows = [
        BarRow(label, rate_bar(**figures[rate.counts_key]), emphasis=emphasis)
        for label, figures, emphasis in groups
    ]
    description = (
        f"{rate.numerator_is[0].upper()}{rate.numerator_is[1:]}, per {rate.denominator_is}."
    )
    return BarChart(rate.label, description, rows)


def _births_chart(stats: dict[str, Any]) -> BarChart:
    groups = [("All births", stats["births"], True)] + [
        (_role_label(role), stats["by_attendant_role"][role]["births"], False)
        for role in ATTENDANT_ROLES
    ]
    largest = max(count for _, count, _ in groups)
    rows = [
        BarRow(label, count_bar(count, largest), emphasis=emphasis)
        for label, count, emphasis in groups
    ]
    return BarChart(
        "Births by attendant role",
        "Births (courses of care) attended by at least one provider of each role; "
        "a birth attended by two roles counts for both.",
        rows,
    )
