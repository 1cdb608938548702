"""Asking for a password reset: the page's one service, which publishes the mail task.

It lives apart from the mail (registry/signin/mail.py) because the task sends that mail:
the task (registry/signin/tasks.py) imports the mail, this module imports the task, and
nothing imports back.
"""

from __future__ import annotations

from django.contrib.auth import get_user_model

from registry.signin.tasks import send_password_reset


def password_reset_request(*, email: str, requester: str) -> None:
    """Publish the mail task for every active account with ``email`` (possibly none);
    ``requester`` is a keyed hash of the asking client's address (mail.requester_of)."""
    accounts = get_user_model().objects.filter(email__iexact=email.strip(), is_active=True)
    user_ids = list(accounts.order_by("pk").values_list("pk", flat=True))
    send_password_reset.delay(user_ids=user_ids, requester=requester)
