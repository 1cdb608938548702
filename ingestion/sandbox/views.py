"""The settings page that deletes all of a sandbox's data: a confirmation, then a POST.

Only for a sandbox practice (any other is a 404: there is nothing to reset), and only its
staff (and superusers) may POST, as for its key. The result is announced on the same page
after a redirect, and focus moves to it (``settings/focus-result.js``).
"""

from __future__ import annotations

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.http import urlencode
from django.views.decorators.http import require_http_methods

from ingestion.sandbox.selectors import sandbox_contents
from ingestion.sandbox.services import SandboxReset, sandbox_reset
from registry.access import may_manage_key
from registry.models import Membership
from registry.settings_area import PRACTICE_PARAM, member_view, settings_context, signed_in_user


@require_http_methods(["GET", "HEAD", "POST"])
@member_view
def sandbox_reset_page(request: HttpRequest, membership: Membership) -> HttpResponse:
    practice = membership.practice
    if not practice.sandbox:
        raise Http404("This practice is not a sandbox.")
    can_reset = may_manage_key(membership)
    if request.method == "POST":
        if not can_reset:
            raise PermissionDenied("Only staff members of the practice delete its sandbox data.")
        done = sandbox_reset(practice=practice, by=signed_in_user(request).get_username())
        messages.success(request, _announcement(done))
        query = urlencode({PRACTICE_PARAM: practice.slug})
        return redirect(f"{reverse('sandbox:reset')}?{query}")
    context = settings_context(request, membership) | {
        "held": sandbox_contents(practice=practice),
        "can_reset": can_reset,
    }
    return render(request, "settings/sandbox_reset.html", context)


def _announcement(done: SandboxReset) -> str:
    if done.nothing:
        return "The sandbox held no data: nothing was deleted."
    return (
        f"All sandbox data deleted: {_counted(done.records, 'record')}, "
        f"{_counted(done.ingestions, 'ingestion')} with their receipts, and "
        f"{_counted(done.providers, 'provider')}. The practice, its members and its key stay."
    )


def _counted(number: int, noun: str) -> str:
    return f"{number} {noun}{'' if number == 1 else 's'}"
