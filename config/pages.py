"""The site's front page, for people: what the registry is and every way in."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_safe

from registry.navigation import may_use_review_admin, may_use_settings, review_queue_url
from registry.selectors import review_queue_size


@require_safe
def home(request: HttpRequest) -> HttpResponse:
    can_review = may_use_review_admin(request.user)
    context = {
        "can_use_settings": may_use_settings(request.user),
        "can_review": can_review,
        "review_queue_url": review_queue_url(),
        "review_queue_size": review_queue_size(user=request.user) if can_review else None,
    }
    return render(request, "home.html", context)
