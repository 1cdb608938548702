"""The settings area's pages that need no practice in view: the password, the practice chooser.

Password change is Django's, drawn in the settings look (``/accounts/password_change/``
leads here). The chooser lists the practices a person may look at; a superuser, who may look
at every practice, picks one here (with a search box once there are many).
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_required
from django.db.models import Q
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse, reverse_lazy
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_safe

from registry.settings_area import optional_settings_context, practice_choices, signed_in_user

CHOOSER_LIMIT = 50  # practices listed at once; a search narrows the rest


class PasswordChangeView(auth_views.PasswordChangeView):
    template_name = "settings/password_change.html"
    success_url = reverse_lazy("password_change_done")

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        return super().get_context_data(**kwargs) | optional_settings_context(self.request)


class PasswordChangeDoneView(auth_views.PasswordChangeDoneView):
    template_name = "settings/password_change_done.html"

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        return super().get_context_data(**kwargs) | optional_settings_context(self.request)


password_change = PasswordChangeView.as_view()
password_change_done = PasswordChangeDoneView.as_view()


@require_safe
@login_required
def practice_chooser(request: HttpRequest) -> HttpResponse:
    search = request.GET.get("q", "").strip()
    practices = practice_choices(signed_in_user(request))
    if search:
        practices = practices.filter(Q(slug__icontains=search) | Q(name__icontains=search))
    shown = list(practices[: CHOOSER_LIMIT + 1])
    context = optional_settings_context(request) | {
        "practices": shown[:CHOOSER_LIMIT],
        "more": len(shown) > CHOOSER_LIMIT,
        "search": search,
        "next": _next_page(request),
    }
    return render(request, "settings/choose_practice.html", context)


def _next_page(request: HttpRequest) -> str:
    """Where a choice leads: a settings page named by ``?next=``, else the key page."""
    wanted = request.GET.get("next", "")
    allowed = url_has_allowed_host_and_scheme(wanted, allowed_hosts={request.get_host()})
    if allowed and wanted.startswith("/settings/") and "?" not in wanted:
        return wanted
    return reverse("keys:key")
