"""The monthly feedback mail's claims: one row per practice and month, taken before sending.

The unique constraint is what makes the mail go out once: whichever run inserts the row
sends; every other run (the next day's, or a second worker's at the same moment) finds it
and sends nothing (registry/feedback/services.py, docs/registry-office.md).
"""

from __future__ import annotations

from django.db import models

from registry.models.core import Practice


class FeedbackMail(models.Model):
    """A practice's feedback mail for one month: claimed, then sent (or partly sent)."""

    class State(models.TextChoices):
        CLAIMED = "claimed", "Claimed, sending"
        SENT = "sent", "Sent"
        PARTLY_SENT = "partly_sent", "Partly sent"

    practice = models.ForeignKey(Practice, on_delete=models.CASCADE, related_name="+")
    month = models.DateField(help_text="The first day of the month the mail reports.")
    state = models.CharField(max_length=20, choices=State.choices, default=State.CLAIMED)
    recipients = models.IntegerField(default=0, help_text="Messages the mail server took.")
    claimed_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["practice", "month"], name="feedback_mail_once_per_month"
            )
        ]

    def __str__(self) -> str:
        return f"{self.practice} {self.month:%Y-%m} ({self.state})"
