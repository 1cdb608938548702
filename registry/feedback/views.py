"""The feedback mail's page (``/settings/statistics/feedback-mail/``): the mail as it would
be sent, and a staff member's choice to receive it.

Staff of the practice and the registry office see it; reviewers receive no mail and are
shown a 403 page. The preview is built as the mail is for the signed-in person
(registry/feedback/mail.py): the same registry thresholds as their scorecard. Opting out
changes only the signed-in person's own membership of the practice in view.
"""

from __future__ import annotations

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.http import urlencode
from django.views.decorators.http import require_http_methods

from registry.feedback.mail import feedback_message
from registry.feedback.services import mail_configured
from registry.models import Membership
from registry.settings_area import member_view, settings_context, signed_in_user


@require_http_methods(["GET", "HEAD", "POST"])
@member_view
def feedback_mail_page(request: HttpRequest, membership: Membership) -> HttpResponse:
    if membership.role != Membership.Role.STAFF:
        raise PermissionDenied  # reviewers receive no feedback mail
    own = membership.pk is not None  # the registry office stands in unsaved
    if request.method == "POST":
        if not own:
            raise PermissionDenied
        membership.feedback_mail = request.POST.get("feedback_mail") == "on"
        membership.save(update_fields=["feedback_mail"])
        messages.success(
            request,
            "You will receive the monthly feedback mail."
            if membership.feedback_mail
            else "You will no longer receive the monthly feedback mail.",
        )
        query = urlencode({"practice": membership.practice.slug})
        return redirect(f"{reverse('registry:feedback_mail')}?{query}")
    message = feedback_message(
        practice=membership.practice, viewer=signed_in_user(request), today=timezone.now().date()
    )
    context = settings_context(request, membership) | {
        "message": message,
        "own": own,
        "mail_configured": mail_configured(),
        "sandbox": membership.practice.sandbox,
    }
    return render(request, "settings/feedback_mail.html", context)
