"""The beat's task: last month's feedback mail to every practice that has not had it.

It runs every hour (``CELERY_BEAT_SCHEDULE``, config/settings/pipeline.py), so a beat or a
mail server that was down on the first of the month only delays the mail; the claims
(registry/feedback/services.py) make sure no practice has it twice. config/celery.py has
Celery discover this module.
"""

from __future__ import annotations

import logging

from celery import shared_task
from django.utils import timezone

from registry.feedback.services import feedback_mails_send

log = logging.getLogger(__name__)


@shared_task(name="registry.feedback.send_feedback_mails", acks_late=True)
def send_feedback_mails() -> None:
    outcome = feedback_mails_send(today=timezone.now().date())
    if outcome.practices:
        log.info(
            "feedback mail sent to %s practices (%s messages)", outcome.practices, outcome.messages
        )
