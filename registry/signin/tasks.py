"""The registry's Celery task: the password reset mail, given only ids.

It lives in signin, beside the mail it sends and the service that publishes it, so the
registry's modules import each other in one direction. It keeps the name it was published
under (``registry.tasks.send_password_reset``), so messages queued before a deploy still
find it; config/celery.py has Celery discover this module.
"""

from __future__ import annotations

import logging

from celery import Task, shared_task

from registry.signin.mail import password_reset_mail_send

log = logging.getLogger(__name__)

MAIL_RETRIES = 3


@shared_task(
    name="registry.tasks.send_password_reset", bind=True, acks_late=True, max_retries=MAIL_RETRIES
)
def send_password_reset(
    self: Task, user_ids: list[int], requester: str = "", origin: str | None = None
) -> None:
    """The reset mail to each account (registry/signin/mail.py); a failed send is retried.

    Only the kind of a mail server's error is logged: its message may quote the recipient.
    ``origin``: taken, and ignored, from tasks queued before the link's host came from
    ``REGISTRY_PUBLIC_URL``.
    """
    failed = []
    for user_id in user_ids:
        try:
            password_reset_mail_send(user_id=user_id, requester=requester)
        except OSError as error:  # smtplib.SMTPException is one
            log.warning(
                "password reset mail for user %s failed (%s)", user_id, type(error).__name__
            )
            failed.append(user_id)
    if failed and self.request.retries < MAIL_RETRIES:
        raise self.retry(
            kwargs={"user_ids": failed, "requester": requester},
            countdown=30 * 2**self.request.retries,
        )
