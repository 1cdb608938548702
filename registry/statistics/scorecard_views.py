"""The practice's scorecard as JSON and CSV (``/settings/statistics/scorecard.json`` and
``.csv``): the same access as the statistics page, the figures of its scorecard table.

The registry office reads any practice's through these too (``?practice=<slug>``, as on every
settings page) and through its own pages (office/scorecard.py).
"""

from __future__ import annotations

import csv
from typing import Any

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.utils import timezone
from django.views.decorators.http import require_safe

from registry.models import Membership
from registry.settings_area import member_view, memberships_of, signed_in_user
from registry.statistics.scorecard import scorecard_for_practice
from registry.statistics.scorecard_table import CSV_HEADER, csv_rows
from registry.statistics.views import member_json_view


def scorecard_as_seen(request: HttpRequest, membership: Membership) -> dict[str, Any]:
    """The practice's scorecard as the signed-in person may see it: the registry's thresholds
    hold for the practices they belong to none of."""
    members_of = memberships_of(signed_in_user(request)).values_list("practice_id", flat=True)
    return scorecard_for_practice(
        practice=membership.practice, members_of=list(members_of), today=timezone.now().date()
    )


def scorecard_json_response(card: dict[str, Any]) -> JsonResponse:
    return JsonResponse(card, json_dumps_params={"indent": 2})


def scorecard_csv_response(card: dict[str, Any]) -> HttpResponse:
    response = HttpResponse(content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="scorecard-{card["practice"]}.csv"'
    writer = csv.writer(response)
    writer.writerow(CSV_HEADER)
    writer.writerows(csv_rows(card))
    return response


@require_safe
@member_json_view
def scorecard_json(request: HttpRequest, membership: Membership) -> HttpResponse:
    return scorecard_json_response(scorecard_as_seen(request, membership))


@require_safe
@member_view
def scorecard_csv(request: HttpRequest, membership: Membership) -> HttpResponse:
    return scorecard_csv_response(scorecard_as_seen(request, membership))
