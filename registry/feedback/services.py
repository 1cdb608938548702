"""Sending the monthly feedback mail once per practice and month.

The beat runs :func:`feedback_mails_send` every hour (config/settings/pipeline.py); each run
looks for the live practices whose mail for last month has not been claimed, and for each:

1. **Claims** it: inserts ``FeedbackMail(practice, month)`` in its own transaction, which
   commits before anything is sent. The unique constraint lets one insert win; a second run,
   the same hour on another worker or any later hour, fails to insert and sends nothing.
2. **Sends** each recipient's copy (registry/feedback/mail.py) over one connection to
   ``EMAIL_URL``'s server.
3. **Records** how it went: ``sent``; ``partly_sent`` when the server refused some messages
   after taking others (those are not tried again: trying would mean sending the others twice);
   and when no message was taken at all (the server down, or refusing every one), the claim
   is deleted so that the next hour's run tries again, sending nothing twice.

So a mail goes out at most once per practice and month: a worker that dies between the claim
and the end leaves a ``claimed`` row and that month's mail is not sent (the log says so).
With no mail configured (``EMAIL_URL`` unset) nothing is claimed or sent.
"""

from __future__ import annotations

import contextlib
import logging
from dataclasses import dataclass
from datetime import date

from django.conf import settings
from django.core.mail import EmailMessage, get_connection
from django.db import IntegrityError, transaction
from django.utils import timezone

from registry.feedback.mail import feedback_message, recipients
from registry.models import FeedbackMail, Practice
from registry.statistics.scorecard import first_day, previous_month

log = logging.getLogger(__name__)


@dataclass
class Outcome:
    """One run: practices whose mail it sent (or partly), and messages the server took."""

    practices: int = 0
    messages: int = 0


def mail_configured() -> bool:
    return bool(settings.REGISTRY_PASSWORD_RESET)  # True exactly when EMAIL_URL is set


def feedback_mails_send(*, today: date) -> Outcome:
    """Send last month's mail to every live practice that has not had it (see the module)."""
    outcome = Outcome()
    if not mail_configured():
        return outcome
    month = first_day(previous_month(today))
    due = (
        Practice.objects.filter(sandbox=False, created_at__date__lt=first_day_after(month))
        .exclude(pk__in=FeedbackMail.objects.filter(month=month).values("practice_id"))
        .order_by("pk")
    )
    for practice in due:
        claim = _claim(practice, month)
        if claim is None:
            continue
        sent = _send(practice, claim, today)
        if sent:
            outcome.practices += 1
            outcome.messages += sent
    return outcome


def first_day_after(month: date) -> date:
    return date(month.year + month.month // 12, month.month % 12 + 1, 1)


def _claim(practice: Practice, month: date) -> FeedbackMail | None:
    """The practice's month, claimed and committed; None when another run has it."""
    try:
        with transaction.atomic():
            return FeedbackMail.objects.create(practice=practice, month=month)
    except IntegrityError:
        return None


def _send(practice: Practice, claim: FeedbackMail, today: date) -> int:
    """Each recipient's copy; the claim kept, finished or released (see the module)."""
    members = recipients(practice)
    sent = failed = 0
    try:
        connection = get_connection()
        if members:
            connection.open()
    except OSError as error:  # smtplib's errors included
        log.warning("feedback mail %s not sent: %s", claim.pk, type(error).__name__)
        claim.delete()
        return 0
    try:
        for membership in members:
            message = feedback_message(practice=practice, viewer=membership.user, today=today)
            mail = EmailMessage(
                message.subject, message.body, None, [membership.user.email], connection=connection
            )
            try:
                mail.send()
            except OSError as error:
                # Only the kind: the server's message may quote the address.
                log.warning(
                    "feedback mail %s: a message refused (%s)", claim.pk, type(error).__name__
                )
                failed += 1
            else:
                sent += 1
    finally:
        with contextlib.suppress(OSError):
            connection.close()
    if failed and not sent:
        claim.delete()  # nothing went out: the next run tries again
        return 0
    claim.state = FeedbackMail.State.PARTLY_SENT if failed else FeedbackMail.State.SENT
    claim.recipients = sent
    claim.finished_at = timezone.now()
    claim.save(update_fields=["state", "recipients", "finished_at"])
    log.info("feedback mail %s: %s sent, %s refused", claim.pk, sent, failed)
    return sent
