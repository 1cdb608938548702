"""The password reset mail: asked for on the page, built and sent by the worker.

The page (:func:`registry.signin.services.password_reset_request`) looks up the accounts
with the address and always publishes one task, with their ids (none for an unknown
address), so it does the same work and takes the same time either way. The task
(``registry.tasks.send_password_reset``) is given ids and a keyed hash of the requesting
client's address, never the address, the mail address or the link: it looks each account
up again, spends the budget of that account and requester
(:func:`registry.signin.throttle.reset_mail_allowed`) and builds the link itself
(:func:`password_reset_mail_send`) from ``REGISTRY_PUBLIC_URL``, never from the request's
Host header, which the client chooses.
"""

from __future__ import annotations

import logging

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.tokens import default_token_generator
from django.core.mail import send_mail
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils.crypto import salted_hmac
from django.utils.encoding import force_bytes
from django.utils.http import urlsafe_base64_encode

from registry.signin.throttle import reset_mail_allowed

log = logging.getLogger(__name__)


def requester_of(address: str) -> str:
    """Who asked, as the budgets need it: a keyed hash of the client's address (a task's
    arguments and the cache never hold the address itself)."""
    return salted_hmac("registry.reset-requester", address).hexdigest()[:20]


def password_reset_link(*, user_id: int, token: str) -> str:
    uidb64 = urlsafe_base64_encode(force_bytes(user_id))
    path = reverse("password_reset_confirm", kwargs={"uidb64": uidb64, "token": token})
    return f"{settings.REGISTRY_PUBLIC_URL}{path}"


def password_reset_mail_send(*, user_id: int, requester: str) -> bool:
    """Send the reset mail to the account, if it still may have one; whether it was sent.

    Raises OSError (``smtplib.SMTPException`` included) when the mail server fails.
    """
    user = get_user_model().objects.filter(pk=user_id, is_active=True).first()
    if user is None or not user.email or not user.has_usable_password():
        return False
    if not reset_mail_allowed(user_id, requester):
        log.info("password reset mail for user %s not sent: too many this hour", user_id)
        return False
    token = default_token_generator.make_token(user)
    context = {
        "username": user.get_username(),
        "link": password_reset_link(user_id=user_id, token=token),
        "origin": settings.REGISTRY_PUBLIC_URL,
        "minutes": settings.PASSWORD_RESET_TIMEOUT // 60,
    }
    subject = render_to_string("registration/password_reset_subject.txt", context).strip()
    body = render_to_string("registration/password_reset_email.txt", context)
    send_mail(subject, body, None, [user.email])
    log.info("password reset mail sent for user %s", user_id)
    return True
