"""The registry console (``/registry/``) and its CSV, for the registry office only.

Anonymous visitors go to the sign-in page; a signed-in person who is not of the registry
office (:func:`registry.office.is_registry_office`) gets the site's 403 page. The query
string is read leniently: an unknown sort, direction or page falls back to the default, so
no input makes an error page.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.utils import timezone
from django.utils.http import urlencode
from django.views.decorators.http import require_safe

from office.console import (
    BY_KEY,
    COLUMNS,
    DEFAULT_SORT,
    ConsoleRow,
    Filters,
    Share,
    console_rows,
    sort_rows,
)
from registry.office import is_registry_office
from registry.settings_area import signed_in_user

PAGE_SIZE = 50
SEARCH_MAX = 100


@dataclass(frozen=True)
class Query:
    filters: Filters
    sort: str
    descending: bool

    def params(self, **changes: Any) -> str:
        """This query's string with ``changes`` (None drops a parameter), page 1 unless given."""
        values: dict[str, Any] = {
            "q": self.filters.search or None,
            "sandbox": "1" if self.filters.sandbox else None,
            "silent": "1" if self.filters.silent_only else None,
            "sort": None if self.sort == DEFAULT_SORT else self.sort,
            "dir": "desc" if self.descending and self.sort != DEFAULT_SORT else None,
        } | changes
        return urlencode({k: v for k, v in values.items() if v is not None})


def read_query(request: HttpRequest) -> Query:
    search = request.GET.get("q", "").strip()[:SEARCH_MAX]
    sort = request.GET.get("sort", DEFAULT_SORT)
    if sort not in BY_KEY:
        sort = DEFAULT_SORT
    return Query(
        filters=Filters(
            search=search,
            sandbox=request.GET.get("sandbox") == "1",
            silent_only=request.GET.get("silent") == "1",
        ),
        sort=sort,
        descending=request.GET.get("dir") == "desc",
    )


def _office_only(request: HttpRequest) -> None:
    if not is_registry_office(signed_in_user(request)):
        raise PermissionDenied


@require_safe
@login_required
def console_page(request: HttpRequest) -> HttpResponse:
    _office_only(request)
    query = read_query(request)
    rows = sort_rows(console_rows(query.filters), query.sort, query.descending)
    page = Paginator(rows, PAGE_SIZE).get_page(request.GET.get("page"))
    headings = []
    for column in COLUMNS:
        current = query.sort == column.key
        # A first click sorts numbers and times from the largest, names from A.
        descending = not query.descending if current else column.numeric
        headings.append(
            {
                "column": column,
                "url": "?" + query.params(sort=column.key, dir="desc" if descending else "asc"),
                "aria_sort": (
                    ("descending" if query.descending else "ascending") if current else None
                ),
            }
        )
    context = {
        "query": query,
        "page": page,
        "rows": page.object_list,
        "headings": headings,
        "now": timezone.now(),
        "prev_url": "?" + query.params(page=page.previous_page_number())
        if page.has_previous()
        else None,
        "next_url": "?" + query.params(page=page.next_page_number()) if page.has_next() else None,
        "csv_url": _with_query(reverse("office:console_csv"), query.params()),
        "clear_url": reverse("office:console"),
        "total": len(rows),
    }
    return render(request, "office/console.html", context)


def _with_query(url: str, params: str) -> str:
    return f"{url}?{params}" if params else url


CSV_HEADER = [
    "practice",
    "code",
    "sandbox",
    "silent",
    "key",
    "key_last_used",
    "last_received",
    "courses_7_days",
    "courses_30_days",
    "rejected_30_days",
    "rejected_share_30_days",
    "warned_30_days",
    "births_30_days",
    "warned_share_30_days",
    "within_10_days_30_days",
    "timeliness_known_30_days",
    "within_10_days_share_30_days",
    "least_complete_item",
    "least_complete_share_30_days",
    "review_backlog",
    "oldest_flagged_received",
]


@require_safe
@login_required
def console_csv(request: HttpRequest) -> HttpResponse:
    _office_only(request)
    query = read_query(request)
    rows = sort_rows(console_rows(query.filters), query.sort, query.descending)
    response = HttpResponse(content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = 'attachment; filename="registry-console.csv"'
    writer = csv.writer(response)
    writer.writerow(CSV_HEADER)
    for row in rows:
        writer.writerow(csv_row(row))
    return response


def csv_row(row: ConsoleRow) -> list[Any]:
    least = row.least_complete
    return [
        _cell(row.practice.label),
        row.practice.slug,
        int(row.practice.sandbox),
        int(row.silent),
        row.key_status.lower(),
        _moment(row.key_last_used),
        _moment(row.last_received),
        row.courses_7,
        row.courses_30,
        row.rejected.numerator,
        _rate(row.rejected),
        row.warned.numerator,
        row.warned.denominator,
        _rate(row.warned),
        row.timely.numerator,
        row.timely.denominator,
        _rate(row.timely),
        least.name if least else "",
        _rate(least.share) if least else "",
        row.backlog,
        _moment(row.oldest_flagged),
    ]


def _cell(text: str) -> str:
    """A name a spreadsheet would read as a formula is written as text."""
    return "'" + text if text[:1] in ("=", "+", "-", "@") else text


def _moment(value: datetime | None) -> str:
    return value.isoformat() if value else ""


def _rate(share: Share) -> str:
    rate = share.rate
    return "" if rate is None else f"{rate:.4f}"
