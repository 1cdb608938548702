"""The invitation mail, sent from the process that made the invitation.

Only a digest of an invitation's token is stored, so the link cannot be rebuilt later by a
worker: it is sent at once, or, with no mail configured (``EMAIL_URL`` unset), shown once to
whoever made the invitation, to pass on as an API key is passed on.
"""

from __future__ import annotations

import logging

from django.conf import settings
from django.core.mail import send_mail
from django.template.loader import render_to_string
from django.urls import reverse

from registry.models import Invitation

log = logging.getLogger(__name__)


def mail_configured() -> bool:
    return bool(settings.REGISTRY_PASSWORD_RESET)  # True exactly when EMAIL_URL is set


def invitation_link(*, token: str, origin: str) -> str:
    return f"{origin}{reverse('invitation_open', kwargs={'token': token})}"


def invitation_mail_send(*, invitation: Invitation, link: str) -> bool:
    """Mail the link to the invited address; whether the mail server took it."""
    context = {
        "practice": invitation.practice,
        "role": invitation.get_role_display(),
        "link": link,
        "days": settings.REGISTRY_INVITATION_DAYS,
    }
    subject = render_to_string("members/invitation_subject.txt", context).strip()
    body = render_to_string("members/invitation_email.txt", context)
    try:
        send_mail(subject, body, None, [invitation.email])
    except OSError as error:  # smtplib's errors included: the inviter may send it again
        log.warning("invitation %s not mailed (%s)", invitation.pk, type(error).__name__)
        return False
    log.info("invitation %s mailed", invitation.pk)
    return True
