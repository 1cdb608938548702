"""The registry office's counts, kept per practice and day: what the console, the silent
hospitals, the scorecard and the monthly feedback mail read (docs/registry-office.md).

Like :class:`registry.models.BirthCount`, these rows are written in the same transaction as
the change they count and always equal a recount; a page never counts records or ingestions.
"""

from __future__ import annotations

from django.db import models

from registry.models.core import Practice, RecordCounts


class ReceivedCount(RecordCounts):
    """The counts of a practice's live records by the day (UTC) the registry first received
    them (``Record.created_at``): the same counts as :class:`BirthCount`, by another cell.

    Kept by :func:`registry.statistics.counts.counts_kept` beside the birth-year cells, so
    an amendment, a retraction or a review decision moves them as it moves the statistics.
    """

    practice = models.ForeignKey(Practice, on_delete=models.CASCADE, related_name="+")
    day = models.DateField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["practice", "day"], name="received_count_once_per_day")
        ]
        indexes = [models.Index(fields=["day"], name="received_count_day")]


class SubmissionCount(models.Model):
    """What a practice sent on one day (UTC, the day each ingestion was received): the
    ingestions finished and their courses, accepted and rejected, and the latest receipt
    time. Written when an ingestion completes or fails, in the transaction that finishes it;
    a failed ingestion's courses not accepted count as rejected
    (:mod:`registry.statistics.submissions`)."""

    practice = models.ForeignKey(Practice, on_delete=models.CASCADE, related_name="+")
    day = models.DateField()
    ingestions = models.IntegerField(default=0)
    courses = models.IntegerField(default=0, help_text="Course entries received.")
    accepted = models.IntegerField(default=0)
    rejected = models.IntegerField(default=0)
    last_received_at = models.DateTimeField(
        help_text="The latest receipt time of a counted ingestion on this day."
    )

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["practice", "day"], name="submission_count_once_per_day"
            )
        ]
        indexes = [models.Index(fields=["day"], name="submission_count_day")]
