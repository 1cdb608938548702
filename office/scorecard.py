"""Any practice's scorecard, for the registry office: ``/registry/practices/<slug>/scorecard``
as a page, and ``.json`` and ``.csv`` (the console links to them).

The figures are the practice's as its staff see them (registry/statistics/scorecard.py with
the practice as the only membership): the registry office sees every practice's settings
pages as that practice's staff would, and what it may forward to a hospital then holds no
other practice's figure that suppression hides. Anyone else is a 403 page (or JSON).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, render
from django.utils import timezone
from django.views.decorators.http import require_safe

from registry.models import Practice
from registry.office import is_registry_office
from registry.statistics.scorecard import scorecard_for_practice
from registry.statistics.scorecard_table import any_suppressed, scorecard_tables
from registry.statistics.scorecard_views import scorecard_csv_response, scorecard_json_response

PracticeView = Callable[[HttpRequest, Practice, dict[str, Any]], HttpResponse]


def _card(practice: Practice) -> dict[str, Any]:
    return scorecard_for_practice(practice=practice, today=timezone.now().date())


def office_scorecard_view(*, as_json: bool = False) -> Callable[[PracticeView], Any]:
    """Sign-in and the registry office required; the view gets the practice and its card."""

    def decorate(view: PracticeView) -> Callable[[HttpRequest, str], HttpResponse]:
        @wraps(view)
        def wrapper(request: HttpRequest, slug: str) -> HttpResponse:
            if as_json and not request.user.is_authenticated:
                return JsonResponse({"error": "Sign in to see scorecards."}, status=401)
            if not is_registry_office(request.user):
                if as_json:
                    return JsonResponse({"error": "For the registry office."}, status=403)
                raise PermissionDenied
            practice = get_object_or_404(Practice, slug=slug)
            return view(request, practice, _card(practice))

        return wrapper if as_json else login_required(wrapper)

    return decorate


@require_safe
@office_scorecard_view()
def scorecard_page(request: HttpRequest, practice: Practice, card: dict[str, Any]) -> HttpResponse:
    return render(
        request,
        "office/scorecard.html",
        {
            "practice": practice,
            "scorecard": card,
            "whose": "the practice's",
            "scorecard_tables": scorecard_tables(card),
            "scorecard_any_suppressed": any_suppressed(card),
        },
    )


@require_safe
@office_scorecard_view(as_json=True)
def scorecard_json(request: HttpRequest, practice: Practice, card: dict[str, Any]) -> HttpResponse:
    return scorecard_json_response(card)


@require_safe
@office_scorecard_view()
def scorecard_csv(request: HttpRequest, practice: Practice, card: dict[str, Any]) -> HttpResponse:
    return scorecard_csv_response(card)
