"""An ingestion is one submitted Bundle on its way through the pipeline.

``queued`` (created by the submit call) -> ``processing`` (a worker holds a lease) ->
``completed`` or ``failed``. The payload waits, encrypted, in :class:`StagedChunk` rows; each
chunk is deleted in the same transaction that stores its records and its part of the receipt
(:class:`OutcomeChunk`), so progress is committed with the records it describes and a
worker killed at any point leaves exactly the unprocessed chunks behind.

A finished ingestion's outcome rows are kept ``REGISTRY_RECEIPT_RETENTION_DAYS``, then purged
(:mod:`ingestion.receipts.retention`); ``receipt_purged_at`` says when, and the receipt says so.
"""

from __future__ import annotations

import uuid
from datetime import datetime

from django.db import models
from django.db.models.functions import Coalesce
from django.utils import timezone

from registry.models import Practice


class Ingestion(models.Model):
    class Status(models.TextChoices):
        QUEUED = "queued", "Queued"
        PROCESSING = "processing", "Processing"
        COMPLETED = "completed", "Completed"
        FAILED = "failed", "Failed"

    class Kind(models.TextChoices):
        SINGLE = "single", "One course of care"
        BATCH = "batch", "Batch of courses of care"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    practice = models.ForeignKey(Practice, on_delete=models.PROTECT, related_name="ingestions")
    idempotency_key = models.CharField(max_length=255, null=True, blank=True)
    status = models.CharField(max_length=12, choices=Status.choices, default=Status.QUEUED)
    kind = models.CharField(max_length=8, choices=Kind.choices)
    body_bytes = models.PositiveBigIntegerField(default=0)
    entry_count = models.PositiveIntegerField(default=0)
    chunk_count = models.PositiveIntegerField(default=0)
    accepted_count = models.PositiveIntegerField(default=0)
    rejected_count = models.PositiveIntegerField(default=0)
    attempts = models.PositiveSmallIntegerField(default=0)
    fruitless_claims = models.PositiveSmallIntegerField(
        default=0, help_text="Claims in a row that applied nothing; only these use up attempts."
    )
    failure = models.JSONField(null=True, blank=True, help_text="OperationOutcome when failed.")

    queued_at = models.DateTimeField(default=timezone.now)
    enqueued_at = models.DateTimeField(null=True, blank=True)
    started_at = models.DateTimeField(null=True, blank=True)
    lease_expires_at = models.DateTimeField(null=True, blank=True)
    completed_at = models.DateTimeField(null=True, blank=True)
    failed_at = models.DateTimeField(null=True, blank=True)
    receipt_purged_at = models.DateTimeField(
        null=True, blank=True, help_text="When the receipt's per-record outcome was purged."
    )

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["practice", "idempotency_key"],
                condition=models.Q(idempotency_key__isnull=False),
                name="idempotency_key_once_per_practice",
            )
        ]
        indexes = [
            models.Index(
                fields=["status", "lease_expires_at"],
                condition=models.Q(status__in=["queued", "processing"]),
                name="ingestion_unfinished",
            ),
            # Finished receipts not purged yet, by when they finished (ingestion.receipts).
            models.Index(
                Coalesce("completed_at", "failed_at"),
                condition=models.Q(
                    status__in=["completed", "failed"], receipt_purged_at__isnull=True
                ),
                name="receipt_to_purge",
            ),
            # A worker's combined claim: a practice's waiting singles, in queue order.
            models.Index(
                fields=["practice", "queued_at"],
                condition=models.Q(status="queued", kind="single"),
                name="ingestion_waiting_single",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.id} ({self.status})"

    @property
    def finished(self) -> bool:
        return self.status in (self.Status.COMPLETED, self.Status.FAILED)

    @property
    def finished_at(self) -> datetime | None:
        """The receipt's ``completedAt``: when it completed, or when it was given up."""
        return self.completed_at or self.failed_at

    @property
    def outcome_purged(self) -> bool:
        """Past its retention: the receipt keeps its counts, its ``outcome`` is gone."""
        return self.receipt_purged_at is not None


class StagedChunk(models.Model):
    """Part of a submitted payload, encrypted (AES-256-GCM), until it has been processed."""

    ingestion = models.ForeignKey(Ingestion, on_delete=models.CASCADE, related_name="chunks")
    seq = models.PositiveIntegerField()
    first_index = models.PositiveIntegerField(help_text="Bundle.entry index of its first entry.")
    entry_count = models.PositiveIntegerField()
    ciphertext = models.BinaryField()
    # A chunk that keeps killing the worker is isolated: applied one entry at a time.
    applied_entries = models.PositiveIntegerField(default=0)
    trying_entry = models.PositiveIntegerField(null=True, blank=True)
    trying_count = models.PositiveSmallIntegerField(default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["ingestion", "seq"], name="staged_chunk_once")
        ]

    @property
    def isolated(self) -> bool:
        return self.applied_entries > 0 or self.trying_entry is not None


class OutcomeChunk(models.Model):
    """The receipt entries of one processed chunk, written with the records they describe.

    ``part`` is 0 for a chunk applied whole; an isolated chunk writes one part per entry
    (1, 2, ...), so the receipt stays in entry order.
    """

    ingestion = models.ForeignKey(Ingestion, on_delete=models.CASCADE, related_name="outcomes")
    seq = models.PositiveIntegerField()
    part = models.PositiveIntegerField(default=0)
    accepted = models.JSONField(default=list)
    rejected = models.JSONField(default=list)

    class Meta:
        ordering = ["ingestion", "seq", "part"]
        constraints = [
            models.UniqueConstraint(
                fields=["ingestion", "seq", "part"], name="outcome_chunk_part_once"
            )
        ]


class PipelineCount(models.Model):
    """What the pipeline has done for one practice, kept as it happens: ``/metrics`` sums
    these rows (one per practice) instead of counting ingestions or records.

    Written by the statement that records a chunk's progress, in its transaction (and by the
    one that fails an ingestion), so a count never runs ahead of, or behind, what it counts.
    One row per practice: two practices' workers never wait on each other's counter, and one
    practice's chunks already take turns under its lock. ``flagged``, ``amended`` and
    ``retracted`` are kinds of accepted entries (:mod:`ingestion.monitoring.counters`).
    """

    practice = models.OneToOneField(
        Practice, on_delete=models.CASCADE, primary_key=True, related_name="+"
    )
    ingestions_completed = models.PositiveBigIntegerField(default=0)
    ingestions_failed = models.PositiveBigIntegerField(default=0)
    records_accepted = models.PositiveBigIntegerField(default=0)
    records_rejected = models.PositiveBigIntegerField(default=0)
    records_flagged = models.PositiveBigIntegerField(default=0)
    records_amended = models.PositiveBigIntegerField(default=0)
    records_retracted = models.PositiveBigIntegerField(default=0)
